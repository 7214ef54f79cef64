// Where a NOP's device-side microseconds go, and what the bench's queue kernel
// costs beyond the raw send probe. Built with nvcc against gpuio's own header and
// conformance kernels (-I device/include -I device/kernels).
//  A: primitive latencies, one thread, dependent chains (ns per op, mean of N).
//  B: gpuio's forward steps (gpuio_k_nop_anatomy) against a host thread of this
//     program answering the entries directly, and gpuio_k_pingpong's floor, same run;
//     take+give back alone (no submit) in a loop.
//  C: gpuio_k_queue_send (the bench's kernel) on a 16-ring queue to the host whose
//     rings never wrap (no host drain), against variants.
#include <cstdio>
#include <cstring>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "conformance.h"

typedef unsigned long long u64;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

template <typename T> T *host_mapped(size_t n, T **dev) {
  void *h; CK(cudaHostAlloc(&h, n * sizeof(T), cudaHostAllocMapped)); memset(h, 0, n * sizeof(T));
  void *d; CK(cudaHostGetDevicePointer(&d, h, 0)); *dev = (T *)d; return (T *)h;
}
template <typename T> T *dev_zero(size_t n) { void *d; CK(cudaMalloc(&d, n * sizeof(T))); CK(cudaMemset(d, 0, n * sizeof(T))); return (T *)d; }

// ---------------------------------------------------------------- A: primitives
#define NA 16
__global__ void prims(u64 *dmem, u64 *hmem, u64 *out, int iters) {
  if (threadIdx.x || blockIdx.x) return;
  u64 v = 0, t0, t1;
  int k = 0;
#define TIME(body) do { t0 = gpuio_now_ns(); for (int i = 0; i < iters; i++) { body; } t1 = gpuio_now_ns(); out[k++] = (t1 - t0); } while (0)
  TIME(v += gpuio_now_ns());                                                   // 0 globaltimer read
  TIME(v += gpuio_fetch_add_64(dmem + (v & 1) * 0, 1));                          // 1 atomicAdd dev (dependent)
  TIME(v += gpuio_ld_acquire_dev_64(dmem + 8 + (v & 0)));                        // 2 ld.acquire.gpu dev
  TIME(v += gpuio_cas_32((gpuio_u32 *)(dmem + 16), (gpuio_u32)v, (gpuio_u32)v + 1)); // 3 CAS dev
  TIME(gpuio_fence_dev());                                                      // 4 fence.acq_rel.gpu
  TIME(gpuio_st_release_dev_64(dmem + 24, v + i));                               // 5 st.release.gpu dev
  TIME(gpuio_st_relaxed_64(dmem + 32, v + i));                                   // 6 st.relaxed.sys dev
  TIME(gpuio_st_release_64(hmem, v + i));                                        // 7 st.release.sys host
  TIME(v += gpuio_ld_acquire_64(hmem + 8 + (v & 0)));                            // 8 ld.acquire.sys host (PCIe read)
  TIME(gpuio_fence_sc());                                                       // 9 fence.sc.sys
  TIME(hmem[16] = v + i; hmem[17] = v; hmem[18] = i; hmem[19] = v; gpuio_st_release_64(hmem + 24, v + i)); // 10 32 B + release.sys (submit)
  TIME(v += gpuio_ld_acquire_64(dmem + 40 + (v & 0)));                           // 11 ld.acquire.sys dev
  TIME(gpuio_st_release_dev_64(dmem + 24, v + i); v += gpuio_ld_acquire_dev_64(dmem + 24)); // 12 release.gpu then acquire.gpu same word
  TIME(v += gpuio_ld_acquire_64(hmem + 8); gpuio_st_release_dev_32((gpuio_u32 *)(dmem + 48), (gpuio_u32)v)); // 13 host acquire then release.gpu (give back after wait)
  TIME(gpuio_fence_dev(); gpuio_st_relaxed_64(dmem + 56, v); gpuio_st_relaxed_64(dmem + 57, v); gpuio_st_relaxed_32((gpuio_u32 *)(dmem + 58), (gpuio_u32)v); gpuio_st_release_dev_64(dmem + 59, v + i)); // 14 turn_hold's stores
  TIME(gpuio_fence_dev(); dmem[64] = v; dmem[65] = v; ((gpuio_u32 *)(dmem + 66))[0] = (gpuio_u32)v; gpuio_st_release_dev_64(dmem + 67, v + i)); // 15 turn_hold with plain stores
  out[NA] = v;
}
static const char *prim_names[NA] = {
  "globaltimer read", "atomicAdd dev (dependent)", "ld.acquire.gpu dev", "atomicCAS dev (dependent)",
  "fence.acq_rel.gpu", "st.release.gpu dev", "st.relaxed.sys dev", "st.release.sys host",
  "ld.acquire.sys host (PCIe read)", "fence.sc.sys", "32 B plain + st.release.sys host (submit)",
  "ld.acquire.sys dev", "st.release.gpu + ld.acquire.gpu same word", "ld.acquire.sys host + st.release.gpu dev",
  "turn_hold (fence, 3 relaxed.sys, release.gpu)", "turn_hold with plain stores"};

