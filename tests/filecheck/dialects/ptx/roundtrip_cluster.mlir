// The cluster ops (and prefetch.tensormap) round-trip, print as PTX, and ptxas assembles them for sm_90a.
// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s
// RUN: napkin-opt %s -t ptx | filecheck %s --check-prefix=PTX
// RUN: napkin-opt %s -t ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// The kernel's typed attributes print as they are read:
// CHECK: ptx.kernel attributes {sym_name = "cluster_ops", params = ["tmap"], param_types = ["tensormap"], shared = [#ptx.shared<"bars", bytes = 64, align = 8>], reqntid = [128 : i32, 1 : i32, 1 : i32], napkin.grid = [8 : i32], napkin.smem_bytes = 0 : i32, napkin.cluster = [2 : i32], napkin.tma = [#ptx.tma_box<"tmap", box = 128x64, swizzle = "128B">]} {
// CHECK: ptx.barrier_cluster {kind = "arrive"} : () -> ()
// CHECK-NEXT: ptx.barrier_cluster {kind = "wait"} : () -> ()
// CHECK-NEXT: %peer = ptx.mapa %bar, %one : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
// CHECK-NEXT: ptx.mbarrier_arrive_cluster %peer : (!ptx.reg<b32>) -> ()
// CHECK-NEXT: ptx.cp_async_bulk_tensor_load_multicast [%bar], [%t, (%one, %one)], [%bar], %mask : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>, !ptx.reg<b16>
// CHECK-NEXT: ptx.prefetch_tensormap %t : (!ptx.reg<b64>) -> ()
// PTX: barrier.cluster.arrive.release;
// PTX-NEXT: barrier.cluster.wait.acquire;
// PTX-NEXT: mapa.shared::cluster.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: mbarrier.arrive.shared::cluster.b64 _, [%r{{[0-9]+}}];
// PTX-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}], %rs{{[0-9]+}};
// PTX-NEXT: prefetch.tensormap [%rd{{[0-9]+}}];
ptx.kernel attributes {sym_name = "cluster_ops", params = ["tmap"], param_types = ["tensormap"], shared = [#ptx.shared<"bars", bytes = 64, align = 8>], reqntid = [128 : i32, 1 : i32, 1 : i32], napkin.grid = [8 : i32], napkin.smem_bytes = 0 : i32, napkin.cluster = [2 : i32], napkin.tma = [#ptx.tma_box<"tmap", box = 128x64, swizzle = "128B">]} {
  %bar = ptx.addr_of {sym = "bars"} : () -> !ptx.reg<b32>
  %ta = ptx.addr_of {sym = "tmap"} : () -> !ptx.reg<b64>
  %t = ptx.cvta %ta {space = "param", to = false} : (!ptx.reg<b64>) -> !ptx.reg<b64>
  %one = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %mask = ptx.const {ty = "b16", value = 3 : i64} : () -> !ptx.reg<b16>
  ptx.barrier_cluster {kind = "arrive"} : () -> ()
  ptx.barrier_cluster {kind = "wait"} : () -> ()
  %peer = ptx.mapa %bar, %one : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  ptx.mbarrier_arrive_cluster %peer : (!ptx.reg<b32>) -> ()
  ptx.cp_async_bulk_tensor_load_multicast [%bar], [%t, (%one, %one)], [%bar], %mask : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>, !ptx.reg<b16>
  ptx.prefetch_tensormap %t : (!ptx.reg<b64>) -> ()
  ptx.ret
}
