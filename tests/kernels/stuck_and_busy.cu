// Thread 0 reads endpoint 1 (a pipe nobody writes); every other thread writes 20
// eight-byte rows to endpoint 0 at its own offsets and counts the writes that went
// through in p[1]. p[0]: what the read returned.
#include "gpuio.h"

GPUIO_KERNEL(stuck_and_busy)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  if (t == 0) {
    char buf[16];
    p[0] = (gpuio_u64)gpuio_read(ch, 1, buf, sizeof buf);
    return;
  }
  for (gpuio_u64 i = 0; i < 20; i++) {
    char row[8] = {'r', 'o', 'w', (char)('a' + t), (char)('a' + i), ' ', ' ', '\n'};
    if (gpuio_pwrite(ch, 0, row, 8, (gpuio_i64)((t * 20 + i) * 8)) == 8) gpuio_fetch_add_64(&p[1], 1);
  }
}
