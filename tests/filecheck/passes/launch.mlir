// hbm-launch writes the launch shape on each kernel; napkin-sm90 emits it (a 1-D grid in
// grouped order, two blocks per multiprocessor, a persistent tile loop).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{group=8 blocks_per_sm=2 persistent=true}' | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" group=2}' -t ptx | filecheck %s --check-prefix=GROUP
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="64,128,64" blocks_per_sm=2}' -t ptx -o %t.two.ptx
// RUN: filecheck %s --check-prefix=TWO < %t.two.ptx
// RUN: %ptxas -v -arch=sm_90a %t.two.ptx -o %t.two.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,128,32" stages=2 persistent=true group=2}' 2>&1 | filecheck %s --check-prefix=PANEL
// RUN: sed -e 's/k=256/k=512/g' %examples/matmul.mlir | napkin-opt -p 'napkin-sm90{block="128,256,64" persistent=true group=4}' -t ptx -o %t.persistent.ptx
// RUN: filecheck %s --check-prefix=PERSISTENT < %t.persistent.ptx
// RUN: %ptxas -v -arch=sm_90a %t.persistent.ptx -o %t.persistent.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{persistent=true block="128,256,64" stages=3}' -t ptx -o %t.rounds.ptx
// RUN: %ptxas -v -arch=sm_90a %t.rounds.ptx -o %t.rounds.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" blocks_per_sm=2 stages=2}' 2>&1 | filecheck %s --check-prefix=REGS
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{blocks_per_sm=5}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: hbm.kernel attributes {sym_name = "matmul", grid = #hbm.labels<m=128, n=128>, num_outputs = 1 : i32, hbm.group = 8 : i32, hbm.blocks_per_sm = 2 : i32, hbm.persistent}
// GROUP: mov.u32 %r{{[0-9]+}}, %ctaid.x;
// GROUP-NOT: %ctaid.y
// GROUP: min.u32
// TWO: .minnctapersm 2
// TWO: setmaxnreg.inc.sync.aligned.u32 {{[0-9]+}};
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PANEL: error: hbm-to-smem: a TMA tile with 128-byte swizzle needs rows of whole 128-byte panels
// PERSISTENT: %nctaid.x
// PERSISTENT: wgmma.wait_group.sync.aligned 0;
// PERSISTENT-NEXT: {{.*}}
// PERSISTENT: mbarrier.arrive.shared::cta.b64
// REGS: napkin-opt: error: reg-to-ptx: @matmul: 2 blocks of 384 threads per multiprocessor leave 80 registers per thread at entry, but the wgmma accumulators need about 152
// BAD: napkin-opt: error: hbm-launch: blocks_per_sm must be 1 to 4, got 5

// Clusters of two along the first grid axis share B's tiles by multicast.
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" group=0 cluster=2}' -t ptx -o %t.cluster.ptx
// RUN: filecheck %s --check-prefix=CLUSTER < %t.cluster.ptx
// RUN: %ptxas -v -arch=sm_90a %t.cluster.ptx -o %t.cluster.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-launch{group=8 cluster=2},hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' 2>&1 | filecheck %s --check-prefix=CLUSTERGROUP
// CLUSTER: barrier.cluster.arrive.release;
// CLUSTER: mov.u32 %r{{[0-9]+}}, %cluster_ctarank;
// CLUSTER: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [
// CLUSTER: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// CLUSTER: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// CLUSTER: mapa.shared::cluster.u32
// CLUSTER-NEXT: mbarrier.arrive.shared::cluster.b64 _,
// CLUSTER: barrier.cluster.wait.acquire;
// CLUSTERGROUP: napkin-opt: error: reg-to-ptx: @matmul: clusters are pairs of blocks of a two-axis grid, the first axis fastest (grouped only when persistent) for now

// napkin-sm90{cluster=2 persistent=true}: each cluster (%ctaid.x / 2 of
// %nctaid.x / 2) takes a pair of neighbouring row tiles a turn, the block the pair's first
// or second by its rank; B's three panels of 64 columns, the first block loads two (its
// rank and the odd last one), the second one, each multicast to both.
// RUN: sed -e 's/k=256/k=512/g' %examples/matmul.mlir | napkin-opt -p 'napkin-sm90{block="128,192,64" cluster=2 persistent=true}' -t ptx -o %t.pcluster.ptx
// RUN: filecheck %s --check-prefix=PCLUSTER < %t.pcluster.ptx
// RUN: %ptxas -v -arch=sm_90a %t.pcluster.ptx -o %t.pcluster.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// PCLUSTER: mov.u32 [[RANK:%r[0-9]+]], %cluster_ctarank;
// PCLUSTER: mov.u32 [[CTA:%r[0-9]+]], %ctaid.x;
// PCLUSTER-NEXT: mov.u32 [[CTAS:%r[0-9]+]], %nctaid.x;
// PCLUSTER-NEXT: mov.u32 [[ONE:%r[0-9]+]], 1;
// PCLUSTER-NEXT: shr.u32 %r{{[0-9]+}}, [[CTA]], [[ONE]];
// PCLUSTER: shr.u32 %r{{[0-9]+}}, [[CTAS]], %r{{[0-9]+}};
// PCLUSTER: add.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, [[RANK]];
// PCLUSTER: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PCLUSTER: setp.eq.u32 [[FIRST:%p[0-9]+]], [[RANK]], %r{{[0-9]+}};
// PCLUSTER-NEXT: @[[FIRST]] bra
// PCLUSTER: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// PCLUSTER: barrier.cluster.wait.acquire;
