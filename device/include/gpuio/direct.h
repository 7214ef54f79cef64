/* gpuio/direct.h — the device side of the direct transport: the device writes
 * io_uring SQEs itself, the kernel's SQPOLL thread consumes them, and the device
 * reaps the CQEs. The host only set the ring up (confined: fixed files, staging as
 * fixed buffer 0, only NOP / READ_FIXED / WRITE_FIXED with IOSQE_FIXED_FILE, and
 * IOSQE_ASYNC on large transfers: GPUIO_DIRECT_ASYNC_BYTES) and runs a waker that
 * kicks a sleeping SQPOLL thread (core/src/direct/).
 *
 * Protocol (core/src/abi.rs has the full description). Two kinds of position:
 *   request slots  by turns, as on forward (gpuio/api.h, "turns"): position `pos`
 *                  (one fetch-add per warp on state.reserve) uses slot
 *                  i = pos % slots - its gpuio_direct_slot, its staging chunk and
 *                  SQE i - and a slot that is stuck (a read of a pipe nobody writes)
 *                  is passed over, so it holds only itself;
 *   SQ positions   taken at submit: the holder of slot i writes SQE i (user_data =
 *                  pos), takes q = fetch_add(state.sq_reserve), writes
 *                  sq_array[q % sq_entries] = i and stamps slot[q % sq_entries]
 *                  .sq_ready = q + 1 (release); whoever holds the publish lock then
 *                  advances the SQ tail over consecutive stamped positions with one
 *                  system-scope release store. SQPOLL consumes up to the tail, so the
 *                  tail must only move over written entries; since a position is
 *                  taken right before it is written, a request that never completes
 *                  leaves no hole behind it.
 *   wait     poll the slot's device-local `done` (== pos + 1 once answered);
 *            meanwhile try the reap lock and drain the CQ: each CQE's res goes to
 *            slot[user_data % slots] (res, then done = pos + 1, release), then the
 *            CQ head is advanced with a system-scope release store. At the deadline
 *            the waiter marks its slot ABANDONED and gives up (-ETIMEDOUT); the next
 *            turn owner takes the slot over once its `done` is there - never before,
 *            so SQE i and the staging chunk are not reused while the kernel may
 *            still read or write them.
 *   release  slot state = FREE.
 * Why the SQ cannot overflow: an SQ position is taken only by a slot holder, and a
 * slot is taken again only once its request completed (and so was consumed), so at
 * most `slots` = sq_entries positions are taken and not yet consumed.
 *
 * Closing: the host sets `closing` in the kernel's copy of the descriptor, fences,
 * then reads sq_reserve; a submitter takes its SQ position, fences, then reads
 * `closing` from that copy. Either the host sees the position (and drains it), or
 * the submitter sees `closing` and fills its SQE with a NOP that answers -ESHUTDOWN,
 * does not wait for it and leaves its slot ABANDONED (freed once that NOP is
 * reaped). Both words are device-local, so the submitter's fence is of device scope;
 * the host's store and read are copies, one after the other, each complete before
 * the next begins, and every access to device memory - a copy's, a kernel's load or
 * atomic - is made at the memory's point of coherence (core/src/direct/mod.rs).
 *
 * Every wait is bounded by the caller's deadline and backs off. Words only the
 * device touches (state, slot_state) are device-local; the ring words, SQEs and
 * CQEs are shared with the kernel; ch->stats is shared with the host: `submitted`
 * is written by the publish-lock holder, `completed`/`failed` by the reap-lock
 * holder, `timed_out` with a device atomic.
 */
#ifndef GPUIO_DIRECT_H
#define GPUIO_DIRECT_H

/* gpuio_direct_raw_sqe() is available (the bad-input conformance kernel uses it). */
#define GPUIO_DIRECT_RAW_SQE 1

/* An SQE's user_data: the request's position in the low 52 bits; above them the
 * errno of a request answered by a NOP instead (refused by the rulebook, or
 * submitted while the channel closed). */
#define GPUIO_DIRECT_SEQ_SHIFT 52u
#define GPUIO_DIRECT_SEQ_POS ((1ull << GPUIO_DIRECT_SEQ_SHIFT) - 1ull)

/* gpuio_slot.flags on direct: the request was submitted as a -ESHUTDOWN NOP. */
#define GPUIO_DIRECT_SLOT_SHUTDOWN 1u

/* A positioned transfer of at least this many bytes goes to the kernel's io-wq
 * workers (IOSQE_ASYNC) instead of being copied by the ring's one SQPOLL thread:
 * there, every copy of every request of the channel ran on that one thread, one after
 * another. Smaller ones stay inline, where a hand-off to a worker would cost more than
 * the copy. */
#define GPUIO_DIRECT_ASYNC_BYTES 65536u

/* How many marked writes of one file (of one bucket of files: endpoint %
 * GPUIO_DIRECT_WRITE_GATES) may be in flight at once; the next waits on the device
 * for one of them to complete (gpuio_direct_gate_take), for at most half its
 * timeout, then goes anyway. The kernel does not keep a file's marked writes apart:
 * a request marked IOSQE_ASYNC on a fixed file is io-wq's unbounded kind of work,
 * which it never serializes by file, so every worker the ring allows took one of the
 * file's writes and all but one queued on the file's lock, spinning (H200,
 * 2026-11-28: one file's 1 MiB writes from the whole device, 16 workers, 3.04 GB/s
 * at 4.1 s of host CPU per GB). Writes of different files still run side by side. */