// ---------------------------------------------------------------- B: forward steps
// take + give back only, thread 0, n rounds; p[0] n, p[1] u32 ns[2n]
__global__ void take_give(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u32 *ns = (gpuio_u32 *)p[1];
  for (gpuio_u64 i = 0; i < p[0]; i++) {
    gpuio_slot s;
    const gpuio_u64 t0 = gpuio_now_ns();
    int e = gpuio_impl_acquire(ch, &s, gpuio_impl_deadline(ch));
    const gpuio_u64 t1 = gpuio_now_ns();
    if (!e) gpuio_impl_release(ch, &s);
    const gpuio_u64 t2 = gpuio_now_ns();
    ns[i] = (gpuio_u32)(t1 - t0);
    ns[p[0] + i] = (gpuio_u32)(t2 - t1);
    if (e) p[2]++;
  }
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
static double pct(std::vector<double> v, double q) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[(size_t)(q * (v.size() - 1))]; }

static void part_b() {
  const int slots = 8;
  gpuio_forward_entry *dent; gpuio_forward_entry *hent = host_mapped<gpuio_forward_entry>(slots, &dent);
  char *dstag; host_mapped<char>(slots * 64, &dstag);
  gpuio_channel c; memset(&c, 0, sizeof c);
  c.magic = GPUIO_MAGIC; c.version = GPUIO_ABI_VERSION; c.transport = GPUIO_TRANSPORT_FORWARD;
  c.timeout_ns = 5000000000ull; c.staging = (u64)dstag; c.staging_len = slots * 64; c.slot_size = 64; c.slots = slots;
  c.forward.entries = (u64)dent; c.forward.state = (u64)dev_zero<gpuio_forward_state>(1);
  c.forward.slot_state = (u64)dev_zero<gpuio_turn>(slots); c.forward.rings = 1;
  gpuio_channel *dch = dev_zero<gpuio_channel>(1); CK(cudaMemcpy(dch, &c, sizeof c, cudaMemcpyHostToDevice));
  std::atomic<bool> stop{false};
  std::thread host([&] {
    while (!stop.load(std::memory_order_relaxed))
      for (int i = 0; i < slots; i++) {
        u64 v = __atomic_load_n(&hent[i].stamp, __ATOMIC_ACQUIRE);
        if ((v & 3) == GPUIO_STAMP_READY) {
          __atomic_store_n(&hent[i].result, 0, __ATOMIC_RELAXED);
          __atomic_store_n(&hent[i].stamp, (v >> 2 << 2) | GPUIO_STAMP_DONE, __ATOMIC_RELEASE);
        }
      }
  });
  const int n = 2000;
  gpuio_u64 *dp; gpuio_u64 *hp = host_mapped<gpuio_u64>(8, &dp);
  gpuio_u32 *dns; gpuio_u32 *hns = host_mapped<gpuio_u32>(5 * n, &dns);
  // ping-pong floor, host side pongs
  gpuio_u64 *dpp; gpuio_u64 *hpp = host_mapped<gpuio_u64>(16, &dpp);
  for (int rep = 0; rep < 2; rep++) {
    memset(hpp, 0, 128);
    hp[0] = (u64)dpp; hp[1] = n; hp[2] = 0;
    std::atomic<bool> pdone{false};
    std::thread pong([&] {
      u64 last = 0;
      while (!pdone.load(std::memory_order_relaxed)) {
        u64 v = __atomic_load_n(&hpp[0], __ATOMIC_ACQUIRE);
        if (v != last) { last = v; __atomic_store_n(&hpp[8], v, __ATOMIC_RELEASE); }
      }
    });
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a);
    gpuio_k_pingpong<<<1, 32>>>(dch, dp);
    cudaEventRecord(b); CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b);
    pdone = true; pong.join();
    printf("B ping-pong floor: %.3f us per round (%d rounds, kernel incl. launch), late %llu\n", ms * 1e3 / n, n, hp[2]);
    // NOP anatomy
    hp[0] = n; hp[1] = (u64)dns; hp[2] = 0; hp[3] = 0;
    gpuio_k_nop_anatomy<<<1, 32>>>(dch, dp); CK(cudaDeviceSynchronize());
    const char *st[5] = {"check", "take", "submit", "wait", "give back"};
    printf("B NOP anatomy (gpuio forward, this program's host answers), failures %llu:", hp[2]);
    double tot = 0;
    std::vector<double> sum(n, 0);
    for (int k = 0; k < 5; k++) {
      std::vector<double> v(n); for (int i = 0; i < n; i++) { v[i] = hns[k * n + i] / 1e3; sum[i] += v[i]; }
      double m = median(v); tot += m; printf(" %s %.3f", st[k], m);
    }
    printf(" | sum of medians %.3f, median of sums %.3f, p99 %.3f us\n", tot, median(sum), pct(sum, 0.99));
    // take + give back alone
    hp[0] = n; hp[1] = (u64)dns; hp[2] = 0;
    take_give<<<1, 32>>>(dch, dp); CK(cudaDeviceSynchronize());
    std::vector<double> t(n), g(n); for (int i = 0; i < n; i++) { t[i] = hns[i] / 1e3; g[i] = hns[n + i] / 1e3; }
    printf("B take alone %.3f us (p10 %.3f), give back alone %.3f (p10 %.3f), failures %llu\n", median(t), pct(t, 0.1), median(g), pct(g, 0.1), hp[2]);
  }
  stop = true; host.join();
}

