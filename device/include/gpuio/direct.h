/* gpuio/direct.h — the device side of the direct transport: the device writes
 * io_uring SQEs itself, the kernel's SQPOLL thread consumes them, and the device
 * reaps the CQEs. The host only set the ring up (confined: fixed files, staging as
 * fixed buffer 0, only NOP / READ_FIXED / WRITE_FIXED with IOSQE_FIXED_FILE) and
 * runs a waker that kicks a sleeping SQPOLL thread (core/src/direct/).
 *
 * Protocol (core/src/abi.rs has the full description). Position `p` owns slot
 * `p % slots`, its staging chunk and SQE `p & sq_mask` (sq_entries == slots):
 *   acquire  p = fetch_add(state.reserve); wait until slot.seq's position is p
 *   submit   fill SQE (user_data = p), slot.state = IN_FLIGHT, slot.ready = p + 1
 *            (release), then publish: the publish-lock holder advances the SQ tail
 *            over consecutive ready positions with one system-scope release store
 *   wait     poll slot.state; meanwhile try the reap lock and drain the CQ: each
 *            CQE's res goes to slot[user_data % slots], IN_FLIGHT -> DONE by CAS
 *            (or, if its waiter gave up, ABANDONED -> the reaper frees the slot),
 *            then the CQ head is advanced with a system-scope release store;
 *            at the deadline: CAS IN_FLIGHT -> ABANDONED, -ETIMEDOUT
 *   release  slot.seq = p + slots
 *
 * Giving up in acquire. A position cannot simply walk away: the SQ tail advances
 * over consecutive positions, so a hole would stall every later request. A waiter
 * that reaches its deadline therefore records itself in the high bits of the slot's
 * seq (seq = base | k << 52: the k positions base + slots .. base + k*slots gave up)
 * and whoever frees position `base` stands in for base + slots: it writes a NOP for
 * it, marked ABANDONED, so the reaper frees the slot again when that NOP completes.
 * Stand-in NOPs count as requests in ch->stats like any other. A call that takes a
 * position after the host began closing fills it with such a NOP too, and fails
 * with -ESHUTDOWN (see gpuio_direct_acquire for the handshake with close()).
 *
 * Every wait is bounded by the caller's deadline and backs off (gpuio_impl_backoff,
 * or in proportion to how far back in line it is). Words only
 * the device touches (state, slot_state) are device-local; the ring words, SQEs and
 * CQEs are shared with the kernel; ch->stats is shared with the host: `submitted` is
 * written by the publish-lock holder, `completed`/`failed` by the reap-lock holder,
 * `timed_out` with a device atomic.
 */
#ifndef GPUIO_DIRECT_H
#define GPUIO_DIRECT_H

/* gpuio_direct_raw_sqe() is available (the bad-input conformance kernel uses it). */
#define GPUIO_DIRECT_RAW_SQE 1

/* DirectSlot.seq: position in the low 52 bits, positions that gave up above. */
#define GPUIO_DIRECT_SEQ_SHIFT 52u
#define GPUIO_DIRECT_SEQ_POS ((1ull << GPUIO_DIRECT_SEQ_SHIFT) - 1ull)
#define GPUIO_DIRECT_SEQ_MAX_GAVE_UP ((1ull << (64u - GPUIO_DIRECT_SEQ_SHIFT)) - 1ull)

GPUIO_FN gpuio_direct_state *gpuio_direct_st(const gpuio_channel *ch) {
  return gpuio_ptr<gpuio_direct_state>(ch->direct.state);
}
GPUIO_FN gpuio_direct_slot *gpuio_direct_slot_of(const gpuio_channel *ch, gpuio_u64 pos) {
  return gpuio_ptr<gpuio_direct_slot>(ch->direct.slot_state) + (pos & (gpuio_u64)(ch->slots - 1u));
}
GPUIO_FN gpuio_stats *gpuio_direct_stats(const gpuio_channel *ch) { return gpuio_impl_stats(ch); }

