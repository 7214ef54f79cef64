// Kernels for tests/sockets.rs: a connected socket as a stream endpoint.
#include "gpuio.h"

GPUIO_FN void fail(gpuio_u64 *p, gpuio_i64 r) {
  gpuio_cas_64(&p[2], 0u, (gpuio_u64)(-r));
  gpuio_fetch_add_64(&p[3], 1u);
}

// Thread 0 sends back every byte it receives until the peer shuts its side down.
// params: [0] socket endpoint; out: [1] bytes echoed, [2] first failure's -errno,
// [3] failures.
GPUIO_KERNEL(echo)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u32 ep = (gpuio_u32)p[0];
  char buf[4096];
  for (;;) {
    const gpuio_i64 n = gpuio_recv(ch, ep, buf, sizeof buf);
    if (n == 0) return; /* the peer shut down its side */
    if (n < 0) return fail(p, n);
    for (gpuio_i64 off = 0; off < n;) {
      const gpuio_i64 w = gpuio_send(ch, ep, buf + off, (gpuio_u64)(n - off));
      if (w <= 0) return fail(p, w == 0 ? -1000 : w); /* 1000: a write of 0 bytes */
      off += w;
    }
    p[1] += (gpuio_u64)n;
  }
}

// Every thread prints params[1] lines "t=<t> i=<i>\n" to the socket with
// gpuio_fprintf. params: [0] socket endpoint, [1] lines per thread; out: [2] first
// failure's -errno, [3] failures.
GPUIO_KERNEL(print_to)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  for (gpuio_u64 i = 0; i < p[1]; ++i) {
    const gpuio_i64 r = gpuio_fprintf(ch, (gpuio_u32)p[0], "t=%llu i=%llu\n", t, i);
    if (r <= 0) fail(p, r);
  }
}

// Thread 0 sends 1 KiB at a time to a peer that has closed, until a send fails
// with something other than params[4] (ECONNRESET: TCP may say so once, for the
// reset that answered the first bytes), then writes once with gpuio_write.
// params: [0] socket endpoint, [4] the -errno to pass over; out: [1] sends that
// succeeded, [2] -errno of the send that ended the loop, [3] gpuio_write's result.
GPUIO_KERNEL(send_to_closed)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u32 ep = (gpuio_u32)p[0];
  char buf[1024];
  for (gpuio_u64 i = 0; i < sizeof buf; ++i) buf[i] = (char)i;
  for (int i = 0; i < 10000; ++i) {
    const gpuio_i64 r = gpuio_send(ch, ep, buf, sizeof buf);
    if (r >= 0) {
      p[1] += 1;
      continue;
    }
    if ((gpuio_u64)(-r) == p[4]) continue;
    p[2] = (gpuio_u64)(-r);
    break;
  }
  p[3] = (gpuio_u64)gpuio_write(ch, ep, buf, sizeof buf);
}

// Thread 0 receives twice from a peer that shut down its write side, then sends
// "still open" (its own side is), and receives once more with gpuio_read.
// params: [0] socket endpoint; out: [1] first gpuio_recv, [2] second gpuio_recv,
// [3] gpuio_send, [4] gpuio_read.
GPUIO_KERNEL(recv_after_shutdown)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u32 ep = (gpuio_u32)p[0];
  char buf[64];
  p[1] = (gpuio_u64)gpuio_recv(ch, ep, buf, sizeof buf);
  p[2] = (gpuio_u64)gpuio_recv(ch, ep, buf, sizeof buf);
  p[3] = (gpuio_u64)gpuio_send(ch, ep, "still open", 10);
  p[4] = (gpuio_u64)gpuio_read(ch, ep, buf, sizeof buf);
}

// A request made raw (past the device's own checks, as a kernel that bypasses the
// calls could): the transport alone answers. `len` bytes at the kernel's staging.
GPUIO_FN gpuio_i64 raw(const gpuio_channel *ch, gpuio_u32 op, gpuio_u32 ep, gpuio_u32 len) {
  gpuio_u64 off = 0, room = 0;
  char *user = gpuio_user_staging(ch, &off, &room);
  for (gpuio_u32 i = 0; i < len && i < room; ++i) user[i] = 'x';
  gpuio_request r = {op, ep, len, 0, off, -1};
  return gpuio_impl_request_raw(ch, &r);
}

// Thread 0 tries to send on a socket endpoint declared read-only, every way a
// kernel can, then receives what the peer wrote.
// params: [0] socket endpoint; out: [1] gpuio_send, [2] gpuio_write,
// [3] gpuio_send_warp, [4] a raw SEND, [5] a raw WRITE, [6] gpuio_recv,
// [7] the received bytes (up to 8).
GPUIO_KERNEL(send_on_read_only)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u32 ep = (gpuio_u32)p[0];
  p[1] = (gpuio_u64)gpuio_send(ch, ep, "nope", 4);
  p[2] = (gpuio_u64)gpuio_write(ch, ep, "nope", 4);
  p[3] = (gpuio_u64)gpuio_send_warp(ch, ep, "nope", 4);
  p[4] = (gpuio_u64)raw(ch, GPUIO_OP_SEND, ep, 4);
  p[5] = (gpuio_u64)raw(ch, GPUIO_OP_WRITE, ep, 4);
  char buf[8] = {};
  p[6] = (gpuio_u64)gpuio_recv(ch, ep, buf, sizeof buf);
  gpuio_u64 v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | (gpuio_u8)buf[i];
  p[7] = v;
}

// Thread 0 makes socket requests on endpoints that are no sockets, raw.
// params: [0] a file endpoint (read-write), [1] a pipe's write end, [2] its read
// end; out: [3] SEND on the file, [4] RECV on the file, [5] SEND on the pipe,
// [6] RECV on the pipe.
GPUIO_KERNEL(socket_ops_elsewhere)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  p[3] = (gpuio_u64)raw(ch, GPUIO_OP_SEND, (gpuio_u32)p[0], 4);
  p[4] = (gpuio_u64)raw(ch, GPUIO_OP_RECV, (gpuio_u32)p[0], 4);
  p[5] = (gpuio_u64)raw(ch, GPUIO_OP_SEND, (gpuio_u32)p[1], 4);
  p[6] = (gpuio_u64)raw(ch, GPUIO_OP_RECV, (gpuio_u32)p[2], 4);
}