#define GPUIO_DIRECT_WRITE_DEPTH 1u

/* CQEs a reaper reads at once (gpuio_direct_reap). */
#define GPUIO_DIRECT_REAP_BATCH 8u

GPUIO_FN gpuio_direct_state *gpuio_direct_st(const gpuio_channel *ch) {
  return gpuio_ptr<gpuio_direct_state>(ch->direct.state);
}
/* Where the slots are, read from the descriptor: a reaper reads it once per round,
 * since every fence and acquire of the round empties L1, and each descriptor field
 * read again after one was a trip to L2 of its own before the loads that needed it. */
typedef struct gpuio_direct_slots_view {
  gpuio_direct_slot *base;
  gpuio_u64 mask;      /* slots - 1: slots == sq_entries, a power of two (io_uring's) */
  gpuio_u32 lap_shift; /* log2(slots): a position's lap */
} gpuio_direct_slots_view;
GPUIO_FN gpuio_direct_slots_view gpuio_direct_view(const gpuio_channel *ch) {
  const gpuio_u32 slots = ch->slots;
  return gpuio_direct_slots_view{gpuio_ptr<gpuio_direct_slot>(ch->direct.slot_state), (gpuio_u64)slots - 1u,
                                 gpuio_ctz_32(slots)};
}
GPUIO_FN gpuio_direct_slot *gpuio_direct_view_at(const gpuio_direct_slots_view &v, gpuio_u64 pos) {
  return v.base + (pos & v.mask);
}

/* Slot `index` (its turn, its answer), and the publish stamp of SQ positions
 * q with q % sq_entries == index (sq_entries == slots). */
GPUIO_FN gpuio_direct_slot *gpuio_direct_slot_at(const gpuio_channel *ch, gpuio_u64 index) {
  return gpuio_direct_view_at(gpuio_direct_view(ch), index);
}
GPUIO_FN gpuio_stats *gpuio_direct_stats(const gpuio_channel *ch) { return gpuio_impl_stats(ch); }
GPUIO_FN void gpuio_direct_count_timeout(const gpuio_channel *ch, int e) {
  if (e == -GPUIO_ETIMEDOUT) gpuio_fetch_add_64(&gpuio_direct_stats(ch)->timed_out, 1u);
}

/* A device-local spin lock, tried once. The CAS is relaxed on CUDA: the fence after
 * it makes taking the lock an acquire on every target. Device scope, as for every
 * word only the device's threads touch (gpuio/arch.h): a system-scope fence waits
 * for the thread's writes across PCIe, ~1 us each on an H100. */
GPUIO_FN bool gpuio_direct_trylock(gpuio_u32 *lock) {
  if (gpuio_cas_32(lock, 0u, 1u) != 0u) return false;
  gpuio_fence_dev();
  return true;
}
GPUIO_FN void gpuio_direct_unlock(gpuio_u32 *lock) { gpuio_st_release_dev_32(lock, 0u); }

/* Stamps each lane of the publishing warp reads at once (gpuio_direct_publish_round). */
#define GPUIO_DIRECT_PUBLISH_BATCH 8u

/* Advances the SQ tail over consecutive stamped SQ positions, with every lane of the
 * calling warp that is here (all of them must be: gpuio_warp_active). Whoever holds
 * the publish lock does it for everyone; a submitter that finds the lock taken leaves
 * its position to the holder.
 * Lost wake-up: a submitter stamps `sq_ready`, fences, then looks at the lock (its
 * warp's leader looks for the lanes, after a warp barrier that orders their stamps
 * before its look); the holder unlocks, fences, then re-checks the first position it
 * did not publish. With both fences sequentially consistent, either the submitter's
 * side sees the lock free or the holder sees the stamp, so no written position is
 * left behind with nobody to publish it. Both are device threads and `sq_ready` and
 * the lock device-local: device scope (gpuio_fence_sc_dev). What reaches the kernel's
 * SQPOLL thread is ordered by the system-scope release of the SQ tail, which is
 * cumulative: it carries every SQE write the lanes observed through `sq_ready`
 * (each lane's fence after its loads is their acquire, the warp barrier hands them
 * to the leader).
 * The lanes share the walk: lane r of L loads the stamps of positions
 * p + j * L + r (j < GPUIO_DIRECT_PUBLISH_BATCH) of each stretch of
 * L * GPUIO_DIRECT_PUBLISH_BATCH, every load issued before any is used, and a ballot
 * per j finds where the run of stamped positions ends. (Measured on an H200,
 * 2026-11-29, the whole device making NOPs: one thread reading the stamps one after
 * another, an acquire each, walked 1.58 s of a 1.87 s run, ~0.73 us a stamp, and
 * paced the ring at 1.16-1.18 M/s; sixteen loads in flight and one fence, 3.84-3.98
 * M/s, the walk still ~15 us a pass of ~130 positions; shared by the warp's lanes,
 * 10.4-10.8 M/s, the walk ~1.1 us a pass.) Out of line, as the reap round: only the
 * lock's holder walks. */