/* A device-local spin lock, tried once. The CAS is relaxed on CUDA: the fence after
 * it makes taking the lock an acquire on every target. */
GPUIO_FN bool gpuio_direct_trylock(gpuio_u32 *lock) {
  if (gpuio_cas_32(lock, 0u, 1u) != 0u) return false;
  gpuio_fence_sc();
  return true;
}
GPUIO_FN void gpuio_direct_unlock(gpuio_u32 *lock) { gpuio_st_release_32(lock, 0u); }


/* Advances the SQ tail over consecutive ready positions. Whoever holds the publish
 * lock does it for everyone; a submitter that finds the lock taken leaves its
 * position to the holder. Lost wake-up: a submitter stamps `ready`, fences, then
 * tries the lock; the holder unlocks, fences, then re-checks the first position it
 * did not publish. With both fences sequentially consistent, either the submitter
 * sees the lock free or the holder sees the stamp, so no ready position is left
 * behind with nobody to publish it. */
GPUIO_FN void gpuio_direct_publish(const gpuio_channel *ch) {
  gpuio_direct_state *st = gpuio_direct_st(ch);
  gpuio_u32 *sq_tail = gpuio_ptr<gpuio_u32>(ch->direct.sq_tail);
  const gpuio_u64 slots = ch->slots;
  for (;;) {
    /* Looked at before it is tried, as in gpuio_direct_reap: reading a held lock
     * counts as failing to take it in the argument above. */
    if (gpuio_ld_relaxed_32(&st->publish_lock) != 0u) return;
    if (!gpuio_direct_trylock(&st->publish_lock)) return;
    const gpuio_u64 start = gpuio_ld_relaxed_64(&st->published);
    gpuio_u64 p = start;
    while (p - start < slots && gpuio_ld_acquire_64(&gpuio_direct_slot_of(ch, p)->ready) == p + 1) ++p;
    if (p != start) {
      gpuio_st_relaxed_64(&st->published, p);
      /* Host-visible counters are only ever stored from device-local truth, never
       * read back from host memory. */
      gpuio_st_relaxed_64(&gpuio_direct_stats(ch)->submitted, p);
      /* Publishes the SQEs (written by other threads, observed through `ready`) to
       * the kernel: system-scope release, cumulative over what this thread saw. */
      gpuio_st_release_32(sq_tail, (gpuio_u32)p);
    }
    gpuio_direct_unlock(&st->publish_lock);
    gpuio_fence_sc();
    if (gpuio_ld_acquire_64(&gpuio_direct_slot_of(ch, p)->ready) != p + 1) return;
  }
}

/* Writes SQE `pos & sq_mask` (a copy of `sqe` with user_data = pos, and above the
 * position the errno of a refused request: see gpuio_direct_submit), sets the slot's
 * state and stamps it ready, then publishes. The caller owns position `pos`. */
GPUIO_FN void gpuio_direct_fill_refused(const gpuio_channel *ch, gpuio_u64 pos, const gpuio_sqe *sqe,
                                        gpuio_u32 state, gpuio_u32 refused) {
  const gpuio_u32 idx = (gpuio_u32)(pos & ch->direct.sq_mask);
  gpuio_sqe e = *sqe;
  e.user_data = pos | ((gpuio_u64)refused << GPUIO_DIRECT_SEQ_SHIFT);
  gpuio_ptr<gpuio_sqe>(ch->direct.sqes)[idx] = e;
  gpuio_st_relaxed_32(gpuio_ptr<gpuio_u32>(ch->direct.sq_array) + idx, idx);
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, pos);
  gpuio_st_relaxed_32(&sl->state, state);
  gpuio_st_release_64(&sl->ready, pos + 1); /* the SQE and state before the stamp */
  gpuio_fence_sc();                         /* the stamp before trying the lock */
  gpuio_direct_publish(ch);
}
GPUIO_FN void gpuio_direct_fill(const gpuio_channel *ch, gpuio_u64 pos, const gpuio_sqe *sqe, gpuio_u32 state) {
  gpuio_direct_fill_refused(ch, pos, sqe, state, 0u);
}

