// How fast SM loads copy pinned (mapped) host memory into device memory, by warps
// in flight, words each lane loads before storing, and load width. Reference:
// cudaMemcpy HtoD of the same bytes. One CUDA program, nvcc -O3 -arch=sm_90.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

static const size_t CHUNK = 1 << 20;
static const size_t CHUNKS = 1024; // 1 GiB of host memory

// Each warp copies `per` chunks of 1 MiB (chunk (warp * per + i) % CHUNKS), like
// gpuio_impl_copy_warp: each lane loads B words of type T before it stores any.
template <typename T, int B>
__global__ void copy_k(const char *src, char *dst, int warps, int per) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= warps) return;
  const size_t words = CHUNK / sizeof(T);
  for (int c = 0; c < per; ++c) {
    const size_t chunk = ((size_t)warp * per + c) % CHUNKS;
    const T *s = (const T *)(src + chunk * CHUNK);
    T *d = (T *)(dst + chunk * CHUNK);
    for (size_t base = 0; base < words; base += 32 * B) {
      T v[B];
#pragma unroll
      for (int u = 0; u < B; ++u) v[u] = s[base + u * 32 + lane];
#pragma unroll
      for (int u = 0; u < B; ++u) d[base + u * 32 + lane] = v[u];
    }
  }
}

template <typename T, int B>
int run(const char *src, char *dst, int warps, const char *name) {
  const size_t total = 4ull << 30; // bytes per figure
  int per = (int)(total / CHUNK / warps);
  if (per < 1) per = 1;
  const int block = 256, grid = (warps * 32 + block - 1) / block;
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  copy_k<T, B><<<grid, block>>>(src, dst, warps, 1); // warm-up
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventRecord(a));
  copy_k<T, B><<<grid, block>>>(src, dst, warps, per);
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  const double bytes = (double)warps * per * CHUNK;
  printf("%-14s warps %5d  batch %2d  %6.2f GB/s\n", name, warps, B, bytes / ms / 1e6);
  return 0;
}

int main() {
  char *host = nullptr, *dev = nullptr, *hdev = nullptr;
  CHECK(cudaHostAlloc(&host, CHUNK * CHUNKS, cudaHostAllocMapped));
  for (size_t i = 0; i < CHUNK * CHUNKS; i += 4096) host[i] = (char)i;
  CHECK(cudaHostGetDevicePointer((void **)&hdev, host, 0));
  CHECK(cudaMalloc(&dev, CHUNK * CHUNKS));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int r = 0; r < 2; ++r) {
    CHECK(cudaEventRecord(a));
    CHECK(cudaMemcpy(dev, host, CHUNK * CHUNKS, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    printf("cudaMemcpy HtoD 1 GiB: %.2f GB/s\n", CHUNK * CHUNKS / ms / 1e6);
  }
  const int warps[] = {64, 256, 1024, 4224};
  for (int w : warps) {
    if (run<uint64_t, 8>(hdev, dev, w, "u64 x8")) return 1;
    if (run<uint64_t, 16>(hdev, dev, w, "u64 x16")) return 1;
    if (run<uint64_t, 32>(hdev, dev, w, "u64 x32")) return 1;
    if (run<ulonglong2, 4>(hdev, dev, w, "16B x4")) return 1;
    if (run<ulonglong2, 8>(hdev, dev, w, "16B x8")) return 1;
    if (run<ulonglong2, 16>(hdev, dev, w, "16B x16")) return 1;
  }
  return 0;
}