GPUIO_NOINLINE void gpuio_direct_publish_round(const gpuio_channel *ch) {
  gpuio_direct_state *st = gpuio_direct_st(ch);
  gpuio_u32 *sq_tail = gpuio_ptr<gpuio_u32>(ch->direct.sq_tail);
  const gpuio_u64 entries = ch->direct.sq_entries;
  const gpuio_direct_slots_view v = gpuio_direct_view(ch);
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask), lanes = gpuio_warp_count(mask);
  const bool alone = gpuio_impl_warp_alone(mask);
  /* The lanes' stamps before the leader's look at the lock (their fences came first). */
  if (!alone) gpuio_warp_sync(mask);
  for (;;) {
    /* The leader's part: the lock and where the run starts (~0: not taken). Looked at
     * before it is tried, as in gpuio_direct_reap: reading a held lock counts as
     * failing to take it in the argument above. */
    gpuio_u64 start = ~0ull;
    if (rank == 0u && gpuio_ld_relaxed_32(&st->publish_lock) == 0u && gpuio_direct_trylock(&st->publish_lock))
      start = gpuio_ld_relaxed_64(&st->published);
    if (!alone) start = gpuio_warp_broadcast_64(mask, start, leader);
    if (start == ~0ull) return;
    gpuio_u64 p = start;
    for (bool more = true; more;) {
      gpuio_u64 seen[GPUIO_DIRECT_PUBLISH_BATCH] = {};
      GPUIO_UNROLL
      for (gpuio_u32 j = 0; j < GPUIO_DIRECT_PUBLISH_BATCH; ++j) {
        const gpuio_u64 q = p + j * lanes + rank;
        if (q - start < entries) seen[j] = gpuio_ld_relaxed_64(&gpuio_direct_view_at(v, q)->sq_ready);
      }
      GPUIO_UNROLL
      for (gpuio_u32 j = 0; j < GPUIO_DIRECT_PUBLISH_BATCH; ++j) {
        const gpuio_u64 q = p + j * lanes + rank;
        const gpuio_u64 gap = mask & ~gpuio_warp_ballot(mask, q - start < entries && seen[j] == q + 1u);
        if (!more) continue;
        if (gap != 0u) {
          /* The first lane (by rank) whose position is not stamped ends the run: the
           * run goes on over the lanes below it. */
          const gpuio_u64 first = gap & (~gap + 1u);
          p += j * lanes + gpuio_popc_64(mask & (first - 1u));
          more = false;
        }
      }
      if (more) p += (gpuio_u64)GPUIO_DIRECT_PUBLISH_BATCH * lanes;
    }
    if (p != start) {
      /* Each lane's acquire of the stamps it read, then the barrier hands them to the
       * leader, whose release of the SQ tail carries them to the kernel. */
      gpuio_fence_dev();
      if (!alone) gpuio_warp_sync(mask);
    }
    bool again = false;
    if (rank == 0u) {
      if (p != start) {
        gpuio_st_relaxed_64(&st->published, p);
        /* Host-visible counters are only ever stored from device-local truth, never
         * read back from host memory. Stored before the tail, which releases it: the
         * host's waker holds every SQ tail it reads against this count, and a tail
         * above it is a kernel that moved the tail itself (core/src/direct/waker.rs). */
        gpuio_st_relaxed_64(&gpuio_direct_stats(ch)->submitted, p);
        /* Publishes the SQEs and sq_array entries (written by other threads, observed
         * through `sq_ready`) to the kernel: system-scope release, cumulative over
         * what this thread saw. */
        gpuio_st_release_32(sq_tail, (gpuio_u32)p);
      }
      gpuio_direct_unlock(&st->publish_lock);
      gpuio_fence_sc_dev();
      again = gpuio_ld_acquire_dev_64(&gpuio_direct_view_at(v, p)->sq_ready) == p + 1;
    }
    if (!alone) again = gpuio_warp_broadcast_64(mask, again ? 1u : 0u, leader) != 0u;
    if (!again) return;
  }
}

/* The publish every submitter calls after stamping its position and fencing: a look
 * at the lock inline, the round out of line. */
GPUIO_FN void gpuio_direct_publish(const gpuio_channel *ch) {
  if (gpuio_ld_relaxed_32(&gpuio_direct_st(ch)->publish_lock) != 0u) return;
  gpuio_direct_publish_round(ch);
}

/* Gives back a place in write gate `gate`. Called by the reap-lock holder. */
GPUIO_FN void gpuio_direct_gate_give(const gpuio_channel *ch, gpuio_u32 gate) {
  gpuio_u32 *g = &gpuio_direct_st(ch)->write_gates[gate];
  for (gpuio_u32 held = gpuio_ld_relaxed_32(g); held != 0u;) {
    const gpuio_u32 was = gpuio_cas_32(g, held, held - 1u);
    if (was == held) return;
    held = was;
  }
}

/* Writes SQE `s->index` (a copy of `sqe` with user_data = position, and above it
 * the errno `refused` of a request answered by a NOP), takes the next SQ position
 * for it, and publishes. `gate`: 1 + the write gate the request holds (given back
 * with its completion), or 0. The caller holds the slot. */
