// napkin-run --gpu compiles the diagram with the pipeline named and runs the kernel; with no
// GPU it says so and runs on the CPU; a bad pipeline is one diagnostic.
// RUN: napkin-run %examples/matmul.mlir --gpu napkin-sm90 --random-inputs --seed 3 --check | filecheck %s
// RUN: not napkin-run %examples/matmul.mlir --gpu 'napkin-sm90{block="1,2"}' --random-inputs 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: compiled @matmul with napkin-sm90: {{[0-9]+}} lines of PTX, grid [8], 384 threads, {{[0-9]+}} bytes of shared memory
// CHECK: {{no GPU here|ran on}}
// CHECK: @matmul output #0: <m=512, n=384> bf16
// CHECK: check against float64 reference: relative error {{.*}}: ok
// BAD: napkin-run: error: napkin-sm90: block="1,2" should be 3 positive integers separated by commas
