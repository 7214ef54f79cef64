// Round trips GPU<->CPU through mapped pinned memory, one GPU thread, with
// different ways of polling for the answer. Measurement only.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <chrono>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
typedef unsigned long long u64;
__device__ __forceinline__ u64 ld_acq(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ld_rlx(const u64 *p) { u64 v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ld_vol(const u64 *p) { u64 v; asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_rel(u64 *p, u64 v) { asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void fence_acq() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
__device__ __forceinline__ long long clk() { long long c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); return c; }
__device__ __forceinline__ u64 gtime() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

// mode 0: acquire loop (the floor); 1: relaxed loop + fence; 2: volatile loop + fence;
// 10+K: rolling K relaxed loads, same address, spacing D cycles; 20+K: rolling K, K distinct lines.
template <int K, bool DISTINCT>
__device__ __forceinline__ void rolling(const u64 *pong, u64 i, long long D) {
  u64 v[K];
  long long t = clk();
#pragma unroll
  for (int k = 0; k < K; k++) { v[k] = ld_rlx(pong + (DISTINCT ? k * 16 : 0)); t += D; while (clk() < t) {} }
  for (;;) {
#pragma unroll
    for (int k = 0; k < K; k++) {
      if (v[k] == i) { fence_acq(); return; }
      v[k] = ld_rlx(pong + (DISTINCT ? k * 16 : 0));
      t += D; while (clk() < t) {}
    }
  }
}
__global__ void k(u64 *ping, u64 *pong, int iters, int mode, long long D, long long *cyc, u64 *gt) {
  u64 g0 = gtime(); long long c0 = clk();
  for (int i = 1; i <= iters; i++) {
    long long a = clk();
    st_rel(ping, (u64)i);
    switch (mode) {
      case 0: while (ld_acq(pong) != (u64)i) {} break;
      case 1: while (ld_rlx(pong) != (u64)i) {} fence_acq(); break;
      case 2: while (ld_vol(pong) != (u64)i) {} fence_acq(); break;
      case 12: rolling<2, false>(pong, i, D); break;
      case 13: rolling<3, false>(pong, i, D); break;
      case 14: rolling<4, false>(pong, i, D); break;
      case 22: rolling<2, true>(pong, i, D); break;
      case 23: rolling<3, true>(pong, i, D); break;
      case 24: rolling<4, true>(pong, i, D); break;
    }
    cyc[i - 1] = clk() - a;
  }
  gt[0] = gtime() - g0; gt[1] = (u64)(clk() - c0);
}
int main(int argc, char **argv) {
  int iters = 20000;
  u64 *h; CK(cudaHostAlloc(&h, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(h, 0, 4096);
  u64 *d; CK(cudaHostGetDevicePointer((void **)&d, h, 0));
  long long *cyc; u64 *gt; CK(cudaMalloc(&cyc, iters * 8)); CK(cudaMallocManaged(&gt, 16));
  struct V { int mode; long long dns; };
  std::vector<V> vs = {{0,0},{1,0},{2,0},{12,550},{13,380},{14,290},{14,150},{22,550},{23,380},{24,290},{24,150},{0,0},{24,290},{14,290}};
  std::vector<long long> hc(iters);
  for (int rep = 0; rep < 2; rep++)
  for (auto v : vs) {
    memset(h, 0, 4096);
    std::atomic<bool> stop{false};
    volatile u64 *ping = h, *pong = h + 8;
    std::thread echo([&] {
      u64 last = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        u64 x = __atomic_load_n((u64 *)ping, __ATOMIC_ACQUIRE);
        if (x != last) {
          for (int k = 3; k >= 1; k--) __atomic_store_n((u64 *)(pong + k * 16), x, __ATOMIC_RELAXED);
          __atomic_store_n((u64 *)pong, x, __ATOMIC_RELEASE);
          last = x;
        }
      }
    });
    // cycles per ns: from the previous run's totals (first run: assume 1.98)
    static double cpn = 1.98;
    long long D = (long long)(v.dns * cpn);
    k<<<1, 1>>>(d, d + 8, iters, v.mode, D, cyc, gt);
    CK(cudaDeviceSynchronize());
    stop = true; echo.join();
    cpn = (double)gt[1] / (double)gt[0];
    CK(cudaMemcpy(hc.data(), cyc, iters * 8, cudaMemcpyDeviceToHost));
    std::sort(hc.begin(), hc.end());
    auto us = [&](long long c) { return c / cpn / 1000.0; };
    printf("mode %2d spacing %4lld ns: mean %.3f us  p10 %.3f p50 %.3f p90 %.3f p99 %.3f  (clock %.3f GHz)\n", v.mode, v.dns,
           gt[0] / 1000.0 / iters, us(hc[iters / 10]), us(hc[iters / 2]), us(hc[iters * 9 / 10]), us(hc[iters * 99 / 100]), cpn);
    fflush(stdout);
  }
  return 0;
}
