/* gpuio/queue.h — host queues and stream endpoints: gpuio_send / gpuio_recv.
 *
 * A host queue carries framed messages between a kernel and the host program
 * itself: no syscall, no request slot and no round trip per message. The layout
 * and who writes what are in abi.rs (`Queue`); in short:
 *   to the host   a sending warp's lanes that call together are one group: the
 *                 first lane reserves consecutive cells of the warp's ring by CAS on
 *                 the ring's device-local tail, only while the host's head (cached
 *                 on the device, re-read across PCIe only when the ring looks full)
 *                 leaves room; every lane fills its cell; one release store of the
 *                 first cell's stamp publishes the group. A full ring is waited on
 *                 (bounded) and never overwritten.
 *   to the device one reader at a time polls the host's published count for all
 *                 and adds what is new to the ring's device-local credits; a reading
 *                 warp takes credits and then positions with fetch-adds (a claim never
 *                 fails), copies its messages out and frees their cells in the
 *                 queue's free words (`frees[pos % cells] = pos + cells`).
 * On a socket endpoint gpuio_send and gpuio_recv are socket requests (SEND, RECV:
 * send(2) with MSG_NOSIGNAL and recv(2) - io_uring SEND/RECV on forward, the
 * syscalls on mailbox, WRITE_FIXED/READ_FIXED on direct, see gpuio/direct.h); on
 * any other stream endpoint (pipe, stdout, an O_APPEND file) gpuio_send is
 * gpuio_write and gpuio_recv is gpuio_read.
 */
#ifndef GPUIO_QUEUE_H
#define GPUIO_QUEUE_H

/* Whether a queue's cells per ring are what the host lays out: a power of two. */
GPUIO_FN bool gpuio_impl_queue_cells_ok(const gpuio_queue *q) {
  return q->cells != 0 && (q->cells & (q->cells - 1u)) == 0;
}

/* The queue behind endpoint `ep` if it is a host queue the kernel may use with
 * `access` (GPUIO_ACCESS_WRITE to send, _READ to receive). NULL with *err = 0 for
 * any other (stream) endpoint; NULL with *err = -errno when it cannot be used. */
GPUIO_FN const gpuio_queue *gpuio_impl_queue(const gpuio_channel *ch, gpuio_u32 ep, gpuio_u32 access, int *err) {
  *err = 0;
  if (ep >= ch->endpoint_count) {
    *err = -GPUIO_EBADF;
    return nullptr;
  }
  const gpuio_endpoint *e = gpuio_ptr<const gpuio_endpoint>(ch->endpoints) + ep;
  if (e->kind != GPUIO_EP_HOST_QUEUE) return nullptr;
  if (!(e->access & access)) {
    *err = -GPUIO_EBADF;
    return nullptr;
  }
  if (e->queue >= ch->queue_count || ch->queues == 0) {
    *err = -GPUIO_EPROTO;
    return nullptr;
  }
  const gpuio_queue *q = gpuio_ptr<const gpuio_queue>(ch->queues) + e->queue;
  const gpuio_u32 want = access == GPUIO_ACCESS_WRITE ? GPUIO_QUEUE_TO_HOST : GPUIO_QUEUE_TO_DEVICE;
  if (q->direction != want || q->rings == 0 || !gpuio_impl_queue_cells_ok(q) ||
      (want == GPUIO_QUEUE_TO_DEVICE && q->frees == 0)) {
    *err = -GPUIO_EPROTO;
    return nullptr;
  }
  return q;
}

/* Position `pos` of ring `ring`'s cells. The cells of a ring are a power of two
 * (gpuio_impl_queue_cells_ok, checked wherever a queue is looked up): a mask, not
 * a division, every cell a group writes. */
GPUIO_FN gpuio_cell_header *gpuio_impl_cell(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 pos) {
  const gpuio_u64 ring_bytes = (gpuio_u64)q->cells * q->cell_size;
  return gpuio_ptr<gpuio_cell_header>(q->cells_addr + ring * ring_bytes + (pos & (q->cells - 1u)) * q->cell_size);
}

/* A cell's stamp (gpuio/abi.h, gpuio_cell_header): it holds position `pos`'s
 * message of `len` bytes, the first of `count`. */
GPUIO_FN gpuio_u64 gpuio_impl_cell_tag(gpuio_u64 pos) { return (pos + 1u) & GPUIO_CELL_TAG_MASK; }
GPUIO_FN gpuio_u64 gpuio_impl_cell_stamp(gpuio_u64 pos, gpuio_u32 len, gpuio_u32 count) {
  return gpuio_impl_cell_tag(pos) | ((gpuio_u64)len & GPUIO_CELL_LEN_MASK) << GPUIO_CELL_LEN_SHIFT |
         (gpuio_u64)count << GPUIO_CELL_COUNT_SHIFT;
}
GPUIO_FN bool gpuio_impl_cell_holds(gpuio_u64 stamp, gpuio_u64 pos) {
  return (stamp & GPUIO_CELL_TAG_MASK) == gpuio_impl_cell_tag(pos);
}
GPUIO_FN gpuio_u32 gpuio_impl_cell_len(gpuio_u64 stamp) {
  return (gpuio_u32)((stamp >> GPUIO_CELL_LEN_SHIFT) & GPUIO_CELL_LEN_MASK);
}

/* How often, at most, the senders on a ring with room read the host's head and
 * `closing` for it (one sender for all, after its publish; ns). A full ring is
 * polled at once. */
#define GPUIO_QUEUE_POLL_NS 20000u

/* Takes ring `rs`'s poll lock (`polling`): whether this thread polls for all. The
 * compare-and-swap orders nothing (CUDA's atomicCAS is relaxed), so the word it just
 * wrote is read again with acquire: that store continues the release sequence of the
 * last poller's release of `polling`, so everything that poller did happens before
 * this poll. Without it two polls are unordered: a later poll may read the host's
 * words and `cached_head` older than the last one stored, and store a `cached_head`
 * below it (it then goes backwards: a reader of a queue to the device that acquired
 * `seen` CLOSED from the last poll read the smaller one, took the queue for ended
 * and left a message behind; loom model core/src/queue/loom_model_down.rs). One
 * load of device memory per poll, before its reads across PCIe. */
