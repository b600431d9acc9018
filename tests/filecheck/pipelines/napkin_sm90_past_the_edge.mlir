// A napkin-sm90 GEMM tile may be longer than its axis: a decode's 16 rows of A in a 64-row tile.
// A's loads bring its 16 rows only (a box of 16 x 64: the tile's other rows are never stored);
// the output's box keeps the tile's size past the tensor's end (the stores write only what lies
// inside); the grid is the columns' tiles alone, and ptxas assembles it.
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(16, 1024, 256))" | napkin-opt -p 'napkin-sm90{block="64,128,64"}' -t ptx -o %t.ptx --launch-json %t.json
// RUN: filecheck %s < %t.json
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(16, 1024, 256))" | napkin-opt -p napkin-sm90 -t launch | filecheck %s --check-prefix=DEFAULT
// CHECK:      "arg": "a",
// CHECK:        "shape": [16, 256],
// CHECK-NEXT:   "tma": {
// CHECK-NEXT:     "box": [16, 64],
// CHECK:      "arg": "out",
// CHECK:        "shape": [16, 1024],
// CHECK-NEXT:   "tma": {
// CHECK-NEXT:     "box": [64, 64],
// CHECK:      "grid": [8, 1, 1],
// The model's own pick for it: a 64-row tile too.
// DEFAULT:      "arg": "a",
// DEFAULT:        "box": [16, 64],
