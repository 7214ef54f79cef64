// One thread per block, blocks one after another (a device-local turn): each makes
// p[0] NOPs, timing each on the device clock, and records its SM, the median
// (50 ns bins) and the least, so NOP latency can be compared across SMs in one launch.
// out: p[8 + 4b] smid, p[9 + 4b] median ns, p[10 + 4b] least ns, p[11 + 4b] failures.
#include "gpuio.h"
__device__ unsigned long long latsm_turn;
GPUIO_KERNEL(latsm)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (threadIdx.x != 0) return;
  const gpuio_u64 b = blockIdx.x;
  while (gpuio_ld_acquire_dev_64((const gpuio_u64 *)&latsm_turn) != b) gpuio_sleep_ns(2000);
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  unsigned hist[160];
  for (int i = 0; i < 160; i++) hist[i] = 0;
  gpuio_u64 least = ~0ull, fails = 0;
  const gpuio_u64 n = p[0];
  for (gpuio_u64 i = 0; i < n; i++) {
    const gpuio_u64 t0 = gpuio_now_ns();
    const gpuio_i64 r = gpuio_nop(ch);
    const gpuio_u64 d = gpuio_now_ns() - t0;
    if (r != 0) fails++;
    if (d < least) least = d;
    gpuio_u64 bin = d / 50;
    hist[bin > 159 ? 159 : bin]++;
  }
  gpuio_u64 seen = 0, median = 0;
  for (int i = 0; i < 160; i++) {
    seen += hist[i];
    if (2 * seen >= n) { median = (gpuio_u64)i * 50 + 25; break; }
  }
  gpuio_st_relaxed_64(&p[8 + 4 * b], smid);
  gpuio_st_relaxed_64(&p[9 + 4 * b], median);
  gpuio_st_relaxed_64(&p[10 + 4 * b], least);
  gpuio_st_relaxed_64(&p[11 + 4 * b], fails);
  gpuio_st_release_dev_64((gpuio_u64 *)&latsm_turn, b + 1);
}
