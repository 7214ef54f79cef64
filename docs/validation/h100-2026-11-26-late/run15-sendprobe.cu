// What limits 64 B messages from every thread of the GPU into pinned host memory:
// the reservation (compare-and-swap loop vs fetch-add on a ring's tail in device
// memory) or the write pattern (a store instruction per 80 B cell, as gpuio's
// gpuio_impl_queue_fill_group does, vs whole 256/512 B runs of the group), or the
// cell size (16 B header vs 8 B). No host drain: each ring has room for every
// message, so only the device's side is timed.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
typedef unsigned long long u64;
#define R 16
__device__ __forceinline__ void st_release(u64 *p, u64 v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ u64 ld_relaxed(const u64 *p) {
  u64 v; asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
// mode: 0 CAS + cell per instruction (gpuio); 1 FAA + cell per instr; 2 FAA + flat 8 B;
// 3 FAA + flat 16 B; 4 FAA + cell per instr, 72 B cells; 5 no reservation + flat 8 B,
// no release; 6 CAS + flat 8 B; 7 CAS + cell per instr, no release (relaxed stamp)
__global__ void __launch_bounds__(1024) send(char *buf, u64 *tails, u64 *head, int mode, u64 per,
                                              u64 ring_cells) {
  const unsigned lane = threadIdx.x % 32;
  const u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) / 32;
  const unsigned r = warp % R;
  const u64 cw = mode == 4 ? 9 : 10;  // words per cell
  u64 seq = warp / R;                 // for mode 5
  for (u64 i = 0; i < per; i++) {
    u64 base = 0;
    if (lane == 0) {
      if (mode == 0 || mode == 6 || mode == 7) {
        u64 t = ld_relaxed(&tails[r * 16]);
        for (;;) {
          const u64 h = ld_relaxed(head);
          if (t + 32 <= h) {
            const u64 seen = atomicCAS(&tails[r * 16], t, t + 32);
            if (seen == t) break;
            t = seen;
          }
        }
        base = t;
      } else if (mode == 5) {
        base = (seq + i * (gridDim.x * (u64)blockDim.x / 32 / R)) * 32;
      } else {
        base = atomicAdd(&tails[r * 16], 32ull);
      }
    }
    base = __shfl_sync(0xffffffffu, base, 0);
    u64 *cells = (u64 *)(buf + (r * ring_cells + base) * cw * 8);
    const u64 msg0 = warp << 32 | i;
    if (mode == 2 || mode == 5 || mode == 6) {
      for (u64 x = lane; x < 32 * cw; x += 32) {
        const u64 j = x / cw, w = x % cw;
        if (x == 0) continue;
        cells[x] = w == 0 ? base + j + 1 : w == 1 ? 64 : msg0 + j + w;
      }
    } else if (mode == 3) {
      uint4 *c4 = (uint4 *)cells;
      for (u64 x = lane; x < 16 * cw; x += 32) {
        const u64 a = 2 * x, b = 2 * x + 1;
        const u64 va = (a % cw) == 0 ? base + a / cw + 1 : msg0 + a;
        const u64 vb = (b % cw) == 0 ? base + b / cw + 1 : msg0 + b;
        if (x == 0) { cells[1] = vb; continue; }
        c4[x] = make_uint4((unsigned)va, (unsigned)(va >> 32), (unsigned)vb, (unsigned)(vb >> 32));
      }
    } else {
      for (u64 j = 0; j < 32; j++) {
        if (lane < cw && !(j == 0 && lane == 0))
          cells[j * cw + lane] = lane == 0 ? base + j + 1 : lane == 1 ? 64 : msg0 + j + lane;
      }
    }
    __syncwarp();
    if (lane == 0) {
      if (mode == 5) cells[0] = base + 1;
      else if (mode == 7) asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(cells), "l"(base + 1) : "memory");
      else st_release(cells, base + 1);
    }
  }
}
int main() {
  const int grid = 132, block = 1024;
  const u64 threads = (u64)grid * block, warps = threads / 32;
  const u64 per = (1ull << 23) / threads;  // messages per thread (the bench's 8 M)
  const u64 ring_cells = (warps / R + 1) * per * 32 + 64;
  const u64 bytes = ring_cells * R * 80 + 4096;
  char *buf; u64 *tails, *head;
  if (cudaHostAlloc(&buf, bytes, cudaHostAllocMapped) != cudaSuccess) { printf("alloc failed\n"); return 1; }
  char *dbuf; cudaHostGetDevicePointer(&dbuf, buf, 0);
  cudaMalloc(&tails, R * 16 * 8); cudaMalloc(&head, 8);
  const u64 big = ~0ull >> 2; cudaMemcpy(head, &big, 8, cudaMemcpyHostToDevice);
  const char *names[] = {"CAS + a store per 80 B cell (gpuio today)", "FAA + a store per 80 B cell",
                         "FAA + flat 8 B stores (256 B a store)", "FAA + flat 16 B stores (512 B a store)",
                         "FAA + a store per 72 B cell (8 B header)", "no reservation + flat 8 B stores, no release",
                         "CAS + flat 8 B stores", "CAS + a store per 80 B cell, relaxed publish"};
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int rep = 0; rep < 3; rep++)
    for (int mode = 0; mode < 8; mode++) {
      cudaMemset(tails, 0, R * 16 * 8);
      cudaEventRecord(a);
      send<<<grid, block>>>(dbuf, tails, head, mode, per, ring_cells);
      cudaEventRecord(b);
      cudaError_t e = cudaEventSynchronize(b);
      float ms = 0; cudaEventElapsedTime(&ms, a, b);
      const double msgs = (double)threads * per;
      printf("mode %d %-48s %8.2f ms %7.1f M msg/s %6.1f GB/s of cells %s\n", mode, names[mode], ms,
             msgs / ms / 1e3, msgs * (mode == 4 ? 72 : 80) / ms / 1e6, e ? cudaGetErrorString(e) : "");
    }
  // A reference: the same bytes by cudaMemcpy device -> pinned host.
  char *dsrc; cudaMalloc(&dsrc, (u64)threads * per * 80);
  for (int rep = 0; rep < 3; rep++) {
    cudaEventRecord(a);
    cudaMemcpy(buf, dsrc, (u64)threads * per * 80, cudaMemcpyDeviceToHost);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms = 0; cudaEventElapsedTime(&ms, a, b);
    printf("cudaMemcpy D2H pinned, same bytes: %8.2f ms %6.1f GB/s\n", ms, (double)threads * per * 80 / ms / 1e6);
  }
  return 0;
}
