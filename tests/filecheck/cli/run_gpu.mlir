// napkin-run --gpu compiles the diagram with the pipeline named and runs the kernel: on the
// GPU, or where there is none an sm_80 kernel in the warp-level PTX emulator; either way it
// says which ran, and --check checks that. Where the compiled code cannot run (sm_90a with
// no GPU) it says so plainly and --check fails rather than check the interpreter against
// itself. A bad pipeline is one diagnostic.
// RUN: napkin-run %examples/two_products.mlir --gpu napkin-sm80 --random-inputs --seed 3 --check | filecheck %s --check-prefix=SM80
// RUN: napkin-run %examples/matmul.mlir --gpu napkin-sm90 --random-inputs --seed 3 | filecheck %s --check-prefix=SM90
// RUN: not napkin-run %examples/matmul.mlir --gpu 'napkin-sm90{block="1,2"}' --random-inputs 2>&1 | filecheck %s --check-prefix=BAD

// SM80: compiled @two with napkin-sm80: {{[0-9]+}} lines of sm_80 PTX, grid [2, 2], 256 threads, {{[0-9]+}} bytes of shared memory
// SM80: {{ran the compiled kernel on the GPU|ran the compiled sm_80 PTX in the warp-level emulator}}
// SM80: @two output #0: <m=256, n=192> bf16
// SM80: checking the compiled {{.*}} against the diagram evaluated in float64
// SM80: check output #0 against float64 reference: relative error {{.*}}: ok
// SM80: check output #1 against float64 reference: relative error {{.*}}: ok
// SM90: compiled @matmul with napkin-sm90: {{[0-9]+}} lines of sm_90a PTX, grid [48], 256 threads, {{[0-9]+}} bytes of shared memory
// SM90: {{ran the compiled kernel on the GPU|the compiled code did not run}}
// SM90: @matmul output #0: <m=512, n=384> bf16
// BAD: napkin-run: error: napkin-sm90: block="1,2" should be 3 positive integers separated by commas
