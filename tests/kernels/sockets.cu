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
