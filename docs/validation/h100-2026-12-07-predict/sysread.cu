// How fast can SMs (and the TMA unit) read mapped pinned host memory into device
// memory, next to the copy engine; idle host and with host threads copying memory
// (as pread's copies into staging do). gpuio issue 11, 1 MiB reads.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s -> %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static const size_t CHUNK = 1 << 20;

template <typename T, int B>
__global__ void __launch_bounds__(512) copy_warp(char *dst, const char *src, size_t chunks) {
  const unsigned lane = threadIdx.x & 31, warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned warps = (gridDim.x * blockDim.x) >> 5;
  for (size_t c = warp; c < chunks; c += warps) {
    const T *s = (const T *)(src + c * CHUNK);
    T *d = (T *)(dst + c * CHUNK);
    const size_t n = CHUNK / sizeof(T);
    for (size_t base = 0; base < n; base += 32 * B) {
      T v[B];
#pragma unroll
      for (int u = 0; u < B; ++u) v[u] = s[base + u * 32 + lane];
#pragma unroll
      for (int u = 0; u < B; ++u) d[base + u * 32 + lane] = v[u];
    }
  }
}

// One warp per block: lane 0 streams the chunk through STAGES shared buffers of
// PIECE bytes with cp.async.bulk (TMA), the warp stores each piece to device memory.
template <int STAGES, int PIECE>
__global__ void copy_tma(char *dst, const char *src, size_t chunks) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) unsigned long long bar[STAGES];
  const unsigned lane = threadIdx.x;
  if (lane == 0) {
    for (int i = 0; i < STAGES; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar[i])));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncwarp();
  unsigned phase[STAGES] = {};
  const size_t pieces_per = CHUNK / PIECE;
  for (size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const char *s = src + c * CHUNK;
    char *d = dst + c * CHUNK;
    auto issue = [&](size_t p) {
      const int st = p % STAGES;
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
      unsigned sm = (unsigned)__cvta_generic_to_shared(smem + st * PIECE);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(PIECE));
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(sm), "l"(s + p * PIECE), "r"(PIECE), "r"(b) : "memory");
    };
    if (lane == 0) for (size_t p = 0; p < STAGES && p < pieces_per; ++p) issue(p);
    for (size_t p = 0; p < pieces_per; ++p) {
      const int st = p % STAGES;
      unsigned b = (unsigned)__cvta_generic_to_shared(&bar[st]);
      unsigned done = 0;
      while (!done)
        asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2; selp.u32 %0,1,0,q; }"
                     : "=r"(done) : "r"(b), "r"(phase[st]));
      phase[st] ^= 1;
      const uint4 *sp = (const uint4 *)(smem + st * PIECE);
      uint4 *dp = (uint4 *)(d + p * PIECE);
      for (int i = lane; i < PIECE / 16; i += 32) dp[i] = sp[i];
      __syncwarp();
      if (lane == 0 && p + STAGES < pieces_per) issue(p + STAGES);
    }
  }
}

static std::atomic<bool> stop_hog{false};
static void hog(char *a, char *b, size_t n, std::atomic<size_t> *bytes) {
  while (!stop_hog.load()) { memcpy(b, a, n); bytes->fetch_add(n); }
}

int main(int argc, char **argv) {
  const bool tma = argc > 1 && !strcmp(argv[1], "tma"), sm = !tma;
  const size_t total = 1ull << 30, chunks = total / CHUNK;
  char *host, *dev;
  CK(cudaHostAlloc(&host, total, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(host, 1, total);
  char *hdev;
  CK(cudaHostGetDevicePointer((void **)&hdev, host, 0));
  CK(cudaMalloc(&dev, total));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto timed = [&](const char *name, auto launch) {
    float best = 1e9, all[5];
    for (int r = 0; r < 5; ++r) {
      CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); all[r] = ms; if (ms < best) best = ms;
    }
    std::sort(all, all + 5);
    printf("%-44s best %6.1f GB/s  median %6.1f GB/s\n", name, total / best / 1e6, total / all[2] / 1e6);
    fflush(stdout);
  };
  for (int hogs : {0, 4, 8}) {
    std::vector<std::thread> ts; std::vector<char *> bufs; std::atomic<size_t> hb{0};
    stop_hog = false;
    for (int i = 0; i < hogs; ++i) {
      char *a = (char *)malloc(64 << 20), *b = (char *)malloc(64 << 20);
      memset(a, 2, 64 << 20); memset(b, 3, 64 << 20);
      bufs.push_back(a); bufs.push_back(b);
      ts.emplace_back(hog, a, b, (size_t)64 << 20, &hb);
    }
    auto t0 = std::chrono::steady_clock::now();
    printf("--- host threads copying memory: %d\n", hogs);
    timed("cudaMemcpy H2D 1 GiB (copy engine)", [&] { CK(cudaMemcpyAsync(dev, host, total, cudaMemcpyHostToDevice)); });
    for (int wpb : {2, 8, 16}) {
      if (!sm) break;
      char name[128];
      int grid = 132, block = 32 * wpb;
      snprintf(name, sizeof name, "SM u64 x8 (gpuio today), %d warps", grid * wpb);
      timed(name, [&] { copy_warp<unsigned long long, 8><<<grid, block>>>(dev, hdev, chunks); });
      snprintf(name, sizeof name, "SM u64 x16, %d warps", grid * wpb);
      timed(name, [&] { copy_warp<unsigned long long, 16><<<grid, block>>>(dev, hdev, chunks); });
      snprintf(name, sizeof name, "SM uint4 x8, %d warps", grid * wpb);
      timed(name, [&] { copy_warp<uint4, 8><<<grid, block>>>(dev, hdev, chunks); });
      snprintf(name, sizeof name, "SM uint4 x16, %d warps", grid * wpb);
      timed(name, [&] { copy_warp<uint4, 16><<<grid, block>>>(dev, hdev, chunks); });
    }
    for (int bpsm : {1, 3}) {
      if (!tma) break;
      char name[128];
      const int smem = 4 * 16384;
      CK(cudaFuncSetAttribute(copy_tma<4, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      snprintf(name, sizeof name, "TMA 4 x 16 KiB, %d warps", 132 * bpsm);
      timed(name, [&] { copy_tma<4, 16384><<<132 * bpsm, 32, smem>>>(dev, hdev, chunks); });
      CK(cudaFuncSetAttribute(copy_tma<2, 32768>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
      snprintf(name, sizeof name, "TMA 2 x 32 KiB, %d warps", 132 * bpsm);
      timed(name, [&] { copy_tma<2, 32768><<<132 * bpsm, 32, 65536>>>(dev, hdev, chunks); });
    }
    stop_hog = true;
    for (auto &t : ts) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (hogs) printf("    (host threads copied %.1f GB/s meanwhile)\n", hb.load() / s / 1e9);
    for (auto *p : bufs) free(p);
  }
  return 0;
}
