/* gpuio/direct.h — device side of the direct transport (placeholder: every call fails with -ENOSYS). */
#ifndef GPUIO_DIRECT_H
#define GPUIO_DIRECT_H

GPUIO_FN int gpuio_direct_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  (void)ch; (void)s; (void)deadline;
  return -GPUIO_ENOSYS;
}
GPUIO_FN void gpuio_direct_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  (void)ch; (void)s; (void)r;
}
GPUIO_FN int gpuio_direct_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  (void)ch; (void)s; (void)deadline; *result = -GPUIO_ENOSYS;
  return 0;
}
GPUIO_FN void gpuio_direct_release(const gpuio_channel *ch, gpuio_slot *s) { (void)ch; (void)s; }

#endif
