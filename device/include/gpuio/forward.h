/* gpuio/forward.h - device side of the forward transport.
 *
 * The device queues compact requests in ch->forward.entries (shared memory,
 * gpuio_forward_entry[slots]); one host forwarder thread per ring takes every
 * READY entry of its ring, in any order, validates it, feeds it to its own io_uring
 * and answers it in place (host side: core/src/forward/). The slots are split into
 * ch->forward.rings rings of consecutive slots, each with its own position counter;
 * a warp uses ring warp % rings, so warps of different rings never touch the same
 * counter, turn or forwarder - until a lane finds its slot stuck (held by an
 * asynchronous call, say): it then takes its next position on the next ring, so a
 * thread's tickets may hold more than its ring's share of the slots. A long pwrite
 * goes to its file's group of rings instead, where the host made several
 * (gpuio_forward_route).
 *
 * Slots are handed out by turns (gpuio/api.h, "turns"): a request holds slot
 * i = pos % slots - its shared entry, its staging chunk and its gpuio_turn - then
 *   3. writes the request into entry i (gpuio_forward_encode's marked words) and
 *      stamps it pos << 2 | READY with a release (system scope), relaxed if it is a
 *      NOP (gpuio_forward_submit);
 *   4. waits for the answer to pos (acquire, system scope): the stamp becomes DONE
 *      with the result and pos's low 30 bits in the same word (abi.rs
 *      stamp::answer), so one read across PCIe brings both; at the deadline it
 *      marks the slot ABANDONED and gives up; the next turn owner takes the slot
 *      over once the answer for it is there;
 *   5. releases the slot: state = FREE (release; after the staging chunk was read).
 * The host writes only answers (zeroing the request's words first), and takes READY
 * entries in any order once their words are there, so a position that passes its
 * turn on leaves no hole and a request that never completes stalls only its own
 * slot.
 */
#ifndef GPUIO_FORWARD_H
#define GPUIO_FORWARD_H

GPUIO_FN gpuio_forward_entry *gpuio_forward_entry_at(const gpuio_channel *ch, gpuio_u32 index) {
  return gpuio_ptr<gpuio_forward_entry>(ch->forward.entries) + index;
}

GPUIO_FN gpuio_u64 gpuio_forward_stamp(gpuio_u64 pos, gpuio_u64 state) { return (pos << GPUIO_STAMP_SHIFT) | state; }

/* Whether `stamp` is the answer to position `pos`: true with *result. Once pos was
 * stamped READY, the only answer its entry holds before the slot is taken again is
 * pos's own (the host answers each READY once; an abandoned slot is taken over only
 * once answered), so 30 bits of the position tell it from the READY stamp and from
 * earlier laps' answers. (Measured on an H100, 2026-11-27: reading a separate
 * result field after the stamp was a second PCIe read, ~1 us of every round trip.) */
GPUIO_FN bool gpuio_forward_answer(gpuio_u64 stamp, gpuio_u64 pos, gpuio_i64 *result) {
  if ((stamp & 3u) != GPUIO_STAMP_DONE || (stamp >> GPUIO_ANSWER_TAG_SHIFT) != (pos & GPUIO_ANSWER_TAG_MASK)) return false;
  *result = (gpuio_i64)(gpuio_i32)(gpuio_u32)(stamp >> GPUIO_STAMP_SHIFT);
  return true;
}

/* Whether the abandoned request of lap `holder` on slot `i` was answered, so that
 * the turn owner may take the slot over (the answer nobody waits for is dropped;
 * the host counted it). */
struct gpuio_forward_reclaim {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_u32 i, gpuio_u64 holder) const {
    const gpuio_forward_entry *e = gpuio_forward_entry_at(ch, i);
    gpuio_i64 dropped = 0;
    return gpuio_forward_answer(gpuio_ld_acquire_64(&e->stamp), holder * ch->slots + i, &dropped);
  }
  GPUIO_METHOD void nudge() const {} /* the host answers by itself */
};

