// Kernels for tests/host_queues.rs: messages between kernels and the host program.
#include "gpuio.h"

// A message's length and bytes follow from (thread, i): the receiver can check every
// byte and the sender's order without any other record. Lengths are 8..=max.
GPUIO_FN gpuio_u32 msg_len(gpuio_u64 t, gpuio_u64 i, gpuio_u32 max) {
  gpuio_u64 h = (t * 0x9E3779B97F4A7C15ull) ^ (i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return 8u + (gpuio_u32)(h % (gpuio_u64)(max - 7u));
}
GPUIO_FN void msg_fill(char *m, gpuio_u64 t, gpuio_u64 i, gpuio_u32 len) {
  ((gpuio_u32 *)m)[0] = (gpuio_u32)t;
  ((gpuio_u32 *)m)[1] = (gpuio_u32)i;
  for (gpuio_u32 k = 8; k < len; ++k) m[k] = (char)(t * 31u + i * 7u + k);
}
GPUIO_FN bool msg_ok(const char *m, gpuio_u32 len, gpuio_u32 max) {
  if (len < 8) return false;
  gpuio_u64 t = ((const gpuio_u32 *)m)[0], i = ((const gpuio_u32 *)m)[1];
  if (len != msg_len(t, i, max)) return false;
  for (gpuio_u32 k = 8; k < len; ++k)
    if (m[k] != (char)(t * 31u + i * 7u + k)) return false;
  return true;
}

// params: [0] endpoint, [1] messages per thread, [2] max message, [3] sent (out),
// [4] first failure's -errno (out), [5] failures (out).
GPUIO_KERNEL(send_numbered)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 t = gpuio_global_thread_id();
  char m[1024];
  const gpuio_u32 max = (gpuio_u32)params[2];
  for (gpuio_u64 i = 0; i < params[1]; ++i) {
    const gpuio_u32 len = msg_len(t, i, max);
    msg_fill(m, t, i, len);
    gpuio_i64 r = gpuio_send(ch, (gpuio_u32)params[0], m, len);
    if (r == (gpuio_i64)len) {
      gpuio_fetch_add_64(&params[3], 1u);
    } else {
      gpuio_cas_64(&params[4], 0u, (gpuio_u64)(-r));
      gpuio_fetch_add_64(&params[5], 1u);
    }
  }
}

// Receives until the end of the stream, checking every byte. params: [0] endpoint,
// [1] max message, [2] received (out), [3] bad messages (out), [4] first -errno
// other than the end (out), [5] sum of (t << 32 | i) over messages (out), [6] the
// buffer's size (0: 1024 bytes; one shorter than the queue's longest message makes
// gpuio_recv look at each message before it takes it).
GPUIO_KERNEL(recv_checked)(const gpuio_channel *ch, gpuio_u64 *params) {
  char m[1024];
  const gpuio_u32 max = (gpuio_u32)params[1];
  const gpuio_u64 cap = params[6] && params[6] < sizeof m ? params[6] : sizeof m;
  for (;;) {
    gpuio_i64 r = gpuio_recv(ch, (gpuio_u32)params[0], m, cap);
    if (r == 0) break;
    if (r < 0) {
      gpuio_cas_64(&params[4], 0u, (gpuio_u64)(-r));
      break;
    }
    if (!msg_ok(m, (gpuio_u32)r, max)) {
      gpuio_fetch_add_64(&params[3], 1u);
      continue;
    }
    gpuio_fetch_add_64(&params[2], 1u);
    gpuio_fetch_add_64(&params[5], ((gpuio_u64)((gpuio_u32 *)m)[0] << 32) | ((gpuio_u32 *)m)[1]);
  }
}