GPUIO_FN bool gpuio_impl_queue_lock_poll(gpuio_queue_ring *rs) {
  if (gpuio_cas_32(&rs->polling, 0u, 1u) != 0u) return false;
  (void)gpuio_ld_acquire_32(&rs->polling);
  return true;
}

/* One sender at a time reads the host's words for ring `rs` (to the host) for all the
 * others, who read the device-local copies instead of each crossing PCIe: the host's
 * head (acquire: the host copied those cells out before releasing it) into
 * `cached_head` (release), `closing` into `seen`, and when into `polled_at`. */
GPUIO_FN void gpuio_impl_queue_refresh(const gpuio_channel *ch, const gpuio_queue_control *ctl,
                                       gpuio_queue_ring *rs, gpuio_u64 now) {
  if (!gpuio_impl_queue_lock_poll(rs)) return;
  const gpuio_u64 fresh = gpuio_ld_acquire_64(&ctl->head);
  if (fresh > gpuio_ld_relaxed_64(&rs->cached_head)) gpuio_st_release_64(&rs->cached_head, fresh);
  if (gpuio_impl_closing(ch)) gpuio_st_release_32(&rs->seen, GPUIO_QUEUE_SEEN_SHUTDOWN);
  gpuio_st_relaxed_64(&rs->polled_at, now);
  gpuio_st_release_32(&rs->polling, 0u);
}

/* Reserves `k` consecutive positions of ring `ring` of a queue to the host: 0 with
 * *base, or -EAGAIN (full and !wait), -ETIMEDOUT (still full at the deadline),
 * -ESHUTDOWN (the channel is closing, as last polled). Reserves nothing unless it
 * returns 0, so a reservation is never left unpublished. */
GPUIO_FN int gpuio_impl_queue_reserve(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 ring, gpuio_u32 k,
                                      gpuio_u64 *base, bool wait, gpuio_u64 deadline) {
  gpuio_queue_ring *rs = gpuio_ptr<gpuio_queue_ring>(q->ring_state) + ring;
  const gpuio_queue_control *ctl = gpuio_ptr<const gpuio_queue_control>(q->control) + ring;
  if (gpuio_ld_relaxed_32(&rs->seen) & GPUIO_QUEUE_SEEN_SHUTDOWN) return -GPUIO_ESHUTDOWN;
  gpuio_impl_backoff backoff = {0};
  /* Out of the loop: each compare-and-swap clobbers memory, and reloading the
   * descriptor's `cells` and the cached head before every attempt put two loads
   * between a failed compare-and-swap and the next, widening the window in which the
   * next one fails too (ncu on an H200, 64 B messages from every thread on 16
   * rings: 10.7 attempts a reservation, the waits for those loads and the other
   * lanes' wait for their leader ~45 % of the kernel's stall samples). The head is
   * read again only when it leaves no room: it only grows, so an old one errs
   * towards "full", which re-reads it. */
  const gpuio_u64 cells = q->cells;
  gpuio_u64 t = gpuio_ld_relaxed_64(&rs->tail);
  /* Relaxed while competing for the tail (an acquire here, once per attempt,
   * invalidated the L1 each time: measured on an H100, ~150 attempts per
   * reservation with 528 warps on a ring); the acquire below orders the writes. */
  gpuio_u64 head = gpuio_ld_relaxed_64(&rs->cached_head);
  for (;;) {
    if (t + k <= head + cells) {
      const gpuio_u64 seen = gpuio_cas_64(&rs->tail, t, t + k);
      if (seen == t) {
        /* Acquire: pairs with the release of a `cached_head` at least `head`, which
         * came after its poller's acquire of the host's head, so the cells below it
         * are free to overwrite. */
        (void)gpuio_ld_acquire_64(&rs->cached_head);
        *base = t;
        return 0;
      }
      t = seen;
      continue;
    }
    const gpuio_u64 fresh = gpuio_ld_relaxed_64(&rs->cached_head);
    if (fresh > head) {
      head = fresh;
      continue;
    }
    /* Looks full: poll the host now (one sender for all). */
    gpuio_impl_queue_refresh(ch, ctl, rs, gpuio_now_ns());
    head = gpuio_ld_relaxed_64(&rs->cached_head);
    if (head > fresh) continue;
    if (!wait) return -GPUIO_EAGAIN;
    if (gpuio_ld_acquire_32(&rs->seen) & GPUIO_QUEUE_SEEN_SHUTDOWN) return -GPUIO_ESHUTDOWN;
    if (gpuio_impl_past(deadline)) return -GPUIO_ETIMEDOUT;
    gpuio_impl_backoff_pause(&backoff, 4096u);
    t = gpuio_ld_relaxed_64(&rs->tail);
  }
}

/* Word `w` (8 bytes, zero past the end) of the `len` bytes at `src`, aligned or not. */
GPUIO_FN gpuio_u64 gpuio_impl_word(const char *src, gpuio_u64 w, gpuio_u64 len) {
  const gpuio_u64 at = w * 8u;
  if ((((gpuio_u64)src) & 7u) == 0 && at + 8u <= len) return *(const gpuio_u64 *)(src + at);
  gpuio_u64 v = 0;
  for (gpuio_u64 b = 0; b < 8u && at + b < len; ++b) v |= (gpuio_u64)(gpuio_u8)src[at + b] << (8u * b);
  return v;
}

/* Message words the owner of a cell loads before it hands any out (a batch of
 * loads in flight together). */
#define GPUIO_QUEUE_FILL_BATCH 8u

/* The lanes of `g` write the group's consecutive cells from `base` on, each cell
 * whole: its stamp (gpuio_impl_cell_stamp with `header_len` and the group's count,
 * for every cell but the first, whose stamp gpuio_impl_queue_group_publish releases
 * last) and the first `len` bytes of its lane's message at `msg`.
 *
 * The words to write, cell after cell (each cell's header word and its message's,
 * none of a cell's unused tail), are numbered y = 0, 1, … across the group, and
 * store k writes words k × count … k × count + count - 1, lane `rank` word k × count
 * + rank: every store instruction writes `count` consecutive words of the group (for
 * full cells, 256 contiguous bytes from a warp), not one cell's words. On an H100,
 * 64 B messages (then 80 B cells) from every thread into pinned memory: a store per cell
 * moved 34 GB/s of cells, these whole runs 50-52 GB/s, against cudaMemcpy's 55 GB/s
 * for the same bytes (docs/validation/h100-2026-11-26-late, sendprobe.cu).
 *
 * A lane's message may sit on its own stack, out of the other lanes' reach, so its
 * owner reads it and hands each word to the lane that stores it (a broadcast from
 * one owner at a time: the loop over owners is the same in every lane). The owner
 * loads GPUIO_QUEUE_FILL_BATCH words before it hands any out: a message on the stack
 * is in local memory, which a whole device of threads with 4 KiB each does not keep
 * in L1, and one word at a time each handed-out word waited a load from L2 (4 KiB
 * messages: 4.2 GB/s on an H100, below the copy-back habit). */