/* The ring of a request that asks for ring group `route` - 1 (0: none;
 * gpuio_impl_route): its warp's ring `ring`'s place within that group, of `rings`
 * in groups of `group` (powers of two, group < rings: ch->forward.write_group).
 * A file's long writes so queue for one group's workers, which take turns at the
 * file, where every group's workers would queue on its lock at once. The lanes of a
 * warp take consecutive positions on one ring, so they go there only if every
 * calling lane asks for the same group; else, and with no route, `ring`. */
GPUIO_FN gpuio_u32 gpuio_forward_route(gpuio_u32 ring, gpuio_u32 rings, gpuio_u32 group, gpuio_u32 route) {
  const gpuio_u64 mask = gpuio_warp_active();
  if (!gpuio_impl_warp_alone(mask)) {
    const gpuio_u32 lead = (gpuio_u32)gpuio_warp_broadcast_64(mask, route, gpuio_warp_leader(mask));
    if (gpuio_warp_ballot(mask, route == lead) != mask) return ring;
  }
  if (!route) return ring;
  return ((route - 1u) & (rings / group - 1u)) * group + (ring & (group - 1u));
}

/* Claims a slot (gpuio_impl_turn_acquire: warp-cooperative, turns per slot) and
 * binds it to that slot's staging chunk: 0, or -ETIMEDOUT / -ESHUTDOWN holding
 * nothing. `c`: the descriptor's words, loaded with the call's checks
 * (gpuio_impl_call_load) - after the previous call's acquire emptied L1, each word
 * read here would cost this take a trip to L2 of its own - and the ring group the
 * request asks for (c->route, gpuio_forward_route). */
GPUIO_FN int gpuio_forward_acquire_with(const gpuio_channel *ch, const gpuio_impl_call *c, gpuio_slot *s,
                                        gpuio_u64 deadline) {
  /* This warp's ring: its own positions, its share of the slots, its forwarder.
   * The host makes the ring count a power of two; another is served by a division
   * (for one thread a few dozen dependent instructions, ~55 ns on an H200 by ncu,
   * 2026-11-27). */
  const gpuio_u32 rings_word = (gpuio_u32)c->forward[3];
  const gpuio_u32 group = (gpuio_u32)(c->forward[3] >> 32);
  const gpuio_u32 slots = (gpuio_u32)(c->sizes >> 32);
  gpuio_forward_entry *entries = gpuio_ptr<gpuio_forward_entry>(c->forward[0]);
  gpuio_forward_state *st = gpuio_ptr<gpuio_forward_state>(c->forward[1]);
  gpuio_turn *turns = gpuio_ptr<gpuio_turn>(c->forward[2]);
  const gpuio_u32 rings = rings_word ? rings_word : 1u;
  const bool pow2 = (rings & (rings - 1u)) == 0u;
  const gpuio_u32 per = pow2 ? slots >> gpuio_ctz_32(rings) : slots / rings;
  if (rings > slots || per * rings != slots) return -GPUIO_EPROTO;
  const gpuio_u64 warp = gpuio_warp_id();
  gpuio_u32 ring = (gpuio_u32)(pow2 ? warp & (rings - 1u) : warp % rings);
  /* Groups only where the host made them: powers of two, several of them. */
  if (pow2 && group > 1u && group < rings && (group & (group - 1u)) == 0u)
    ring = gpuio_forward_route(ring, rings, group, c->route);
  const gpuio_impl_turns tt = {turns, sizeof(gpuio_turn), &st->reserve, sizeof(gpuio_forward_state), per, rings};
  const gpuio_forward_reclaim reclaim = {ch};
  const int e = gpuio_impl_turn_acquire(ch, &tt, ring, s, deadline, reclaim);
  if (e) return e;
  gpuio_impl_slot_stage(s, c->staging, (gpuio_u32)c->sizes);
  s->shared = (char *)(entries + s->index);
  return 0;
}

/* The same, loading the descriptor's words itself. */
GPUIO_FN int gpuio_forward_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_u32 route = 0u) {
  gpuio_impl_call c;
  gpuio_impl_call_load(ch, &c);
  c.route = route;
  return gpuio_forward_acquire_with(ch, &c, s, deadline);
}

