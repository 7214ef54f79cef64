/* gpuio.h — GPU kernels doing real I/O. The one header a kernel includes.
 *
 * Compiles as CUDA (nvcc, NVRTC), HIP (hipcc, hiprtc) and host C++ (the CPU
 * device), with no include path beyond this directory and no system header on
 * the GPU targets. Parts, in order:
 *   gpuio/abi.h      the shared bytes (mirror of core/src/abi.rs)
 *   gpuio/arch.h     atomics, fences, clock and thread ids per compile target
 *   gpuio/printf.h   the device-side formatter (C99 conversions, byte-exact)
 *   gpuio/api.h      the calls, dispatched at run time on the transport:
 *     gpuio/direct.h   the device writes io_uring SQEs itself
 *     gpuio/forward.h  the device queues requests for a host forwarder
 *     gpuio/mailbox.h  one mailbox port per warp, served by a host thread
 *
 * Calls (all return >= 0 or -errno, and give up with -ETIMEDOUT at their deadline):
 *   gpuio_pwrite(ch, ep, buf, len, off)   gpuio_pread(ch, ep, buf, len, off)
 *   gpuio_write(ch, ep, buf, len)         gpuio_read(ch, ep, buf, len)
 *   gpuio_printf(ch, fmt, ...)            gpuio_fprintf(ch, ep, fmt, ...)
 *   gpuio_nop(ch)
 *   gpuio_user_staging(ch, &off, &len)    then gpuio_pwrite_staged / gpuio_pread_staged
 */
#ifndef GPUIO_H
#define GPUIO_H

#include "gpuio/abi.h"
#include "gpuio/arch.h"
#include "gpuio/printf.h"
#include "gpuio/api.h"

#endif /* GPUIO_H */
