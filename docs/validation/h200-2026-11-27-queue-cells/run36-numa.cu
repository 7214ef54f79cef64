// Does the placement of pinned host memory (NUMA node) and of the host thread decide
// the two modes of a device<->host round trip? Ping-pong floor per (memory node, CPU node).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>
#include <string>
#include <fstream>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sched.h>
// No libnuma on the device machine: the two system calls by hand.
#define MPOL_BIND 2
#define MPOL_F_NODE 1
#define MPOL_F_ADDR 2
static long mbind(void *a, unsigned long len, int mode, const unsigned long *mask, unsigned long maxnode, unsigned flags) {
  return syscall(SYS_mbind, a, len, mode, mask, maxnode, flags);
}
static long get_mempolicy(int *mode, unsigned long *mask, unsigned long maxnode, void *addr, unsigned long flags) {
  return syscall(SYS_get_mempolicy, mode, mask, maxnode, addr, flags);
}
typedef unsigned long long u64;
__device__ __forceinline__ u64 now() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ u64 ldacq(const u64 *p) { u64 v; asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void strel(u64 *p, u64 v) { asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
#define ROUNDS 4000
__global__ void pp(u64 *ping, u64 *pong, unsigned *out, int *fail) {
  for (u64 i = 1; i <= ROUNDS; i++) {
    u64 t0 = now();
    strel(ping, i);
    u64 dl = t0 + 100000000ull;
    while (ldacq(pong) != i) { if (now() > dl) { *fail = 1; strel(ping, ~0ull); return; } __nanosleep(64); }
    out[i - 1] = (unsigned)(now() - t0);
  }
  strel(ping, ~0ull);
}
static std::string slurp(const std::string &p) { std::ifstream f(p); std::string s; std::getline(f, s); return s; }
static std::vector<int> cpus_of(int node) {
  std::string l = slurp("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::vector<int> v; size_t i = 0;
  while (i < l.size()) { size_t j = l.find(',', i); std::string r = l.substr(i, j == std::string::npos ? std::string::npos : j - i);
    size_t d = r.find('-'); int a = std::stoi(r.substr(0, d)), b = d == std::string::npos ? a : std::stoi(r.substr(d + 1));
    for (int c = a; c <= b; c++) v.push_back(c); if (j == std::string::npos) break; i = j + 1; }
  return v;
}
int main() {
  int nodes = 0; while (access(("/sys/devices/system/node/node" + std::to_string(nodes)).c_str(), F_OK) == 0) nodes++;
  char bus[64]; cudaDeviceGetPCIBusId(bus, sizeof bus, 0);
  for (char *c = bus; *c; c++) *c = tolower(*c);
  printf("nodes %d, GPU %s numa_node %s\n", nodes, bus, slurp(std::string("/sys/bus/pci/devices/") + bus + "/numa_node").c_str());
  for (int n = 0; n < nodes; n++) printf("node %d cpus %s\n", n, slurp("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist").c_str());
  unsigned *out; cudaMallocManaged(&out, ROUNDS * 4);
  int *fail; cudaMallocManaged(&fail, 4);
  // Every (memory placement, host CPU): the pinger on each CPU in turn, two repeats.
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int mem = -1; mem < nodes; mem++) {
    for (int cpu = 0; cpu < ncpu; cpu++) {
      int cpun = 0;
      for (int n = 0; n < nodes; n++) for (int c : cpus_of(n)) if (c == cpu) cpun = n;
      for (int rep = 0; rep < 2; rep++) {
        size_t len = 2 << 20;
        void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem >= 0) { unsigned long mask = 1ul << mem; if (mbind(m, len, MPOL_BIND, &mask, 64, 0)) perror("mbind"); }
        memset(m, 0, len);
        int where = -1; get_mempolicy(&where, nullptr, 0, m, MPOL_F_NODE | MPOL_F_ADDR);
        cudaHostRegister(m, len, cudaHostRegisterMapped);
        u64 *h = (u64 *)m, *d; cudaHostGetDevicePointer((void **)&d, m, 0);
        *fail = 0;
        std::thread srv([&] {
          cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s);
          u64 seen = 0;
          for (;;) { u64 p = __atomic_load_n(h, __ATOMIC_ACQUIRE); if (p == ~0ull) break;
            if (p != seen) { seen = p; __atomic_store_n(h + 8, p, __ATOMIC_RELEASE); } }
        });
        pp<<<1, 1>>>(d, d + 8, out, fail);
        cudaError_t e = cudaDeviceSynchronize();
        srv.join();
        std::vector<unsigned> x(out + 100, out + ROUNDS); std::sort(x.begin(), x.end());
        printf("memory %s (on node %d), host thread on node %d (cpu %d), rep %d: p50 %.2f p10 %.2f p90 %.2f us %s fail=%d\n",
               mem < 0 ? "first touch" : ("bound " + std::to_string(mem)).c_str(), where, cpun, cpu, rep,
               x[x.size() / 2] / 1e3, x[x.size() / 10] / 1e3, x[x.size() * 9 / 10] / 1e3, cudaGetErrorString(e), *fail);
        cudaHostUnregister(m); munmap(m, len);
      }
    }
  }
  return 0;
}