/* `r` as the entry's words (abi.rs, forward_words::encode): each marked SET, so the
 * host can tell a word written for this request from the zero it left. */
GPUIO_FN gpuio_u64 gpuio_forward_word(gpuio_u32 v) { return GPUIO_FORWARD_WORD_SET | (gpuio_u64)v << 32; }
GPUIO_FN void gpuio_forward_encode(const gpuio_request *r, gpuio_u64 w[GPUIO_FORWARD_WORDS]) {
  const gpuio_u64 offset = (gpuio_u64)r->offset;
  w[0] = GPUIO_FORWARD_WORD_SET | (gpuio_u64)(r->op & 0x7fffffffu) << 1 | (gpuio_u64)r->flags << 32;
  w[1] = gpuio_forward_word(r->endpoint);
  w[2] = gpuio_forward_word(r->len);
  w[3] = gpuio_forward_word((gpuio_u32)r->staging_off);
  w[4] = gpuio_forward_word((gpuio_u32)(r->staging_off >> 32));
  w[5] = gpuio_forward_word((gpuio_u32)offset);
  w[6] = gpuio_forward_word((gpuio_u32)(offset >> 32));
}

/* Writes the request into the slot's entry and hands it to the host. Each word is
 * one relaxed 8-byte store, which the host reads whole, and the host takes a READY
 * request once it has seen every word SET, in whatever order they crossed PCIe. A
 * request that touches the staging chunk (the bytes a write staged, or the chunk a
 * read fills, which the slot's last holder read) is stamped READY with a release
 * (system scope), which the host acquires: that orders every access before it. A
 * NOP touches nothing: its READY is relaxed, and that is where this pays, since the
 * release waits for the words to cross PCIe before the stamp can follow. Measured
 * on an H100, 2026-12-07, one thread's forward NOPs step by step: the submit 640-724
 * ns with the release and 160-193 without (runs 199-200), the round trip 0.5-0.7 us
 * shorter; `gpuio bench`'s NOP p50 3.52 against 4.29 us (run 200). A release fence
 * before the words instead, for the other requests, waited 816 ns against the
 * release's 677 (run 200): a system-scope fence takes its time whatever is pending. */
GPUIO_FN void gpuio_forward_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  (void)ch;
  gpuio_forward_entry *e = (gpuio_forward_entry *)s->shared;
  gpuio_u64 w[GPUIO_FORWARD_WORDS];
  gpuio_forward_encode(r, w);
  GPUIO_UNROLL
  for (gpuio_u32 k = 0; k < GPUIO_FORWARD_WORDS; ++k) gpuio_st_relaxed_64(&e->words[k], w[k]);
  const gpuio_u64 ready = gpuio_forward_stamp(s->pos, GPUIO_STAMP_READY);
  if (r->op == GPUIO_OP_NOP) gpuio_st_relaxed_64(&e->stamp, ready);
  else gpuio_st_release_64(&e->stamp, ready);
}

/* Whether the host answered (no waiting): 1 with *result, else 0. */
GPUIO_FN int gpuio_forward_poll(const gpuio_channel *ch, gpuio_slot *s, gpuio_i64 *result) {
  (void)ch;
  const gpuio_forward_entry *e = (const gpuio_forward_entry *)s->shared;
  return gpuio_forward_answer(gpuio_ld_acquire_64(&e->stamp), s->pos, result) ? 1 : 0;
}

struct gpuio_forward_answered {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_slot *s, gpuio_i64 *result) const { return gpuio_forward_poll(ch, s, result); }
};
/* 0 with the host's result (slot still held), or -ETIMEDOUT with the slot
 * abandoned: the next turn owner takes it over once the host answers. */
GPUIO_FN int gpuio_forward_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  const gpuio_forward_answered answered = {ch};
  return gpuio_impl_wait_answer(s, deadline, GPUIO_WAIT_SHARED_NS, result, answered);
}

#endif /* GPUIO_FORWARD_H */
