// How long a tile copied with cp.async takes to land while every SM copies: the latency a
// software pipeline of S stages must hide with S - 1 tiles in flight.
//
//   nvcc -O3 -arch=sm_90a -o /tmp/copy_latency research/copy_latency.cu && /tmp/copy_latency
//
// One block of 256 threads per SM. Each iteration, the block copies one tile of TILE bytes
// (16 bytes a thread a copy, cp.async.cg) from a source buffer into shared memory, waits for
// it (cp.async.wait_group 0) and synchronises, so one tile is in flight at a time; thread 0
// times the loop with %globaltimer. The source is either small enough to stay in the L2
// (16 MiB, read once before) or far larger (1 GiB, from DRAM), and each block starts at its
// own offset. Prints, per source and tile size, the median over SMs of the time per tile.

#include <algorithm>
#include <vector>

#include "l2_common.cuh"

constexpr int THREADS = 256;

__global__ void copy_loop(const char* __restrict__ src, size_t span, int tile, int iters, unsigned long long* out) {
    extern __shared__ __align__(128) char stage[];
    unsigned dst = (unsigned)__cvta_generic_to_shared(stage);
    size_t offset = (size_t)blockIdx.x * 1048576 % span;
    unsigned long long t0 = 0, t1 = 0;
    for (int it = -2; it < iters; it++) {  // two untimed iterations first
        if (it == 0 && threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        for (int c = threadIdx.x * 16; c < tile; c += THREADS * 16) {
            const char* g = src + (offset + c) % span;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + c), "l"(g) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
        offset = (offset + tile) % span;
    }
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
        out[blockIdx.x] = (t1 - t0) / (unsigned long long)iters;
    }
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const size_t big = (size_t)1 << 30, small = (size_t)16 << 20;
    char* src;
    unsigned long long* out;
    CHECK(cudaMalloc(&src, big));
    CHECK(cudaMalloc(&out, sms * sizeof(unsigned long long)));
    fill<<<sms * 4, 256>>>((float4*)src, big / sizeof(float4));
    CHECK(cudaGetLastError());
    int smem = 200 * 1024;  // one block an SM
    CHECK(cudaFuncSetAttribute(copy_loop, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    printf("SMs %d, one block of %d threads each, one tile in flight\n", sms, THREADS);
    printf("%-6s %10s %14s %14s %14s\n", "source", "tile B", "ns per tile", "p10 ns", "p90 ns");
    for (size_t span : {small, big}) {
        for (int tile : {8192, 16384, 24576, 32768, 49152}) {
            copy_loop<<<sms, THREADS, smem>>>(src, span, tile, 200, out);  // warms the L2 for the small source
            CHECK(cudaGetLastError());
            copy_loop<<<sms, THREADS, smem>>>(src, span, tile, 2000, out);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            std::vector<unsigned long long> ns(sms);
            CHECK(cudaMemcpy(ns.data(), out, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            std::sort(ns.begin(), ns.end());
            printf("%-6s %10d %14llu %14llu %14llu\n", span == small ? "L2" : "DRAM", tile, ns[sms / 2], ns[sms / 10],
                   ns[sms * 9 / 10]);
        }
    }
    CHECK(cudaFree(src));
    CHECK(cudaFree(out));
    return 0;
}
