// gpuio_printf from every thread: params [0] lines per thread; out: [1] lines
// printed, [2] failures, [3] the first failure's -errno. Each line is 64 bytes.
//   gpuio run printf_flood.cu --grid 132 --block 1024 --arg 16 --params 4 [--no-log] > out.txt
#include "gpuio.h"

GPUIO_KERNEL(printf_flood)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  for (gpuio_u64 i = 0; i < p[0]; ++i) {
    gpuio_i64 r = gpuio_printf(ch, "thread %08llu line %08llu of the printf flood .............\n", t, i);
    if (r == 64) {
      gpuio_fetch_add_64(&p[1], 1u);
    } else {
      gpuio_cas_64(&p[3], 0u, (gpuio_u64)(-r));
      gpuio_fetch_add_64(&p[2], 1u);
    }
  }
}
