// How fast can every thread of the device send 4 KiB messages into pinned, mapped host
// memory, by way of writing? Cells of 4112 B (16 B header + 4096 B), contiguous, one per
// thread, no host drain. Timed with events; 3 repeats each.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
typedef unsigned long long u64;
#define CELL 4112ull
#define MSG 4096ull
#define W (MSG / 8)
__device__ __forceinline__ void fill(char *m, u64 t) {
  *(u64 *)m = t << 24;
  for (u64 k = 8; k < MSG; k += 8) *(u64 *)(m + k) = t * 0x0101010101010101ull;
}
__device__ __forceinline__ u64 lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
// 0: gpuio's way today: the owner loads 8 words at a time from its local buffer, broadcasts
// them, every store instruction writes 32 consecutive words (runs of 256 B) across cells.
__global__ void w0(char *host) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x, r = lane(), warp0 = t - r;
  alignas(8) char m[MSG]; fill(m, t);
  u64 *base = (u64 *)(host + warp0 * CELL);
  const u64 cw = CELL / 8; // 514 words a cell
  for (u64 j = 0; j < 32; j++) {
    u64 *dst = base + j * cw;
    // header words
    if (r == 0) { dst[0] = warp0 + j + 1; dst[1] = MSG | 32ull << 32; }
    for (u64 k0 = 0; k0 < W; k0 += 32) {
      u64 mine = 0;
      for (u64 b = 0; b < 32; b += 8) {
        u64 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = r == j ? *(const u64 *)(m + (k0 + b + u) * 8) : 0;
#pragma unroll
        for (int u = 0; u < 8; u++) { u64 x = __shfl_sync(~0u, v[u], (int)j); if (b + u == r) mine = x; }
      }
      dst[2 + k0 + r] = mine;
    }
  }
}
// 1: each lane writes its own cell, 16 B stores, from its local buffer.
__global__ void w1(char *host) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  alignas(16) char m[MSG]; fill(m, t);
  ulonglong2 *dst = (ulonglong2 *)(host + t * CELL);
  dst[0] = make_ulonglong2(t + 1, MSG | 32ull << 32);
  const ulonglong2 *src = (const ulonglong2 *)m;
#pragma unroll 8
  for (u64 k = 0; k < MSG / 16; k++) dst[1 + k] = src[k];
}
// 2: each lane its own cell, 16 B stores of values made in registers (no local memory).
__global__ void w2(char *host) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  ulonglong2 *dst = (ulonglong2 *)(host + t * CELL);
  dst[0] = make_ulonglong2(t + 1, MSG | 32ull << 32);
  const u64 v = t * 0x0101010101010101ull;
#pragma unroll 8
  for (u64 k = 0; k < MSG / 16; k++) dst[1 + k] = make_ulonglong2(k ? v : t << 24, v);
}
// 3: each lane its own cell, 8 B stores from its local buffer.
__global__ void w3(char *host) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  alignas(16) char m[MSG]; fill(m, t);
  u64 *dst = (u64 *)(host + t * CELL);
  dst[0] = t + 1; dst[1] = MSG | 32ull << 32;
  const u64 *src = (const u64 *)m;