/* Fills position `pos` (whose slot the caller owns) with a NOP nobody waits for:
 * marked ABANDONED, so the reaper frees the slot when it completes. */
GPUIO_FN void gpuio_direct_stand_in(const gpuio_channel *ch, gpuio_u64 pos) {
  gpuio_sqe nop = {};
  nop.opcode = GPUIO_IORING_OP_NOP;
  nop.flags = GPUIO_IOSQE_FIXED_FILE;
  gpuio_direct_fill(ch, pos, &nop, GPUIO_SLOT_ABANDONED);
}

/* Hands slot `pos % slots` on once position `pos` is finished with it: to pos + slots,
 * or, if that position gave up waiting, to a stand-in NOP for it (see the top). */
GPUIO_FN void gpuio_direct_free(const gpuio_channel *ch, gpuio_u64 pos) {
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, pos);
  const gpuio_u64 slots = ch->slots;
  gpuio_st_relaxed_32(&sl->state, GPUIO_SLOT_FREE);
  gpuio_fence_sc(); /* everything done in the slot before handing it on (relaxed CAS on CUDA) */
  for (;;) {
    const gpuio_u64 q = gpuio_ld_acquire_64(&sl->seq);
    const gpuio_u64 gave_up = q >> GPUIO_DIRECT_SEQ_SHIFT;
    if (gave_up == 0) {
      if (gpuio_cas_64(&sl->seq, q, pos + slots) == q) return;
      continue;
    }
    const gpuio_u64 next = pos + slots;
    if (gpuio_cas_64(&sl->seq, q, next | ((gave_up - 1u) << GPUIO_DIRECT_SEQ_SHIFT)) != q) continue;
    gpuio_fence_sc();
    gpuio_direct_stand_in(ch, next);
    return;
  }
}

/* Records the completion of position `pos`: hands the result to its waiter, or frees
 * the slot if the waiter gave up. Called by the reap-lock holder. */
GPUIO_FN void gpuio_direct_complete(const gpuio_channel *ch, gpuio_u64 pos, gpuio_i32 res) {
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, pos);
  /* A CQE whose user_data names no position in flight (not an SQE this header
   * wrote) is counted by the caller and otherwise ignored. */
  if ((gpuio_ld_relaxed_64(&sl->seq) & GPUIO_DIRECT_SEQ_POS) != pos) return;
  gpuio_st_relaxed_32((gpuio_u32 *)&sl->res, (gpuio_u32)res);
  gpuio_fence_sc(); /* res before the state change (relaxed CAS on CUDA) */
  if (gpuio_cas_32(&sl->state, GPUIO_SLOT_IN_FLIGHT, GPUIO_SLOT_DONE) == GPUIO_SLOT_ABANDONED)
    gpuio_direct_free(ch, pos);
}

/* Drains the CQ if nobody else is doing it. Every waiting thread calls this, so it
 * must cost them nothing across PCIe: the lock word is device-local and looked at
 * before it is tried (test and test-and-set), and only the one thread that holds it
 * reads the kernel's CQ tail. With a hundred thousand waiters, one PCIe read is in
 * flight at a time instead of one per waiter. */
