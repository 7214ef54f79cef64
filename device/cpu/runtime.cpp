// The CPU device's runtime: each emulated GPU thread is an OS thread that learns
// who it is from `gpuio_cpu_self`, then calls the kernel entry point.
#include "gpuio.h"

extern "C" {
thread_local gpuio_cpu_thread gpuio_cpu_self = {0, 1, 0};
}

typedef void (*gpuio_cpu_kernel)(const gpuio_channel *, gpuio_u64 *);

extern "C" void gpuio_cpu_run_thread(gpuio_cpu_kernel kernel, const gpuio_channel *ch, gpuio_u64 *params,
                                     gpuio_u64 global_id, gpuio_u64 thread_count) {
  gpuio_cpu_self.global_id = global_id;
  gpuio_cpu_self.thread_count = thread_count;
  gpuio_cpu_self.spins = 0;
  kernel(ch, params);
}
