// Two SMs read one buffer at once: what the L2's partitions keep of it, with the two on one
// partition or on both.
//
//   nvcc -O3 -arch=sm_90a -o /tmp/l2_partition research/l2_partition.cu
//   ncu --clock-control none --kernel-name pair_read --metrics dram__bytes_read.sum --csv /tmp/l2_partition [MiB]
//
// One block per SM (each asks for most of the SM's shared memory); the block on SM `first`
// and the one on SM `other` read a buffer of S MiB (default 36) REPS times through the L2,
// from its start and from its middle at once; the others exit at once; `other` runs over
// every SM in turn, one launch each. The program prints the SM pairs in launch order; ncu's
// DRAM bytes per launch, in the same order, go with them.
//
// What it finds (H200, 2026-11-23; research/model-validation.md): SM 0 alone reads a 36 MiB buffer 2.50
// times from DRAM, with an SM of its own partition 4.4-4.5 times, with one of the other
// 1.25-1.9 times (the partitions as research/l2_latency.cu measures them). A partition keeps a
// copy of every line its SMs read, so two readers on one partition make it hold the whole
// buffer, more than its 30 MiB, while two on different partitions each fill their own; the
// L2 replay of napkin_ir.model.l2 gives 2.5, 4.5 and 1 (tests/unit/model/test_model_l2.py).

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "l2_common.cuh"


constexpr int REPS = 4;
constexpr int THREADS = 1024;

__global__ void pair_read(const float4* __restrict__ buf, size_t n, unsigned first, unsigned other, float* out,
                          unsigned* seen) {
    extern __shared__ float pad[];  // one block an SM
    unsigned sm = smid();
    mark_ran(seen);
    if (sm != first && sm != other) return;
    size_t start = sm == first ? 0 : n / 2;  // the two read different parts at once
    float acc = read_passes(buf, n, start, REPS, THREADS);
    pad[threadIdx.x] = acc;
    if (acc == 1234.5f) out[sm] = pad[(threadIdx.x + 1) % THREADS];  // never true: the sums are far larger
}

int main(int argc, char** argv) {
    int mib = argc > 1 ? atoi(argv[1]) : 36;
    int sms = 0, smem = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    CHECK(cudaFuncSetAttribute(pair_read, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    size_t n = ((size_t)mib << 20) / sizeof(float4);
    float4* buf;
    float* out;
    unsigned* seen;
    CHECK(cudaMalloc(&buf, n * sizeof(float4)));
    CHECK(cudaMalloc(&out, 1024 * sizeof(float)));
    CHECK(cudaMalloc(&seen, SEEN_WORDS * sizeof(unsigned)));
    CHECK(cudaMemset(seen, 0, SEEN_WORDS * sizeof(unsigned)));
    fill<<<sms * 4, 256>>>(buf, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("SMs %d, buffer %d MiB, %d passes\n", sms, mib, REPS);
    for (int other = 0; other < sms; other++) {
        pair_read<<<sms, THREADS, smem>>>(buf, n, 0, other, out, seen);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        printf("pair 0 %d (SMs that ran a block: %d)\n", other, count_ran(seen));
    }
    return 0;
}
