// Ping-pong polling techniques and micro-costs, one thread, H100.
#include <cstdio>
#include <cstdint>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
typedef unsigned long long u64;
__device__ __forceinline__ u64 now() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ u64 ldacq(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ldrlx(const u64 *p) { u64 v; asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ldvol(const u64 *p) { u64 v; asm volatile("ld.volatile.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void strel(u64 *p, u64 v) { asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void strlx(u64 *p, u64 v) { asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

#define ROUNDS 4000
// out[v*ROUNDS + r] = ns of round r of variant v
__global__ void pp(u64 *ping, u64 *pong, unsigned *out, u64 *dev, int *fail) {
  u64 i = 0;
  for (int v = 0; v < 9; v++) {
    for (int r = 0; r < ROUNDS; r++) {
      ++i;
      u64 t0 = now();
      if (v == 8) strlx(ping, i); else strel(ping, i);
      u64 dl = t0 + 100000000ull;
      bool bad = false;
      if (v == 0) { // floor: serial acquire + nanosleep 64
        while (ldacq(pong) != i) { if (now() > dl) { bad = true; break; } __nanosleep(64); }
      } else if (v == 1) { // serial relaxed, no sleep
        while (ldrlx(pong) != i) { if (now() > dl) { bad = true; break; } }
      } else if (v == 2) { // pipelined 2
        u64 a = ldrlx(pong), b = ldrlx(pong);
        for (;;) { if (a == i) break; a = ldrlx(pong); if (b == i) break; b = ldrlx(pong); if (now() > dl) { bad = true; break; } }
      } else if (v >= 3 && v <= 5 || v == 8) { // pipelined 4 (+fence / +acquire reread)
        u64 a = ldrlx(pong); __nanosleep(32); u64 b = ldrlx(pong); __nanosleep(32); u64 c = ldrlx(pong); __nanosleep(32); u64 d = ldrlx(pong);
        for (;;) {
          if (a == i) break; a = ldrlx(pong);
          if (b == i) break; b = ldrlx(pong);
          if (c == i) break; c = ldrlx(pong);
          if (d == i) break; d = ldrlx(pong);
          if (now() > dl) { bad = true; break; }
        }
        if (v == 4) asm volatile("fence.acq_rel.sys;" ::: "memory");
        if (v == 5) { if (ldacq(pong) != i) bad = true; }
      } else if (v == 6) { // pipelined 8
        u64 a[8];
#pragma unroll
        for (int k = 0; k < 8; k++) { a[k] = ldrlx(pong); __nanosleep(16); }
        for (bool done = false; !done;) {
#pragma unroll
          for (int k = 0; k < 8; k++) { if (a[k] == i) { done = true; break; } a[k] = ldrlx(pong); }
          if (!done && now() > dl) { bad = true; break; }
        }
      } else if (v == 7) { // serial volatile no sleep
        while (ldvol(pong) != i) { if (now() > dl) { bad = true; break; } }
      }
      out[v * ROUNDS + r] = (unsigned)(now() - t0);
      if (bad) { *fail = v + 1; strel(ping, ~0ull); return; }
    }
  }
  strel(ping, ~0ull);
}

#define MN 2000
__global__ void micro(u64 *host, u64 *dev, double *res) {
  // 0 fetch_add dev, 1 ld.relaxed.gpu dev (dependent chain), 2 cas acquire.gpu dev, 3 st.release.gpu dev,
  // 4 st.release.gpu after relaxed sys host load, 5 fence.acq_rel.sys alone, 6 red.release.gpu.add,
  // 7 ld.relaxed.sys host (serial), 8 atom.acquire.gpu.cas 64-bit dev
  u64 t0, acc = 0;
  u64 *d = dev;
  t0 = now(); for (int k = 0; k < MN; k++) acc += atomicAdd(d, 1ull) & 1; res[0] = (now() - t0) / (double)MN;
  t0 = now(); { u64 x = 0; for (int k = 0; k < MN; k++) { asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(x) : "l"(d + 8 + (x & 1)) : "memory"); acc += x; } } res[1] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) { unsigned o; asm volatile("atom.acquire.gpu.cas.b32 %0, [%1], %2, %3;" : "=r"(o) : "l"(d + 16), "r"(0u), "r"(0u) : "memory"); acc += o; } res[2] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(d + 24), "r"(k) : "memory"); res[3] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) { u64 x = ldrlx(host); asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(d + 24 + (x & 1)), "r"(k) : "memory"); } res[4] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) asm volatile("fence.acq_rel.sys;" ::: "memory"); res[5] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(d + 32), "l"(1ull) : "memory"); res[6] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) acc += ldrlx(host + 8 + (acc & 1)); res[7] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) { u64 o; asm volatile("atom.acquire.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(o) : "l"(d + 40), "l"(0ull), "l"(0ull) : "memory"); acc += o; } res[8] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) { unsigned o; asm volatile("atom.relaxed.gpu.cas.b32 %0, [%1], %2, %3;" : "=r"(o) : "l"(d + 16), "r"(0u), "r"(0u) : "memory"); acc += o; } res[9] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) { asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(host + 16), "l"((u64)k) : "memory"); asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(d + 24), "r"(k) : "memory"); } res[10] = (now() - t0) / (double)MN;
  t0 = now(); for (int k = 0; k < MN; k++) asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(host + 16), "l"((u64)k) : "memory"); res[11] = (now() - t0) / (double)MN;
  res[12] = (double)acc;
}

