// hbm-launch{order=last}: the last grid axis varies fastest; napkin-sm80 asks for it for
// attention (the query tiles of one head run together); the model follows it (unit test).
// It is walked longest stream first: from its end where the streams grow along it (a causal
// forward's query blocks: "last"), from its start where they shrink (the causal gradient's
// key blocks, each streaming the queries from its own: "last_from_start").
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last}' | filecheck %s
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=middle}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last}' | filecheck %s --check-prefix=END
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-launch{order=last}' | filecheck %s --check-prefix=START
// CHECK: hbm.order = "last"
// END: hbm.order = "last"
// START: hbm.order = "last_from_start"
// BAD: napkin-opt: error: hbm-launch: order must be first or last (the grid axis that varies fastest), got 'middle'
