/* gpuio/forward.h - device side of the forward transport.
 *
 * The device queues compact requests in ch->forward.entries (shared memory,
 * gpuio_forward_entry[slots]); one host forwarder thread takes every READY entry,
 * in any order, validates it, feeds it to its own io_uring and answers it in place
 * (host side: core/src/forward/).
 *
 * Positions and slots. A request takes a position `pos` from a device-local counter
 * (one fetch-add per warp: the lanes calling together take consecutive positions)
 * and uses slot i = pos % slots - its shared entry, its staging chunk and its
 * device-local gpuio_forward_slot - during lap pos / slots. Per slot:
 *   turn    the lap whose turn it is to take the slot next; written only by the
 *           owner of that turn, when it takes the slot or passes the turn on
 *   state   FREE, IN_FLIGHT (held by lap `holder`, taken at `since`) or ABANDONED
 *           (its waiter gave up before the host answered)
 * Zeroed memory is turn 0, FREE: slot i is free for position i.
 *
 * Protocol for position pos (lap L on slot i):
 *   1. wait until turn == L (device-local; sleeping in proportion to the laps ahead);
 *   2. take the slot: FREE -> IN_FLIGHT, holder = L, since = now, turn = L + 1;
 *      or reclaim it: ABANDONED and the shared stamp says the host answered the
 *      holder (pos' << 2 | DONE) -> IN_FLIGHT likewise (the answer nobody waits for
 *      is dropped; the host counted it);
 *      or pass the turn on (turn = L + 1) without the slot when the slot is stuck -
 *      ABANDONED and unanswered, or IN_FLIGHT for longer than timeout / 4 (a read
 *      of a pipe nobody writes) — and take a new position; or when this call's
 *      deadline passes or the channel closes (-ETIMEDOUT / -ESHUTDOWN);
 *   3. write the request into entry i and release pos << 2 | READY (system scope);
 *   4. wait for pos << 2 | DONE (acquire, system scope), read the result; at the
 *      deadline mark the slot ABANDONED and give up;
 *   5. release: state = FREE (release; after the staging chunk was read).
 * Who writes what: `turn` only its owner; state FREE/ABANDONED -> IN_FLIGHT only the
 * turn owner, IN_FLIGHT -> FREE/ABANDONED only the holder; so no two threads ever
 * race for the same transition. The host writes only `result` and DONE stamps.
 *
 * Why this shape (measured on an H100 at 132 x 1024 threads): taking positions by
 * compare-and-swap once the entries were free made every waiting warp poll the same
 * counter and entries, and throughput fell from 100k to 6.7k requests/s as threads
 * were added. A fetch-add gives each waiter a word of its own. Because the host
 * takes entries in any order, a position that passes its turn on leaves no hole,
 * and a request that never completes stalls only the turns of its own slot, which
 * move on to other slots after timeout / 4.
 */
#ifndef GPUIO_FORWARD_H
#define GPUIO_FORWARD_H

GPUIO_FN gpuio_forward_entry *gpuio_forward_entry_at(const gpuio_channel *ch, gpuio_u32 index) {
  return gpuio_ptr<gpuio_forward_entry>(ch->forward.entries) + index;
}

GPUIO_FN gpuio_forward_slot *gpuio_forward_slot_at(const gpuio_channel *ch, gpuio_u32 index) {
  return gpuio_ptr<gpuio_forward_slot>(ch->forward.slot_state) + index;
}

GPUIO_FN gpuio_u64 gpuio_forward_stamp(gpuio_u64 pos, gpuio_u64 state) { return (pos << GPUIO_STAMP_SHIFT) | state; }

/* Takes the slot for lap `lap` (the caller owns the turn and saw the slot FREE or
 * reclaimable and moved it to IN_FLIGHT), then hands the turn on. */
GPUIO_FN void gpuio_forward_hold(gpuio_forward_slot *sl, gpuio_u64 lap) {
  gpuio_fence_sc(); /* the CAS is relaxed on CUDA: make it an acquire */
  gpuio_st_relaxed_64(&sl->holder, lap);
  gpuio_st_relaxed_64(&sl->since, gpuio_now_ns());
  gpuio_st_release_64(&sl->turn, lap + 1u);
}

