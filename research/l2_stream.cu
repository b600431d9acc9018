// Does data streaming past the L2 push out data read again, and do written lines push
// harder than read ones?
//
//   nvcc -O3 -arch=sm_90a -o /tmp/l2_stream research/l2_stream.cu
//   ncu --clock-control none --kernel-name regex:'^reuse_' \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv /tmp/l2_stream R_MIB S_MIB...
//
// One block an SM. In each of PASSES passes every block reads all of a buffer R (R_MIB, 16 by
// default; from its own rotated start, as research/l2_probe.cu's all_read), then streams its own
// slice of S_MIB (the other arguments) of a second buffer, fresh bytes each pass: reuse_read
// reads them, reuse_write writes them. A GEMM in bands of block rows does the same: the
// band's A panels are read again each wave while B's panels and the output's tiles stream by.
// From DRAM bytes read, R's passes after the first found (R_MIB + streamed reads aside) the
// share of R lost between passes. The napkin model's L2 replay (napkin_ir/model/l2.py) counts
// a written line like a read one: it predicts the same loss for both kernels at one S_MIB
// (python3 research/l2_stream.py reads the ncu CSV and sets the replay beside it). ncu flushes
// the caches before each profiled launch (its default --cache-control all), so R's first
// pass comes from DRAM.

#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "l2_common.cuh"

constexpr int PASSES = 4;
constexpr int THREADS = 1024;

// Block b's slice of the streamed buffer in pass p: chunks [(p * blocks + b) * per, + per).
__device__ size_t stream_base(int p, size_t per) { return ((size_t)p * gridDim.x + blockIdx.x) * per; }

__global__ void reuse_read(const float4* __restrict__ r, size_t nr, const float4* __restrict__ s, size_t per, float* out) {
    size_t start = (size_t)blockIdx.x * (nr / gridDim.x);
    float acc = 0.f;
    for (int p = 0; p < PASSES; p++) {
        acc += read_passes(r, nr, start, 1, THREADS);
        const float4* mine = s + stream_base(p, per);
        for (size_t i = threadIdx.x; i < per; i += THREADS) {
            float4 v = __ldcg(mine + i);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == 1234.5f) out[blockIdx.x] = acc;  // keeps the loads; never true: the sums are far larger
}

__global__ void reuse_write(const float4* __restrict__ r, size_t nr, float4* s, size_t per, float* out) {
    size_t start = (size_t)blockIdx.x * (nr / gridDim.x);
    float acc = 0.f;
    for (int p = 0; p < PASSES; p++) {
        acc += read_passes(r, nr, start, 1, THREADS);
        float4* mine = s + stream_base(p, per);
        for (size_t i = threadIdx.x; i < per; i += THREADS) __stcg(mine + i, make_float4(acc, 1.f, 2.f, 3.f));
    }
    if (acc == 1234.5f) out[blockIdx.x] = acc;
}

int main(int argc, char** argv) {
    int r_mib = argc > 1 ? atoi(argv[1]) : 16;
    std::vector<int> streams;
    for (int i = 2; i < argc; i++) streams.push_back(atoi(argv[i]));
    if (streams.empty()) streams = {0, 4, 8, 12, 16, 20, 24, 32};
    int sms = 0, l2 = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    int most = 0;
    for (int s : streams) most = s > most ? s : most;
    size_t nr = ((size_t)r_mib << 20) / sizeof(float4);
    size_t ns = ((size_t)most << 20) / sizeof(float4) * PASSES + sms;
    float4 *r, *s;
    float* out;
    CHECK(cudaMalloc(&r, nr * sizeof(float4)));
    CHECK(cudaMalloc(&s, ns * sizeof(float4)));
    CHECK(cudaMalloc(&out, sms * sizeof(float)));
    fill<<<sms * 4, 256>>>(r, nr);
    fill<<<sms * 4, 256>>>(s, ns);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("SMs %d, L2 %d MiB, R %d MiB, %d passes; launches in order (kernel, streamed MiB a pass):\n", sms, l2 >> 20,
           r_mib, PASSES);
    for (int mib : streams) {
        size_t per = ((size_t)mib << 20) / sizeof(float4) / sms;
        for (int k = 0; k < 2; k++) {
            if (k == 0) reuse_read<<<sms, THREADS>>>(r, nr, s, per, out);
            else reuse_write<<<sms, THREADS>>>(r, nr, s, per, out);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            printf("launch %s %d\n", k == 0 ? "reuse_read" : "reuse_write", mib);
        }
    }
    CHECK(cudaFree(r));
    CHECK(cudaFree(s));
    CHECK(cudaFree(out));
    return 0;
}
