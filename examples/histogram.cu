/* A byte histogram of a file: endpoint 0 is the input (read), endpoint 1 the
 * result (write). params[0] is the input's size; params[1] counts the threads
 * that finished; params[2 .. 258] are the 256 bins (the host passes them zeroed).
 * Each thread reads its slices and adds its counts to the bins; the last thread
 * to finish writes the result file, one line per byte value that occurs:
 * "0x41 65 1234" (the byte in hex, in decimal, its count).
 *
 *   gpuio run examples/histogram.cu --grid 8 --block 32 --params 258 \
 *       --file in=input.txt:r --file out=histogram.txt:w --arg $(stat -c %s input.txt)
 */
#include "gpuio.h"

#define SLICE 4096

GPUIO_KERNEL(histogram)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 size = params[0];
  const gpuio_u64 threads = gpuio_thread_count();
  gpuio_u64 *bins = params + 2;
  unsigned char buf[SLICE];
  gpuio_u32 mine[256] = {0};
  for (gpuio_u64 off = gpuio_global_thread_id() * SLICE; off < size; off += threads * SLICE) {
    gpuio_u64 want = size - off < SLICE ? size - off : SLICE;
    gpuio_i64 got = gpuio_pread(ch, 0, buf, want, (gpuio_i64)off);
    for (gpuio_i64 i = 0; i < got; i++) mine[buf[i]]++;
  }
  for (int b = 0; b < 256; b++)
    if (mine[b]) gpuio_fetch_add_64(&bins[b], mine[b]);
  /* The last thread to get here sees every other thread's counts. */
  gpuio_fence_sc();
  if (gpuio_fetch_add_64(&params[1], 1) != threads - 1) return;
  gpuio_fence_sc();
  char line[64];
  gpuio_i64 at = 0;
  for (int b = 0; b < 256; b++) {
    gpuio_u64 count = gpuio_ld_acquire_64(&bins[b]);
    if (count == 0) continue;
    int n = gpuio_snprintf(line, sizeof line, "0x%02x %3d %llu\n", b, b, count);
    if (gpuio_pwrite(ch, 1, line, (gpuio_u64)n, at) != n) return;
    at += n;
  }
}
