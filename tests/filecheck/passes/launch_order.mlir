// hbm-launch{order=last}: the last grid axis varies fastest, walked from its end;
// order=last-ascending walks it from its start. napkin-sm80 and napkin-sm90 ask for the
// first for attention (the query tiles of one head run together, a causal stream's longest
// last), the second for the causal gradient's blocks of keys (whose streams of queries
// begin at the block: the first are the longest); the model follows it (unit test). In
// PTX a descending walk numbers the blocks from the end of %ctaid.x, an ascending one not.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last}' | filecheck %s
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=middle}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},napkin-sm90' --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=GRAD
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},napkin-sm90{persistent=false}' -t ptx | filecheck %s --check-prefix=UP
// RUN: napkin-opt %examples/causal_attention.mlir -p 'napkin-sm90{persistent=false}' -t ptx | filecheck %s --check-prefix=DOWN
// CHECK: hbm.order = "last"
// BAD: napkin-opt: error: hbm-launch: order must be one of first, last, last-ascending (the grid axis that varies fastest, and the last walked from its end or its start), got 'middle'
// GRAD: hbm-launch{{.*}}order="last-ascending"
// UP: mov.u32 [[X:%r[0-9]+]], %ctaid.x;
// UP-NEXT: mov.u32 [[K:%r[0-9]+]], 128;
// UP-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[X]], [[K]];
// DOWN: mov.u32 [[X:%r[0-9]+]], %ctaid.x;
// DOWN-NEXT: mov.u32 [[L:%r[0-9]+]], 1;
// DOWN-NEXT: sub.u32 %r{{[0-9]+}}, [[L]], [[X]];
