// Does a read that never completes stall other threads' writes on the GPU only when
// the reader shares their warp? Thread 0 reads endpoint 1 (a FIFO nobody writes);
// 16 writer threads each write 20 eight-byte rows to endpoint 0: threads 1..16
// (same warp as the reader) or threads 32..47 (another warp), picked by params[0].
// out: [1] the read's result, [2] writes that went through, [3] writes that failed.
//   mkfifo /tmp/fifo; sleep 600 > /tmp/fifo &
//   gpuio run stuck_warp.cu --grid 1 --block 64 --slots 8 --call-timeout 2 \
//     --file rows=/tmp/rows:w --file fifo=/tmp/fifo:r --params 4 --arg 0   (or --arg 1)
#include "gpuio.h"

GPUIO_KERNEL(stuck_warp)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 first = p[0] ? 32u : 1u;
  if (t == 0) {
    char buf[16];
    p[1] = (gpuio_u64)gpuio_read(ch, 1, buf, sizeof buf);
    return;
  }
  if (t < first || t >= first + 16u) return;
  for (gpuio_u64 i = 0; i < 20; i++) {
    char row[8] = {'r', 'o', 'w', (char)('a' + t % 26), (char)('a' + i), ' ', ' ', '\n'};
    if (gpuio_pwrite(ch, 0, row, 8, (gpuio_i64)((t * 20 + i) * 8)) == 8) gpuio_fetch_add_64(&p[2], 1);
    else gpuio_fetch_add_64(&p[3], 1);
  }
}
