// What one file's 1 MiB pwrites cost by where their source is: a hot 1 MiB buffer,
// a cold one cycling through 1 GiB of pinned memory, the same just written by the
// GPU's copy engine (all of it, or chunk by chunk just ahead of the writer), and a
// cold source that a second thread reads (warms) or copies into a hot buffer just
// ahead of the writer; over a file's existing pages, or into an emptied file
// (`writeprobe PATH fresh`). gpuio issue 11, one file's writes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <unistd.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s -> %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static const size_t CHUNK = 1 << 20;
static const size_t POOL = 1024;  // chunks in the pinned pool (1 GiB)
static const size_t N = 2048;     // writes per measurement (2 GiB)
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static void pw(int fd, const char *p, size_t i) {
  size_t done = 0;
  while (done < CHUNK) {
    ssize_t r = pwrite(fd, p + done, CHUNK - done, (off_t)(i * CHUNK + done));
    if (r <= 0) { perror("pwrite"); exit(1); }
    done += (size_t)r;
  }
}
static uint64_t touch(const char *p) {
  uint64_t s = 0;
  for (size_t o = 0; o < CHUNK; o += 64) s += *(const volatile uint64_t *)(p + o);
  return s;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "/tmp/writeprobe.bin";
  // "fresh": every measurement writes into an emptied file (its pages made anew, as
  // the bench's passes and references do); otherwise over pages that already exist.
  const bool fresh = argc > 2 && strcmp(argv[2], "fresh") == 0;
  char *pool, *dev, *hot;
  CK(cudaHostAlloc(&pool, POOL * CHUNK, cudaHostAllocDefault));
  CK(cudaMalloc(&dev, POOL * CHUNK));
  CK(cudaMemset(dev, 0x5a, POOL * CHUNK));
  memset(pool, 0x33, POOL * CHUNK);
  hot = (char *)aligned_alloc(4096, 2 * CHUNK);
  memset(hot, 0x44, 2 * CHUNK);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  std::vector<cudaEvent_t> ev(POOL);
  for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  if (fd < 0) { perror("open"); return 1; }
  // The file's pages exist before any measurement: every pass overwrites them.
  for (size_t i = 0; i < N; ++i) pw(fd, hot, i);

  const char *names[] = {"hot 1 MiB buffer", "cold: cycling 1 GiB pinned", "cold, all of it just written by the copy engine",
                         "copy engine writes each chunk 4 ahead of the writer", "cold, a 2nd thread reads each chunk 2 ahead",
                         "cold, a 2nd thread copies each chunk into a hot buffer 1 ahead"};
  const int MODES = 6;
  std::vector<std::vector<double>> res(MODES);
  volatile uint64_t sink = 0;
  for (int round = 0; round < 3; ++round) {
    for (int m = 0; m < MODES; ++m) {
      if (m == 2) { CK(cudaMemcpy(pool, dev, POOL * CHUNK, cudaMemcpyDeviceToHost)); }
      std::atomic<long> written{-1}, ready{-1};
      std::thread helper;
      const long ahead = m == 4 ? 2 : 1;
      if (m == 4 || m == 5) {
        helper = std::thread([&] {
          uint64_t s = 0;
          for (long i = 0; i < (long)N; ++i) {
            while (i - written.load(std::memory_order_acquire) > ahead) {}
            if (m == 4) s += touch(pool + (i % POOL) * CHUNK);
            else memcpy(hot + (i & 1) * CHUNK, pool + (i % POOL) * CHUNK, CHUNK);
            ready.store(i, std::memory_order_release);
          }
          sink = sink + s;
        });
      }
      if (m == 3) {
        for (size_t i = 0; i < 4; ++i) {
          CK(cudaMemcpyAsync(pool + i * CHUNK, dev + i * CHUNK, CHUNK, cudaMemcpyDeviceToHost, st));
          CK(cudaEventRecord(ev[i], st));
        }
      }
      if (fresh && ftruncate(fd, 0) != 0) { perror("ftruncate"); return 1; }
      const double t0 = now();
      for (size_t i = 0; i < N; ++i) {
        const char *src;
        if (m == 0) src = hot;
        else if (m == 5) {
          while (ready.load(std::memory_order_acquire) < (long)i) {}
          src = hot + (i & 1) * CHUNK;
        } else {
          if (m == 4) while (ready.load(std::memory_order_acquire) < (long)i) {}
          if (m == 3) {
            CK(cudaEventSynchronize(ev[i % POOL]));
            const size_t j = i + 4;
            if (j < N) {
              CK(cudaMemcpyAsync(pool + (j % POOL) * CHUNK, dev + (j % POOL) * CHUNK, CHUNK, cudaMemcpyDeviceToHost, st));
              CK(cudaEventRecord(ev[j % POOL], st));
            }
          }
          src = pool + (i % POOL) * CHUNK;
        }
        pw(fd, src, i);
        written.store((long)i, std::memory_order_release);
      }
      const double t = now() - t0;
      if (helper.joinable()) helper.join();
      res[m].push_back(N * CHUNK / t / 1e9);
      printf("round %d  %-64s %6.2f GB/s\n", round, names[m], N * CHUNK / t / 1e9);
      fflush(stdout);
    }
  }
  printf("\nmedian of 3 (min-max):\n");
  for (int m = 0; m < MODES; ++m) {
    auto v = res[m];
    std::sort(v.begin(), v.end());
    printf("  %-64s %6.2f GB/s (%.2f-%.2f)\n", names[m], v[1], v[0], v[2]);
  }
  close(fd);
  unlink(path);
  return 0;
}
