// Host memory bandwidth on the GPU machine: N host threads memcpy-ing their own
// buffers (each byte read once and written once), alone and while the GPU's SMs copy
// pinned host memory into device memory (as a bulk read's copy out of staging
// does). Prints GB/s copied by the host and by the GPU.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
static const size_t MB = 1 << 20;

__global__ void gpu_copy(const unsigned long long *src, unsigned long long *dst, size_t words, int rounds) {
  const size_t lanes = (size_t)gridDim.x * blockDim.x;
  const size_t me = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < rounds; ++r)
    for (size_t base = 0; base < words; base += lanes * 8) {
      unsigned long long v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) { size_t i = base + u * lanes + me; v[u] = i < words ? src[i] : 0; }
#pragma unroll
      for (int u = 0; u < 8; ++u) { size_t i = base + u * lanes + me; if (i < words) dst[i] = v[u]; }
    }
}

static double host_copy(int threads, size_t per, int rounds, std::vector<char *> &src, std::vector<char *> &dst) {
  std::vector<std::thread> ts;
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] { for (int r = 0; r < rounds; ++r) memcpy(dst[t], src[t], per); });
  for (auto &t : ts) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return (double)threads * per * rounds / s / 1e9;
}

int main() {
  const size_t per = 256 * MB;
  std::vector<char *> src(16), dst(16);
  for (int t = 0; t < 16; ++t) {
    src[t] = (char *)malloc(per); dst[t] = (char *)malloc(per);
    memset(src[t], t, per); memset(dst[t], 0, per);
  }
  for (int n : {1, 2, 4, 8, 16}) printf("host memcpy, %2d threads: %6.2f GB/s copied\n", n, host_copy(n, per, 4, src, dst));
  // The GPU reads 1 GiB of pinned memory over and over while the host copies.
  char *pinned = nullptr, *dpin = nullptr, *dev = nullptr;
  const size_t len = 1024 * MB;
  CHECK(cudaHostAlloc(&pinned, len, cudaHostAllocMapped));
  memset(pinned, 1, len);
  CHECK(cudaHostGetDevicePointer((void **)&dpin, pinned, 0));
  CHECK(cudaMalloc(&dev, len));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
  for (int n : {0, 4, 8, 16}) {
    const int rounds = 40;
    CHECK(cudaEventRecord(a));
    gpu_copy<<<132 * 2, 1024>>>((const unsigned long long *)dpin, (unsigned long long *)dev, len / 8, rounds);
    CHECK(cudaEventRecord(b));
    double h = n ? host_copy(n, per, 8, src, dst) : 0.0;
    CHECK(cudaEventSynchronize(b));
    float ms = 0; CHECK(cudaEventElapsedTime(&ms, a, b));
    printf("GPU copying pinned->device %6.2f GB/s while %2d host threads memcpy %6.2f GB/s\n", (double)len * rounds / ms / 1e6, n, h);
  }
  return 0;
}
