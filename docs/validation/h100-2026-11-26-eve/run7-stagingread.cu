// How fast host threads pread(2) a file in the page cache into 1 MiB chunks of a
// 256 MiB buffer, by kind of buffer: malloc'd, an anonymous mapping registered with
// cudaHostRegister(DEVICEMAP|PORTABLE) (what gpuio's staging is), cudaHostAlloc'd;
// and the registered one while the GPU reads it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
static const size_t MB = 1 << 20, BUF = 256 * MB, FILE_LEN = 2048 * MB;

__global__ void gpu_read(const unsigned long long *src, unsigned long long *sink, size_t words, int rounds) {
  const size_t lanes = (size_t)gridDim.x * blockDim.x, me = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  for (int r = 0; r < rounds; ++r)
    for (size_t i = me; i < words; i += lanes) acc += src[i];
  if (acc == 42) sink[0] = acc;
}

static double preads(int fd, char *buf, int threads) {
  std::vector<std::thread> ts;
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([=] {
      // Thread t reads file chunks t, t + threads, ... into buffer chunks the same way.
      for (size_t c = t; c < FILE_LEN / MB; c += threads) {
        char *dst = buf + (c % (BUF / MB)) * MB;
        if (pread(fd, dst, MB, (off_t)(c * MB)) != (ssize_t)MB) { printf("short pread\n"); return; }
      }
    });
  for (auto &t : ts) t.join();
  return (double)FILE_LEN / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
}

int main() {
  const char *path = "/tmp/stagingread.bin";
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  std::vector<char> block(MB);
  for (size_t i = 0; i < MB; ++i) block[i] = (char)(i * 131 + 7);
  for (size_t c = 0; c < FILE_LEN / MB; ++c) write(fd, block.data(), MB);
  fsync(fd);
  char *heap = (char *)malloc(BUF);
  memset(heap, 1, BUF);
  char *anon = (char *)mmap(nullptr, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  CHECK(cudaHostRegister(anon, BUF, cudaHostRegisterMapped | cudaHostRegisterPortable));
  char *alloc = nullptr;
  CHECK(cudaHostAlloc(&alloc, BUF, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(alloc, 1, BUF);
  for (int rep = 0; rep < 2; ++rep)
    for (int n : {1, 4, 8}) {
      printf("pread 1 MiB, %d threads: malloc %6.2f  registered %6.2f  cudaHostAlloc %6.2f GB/s\n", n,
             preads(fd, heap, n), preads(fd, anon, n), preads(fd, alloc, n));
    }
  char *danon = nullptr;
  unsigned long long *sink = nullptr;
  CHECK(cudaHostGetDevicePointer((void **)&danon, anon, 0));
  CHECK(cudaMalloc(&sink, 8));
  for (int n : {1, 4, 8}) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a));
    gpu_read<<<264, 1024>>>((const unsigned long long *)danon, sink, BUF / 8, 60);
    CHECK(cudaEventRecord(b));
    double h = preads(fd, anon, n);
    CHECK(cudaEventSynchronize(b));
    float ms = 0; CHECK(cudaEventElapsedTime(&ms, a, b));
    printf("pread into registered, %d threads, while the GPU reads it: %6.2f GB/s (GPU %6.2f GB/s over %.0f ms)\n", n, h,
           (double)BUF * 60 / ms / 1e6, ms);
  }
  close(fd);
  unlink(path);
  return 0;
}