GPUIO_ENGINE void gpuio_impl_queue_fill_group(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 base, gpuio_u64 g,
                                          const char *msg, gpuio_u32 len, gpuio_u32 header_len) {
  const gpuio_u32 rank = gpuio_warp_rank(g), count = gpuio_warp_count(g);
  /* This lane's word of the store being gathered: where, and what. Word numbers are
   * 32-bit (a group writes at most 32 cells of 2 + 2^17 words) and the store's end
   * moves on by `count` as each store is written, with no division. */
  gpuio_u64 *at = nullptr;
  gpuio_u64 mine = 0;
  gpuio_u32 first = 0;         /* y of the current cell's word 0 */
  gpuio_u32 store_end = count; /* y one past the store being gathered */
  gpuio_u32 j = 0;
  for (gpuio_u64 rest = g; rest; rest &= rest - 1u, ++j) {
    const gpuio_u32 owner = gpuio_warp_leader(rest);
    /* The owner's length and header length, one broadcast. */
    const gpuio_u64 lens = gpuio_warp_broadcast_64(g, (gpuio_u64)header_len << 32 | len, owner);
    const gpuio_u32 n = (gpuio_u32)lens, hn = (gpuio_u32)(lens >> 32);
    gpuio_u64 *dst = (gpuio_u64 *)gpuio_impl_cell(q, ring, base + j);
    /* Words of the cell: [0] its stamp, then the message's. */
    const gpuio_u32 end = first + 1u + (n + 7u) / 8u;
    for (gpuio_u32 y = first; y < end;) {
      const gpuio_u32 stop = store_end < end ? store_end : end;
      /* This lane's word of the store: y_me; the cell's words y … stop are here. */
      const gpuio_u32 y_me = store_end - count + rank;
      if (y_me >= y && y_me < stop) {
        const gpuio_u32 w = y_me - first;
        if (!(j == 0 && w == 0)) at = dst + w;
        mine = w == 0 ? gpuio_impl_cell_stamp(base + j, hn, count) : 0u;
      }
      const gpuio_u32 from = y > first + 1u ? y : first + 1u; /* the message's words */
      for (gpuio_u32 k0 = from; k0 < stop; k0 += GPUIO_QUEUE_FILL_BATCH) {
        gpuio_u64 v[GPUIO_QUEUE_FILL_BATCH];
GPUIO_UNROLL
        for (gpuio_u32 u = 0; u < GPUIO_QUEUE_FILL_BATCH; ++u)
          v[u] = rank == j && k0 + u < stop ? gpuio_impl_word(msg, k0 + u - first - 1u, len) : 0u;
GPUIO_UNROLL
        for (gpuio_u32 u = 0; u < GPUIO_QUEUE_FILL_BATCH; ++u) {
          if (k0 + u >= stop) break; /* the same for every lane */
          const gpuio_u64 x = gpuio_warp_broadcast_64(g, v[u], owner);
          if (k0 + u == y_me) mine = x;
        }
      }
      if (stop == store_end) { /* the store is whole: write it */
        if (at) *at = mine;
        at = nullptr;
        store_end += count;
      }
      y = stop;
    }
    first = end;
  }
  if (at) *at = mine; /* the last store, short of `count` words */
}

/* The first lane of group `g` reserves one cell per lane of ring `warp % rings`:
 * 0 with *ring and *base (the group's first position) in every lane, or -errno in
 * every lane (nothing reserved). */
GPUIO_ENGINE int gpuio_impl_queue_group_reserve(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u64 g, bool wait,
                                            gpuio_u32 *ring, gpuio_u64 *base) {
  const gpuio_u32 lead = gpuio_warp_leader(g), rank = gpuio_warp_rank(g), count = gpuio_warp_count(g);
  *ring = (gpuio_u32)(gpuio_warp_id() % q->rings);
  *base = 0;
  int e = 0;
  if (rank == 0) e = gpuio_impl_queue_reserve(ch, q, *ring, count, base, wait, gpuio_impl_deadline(ch));
  e = (int)(gpuio_i64)gpuio_warp_broadcast_64(g, (gpuio_u64)(gpuio_i64)e, lead);
  *base = gpuio_warp_broadcast_64(g, *base, lead);
  return e;
}

/* After a publish on ring `ring` of a queue to the host: if no sender read the
 * host's words for the ring in the last GPUIO_QUEUE_POLL_NS, this one does, after
 * its messages are out (the read waits behind every write before it, so no message
 * waits for it). */
GPUIO_FN void gpuio_impl_queue_tick(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 ring) {
  gpuio_queue_ring *rs = gpuio_ptr<gpuio_queue_ring>(q->ring_state) + ring;
  const gpuio_u64 now = gpuio_now_ns();
  if (now - gpuio_ld_relaxed_64(&rs->polled_at) > GPUIO_QUEUE_POLL_NS)
    gpuio_impl_queue_refresh(ch, gpuio_ptr<const gpuio_queue_control>(q->control) + ring, rs, now);
}

/* The group's cells are written (gpuio_impl_queue_fill_group): once the warp
 * synchronised, the first lane's release of the first cell's stamp (its own
 * `header_len`, as it gave the fill) publishes the group (the host re-checks each
 * later cell's own stamp), then ticks the ring. */
GPUIO_FN void gpuio_impl_queue_group_publish(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 ring,
                                             gpuio_u64 base, gpuio_u64 g, gpuio_u32 header_len) {
  gpuio_warp_sync(g);
  if (gpuio_warp_rank(g) == 0) {
    gpuio_st_release_64(&gpuio_impl_cell(q, ring, base)->stamp,
                        gpuio_impl_cell_stamp(base, header_len, gpuio_warp_count(g)));
    gpuio_impl_queue_tick(ch, q, ring);
  }
}

