// What bounds whole-device round trips through mapped host memory (issue 11, >= 10 M small ops)?
// R: the device's read rate of host memory, lanes each on their own 64 B line vs on consecutive 8 B.
// T: S slots each owned by one lane, host threads answering every READY; answers in the
//    request's own 64 B entry (A, gpuio's forward layout) vs in a contiguous array (B).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
typedef unsigned long long u64;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
__device__ __forceinline__ u64 ldacq(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ u64 ldrlx(const u64 *p) { u64 v; asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void strel(u64 *p, u64 v) { asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

// R: every lane makes K dependent loads; stride in words between lanes (8: own 64 B line, 1: consecutive).
__global__ void reads(const u64 *h, u64 nwords, int stride, int K, u64 *sink) {
  u64 gid = blockIdx.x * (u64)blockDim.x + threadIdx.x, acc = 0;
  for (int k = 0; k < K; k++) {
    u64 w = (gid / 32) * 32 * 8 + (k * 4096ull) * 8;  // each warp its own lines, moving on each k
    u64 idx = (w + (gid % 32) * stride + acc) % nwords;
    acc += ldrlx(h + idx);  // h is all zeros: acc stays 0, the chain stays dependent
  }
  if (acc) sink[0] = acc;
}

// T: lane g < S owns slot g; N round trips each. layout 0: answer in entry stamp; 1: ans[g].
__global__ void trips(u64 *entries, u64 *ans, int layout, int N, unsigned sleep_ns, u64 *polls) {
  u64 g = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  u64 *e = entries + g * 8;
  u64 *a = layout ? ans + g : e;
  u64 np = 0;
  for (int n = 1; n <= N; n++) {
    e[1] = n; e[2] = g;  // the request's body
    strel(e, ((u64)n << 2) | 1u);
    const u64 want = ((u64)n << 2) | 2u;
    bool done = false;
    for (int p = 0;; p++) {
      if (!done) { done = ldacq(a) == want; np++; }
      if (__all_sync(0xffffffffu, done)) break;
      if (p >= 2 && sleep_ns) __nanosleep(sleep_ns);
    }
  }
  atomicAdd(polls, np);
}

int main() {
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  printf("%s, %d SMs\n", prop.name, sms);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  u64 *sink; CK(cudaMalloc(&sink, 64));
  // ---- R
  const u64 nwords = (64ull << 20) / 8;
  u64 *h; CK(cudaHostAlloc(&h, nwords * 8, cudaHostAllocMapped)); memset(h, 0, nwords * 8);
  u64 *hd; CK(cudaHostGetDevicePointer(&hd, h, 0));
  for (int stride : {8, 1}) {
    for (int warps : {8, 32, 128, 512, 4 * sms * 32}) {
      const int K = 200;
      float best = 1e9;
      for (int rep = 0; rep < 3; rep++) {
        CK(cudaEventRecord(e0));
        reads<<<warps, 32>>>(hd, nwords, stride, K, sink);
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); best = std::min(best, ms);
      }
      double loads = (double)warps * 32 * K;
      printf("R stride %d words, %5d warps: %8.1f M lane-loads/s  %7.1f M warp-loads/s  (%.2f us a warp-load)\n", stride,
             warps, loads / best / 1e3, loads / 32 / best / 1e3, best * 1e3 / K);
    }
  }
  // ---- T
  const int maxS = 4096;
  u64 *ent, *ans; CK(cudaHostAlloc(&ent, maxS * 64, cudaHostAllocMapped)); CK(cudaHostAlloc(&ans, maxS * 8, cudaHostAllocMapped));
  u64 *entd, *ansd; CK(cudaHostGetDevicePointer(&entd, ent, 0)); CK(cudaHostGetDevicePointer(&ansd, ans, 0));
  u64 *polls; CK(cudaMalloc(&polls, 8));
  for (int threads : {4, 8}) for (unsigned sl : {0u, 256u}) for (int S : {256, 1024, 4096}) for (int layout : {0, 1}) {
    for (int rep = 0; rep < 2; rep++) {
      memset(ent, 0, maxS * 64); memset(ans, 0, maxS * 8);
      CK(cudaMemset(polls, 0, 8));
      std::atomic<bool> stop{false};
      std::atomic<u64> answered{0};
      std::vector<std::thread> hs;
      for (int t = 0; t < threads; t++) hs.emplace_back([&, t] {
        const int lo = S * t / threads, hi = S * (t + 1) / threads;
        std::vector<u64> last(hi - lo, 0);
        u64 n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          for (int i = lo; i < hi; i++) {
            u64 v = __atomic_load_n(&ent[i * 8], __ATOMIC_ACQUIRE);
            if ((v & 3u) == 1u && v != last[i - lo]) {
              last[i - lo] = v;
              u64 *dst = layout ? &ans[i] : &ent[i * 8];
              __atomic_store_n(dst, (v & ~3ull) | 2u, __ATOMIC_RELEASE);
              n++;
            }
          }
        }
        answered += n;
      });
      const int N = (int)(1048576 / S);
      CK(cudaEventRecord(e0));
      trips<<<S / 32, 32>>>(entd, ansd, layout, N, sl, polls);
      CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
      stop = true; for (auto &x : hs) x.join();
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      u64 np; CK(cudaMemcpy(&np, polls, 8, cudaMemcpyDeviceToHost));
      double rt = (double)S * N;
      printf("T %d host threads, sleep %3u, S %4d, answers %s: %7.2f M trips/s  %5.1f us a trip  %5.2f polls a trip  (%llu answered)\n",
             threads, sl, S, layout ? "contiguous" : "in entry  ", rt / ms / 1e3, ms * 1e3 / N, np / rt,
             (unsigned long long)answered.load());
    }
  }
  return 0;
}
