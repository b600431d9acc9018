// Which SMs share an L2 partition: two SMs read one buffer, and the L2 keeps it only if
// they hold one copy of it.
//
//   nvcc -O3 -arch=sm_90a -o /tmp/l2_partition tools/l2_partition.cu
//   ncu --clock-control none --kernel-name pair_read --metrics dram__bytes_read.sum --csv /tmp/l2_partition [MiB]
//
// One block per SM (each asks for most of the SM's shared memory); the block on SM `first`
// and the one on SM `other` read a buffer of S MiB (default 36) REPS times through the L2,
// the others exit at once; `other` runs over every SM in turn, one launch each. An L2
// partition keeps its own copy of the lines its SMs read (l2_probe.cu: a buffer every SM
// reads is kept up to 28 MiB of the H200's 60, one each SM reads its own slice of up to 40).
// So with S between 30 and 40 MiB the buffer is kept, and DRAM bytes read stay near S,
// when the two SMs are on one partition, and it is read about REPS times when they are not.
// The program prints the SM pairs in launch order; ncu's DRAM bytes per launch, in the same
// order, give each SM's side relative to `first` (SM 0).

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "l2_common.cuh"


constexpr int REPS = 4;
constexpr int THREADS = 1024;

__device__ unsigned smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__global__ void pair_read(const float4* __restrict__ buf, size_t n, unsigned first, unsigned other, float* out,
                          unsigned* seen) {
    extern __shared__ float pad[];  // one block an SM
    unsigned sm = smid();
    if (threadIdx.x == 0) atomicOr(seen + sm / 32, 1u << (sm % 32));
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
    CHECK(cudaMalloc(&seen, 32 * sizeof(unsigned)));
    fill<<<sms * 4, 256>>>(buf, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("SMs %d, buffer %d MiB, %d passes\n", sms, mib, REPS);
    for (int other = 0; other < sms; other++) {
        CHECK(cudaMemset(seen, 0, 32 * sizeof(unsigned)));
        pair_read<<<sms, THREADS, smem>>>(buf, n, 0, other, out, seen);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        unsigned host[32];
        CHECK(cudaMemcpy(host, seen, sizeof(host), cudaMemcpyDeviceToHost));
        int count = 0;
        for (int i = 0; i < 32; i++) count += __builtin_popcount(host[i]);
        printf("pair 0 %d (SMs that ran a block: %d)\n", other, count);
    }
    return 0;
}