/* The lanes of `g` (all with the same queue) send one message each as one group. */
GPUIO_FN gpuio_i64 gpuio_impl_queue_send_group(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u64 g,
                                               const char *msg, gpuio_u32 len, bool wait) {
  gpuio_u32 ring = 0;
  gpuio_u64 base = 0;
  const int e = gpuio_impl_queue_group_reserve(ch, q, g, wait, &ring, &base);
  if (e) return e;
  gpuio_impl_queue_fill_group(q, ring, base, g, msg, len, len);
  gpuio_impl_queue_group_publish(ch, q, ring, base, g, len);
  return (gpuio_i64)len;
}

/* Where `len` bytes from `msg` sent on `ep` go: 0 with *q the queue, or with *q
 * NULL for a stream endpoint (gpuio_write serves it); or -errno. */
GPUIO_FN int gpuio_impl_send_target(const gpuio_channel *ch, gpuio_u32 ep, const void *msg, gpuio_u64 len,
                                    const gpuio_queue **q) {
  *q = nullptr;
  int e = gpuio_impl_check_descriptor(ch); /* a queue learns of closing from its polls */
  if (e) return e;
  *q = gpuio_impl_queue(ch, ep, GPUIO_ACCESS_WRITE, &e);
  if (e || !*q) return e;
  if (len > (*q)->max_message) return -GPUIO_EMSGSIZE;
  if (len > 0 && !msg) return -GPUIO_EFAULT;
  return 0;
}

GPUIO_ENGINE gpuio_i64 gpuio_impl_send(const gpuio_channel *ch, gpuio_u32 ep, const void *msg, gpuio_u64 len, bool wait) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_queue *q = nullptr;
  const int e = gpuio_impl_send_target(ch, ep, msg, len, &q);
  const bool stream = !e && !q;
  /* Lanes with a valid message to the same queue send as one group; the others
   * answer at once (every lane of `mask` takes part in the ballot first). */
  gpuio_u64 rest = gpuio_warp_ballot(mask, e == 0 && !stream);
  if (stream) return gpuio_impl_transfer(ch, gpuio_impl_stream_op(ch, ep, true), ep, (char *)msg, len, -1);
  if (e) return e;
  for (;;) {
    const gpuio_u32 lead = gpuio_warp_leader(rest);
    const gpuio_u32 lead_ep = (gpuio_u32)gpuio_warp_broadcast_64(rest, ep, lead);
    const gpuio_u64 g = gpuio_warp_ballot(rest, ep == lead_ep);
    if (ep == lead_ep) {
      const gpuio_i64 r = gpuio_impl_queue_send_group(ch, q, g, (const char *)msg, (gpuio_u32)len, wait);
      return r == -GPUIO_ETIMEDOUT ? gpuio_impl_count_timeout(ch, (int)r) : r;
    }
    rest &= ~g;
  }
}

/* Ring `ring` of a queue's device-local state. */
GPUIO_FN gpuio_queue_ring *gpuio_impl_queue_ring(const gpuio_queue *q, gpuio_u32 ring) {
  return gpuio_ptr<gpuio_queue_ring>(q->ring_state) + ring;
}

/* The credits of ring `ring` of a queue to the device (abi.rs, QueueCredits):
 * published positions not yet handed to a reader, a line each after the rings'
 * states. */
GPUIO_FN gpuio_queue_credits *gpuio_impl_queue_credits(const gpuio_queue *q, gpuio_u32 ring) {
  return gpuio_ptr<gpuio_queue_credits>(q->ring_state + (gpuio_u64)q->rings * sizeof(gpuio_queue_ring)) + ring;
}

/* Frees position `pos`'s cell of ring `ring` of a queue to the device for the host's
 * next lap: its free word (abi.rs, Queue::frees) becomes pos + cells, with a release
 * (the message was copied out first). The free words sit apart from the cells, eight
 * to a line: the host reads them instead of lines the device wrote into, and the
 * frees of a warp's consecutive positions are one write across PCIe. */
GPUIO_FN void gpuio_impl_queue_free(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 pos) {
  gpuio_st_release_64(gpuio_ptr<gpuio_u64>(q->frees) + (gpuio_u64)ring * q->cells + pos % q->cells, pos + q->cells);
}

/* Gives back credits taken and not used, or adds newly published ones (the poller). */
GPUIO_FN void gpuio_impl_queue_give_credits(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 k) {
  gpuio_fetch_add_64((gpuio_u64 *)&gpuio_impl_queue_credits(q, ring)->available, k);
}

/* Takes up to `k` credits of ring `ring`: how many it kept (0 when there were
 * none). One fetch-add of -k, after a look (an empty ring costs no atomic); what
 * was not there is given back, so the count dips below zero only for that instant.
 * It never fails and never retries: with every warp of an H100 reading, a
 * compare-and-swap on the tail kept the queue near 11 M messages/s. */
GPUIO_FN gpuio_u64 gpuio_impl_queue_take_credits(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 k) {
  gpuio_u64 *avail = (gpuio_u64 *)&gpuio_impl_queue_credits(q, ring)->available;
  const gpuio_i64 looked = (gpuio_i64)gpuio_ld_relaxed_64(avail);
  if (looked <= 0) return 0;
  if ((gpuio_u64)looked < k) k = (gpuio_u64)looked;
  const gpuio_i64 old = (gpuio_i64)gpuio_fetch_add_64(avail, (gpuio_u64)0 - k);
  const gpuio_u64 kept = old <= 0 ? 0u : ((gpuio_u64)old < k ? (gpuio_u64)old : k);
  if (kept < k) gpuio_impl_queue_give_credits(q, ring, k - kept);
  return kept;
}

