#include "gpuio.h"
/* params: [0] calls per thread, [1] 0 = nop, 1 = 48-byte pwrite; out: [2] failures, [3] first failure */
GPUIO_KERNEL(sweep)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  char row[49];
  gpuio_snprintf(row, sizeof row, "t=%010llu gpuio sweep row ......................\n", t);
  for (gpuio_u64 i = 0; i < p[0]; i++) {
    gpuio_i64 r = p[1] ? gpuio_pwrite(ch, 0, row, 48, (gpuio_i64)(t * 48)) : gpuio_nop(ch);
    if (r != (p[1] ? 48 : 0)) {
      if (gpuio_fetch_add_64(&p[2], 1) == 0) p[3] = (gpuio_u64)r;
    }
  }
}
