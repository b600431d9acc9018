// Which L2 partition each SM is attached to, read off load latencies.
//
//   nvcc -O3 -arch=sm_90a -o /tmp/l2_latency research/l2_latency.cu
//   /tmp/l2_latency OUT.bin [LINES]
//
// A line has one home partition; a read from an SM on the other partition crosses between
// them, which costs time. So for one SM at a time (one block an SM: each asks for most of
// the SM's shared memory; the block on the SM being measured reads, the others exit), one
// thread reads LINES 128-byte lines one after another, each load's address depending on the
// previous load's value, and times each with clock64, in three states of the cache:
//
//   cold:   after a pass over a buffer four times the L2 (no line is cached anywhere);
//   self:   the same lines again right after (each now in the reader's own partition);
//   by SM0: after the block on the SM numbered 0 read them cold (in SM 0's partition, and
//           in their home).
//
// A cold read from DRAM through a far home takes longer than one through a near one, so the
// cold latencies split each SM's lines into near and far, and two SMs on one partition
// agree on which lines are near. The file holds, per SM in %smid order, three rows of LINES
// unsigned cycle counts (cold, self, by SM0); research/l2_latency.py reads it.

#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "l2_common.cuh"

constexpr int LINE_WORDS = 32;  // 128 bytes of unsigned

// Thread 0 of the block on SM `target` reads the lines in the order `next` chains them
// (each line's first word holds the index of the line to read after it), timing each read.
__global__ void chase(const unsigned* __restrict__ lines, int count, unsigned target, unsigned* cycles,
                      unsigned* seen) {
    extern __shared__ unsigned pad[];  // one block an SM
    mark_ran(seen);
    if (smid() != target || threadIdx.x != 0) return;
    unsigned at = 0;
    for (int i = 0; i < count; i++) {
        long long t0 = clock64();
        unsigned nxt = __ldcg(lines + (size_t)at * LINE_WORDS);
        // the second clock is read after the value arrives: this add waits on it, and the
        // warp issues in order
        unsigned after;
        asm volatile("add.u32 %0, %1, 1;" : "=r"(after) : "r"(nxt));
        long long t1 = clock64();
        cycles[at] = (unsigned)(t1 - t0);
        at = after - 1;
    }
    pad[0] = at;
}

__global__ void flush(const float4* __restrict__ buf, size_t n, float* sink) {
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = __ldcg(buf + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) sink[0] = acc;  // never true; keeps the reads
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.bin [LINES]\n", argv[0]);
        return 2;
    }
    int count = argc > 2 ? atoi(argv[2]) : 2048;
    int sms = 0, smem = 0, l2 = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    CHECK(cudaFuncSetAttribute(chase, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

    // The lines, chained in a fixed pseudo-random order (no two neighbours in address).
    std::vector<unsigned> host((size_t)count * LINE_WORDS, 1u);
    std::vector<unsigned> order(count);
    for (int i = 0; i < count; i++) order[i] = i;
    unsigned s = 12345u;
    for (int i = count - 1; i > 0; i--) {
        s = s * 1664525u + 1013904223u;
        int j = (int)(s % (unsigned)(i + 1));
        unsigned t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    // start at line 0: rotate so that order[0] == 0
    int zero = 0;
    while (order[zero] != 0) zero++;
    for (int i = 0; i < count; i++) host[(size_t)order[(zero + i) % count] * LINE_WORDS] = order[(zero + i + 1) % count];

    unsigned *lines, *cycles, *seen;
    float4* big;
    float* sink;
    size_t big_n = (size_t)4 * l2 / sizeof(float4);
    CHECK(cudaMalloc(&lines, host.size() * sizeof(unsigned)));
    CHECK(cudaMalloc(&cycles, (size_t)count * sizeof(unsigned)));
    CHECK(cudaMalloc(&seen, SEEN_WORDS * sizeof(unsigned)));
    CHECK(cudaMemset(seen, 0, SEEN_WORDS * sizeof(unsigned)));
    CHECK(cudaMalloc(&big, big_n * sizeof(float4)));
    CHECK(cudaMalloc(&sink, sizeof(float)));
    CHECK(cudaMemcpy(lines, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    fill<<<sms * 4, 256>>>(big, big_n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    FILE* f = fopen(argv[1], "wb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    std::vector<unsigned> row(count);
    int ran = 0;
    auto run = [&](unsigned target) {
        CHECK(cudaMemset(cycles, 0xff, (size_t)count * sizeof(unsigned)));
        chase<<<sms, 32, smem>>>(lines, count, target, cycles, seen);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        ran = count_ran(seen);
        CHECK(cudaMemcpy(row.data(), cycles, (size_t)count * sizeof(unsigned), cudaMemcpyDeviceToHost));
    };
    auto cold = [&]() {
        flush<<<sms * 4, 256>>>(big, big_n, sink);
        CHECK(cudaGetLastError());
    };
    for (int sm = 0; sm < sms; sm++) {
        cold();
        run(sm);
        fwrite(row.data(), sizeof(unsigned), count, f);
        run(sm);
        fwrite(row.data(), sizeof(unsigned), count, f);
        cold();
        run(0);
        run(sm);
        fwrite(row.data(), sizeof(unsigned), count, f);
        if (ran != sms) fprintf(stderr, "SM %d: only %d SMs ran a block\n", sm, ran);
    }
    fclose(f);
    printf("SMs %d, L2 %d MiB, %d lines, cycles in %s\n", sms, l2 >> 20, count, argv[1]);
    return 0;
}