/* One lane's progress through steps 1 and 2 for its position. */
typedef struct gpuio_forward_taker {
  gpuio_u64 pos;
  gpuio_impl_backoff backoff;
  gpuio_u32 spins; /* looks at the slot since our turn came */
} gpuio_forward_taker;

/* One look at position k->pos's turn (steps 1 and 2 above). Returns
 *   0           the slot is held;
 *   -ETIMEDOUT / -ESHUTDOWN   gave up, the turn passed on;
 *   1           keep waiting: *ns is how long this lane may sleep;
 *   2           the slot is stuck: the turn was passed on, take a new position. */
GPUIO_FN int gpuio_forward_take_step(const gpuio_channel *ch, gpuio_forward_taker *k, gpuio_u64 deadline,
                                     gpuio_u32 *ns) {
  const gpuio_u64 slots = ch->slots, lap = k->pos / slots;
  const gpuio_u32 index = (gpuio_u32)(k->pos & (slots - 1u));
  gpuio_forward_slot *sl = gpuio_forward_slot_at(ch, index);
  const gpuio_u64 t = gpuio_ld_acquire_64(&sl->turn);
  if (t != lap) {
    /* Only a turn owner stalled for a whole timeout after its deadline keeps us
     * here: this position is then lost, and so is the slot's turn. */
    if (t > lap || gpuio_impl_past(deadline + ch->timeout_ns)) return -GPUIO_ETIMEDOUT;
    /* Laps away: sleep in proportion, leaving the turn word to those in front. */
    const gpuio_u64 ahead = lap - t;
    *ns = ahead <= 1u ? gpuio_impl_backoff_next(&k->backoff, 1024u)
                      : (ahead > 64u ? 256000u : (gpuio_u32)ahead * 4000u);
    return 1;
  }
  const gpuio_u32 state = gpuio_ld_acquire_32(&sl->state);
  bool stuck = false;
  if (state == GPUIO_SLOT_FREE) {
    /* Only the turn owner moves FREE on, so this cannot fail; checked all the same. */
    if (gpuio_cas_32(&sl->state, GPUIO_SLOT_FREE, GPUIO_SLOT_IN_FLIGHT) == GPUIO_SLOT_FREE) {
      gpuio_forward_hold(sl, lap);
      return 0;
    }
    *ns = 0;
    return 1;
  }
  if (state == GPUIO_SLOT_ABANDONED) {
    const gpuio_u64 h = gpuio_ld_relaxed_64(&sl->holder);
    const gpuio_forward_entry *e = gpuio_forward_entry_at(ch, index);
    if (gpuio_ld_acquire_64(&e->stamp) == gpuio_forward_stamp(h * slots + index, GPUIO_STAMP_DONE)) {
      if (gpuio_cas_32(&sl->state, GPUIO_SLOT_ABANDONED, GPUIO_SLOT_IN_FLIGHT) == GPUIO_SLOT_ABANDONED) {
        gpuio_forward_hold(sl, lap);
        return 0;
      }
      *ns = 0;
      return 1;
    }
    stuck = true;
  } else {
    stuck = gpuio_now_ns() - gpuio_ld_relaxed_64(&sl->since) > ch->timeout_ns / 4u;
  }
  int e = 0;
  if (gpuio_impl_past(deadline)) e = -GPUIO_ETIMEDOUT;
  /* A PCIe read, so only now and then. */
  else if ((++k->spins & 31u) == 0u && gpuio_ld_acquire_32(&ch->closing)) e = -GPUIO_ESHUTDOWN;
  if (stuck || e) {
    gpuio_st_release_64(&sl->turn, lap + 1u);
    return e ? e : 2;
  }
  *ns = gpuio_impl_backoff_next(&k->backoff, 1024u);
  return 1;
}

