#define GPUIO_MAX_BLOCK 256
#include "gpuio.h"

GPUIO_KERNEL(bound)(const gpuio_channel *ch, gpuio_u64 *params) {
  (void)params;
  if (gpuio_global_thread_id() == 0) gpuio_printf(ch, "threads %llu\n", gpuio_thread_count());
}
