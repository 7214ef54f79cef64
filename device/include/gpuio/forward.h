/* gpuio/forward.h — device side of the forward transport.
 *
 * The device queues compact requests in ch->forward.entries (shared memory,
 * gpuio_forward_entry[slots]); one host forwarder thread takes them in position
 * order, validates them, feeds them to its own io_uring and answers each one in
 * place (host side: backend-cuda-mapped/src/forward/).
 *
 * Ownership (core/src/abi.rs): the device owns entry pos % slots when
 *   stamp == pos<<2 | FREE;
 * it writes the request and publishes pos<<2 | READY (release, system scope); the
 * host answers with `result` and pos<<2 | DONE (release); the device acquires that,
 * reads the result and frees the entry with (pos + slots)<<2 | FREE (release).
 *
 * Reservation (device-local gpuio_forward_state::reserve) is a compare-and-swap
 * taken only once the entry for that position is ours, never a blind fetch-add:
 * a producer that gives up waiting (deadline, closing) then holds no position,
 * so the host, which takes positions strictly in order, never waits on a hole.
 *
 * Waiting for an entry costs no PCIe traffic: each entry has a device-local word,
 *   lap << 2 | FREE / IN_FLIGHT / ABANDONED     (lap = pos / slots)
 * and a producer for position pos waits on it, not on the shared stamp: the
 * entry is free for pos once its word says (lap, FREE), written by the release of
 * pos - slots after its FREE stamp. Zeroed memory is lap 0, FREE: entry i is free
 * for position i. Only the producers that meet an ABANDONED entry read the shared
 * stamp, and only the waiters of requests in flight (at most `slots`) poll it.
 *
 * Abandoning: a waiter that times out marks its word ABANDONED and walks away.
 * The entry then still belongs to its request until the host answers DONE; the
 * producer of position pos + slots that finds
 *   word == lap(pos) << 2 | ABANDONED  and  stamp == pos<<2 | DONE
 * takes the entry over directly (the result nobody waits for is dropped). So a late
 * completion is never lost from the host's count, and neither the entry nor its
 * staging chunk is reused before the host is done with them.
 */
#ifndef GPUIO_FORWARD_H
#define GPUIO_FORWARD_H

GPUIO_FN gpuio_forward_entry *gpuio_forward_entry_at(const gpuio_channel *ch, gpuio_u32 index) {
  return gpuio_ptr<gpuio_forward_entry>(ch->forward.entries) + index;
}

/* The device-local word of entry `index` (see the top). */
GPUIO_FN gpuio_u64 *gpuio_forward_slot_word(const gpuio_channel *ch, gpuio_u32 index) {
  return gpuio_ptr<gpuio_u64>(ch->forward.slot_state) + index;
}

GPUIO_FN gpuio_u64 gpuio_forward_stamp(gpuio_u64 pos, gpuio_u64 state) { return (pos << GPUIO_STAMP_SHIFT) | state; }

/* The device-local word for position `pos` in `state`. */
GPUIO_FN gpuio_u64 gpuio_forward_word(const gpuio_channel *ch, gpuio_u64 pos, gpuio_u64 state) {
  return ((pos / ch->slots) << 2) | state;
}

/* Whether the entry of position `pos` can be taken for it: free for it, or left
 * by an abandoned request the host has answered. *stale is set when someone
 * already took `pos` (our view of reserve was old). */
GPUIO_FN bool gpuio_forward_usable(const gpuio_channel *ch, gpuio_u64 pos, bool *stale) {
  const gpuio_u64 slots = ch->slots;
  const gpuio_u32 index = (gpuio_u32)(pos & (slots - 1));
  const gpuio_u64 w = gpuio_ld_acquire_64(gpuio_forward_slot_word(ch, index));
  if (w == gpuio_forward_word(ch, pos, GPUIO_SLOT_FREE)) return true;
  if (pos >= slots && w == gpuio_forward_word(ch, pos - slots, GPUIO_SLOT_ABANDONED)) {
    /* Position pos - slots was abandoned: reclaim once the host answered it. */
    gpuio_forward_entry *e = gpuio_forward_entry_at(ch, index);
    return gpuio_ld_acquire_64(&e->stamp) == gpuio_forward_stamp(pos - slots, GPUIO_STAMP_DONE);
  }
  if ((w >> 2) > pos / slots) *stale = true;
  return false;
}

/* Takes `k` consecutive positions once their entries are all usable: the first
 * of them, or -errno (-ETIMEDOUT at the deadline, -ESHUTDOWN when the channel
 * starts closing while we wait), as a gpuio_i64. Holds nothing on error. */