/* Reads the host's words of ring `ring` of a queue to the device for every reader:
 * the published count `head` (acquire: the host releases it after each message's
 * stamp), `closed` and the channel's `closing`, into the ring's device-local state,
 * and adds what was newly published to the ring's credits. One reader at a time:
 * the rest wait on that state instead of each crossing PCIe (with 100,000 readers
 * polling one host word, the device spends its time on PCIe reads, measured on an
 * H100: 0.02 M msg/s). The relaxed loads go first and the acquire last, so the
 * host's words cross PCIe together (an acquire holds back every load after it: three
 * acquires waited three round trips; `closing` is the kernel's own copy now). The
 * host releases `closed` after its last `head`, so a `closed` seen relaxed is read
 * again with acquire, then `head` after it, before the ring is taken for ended.
 * Returns whether this reader polled (false: another one was polling). */
GPUIO_FN bool gpuio_impl_queue_poll(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 ring) {
  gpuio_queue_ring *rs = gpuio_impl_queue_ring(q, ring);
  if (!gpuio_impl_queue_lock_poll(rs)) return false;
  const gpuio_queue_control *ctl = gpuio_ptr<const gpuio_queue_control>(q->control) + ring;
  const bool maybe_closed = gpuio_ld_relaxed_32(&ctl->closed) != 0u;
  const bool closing = gpuio_impl_closing(ch);
  gpuio_u64 head = gpuio_ld_acquire_64(&ctl->head);
  const bool closed = maybe_closed && gpuio_ld_acquire_32(&ctl->closed) != 0u;
  if (closed) head = gpuio_ld_acquire_64(&ctl->head);
  const gpuio_u64 had = gpuio_ld_relaxed_64(&rs->cached_head);
  if (head > had) {
    gpuio_st_release_64(&rs->cached_head, head);
    /* After the release: a reader that takes these credits finds a cached_head
     * beyond its positions when it acquires it. */
    gpuio_impl_queue_give_credits(q, ring, head - had);
  }
  const gpuio_u32 seen = (closed ? GPUIO_QUEUE_SEEN_CLOSED : 0u) | (closing ? GPUIO_QUEUE_SEEN_SHUTDOWN : 0u);
  if (seen) gpuio_st_release_32(&rs->seen, seen);
  gpuio_st_release_32(&rs->polling, 0u);
  return true;
}

/* The ring a reading warp looks at first: its own, `warp % rings`, so that with a
 * host thread sending on each ring the readers of different rings never meet. */
GPUIO_FN gpuio_u32 gpuio_impl_queue_first_ring(const gpuio_queue *q) {
  return (gpuio_u32)(gpuio_warp_id() % q->rings);
}

/* A reader that found nothing polls the host for its rings: on its first poll
 * (`all`) every ring, so that "nothing there" means nothing on any ring; after that
 * its own ring `first` and one other in turn (`*turn`), so a ring whose own readers
 * are gone is still looked at, and a wait costs at most two reads across PCIe. A
 * ring seen closed holds its final count: it is not polled again. Returns whether
 * this reader polled any (false: others were polling). */
GPUIO_FN bool gpuio_impl_queue_poll_rings(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 first, bool all,
                                          gpuio_u32 *turn) {
  const gpuio_u32 rings = q->rings;
  const gpuio_u32 other = rings > 1u ? 1u + *turn % (rings - 1u) : 0u;
  ++*turn;
  bool polled = false;
  for (gpuio_u32 i = 0; i < rings; ++i) {
    if (!all && i != 0u && i != other) continue;
    const gpuio_u32 r = (first + i) % rings;
    if (gpuio_ld_relaxed_32(&gpuio_impl_queue_ring(q, r)->seen) & GPUIO_QUEUE_SEEN_CLOSED) continue;
    polled = gpuio_impl_queue_poll(ch, q, r) || polled;
  }
  return polled;
}

/* How long a reader that polled and found nothing new waits before it polls again
 * (ns); the others back off up to GPUIO_QUEUE_WAIT_NS on device-local state. A poll
 * is one read across PCIe, so a short pause here is what keeps a message's wait for
 * a reader near one round trip. */
#define GPUIO_QUEUE_POLL_PAUSE_NS 256u
#define GPUIO_QUEUE_WAIT_NS 4096u

/* The pause of a reader that found nothing: short for the one that polled. */
GPUIO_FN void gpuio_impl_queue_wait(gpuio_impl_backoff *b, bool polled) {
  if (polled) {
    b->ns = 0;
    gpuio_sleep_ns(GPUIO_QUEUE_POLL_PAUSE_NS);
  } else {
    gpuio_impl_backoff_pause(b, GPUIO_QUEUE_WAIT_NS);
  }
}

/* What a reader learnt of the rings it found nothing to take on: whether every one
 * is closed (and, found empty after that was acquired, at its end), whether any saw
 * the channel closing. */
struct gpuio_impl_queue_ends {
  bool all_closed = true;
  bool shutdown = false;
  GPUIO_METHOD void add(gpuio_u32 seen) {
    if (!(seen & GPUIO_QUEUE_SEEN_CLOSED)) all_closed = false;
    if (seen & GPUIO_QUEUE_SEEN_SHUTDOWN) shutdown = true;
  }
};

/* gpuio_impl_queue_look's answers besides a message's length or -errno. */
#define GPUIO_QUEUE_LOOK_EMPTY 1
#define GPUIO_QUEUE_LOOK_AGAIN 2

/* One look at ring `ring` by a reader that looks at a message before it takes it:
 * 0 with *r its length or -errno (-EMSGSIZE: longer than cap, left in the queue;
 * -EPROTO; -ETIMEDOUT), GPUIO_QUEUE_LOOK_EMPTY when nothing is known to be
 * published beyond the ring's tail, GPUIO_QUEUE_LOOK_AGAIN when it should look again
 * (another reader took the position meanwhile, or holds the credits for an
 * instant). */
