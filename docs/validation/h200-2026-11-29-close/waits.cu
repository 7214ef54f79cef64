#define GPUIO_DEBUG_WAITS 1
#define GPUIO_EXP_TURN_CAP 256u
#include "gpuio.h"
/* params: [0] NOPs per thread; out: [1] failed, [2] first start, [3] last end, [4..11] sums over threads:
 * acquire ns, answer-wait ns, lap ns asked, next-in-line looks, held looks, held ns asked, answer polls, -;
 * [12] the slowest thread's acquire ns, [13] its answer-wait ns */
GPUIO_KERNEL(waits)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t0 = gpuio_now_ns();
  gpuio_u64 bad = 0;
  for (gpuio_u64 i = 0; i < params[0]; i++)
    if (gpuio_nop(ch) < 0) bad++;
  const gpuio_u64 t1 = gpuio_now_ns();
  if (bad) atomicAdd((unsigned long long *)&params[1], (unsigned long long)bad);
  atomicMin((unsigned long long *)&params[2], (unsigned long long)t0);
  atomicMax((unsigned long long *)&params[3], (unsigned long long)t1);
  const unsigned long long *mine = &gpuio_dbg_thr[(gpuio_global_thread_id() % 135168u) * 8u];
  for (int i = 0; i < 8; i++) atomicAdd((unsigned long long *)&params[4 + i], mine[i]);
  atomicMax((unsigned long long *)&params[12], mine[0]);
  atomicMax((unsigned long long *)&params[13], mine[1]);
}
