// 64 B messages from every thread as 80 B cells (2 header words + 8), groups of 32
// consecutive cells per warp (fetch-add reservation on 16 rings), into pinned mapped
// memory that never fills. A: each owner's words broadcast in turn (gpuio's fill).
// B: every lane holds its 10 words; store s, round q: x = shfl(v[q], c(r)). C: memcpy.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstring>
typedef unsigned long long u64;
#define PER 62
#define RINGS 16
#define W 10
__device__ __forceinline__ unsigned lane_id() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
__device__ __forceinline__ void msg(char *m, u64 t, u64 i) {
  *(u64 *)m = t << 24 | i;
  for (int k = 8; k < 64; k += 8) *(u64 *)(m + k) = t * 0x0101010101010101ull;
}
template <int WAY>
__global__ void send(u64 *cells, u64 *tails, u64 ring_words) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const unsigned r = lane_id();
  const u64 warp = t / 32;
  const unsigned ring = (unsigned)(warp % RINGS);
  alignas(8) char m[4096];
  for (u64 i = 0; i < PER; i++) {
    msg(m, t, i);
    u64 base = 0;
    if (r == 0) base = atomicAdd(&tails[ring * 16], 32ull);
    base = __shfl_sync(~0u, base, 0);
    u64 *dst = cells + ring * ring_words + base * W;
    if (WAY == 0) {
      // owner j's cell words are y = j*W .. j*W+9; store k writes y = 32k .. 32k+31
      u64 mine = 0;
      unsigned store_end = 32;
      for (unsigned j = 0; j < 32; j++) {
        const unsigned first = j * W, end = first + W;
        for (unsigned y = first; y < end;) {
          const unsigned stop = store_end < end ? store_end : end;
          const unsigned y_me = store_end - 32 + r;
          if (y_me >= y && y_me < stop) {
            const unsigned w = y_me - first;
            mine = w == 0 ? base + j + 1 : w == 1 ? (64ull | 32ull << 32) : 0;
          }
          const unsigned from = y > first + 2 ? y : first + 2;
          for (unsigned k0 = from; k0 < stop; k0 += 8) {
            u64 v[8];
#pragma unroll
            for (unsigned u = 0; u < 8; u++) v[u] = r == j && k0 + u < stop ? *(const u64 *)(m + (k0 + u - first - 2) * 8) : 0;
#pragma unroll
            for (unsigned u = 0; u < 8; u++) {
              if (k0 + u >= stop) break;
              const u64 x = __shfl_sync(~0u, v[u], j);
              if (k0 + u == y_me) mine = x;
            }
          }
          if (stop == store_end) { dst[y_me] = mine; store_end += 32; }
          y = stop;
        }
      }
    } else {
      u64 v[W];
      v[0] = base + r + 1;
      v[1] = 64ull | 32ull << 32;
#pragma unroll
      for (int k = 0; k < 8; k++) v[2 + k] = *(const u64 *)(m + k * 8);
#pragma unroll
      for (unsigned s = 0; s < W; s++) {
        const unsigned y = s * 32 + r, c = y / W, w = y % W;
        u64 mine = 0;
#pragma unroll
        for (unsigned q = 0; q < W; q++) {
          const u64 x = __shfl_sync(~0u, v[q], c);
          if (w == q) mine = x;
        }
        dst[y] = mine;
      }
    }
  }
}
int main() {
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  const int grid = p.multiProcessorCount, block = 1024;
  const u64 threads = (u64)grid * block, msgs = threads * PER;
  const u64 ring_words = (msgs / RINGS + 64) * W;
  const u64 bytes = ring_words * 8 * RINGS;
  u64 *host, *hdev, *tails, *dev;
  cudaHostAlloc((void **)&host, bytes, cudaHostAllocMapped);
  cudaHostGetDevicePointer((void **)&hdev, host, 0);
  cudaMalloc((void **)&tails, RINGS * 16 * 8);
  cudaMalloc((void **)&dev, bytes);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  printf("%s: %llu threads x %d messages of 64 B in 80 B cells, %d rings, %.0f MB\n", p.name, threads, PER, RINGS, bytes / 1e6);
  const char *names[] = {"A owner broadcasts (gpuio's fill)", "B rounds: shfl(v[q], cell's lane)", "C cudaMemcpy D2H same bytes"};
  for (int pass = 0; pass < 2; pass++)
  for (int way = 0; way < 3; way++) {
    std::vector<float> ms;
    for (int rep = 0; rep < 4; rep++) {
      cudaMemset(tails, 0, RINGS * 16 * 8);
      cudaEventRecord(a);
      if (way == 0) send<0><<<grid, block>>>(hdev, tails, ring_words);
      else if (way == 1) send<1><<<grid, block>>>(hdev, tails, ring_words);
      else cudaMemcpy(host, dev, msgs * 80, cudaMemcpyDeviceToHost);
      cudaEventRecord(b); cudaEventSynchronize(b);
      cudaError_t e = cudaGetLastError();
      if (e) { printf("way %d: %s\n", way, cudaGetErrorString(e)); return 1; }
      float x; cudaEventElapsedTime(&x, a, b); if (rep) ms.push_back(x);
    }
    std::sort(ms.begin(), ms.end());
    // check: every cell of ring 0 up to its tail
    int bad = 0;
    if (way < 2) {
      u64 tail0 = 0; cudaMemcpy(&tail0, tails, 8, cudaMemcpyDeviceToHost);
      for (u64 c = 0; c < tail0 && bad < 3; c++) {
        const u64 *cell = host + c * W;
        const u64 t = cell[2] >> 24;
        if (cell[0] != c + 1 || cell[1] != (64ull | 32ull << 32) || (cell[2] & 0xffffff) >= PER || cell[9] != t * 0x0101010101010101ull) {
          if (!bad) printf("  bad cell %llu: %llx %llx %llx %llx\n", c, cell[0], cell[1], cell[2], cell[9]);
          bad++;
        }
      }
      memset(host, 0, bytes);
    }
    printf("%-40s %7.2f ms (%.2f..%.2f)  %7.1f M msg/s  %5.1f GB/s of cells %s\n", names[way], ms[1], ms[0], ms[2],
           msgs / ms[1] / 1e3, msgs * 80 / ms[1] / 1e6, bad ? "WRONG" : "");
  }
  return 0;
}
