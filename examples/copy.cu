/* A parallel file copy: endpoint 0 is the source (read), endpoint 1 the copy
 * (write); params[0] is the source's size in bytes. Thread t copies chunks
 * t, t + T, t + 2T, … of CHUNK bytes. params[1] counts the bytes copied and
 * params[2] the calls that failed, over all threads.
 *
 *   gpuio run examples/copy.cu --grid 4 --block 32 --params 3 \
 *       --file src=input.bin:r --file dst=copy.bin:w --arg $(stat -c %s input.bin)
 */
#include "gpuio.h"

#define CHUNK 4096

GPUIO_KERNEL(copy)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 size = params[0];
  const gpuio_u64 threads = gpuio_thread_count();
  char buf[CHUNK];
  gpuio_u64 copied = 0, failed = 0;
  for (gpuio_u64 off = gpuio_global_thread_id() * CHUNK; off < size; off += threads * CHUNK) {
    gpuio_u64 want = size - off < CHUNK ? size - off : CHUNK;
    gpuio_i64 got = gpuio_pread(ch, 0, buf, want, (gpuio_i64)off);
    if (got <= 0) {
      failed++;
      continue;
    }
    gpuio_i64 put = gpuio_pwrite(ch, 1, buf, (gpuio_u64)got, (gpuio_i64)off);
    if (put != got) {
      failed++;
      continue;
    }
    copied += (gpuio_u64)put;
  }
  gpuio_fetch_add_64(&params[1], copied);
  gpuio_fetch_add_64(&params[2], failed);
}
