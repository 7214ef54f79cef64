/* A persistent worker fed by the host program through host queues: every thread
 * takes lines of text from a queue to the device (endpoint 0) until the host
 * closes it, and answers each through a queue to the host (endpoint 1) with the
 * line's number, its length in bytes, its words and its FNV-1a hash. A message to
 * the device is the line's number (4 bytes, little-endian) followed by the line;
 * an answer is a `line_answer`. params[0] counts the lines answered, params[1]
 * the failures, params[2] the first failure (-errno; -EPROTO for a message too
 * short to hold a line number).
 *
 * The host's half is examples/queue_worker.rs (cargo run --example queue_worker):
 * one async task feeds lines, another reads answers. `gpuio run` has no host queues.
 */
#include "gpuio.h"

struct line_answer {
  gpuio_u32 line;  /* the line's number */
  gpuio_u32 bytes; /* its length */
  gpuio_u32 words; /* runs of characters other than space, tab, CR, LF, VT, FF */
  gpuio_u32 zero;
  gpuio_u64 fnv1a; /* 64-bit FNV-1a hash of its bytes */
};

GPUIO_FN bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

GPUIO_FN void fail(gpuio_u64 *params, gpuio_i64 err) {
  if (gpuio_fetch_add_64(&params[1], 1) == 0) params[2] = (gpuio_u64)err;
}

GPUIO_KERNEL(queue_worker)(const gpuio_channel *ch, gpuio_u64 *params) {
  char msg[256];
  gpuio_u64 answered = 0;
  for (;;) {
    /* Waits for the next line; 0 once the host closed its end and every line
     * was taken: the work is done. */
    gpuio_i64 n = gpuio_recv(ch, 0, msg, sizeof msg);
    if (n == 0) break;
    if (n < 4) {
      fail(params, n < 0 ? n : -GPUIO_EPROTO);
      break;
    }
    line_answer a = {0, (gpuio_u32)(n - 4), 0, 0, 0xcbf29ce484222325ull};
    for (int k = 0; k < 4; k++) a.line |= (gpuio_u32)(unsigned char)msg[k] << (8 * k);
    for (gpuio_i64 i = 4; i < n; i++) {
      a.words += !is_space(msg[i]) && (i == 4 || is_space(msg[i - 1]));
      a.fnv1a = (a.fnv1a ^ (unsigned char)msg[i]) * 0x100000001b3ull;
    }
    gpuio_i64 sent = gpuio_send(ch, 1, &a, sizeof a);
    if (sent != (gpuio_i64)sizeof a) {
      fail(params, sent);
      break;
    }
    answered++;
  }
  if (answered) gpuio_fetch_add_64(&params[0], answered);
}