#pragma unroll 8
  for (u64 k = 0; k < W; k++) dst[2 + k] = src[k];
}
// 4: messages in device memory; the warp copies each lane's message with the whole warp,
// 16 B a lane (512 B a store).
__global__ void w4(char *host, const char *dev) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x, r = lane(), warp0 = t - r;
  for (u64 j = 0; j < 32; j++) {
    char *cell = host + (warp0 + j) * CELL;
    if (r == 0) ((ulonglong2 *)cell)[0] = make_ulonglong2(warp0 + j + 1, MSG | 32ull << 32);
    const ulonglong2 *src = (const ulonglong2 *)(dev + (warp0 + j) * MSG);
    ulonglong2 *dst = (ulonglong2 *)(cell + 16);
#pragma unroll
    for (u64 k = r; k < MSG / 16; k += 32) dst[k] = src[k];
  }
}
// 5: as 1, but the local buffer filled and then 4 lines at a time prefetched... no: as 1 with
// 8 B loads into 16 B stores, 32 words in flight.
__global__ void w5(char *host) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  alignas(16) char m[MSG]; fill(m, t);
  ulonglong2 *dst = (ulonglong2 *)(host + t * CELL);
  dst[0] = make_ulonglong2(t + 1, MSG | 32ull << 32);
  const ulonglong2 *src = (const ulonglong2 *)m;
  for (u64 k = 0; k < MSG / 16; k += 16) {
    ulonglong2 v[16];
#pragma unroll
    for (int u = 0; u < 16; u++) v[u] = src[k + u];
#pragma unroll
    for (int u = 0; u < 16; u++) dst[1 + k + u] = v[u];
  }
}
__global__ void fillg(char *dev) {
  const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  fill(dev + t * MSG, t);
}
int main() {
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  const int grid = p.multiProcessorCount, block = 1024;
  const u64 threads = (u64)grid * block;
  char *host, *hdev, *dev;
  cudaHostAlloc(&host, threads * CELL, cudaHostAllocMapped);
  cudaHostGetDevicePointer((void **)&hdev, host, 0);
  cudaMalloc(&dev, threads * CELL);
  printf("%s, %d SMs, %llu threads, %.0f MB of cells\n", p.name, grid, threads, threads * CELL / 1e6);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const char *names[] = {"0 gpuio today: owner broadcasts 8 words at a time, runs of 256 B",
                         "1 a lane its own cell, 16 B stores from its local buffer",
                         "2 a lane its own cell, 16 B stores from registers",
                         "3 a lane its own cell, 8 B stores from its local buffer",
                         "4 the warp copies each message from device memory, 512 B a store",
                         "5 a lane its own cell, 16 loads of 16 B in flight then 16 stores",
                         "6 fill device memory (the copy-back kernel)",
                         "7 cudaMemcpy D2H of the same bytes"};
  for (int way = 0; way < 8; way++) {
    std::vector<float> ms;
    for (int rep = 0; rep < 4; rep++) {
      cudaEventRecord(a);
      switch (way) {
        case 0: w0<<<grid, block>>>(hdev); break;
        case 1: w1<<<grid, block>>>(hdev); break;
        case 2: w2<<<grid, block>>>(hdev); break;
        case 3: w3<<<grid, block>>>(hdev); break;
        case 4: fillg<<<grid, block>>>(dev); cudaEventRecord(a); w4<<<grid, block>>>(hdev, dev); break;
        case 5: w5<<<grid, block>>>(hdev); break;
        case 6: fillg<<<grid, block>>>(dev); break;
        case 7: cudaMemcpy(host, dev, threads * CELL, cudaMemcpyDeviceToHost); break;
      }
      cudaEventRecord(b); cudaEventSynchronize(b);
      cudaError_t e = cudaGetLastError();
      if (e) { printf("way %d: %s\n", way, cudaGetErrorString(e)); return 1; }
      float t; cudaEventElapsedTime(&t, a, b); if (rep) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    // check a few cells for ways that write the host
    bool ok = true;
    if (way < 6) for (u64 t = 0; t < threads; t += 997) {
      const u64 *c = (const u64 *)(host + t * CELL);
      if (c[0] != t + 1 || c[2] != t << 24 || c[3] != t * 0x0101010101010101ull || c[513] != t * 0x0101010101010101ull) { ok = false; printf("  bad cell %llu: %llx %llx %llx\n", t, c[0], c[2], c[3]); break; }
    }
    printf("%-70s %7.2f ms (%.2f..%.2f)  %6.2f GB/s of cells  %6.2f M msg/s %s\n", names[way], ms[1], ms[0], ms[2],
           threads * CELL / ms[1] / 1e6, threads / ms[1] / 1e3, ok ? "" : "WRONG");
    if (way < 6) memset(host, 0, threads * CELL);
  }
  return 0;
}