GPUIO_FN int gpuio_impl_queue_look(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u32 ring, char *buf,
                                   gpuio_u64 cap, gpuio_u64 deadline, gpuio_i64 *r) {
  gpuio_queue_ring *rs = gpuio_impl_queue_ring(q, ring);
  const gpuio_u64 h = gpuio_ld_relaxed_64(&rs->tail);
  if (h >= gpuio_ld_acquire_64(&rs->cached_head)) return GPUIO_QUEUE_LOOK_EMPTY;
  /* Published; its cell's stamp is the host's release of the bytes and length. */
  gpuio_cell_header *c = gpuio_impl_cell(q, ring, h);
  const gpuio_u64 stamp = gpuio_ld_acquire_64(&c->stamp);
  if (!gpuio_impl_cell_holds(stamp, h)) {
    if (gpuio_ld_relaxed_64(&rs->tail) == h) gpuio_pause(); /* else taken meanwhile */
    return GPUIO_QUEUE_LOOK_AGAIN;
  }
  /* Looked at before it is claimed (a message longer than cap stays queued), so
   * another reader may claim h meanwhile, free the cell, and the host write the
   * next lap's message into it: a length is believed only if the tail, read after
   * it (the acquire keeps the order), still says h is unclaimed; else a reader
   * could answer -EMSGSIZE for a message not its own. The cell changes only after
   * its claim and a round trip across PCIe (the free, then the host's write), so a
   * length read before the tail still said h is h's. After a successful claim
   * below it is h's for certain. */
  const gpuio_u32 len = gpuio_impl_cell_len(stamp);
  if (gpuio_ld_relaxed_64(&rs->tail) != h) return GPUIO_QUEUE_LOOK_AGAIN; /* taken meanwhile */
  if (len > q->max_message) {
    *r = -GPUIO_EPROTO;
    return 0;
  }
  if (len > cap) {
    *r = -GPUIO_EMSGSIZE;
    return 0;
  }
  /* A credit, then h itself (the credit keeps the tail below the published count
   * whichever position it is spent on). None while h is published: other readers
   * hold them for an instant. */
  if (!gpuio_impl_queue_take_credits(q, ring, 1u)) {
    if (gpuio_impl_past(deadline)) {
      *r = gpuio_impl_count_timeout(ch, -GPUIO_ETIMEDOUT);
      return 0;
    }
    gpuio_pause();
    return GPUIO_QUEUE_LOOK_AGAIN;
  }
  if (gpuio_cas_64(&rs->tail, h, h + 1u) != h) { /* another reader took it */
    gpuio_impl_queue_give_credits(q, ring, 1u);
    return GPUIO_QUEUE_LOOK_AGAIN;
  }
  gpuio_impl_copy(buf, (const char *)(c + 1), len);
  gpuio_impl_queue_free(q, ring, h);
  *r = (gpuio_i64)len;
  return 0;
}

/* One message from a queue to the device, for a reader that looks at it before it
 * takes it: its length (0 at end of stream), or -EAGAIN (empty and !wait),
 * -ETIMEDOUT, -EMSGSIZE (longer than cap: left in the queue), -ESHUTDOWN. Its own
 * ring first, then the others in turn. */
GPUIO_FN gpuio_i64 gpuio_impl_queue_recv(const gpuio_channel *ch, const gpuio_queue *q, char *buf, gpuio_u64 cap,
                                         bool wait) {
  const gpuio_u64 deadline = gpuio_impl_deadline(ch);
  const gpuio_u32 first = gpuio_impl_queue_first_ring(q);
  gpuio_impl_backoff backoff = {0};
  bool polled = false;
  gpuio_u32 turn = 0;
  for (;;) {
    gpuio_impl_queue_ends ends;
    int look = GPUIO_QUEUE_LOOK_EMPTY;
    gpuio_i64 r = 0;
    for (gpuio_u32 i = 0; i < q->rings && look == GPUIO_QUEUE_LOOK_EMPTY; ++i) {
      const gpuio_u32 ring = (first + i) % q->rings;
      /* An end of stream is believed only from acquires: `seen`, then the
       * `cached_head` the poller released before it, with the tail at it (a `seen`
       * still 0 is looked at relaxed: an acquire per ring per look would invalidate
       * the L1 each time for nothing). */
      gpuio_queue_ring *rs = gpuio_impl_queue_ring(q, ring);
      gpuio_u32 seen = gpuio_ld_relaxed_32(&rs->seen);
      if (seen) seen = gpuio_ld_acquire_32(&rs->seen);
      look = gpuio_impl_queue_look(ch, q, ring, buf, cap, deadline, &r);
      ends.add(seen);
    }
    if (look == 0) return r;
    if (look == GPUIO_QUEUE_LOOK_AGAIN) {
      if (gpuio_impl_past(deadline)) return gpuio_impl_count_timeout(ch, -GPUIO_ETIMEDOUT);
      continue;
    }
    /* Nothing known to be published on any ring. */
    if (ends.all_closed) return 0;
    if (ends.shutdown) return -GPUIO_ESHUTDOWN;
    const bool polled_now = (!polled || wait) && gpuio_impl_queue_poll_rings(ch, q, first, !polled, &turn);
    if (!polled) { /* look again at once after the first poll */
      polled = true;
      continue;
    }
    if (!wait) return -GPUIO_EAGAIN;
    if (gpuio_impl_past(deadline)) return gpuio_impl_count_timeout(ch, -GPUIO_ETIMEDOUT);
    gpuio_impl_queue_wait(&backoff, polled_now);
  }
}

/* Payload words a reader loads before it stores any (a batch crosses PCIe as reads
 * in flight together). */
#define GPUIO_QUEUE_TAKE_BATCH 8u

/* Stores words `w0`, `w0 + 1`, … of `v` (a batch) into the message's bytes at `buf`,
 * up to `len` bytes. */
GPUIO_FN void gpuio_impl_queue_store_batch(char *buf, const gpuio_u64 *v, gpuio_u64 w0, gpuio_u64 len) {
  const bool aligned = (((gpuio_u64)buf) & 7u) == 0;
GPUIO_UNROLL
  for (gpuio_u32 u = 0; u < GPUIO_QUEUE_TAKE_BATCH; ++u) {
    const gpuio_u64 at = (w0 + u) * 8u;
    if (at >= len) break;
    if (aligned && at + 8u <= len) {
      *(gpuio_u64 *)(buf + at) = v[u];
    } else {
      for (gpuio_u64 b = 0; b < 8u && at + b < len; ++b) buf[at + b] = (char)(v[u] >> (8u * b));
    }
  }
}

/* Copies the message at position `pos` of ring `ring` of a queue to the device out of
 * its cell into `buf` (room for max_message bytes): its length, or -EPROTO when the
 * cell is not the published message it must be (a stamp for another position, or a
 * length over max_message; nothing is copied). The caller took `pos` below a
 * `cached_head` it acquired, which came after the poller's acquire of the host's
 * `head`, released after the cell was written: the cell's words are the host's. The
 * header and the first GPUIO_QUEUE_TAKE_BATCH payload words are loaded before any is
 * looked at, so a small message costs one round trip across PCIe (a warp that read
 * its cells one after the other, each lane's load waiting on the last, waited one
 * per cell). The payload ends within the cell: it holds max_message rounded up to
 * whole words. */
