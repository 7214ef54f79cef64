// Where one file's 1 MiB writes (and reads) lose against a host thread: the memory they come
// from. pwrite 4224 x 1 MiB into a fresh sized file, and pread them back, from / into 512 MiB
// of buffers taken in turn, of each kind:
//   malloc      plain malloc'd buffers (the bench's host reference)
//   reg         anonymous populated mapping + cudaHostRegister(MAPPED|PORTABLE) (gpuio's staging)
//   reg+gpu     the same, every byte last written by a GPU kernel
//   huge, huge+gpu   the same with MADV_HUGEPAGE before populating
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#define CH (1ull << 20)
#define N 4224ull
#define BUF (512ull * CH)
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
__global__ void fill(uint4 *p, size_t n, unsigned v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = make_uint4(v, v + 1, v + 2, v + 3);
}
static void run(const char *name, char *buf, bool gpu, const char *dir) {
  char p[256]; snprintf(p, sizeof p, "%s/srcmem-%d", dir, getpid());
  for (int rep = 0; rep < 2; rep++) {
    if (gpu) {
      void *d; cudaHostGetDevicePointer(&d, buf, 0);
      fill<<<264, 1024>>>((uint4 *)d, BUF / 16, rep);
      if (cudaDeviceSynchronize() != cudaSuccess) { printf("fill failed\n"); exit(1); }
    }
    unlink(p); int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (ftruncate(fd, N * CH)) { perror("ftruncate"); exit(1); }
    double t0 = now();
    for (size_t i = 0; i < N; i++) if (pwrite(fd, buf + (i % 512) * CH, CH, i * CH) != (ssize_t)CH) { perror("pwrite"); exit(1); }
    double w = now() - t0;
    t0 = now();
    for (size_t i = 0; i < N; i++) if (pread(fd, buf + (i % 512) * CH, CH, i * CH) != (ssize_t)CH) { perror("pread"); exit(1); }
    double r = now() - t0;
    printf("%-9s rep %d: pwrite %.2f GB/s, pread %.2f GB/s\n", name, rep, N * CH / w / 1e9, N * CH / r / 1e9);
    fflush(stdout);
    close(fd); unlink(p);
  }
}
static char *mapped(bool huge) {
  char *b = (char *)mmap(0, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) { perror("mmap"); exit(1); }
  if (huge && madvise(b, BUF, MADV_HUGEPAGE)) perror("madvise");
  memset(b, 0x5a, BUF);
  if (cudaHostRegister(b, BUF, cudaHostRegisterMapped | cudaHostRegisterPortable) != cudaSuccess) { printf("register failed\n"); exit(1); }
  return b;
}
int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  cudaFree(0);
  char *m = (char *)malloc(BUF); memset(m, 0x5a, BUF);
  char *r = mapped(false), *h = mapped(true);
  for (int k = 0; k < 2; k++) {
    run("malloc", m, false, dir);
    run("reg", r, false, dir);
    run("reg+gpu", r, true, dir);
    run("huge", h, false, dir);
    run("huge+gpu", h, true, dir);
  }
  return 0;
}
