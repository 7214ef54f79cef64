// Probe (run 94): the device<->host ping-pong floor, polled with and without a pause.
// variant 0: the bench's floor (ld.acquire.sys poll, nanosleep(64) between polls);
// 1: no pause between polls; 2: nanosleep(0) between polls.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
typedef unsigned long long u64;
__device__ __forceinline__ u64 acq_sys(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void rel_sys(u64 *p, u64 v) { asm volatile("st.release.sys.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__global__ void k(int variant, u64 *ping, u64 *pong, u64 rounds, u64 *out) {
  u64 polls = 0;
  for (u64 i = 1; i <= rounds; i++) {
    rel_sys(ping, i);
    for (;;) {
      polls++;
      if (acq_sys(pong) == i) break;
      if (variant == 0) __nanosleep(64);
      else if (variant == 2) __nanosleep(0);
    }
  }
  out[0] = polls;
}
int main() {
  u64 *mem, *dmem, *out;
  CK(cudaHostAlloc(&mem, 4096, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&dmem, mem, 0));
  CK(cudaMallocManaged(&out, 64));
  const u64 rounds = 20000;
  const char *names[] = {"poll + nanosleep(64) (bench floor)", "poll, no pause", "poll + nanosleep(0)"};
  for (int rep = 0; rep < 5; ++rep) {
    for (int v = 0; v < 3; ++v) {
      mem[0] = 0; mem[8] = 0;
      std::atomic<u64> *ping = reinterpret_cast<std::atomic<u64> *>(mem), *pong = reinterpret_cast<std::atomic<u64> *>(mem + 8);
      k<<<1, 1>>>(v, dmem, dmem + 8, rounds, out);
      std::chrono::steady_clock::time_point start;
      for (u64 i = 1; i <= rounds; i++) {
        while (ping->load(std::memory_order_acquire) != i) {}
        if (i == 1) start = std::chrono::steady_clock::now();
        pong->store(i, std::memory_order_release);
      }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / (rounds - 1);
      CK(cudaDeviceSynchronize());
      printf("rep %d  %-36s %.3f us/round  %.2f polls/round\n", rep, names[v], us, (double)out[0] / rounds);
    }
  }
  return 0;
}
