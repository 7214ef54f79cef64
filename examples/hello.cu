#include "gpuio.h"

GPUIO_KERNEL(hello)(const gpuio_channel *ch, gpuio_u64 *params) {
  gpuio_u64 t = gpuio_global_thread_id();
  char line[64];
  int n = gpuio_snprintf(line, sizeof line, "thread %llu of %llu\n", t, gpuio_thread_count());
  gpuio_pwrite(ch, /*endpoint*/ 0, line, n, (gpuio_i64)(t * 64)); /* >= 0 or -errno */
  gpuio_printf(ch, "thread %llu says hello\n", t);                 /* one whole line */
}