GPUIO_FN void gpuio_direct_reap(const gpuio_channel *ch) {
  gpuio_u32 *cq_head = gpuio_ptr<gpuio_u32>(ch->direct.cq_head);
  const gpuio_u32 *cq_tail = gpuio_ptr<const gpuio_u32>(ch->direct.cq_tail);
  gpuio_direct_state *st = gpuio_direct_st(ch);
  if (gpuio_ld_relaxed_32(&st->reap_lock) != 0u) return;
  if (!gpuio_direct_trylock(&st->reap_lock)) return;
  /* The CQ head is kept device-local (`reaped`); the kernel's copy is only stored. */
  if ((gpuio_u32)gpuio_ld_relaxed_64(&st->reaped) == gpuio_ld_acquire_32(cq_tail)) {
    gpuio_direct_unlock(&st->reap_lock);
    return;
  }
  gpuio_u64 reaped = gpuio_ld_relaxed_64(&st->reaped);
  gpuio_u32 head = (gpuio_u32)reaped;
  const gpuio_u32 tail = gpuio_ld_acquire_32(cq_tail); /* CQEs below it are written */
  const gpuio_cqe *cqes = gpuio_ptr<const gpuio_cqe>(ch->direct.cqes);
  gpuio_u64 ok = 0, bad = 0;
  for (; head != tail; ++head, ++reaped) {
    const gpuio_cqe *c = &cqes[head & ch->direct.cq_mask];
    /* System-scope loads: a CQE slot is rewritten by the kernel every lap, so no
     * cached copy may be used. */
    const gpuio_u64 ud = gpuio_ld_relaxed_64(&c->user_data);
    const gpuio_u64 pos = ud & GPUIO_DIRECT_SEQ_POS;
    /* A refused request's stand-in NOP answers with the rulebook's errno. */
    const gpuio_u32 refused = (gpuio_u32)(ud >> GPUIO_DIRECT_SEQ_SHIFT);
    const gpuio_i32 res =
        refused ? -(gpuio_i32)refused : (gpuio_i32)gpuio_ld_relaxed_32((const gpuio_u32 *)&c->res);
    if (res >= 0) ++ok;
    else ++bad;
    gpuio_direct_complete(ch, pos, res);
  }
  gpuio_st_relaxed_64(&st->reaped, reaped);
  const gpuio_u64 completed = gpuio_ld_relaxed_64(&st->completed) + ok;
  const gpuio_u64 failed = gpuio_ld_relaxed_64(&st->failed) + bad;
  gpuio_st_relaxed_64(&st->completed, completed);
  gpuio_st_relaxed_64(&st->failed, failed);
  gpuio_stats *stats = gpuio_direct_stats(ch);
  gpuio_st_relaxed_64(&stats->completed, completed);
  gpuio_st_relaxed_64(&stats->failed, failed);
  gpuio_st_release_32(cq_head, head); /* the CQEs are read: the kernel may reuse them */
  gpuio_direct_unlock(&st->reap_lock);
}

GPUIO_FN int gpuio_direct_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  const gpuio_u64 pos = gpuio_fetch_add_64(&gpuio_direct_st(ch)->reserve, 1u);
  /* Close handshake: the host sets `closing`, fences, then watches `reserve`; we
   * take a position, fence, then read `closing`. Either the host sees our position
   * (and drains it) or we see `closing` (and fill our position with a stand-in NOP,
   * below, instead of a request). */
  gpuio_fence_sc();
  const bool closing = gpuio_impl_closing(ch);
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, pos);
  const gpuio_u64 slots = ch->slots;
  gpuio_impl_backoff backoff = {0};
  for (;;) {
    const gpuio_u64 q = gpuio_ld_acquire_64(&sl->seq);
    const gpuio_u64 base = q & GPUIO_DIRECT_SEQ_POS, gave_up = q >> GPUIO_DIRECT_SEQ_SHIFT;
    if (base == pos) break;
    if (gpuio_impl_past(deadline)) {
      /* Give up only as the next in line (base + (gave_up + 1) * slots): a position
       * further back waits until the ones before it got the slot or gave up too,
       * which their own (earlier) deadlines bound. */
      if (base + (gave_up + 1u) * slots == pos && gave_up < GPUIO_DIRECT_SEQ_MAX_GAVE_UP) {
        if (gpuio_cas_64(&sl->seq, q, base | ((gave_up + 1u) << GPUIO_DIRECT_SEQ_SHIFT)) != q) continue;
        gpuio_fetch_add_64(&gpuio_direct_stats(ch)->timed_out, 1u);
        return -GPUIO_ETIMEDOUT;
      }
      if (gpuio_impl_past(deadline + ch->timeout_ns)) {
        /* Only a thread stalled for a whole timeout between taking its deadline and
         * its position gets here; its position is lost and the ring stalls behind
         * it (the host's close() reports reserved positions never published). */
        gpuio_fetch_add_64(&gpuio_direct_stats(ch)->timed_out, 1u);
        return -GPUIO_ETIMEDOUT;
      }
    }
    /* Next in line: the slot may be waiting for a completion nobody else will reap
     * (its waiter gave up, or every thread is queued here), so reap while waiting,
     * and look again soon. Further back: the turn is laps away, so sleep in
     * proportion and leave the reap lock and the slot's word to those in front. */
    /* Positions that gave up are out of the line: they no longer wait. */
    const gpuio_u64 behind = (pos - base) / slots, laps = behind > gave_up ? behind - gave_up : 1u;
    if (laps <= 1u) {
      gpuio_direct_reap(ch);
      gpuio_impl_backoff_pause(&backoff, 1024u);
    } else {
      gpuio_sleep_ns(laps > 64u ? 256000u : (gpuio_u32)laps * 4000u);
    }
  }
  if (closing) {
    gpuio_direct_stand_in(ch, pos);
    return -GPUIO_ESHUTDOWN;
  }
  s->pos = pos;
  gpuio_impl_slot_bind(ch, s, (gpuio_u32)(pos & (slots - 1u)));
  return 0;
}

