#include "gpuio.h"
/* params: [0] NOPs per thread; out: [1] failed, [2] first start ns (min), [3] last end ns (max) */
GPUIO_KERNEL(nops)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t0 = gpuio_now_ns();
  gpuio_u64 bad = 0;
  for (gpuio_u64 i = 0; i < params[0]; i++)
    if (gpuio_nop(ch) < 0) bad++;
  const gpuio_u64 t1 = gpuio_now_ns();
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
  if (bad) atomicAdd((unsigned long long *)&params[1], (unsigned long long)bad);
  atomicMin((unsigned long long *)&params[2], (unsigned long long)t0);
  atomicMax((unsigned long long *)&params[3], (unsigned long long)t1);
#else
  __atomic_fetch_add(&params[1], bad, __ATOMIC_RELAXED);
  gpuio_u64 m = __atomic_load_n(&params[2], __ATOMIC_RELAXED);
  while (t0 < m && !__atomic_compare_exchange_n(&params[2], &m, t0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  m = __atomic_load_n(&params[3], __ATOMIC_RELAXED);
  while (t1 > m && !__atomic_compare_exchange_n(&params[3], &m, t1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
#endif
}
