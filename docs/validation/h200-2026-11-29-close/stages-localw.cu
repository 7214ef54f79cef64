#define GPUIO_EXP_LOCAL_CLOSE 1
#define GPUIO_EXP_WAIT_CAP 256u
#define GPUIO_EXP_TURN_CAP 256u
#define GPUIO_DEBUG_STAGES 1
#include "gpuio.h"
/* params: [0] NOPs per thread; out: [1] failed, [2] first start ns, [3] last end ns, [4..17] stage sums:
 * fetch_add, fence.sc.sys, closing read, SQE writes, release+fence, fills, fill->tail, tail->done, done->seen,
 * seen count, seen->next take, handoffs, take->fill, publish call */
__device__ unsigned long long stages_finished;
GPUIO_KERNEL(stages)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t0 = gpuio_now_ns();
  gpuio_u64 bad = 0;
  for (gpuio_u64 i = 0; i < params[0]; i++)
    if (gpuio_nop(ch) < 0) bad++;
  const gpuio_u64 t1 = gpuio_now_ns();
  if (bad) atomicAdd((unsigned long long *)&params[1], (unsigned long long)bad);
  atomicMin((unsigned long long *)&params[2], (unsigned long long)t0);
  atomicMax((unsigned long long *)&params[3], (unsigned long long)t1);
  __threadfence();
  if (atomicAdd(&stages_finished, 1ull) + 1 == gpuio_thread_count()) {
    __threadfence();
    for (int i = 0; i < 14; i++) params[4 + i] = atomicAdd(&gpuio_dbg_st[i], 0ull);
  }
}
