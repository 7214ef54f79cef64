/* gpuio/log.h — gpuio_printf / gpuio_fprintf.
 *
 * On an endpoint the host gave a printf log (stdout by default; any stream or file
 * it chose), printf is a stream, not a request: each thread formats its line on the
 * device, and the lanes of a warp that print together append their lines to the
 * log's ring (`warp % rings`) with one reservation, side-by-side copies and one
 * publish (the host-queue machinery of gpuio/queue.h). A host thread drains the
 * log and writes whole lines to the endpoint's descriptor while the kernel runs.
 * No round trip per line; one thread's lines keep their order; a full log is
 * waited on until the channel's deadline (-ETIMEDOUT, counted in the channel's
 * close report), never overwritten.
 *
 * Without a log, each call is one write(2) request through the transport
 * (gpuio_impl_fprintf_request in gpuio/api.h).
 */
#ifndef GPUIO_LOG_H
#define GPUIO_LOG_H

/* Bytes of a line formatted in the thread's own (local) memory before it is copied
 * to the log side by side with the warp's other lines. A longer line (up to the
 * log's maximum) is formatted straight into its cell instead, which is slower.
 * A kernel may define it before including gpuio.h. */
#ifndef GPUIO_PRINTF_LOCAL
#define GPUIO_PRINTF_LOCAL 256
#endif

/* The printf log of endpoint `ep`, or NULL when it has none. The host lays a log
 * out with max_message = its longest line + 1 (room for the formatter's NUL). */
GPUIO_FN const gpuio_queue *gpuio_impl_log(const gpuio_channel *ch, gpuio_u32 ep) {
  if (ep >= ch->endpoint_count || ch->queues == 0) return nullptr;
  const gpuio_endpoint *e = gpuio_ptr<const gpuio_endpoint>(ch->endpoints) + ep;
  if (e->log == 0 || e->log > ch->queue_count) return nullptr;
  const gpuio_queue *q = gpuio_ptr<const gpuio_queue>(ch->queues) + (e->log - 1u);
  if (q->direction != GPUIO_QUEUE_TO_HOST || q->rings == 0 || !gpuio_impl_queue_cells_ok(q) || q->max_message < 2u)
    return nullptr;
  return q;
}

/* Cuts a formatted line of `full` bytes to `cap` bytes (the formatter wrote the
 * first `cap` into `line`), keeping the format's final newline, so the next line
 * never starts glued to it. Returns the bytes to write. */
GPUIO_FN gpuio_u64 gpuio_impl_cut_line(char *line, gpuio_u64 full, gpuio_u64 cap, const char *fmt) {
  if (full <= cap) return full;
  if (gpuio_impl_ends_with_newline(fmt)) line[cap - 1] = '\n';
  return cap;
}

/* Formats `fmt` and writes it to `ep` as one whole line: the bytes written, or
 * -errno. Lines of different threads never interleave.
 *   -EMSGSIZE  the output was longer than one line may be (the log's maximum,
 *              1023 bytes by default; without a log, slot_size - 1): its first
 *              bytes and the format's final '\n' were written, so the next line
 *              still starts on its own line; the rest is lost;
 *   -EOVERFLOW the output would have been longer than INT_MAX bytes; nothing is
 *              written;
 *   -ETIMEDOUT the log stayed full until the channel's deadline (the host cannot
 *              write as fast as the kernel prints); the line is dropped, and the
 *              channel's close report counts it among its timeouts.
 * An empty result writes nothing and returns 0. */
template <typename... A>
GPUIO_FN gpuio_i64 gpuio_fprintf(const gpuio_channel *ch, gpuio_u32 ep, const char *fmt, A... args) {
  const gpuio_u64 mask = gpuio_warp_active();
  /* A log learns of closing from its rings' polls (gpuio/queue.h); a request checks
   * it first, as every request does. */
  int e = gpuio_impl_check_descriptor(ch);
  if (!e) {
    gpuio_request probe = {GPUIO_OP_WRITE, ep, 1, 0, 0, -1};
    e = gpuio_impl_check_request(ch, &probe);
  }
  const gpuio_queue *q = e ? nullptr : gpuio_impl_log(ch, ep);
  char line[GPUIO_PRINTF_LOCAL];
  gpuio_u64 n = 0, full = 0;
  bool local = true;
  if (q) {
    const int f = gpuio_snprintf(line, sizeof line, fmt, args...);
    if (f < 0) e = -GPUIO_EOVERFLOW;
    full = f < 0 ? 0 : (gpuio_u64)f;
    local = full < sizeof line;
    if (local) n = gpuio_impl_cut_line(line, full, q->max_message - 1u, fmt);
    else n = full < q->max_message - 1u ? full : q->max_message - 1u;
  }
  /* Lanes with a line for a log append it as one group per log; every lane of
   * `mask` takes part in the ballot before any answers. */
  gpuio_u64 rest = gpuio_warp_ballot(mask, e == 0 && q && n > 0);
  if (e) return e;
  if (!q) {
    e = gpuio_impl_check_channel(ch);
    return e ? e : gpuio_impl_fprintf_request(ch, ep, fmt, args...);
  }
  if (n == 0) return 0;
  for (;;) {
    const gpuio_u32 lead = gpuio_warp_leader(rest);
    const gpuio_u32 lead_ep = (gpuio_u32)gpuio_warp_broadcast_64(rest, ep, lead);
    const gpuio_u64 g = gpuio_warp_ballot(rest, ep == lead_ep);
    if (ep != lead_ep) {
      rest &= ~g;
      continue;
    }
    gpuio_u32 ring = 0;
    gpuio_u64 base = 0;
    const int r = gpuio_impl_queue_group_reserve(ch, q, g, true, &ring, &base);
    if (r) return r == -GPUIO_ETIMEDOUT ? gpuio_impl_count_timeout(ch, r) : r;
    gpuio_impl_queue_fill_group(q, ring, base, g, line, local ? (gpuio_u32)n : 0u, (gpuio_u32)n);
    if (!local) {
      /* A line longer than the local buffer: formatted again, straight into its cell
       * (room for max_message bytes: the line and the formatter's NUL). */
      char *cell = (char *)(gpuio_impl_cell(q, ring, base + gpuio_warp_rank(g)) + 1);
      gpuio_snprintf(cell, n + 1u, fmt, args...);
      gpuio_impl_cut_line(cell, full, n, fmt);
    }
    gpuio_impl_queue_group_publish(ch, q, ring, base, g, (gpuio_u32)n);
    return full > n ? -GPUIO_EMSGSIZE : (gpuio_i64)n;
  }
}

/* printf to the channel's stdout endpoint (-EBADF when the host registered none). */
template <typename... A> GPUIO_FN gpuio_i64 gpuio_printf(const gpuio_channel *ch, const char *fmt, A... args) {
  const int e = gpuio_impl_check_descriptor(ch); /* before reading ch->stdout_endpoint */
  if (e) return e;
  if (ch->stdout_endpoint < 0) return -GPUIO_EBADF;
  return gpuio_fprintf(ch, (gpuio_u32)ch->stdout_endpoint, fmt, args...);
}

#endif /* GPUIO_LOG_H */
