#include "gpuio.h"
/* params: [0] calls per thread, [1] op mix (bits: 1 pwrite, 2 pread, 4 printf; 0 nop);
 * out: [2] failures (r < 0), [3] first failure */
GPUIO_KERNEL(sweep)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  char row[49];
  gpuio_snprintf(row, sizeof row, "t=%010llu gpuio sweep row ......................\n", t);
  for (gpuio_u64 i = 0; i < p[0]; i++) {
    gpuio_i64 r = 0;
    const gpuio_u64 m = p[1];
    if (m == 0) r = gpuio_nop(ch);
    if ((m & 1) && r >= 0) r = gpuio_pwrite(ch, 0, row, 48, (gpuio_i64)(t * 48));
    if ((m & 2) && r >= 0) r = gpuio_pread(ch, (m & 8) ? 1 : 0, row, 48, (gpuio_i64)(t * 48));
    if ((m & 4) && r >= 0) r = gpuio_printf(ch, "t=%010llu gpuio sweep line %d ..............\n", t, 7);
    if (r < 0) {
      if (gpuio_fetch_add_64(&p[2], 1) == 0) p[3] = (gpuio_u64)r;
    }
  }
}
