// What limits gpuio's queue to the host at 64 B beyond the stores: its reservation
// and tick bookkeeping on the ring's device-local line. Every mode writes the same
// cells (80 B, flat 8 B stores: 256 B per warp store) into pinned memory with no host
// drain (rings hold every message) and publishes with st.release.sys; they differ
// only in how a warp reserves its 32 cells and what it reads after.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
typedef unsigned long long u64; typedef unsigned u32;
#define R 16
struct __align__(64) Ring { u64 tail, cached_head; u32 polling, seen; u64 polled_at; u64 pad[4]; };
struct __align__(64) Line { u64 v; u64 pad[7]; };
__device__ __forceinline__ u64 ld_rlx(const u64 *p) { u64 v; asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u32 ld_rlx32(const u32 *p) { u32 v; asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ld_acq(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ld_acq_gpu(const u64 *p) { u64 v; asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u32 ld_acq32(const u32 *p) { u32 v; asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_rel(u64 *p, u64 v) { asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void st_rel32(u32 *p, u32 v) { asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_rlx(u64 *p, u64 v) { asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ u64 now() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// mode 0: probe's CAS (tail line, head elsewhere), no tick
// mode 1: gpuio: seen, tail, cached_head from the ring's line, CAS, ld.acquire.sys cached_head, tick
// mode 2: mode 1 without the tick
// mode 3: mode 1 with ld.acquire.gpu after the CAS
// mode 4: mode 1 with tail in a line of its own (cached_head, seen, polled_at in another)
// mode 5: mode 1 without the acquire after the CAS
// mode 6: mode 1, FAA instead of CAS (head checked before)
__global__ void __launch_bounds__(1024) send(char *buf, Ring *rs, Line *tails, const u64 *host_head, int mode, u64 per, u64 ring_cells) {
  const unsigned lane = threadIdx.x % 32;
  const u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) / 32;
  const unsigned r = warp % R;
  Ring *s = &rs[r];
  u64 *tailp = mode == 0 || mode == 4 ? &tails[r].v : &s->tail;
  for (u64 i = 0; i < per; i++) {
    u64 base = 0;
    if (lane == 0) {
      if (mode != 0 && (ld_rlx32(&s->seen) & 2u)) base = ~0ull;
      u64 t = ld_rlx(tailp);
      if (mode == 6) {
        (void)ld_rlx(&s->cached_head);
        base = atomicAdd(tailp, 32ull);
      } else for (;;) {
        const u64 h = ld_rlx(mode == 0 ? &tails[R + r].v : &s->cached_head);
        if (t + 32 <= h + ring_cells * 1000) {
          const u64 seen = atomicCAS(tailp, t, t + 32);
          if (seen == t) break;
          t = seen;
        }
      }
      if (mode != 6) base = t;
      if (mode == 1 || mode == 2 || mode == 4) (void)ld_acq(&s->cached_head);
      if (mode == 3) (void)ld_acq_gpu(&s->cached_head);
    }
    base = __shfl_sync(0xffffffffu, base, 0);
    u64 *cells = (u64 *)(buf + (r * ring_cells + base) * 80);
    const u64 msg0 = warp << 32 | i;
    for (u64 x = lane; x < 320; x += 32) {
      const u64 j = x / 10, w = x % 10;
      if (x == 0) continue;
      cells[x] = w == 0 ? base + j + 1 : w == 1 ? 64 : msg0 + j + w;
    }
    __syncwarp();
    if (lane == 0) {
      st_rel(cells, base + 1);
      if (mode != 0 && mode != 2) {
        const u64 n = now();
        if (n - ld_rlx(&s->polled_at) > 20000) {
          if (atomicCAS(&s->polling, 0u, 1u) == 0u) {
            (void)ld_acq32(&s->polling);
            const u64 fresh = ld_acq(host_head);
            if (fresh > ld_rlx(&s->cached_head)) st_rel(&s->cached_head, fresh);
            st_rlx(&s->polled_at, n);
            st_rel32(&s->polling, 0u);
          }
        }
      }
    }
  }
}
int main() {
  const int grid = 132, block = 1024;
  const u64 threads = (u64)grid * block, warps = threads / 32;
  const u64 per = (1ull << 23) / threads;
  const u64 ring_cells = (warps / R + 1) * per * 32 + 64;
  const u64 bytes = ring_cells * R * 80 + 4096;
  char *buf; u64 *hh;
  if (cudaHostAlloc(&buf, bytes, cudaHostAllocMapped) != cudaSuccess) { printf("alloc failed\n"); return 1; }
  cudaHostAlloc(&hh, 64, cudaHostAllocMapped); *hh = 1;
  char *dbuf; cudaHostGetDevicePointer(&dbuf, buf, 0);
  u64 *dhh; cudaHostGetDevicePointer(&dhh, hh, 0);
  Ring *rs; Line *tails; cudaMalloc(&rs, R * sizeof(Ring)); cudaMalloc(&tails, 2 * R * sizeof(Line));
  const char *names[] = {"probe CAS, tail line alone, no tick", "gpuio: ring line, CAS, acquire.sys, tick",
                         "gpuio without the tick", "gpuio, acquire.gpu after the CAS",
                         "gpuio, tail in a line of its own", "gpuio without the acquire", "gpuio, FAA"};
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int rep = 0; rep < 3; rep++)
    for (int mode = 0; mode < 7; mode++) {
      cudaMemset(rs, 0, R * sizeof(Ring)); cudaMemset(tails, 0, 2 * R * sizeof(Line));
      cudaEventRecord(a);
      send<<<grid, block>>>(dbuf, rs, tails, dhh, mode, per, ring_cells);
      cudaEventRecord(b);
      cudaError_t e = cudaEventSynchronize(b);
      float ms = 0; cudaEventElapsedTime(&ms, a, b);
      const double msgs = (double)threads * per;
      printf("mode %d %-44s %7.2f ms %7.1f M msg/s %s\n", mode, names[mode], ms, msgs / ms / 1e3, e ? cudaGetErrorString(e) : "");
    }
  return 0;
}