// ---------------------------------------------------------------- C: queue send
// variant 1: the message in a 64 B array; variant 2: send_group directly on a
// precomputed queue (no descriptor checks).
__global__ void __launch_bounds__(1024) send_small(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  alignas(8) char m[64];
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    gpuio_conf_message(m, t, i, 64);
    const gpuio_i64 r = gpuio_send(ch, (gpuio_u32)p[0], m, 64);
    if (r != 64) gpuio_conf_fail(&p[3], &p[4], r);
  }
}
__global__ void __launch_bounds__(1024) send_group_only(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  alignas(8) char m[64];
  const gpuio_queue *q = gpuio_ptr<const gpuio_queue>(ch->queues);
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    gpuio_conf_message(m, t, i, 64);
    const gpuio_i64 r = gpuio_impl_queue_send_group(ch, q, gpuio_warp_active(), m, 64, true);
    if (r != 64) gpuio_conf_fail(&p[3], &p[4], r);
  }
}
// variant 3: the cells written with the message computed in registers, gpuio's
// reserve + publish (how far the fill's shuffles are from flat stores)
__global__ void __launch_bounds__(1024) send_flat(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_queue *q = gpuio_ptr<const gpuio_queue>(ch->queues);
  const gpuio_u32 lane = gpuio_lane_id();
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    const gpuio_u64 g = gpuio_warp_active();
    gpuio_u32 ring; gpuio_u64 base;
    if (gpuio_impl_queue_group_reserve(ch, q, g, true, &ring, &base)) { gpuio_conf_fail(&p[3], &p[4], -1); return; }
    gpuio_u64 *cells = (gpuio_u64 *)gpuio_impl_cell(q, ring, base);
    for (gpuio_u64 x = lane; x < 320; x += 32) {
      const gpuio_u64 j = x / 10, w = x % 10;
      if (x == 0) continue;
      cells[x] = w == 0 ? base + j + 1 : w == 1 ? (64ull | 32ull << 32) : (t << 32 | i) + j + w;
    }
    gpuio_impl_queue_group_publish(ch, q, ring, base, g);
  }
}

