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
 * A kernel:
 *   #include "gpuio.h"
 *   GPUIO_KERNEL(name)(const gpuio_channel *ch, gpuio_u64 *params) { ... }
 * `ch` is the channel the host opened; `params` the u64 array the host passed
 * (the kernel may write it; the host gets it back when the kernel ends).
 * Endpoints are indices into the host's table (`gpuio run --file` order), never fds.
 *
 * Calls (all return >= 0 or -errno, never trap, and give up with -ETIMEDOUT at
 * their deadline; -ESHUTDOWN once the host closes the channel):
 *   gpuio_pwrite(ch, ep, buf, len, off)   gpuio_pread(ch, ep, buf, len, off)   files
 *   gpuio_write(ch, ep, buf, len)         gpuio_read(ch, ep, buf, len)         streams
 *   gpuio_printf(ch, fmt, ...)            gpuio_fprintf(ch, ep, fmt, ...)      one whole line
 *   gpuio_nop(ch)
 *   gpuio_user_staging(ch, &off, &len)    then gpuio_pwrite_staged / gpuio_pread_staged
 * Helpers:
 *   gpuio_snprintf(buf, cap, fmt, ...)    C99 snprintf (%d %u %x %s %c %p %f %e %g, widths,
 *                                         l/ll/z/h); returns the length it would have written
 *   gpuio_global_thread_id(), gpuio_thread_count(), gpuio_lane_id(), gpuio_warp_id()
 *   gpuio_fetch_add_64(p, v), gpuio_cas_32/64(p, expect, desired)   device atomics
 *   gpuio_ld_acquire_64(p), gpuio_st_release_64(p, v), gpuio_fence_sc()   ordering
 *   gpuio_now_ns()                        a monotonic clock
 * Types: gpuio_u8/u16/u32/u64, gpuio_i32/i64. Names not listed here (gpuio_impl_*,
 * gpuio_direct_*, gpuio_forward_*, gpuio_mailbox_*, gpuio_fmt_*) are not API.
 */
#ifndef GPUIO_H
#define GPUIO_H

#include "gpuio/abi.h"
#include "gpuio/arch.h"
#include "gpuio/printf.h"
#include "gpuio/api.h"

#endif /* GPUIO_H */
