#include "gpuio.h"
/* Where a warp's 1 MiB read's time goes: the steps of gpuio_pread_warp
 * (gpuio_impl_transfer_warp) one by one, timed. Each warp reads p[2] chunks of p[1]
 * bytes (at most the slot size) from file endpoint p[0] at (warp * p[2] + i) * p[1]
 * into a 1 MiB piece of device memory.
 * out: [3] ns taking slots, [4] ns submitting and waiting for the host, [5] ns
 * copying out of staging, [6] ns giving slots back (sums over warps and chunks),
 * [7] bytes, [8] failures, [9] chunks, [10] the kernel's first start, [11] its last
 * end (ns). */
#define SINK_CHUNKS 256
#if defined(__CUDACC__)
__device__
#endif
    static char sink[SINK_CHUNKS][1 << 20];

GPUIO_KERNEL(bulksteps)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask), count = gpuio_warp_count(mask);
  const gpuio_u64 warp = gpuio_warp_id(), chunk = p[1], per = p[2];
  char *dst = sink[warp % SINK_CHUNKS];
  gpuio_u64 t_acq = 0, t_run = 0, t_copy = 0, t_rel = 0, bytes = 0, fails = 0;
  const gpuio_u64 begin = gpuio_now_ns();
  for (gpuio_u64 i = 0; i < per; i++) {
    const gpuio_i64 off = (gpuio_i64)((warp * per + i) * chunk);
    const gpuio_u64 t0 = gpuio_now_ns();
    gpuio_slot s = {};
    gpuio_i64 got = 0;
    if (rank == 0) got = gpuio_impl_acquire(ch, &s, gpuio_impl_deadline(ch));
    got = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)got, leader);
    if (got) {
      fails++;
      continue;
    }
    char *staging = (char *)gpuio_warp_broadcast_64(mask, (gpuio_u64)s.staging, leader);
    const gpuio_u64 t1 = gpuio_now_ns();
    gpuio_i64 res = 0;
    int w = 0;
    if (rank == 0) {
      gpuio_request r = {GPUIO_OP_PREAD, (gpuio_u32)p[0], (gpuio_u32)chunk, 0, s.staging_off, off};
      w = gpuio_impl_run(ch, &s, &r, &res);
      if (w) res = w;
    }
    res = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)res, leader);
    const gpuio_u64 t2 = gpuio_now_ns();
    if (res > 0) {
      gpuio_impl_copy_warp(dst, staging, (gpuio_u64)res, rank, count);
      gpuio_warp_sync(mask);
    }
    const gpuio_u64 t3 = gpuio_now_ns();
    if (rank == 0 && !w) gpuio_impl_release(ch, &s);
    const gpuio_u64 t4 = gpuio_now_ns();
    if (res == (gpuio_i64)chunk) bytes += chunk;
    else fails++;
    t_acq += t1 - t0;
    t_run += t2 - t1;
    t_copy += t3 - t2;
    t_rel += t4 - t3;
  }
  const gpuio_u64 end = gpuio_now_ns();
  if (rank == 0) {
    gpuio_fetch_add_64(&p[3], t_acq);
    gpuio_fetch_add_64(&p[4], t_run);
    gpuio_fetch_add_64(&p[5], t_copy);
    gpuio_fetch_add_64(&p[6], t_rel);
    gpuio_fetch_add_64(&p[7], bytes);
    gpuio_fetch_add_64(&p[8], fails);
    gpuio_fetch_add_64(&p[9], per);
    gpuio_cas_64(&p[10], 0u, begin);
    gpuio_u64 seen = gpuio_ld_relaxed_64(&p[10]);
    while (begin < seen) seen = gpuio_cas_64(&p[10], seen, begin) == seen ? begin : gpuio_ld_relaxed_64(&p[10]);
    seen = gpuio_ld_relaxed_64(&p[11]);
    while (end > seen) seen = gpuio_cas_64(&p[11], seen, end) == seen ? end : gpuio_ld_relaxed_64(&p[11]);
  }
}
