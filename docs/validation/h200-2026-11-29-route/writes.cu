#include "gpuio.h"
/* params: [0] file size; out: [1] bytes written, [2] failed calls, [3] first start ns, [4] last end ns.
 * Warp w writes 1 MiB chunks w, w + W, ... from its block's 1 MiB of device memory. */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__device__
#endif
char writes_buf[1ull << 20];
GPUIO_KERNEL(writes)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 size = params[0], chunk = 1ull << 20;
  const gpuio_u64 warp = gpuio_global_thread_id() / 32u, warps = gpuio_thread_count() / 32u;
  char *buf = writes_buf + ((gpuio_global_thread_id() / gpuio_thread_count() ) << 20);
  gpuio_u64 got_all = 0, bad = 0;
  const gpuio_u64 t0 = gpuio_now_ns();
  for (gpuio_u64 c = warp; c * chunk < size; c += warps) {
    const gpuio_i64 got = gpuio_pwrite_warp(ch, 0, buf, chunk, (gpuio_i64)(c * chunk));
    if (got != (gpuio_i64)chunk) bad++;
    else got_all += chunk;
  }
  const gpuio_u64 t1 = gpuio_now_ns();
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  if ((threadIdx.x & 31u) == 0u) {
    atomicAdd((unsigned long long *)&params[1], (unsigned long long)got_all);
    if (bad) atomicAdd((unsigned long long *)&params[2], (unsigned long long)bad);
    atomicMin((unsigned long long *)&params[3], (unsigned long long)t0);
    atomicMax((unsigned long long *)&params[4], (unsigned long long)t1);
  }
#else
  __atomic_fetch_add(&params[1], got_all, __ATOMIC_RELAXED);
  __atomic_fetch_add(&params[2], bad, __ATOMIC_RELAXED);
  gpuio_u64 m = __atomic_load_n(&params[3], __ATOMIC_RELAXED);
  while (t0 < m && !__atomic_compare_exchange_n(&params[3], &m, t0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  m = __atomic_load_n(&params[4], __ATOMIC_RELAXED);
  while (t1 > m && !__atomic_compare_exchange_n(&params[4], &m, t1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
#endif
}
