// What research/l2_probe.cu, research/l2_partition.cu and research/l2_latency.cu share: a checked
// CUDA call, a buffer filled with positive values that are not zeros (nothing a compressor
// could shrink), a block's passes over a buffer through the L2 alone, and which SMs ran a
// block of a launch.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void fill(float4* buf, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ 0x9e3779b9u;
        buf[i] = make_float4((h & 0xffff) * 1e-5f + 1.f, (h >> 16) * 1e-5f + 1.f, (float)(i & 1023) + 1.f, 1.5f);
    }
}

// The block reads all n chunks of `buf` `reps` times through the L2 only (ld.global.cg: the
// L1 keeps nothing), from chunk `start` round to it, `threads` threads a block; returns
// this thread's sum, which the caller must keep alive.
__device__ float read_passes(const float4* __restrict__ buf, size_t n, size_t start, int reps, int threads) {
    float acc = 0.f;
    for (int r = 0; r < reps; r++) {
        for (size_t i = threadIdx.x; i < n; i += threads) {
            size_t j = start + i;
            if (j >= n) j -= n;
            float4 v = __ldcg(buf + j);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    return acc;
}

// The SM this block runs on.
__device__ unsigned smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

constexpr int SEEN_WORDS = 32;  // a bit per SM, up to 1024 SMs

// Thread 0 of the block sets its SM's bit in `seen` (SEEN_WORDS words).
__device__ void mark_ran(unsigned* seen) {
    if (threadIdx.x == 0) {
        unsigned sm = smid();
        atomicOr(seen + sm / 32, 1u << (sm % 32));
    }
}

// How many SMs set their bit in the device's `seen` since it was last cleared; clears it.
inline int count_ran(unsigned* seen) {
    unsigned host[SEEN_WORDS];
    CHECK(cudaMemcpy(host, seen, sizeof(host), cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(seen, 0, sizeof(host)));
    int count = 0;
    for (int i = 0; i < SEEN_WORDS; i++) count += __builtin_popcount(host[i]);
    return count;
}
