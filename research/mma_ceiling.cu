// The sm_80 path's ceilings on this GPU, without global memory: how fast mma.sync
// m16n8k16 (bf16 in, f32 accumulate) runs, alone and with the shared-memory reads and
// barriers of napkin-sm80's 64x64 warp tile (8 ldmatrix.x4 per 32 mma.sync, one barrier
// per 32- or 64-deep tile), and what one block barrier costs the tensor pipe.
//     nvcc -O3 -arch=sm_90a research/mma_ceiling.cu -o /tmp/mma_ceiling && /tmp/mma_ceiling
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return -1.f; } } while (0)

// LDSM: ldmatrix reads per 16-deep step (0 or 8); BAR: a block barrier every BAR steps (0:
// none; 2: a 32-deep tile; 4: 64-deep)
template <int LDSM, int BAR>
__global__ void __launch_bounds__(256, 1) kern(float *out, int steps) {
  extern __shared__ __align__(16) unsigned char smem[];
  float acc[32][4];
  for (int i = 0; i < 32; i++) for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
  unsigned a[2][4][4], b[2][8][2];  // fragments double-buffered: a step's loads go out before the last step's products
  for (int h = 0; h < 2; h++) {
    for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) a[h][i][j] = 0x3f803f80u ^ (threadIdx.x * 7 + i * 4 + j);
    for (int i = 0; i < 8; i++) for (int j = 0; j < 2; j++) b[h][i][j] = 0x3f803f80u ^ (threadIdx.x * 5 + i * 2 + j);
  }
  unsigned base = (unsigned)__cvta_generic_to_shared(smem) + ((threadIdx.x & 15) * 144 + (threadIdx.x >> 4) * 16) + (threadIdx.x >> 5) * 2304;
  for (int s = 0; s < steps; s += 2) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      if (LDSM) {
#pragma unroll
        for (int i = 0; i < 4; i++)
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                       : "=r"(a[h ^ 1][i][0]), "=r"(a[h ^ 1][i][1]), "=r"(a[h ^ 1][i][2]), "=r"(a[h ^ 1][i][3]) : "r"(base + i * 16 * 144 + h * 32));
#pragma unroll
        for (int i = 0; i < 4; i++)
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                       : "=r"(b[h ^ 1][2 * i][0]), "=r"(b[h ^ 1][2 * i][1]), "=r"(b[h ^ 1][2 * i + 1][0]), "=r"(b[h ^ 1][2 * i + 1][1])
                       : "r"(base + 20000 + i * 32 + h * 16 * 272));
      }
#pragma unroll
      for (int m = 0; m < 4; m++)
#pragma unroll
        for (int n = 0; n < 8; n++) {
          float *c = acc[m * 8 + n];
          asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                       : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                       : "r"(a[h][m][0]), "r"(a[h][m][1]), "r"(a[h][m][2]), "r"(a[h][m][3]), "r"(b[h][n][0]), "r"(b[h][n][1]));
        }
    }
    if (BAR == 2 || (BAR == 4 && (s & 3) == 2)) __syncthreads();
  }
  float t = 0.f;
  for (int i = 0; i < 32; i++) for (int j = 0; j < 4; j++) t += acc[i][j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = t;
}

template <int LDSM, int BAR>
float run(const char *name, int sms, int warps, float base_ms = 0.f) {
  float *out;
  CHECK(cudaMalloc(&out, sms * 2 * warps * 32 * sizeof(float)));
  int smem = 64 * 1024;
  CHECK(cudaFuncSetAttribute(kern<LDSM, BAR>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int steps = 4096;
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  kern<LDSM, BAR><<<sms, warps * 32, smem>>>(out, steps);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < 10; r++) {
    CHECK(cudaEventRecord(e0));
    kern<LDSM, BAR><<<sms, warps * 32, smem>>>(out, steps);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  double flop = 2.0 * 16 * 8 * 16 * 32 * (double)steps * warps * sms;
  printf("%-34s %2d warps/SM: %6.0f TFLOP/s", name, warps, flop / best / 1e9);
  if (BAR && base_ms > 0.f)  // the time the barriers added, per barrier a block passes
    printf("   %5.1f ns a barrier", (best - base_ms) * 1e6 / (steps / (BAR ? BAR : 1)));
  printf("\n");
  CHECK(cudaFree(out));
  return best;
}

int main() {
  int sms;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) return 1;
  for (int w : {4, 8}) {
    if (run<0, 0>("mma.sync alone", sms, w) < 0) return 1;
    float base = run<8, 0>("mma.sync + 8 ldmatrix.x4 / 32", sms, w);
    if (base < 0 || run<8, 4>("  + a barrier every 4 steps (64 deep)", sms, w, base) < 0 ||
        run<8, 2>("  + a barrier every 2 steps (32 deep)", sms, w, base) < 0)
      return 1;
  }
  return 0;
}