GPUIO_FN void gpuio_direct_fill(const gpuio_channel *ch, gpuio_slot *s, const gpuio_sqe *sqe, gpuio_u32 refused,
                                gpuio_u32 gate) {
  gpuio_direct_state *st = gpuio_direct_st(ch);
  /* Before the stamp below, which orders it before the completion's reaper reads it. */
  gpuio_st_relaxed_32(&gpuio_direct_slot_at(ch, s->index)->gate, gate);
  const gpuio_u64 q = gpuio_fetch_add_64(&st->sq_reserve, 1u);
  /* Close handshake (top of this file): the position, then `closing` in the kernel's
   * copy, both device-local. (Measured on an H200, 2026-11-29, the whole device making
   * NOPs: with the shared word, a system-scope fence and a read across PCIe took 2.8
   * us of a submit's 5.3, and the ring ran 10.1-10.8 M/s; with the kernel's copy 0.5
   * us, 11.2-12.5 M/s.) */
  gpuio_fence_sc_dev();
  gpuio_sqe e = *sqe;
  s->flags = 0;
  if (gpuio_impl_closing(ch)) {
    e = gpuio_sqe{};
    e.opcode = GPUIO_IORING_OP_NOP;
    e.flags = GPUIO_IOSQE_FIXED_FILE;
    refused = GPUIO_ESHUTDOWN;
    s->flags = GPUIO_DIRECT_SLOT_SHUTDOWN;
  }
  e.user_data = s->pos | ((gpuio_u64)refused << GPUIO_DIRECT_SEQ_SHIFT);
  gpuio_ptr<gpuio_sqe>(ch->direct.sqes)[s->index] = e;
  gpuio_st_relaxed_32(gpuio_ptr<gpuio_u32>(ch->direct.sq_array) + (q & ch->direct.sq_mask), s->index);
  /* The SQE and the index before the stamp, the stamp before the look at the lock. */
  gpuio_st_release_dev_64(&gpuio_direct_slot_at(ch, q)->sq_ready, q + 1);
  gpuio_fence_sc_dev();
  gpuio_direct_publish(ch);
}

/* CQEs whose slots a reaper looks at together (gpuio_direct_complete_some). */
#define GPUIO_DIRECT_COMPLETE_BATCH 4u

/* The position a CQE's user_data names, and the CQE's result: the res the kernel
 * wrote, or the errno carried above the position by a request answered by a NOP. */
GPUIO_FN gpuio_u64 gpuio_direct_cqe_pos(gpuio_u64 ud) { return ud & GPUIO_DIRECT_SEQ_POS; }
GPUIO_FN gpuio_i32 gpuio_direct_cqe_res(gpuio_u64 ud, gpuio_u32 raw) {
  const gpuio_u32 refused = (gpuio_u32)(ud >> GPUIO_DIRECT_SEQ_SHIFT);
  return refused ? -(gpuio_i32)refused : (gpuio_i32)raw;
}

/* Records the completions of CQEs i < k <= GPUIO_DIRECT_COMPLETE_BATCH (user_data
 * ud[i], res raw[i]): the result, then done = pos + 1, in each one's slot -
 * if the slot is still held for that position and not answered yet. A CQE that names
 * no position in flight (not an SQE this header wrote, or one the kernel replayed, in
 * this batch or before) is counted by the caller and otherwise ignored. Called by the
 * lanes of the warp that holds the reap lock, each for its own CQEs: two CQEs of one
 * position that two lanes read in one round (a replay; the host reports more
 * completions than requests at close) are both taken, and the stamp is the same.
 * One batch is one trip to L2 and one fence: every slot word the checks need is
 * loaded before any is used, then the results (and write gates) are stored, one
 * device-scope fence orders them all before the stamps, and the stamps are plain
 * stores - a release of each stamp, as the fence and the store make together for a
 * waiter's acquire of `done`. (Measured on an H200, 2026-11-28, the whole device
 * making NOPs: 0.355 M/s with each CQE completed in turn - its loads one after
 * another, a release per stamp - against 0.48 M/s in batches of four.) */
