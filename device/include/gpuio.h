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
 *   gpuio/queue.h    host queues (gpuio_send / gpuio_recv), beside any transport
 *   gpuio/log.h      gpuio_printf / gpuio_fprintf: lines over a printf log stream
 *
 * A kernel:
 *   #include "gpuio.h"
 *   GPUIO_KERNEL(name)(const gpuio_channel *ch, gpuio_u64 *params) { ... }
 * `ch` is the channel the host opened. `params` is the u64 array the host passed
 * (`gpuio run --arg/--params`): the kernel may read and write it (device memory on
 * a GPU: the atomics below work on it) and the host gets it back when the kernel
 * ends; the kernel is not told its length and must not index past it.
 * Helper functions a kernel calls are declared `GPUIO_FN` (static, inline, and
 * __device__ where the target needs it): `GPUIO_FN int is_space(char c) {...}`.
 * Compile time. Every gpuio call is inlined where it is made, which is fastest to
 * run and slow to compile when a kernel makes many: define GPUIO_OUT_OF_LINE before
 * including gpuio.h and the engines behind the calls are compiled once per kernel
 * and called instead. On an H100's host (2026-11-27, NVRTC's options under nvcc, one
 * kernel a compile): a kernel of eleven queue calls 74.5 s of CPU inlined, 3.9 s out
 * of line; gpuio's 33 built-in kernels 401 s against 131. What a call costs (H100,
 * the same day, every engine out of line against inlined, interleaved): forward's
 * NOP p50 5.44-5.73 against 5.44 us, its 64 B pwrite p50 7.84-8.26 against 6.78-8.03,
 * direct's NOP 16.6-16.8 against 16.3-16.4; in one run each, NOPs from the whole
 * device 26.8 against 28.1 M/s and 64 B pwrites from 64 threads 2.00 against 3.30
 * M/s. gpuio's own kernels that test many calls each are compiled out of line.
 * Polling. A synchronous call on forward waits GPUIO_FIRST_POLL_FORWARD_NS (250 ns),
 * on mailbox GPUIO_FIRST_POLL_NS (350 ns), after handing its request over before its
 * first read of the answer across PCIe, which would otherwise come back empty and
 * cost a whole read more (gpuio/api.h says what was measured); a kernel may define
 * its own before including gpuio.h (GPUIO_FIRST_POLL_NS alone sets both).
 * Kernels are written in terms of global thread ids: there are no block ids,
 * shared memory or barriers, because the CPU device runs every thread on its own.
 * Endpoints are indices into the host's table (`gpuio run --file` order), never fds.
 *
 * Calls. All return >= 0 or -errno (EBADF: no such endpoint or not registered for
 * that access; EINVAL: a bad length or offset, or a null `ch`; ESPIPE: a
 * positioned call on a stream; EPIPE: a send or write to a socket or pipe whose
 * peer closed - never a SIGPIPE in the host, on any transport), never trap (not even on a null `ch`), give up with -ETIMEDOUT at their deadline, and return
 * -ESHUTDOWN once the host closes the channel:
 *   gpuio_i64 gpuio_pwrite(ch, gpuio_u32 ep, const void *buf, gpuio_u64 len, gpuio_i64 off)
 *   gpuio_i64 gpuio_pread (ch, gpuio_u32 ep, void *buf, gpuio_u64 len, gpuio_i64 off)
 *       files; any length (split into slot-sized requests); bytes moved, which may be
 *       short like pwrite(2)/pread(2) (0 at end of file)
 *   gpuio_i64 gpuio_write(ch, ep, buf, len)   gpuio_i64 gpuio_read(ch, ep, buf, len)
 *       streams (stdout, pipes, sockets, O_APPEND files); read returns what one
 *       read(2) gave, at most one slot. On a socket they are send(2) with
 *       MSG_NOSIGNAL and recv(2), as gpuio_send / gpuio_recv
 *   gpuio_i64 gpuio_printf(ch, fmt, ...)      to the host's stdout endpoint (gpuio_printf
 *   gpuio_i64 gpuio_fprintf(ch, ep, fmt, ...) writes there) as one whole line, so output
 *       of different threads never interleaves within a call; add the '\n' yourself.
 *       Returns the bytes written. Where the host gave the endpoint a printf log
 *       (stdout has one by default) the line is formatted on the device and
 *       appended to a stream that a host thread writes out while the kernel runs:
 *       no round trip per line, one thread's lines in order, a full log waited on
 *       (then -ETIMEDOUT, counted by the channel), never overwritten. A line is at
 *       most the log's maximum (1023 bytes by default) or, without a log, slot_size
 *       - 1 bytes (64 KiB - 1 by default): longer output is cut to that many bytes
 *       ending with the format's final '\n' (so the next line starts on its own
 *       line), written, and the call returns -EMSGSIZE; output longer than INT_MAX
 *       bytes writes nothing and returns -EOVERFLOW
 *   gpuio_i64 gpuio_nop(ch)                   a round trip that does nothing
 *   char *gpuio_user_staging(ch, &off, &len)  then gpuio_pwrite_staged / gpuio_pread_staged
 *       (ch, ep, staging_off, len, off): I/O on bytes already in the staging area
 *       (NULL with off = len = 0 for a null `ch`)
 *   gpuio_i64 gpuio_pwrite_warp(ch, ep, buf, len, off)   warp-cooperative: every
 *   gpuio_i64 gpuio_pread_warp (ch, ep, buf, len, off)   active lane of the warp
 *       calls with the same arguments and gets the same result; the lanes copy
 *       side by side and one lane makes one request per slot_size bytes
 *   gpuio_ticket t;                           asynchronous: several requests in flight
 *   gpuio_i64 gpuio_pwrite_async(ch, ep, buf, len, off, &t)   per thread. Start one of
 *   gpuio_i64 gpuio_pread_async (ch, ep, buf, len, off, &t)   at most slot_size bytes:
 *       0 (in flight) or -errno (-EMSGSIZE: too long); a write's bytes are copied
 *       at once, a read's land in buf at gpuio_wait
 *   int gpuio_test(ch, &t)       1 finished, 0 still in flight (never waits)
 *   gpuio_i64 gpuio_wait(ch, &t) the result (bytes or -errno); frees the ticket's
 *       slot. Every started ticket must be waited for; each holds one of the
 *       channel's slots until then, so keep fewer in flight (all threads together)
 *       than the channel has slots (256 by default)
 * Messages (host queues: framed messages to and from the host program itself, no
 * syscall and no round trip per message). On a socket endpoint gpuio_send is
 * send(2) with MSG_NOSIGNAL (split into slot-sized requests; may be short) and
 * gpuio_recv one recv(2) of at most a slot (0 once the peer shut down its side);
 * on a pipe they are gpuio_write / gpuio_read:
 *   gpuio_i64 gpuio_send(ch, ep, msg, len)      one message of at most the queue's
 *       maximum (-EMSGSIZE): len or -errno. The lanes of a warp that send together
 *       make one reservation and one publish. A full queue is waited on until the
 *       deadline (-ETIMEDOUT), never overwritten; one thread's messages arrive in
 *       the order it sent them
 *   gpuio_i64 gpuio_recv(ch, ep, buf, cap)      one message: its length; 0 once the
 *       host closed its Sender and the queue is empty; -EMSGSIZE if it is longer
 *       than cap (it stays queued); -ETIMEDOUT if none came before the deadline
 *   gpuio_try_send / gpuio_try_recv             the same without waiting: -EAGAIN
 *   gpuio_i64 gpuio_send_warp(ch, ep, msg, len) every active lane passes the same
 *       message; the lanes copy it side by side and it is sent once
 *   Sending on a queue to the device, or receiving on one to the host, is -EBADF.
 * Helpers:
 *   int gpuio_snprintf(buf, cap, fmt, ...)   C99 snprintf (%d %u %x %s %c %p %f %e %g,
 *       flags, width, precision, hh/h/l/ll/z); returns the length it would have written
 *   gpuio_global_thread_id(), gpuio_thread_count()   this thread, all threads (u64)
 *   gpuio_lane_id(), gpuio_warp_id()                 within and of its warp
 *   gpuio_fetch_add_64(p, v), gpuio_cas_32/64(p, expect, desired)   device atomics;
 *       they return the old value
 *   gpuio_ld_acquire_64(p), gpuio_st_release_64(p, v), gpuio_fence_sc()   ordering
 *   gpuio_now_ns()                           a monotonic clock
 * Types: gpuio_u8/u16/u32/u64, gpuio_i32/i64. Names not listed here (gpuio_impl_*,
 * gpuio_direct_*, gpuio_forward_*, gpuio_mailbox_*, gpuio_fmt_*) are not API.
 */
#ifndef GPUIO_H
#define GPUIO_H

#include "gpuio/abi.h"
#include "gpuio/arch.h"
#include "gpuio/printf.h"
#include "gpuio/api.h"
#include "gpuio/queue.h"
#include "gpuio/log.h"

#endif /* GPUIO_H */