static void part_c() {
  const int grid = 132, block = 1024, R = 16;
  const u64 threads = (u64)grid * block, warps = threads / 32;
  const u64 per = (1ull << 23) / threads, total = per * threads;
  const u64 cells = 1ull << 20; // per ring: more than any ring gets (warps / R + 1) * per * 32
  if ((warps / R + 1) * per * 32 > cells) { printf("C: rings too small\n"); return; }
  char *dcells; host_mapped<char>(cells * R * 80, &dcells);
  gpuio_queue_control *dctl; host_mapped<gpuio_queue_control>(R, &dctl);
  gpuio_queue_ring *rs = dev_zero<gpuio_queue_ring>(R);
  gpuio_queue hq; memset(&hq, 0, sizeof hq);
  hq.direction = GPUIO_QUEUE_TO_HOST; hq.rings = R; hq.cells = (gpuio_u32)cells; hq.cell_size = 80; hq.max_message = 64;
  hq.cells_addr = (u64)dcells; hq.control = (u64)dctl; hq.ring_state = (u64)rs;
  gpuio_queue *dq = dev_zero<gpuio_queue>(1); CK(cudaMemcpy(dq, &hq, sizeof hq, cudaMemcpyHostToDevice));
  gpuio_endpoint ep = {GPUIO_EP_HOST_QUEUE, GPUIO_ACCESS_WRITE, 0, 0};
  gpuio_endpoint *dep = dev_zero<gpuio_endpoint>(1); CK(cudaMemcpy(dep, &ep, sizeof ep, cudaMemcpyHostToDevice));
  gpuio_channel c; memset(&c, 0, sizeof c);
  c.magic = GPUIO_MAGIC; c.version = GPUIO_ABI_VERSION; c.transport = GPUIO_TRANSPORT_FORWARD; c.timeout_ns = 10000000000ull;
  c.endpoints = (u64)dep; c.endpoint_count = 1; c.stdout_endpoint = -1; c.queues = (u64)dq; c.queue_count = 1;
  gpuio_channel *dch = dev_zero<gpuio_channel>(1); CK(cudaMemcpy(dch, &c, sizeof c, cudaMemcpyHostToDevice));
  gpuio_u64 *dp; gpuio_u64 *hp = host_mapped<gpuio_u64>(8, &dp);
  // the copy-back reference: gpuio_k_queue_fill into device memory + one copy
  char *dfill = dev_zero<char>(total * 64); char *hfill; CK(cudaHostAlloc((void **)&hfill, total * 64, 0));
  const char *names[] = {"gpuio_k_queue_send (bench kernel, 4 KiB local array)", "gpuio_send, 64 B array",
                         "gpuio_impl_queue_send_group directly", "gpuio reserve + flat stores + publish",
                         "copy-back: fill + cudaMemcpy"};
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int rep = 0; rep < 3; rep++)
    for (int v = 0; v < 5; v++) {
      CK(cudaMemset(rs, 0, R * sizeof(gpuio_queue_ring)));
      hp[0] = 0; hp[1] = per; hp[2] = 64; hp[3] = 0; hp[4] = 0;
      cudaEventRecord(a);
      if (v == 0) gpuio_k_queue_send<<<grid, block>>>(dch, dp);
      if (v == 1) send_small<<<grid, block>>>(dch, dp);
      if (v == 2) send_group_only<<<grid, block>>>(dch, dp);
      if (v == 3) send_flat<<<grid, block>>>(dch, dp);
      if (v == 4) {
        hp[0] = (u64)dfill; hp[1] = per; hp[2] = 64;
        gpuio_k_queue_fill<<<grid, block>>>(dch, dp);
        cudaMemcpyAsync(hfill, dfill, total * 64, cudaMemcpyDeviceToHost);
      }
      cudaEventRecord(b);
      cudaError_t e = cudaEventSynchronize(b);
      float ms = 0; cudaEventElapsedTime(&ms, a, b);
      printf("C %-55s %7.2f ms %7.1f M msg/s fails %llu first %lld %s\n", names[v], ms, total / ms / 1e3, v == 4 ? 0 : hp[3],
             (long long)hp[4], e ? cudaGetErrorString(e) : "");
    }
}

int main(int argc, char **argv) {
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); printf("device %s\n", prop.name);
  u64 *dmem = dev_zero<u64>(1024); u64 *dh; host_mapped<u64>(1024, &dh);
  u64 *dout; u64 *hout = host_mapped<u64>(NA + 1, &dout);
  for (int rep = 0; rep < 2; rep++) {
    const int iters = 2000;
    prims<<<1, 32>>>(dmem, dh, dout, iters); CK(cudaDeviceSynchronize());
    for (int k = 0; k < NA; k++) printf("A %-50s %8.1f ns\n", prim_names[k], (double)hout[k] / iters);
  }
  part_b();
  if (argc < 2) part_c();
  return 0;
}