GPUIO_FN void gpuio_direct_complete_some(const gpuio_channel *ch, const gpuio_direct_slots_view &v, const gpuio_u64 *ud,
                                         const gpuio_u32 *raw, gpuio_u32 k) {
  gpuio_u64 holder[GPUIO_DIRECT_COMPLETE_BATCH] = {}, word[GPUIO_DIRECT_COMPLETE_BATCH] = {},
            done[GPUIO_DIRECT_COMPLETE_BATCH] = {};
  gpuio_u32 gate[GPUIO_DIRECT_COMPLETE_BATCH] = {};
  GPUIO_UNROLL
  for (gpuio_u32 i = 0; i < GPUIO_DIRECT_COMPLETE_BATCH; ++i) {
    if (i < k) {
      gpuio_direct_slot *sl = gpuio_direct_view_at(v, gpuio_direct_cqe_pos(ud[i]));
      holder[i] = gpuio_ld_relaxed_64(&sl->turn.holder);
      word[i] = gpuio_ld_relaxed_64(&sl->turn.word);
      done[i] = gpuio_ld_relaxed_64(&sl->done);
      gate[i] = gpuio_ld_relaxed_32(&sl->gate);
    }
  }
  gpuio_u32 answer = 0; /* bit i: complete CQE i */
  GPUIO_UNROLL
  for (gpuio_u32 i = 0; i < GPUIO_DIRECT_COMPLETE_BATCH; ++i) {
    const gpuio_u64 pos = gpuio_direct_cqe_pos(ud[i]);
    if (i < k && holder[i] == pos >> v.lap_shift && gpuio_impl_turn_state(word[i]) != GPUIO_SLOT_FREE &&
        done[i] != pos + 1u) {
      bool again = false; /* the same position earlier in the batch: a replay */
      GPUIO_UNROLL
      for (gpuio_u32 j = 0; j < i; ++j) again = again || gpuio_direct_cqe_pos(ud[j]) == pos;
      if (!again) answer |= 1u << i;
    }
  }
  if (answer == 0u) return;
  GPUIO_UNROLL
  for (gpuio_u32 i = 0; i < GPUIO_DIRECT_COMPLETE_BATCH; ++i) {
    if (answer >> i & 1u) {
      /* Once per request: before `done`, after which the slot may be taken again. */
      if (gate[i] != 0u && gate[i] <= GPUIO_DIRECT_WRITE_GATES) gpuio_direct_gate_give(ch, gate[i] - 1u);
      gpuio_st_relaxed_32((gpuio_u32 *)&gpuio_direct_view_at(v, gpuio_direct_cqe_pos(ud[i]))->res,
                          (gpuio_u32)gpuio_direct_cqe_res(ud[i], raw[i]));
    }
  }
  gpuio_fence_dev(); /* the results and gates before the stamps */
  GPUIO_UNROLL
  for (gpuio_u32 i = 0; i < GPUIO_DIRECT_COMPLETE_BATCH; ++i)
    if (answer >> i & 1u) {
      const gpuio_u64 pos = gpuio_direct_cqe_pos(ud[i]);
      gpuio_st_relaxed_64(&gpuio_direct_view_at(v, pos)->done, pos + 1u);
    }
}

/* Drains the CQ if nobody else is doing it, with every lane of the calling warp that
 * is here (all of them must be: gpuio_warp_active). Every waiting thread calls this,
 * so it must cost them nothing across PCIe: the lock word is device-local and looked
 * at before it is tried (test and test-and-set, by the warp's leader alone), and only
 * the warp that holds it reads the kernel's CQ tail (its leader) and CQEs. With a
 * hundred thousand waiters, one PCIe read is in flight at a time instead of one per
 * waiter.
 * The lanes of the holding warp share the round: lane r of L takes CQEs n + j * L + r
 * (j < GPUIO_DIRECT_REAP_BATCH) of each stretch of L * GPUIO_DIRECT_REAP_BATCH, so
 * each load instruction reads consecutive CQEs, and completes its own
 * (gpuio_direct_complete_some). (Measured on an H200, 2026-11-28, the whole device
 * making NOPs: with one lane doing each round, completing CQEs took 0.70 s and reading
 * them 0.44 s of a 1.97 s run at 1.10 M/s; shared by the warp's lanes, 1.22-1.33 M/s,
 * and the lock is then mostly taken to find no new CQE.) */
