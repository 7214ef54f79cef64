// A kernel for tests/examples.rs's `gpuio run --queue-out`: every thread sends
// params[0] records of 16 bytes on endpoint 0 (a queue to the host): its global id,
// then the record's number. params[1] (out): sends that failed.
#include "gpuio.h"

GPUIO_KERNEL(send_records)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t = gpuio_global_thread_id();
  for (gpuio_u64 i = 0; i < params[0]; i++) {
    const gpuio_u64 record[2] = {t, i};
    if (gpuio_send(ch, 0, record, sizeof record) != (gpuio_i64)sizeof record) gpuio_fetch_add_64(&params[1], 1);
  }
}