GPUIO_FN gpuio_i64 gpuio_impl_queue_take(const gpuio_queue *q, gpuio_u32 ring, gpuio_u64 pos, char *buf) {
  const gpuio_u64 *cell = (const gpuio_u64 *)gpuio_impl_cell(q, ring, pos);
  const gpuio_u64 words = ((gpuio_u64)q->max_message + 7u) / 8u;
  gpuio_u64 v[GPUIO_QUEUE_TAKE_BATCH];
  const gpuio_u64 stamp = cell[0];
GPUIO_UNROLL
  for (gpuio_u32 u = 0; u < GPUIO_QUEUE_TAKE_BATCH; ++u) v[u] = u < words ? cell[1u + u] : 0u;
  const gpuio_u64 len = gpuio_impl_cell_len(stamp);
  if (!gpuio_impl_cell_holds(stamp, pos) || len > q->max_message) return -GPUIO_EPROTO;
  gpuio_impl_queue_store_batch(buf, v, 0, len);
  for (gpuio_u64 w0 = GPUIO_QUEUE_TAKE_BATCH; w0 * 8u < len; w0 += GPUIO_QUEUE_TAKE_BATCH) {
GPUIO_UNROLL
    for (gpuio_u32 u = 0; u < GPUIO_QUEUE_TAKE_BATCH; ++u) v[u] = (w0 + u) * 8u < len ? cell[1u + w0 + u] : 0u;
    gpuio_impl_queue_store_batch(buf, v, w0, len);
  }
  return (gpuio_i64)len;
}

/* The lanes of `g` (all reading the same queue, each with room for its longest
 * message) receive one message each: the first lane takes as many credits as lanes
 * still wait for from the first ring that has any (its own ring, `warp % rings`,
 * first) and the positions with one fetch-add of that ring's device-local tail
 * (gpuio_impl_queue_take_credits: a position handed out by a credit is below a
 * published cached_head), each lane copies its own message out of its cell
 * (gpuio_impl_queue_take) and frees the cell, and the lanes left over wait for more.
 * Only the lane polling for all reads the host's words across PCIe; the others wait
 * on device-local state. A group that finds no credit while a ring's tail is below
 * its cached head (another reader holds them for an instant, or the poller is
 * between its release and its credits) looks again: that is neither an empty queue
 * nor its end. The end is every ring closed and at its end. */
GPUIO_FN gpuio_i64 gpuio_impl_queue_recv_group(const gpuio_channel *ch, const gpuio_queue *q, gpuio_u64 g, char *buf,
                                               bool wait) {
  const gpuio_u64 deadline = gpuio_impl_deadline(ch);
  const gpuio_u32 first = gpuio_impl_queue_first_ring(q);
  gpuio_impl_backoff backoff = {0};
  bool polled = false, swept = false;
  gpuio_u32 turn = 0;
  for (;;) {
    const gpuio_u32 lead = gpuio_warp_leader(g), rank = gpuio_warp_rank(g), count = gpuio_warp_count(g);
    gpuio_u64 base = 0, got = 0;
    gpuio_u32 ring = first;
    gpuio_impl_queue_ends ends;
    bool busy = false; /* published positions, but no credit: look again */
    if (rank == 0) {
      for (gpuio_u32 i = 0; i < q->rings; ++i) {
        ring = (first + i) % q->rings;
        gpuio_queue_ring *rs = gpuio_impl_queue_ring(q, ring);
        /* An end of stream is believed only from acquires: `seen`, then the
         * `cached_head` the poller released before it, with the tail at it. */
        gpuio_u32 seen = gpuio_ld_relaxed_32(&rs->seen);
        if (seen) seen = gpuio_ld_acquire_32(&rs->seen);
        got = gpuio_impl_queue_take_credits(q, ring, count);
        if (got) {
          base = gpuio_fetch_add_64(&rs->tail, got);
          break;
        }
        const gpuio_u64 head = seen ? gpuio_ld_acquire_64(&rs->cached_head) : gpuio_ld_relaxed_64(&rs->cached_head);
        busy = busy || gpuio_ld_relaxed_64(&rs->tail) < head;
        ends.add(seen);
      }
    }
    if (gpuio_warp_broadcast_64(g, busy && !got ? 1u : 0u, lead)) {
      if (gpuio_warp_broadcast_64(g, gpuio_impl_past(deadline) ? 1u : 0u, lead))
        return gpuio_impl_count_timeout(ch, -GPUIO_ETIMEDOUT);
      gpuio_pause();
      continue;
    }
    got = gpuio_warp_broadcast_64(g, got, lead);
    if (got) {
      base = gpuio_warp_broadcast_64(g, base, lead);
      ring = (gpuio_u32)gpuio_warp_broadcast_64(g, ring, lead);
      const gpuio_u64 left = gpuio_warp_ballot(g, rank >= got); /* before any lane leaves */
      if (rank < got) {
        /* Each lane acquires a `cached_head` beyond its position for itself (the
         * claim reached it by a shuffle, which orders nothing, and the credits came
         * from the poller's relaxed fetch-add after its release of cached_head: this
         * holds at once, or as soon as that release is seen), then copies its own
         * message out and frees the cell. */
        gpuio_queue_ring *rs = gpuio_impl_queue_ring(q, ring);
        const gpuio_u64 pos = base + rank;
        gpuio_i64 r = 0;
        while (gpuio_ld_acquire_64(&rs->cached_head) <= pos) {
          if (gpuio_impl_past(deadline)) {
            r = -GPUIO_EPROTO;
            break;
          }
          gpuio_pause();
        }
        if (r == 0) r = gpuio_impl_queue_take(q, ring, pos, buf);
        gpuio_impl_queue_free(q, ring, pos);
        return r;
      }
      g = left;
      polled = false;
      continue;
    }
    /* Nothing known to be published on any ring. */
    const gpuio_u64 end = gpuio_warp_broadcast_64(g, (ends.all_closed ? 1u : 0u) | (ends.shutdown ? 2u : 0u), lead);
    if (end & 1u) return 0;
    if (end & 2u) return -GPUIO_ESHUTDOWN;
    const bool polled_now =
        rank == 0 && (!polled || wait) && gpuio_impl_queue_poll_rings(ch, q, first, !swept, &turn);
    swept = true;
    if (!polled) { /* look again at once after the first poll */
      polled = true;
      continue;
    }
    if (!wait) return -GPUIO_EAGAIN;
    /* The first lane's clock and poll decide for the group, so the lanes leave and
     * sleep together. */
    if (gpuio_warp_broadcast_64(g, gpuio_impl_past(deadline) ? 1u : 0u, lead))
      return gpuio_impl_count_timeout(ch, -GPUIO_ETIMEDOUT);
    gpuio_impl_queue_wait(&backoff, gpuio_warp_broadcast_64(g, polled_now ? 1u : 0u, lead) != 0u);
  }
}

