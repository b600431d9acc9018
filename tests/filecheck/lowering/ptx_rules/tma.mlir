// reg-to-ptx's mbarrier and TMA rules (ptx_rules/tma.py), and the roles (ptx_rules/kernel.py):
// thread 0 initialises the rings; the producer warpgroup gives up registers and one thread
// issues TMA loads on full barriers with the stage's bytes; consumers wait by parity and
// arrive on the empty ring; persistent blocks loop over tiles.
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx | filecheck %s

// CHECK: .param .align 64 .b8 matmul_a[128]
// CHECK: .maxntid 384
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: %nctaid.x
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.arrive.shared::cta.b64