// A persistent worker: takes numbers from the queue to the device (endpoint
// params[0]) and sends back each number and its square to the host (params[1])
// until the host closes its end. params[2]: items done (out); params[3]: first
// failure's -errno (out).
GPUIO_KERNEL(square_worker)(const gpuio_channel *ch, gpuio_u64 *params) {
  for (;;) {
    gpuio_u64 x = 0;
    gpuio_i64 r = gpuio_recv(ch, (gpuio_u32)params[0], &x, sizeof x);
    if (r == 0) break;
    if (r != (gpuio_i64)sizeof x) {
      gpuio_cas_64(&params[3], 0u, (gpuio_u64)(r < 0 ? -r : 1000));
      break;
    }
    gpuio_u64 out[2] = {x, x * x};
    r = gpuio_send(ch, (gpuio_u32)params[1], out, sizeof out);
    if (r != (gpuio_i64)sizeof out) {
      gpuio_cas_64(&params[3], 0u, (gpuio_u64)(r < 0 ? -r : 1000));
      break;
    }
    gpuio_fetch_add_64(&params[2], 1u);
  }
}

// Every way to misuse a queue, each answer stored in params[i] as -errno (0 for
// success). params[0]: the queue to the host; params[1]: the queue to the device;
// answers from params[8] on.
GPUIO_KERNEL(misuse)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u32 to_host = (gpuio_u32)params[0], to_dev = (gpuio_u32)params[1];
  char big[1024] = {0};
  char buf[64];
  gpuio_u64 *out = params + 8;
  out[0] = (gpuio_u64)-gpuio_recv(ch, to_host, buf, sizeof buf);          // receive on a queue to the host
  out[1] = (gpuio_u64)-gpuio_send(ch, to_dev, "x", 1);                     // send on a queue to the device
  out[2] = (gpuio_u64)-gpuio_send(ch, to_host, big, sizeof big);           // longer than the maximum
  out[3] = (gpuio_u64)-gpuio_send(ch, 1000u, "x", 1);                      // no such endpoint
  out[4] = (gpuio_u64)-gpuio_send((const gpuio_channel *)0, to_host, "x", 1); // null channel
  out[5] = (gpuio_u64)-gpuio_try_recv(ch, to_dev, buf, sizeof buf);        // nothing there yet
  out[6] = (gpuio_u64)-gpuio_pwrite(ch, to_host, "x", 1, 0);               // a request on a queue
  out[7] = (gpuio_u64)-gpuio_recv((const gpuio_channel *)0, to_dev, buf, sizeof buf);
  out[8] = (gpuio_u64)-gpuio_send(ch, to_host, (const void *)0, 4);        // no bytes to send
}

// Scribbles over ring 0 of queue params[0] (in the queue table): the first cell's
// stamp claims a far-future position, 123456788 (7 bytes, a group of 1).
GPUIO_KERNEL(scribble)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_queue *q = gpuio_ptr<const gpuio_queue>(ch->queues) + params[0];
  gpuio_cell_header *h = gpuio_ptr<gpuio_cell_header>(q->cells_addr);
  gpuio_st_release_64(&h->stamp, gpuio_impl_cell_stamp(123456788u, 7u, 1u));
}

// One warp-cooperative send per warp of params[1] bytes on endpoint params[0].
// params[2]: sent (out), params[3]: first failure (out).
GPUIO_KERNEL(send_warp)(const gpuio_channel *ch, gpuio_u64 *params) {
  char m[512];
  const gpuio_u64 w = gpuio_warp_id();
  for (gpuio_u32 k = 0; k < (gpuio_u32)params[1]; ++k) m[k] = (char)(w + k);
  gpuio_i64 r = gpuio_send_warp(ch, (gpuio_u32)params[0], m, params[1]);
  if (r == (gpuio_i64)params[1]) {
    if (gpuio_warp_rank(gpuio_warp_active()) == 0) gpuio_fetch_add_64(&params[2], 1u);
  } else {
    gpuio_cas_64(&params[3], 0u, (gpuio_u64)(r < 0 ? -r : 1000));
  }
}