/* Submits a raw SQE in an acquired slot (copied verbatim except user_data). */
GPUIO_FN void gpuio_direct_submit_sqe(const gpuio_channel *ch, gpuio_slot *s, const gpuio_sqe *sqe) {
  gpuio_direct_fill(ch, s->pos, sqe, GPUIO_SLOT_IN_FLIGHT);
}

/* Turns a request into its SQE and submits it. A request the rulebook refuses
 * (gpuio_impl_check_request: the same table forward's and mailbox's hosts apply)
 * is not turned into I/O: its position is filled with a NOP whose user_data
 * carries the errno, and the reaper answers the waiter with -errno. So a request
 * that skipped the public calls' checks (gpuio_impl_request_raw) gets the same
 * answer on direct as on the other transports, and counts as failed like there. */
GPUIO_FN void gpuio_direct_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_sqe e = {};
  e.flags = GPUIO_IOSQE_FIXED_FILE; /* the ring requires it on every SQE */
  e.opcode = GPUIO_IORING_OP_NOP;
  const int refused = gpuio_impl_check_request(ch, r);
  if (refused) {
    gpuio_direct_fill_refused(ch, s->pos, &e, GPUIO_SLOT_IN_FLIGHT, (gpuio_u32)-refused);
    return;
  }
  /* Past the rulebook the op is one of these five, and the rest is in range. */
  const bool writes = r->op == GPUIO_OP_PWRITE || r->op == GPUIO_OP_WRITE;
  const bool positioned = r->op == GPUIO_OP_PWRITE || r->op == GPUIO_OP_PREAD;
  if (r->op != GPUIO_OP_NOP) {
    e.opcode = writes ? GPUIO_IORING_OP_WRITE_FIXED : GPUIO_IORING_OP_READ_FIXED;
    e.off = positioned ? (gpuio_u64)r->offset : ~0ull; /* ~0: the current position */
    e.fd = (gpuio_i32)r->endpoint; /* index into the fixed-file table */
    e.addr = ch->direct.fixed_buffer_host + r->staging_off;
    e.len = r->len;
    e.buf_index = 0;
  }
  gpuio_direct_submit_sqe(ch, s, &e);
}

GPUIO_FN int gpuio_direct_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, s->pos);
  gpuio_impl_backoff backoff = {0};
  for (;;) {
    if (gpuio_ld_acquire_32(&sl->state) == GPUIO_SLOT_DONE) {
      *result = (gpuio_i32)gpuio_ld_relaxed_32((const gpuio_u32 *)&sl->res);
      return 0;
    }
    gpuio_direct_reap(ch);
    if (gpuio_ld_acquire_32(&sl->state) == GPUIO_SLOT_DONE) continue;
    if (gpuio_impl_past(deadline)) {
      /* CAS against the reaper's IN_FLIGHT -> DONE: exactly one of the two wins. */
      if (gpuio_cas_32(&sl->state, GPUIO_SLOT_IN_FLIGHT, GPUIO_SLOT_ABANDONED) == GPUIO_SLOT_DONE) {
        gpuio_fence_sc();
        continue;
      }
      gpuio_fetch_add_64(&gpuio_direct_stats(ch)->timed_out, 1u);
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_impl_backoff_pause(&backoff, 1024u);
  }
}