int main() {
  u64 *h; cudaHostAlloc(&h, 4096, cudaHostAllocMapped); memset(h, 0, 4096);
  u64 *hd; cudaHostGetDevicePointer(&hd, h, 0);
  u64 *dev; cudaMalloc(&dev, 4096); cudaMemset(dev, 0, 4096);
  unsigned *out; cudaMallocManaged(&out, 9 * ROUNDS * 4);
  int *fail; cudaMallocManaged(&fail, 4); *fail = 0;
  volatile u64 *ping = h, *pong = h + 8;
  std::thread srv([&] {
    u64 seen = 0;
    for (;;) {
      u64 p = __atomic_load_n((u64 *)ping, __ATOMIC_ACQUIRE);
      if (p == ~0ull) break;
      if (p != seen) { seen = p; __atomic_store_n((u64 *)pong, p, __ATOMIC_RELEASE); }
    }
  });
  pp<<<1, 1>>>(hd, hd + 8, out, dev, fail);
  cudaError_t e = cudaDeviceSynchronize();
  srv.join();
  printf("pp: %s fail=%d\n", cudaGetErrorString(e), *fail);
  const char *names[9] = {"serial acquire+sleep64 (floor)", "serial relaxed", "pipelined 2", "pipelined 4",
                          "pipelined 4 + fence.acq_rel.sys", "pipelined 4 + acquire reread", "pipelined 8",
                          "serial volatile", "pipelined 4, relaxed ping store"};
  for (int v = 0; v < 9; v++) {
    std::vector<unsigned> x(out + v * ROUNDS + 100, out + (v + 1) * ROUNDS);
    std::sort(x.begin(), x.end());
    double s = 0; for (auto y : x) s += y;
    printf("%-36s p10 %.2f p50 %.2f p90 %.2f mean %.2f us\n", names[v], x[x.size() / 10] / 1e3, x[x.size() / 2] / 1e3,
           x[x.size() * 9 / 10] / 1e3, s / x.size() / 1e3);
  }
  double *res; cudaMallocManaged(&res, 16 * 8);
  micro<<<1, 1>>>(hd + 32, dev, res);
  e = cudaDeviceSynchronize();
  const char *mn[12] = {"atomicAdd dev (ret)", "ld.relaxed.gpu dev chain", "cas.acquire.gpu b32", "st.release.gpu alone",
                        "relaxed sys host ld + st.release.gpu", "fence.acq_rel.sys alone", "red.release.gpu.add",
                        "ld.relaxed.sys host serial", "cas.acquire.gpu b64", "cas.relaxed.gpu b32",
                        "st.relaxed.sys host + st.release.gpu", "st.release.sys host"};
  printf("micro: %s\n", cudaGetErrorString(e));
  for (int k = 0; k < 12; k++) printf("%-40s %.1f ns\n", mn[k], res[k]);
  return 0;
}
