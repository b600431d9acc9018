// reg-to-ptx's control rules (ptx_rules/control.py): a loop carrying wgmma accumulators is
// tested at its bottom; others (attention's) at their head; index arithmetic is 32-bit.
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{persistent=false}' -t ptx | filecheck %s --check-prefix=BOTTOM
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=HEAD

// BOTTOM: wgmma.wait_group.sync.aligned 1;
// the back edge: the carried accumulators move only where the loop goes round
// BOTTOM: setp.lt.s32 [[MORE:%p[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// BOTTOM-NEXT: @[[MORE]] mov.b32

// HEAD: setp.lt.s32 [[GO:%p[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// HEAD-NEXT: @[[GO]] bra