/* Whether the request completed (no waiting; reaps if nobody else is): 1 with
 * *result, else 0. */
GPUIO_FN int gpuio_direct_poll(const gpuio_channel *ch, gpuio_slot *s, gpuio_i64 *result) {
  gpuio_direct_slot *sl = gpuio_direct_slot_of(ch, s->pos);
  if (gpuio_ld_acquire_32(&sl->state) != GPUIO_SLOT_DONE) gpuio_direct_reap(ch);
  if (gpuio_ld_acquire_32(&sl->state) != GPUIO_SLOT_DONE) return 0;
  *result = (gpuio_i32)gpuio_ld_relaxed_32((const gpuio_u32 *)&sl->res);
  return 1;
}

GPUIO_FN void gpuio_direct_release(const gpuio_channel *ch, gpuio_slot *s) { gpuio_direct_free(ch, s->pos); }

/* Runs one SQE exactly as given (except user_data) through the ring and returns the
 * CQE's res, or -errno from the channel (closed, timed out). What a kernel that
 * bypasses this header could submit: the ring's restrictions must refuse anything
 * outside NOP / READ_FIXED / WRITE_FIXED on fixed files and fixed buffer 0.
 *
 * What the ring itself enforces. An SQE a kernel writes on its own passes neither
 * gpuio_impl_check_request nor gpuio_direct_submit; only io_uring stands between
 * it and the files, and io_uring's restrictions filter opcodes, SQE flags and
 * (with the registration) which files and memory an SQE reaches. Against the
 * rulebook (core/src/request.rs), rule by rule:
 *   enforced, with io_uring's own errnos:
 *     unknown opcode         only NOP / READ_FIXED / WRITE_FIXED pass    -EACCES
 *     endpoint registered    IOSQE_FIXED_FILE required, fixed-file table -EBADF
 *     declared access        each fixed file is a reopening with exactly
 *                            the declared access                          -EBADF
 *     inside staging         fixed buffer 0 is the staging area           -EFAULT
 *   not enforceable (the restrictions do not look at these fields):
 *     reserved flags         the SQE's rw_flags (RWF_APPEND, RWF_NOWAIT, ...) pass
 *     positioned op on a file  a pipe or socket fixed file is written or read
 *     len > 0                a zero-length op completes with 0
 *     offset >= 0            off = -1 uses (and moves) the file position
 * So a hostile kernel can bend those four rules on its own channel, within the
 * files and access the host declared, and nothing beyond them. */
GPUIO_FN gpuio_i64 gpuio_direct_raw_sqe(const gpuio_channel *ch, const gpuio_sqe *sqe) {
  if (!ch || ch->magic != GPUIO_MAGIC) return -GPUIO_EINVAL;
  if (ch->version != GPUIO_ABI_VERSION) return -GPUIO_EPROTO;
  if (ch->transport != GPUIO_TRANSPORT_DIRECT) return -GPUIO_EPROTO;
  if (gpuio_impl_closing(ch)) return -GPUIO_ESHUTDOWN;
  gpuio_slot s;
  int e = gpuio_direct_acquire(ch, &s, gpuio_impl_deadline(ch));
  if (e) return e;
  gpuio_direct_submit_sqe(ch, &s, sqe);
  gpuio_i64 res = 0;
  e = gpuio_direct_wait(ch, &s, gpuio_impl_deadline(ch), &res);
  if (e) return e;
  gpuio_direct_release(ch, &s);
  return res;
}

#endif /* GPUIO_DIRECT_H */
