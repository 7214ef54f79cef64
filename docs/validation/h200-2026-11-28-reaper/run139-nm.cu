#define GPUIO_DEBUG_REAP 1
#include "gpuio.h"
/* params: [0] NOPs per thread; out: [1] failed, [2..9] the reaper's counters */
__device__ unsigned long long nops_finished;
GPUIO_KERNEL(nopsdbg)(const gpuio_channel *ch, gpuio_u64 *params) {
  gpuio_u64 bad = 0;
  for (gpuio_u64 i = 0; i < params[0]; i++)
    if (gpuio_nop(ch) < 0) bad++;
  if (bad) atomicAdd((unsigned long long *)&params[1], (unsigned long long)bad);
  __threadfence();
  if (atomicAdd(&nops_finished, 1ull) + 1 == gpuio_thread_count()) {
    __threadfence();
    for (int i = 0; i < 10; i++) params[2 + i] = atomicAdd(&gpuio_dbg_reap[i], 0ull);
  }
}
