// reg-to-ptx's mbarrier and TMA rules (ptx_rules/tma.py), and the roles (ptx_rules/kernel.py):
// thread 0 initialises the rings; the producer warpgroup gives up registers and one thread
// issues TMA loads on full barriers with the stage's bytes; consumers wait by parity and
// arrive on the empty ring; persistent blocks loop over tiles.
// Grouped-query attention's Q tile is one box of a group's heads by positions
// (1 x 1 x 4 x 32 x 64: a 5-D copy at {d, i, r, g, b}), 128 swizzled rows.
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64"}' -t ptx | filecheck %s
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx --launch-json %t.gqa.json | filecheck %s --check-prefix=GQA
// RUN: filecheck %s --check-prefix=GQA-BOX < %t.gqa.json

// CHECK: .param .align 64 .b8 matmul_a[128]
// CHECK: .maxntid 384
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK: %nctaid.x
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.arrive.shared::cta.b64

// GQA: cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// GQA: cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
// GQA-BOX: "arg": "q"
// GQA-BOX: "box": [1, 1, 4, 32, 64]
