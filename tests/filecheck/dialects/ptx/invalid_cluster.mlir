// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  ptx.barrier_cluster {kind = "sync"} : () -> ()
  ptx.ret
}
// CHECK: ptx.barrier_cluster: kind must be arrive or wait, got 'sync'

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "u64", value = 1 : i64} : () -> !ptx.reg<b64>
  %r = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %p = ptx.mapa %a, %r : (!ptx.reg<b64>, !ptx.reg<b32>) -> !ptx.reg<b32>
  ptx.ret
}
// CHECK: ptx.mapa: the address must be a !ptx.reg<b32> register, got !ptx.reg<b64>

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %t = ptx.const {ty = "u64", value = 1 : i64} : () -> !ptx.reg<b64>
  ptx.cp_async_bulk_tensor_load_multicast [%a], [%t, (%a, %a)], [%a], %a : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>, !ptx.reg<b32>
  ptx.ret
}
// CHECK: ptx.cp_async_bulk_tensor_load_multicast: the CTA mask must be a !ptx.reg<b16> register, got !ptx.reg<b32>

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  ptx.prefetch_tensormap %a : (!ptx.reg<b32>) -> ()
  ptx.ret
}
// CHECK: ptx.prefetch_tensormap: the tensor map must be a !ptx.reg<b64> register, got !ptx.reg<b32>