GPUIO_NOINLINE void gpuio_direct_reap_round(const gpuio_channel *ch) {
  gpuio_u32 *cq_head = gpuio_ptr<gpuio_u32>(ch->direct.cq_head);
  const gpuio_u32 *cq_tail = gpuio_ptr<const gpuio_u32>(ch->direct.cq_tail);
  gpuio_direct_state *st = gpuio_direct_st(ch);
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask), lanes = gpuio_warp_count(mask);
  /* The leader's part: the lock, the head and the tail. The round it hands the warp:
   * the count of CQEs to reap above the head, and the head (0: nothing to do). */
  gpuio_u64 round = 0;
  gpuio_u64 reaped = 0;
  if (rank == 0u && gpuio_ld_relaxed_32(&st->reap_lock) == 0u && gpuio_direct_trylock(&st->reap_lock)) {
    /* The CQ head is kept device-local (`reaped`); the kernel's copy is only stored. */
    reaped = gpuio_ld_relaxed_64(&st->reaped);
    const gpuio_u32 head = (gpuio_u32)reaped;
    const gpuio_u32 tail = gpuio_ld_acquire_32(cq_tail); /* CQEs below it are written */
    /* Nothing new unless the tail is past the head. A CQ tail only grows, yet one was
     * seen to read below a value read before (Linux 6.18, the CPU device, tests/
     * sockets.rs with six copies at once, about once in 200 runs: the tail read 1, this
     * reaper took that CQE, then the word read 0 for many reaps, and 4 at close; no
     * code of gpuio's stores to it). Taken as a lap's worth of new CQEs, such a tail
     * sent the head past it for good, a CQ's worth at every later reap: waiters'
     * answers went unseen (-ETIMEDOUT), and close found the head tens of thousands past
     * the tail and reported a scribbled ring.
     * At most one CQ's worth per round: a tail that claims more was not written by the
     * kernel (the host reports a scribbled ring), and the CQEs past a lap would be read
     * twice. */
    if ((gpuio_i32)(tail - head) <= 0) {
      gpuio_direct_unlock(&st->reap_lock);
    } else {
      const gpuio_u32 cq_entries = ch->direct.cq_entries;
      const gpuio_u32 count = (tail - head) < cq_entries ? (tail - head) : cq_entries;
      round = (gpuio_u64)count << 32 | head;
    }
  }
  if (!gpuio_impl_warp_alone(mask)) {
    round = gpuio_warp_broadcast_64(mask, round, leader);
    /* The leader's acquire of the tail before every lane's loads of the CQEs. */
    gpuio_warp_sync(mask);
  }
  if (round == 0u) return;
  const gpuio_u32 head = (gpuio_u32)round, limit = (gpuio_u32)(round >> 32);
  const gpuio_cqe *cqes = gpuio_ptr<const gpuio_cqe>(ch->direct.cqes);
  const gpuio_u32 cq_mask = ch->direct.cq_mask;
  const gpuio_direct_slots_view view = gpuio_direct_view(ch);
  gpuio_u64 ok = 0; /* the round's CQEs with a result >= 0; the rest of `limit` failed */
  /* The CQEs are read GPUIO_DIRECT_REAP_BATCH to a lane, every load issued before any
   * is used: read one after another, each CQE was a read of host memory (~1.1 us on an
   * H200) in the one thread that reaped for the whole channel. */
  for (gpuio_u32 n = 0; n < limit; n += lanes * GPUIO_DIRECT_REAP_BATCH) {
    gpuio_u64 ud[GPUIO_DIRECT_REAP_BATCH] = {};
    gpuio_u32 raw[GPUIO_DIRECT_REAP_BATCH] = {};
    gpuio_u32 k = 0; /* this lane's CQEs of the stretch */
    GPUIO_UNROLL
    for (gpuio_u32 j = 0; j < GPUIO_DIRECT_REAP_BATCH; ++j) {
      const gpuio_u32 i = n + j * lanes + rank;
      if (i < limit) {
        /* Plain loads, after the acquire of the tail: the kernel wrote these CQEs
         * before it released that tail, so the memory model has these loads see them
         * whole and new, never an earlier lap's copy. Strong loads (relaxed, system
         * scope) of one line each waited for the one before across PCIe: a batch's
         * sixteen took ~11 us of the reaper's time with the whole device waiting,
         * ~2.4 us for one CQE's two (H200, 2026-11-28, clock64 around them). */
        const gpuio_cqe c = cqes[(head + i) & cq_mask];
        ud[j] = c.user_data;
        raw[j] = (gpuio_u32)c.res;
        k = j + 1u;
      }
    }
    GPUIO_UNROLL
    for (gpuio_u32 j = 0; j < GPUIO_DIRECT_REAP_BATCH; ++j) {
      ok += gpuio_popc_64(gpuio_warp_ballot(mask, j < k && gpuio_direct_cqe_res(ud[j], raw[j]) >= 0));
    }
    static_assert(GPUIO_DIRECT_REAP_BATCH % GPUIO_DIRECT_COMPLETE_BATCH == 0u, "whole batches of completions");
    GPUIO_UNROLL
    for (gpuio_u32 b = 0; b < GPUIO_DIRECT_REAP_BATCH; b += GPUIO_DIRECT_COMPLETE_BATCH)
      if (b < k)
        gpuio_direct_complete_some(ch, view, ud + b, raw + b,
                                   k - b < GPUIO_DIRECT_COMPLETE_BATCH ? k - b : GPUIO_DIRECT_COMPLETE_BATCH);
  }
  /* Every lane's CQEs read before the leader gives them back to the kernel. */
  gpuio_warp_sync(mask);
  if (rank != 0u) return;
  gpuio_st_relaxed_64(&st->reaped, reaped + limit);
  const gpuio_u64 completed = gpuio_ld_relaxed_64(&st->completed) + ok;
  const gpuio_u64 failed = gpuio_ld_relaxed_64(&st->failed) + (limit - ok);
  gpuio_st_relaxed_64(&st->completed, completed);
  gpuio_st_relaxed_64(&st->failed, failed);
  gpuio_stats *stats = gpuio_direct_stats(ch);
  gpuio_st_relaxed_64(&stats->completed, completed);
  gpuio_st_relaxed_64(&stats->failed, failed);
  gpuio_st_release_32(cq_head, head + limit); /* the CQEs are read: the kernel may reuse them */
  gpuio_direct_unlock(&st->reap_lock);
}

/* The reap every waiter calls: a look at the lock inline, the round out of line. The
 * round is a slow path (one warp at a time holds the lock) with unrolled loads and
 * completions: inlined at every place a direct call waits, it made the compile of the
 * conformance kernels for gfx90a take 324 s (hipcc, device code, -O3, 2026-11-29;
 * 203 s before the round's batches and warp), out of line 98 s. */
GPUIO_FN void gpuio_direct_reap(const gpuio_channel *ch) {
  if (gpuio_ld_relaxed_32(&gpuio_direct_st(ch)->reap_lock) != 0u) return;
  gpuio_direct_reap_round(ch);
}

/* Whether the abandoned request of lap `holder` on slot `index` was answered (its
 * CQE reaped), so the turn owner may take the slot over; nudge(): reap while next
 * in line, since nobody else may be collecting the completion the slot waits for. */
struct gpuio_direct_reclaim {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_u32 index, gpuio_u64 holder) const {
    return gpuio_ld_acquire_dev_64(&gpuio_direct_slot_at(ch, index)->done) == holder * ch->slots + index + 1u;
  }
  GPUIO_METHOD void nudge() const { gpuio_direct_reap(ch); }
};

