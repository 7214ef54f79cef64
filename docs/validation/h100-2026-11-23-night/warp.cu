#include "gpuio.h"
/* params: [0] calls per thread; each warp writes its lanes' 48-byte rows as one
 * 32 x 48-byte gpuio_pwrite_warp (the same bytes the per-thread sweep writes);
 * out: [2] failures, [3] first failure */
GPUIO_KERNEL(warp)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 base = t - gpuio_lane_id();
  char rows[32 * 48 + 1];
  for (int l = 0; l < 32; l++) {
    char row[49];
    gpuio_snprintf(row, sizeof row, "t=%010llu gpuio sweep row ......................\n", base + l);
    for (int j = 0; j < 48; j++) rows[l * 48 + j] = row[j];
  }
  for (gpuio_u64 i = 0; i < p[0]; i++) {
    gpuio_i64 r = gpuio_pwrite_warp(ch, 0, rows, 32 * 48, (gpuio_i64)(base * 48));
    if (r != 32 * 48 && gpuio_lane_id() == 0) {
      if (gpuio_fetch_add_64(&p[2], 1) == 0) p[3] = (gpuio_u64)r;
    }
  }
}