/* Claims a slot and binds it to that slot's staging chunk: 0, or -ETIMEDOUT /
 * -ESHUTDOWN holding nothing.
 *
 * Warp-cooperative: the lanes of a warp that call this together take consecutive
 * positions with one fetch-add by their leader, then wait together, each lane for
 * its own slot, sleeping as one (gpuio_impl_warp_pause) so the warp stays converged.
 * (Measured on an H100: with each lane waiting on its own path, a thread's second
 * call ran 4-8x slower than its first; diverged lanes of one warp take turns.) A
 * warp wider than the channel's slots has lanes waiting for laps that other lanes of
 * the same call free; those lanes' turns pass on at their deadline. */
GPUIO_FN int gpuio_forward_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  gpuio_forward_state *st = gpuio_ptr<gpuio_forward_state>(ch->forward.state);
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask);
  gpuio_u64 first = 0;
  if (rank == 0) first = gpuio_fetch_add_64(&st->reserve, gpuio_warp_count(mask));
  gpuio_forward_taker k = {};
  k.pos = gpuio_warp_broadcast_64(mask, first, leader) + rank;
  int e = 1;
  for (;;) {
    gpuio_u32 ns = GPUIO_WARP_DONE;
    if (e == 1) {
      e = gpuio_forward_take_step(ch, &k, deadline, &ns);
      if (e == 2) { /* the slot was stuck: queue again */
        k.pos = gpuio_fetch_add_64(&st->reserve, 1u);
        k.backoff.ns = 0;
        k.spins = 0;
        e = 1;
        ns = 0;
      }
    }
    if (!gpuio_impl_warp_pause(mask, ns)) break;
  }
  if (e < 0) return e;
  s->pos = k.pos;
  gpuio_impl_slot_bind(ch, s, (gpuio_u32)(k.pos & (ch->slots - 1u)));
  return 0;
}

/* Writes the request into the slot's entry and hands it to the host. */
GPUIO_FN void gpuio_forward_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_forward_entry *e = gpuio_forward_entry_at(ch, s->index);
  /* Plain stores: the release below publishes them. */
  e->req = *r;
  gpuio_st_release_64(&e->stamp, gpuio_forward_stamp(s->pos, GPUIO_STAMP_READY));
}

/* 0 with the host's result (slot still held), or -ETIMEDOUT with the slot
 * abandoned: the next turn owner takes it over once the host answers. The lanes of
 * a warp wait together (one poll instruction for all their entries, one sleep). */
GPUIO_FN int gpuio_forward_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  const gpuio_u64 mask = gpuio_warp_active();
  gpuio_forward_entry *e = gpuio_forward_entry_at(ch, s->index);
  const gpuio_u64 done = gpuio_forward_stamp(s->pos, GPUIO_STAMP_DONE);
  gpuio_impl_backoff backoff = {0};
  int r = 1;
  for (;;) {
    gpuio_u32 ns = GPUIO_WARP_DONE;
    if (r == 1) {
      if (gpuio_ld_acquire_64(&e->stamp) == done) {
        *result = (gpuio_i64)gpuio_ld_relaxed_64((const gpuio_u64 *)&e->result);
        r = 0;
      } else if (gpuio_impl_past(deadline)) {
        /* After this store we touch neither the entry nor the staging chunk again. */
        gpuio_fence_sc();
        gpuio_st_release_32(&gpuio_forward_slot_at(ch, s->index)->state, GPUIO_SLOT_ABANDONED);
        r = -GPUIO_ETIMEDOUT;
      } else {
        ns = gpuio_impl_backoff_next(&backoff, 1024u);
      }
    }
    if (!gpuio_impl_warp_pause(mask, ns)) break;
  }
  return r;
}

/* Frees the slot for the next turn (the result and staging bytes were read). */
GPUIO_FN void gpuio_forward_release(const gpuio_channel *ch, gpuio_slot *s) {
  gpuio_st_release_32(&gpuio_forward_slot_at(ch, s->index)->state, GPUIO_SLOT_FREE);
}

#endif /* GPUIO_FORWARD_H */