/* Claims a slot by turns (warp-cooperative; a stuck slot is passed over) and binds
 * it to its staging chunk: 0, or -ETIMEDOUT / -ESHUTDOWN holding nothing. */
GPUIO_FN int gpuio_direct_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  gpuio_direct_state *st = gpuio_direct_st(ch);
  const gpuio_impl_turns tt = {&gpuio_direct_slot_at(ch, 0)->turn, sizeof(gpuio_direct_slot), &st->reserve, 0u,
                               ch->slots, 1u};
  const gpuio_direct_reclaim reclaim = {ch};
  const int e = gpuio_impl_turn_acquire(ch, &tt, 0u, s, deadline, reclaim);
  if (!e) gpuio_impl_slot_stage(s, ch->staging, ch->slot_size);
  gpuio_direct_count_timeout(ch, e);
  s->flags = 0;
  return e;
}

/* Submits a raw SQE in an acquired slot (copied verbatim except user_data). */
GPUIO_FN void gpuio_direct_submit_sqe(const gpuio_channel *ch, gpuio_slot *s, const gpuio_sqe *sqe) {
  gpuio_direct_fill(ch, s, sqe, 0u, 0u);
}

/* Submits, in place of a request, a NOP whose completion answers it with `err`
 * (-errno). The caller holds the slot. */
GPUIO_FN void gpuio_direct_refuse(const gpuio_channel *ch, gpuio_slot *s, int err) {
  gpuio_sqe nop = {};
  nop.flags = GPUIO_IOSQE_FIXED_FILE; /* the ring requires it on every SQE */
  nop.opcode = GPUIO_IORING_OP_NOP;
  gpuio_direct_fill(ch, s, &nop, (gpuio_u32)-err, 0u);
}

/* Takes a place in write gate `gate` (below GPUIO_DIRECT_WRITE_DEPTH writes in
 * flight), waiting for one until `until`: 1 holding a place, 0 holding none (the
 * wait ran out: the write goes without its turn), or -ESHUTDOWN. The gate only
 * spares the kernel's workers a pile-up on one file's lock, so a write never fails
 * for want of it: the gate is a compare-and-swap, not a queue, and a waiter can lose
 * it to others again and again (the CPU device, 64 threads on one file and one core:
 * 5 s). The gate is device-local and only looked at until it is tried; meanwhile the
 * waiter reaps, since the write that holds the gate may be waiting for a reaper. */
GPUIO_FN int gpuio_direct_gate_take(const gpuio_channel *ch, gpuio_u32 gate, gpuio_u64 until) {
  gpuio_u32 *g = &gpuio_direct_st(ch)->write_gates[gate];
  gpuio_impl_backoff backoff = {0u};
  for (;;) {
    const gpuio_u32 held = gpuio_ld_relaxed_32(g);
    if (held < GPUIO_DIRECT_WRITE_DEPTH && gpuio_cas_32(g, held, held + 1u) == held) return 1;
    if (gpuio_impl_closing(ch)) return -GPUIO_ESHUTDOWN;
    if (gpuio_impl_past(until)) return 0;
    gpuio_direct_reap(ch);
    gpuio_impl_backoff_pause(&backoff, 1024u);
  }
}

/* Turns a request into its SQE and submits it. A request the rulebook refuses
 * (gpuio_impl_check_request: the same table forward's and mailbox's hosts apply)
 * is not turned into I/O: its slot's SQE is a NOP whose user_data carries the
 * errno, and the reaper answers the waiter with -errno. So a request that skipped
 * the public calls' checks (gpuio_impl_request_raw) gets the same answer on direct
 * as on the other transports, and counts as failed like there. */
GPUIO_FN void gpuio_direct_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  const int refused = gpuio_impl_check_request(ch, r);
  if (refused) {
    gpuio_direct_refuse(ch, s, refused);
    return;
  }
  gpuio_sqe e = {};
  e.flags = GPUIO_IOSQE_FIXED_FILE; /* the ring requires it on every SQE */
  e.opcode = GPUIO_IORING_OP_NOP;
  /* Past the rulebook the op is one of these seven, and the rest is in range. SEND
   * and RECV (on a socket alone, by the rulebook) go as WRITE_FIXED / READ_FIXED
   * on the socket's fixed file, which on a socket are send(2) / recv(2) without
   * flags: IORING_OP_SEND / RECV take a buffer address the ring cannot confine to
   * the staging area, so the ring refuses them (below, "What the ring itself
   * enforces"). No SIGPIPE either way: the ring's SQPOLL thread issues every SQE
   * and, like every io_uring thread, has all signals blocked, so a closed peer is
   * -EPIPE as on the other transports (tests/sockets.rs). */
  const bool writes = gpuio_impl_op_writes(r->op);
  const bool positioned = gpuio_impl_op_positioned(r->op);
  if (r->op != GPUIO_OP_NOP) {
    e.opcode = writes ? GPUIO_IORING_OP_WRITE_FIXED : GPUIO_IORING_OP_READ_FIXED;
    e.off = positioned ? (gpuio_u64)r->offset : ~0ull; /* ~0: the current position */
    e.fd = (gpuio_i32)r->endpoint; /* index into the fixed-file table */
    e.addr = ch->direct.fixed_buffer_host + r->staging_off;
    e.len = r->len;
    e.buf_index = 0;
    if (positioned && r->len >= GPUIO_DIRECT_ASYNC_BYTES) e.flags |= GPUIO_IOSQE_ASYNC;
  }
  gpuio_u32 gate = 0;
  if (writes && (e.flags & GPUIO_IOSQE_ASYNC)) {
    /* A file's marked writes one at a time (GPUIO_DIRECT_WRITE_DEPTH). A write waits
     * for its turn at most half its timeout, then goes without it, leaving the rest
     * of the timeout for its answer; one the channel's close overtakes is answered by
     * a NOP with -ESHUTDOWN. */
    const gpuio_u32 g = r->endpoint % GPUIO_DIRECT_WRITE_GATES;
    const int w = gpuio_direct_gate_take(ch, g, gpuio_impl_deadline_after(s->timeout_ns / 2u));
    if (w < 0) {
      gpuio_direct_refuse(ch, s, w);
      return;
    }
    if (w) gate = g + 1u;
  }
  gpuio_direct_fill(ch, s, &e, 0u, gate);
}

