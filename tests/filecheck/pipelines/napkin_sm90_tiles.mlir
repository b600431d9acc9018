// napkin-sm90's default block tile for a GEMM is the napkin model's (product_targets.sm90_plans):
// whole waves of blocks over the 132 SMs, padding past the edges, each tile's rate and its loads.
// The tile shows in the launch contract: A's TMA box is the block's rows, the grid the count of
// tiles (a persistent grid: one block an SM loops over them). Each kernel assembles with ptxas.
//
// 1000 x 14336 x 4096: 896 tiles of 128 x 128 (6.8 waves, 3.4 of 128 x 256's time) over 448 of
// 128 x 256 (3.4 waves, rounded up to 4).
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(1000, 14336, 4096))" | napkin-opt -p napkin-sm90 -t ptx -o %t.big.ptx --launch-json %t.big.json
// RUN: filecheck %s --check-prefix=BIG < %t.big.json
// RUN: %ptxas -arch=sm_90a %t.big.ptx -o %t.big.cubin
// BIG:      "arg": "a",
// BIG:        "box": [128, 64],
// BIG:      "grid": [896, 1, 1],
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
