// Probe: how fast can SMs write mapped pinned host memory, by store shape.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <sys/mman.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ __forceinline__ void st_release_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

// Each warp writes chunks of `chunk` bytes at `skew + c * chunk`.
// mode 0: 8 B a lane, 256 B a store.  1: 16 B a lane, 512 B a store.
// 3: as 0, first word of each chunk left out and then released by lane 0 (a group's publish).
// 4: as 3 with a __threadfence_system() before the release.
// 6: each lane writes its own chunk/32 bytes in 16 B stores (uncoalesced).
__global__ void wr(char *dst, uint64_t total, uint32_t chunk, uint32_t skew, int mode) {
  const uint32_t lane = threadIdx.x & 31;
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
  const uint64_t warps = (gridDim.x * (uint64_t)blockDim.x) >> 5;
  const uint64_t chunks = total / chunk;
  for (uint64_t c = warp; c < chunks; c += warps) {
    char *base = dst + skew + c * chunk;
    if (mode == 1) {
      uint4 *p = (uint4 *)base;
      for (uint32_t i = lane; i < chunk / 16; i += 32) p[i] = make_uint4(c, i, 1, 2);
    } else if (mode == 6) {
      uint4 *p = (uint4 *)(base + lane * (chunk / 32));
      for (uint32_t i = 0; i < chunk / 32 / 16; ++i) p[i] = make_uint4(c, i, 1, 2);
    } else {
      uint64_t *p = (uint64_t *)base;
      for (uint32_t i = lane; i < chunk / 8; i += 32)
        if (!(mode >= 3 && i == 0)) p[i] = c + i;
      if (mode >= 3) {
        __syncwarp();
        if (lane == 0) {
          if (mode == 4) __threadfence_system();
          st_release_sys(p, c + 1);
        }
      }
    }
  }
}

static float run(char *d, uint64_t total, uint32_t chunk, uint32_t skew, int mode, int grid, int block) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(a));
    wr<<<grid, block>>>(d, total, chunk, skew, mode);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return total / (t[2] * 1e-3) / 1e9; // median GB/s
}

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const uint64_t N = 1ull << 30;
  char *h; CK(cudaHostAlloc(&h, N + 4096, cudaHostAllocMapped));
  char *d; CK(cudaHostGetDevicePointer(&d, h, 0));
  // mmap + register, as gpuio's shared memory
  char *m = (char *)mmap(nullptr, N + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CK(cudaHostRegister(m, N + 4096, cudaHostRegisterMapped));
  char *dm; CK(cudaHostGetDevicePointer(&dm, m, 0));
  // copy ceiling
  char *dev; CK(cudaMalloc(&dev, 256 << 20));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  float best = 1e9;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(a)); CK(cudaMemcpy(h, dev, 256 << 20, cudaMemcpyDeviceToHost)); CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); best = std::min(best, ms);
  }
  printf("memcpy D2H pinned 256 MiB: %.1f GB/s (best of 5)\n", (256 << 20) / (best * 1e-3) / 1e9);
  printf("SMs %d; GB/s median of 5, 1 GiB written each\n", sms);
  struct C { const char *what; int mode; uint32_t chunk, skew; int gmul, block; bool mm; };
  C cs[] = {
    {"8 B/lane, 2560 B chunks, aligned, hostalloc", 0, 2560, 0, 8, 256, false},
    {"8 B/lane, 2560 B chunks, aligned, mmap+register", 0, 2560, 0, 8, 256, true},
    {"16 B/lane, 2560 B chunks", 1, 2560, 0, 8, 256, true},
    {"8 B/lane, 2560 B, skew 16 B", 0, 2560, 16, 8, 256, true},
    {"8 B/lane, 2560 B, skew 64 B", 0, 2560, 64, 8, 256, true},
    {"8 B/lane, 2304 B chunks (72 B cells)", 0, 2304, 0, 8, 256, true},
    {"8 B/lane, 2560 B, first word released after", 3, 2560, 0, 8, 256, true},
    {"8 B/lane, 2560 B, fence.sys + release", 4, 2560, 0, 8, 256, true},
    {"8 B/lane, 2304 B, first word released after", 3, 2304, 0, 8, 256, true},
    {"8 B/lane, 131584 B chunks (4112 B cells x32)", 0, 131584, 0, 8, 256, true},
    {"8 B/lane, 65536 B chunks", 0, 65536, 0, 8, 256, true},
    {"16 B/lane, 65536 B chunks", 1, 65536, 0, 8, 256, true},
    {"uncoalesced 80 B a lane (2560 B chunks)", 6, 2560, 0, 8, 256, true},
    {"8 B/lane, 2560 B, grid 1x SMs", 0, 2560, 0, 1, 256, true},
    {"8 B/lane, 2560 B, grid 2x SMs", 0, 2560, 0, 2, 256, true},
    {"8 B/lane, 2560 B, grid 4x SMs", 0, 2560, 0, 4, 256, true},
    {"8 B/lane, 2560 B, grid 32x SMs x1024", 0, 2560, 0, 32, 1024, true},
  };
  for (auto &c : cs) {
    float g = run(c.mm ? dm : d, N - 65536 * 4, c.chunk, c.skew, c.mode, sms * c.gmul, c.block);
    printf("%-50s %6.1f GB/s\n", c.what, g);
  }
  return 0;
}
