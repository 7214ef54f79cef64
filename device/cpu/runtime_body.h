// The CPU device's runtime: each emulated GPU thread is an OS thread that learns
// who it is from `gpuio_cpu_self`, then calls the kernel entry point.
//
// Included once per image that runs kernels: by runtime.cpp into the static library
// linked into gpuio (runner `gpuio_cpu_run_thread`), and by the runtime unit the CPU
// device compiles into every shared object it builds from a kernel file at run time
// (device/src/cpu/compile.rs; runner `gpuio_cpu_module_run_thread`, everything else
// hidden by -fvisibility=hidden). A loaded module thus has its own `gpuio_cpu_self`
// and needs no symbol of the executable; the includer names the runner with
// GPUIO_CPU_RUNNER, so the two copies never share a name.
#ifndef GPUIO_CPU_RUNTIME_BODY_H
#define GPUIO_CPU_RUNTIME_BODY_H
#include "gpuio.h"

#ifndef GPUIO_CPU_RUNNER
#error "define GPUIO_CPU_RUNNER (the runner's symbol name) before including runtime_body.h"
#endif

extern "C" {
thread_local gpuio_cpu_thread gpuio_cpu_self = {0, 1, 0};
}

typedef void (*gpuio_cpu_kernel)(const gpuio_channel *, gpuio_u64 *);

/* The one entry point the host calls: runs `kernel` as emulated thread `global_id`
 * of `thread_count` on the calling OS thread. */
extern "C" __attribute__((visibility("default"))) void GPUIO_CPU_RUNNER(gpuio_cpu_kernel kernel,
                                                                        const gpuio_channel *ch, gpuio_u64 *params,
                                                                        gpuio_u64 global_id, gpuio_u64 thread_count) {
  gpuio_cpu_self.global_id = global_id;
  gpuio_cpu_self.thread_count = thread_count;
  gpuio_cpu_self.spins = 0;
  kernel(ch, params);
}

#endif /* GPUIO_CPU_RUNTIME_BODY_H */
