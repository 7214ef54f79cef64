#define GPUIO_DEBUG_PUBLISH 1
#include "gpuio.h"
/* params: [0] NOPs per thread; out: [1] failed, [2..7] the publisher's counters:
 * passes, positions published, ns walking, ns storing+unlocking, passes publishing any, longest run */
__device__ unsigned long long nops_finished;
GPUIO_KERNEL(pubdbg)(const gpuio_channel *ch, gpuio_u64 *params) {
  gpuio_u64 bad = 0;
  for (gpuio_u64 i = 0; i < params[0]; i++)
    if (gpuio_nop(ch) < 0) bad++;
  if (bad) atomicAdd((unsigned long long *)&params[1], (unsigned long long)bad);
  __threadfence();
  if (atomicAdd(&nops_finished, 1ull) + 1 == gpuio_thread_count()) {
    __threadfence();
    for (int i = 0; i < 6; i++) params[2 + i] = atomicAdd(&gpuio_dbg_pub[i], 0ull);
  }
}
