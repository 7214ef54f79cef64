// Kernels for tests/printf_log.rs: gpuio_printf / gpuio_fprintf over a printf log.
#include "gpuio.h"

// params: [0] endpoint (any value over 2^32: gpuio_printf to stdout), [1] lines per
// thread; out: [2] lines printed whole, [3] calls that returned -ETIMEDOUT, [4] other
// failures, [5] the first such result's -errno.
// Line i of thread t: "t=<t> i=<i> " and a tail of (t + i) % 40 dots, then '\n'.
GPUIO_KERNEL(print_lines)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t = gpuio_global_thread_id();
  static const char dots[] = "........................................";
  for (gpuio_u64 i = 0; i < params[1]; ++i) {
    const int tail = (int)((t + i) % 40u);
    gpuio_i64 r;
    if (params[0] >> 32) r = gpuio_printf(ch, "t=%llu i=%llu %.*s\n", t, i, tail, dots);
    else r = gpuio_fprintf(ch, (gpuio_u32)params[0], "t=%llu i=%llu %.*s\n", t, i, tail, dots);
    if (r > 0) {
      gpuio_fetch_add_64(&params[2], 1u);
    } else if (r == -GPUIO_ETIMEDOUT) {
      gpuio_fetch_add_64(&params[3], 1u);
    } else {
      gpuio_cas_64(&params[5], 0u, (gpuio_u64)(-r));
      gpuio_fetch_add_64(&params[4], 1u);
    }
  }
}

// Prints one line, then writes garbage over the stamp of the next cell of the stdout
// log's ring 0. params: [0] the printf call's result (out).
GPUIO_KERNEL(scribble_log)(const gpuio_channel *ch, gpuio_u64 *params) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_queue *q = gpuio_impl_log(ch, (gpuio_u32)ch->stdout_endpoint);
  if (!q) {
    params[0] = (gpuio_u64)-1;
    return;
  }
  params[0] = (gpuio_u64)gpuio_printf(ch, "before the scribble\n");
  gpuio_cell_header *h = gpuio_impl_cell(q, 0, 1);
  gpuio_st_release_64(&h->stamp, 0xdeadbeefull);
}
