// The CPU device's runtime for kernels compiled at build time (runtime_body.h says
// what it holds and who else includes it).
#define GPUIO_CPU_RUNNER gpuio_cpu_run_thread
#include "runtime_body.h"
