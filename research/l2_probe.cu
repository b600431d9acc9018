// How much data the L2 keeps between reads, for data every SM reads and for data one SM reads.
//
//   nvcc -O3 -arch=sm_90a -o /tmp/l2_probe research/l2_probe.cu
//   ncu --clock-control none --kernel-name regex:'^(all_read|own_read)$' \
//       --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum --csv /tmp/l2_probe
//
// For each size S (MiB, the arguments; 4 to 64 by default) two kernels run, each reading a
// buffer of S bytes REPS times through the L2 only (ld.global.cg: the L1 keeps nothing):
//   all_read: every block (one per SM) reads the whole buffer, from its own rotated start, so
//             at any time the SMs read different parts of it: every line is read by all SMs;
//   own_read: block b reads only its own 1/blocks slice: every line is read by one SM.
// DRAM bytes read over S tell how much of the buffer survived between passes: 1 while the L2
// keeps all of it, towards REPS once it keeps none. The napkin model's L2 replay takes the
// cache for tiles every SM reads as half the L2 (napkin_ir/model/l2.py); this measures it.
// Without ncu the program still runs each kernel and prints its time and bandwidth.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "l2_common.cuh"


constexpr int REPS = 4;
constexpr int THREADS = 1024;

__global__ void all_read(const float4* __restrict__ buf, size_t n, float* out) {
    size_t start = (size_t)blockIdx.x * (n / gridDim.x);  // rotated: blocks read different parts at once
    float acc = read_passes(buf, n, start, REPS, THREADS);
    if (acc == 1234.5f) out[blockIdx.x] = acc;  // keeps the loads; never true: the sums are far larger
}

__global__ void own_read(const float4* __restrict__ buf, size_t n, float* out) {
    size_t per = n / gridDim.x;
    float acc = read_passes(buf + (size_t)blockIdx.x * per, per, 0, REPS, THREADS);
    if (acc == 1234.5f) out[blockIdx.x] = acc;
}

int main(int argc, char** argv) {
    std::vector<int> sizes;
    for (int i = 1; i < argc; i++) sizes.push_back(atoi(argv[i]));
    if (sizes.empty()) sizes = {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64};
    int sms = 0, l2 = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    size_t most = (size_t)64 << 20;
    for (int s : sizes) most = std::max(most, (size_t)s << 20);
    float4* buf;
    float* out;
    CHECK(cudaMalloc(&buf, most));
    CHECK(cudaMalloc(&out, sms * sizeof(float)));
    fill<<<sms * 4, 256>>>(buf, most / sizeof(float4));  // positive values: the sums stay far above the sentinel
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    printf("SMs %d, L2 %d MiB, %d passes, %d threads a block\n", sms, l2 >> 20, REPS, THREADS);
    printf("%8s %14s %14s\n", "MiB", "all_read GB/s", "own_read GB/s");
    for (int s : sizes) {
        size_t n = ((size_t)s << 20) / sizeof(float4);
        float ms[2];
        for (int k = 0; k < 2; k++) {
            CHECK(cudaEventRecord(a));
            if (k == 0) all_read<<<sms, THREADS>>>(buf, n, out);
            else own_read<<<sms, THREADS>>>(buf, n, out);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            CHECK(cudaEventElapsedTime(&ms[k], a, b));
        }
        double all_bytes = (double)sms * REPS * n * sizeof(float4), own_bytes = (double)REPS * n * sizeof(float4);
        printf("%8d %14.0f %14.0f\n", s, all_bytes / ms[0] / 1e6, own_bytes / ms[1] / 1e6);
    }
    CHECK(cudaFree(buf));
    CHECK(cudaFree(out));
    return 0;
}
