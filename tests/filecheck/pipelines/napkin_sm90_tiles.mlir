// napkin-sm90's default block tile for a GEMM is the napkin model's (product_targets.sm90_plans):
// whole waves of blocks over the 132 SMs, padding past the edges, each tile's rate and its loads.
// The tile shows in the launch contract: A's TMA box is the block's rows, the grid the count of
// tiles (a persistent grid: one block an SM loops over them). Each kernel assembles with ptxas.
//
// 1000 x 14336 x 4096: 784 swapped tiles of 144 x 128 (7 x 112: 5.9 waves, each 0.56 of 128 x
// 256's time) over 448 of 128 x 256 (3.4 waves, rounded up to 4): wgmma's rows run over the
// output's columns, its N (144) over the rows, and the output leaves through stmatrix.trans.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(1000, 14336, 4096))" | napkin-opt -p napkin-sm90 -t ptx -o %t.big.ptx --launch-json %t.big.json
// RUN: filecheck %s --check-prefix=BIG < %t.big.json
// RUN: filecheck %s --check-prefix=BIG-PTX < %t.big.ptx
// RUN: %ptxas -arch=sm_90a %t.big.ptx -o %t.big.cubin
// BIG:      "arg": "a",
// BIG:        "box": [144, 64],
// BIG:      "grid": [784, 1, 1],
// BIG-PTX:  wgmma.mma_async.sync.aligned.m64n144k16.f32.bf16.bf16
// BIG-PTX:  stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// BIG-NEXT: "persistent_blocks_per_sm": 1,
// BIG:      "block": [384, 1, 1],
//
// 4096^3: 128 x 256, 512 tiles.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(4096, 4096, 4096))" | napkin-opt -p napkin-sm90 -t launch | filecheck %s --check-prefix=SQUARE
// SQUARE:      "box": [128, 64],
// SQUARE:      "grid": [512, 1, 1],
//
// 256 x 4096 x 4096: 128 x 128 tiles (64) would leave 68 of the 132 SMs idle; 64 x 128 tiles (128, one
// consumer warpgroup, 256 threads) load at twice the SMs.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(256, 4096, 4096))" | napkin-opt -p napkin-sm90 -t ptx -o %t.short.ptx --launch-json %t.short.json
// RUN: filecheck %s --check-prefix=SHORT < %t.short.json
// RUN: %ptxas -arch=sm_90a %t.short.ptx -o %t.short.cubin
// SHORT:      "box": [64, 64],
// SHORT:      "grid": [128, 1, 1],
// SHORT:      "block": [256, 1, 1],
//
// A tile named in the pipeline is taken as it is.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(256, 4096, 4096))" | napkin-opt -p 'napkin-sm90{block="128,128,64"}' -t launch | filecheck %s --check-prefix=GIVEN
// GIVEN:      "box": [128, 64],
// GIVEN:      "grid": [64, 1, 1],
// GIVEN:      "block": [384, 1, 1],
//
// Rows that are not a multiple of 64 are a swapped tile's; with swap=false they are refused.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(5000, 3000, 2056))" | napkin-opt -p 'napkin-sm90{block="232,128,64" cluster=2}' -t ptx | filecheck %s --check-prefix=SWAPPED
// SWAPPED: .maxntid 384
// SWAPPED: wgmma.mma_async.sync.aligned.m64n232k16.f32.bf16.bf16
// SWAPPED: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(5000, 3000, 2056))" | not napkin-opt -p 'napkin-sm90{block="232,128,64" swap=false}' -t ptx 2>&1 | filecheck %s --check-prefix=UNSWAPPED
// UNSWAPPED: wgmma splits the tile's 232 rows over warpgroups of 64; the rows must be 64, 128, 192 or 256
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(5000, 3000, 2056))" | not napkin-opt -p 'napkin-sm90{block="232,128,64" split=2}' -t ptx 2>&1 | filecheck %s --check-prefix=SPLIT
// SPLIT: napkin-sm90: split=2 adds its parts in tiles of the output's rows; a swapped product (swap=true, or a block of 232 rows, not a multiple of 64) cannot be split
