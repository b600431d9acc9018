// hbm-launch{order=last}: the last grid axis varies fastest; napkin-sm80 asks for it for
// attention (the query tiles of one head run together); the model follows it (unit test).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last}' | filecheck %s
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=middle}' 2>&1 | filecheck %s --check-prefix=BAD
// CHECK: hbm.order = "last"
// BAD: napkin-opt: error: hbm-launch: order must be first or last (the grid axis that varies fastest), got 'middle'