/* Whether the request was answered (no waiting; reaps if nobody else is): 1 with
 * *result, else 0. */
GPUIO_FN int gpuio_direct_poll(const gpuio_channel *ch, gpuio_slot *s, gpuio_i64 *result) {
  /* The slot's turn is its first member (offset 0, asserted from abi.rs layout()). */
  const gpuio_direct_slot *sl = (const gpuio_direct_slot *)s->turn;
  if (gpuio_ld_acquire_dev_64(&sl->done) != s->pos + 1) {
    gpuio_direct_reap(ch);
    if (gpuio_ld_acquire_dev_64(&sl->done) != s->pos + 1) return 0;
  }
  *result = (gpuio_i32)gpuio_ld_relaxed_32((const gpuio_u32 *)&sl->res);
  return 1;
}

struct gpuio_direct_answered {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_slot *s, gpuio_i64 *result) const { return gpuio_direct_poll(ch, s, result); }
};
/* 0 with the result (slot still held), or -ETIMEDOUT with the slot abandoned (the
 * next turn owner takes it over once the CQE is reaped); -ESHUTDOWN, abandoned the
 * same way, for a request submitted as a NOP because the channel was closing. The
 * lanes of a warp wait together (gpuio_impl_wait_answer). */
GPUIO_FN int gpuio_direct_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  const bool shutdown = (s->flags & GPUIO_DIRECT_SLOT_SHUTDOWN) != 0u;
  const gpuio_direct_answered answered = {ch};
  /* A -ESHUTDOWN NOP is looked at once and not waited for: the host may be closing
   * the ring under it. `done` is device-local (the reaper stamps it). */
  int e = gpuio_impl_wait_answer(s, shutdown ? 0u : deadline, GPUIO_WAIT_LOCAL_NS, result, answered);
  if (shutdown && e == -GPUIO_ETIMEDOUT) return -GPUIO_ESHUTDOWN;
  gpuio_direct_count_timeout(ch, e);
  return e;
}

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
 *                            (IORING_OP_SEND / RECV too: their address
 *                            is not bound to the fixed buffer)
 *     endpoint registered    IOSQE_FIXED_FILE required, fixed-file table -EBADF
 *     declared access        each fixed file is a reopening with exactly
 *                            the declared access                          -EBADF
 *     inside staging         fixed buffer 0 is the staging area           -EFAULT
 *   not enforceable (the restrictions do not look at these fields):
 *     reserved flags         the SQE's rw_flags (RWF_APPEND, RWF_NOWAIT, ...) pass
 *     the endpoint's kind    a pipe or socket fixed file is written or read
 *                            at an offset, a file without SEND/RECV's -ENOTSOCK
 *     len > 0                a zero-length op completes with 0
 *     offset >= 0            off = -1 uses (and moves) the file position
 * So a hostile kernel can bend those four rules on its own channel, within the
 * files and access the host declared, and nothing beyond them. Of the SQE flags only
 * IOSQE_ASYNC passes besides IOSQE_FIXED_FILE (links, drains, buffer selection and
 * skipped completions are -EACCES): it picks which kernel thread runs a request, not
 * what the request reaches; on a socket or pipe read it holds one of the ring's capped
 * io workers (DirectBuilder::io_workers, core/src/direct/mod.rs) while it waits. */
GPUIO_FN gpuio_i64 gpuio_direct_raw_sqe(const gpuio_channel *ch, const gpuio_sqe *sqe) {
  int e = gpuio_impl_check_descriptor(ch);
  if (e) return e;
  if (ch->transport != GPUIO_TRANSPORT_DIRECT) return -GPUIO_EPROTO;
  if (gpuio_impl_closing(ch)) return -GPUIO_ESHUTDOWN;
  gpuio_slot s;
  e = gpuio_direct_acquire(ch, &s, gpuio_impl_deadline(ch));
  if (e) return e;
  gpuio_direct_submit_sqe(ch, &s, sqe);
  gpuio_i64 res = 0;
  e = gpuio_direct_wait(ch, &s, gpuio_impl_deadline(ch), &res);
  if (e) return e;
  gpuio_impl_release(ch, &s);
  return res;
}

#endif /* GPUIO_DIRECT_H */