GPUIO_ENGINE gpuio_i64 gpuio_impl_recv(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 cap, bool wait) {
  const gpuio_u64 mask = gpuio_warp_active();
  int e = gpuio_impl_check_descriptor(ch); /* a queue learns of closing from its polls */
  const gpuio_queue *q = e ? nullptr : gpuio_impl_queue(ch, ep, GPUIO_ACCESS_READ, &e);
  if (!e && q && cap > 0 && !buf) e = -GPUIO_EFAULT;
  /* A reader with room for the queue's longest message receives with its warp's
   * other such readers of the same queue (every lane of `mask` votes first); one
   * whose buffer may be too small looks at each message before claiming it. */
  const bool group = !e && q && cap >= q->max_message;
  gpuio_u64 rest = gpuio_warp_ballot(mask, group);
  if (e) return e;
  if (!q) return gpuio_impl_stream_read(ch, gpuio_impl_stream_op(ch, ep, false), ep, buf, cap);
  if (!group) return gpuio_impl_queue_recv(ch, q, (char *)buf, cap, wait);
  for (;;) {
    const gpuio_u32 lead = gpuio_warp_leader(rest);
    const gpuio_u32 lead_ep = (gpuio_u32)gpuio_warp_broadcast_64(rest, ep, lead);
    const gpuio_u64 g = gpuio_warp_ballot(rest, ep == lead_ep);
    if (ep == lead_ep) return gpuio_impl_queue_recv_group(ch, q, g, (char *)buf, wait);
    rest &= ~g;
  }
}

/* ------------------------------------------------------------ the calls */

/* Sends one message of `len` bytes (at most the queue's max_message) on `ep`:
 * `len`, or -errno. On a host queue the lanes of a warp that call together send
 * with one reservation and one publish; a full queue is waited on until the
 * channel's deadline (-ETIMEDOUT), never overwritten. On a socket it is send(2)
 * with MSG_NOSIGNAL (a peer that closed: -EPIPE), split into slot-sized requests
 * like gpuio_write; on a pipe it is gpuio_write. */
GPUIO_FN gpuio_i64 gpuio_send(const gpuio_channel *ch, gpuio_u32 ep, const void *msg, gpuio_u64 len) {
  return gpuio_impl_send(ch, ep, msg, len, true);
}
/* gpuio_send that does not wait: -EAGAIN when the queue is full. */
GPUIO_FN gpuio_i64 gpuio_try_send(const gpuio_channel *ch, gpuio_u32 ep, const void *msg, gpuio_u64 len) {
  return gpuio_impl_send(ch, ep, msg, len, false);
}
/* Receives one message into `buf` (`cap` bytes): its length, 0 once the host closed
 * its Sender and every message was taken, or -errno (-EMSGSIZE: the next message
 * is longer than cap and stays queued; -ETIMEDOUT: none came before the deadline).
 * On a socket it is one recv(2) (at most slot_size bytes; 0 once the peer shut
 * down its side); on a pipe it is gpuio_read. */
GPUIO_FN gpuio_i64 gpuio_recv(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 cap) {
  return gpuio_impl_recv(ch, ep, buf, cap, true);
}
/* gpuio_recv that does not wait: -EAGAIN when no message is there. */
GPUIO_FN gpuio_i64 gpuio_try_recv(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 cap) {
  return gpuio_impl_recv(ch, ep, buf, cap, false);
}

/* Warp-cooperative send: every active lane calls with the same arguments; the lanes
 * copy the message side by side into one cell, one lane reserves and publishes it,
 * and every lane gets the same result. For messages too long for one lane to copy
 * quickly. */
GPUIO_FN gpuio_i64 gpuio_send_warp(const gpuio_channel *ch, gpuio_u32 ep, const void *msg, gpuio_u64 len) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 lead = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask), count = gpuio_warp_count(mask);
  const gpuio_queue *q = nullptr;
  int e = gpuio_impl_send_target(ch, ep, msg, len, &q);
  if (e) return e;
  if (!q) { /* a stream: one lane writes for the warp */
    gpuio_i64 r = 0;
    if (rank == 0) r = gpuio_impl_transfer(ch, gpuio_impl_stream_op(ch, ep, true), ep, (char *)msg, len, -1);
    return (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)r, lead);
  }
  const gpuio_u32 ring = (gpuio_u32)(gpuio_warp_id() % q->rings);
  gpuio_u64 base = 0;
  if (rank == 0) e = gpuio_impl_queue_reserve(ch, q, ring, 1u, &base, true, gpuio_impl_deadline(ch));
  e = (int)(gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)(gpuio_i64)e, lead);
  if (e) return e == -GPUIO_ETIMEDOUT && rank == 0 ? gpuio_impl_count_timeout(ch, e) : e;
  base = gpuio_warp_broadcast_64(mask, base, lead);
  gpuio_cell_header *h = gpuio_impl_cell(q, ring, base);
  gpuio_impl_copy_warp((char *)(h + 1), (const char *)msg, len, rank, count);
  gpuio_warp_sync(mask);
  if (rank == 0) {
    gpuio_st_release_64(&h->stamp, gpuio_impl_cell_stamp(base, (gpuio_u32)len, 1u));
    gpuio_impl_queue_tick(ch, q, ring);
  }
  return (gpuio_i64)len;
}

#endif /* GPUIO_QUEUE_H */