GPUIO_FN gpuio_i64 gpuio_forward_take(const gpuio_channel *ch, gpuio_u32 k, gpuio_u64 deadline) {
  gpuio_forward_state *st = gpuio_ptr<gpuio_forward_state>(ch->forward.state);
  bool waited = false;
  gpuio_impl_backoff backoff = {0};
  for (;;) {
    const gpuio_u64 pos = gpuio_ld_relaxed_64(&st->reserve);
    bool stale = false, usable = true;
    for (gpuio_u32 j = 0; usable && j < k; j++) usable = gpuio_forward_usable(ch, pos + j, &stale);
    if (usable) {
      /* The positions and their entries are ours alone once this succeeds. */
      if (gpuio_cas_64(&st->reserve, pos, pos + k) == pos) return (gpuio_i64)pos;
      /* Another producer took pos: someone made progress, try again at once. */
      if (gpuio_impl_past(deadline)) return -GPUIO_ETIMEDOUT;
      continue;
    }
    if (stale) {
      if (gpuio_impl_past(deadline)) return -GPUIO_ETIMEDOUT;
      continue;
    }
    /* An entry still serves an earlier position: wait for it. A channel that
     * starts closing gets no new requests, so give up then. */
    if (waited && gpuio_ld_acquire_32(&ch->closing)) return -GPUIO_ESHUTDOWN;
    if (gpuio_impl_past(deadline)) return -GPUIO_ETIMEDOUT;
    waited = true;
    gpuio_impl_backoff_pause(&backoff, 32768u);
  }
}

/* Claims a position whose entry is free (or reclaimable) and binds the slot to
 * that entry's staging chunk: 0, or -ETIMEDOUT / -ESHUTDOWN holding nothing.
 *
 * Warp-cooperative: the lanes of a warp that call this together take their
 * positions as one block, consecutive in lane order, through one lane (the
 * leader) and one compare-and-swap; the others wait at the broadcast. Taking
 * positions lane by lane instead let a lane that had its position wait behind
 * siblings still spinning for theirs, and the forwarder, which serves positions
 * in order, waited with it (measured on the H100: throughput fell as threads
 * were added). A warp wider than the channel's slots takes them in rounds. */
GPUIO_FN int gpuio_forward_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask);
  const gpuio_u32 n = gpuio_warp_count(mask);
  const gpuio_u32 per = (gpuio_u64)n < ch->slots ? n : (gpuio_u32)ch->slots;
  gpuio_i64 mine = -GPUIO_EPROTO;
  for (gpuio_u32 first = 0; first < n; first += per) {
    const gpuio_u32 k = n - first < per ? n - first : per;
    gpuio_i64 got = 0;
    if (rank == 0) got = gpuio_forward_take(ch, k, deadline);
    got = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)got, leader);
    if (rank >= first && rank < first + k) mine = got < 0 ? got : got + (gpuio_i64)(rank - first);
  }
  if (mine < 0) return (int)mine;
  const gpuio_u64 pos = (gpuio_u64)mine;
  const gpuio_u32 index = (gpuio_u32)(pos & (ch->slots - 1));
  gpuio_st_relaxed_64(gpuio_forward_slot_word(ch, index), gpuio_forward_word(ch, pos, GPUIO_SLOT_IN_FLIGHT));
  s->pos = pos;
  gpuio_impl_slot_bind(ch, s, index);
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
 * abandoned: the next producer on this entry frees it once the host answers. */
GPUIO_FN int gpuio_forward_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  gpuio_forward_entry *e = gpuio_forward_entry_at(ch, s->index);
  const gpuio_u64 done = gpuio_forward_stamp(s->pos, GPUIO_STAMP_DONE);
  gpuio_impl_backoff backoff = {0};
  for (;;) {
    if (gpuio_ld_acquire_64(&e->stamp) == done) {
      *result = (gpuio_i64)gpuio_ld_relaxed_64((const gpuio_u64 *)&e->result);
      return 0;
    }
    if (gpuio_impl_past(deadline)) {
      /* After this store we touch neither the entry nor the staging chunk again. */
      gpuio_fence_sc();
      gpuio_st_release_64(gpuio_forward_slot_word(ch, s->index),
                          gpuio_forward_word(ch, s->pos, GPUIO_SLOT_ABANDONED));
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_impl_backoff_pause(&backoff, 1024u);
  }
}

/* Frees the entry for position pos + slots: the shared stamp first, then the
 * device-local word producers wait on. */
GPUIO_FN void gpuio_forward_release(const gpuio_channel *ch, gpuio_slot *s) {
  gpuio_forward_entry *e = gpuio_forward_entry_at(ch, s->index);
  const gpuio_u64 next = s->pos + ch->slots;
  gpuio_st_release_64(&e->stamp, gpuio_forward_stamp(next, GPUIO_STAMP_FREE));
  gpuio_fence_sc();
  gpuio_st_release_64(gpuio_forward_slot_word(ch, s->index), gpuio_forward_word(ch, next, GPUIO_SLOT_FREE));
}

#endif /* GPUIO_FORWARD_H */
