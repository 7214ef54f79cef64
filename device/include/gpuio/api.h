/* gpuio/api.h — the device API, dispatched at run time on the descriptor's transport.
 *
 * Every call returns >= 0 or -errno, never traps, and never waits past its
 * deadline (ch->timeout_ns per request; -ETIMEDOUT). Endpoints are named by their
 * index in the host's table. Data moves through the staging area: each request
 * slot owns slot_size bytes of it; the convenience calls copy through that chunk
 * (and split longer calls), the *_staged calls name bytes the kernel already put
 * in its own part of the staging area (gpuio_user_staging).
 *
 * Each transport implements the same three steps, in gpuio/<transport>.h:
 *   int  gpuio_<t>_acquire(ch, slot, deadline)       claim a request slot (0 / -errno)
 *   void gpuio_<t>_submit(ch, slot, request)         hand the request on (cannot fail)
 *   int  gpuio_<t>_wait(ch, slot, deadline, &result) 0 and the result, slot still held;
 *                                                    or -ETIMEDOUT: the slot is abandoned
 * and gpuio_impl_release(ch, slot) frees a slot whose wait returned 0 on all of them
 * (every transport hands its slots out by turns, below).
 * A waiter that times out abandons its slot; the transport frees it once the
 * late completion arrives, so nothing is lost or reused early. The slot's staging
 * chunk stays the caller's until release, so results can be copied out first.
 *
 * A null `ch` (or one that is not a gpuio descriptor) is -EINVAL from every call
 * (gpuio_user_staging: NULL and 0 bytes); no call reads through it first.
 *
 * Names: the calls a kernel makes are gpuio_<call> (listed in gpuio.h). Helpers
 * that are not API carry the prefix gpuio_impl_ (here) or their transport's
 * prefix (gpuio_direct_, gpuio_forward_, gpuio_mailbox_, gpuio_fmt_); they may
 * change at any time, and names such as gpuio_wait stay free for the API.
 */
#ifndef GPUIO_API_H
#define GPUIO_API_H

/* Linux errno values (NVRTC has no errno.h); the build compares each with the
 * host's (core/src/abi.rs, layout()). */
#define GPUIO_EPERM 1
#define GPUIO_EBADF 9
#define GPUIO_EAGAIN 11
#define GPUIO_EACCES 13
#define GPUIO_EFAULT 14
#define GPUIO_EINVAL 22
#define GPUIO_ESPIPE 29
#define GPUIO_EPIPE 32
#define GPUIO_ENOSYS 38
#define GPUIO_EPROTO 71
#define GPUIO_EOVERFLOW 75
#define GPUIO_ENOTSOCK 88
#define GPUIO_EMSGSIZE 90
#define GPUIO_ESHUTDOWN 108
#define GPUIO_ETIMEDOUT 110

typedef struct gpuio_slot {
  gpuio_u64 pos;         /* request position (transport-defined) */
  gpuio_u32 index;       /* which staging chunk this slot owns */
  gpuio_u32 flags;       /* transport-defined (direct: GPUIO_DIRECT_SLOT_*) */
  char *staging;         /* device pointer to that chunk (slot_size bytes) */
  gpuio_u64 staging_off; /* its offset in the staging area */
  /* Where the slot's words are, found once when it is taken: after a wait's acquire
   * loads the descriptor is out of L1, and each field read again cost a load from L2
   * before the next poll or the release (H100: ~0.3 us a NOP). */
  gpuio_turn *turn; /* its turn: state FREE / ABANDONED / HELD_ASYNC go here */
  char *shared;     /* its shared record: forward's entry, mailbox's port (else null) */
  /* The transport that took it (gpuio_impl_acquire), so that submit, wait and poll
   * dispatch without reading the descriptor again: the take's acquire empties L1,
   * and that read was ~130 ns of a NOP (H100, ncu, 2026-11-27). */
  gpuio_u32 transport;
  /* The channel's timeout, read with the call's checks: the wait's deadline is
   * counted from the submit without reading the descriptor again (that read was a
   * trip to L2 between the submit and the first poll, ~130 ns: H200, ncu,
   * 2026-11-27). */
  gpuio_u64 timeout_ns;
} gpuio_slot;

/* Exponential backoff for a thread waiting on others: from 64 ns, doubling up to a
 * cap. With a hundred thousand threads waiting, polling every 64 ns saturates the
 * few cache lines they poll and starves the threads doing the work (measured on
 * the H100: throughput fell as threads were added); waiters that back off leave
 * the memory system to them. */
typedef struct gpuio_impl_backoff {
  gpuio_u32 ns;
} gpuio_impl_backoff;
/* The next pause, without taking it (for waits a whole warp sleeps together). */
GPUIO_FN gpuio_u32 gpuio_impl_backoff_next(gpuio_impl_backoff *b, gpuio_u32 cap_ns) {
  gpuio_u32 ns = b->ns < 64u ? 64u : b->ns;
  if (ns > cap_ns) ns = cap_ns;
  b->ns = ns * 2u;
  return ns;
}
GPUIO_FN void gpuio_impl_backoff_pause(gpuio_impl_backoff *b, gpuio_u32 cap_ns) {
  gpuio_sleep_ns(gpuio_impl_backoff_next(b, cap_ns));
}
/* The caps of a request's waits. A look at a device-local word (a slot's turn,
 * direct's `done`) is a trip to L2, and only the few hundred waiters next in line for
 * a slot or waiting for an answer poll at this pace (the rest sleep in proportion to
 * their place in line), so a short cap costs the memory system little. A look at host
 * memory (forward's and mailbox's answers) is a read across PCIe. (Measured on an
 * H200, 2026-11-29, the whole device making NOPs on direct, its close handshake on
 * device-local words: with 256 ns for device-local words instead of 1024, 12.0-12.3
 * M/s against 11.2-12.5 at 256 slots, 25.1 against 19.0 at 1024; forward's and
 * mailbox's whole-device NOPs as before.) */
#define GPUIO_WAIT_LOCAL_NS 256u
#define GPUIO_WAIT_SHARED_NS 1024u

/* Whether `mask` names one lane: a call made by a lane alone, which can skip every
 * warp-wide exchange (each needs convergence checks when the mask is not known at
 * compile time). */
GPUIO_FN bool gpuio_impl_warp_alone(gpuio_u64 mask) { return (mask & (mask - 1u)) == 0u; }

/* A wait the lanes of a warp do together: each lane that still waits names how long
 * it may sleep (done lanes: GPUIO_WARP_DONE); the warp sleeps the least of them, so
 * it stays converged and polls with one instruction for all its lanes instead of
 * each lane spinning on its own path. Returns false once every lane is done. All
 * lanes of `mask` must call it the same number of times. */
#define GPUIO_WARP_DONE 0xffffffffu
GPUIO_FN bool gpuio_impl_warp_pause(gpuio_u64 mask, gpuio_u32 ns) {
  /* A lane alone in its call (a kernel's thread 0, say) needs no reduction: the
   * warp-wide minimum over a mask not known at compile time comes with convergence
   * checks and a wait for the uniform datapath, at every poll. (H100, ncu of one
   * thread's NOPs, 2026-11-28: with the nanosleep below, ~0.3 us of a NOP's 5.2;
   * without both, forward's NOP p50 5.06-5.09 us against 5.18-5.41 interleaved.) */
  const gpuio_u32 least = gpuio_impl_warp_alone(mask) ? ns : gpuio_warp_min_32(mask, ns);
  if (least == GPUIO_WARP_DONE) return false;
#if defined(GPUIO_TARGET_HOST)
  gpuio_sleep_ns(least); /* emulated threads give the core away between polls, eager ones too */
#else
  /* No pause asked (a wait's eager polls): no sleep instruction either. A
   * nanosleep of 0 still put the warp to sleep, ~0.15 us of every NOP (ncu, as
   * above). */
  if (least != 0u) gpuio_sleep_ns(least);
#endif
  return true;
}

/* Whether `ch` could be a descriptor's address at all: not null, 64-byte aligned
 * (abi.h). The checks refuse anything else before they read through it. */
GPUIO_FN bool gpuio_impl_descriptor_address(const gpuio_channel *ch) {
  return ch != nullptr && ((gpuio_u64)ch & 63u) == 0u;
}

/* The descriptor is one gpuio made for this header: -EINVAL, -EPROTO or 0. Device
 * memory only. */
GPUIO_FN int gpuio_impl_check_descriptor(const gpuio_channel *ch) {
  if (!gpuio_impl_descriptor_address(ch) || ch->magic != GPUIO_MAGIC) return -GPUIO_EINVAL;
  if (ch->version != GPUIO_ABI_VERSION) return -GPUIO_EPROTO;
  return 0;
}

/* The shared descriptor, where the counters live (and where the host sets `closing`
 * first). A kernel's `ch` is a device-local copy (every other field is read from it
 * without crossing PCIe); a descriptor that names no shared one is its own. */
GPUIO_FN const gpuio_channel *gpuio_impl_shared(const gpuio_channel *ch) {
  return ch->shared ? gpuio_ptr<const gpuio_channel>(ch->shared) : ch;
}
/* Whether the host began closing the channel: `closing` in the kernel's own copy of
 * the descriptor, which the host sets right after the shared one (abi.rs,
 * Channel::closing), so a call checks it without crossing PCIe (the shared word's
 * read was 1.4 us of a NOP's 9.9 on an H100). Relaxed: no other host write is read
 * on the strength of it (an acquire would also invalidate the multiprocessor's L1,
 * local memory included, on every call). */
GPUIO_FN bool gpuio_impl_closing(const gpuio_channel *ch) { return gpuio_ld_relaxed_32(&ch->closing) != 0u; }
GPUIO_FN gpuio_stats *gpuio_impl_stats(const gpuio_channel *ch) {
  return (gpuio_stats *)&gpuio_impl_shared(ch)->stats;
}

/* The deadline of a wait of `timeout_ns` that starts now; of one of the channel's
 * timeout. (A call keeps the timeout it read with its checks, in its slot or its
 * gpuio_impl_call, so that its waits read no descriptor again.) */
GPUIO_FN gpuio_u64 gpuio_impl_deadline_after(gpuio_u64 timeout_ns) { return gpuio_now_ns() + timeout_ns; }
GPUIO_FN gpuio_u64 gpuio_impl_deadline(const gpuio_channel *ch) { return gpuio_impl_deadline_after(ch->timeout_ns); }
GPUIO_FN bool gpuio_impl_past(gpuio_u64 deadline) { return gpuio_now_ns() > deadline; }

/* Points a taken slot at its staging chunk (chunk s->index of the staging area at
 * device address `staging`, `slot_size` bytes each). */
GPUIO_FN void gpuio_impl_slot_stage(gpuio_slot *s, gpuio_u64 staging, gpuio_u32 slot_size) {
  s->staging_off = (gpuio_u64)s->index * slot_size;
  s->staging = gpuio_ptr<char>(staging) + s->staging_off;
}

/* Words a copy loads before it stores any. One side of most copies is the staging
 * area in host memory: a load from it crosses PCIe (1-2 us on an H100), and a copy
 * that stored each word before loading the next waited one crossing per word (a
 * warp's 1 MiB read out of staging: ~170 MB/s). A batch waits one per batch. */
#define GPUIO_COPY_BATCH 8u

/* Lanes `rank` of `count` copy n bytes together, 8 at a time where both sides are
 * 8-byte aligned. */
GPUIO_FN void gpuio_impl_copy_warp(char *dst, const char *src, gpuio_u64 n, gpuio_u32 rank, gpuio_u32 count) {
  gpuio_u64 words = 0;
  if ((((gpuio_u64)dst | (gpuio_u64)src) & 7u) == 0) {
    words = n / 8u;
    const gpuio_u64 *sw = (const gpuio_u64 *)src;
    gpuio_u64 *dw = (gpuio_u64 *)dst;
    /* Each lane loads GPUIO_COPY_BATCH words (each load coalesced across the lanes)
     * before it stores any: one crossing of PCIe per 2 KiB of a full warp's batch. */
    const gpuio_u64 step = (gpuio_u64)count * GPUIO_COPY_BATCH;
    for (gpuio_u64 base = 0; base < words; base += step) {
      gpuio_u64 v[GPUIO_COPY_BATCH];
GPUIO_UNROLL
      for (gpuio_u32 u = 0; u < GPUIO_COPY_BATCH; ++u) {
        const gpuio_u64 i = base + (gpuio_u64)u * count + rank;
        v[u] = i < words ? sw[i] : 0u;
      }
GPUIO_UNROLL
      for (gpuio_u32 u = 0; u < GPUIO_COPY_BATCH; ++u) {
        const gpuio_u64 i = base + (gpuio_u64)u * count + rank;
        if (i < words) dw[i] = v[u];
      }
    }
  }
  for (gpuio_u64 i = words * 8u + rank; i < n; i += count) dst[i] = src[i];
}

/* One thread copies n bytes: the lanes' copy with one lane, the same batches. */
GPUIO_FN void gpuio_impl_copy(void *dst, const void *src, gpuio_u64 n) {
  gpuio_impl_copy_warp((char *)dst, (const char *)src, n, 0u, 1u);
}

/* ------------------------------------------------------------ turns
 *
 * How forward hands out request slots (gpuio_turn, one per slot, in device-local
 * memory; generic over the transport's reclaim rule: forward, mailbox and direct
 * use it). A request takes a position `pos` from a device-local counter (one
 * fetch-add per warp: the lanes calling together take consecutive positions) and
 * uses slot i = pos % slots - its staging chunk, its entry or SQE and
 * its gpuio_turn - during lap L = pos / slots:
 *   1. wait until turn == L (device-local; sleeping in proportion to the laps ahead);
 *   2. take the slot: once the turn's word, which holds both (GPUIO_TURN_SHIFT),
 *      reads (L, FREE) with acquire, holder = L and since = now, then one store of
 *      (L + 1, IN_FLIGHT) takes the slot and hands the turn on
 *      (gpuio_impl_turn_take); or take it over: ABANDONED and the transport says
 *      the abandoned request was answered (forward: its DONE stamp is there);
 *      or pass the turn on (turn = L + 1) without the slot when the slot is stuck -
 *      ABANDONED and unanswered, held for longer than timeout / 4 (a read of a
 *      pipe nobody writes), or held by an asynchronous call (HELD_ASYNC) or by this
 *      same thread - and take a new position, on the next ring where the slots are
 *      split into rings; or when this call's deadline passes or the channel closes
 *      (-ETIMEDOUT / -ESHUTDOWN).
 * Rings (forward): the slots are `rings` runs of `per` consecutive slots, ring r
 * with a counter of its own; a call starts on its warp's ring, and a lane that
 * passes a stuck slot moves on to the next ring. A thread may so keep as many
 * asynchronous calls in flight as the channel has slots, less one, not only its
 * ring's share (a warp of 32 lanes with 4 tickets each on 64-slot rings found every
 * slot of its own ring held by its own tickets, passed them until its deadline and
 * left their turns behind: H100, 2026-11-26). Lap L of slot j of ring r is position
 * L * rings * per + r * per + j, whichever ring's counter handed it out.
 * Who writes what: the turn only its owner; state FREE/ABANDONED -> IN_FLIGHT only
 * the turn owner; IN_FLIGHT -> FREE/ABANDONED/HELD_ASYNC only the holder - each
 * with an atomic operation on the word that leaves the other half as it is. Zeroed
 * memory is turn 0, FREE.
 *
 * Why (measured on an H100 at 132 x 1024 threads): taking positions by compare-and-
 * swap once the slots were free made every waiting warp poll one counter and the
 * same slots, and forward fell from 100k to 6.7k requests/s as threads were added.
 * A fetch-add gives each waiter a word of its own; a request that never completes
 * holds only its own slot, and the turns move past it. The turn and the state share
 * one word so that a lone thread's take is one compare-and-swap after the fetch-add,
 * not a load of the turn and then one (each a trip to L2, ~240 ns for one thread on
 * an H100-class GPU: measured on an H200, 2026-11-27). The turn is handed on after
 * `holder`, `since` and `holder_thread` are written, not by the compare-and-swap
 * itself: the next turn owner reads them as soon as it sees its turn, and fields of
 * the previous lap's holder (this very thread's, say) made it pass over slots that
 * were not stuck. */

/* Where a transport keeps its turns: `rings` runs of `per` consecutive slots (one
 * run unless the transport splits them), each slot's gpuio_turn `stride` bytes after
 * the last one's from `base` (slot 0's), ring r's position counter
 * `positions_stride` bytes after ring r - 1's from `positions`. Device-local. */
typedef struct gpuio_impl_turns {
  gpuio_turn *base;
  gpuio_u64 stride;
  gpuio_u64 *positions;
  gpuio_u64 positions_stride;
  gpuio_u32 per;
  gpuio_u32 rings;
} gpuio_impl_turns;

GPUIO_FN gpuio_turn *gpuio_impl_turn_at(gpuio_turn *base, gpuio_u64 stride, gpuio_u32 index) {
  return (gpuio_turn *)((char *)base + (gpuio_u64)index * stride);
}

/* A position's lap and its slot within the ring: pos / per and pos % per, as a shift
 * and a mask when per is a power of two (forward's and direct's always are; the
 * mailbox's port count need not be), else the division - for one thread a few dozen
 * dependent instructions, ~100 ns each time on an H100 (ncu, 2026-11-27). */
GPUIO_FN gpuio_u64 gpuio_impl_turn_lap(const gpuio_impl_turns *tt, gpuio_u64 pos) {
  return (tt->per & (tt->per - 1u)) == 0u ? pos >> gpuio_ctz_32(tt->per) : pos / tt->per;
}
GPUIO_FN gpuio_u32 gpuio_impl_turn_within(const gpuio_impl_turns *tt, gpuio_u64 pos) {
  return (gpuio_u32)((tt->per & (tt->per - 1u)) == 0u ? pos & (tt->per - 1u) : pos % tt->per);
}

/* The channel-wide index of the slot that position `pos` of ring `ring` names. */
GPUIO_FN gpuio_u32 gpuio_impl_turn_index(const gpuio_impl_turns *tt, gpuio_u32 ring, gpuio_u64 pos) {
  return ring * tt->per + gpuio_impl_turn_within(tt, pos);
}

GPUIO_FN gpuio_u64 *gpuio_impl_ring_positions(const gpuio_impl_turns *tt, gpuio_u32 ring) {
  return (gpuio_u64 *)((char *)tt->positions + (gpuio_u64)ring * tt->positions_stride);
}

/* A turn's word: the lap whose turn it is, and the slot's state. */
GPUIO_FN gpuio_u64 gpuio_impl_turn_word(gpuio_u64 lap, gpuio_u32 state) { return lap << GPUIO_TURN_SHIFT | state; }
GPUIO_FN gpuio_u64 gpuio_impl_turn_lap_of(gpuio_u64 word) { return word >> GPUIO_TURN_SHIFT; }
GPUIO_FN gpuio_u32 gpuio_impl_turn_state(gpuio_u64 word) { return (gpuio_u32)(word & GPUIO_TURN_STATE); }

/* The turn owner takes the slot: it says who holds it, then hands the turn on with
 * the slot IN_FLIGHT - all relaxed, no fence. Two ways in:
 *   - gpuio_impl_turn_take, where its acquiring load read (lap, FREE): the one store
 *     (lap + 1, IN_FLIGHT) both takes the slot and hands the turn on. No
 *     read-modify-write is needed because nobody else writes a word that reads
 *     (lap, FREE) before lap's owner moves it: the turn is moved only by its owner
 *     (this lane), the state only by the slot's holder, and the last holder gave the
 *     slot back (that is the FREE); owners of later laps only look, and one of an
 *     earlier lap gave up without writing.
 *   - gpuio_impl_turn_hold, where a compare-and-swap with acquire moved the word from
 *     (lap, ABANDONED) to (lap, IN_FLIGHT) (taking over an abandoned slot, a rare
 *     path): the turn is handed on by a reduction the thread does not wait for.
 * Why that is enough:
 *   - two lanes never hold the slot at once, however early the next turn owner sees
 *     the new turn: only lap's owner takes the slot at lap, once;
 *   - the acquire of that load (or compare-and-swap) orders this holder's use of the
 *     chunk and entry after the release that freed the slot;
 *   - `holder`, `since` and `holder_thread` are read relaxed by later turn owners,
 *     and a stale value only makes them pass the slot over (gpuio_impl_turn_step);
 *     where a holder's lap must be current - direct's completions, forward's and
 *     mailbox's answers - a system-scope fence or release of the holder's own comes
 *     between these stores and the request that reader acts on.
 * Why (H100, ncu's stall sampling of one thread's NOPs, 2026-11-27): a fence here
 * was ~340 ns of the "take a slot" step's 2.05 us, a wait for the thread's earlier
 * stores (the previous call's, across PCIe) that taking a device-local slot does not
 * need. And the take is a load where it was a compare-and-swap (H100, 2026-12-07,
 * run 199: one thread's forward NOPs timed step by step, medians of 1,000 - the take
 * 263 ns against 306, the hold's stores 41 against 63 (no reduction left pending),
 * and the submit's release that follows 640-724 ns against 822-906; the whole NOP
 * 250 ns shorter. `gpuio bench`'s anatomy: "take a slot" 1.06 us against 1.15). */
GPUIO_FN void gpuio_impl_turn_note_holder(gpuio_turn *t, gpuio_u64 lap) {
  gpuio_st_relaxed_64(&t->holder, lap);
  gpuio_st_relaxed_64(&t->since, gpuio_now_ns());
  gpuio_st_relaxed_32(&t->holder_thread, (gpuio_u32)gpuio_global_thread_id());
}
GPUIO_FN void gpuio_impl_turn_take(gpuio_turn *t, gpuio_u64 lap) {
  gpuio_impl_turn_note_holder(t, lap);
  gpuio_st_relaxed_64(&t->word, gpuio_impl_turn_word(lap + 1u, GPUIO_SLOT_IN_FLIGHT));
}
GPUIO_FN void gpuio_impl_turn_hold(gpuio_turn *t, gpuio_u64 lap) {
  gpuio_impl_turn_note_holder(t, lap);
  gpuio_add_dev_64(&t->word, 1ull << GPUIO_TURN_SHIFT);
}

/* The holder sets its slot's state, leaving the turn as later turn owners made it
 * (relaxed; the callers that need ordering fence first). Rare paths: abandoning,
 * marking an asynchronous call. */
GPUIO_FN void gpuio_impl_turn_set(gpuio_turn *t, gpuio_u32 state) {
  gpuio_u64 w = gpuio_ld_relaxed_64(&t->word);
  for (;;) {
    const gpuio_u64 seen = gpuio_cas_64(&t->word, w, (w & ~GPUIO_TURN_STATE) | state);
    if (seen == w) return;
    w = seen;
  }
}

/* One lane's progress through steps 1 and 2 for its position. */
typedef struct gpuio_impl_taker {
  gpuio_u32 ring;
  gpuio_u64 pos; /* from ring `ring`'s counter */
  gpuio_impl_backoff backoff;
  gpuio_u32 spins; /* looks at the slot since our turn came */
} gpuio_impl_taker;

/* One look at position k->pos's turn. Returns 0: the slot is held; -ETIMEDOUT /
 * -ESHUTDOWN: gave up, the turn passed on; 1: keep waiting, *ns is how long this
 * lane may sleep; 2: the slot is stuck, the turn passed on: take a new position.
 * reclaim(index, holder): whether the ABANDONED slot `index` (of the channel) may be
 * taken over now;
 * reclaim.nudge(): called while this lane is next in line and the slot is held, for
 * transports whose completions the device itself must collect (direct reaps). */
template <typename Reclaim>
GPUIO_FN int gpuio_impl_turn_step(const gpuio_channel *ch, const gpuio_impl_turns *tt, gpuio_impl_taker *k,
                                  gpuio_u64 deadline, gpuio_u32 *ns, const Reclaim &reclaim) {
  const gpuio_u64 lap = gpuio_impl_turn_lap(tt, k->pos);
  const gpuio_u32 index = gpuio_impl_turn_index(tt, k->ring, k->pos);
  gpuio_turn *t = gpuio_impl_turn_at(tt->base, tt->stride, index);
  /* Every look is a load, not a read-modify-write, with acquire: on an idle channel
   * the first finds (our turn, FREE), and the take is stores (gpuio_impl_turn_take);
   * otherwise it says whose turn it is and what the slot is. */
  const gpuio_u64 w = gpuio_ld_acquire_dev_64(&t->word);
  if (w == gpuio_impl_turn_word(lap, GPUIO_SLOT_FREE)) {
    gpuio_impl_turn_take(t, lap);
    return 0;
  }
  const gpuio_u64 turn = gpuio_impl_turn_lap_of(w);
  if (turn != lap) {
    /* Only a turn owner stalled for a whole timeout after its deadline keeps us
     * here: this position is then lost, and so is the slot's turn. */
    if (turn > lap || gpuio_impl_past(deadline + ch->timeout_ns)) return -GPUIO_ETIMEDOUT;
    /* Laps away: sleep in proportion, leaving the turn word to those in front. */
    const gpuio_u64 ahead = lap - turn;
    if (ahead <= 1u) reclaim.nudge(); /* next in line: help the slot along */
    *ns = ahead <= 1u ? gpuio_impl_backoff_next(&k->backoff, GPUIO_WAIT_LOCAL_NS)
                      : (ahead > 64u ? 256000u : (gpuio_u32)ahead * 4000u);
    return 1;
  }
  /* Our turn. */
  const gpuio_u32 state = gpuio_impl_turn_state(w);
  /* Held. What its holder wrote before its state (`holder`, `since`, ...) is read
   * relaxed: a stale value is an older lap's, for which a reclaim finds no answer,
   * or makes the slot look stuck - either way the turn passes over the slot, which
   * is slower, never wrong; a slot is only taken by its turn's owner, with acquire. */
  bool stuck = false;
  if (state == GPUIO_SLOT_ABANDONED) {
    bool take = reclaim(index, gpuio_ld_relaxed_64(&t->holder));
    if (!take) {
      /* Abandoned and not answered yet: its answer may be waiting for a reaper
       * (direct), and with every other thread gone nobody else would collect it. */
      reclaim.nudge();
      take = reclaim(index, gpuio_ld_relaxed_64(&t->holder));
    }
    if (take) {
      if (gpuio_cas_acquire_dev_64(&t->word, w, gpuio_impl_turn_word(lap, GPUIO_SLOT_IN_FLIGHT)) == w) {
        gpuio_impl_turn_hold(t, lap);
        return 0;
      }
      *ns = 0; /* moved meanwhile (a late abandon, a reaper): look again */
      return 1;
    }
    /* The transport may have freed it while looking (direct reaps). */
    if (gpuio_impl_turn_state(gpuio_ld_relaxed_64(&t->word)) == GPUIO_SLOT_FREE) {
      *ns = 0;
      return 1;
    }
    stuck = true;
  } else {
    reclaim.nudge();
    /* Held by an asynchronous call (kept for as long as its caller likes; its
     * caller may be this very thread, or one waiting for a turn itself), or held by
     * this thread: waiting could wait for ourselves. */
    stuck = state == GPUIO_SLOT_HELD_ASYNC ||
            gpuio_ld_relaxed_32(&t->holder_thread) == (gpuio_u32)gpuio_global_thread_id() ||
            gpuio_now_ns() - gpuio_ld_relaxed_64(&t->since) > ch->timeout_ns / 4u;
  }
  int e = 0;
  if (gpuio_impl_past(deadline)) e = -GPUIO_ETIMEDOUT;
  /* A PCIe read, so only now and then. */
  else if ((++k->spins & 31u) == 0u && gpuio_impl_closing(ch)) e = -GPUIO_ESHUTDOWN;
  if (stuck || e) {
    /* Hand the turn on, the slot's state as its holder leaves it. */
    gpuio_add_release_dev_64(&t->word, 1ull << GPUIO_TURN_SHIFT);
    return e ? e : 2;
  }
  *ns = gpuio_impl_backoff_next(&k->backoff, GPUIO_WAIT_LOCAL_NS);
  return 1;
}

/* Gives the slot back for the next turn, on every transport (the answer and the
 * staging bytes were read): its state FREE, with a release; the turn stays as turn
 * owners made it meanwhile. (GPUIO_SLOT_FREE is 0: clearing the state bits frees it
 * from IN_FLIGHT and HELD_ASYNC alike.) */
static_assert(GPUIO_SLOT_FREE == 0u && GPUIO_SLOT_HELD_ASYNC <= GPUIO_TURN_STATE, "a turn's state bits");
GPUIO_FN void gpuio_impl_release(const gpuio_channel *ch, gpuio_slot *s) {
  (void)ch;
  gpuio_and_release_dev_64(&s->turn->word, ~GPUIO_TURN_STATE);
}

/* Tells the turns that `s` is held by an asynchronous call: turn owners pass over
 * such a slot at once instead of waiting for it. (Every transport keeps its slots'
 * states in their turns.) */
GPUIO_FN void gpuio_impl_mark_async(const gpuio_channel *ch, gpuio_slot *s) {
  (void)ch;
  gpuio_impl_turn_set(s->turn, GPUIO_SLOT_HELD_ASYNC);
}

/* Waits for the answer to the request in `s`, the lanes of a warp together (one
 * poll instruction for all their slots, one sleep): 0 with *result, or -ETIMEDOUT
 * with the slot abandoned at the deadline (its state ABANDONED: the next turn owner
 * takes it over once the transport's reclaim finds the answer). poll(s, &result): 1
 * once answered.
 * The first GPUIO_WAIT_EAGER polls follow each other without a pause: where a poll
 * is a read across PCIe (~1.15 us on an H100-class GPU), a pause of 64-128 ns
 * between them spares the bus only a few percent, and added that to most answers'
 * latency (~215 ns of a NOP's 5.5 us: H200, ncu, 2026-11-27). After them the pauses
 * start at 256 ns and double up to `cap_ns` (GPUIO_WAIT_SHARED_NS where the answer
 * is read across PCIe, so that a hundred thousand waiters leave the bus to the
 * requests; GPUIO_WAIT_LOCAL_NS where it is device-local). */
#define GPUIO_WAIT_EAGER 2u
template <typename Poll>
GPUIO_FN int gpuio_impl_wait_answer(gpuio_slot *s, gpuio_u64 deadline, gpuio_u32 cap_ns, gpuio_i64 *result,
                                    const Poll &poll) {
  const gpuio_u64 mask = gpuio_warp_active();
  gpuio_impl_backoff backoff = {256u};
  gpuio_u32 polls = 0;
  int r = 1;
  for (;;) {
    gpuio_u32 ns = GPUIO_WARP_DONE;
    if (r == 1) {
      if (poll(s, result)) {
        r = 0;
      } else if (gpuio_impl_past(deadline)) {
        /* After this we touch neither the slot's entry nor its staging chunk. */
        gpuio_fence_sc();
        gpuio_impl_turn_set(s->turn, GPUIO_SLOT_ABANDONED);
        r = -GPUIO_ETIMEDOUT;
      } else {
        ns = ++polls <= GPUIO_WAIT_EAGER ? 0u : gpuio_impl_backoff_next(&backoff, cap_ns);
      }
    }
    if (!gpuio_impl_warp_pause(mask, ns)) break;
  }
  return r;
}

/* Points `s` at the slot that position `pos` of ring `ring` holds. Lap L of the ring
 * is lap L of all of them: s->pos is the position that slot index and lap name for
 * the channel, as for a transport of one ring. */
GPUIO_FN void gpuio_impl_turn_bind(const gpuio_impl_turns *tt, gpuio_u32 ring, gpuio_u64 pos, gpuio_slot *s) {
  const gpuio_u32 index = gpuio_impl_turn_index(tt, ring, pos);
  s->pos = gpuio_impl_turn_lap(tt, pos) * ((gpuio_u64)tt->per * tt->rings) + index;
  s->index = index;
  s->turn = gpuio_impl_turn_at(tt->base, tt->stride, index);
  s->shared = nullptr;
}

/* Claims a slot through its turn: 0 with s->pos, s->index and s->turn set (the
 * transport then points it at its staging chunk, gpuio_impl_slot_stage), or
 * -ETIMEDOUT / -ESHUTDOWN holding nothing. `tt` says where the
 * slots' turns and the rings' position counters are (slot i owns staging chunk i);
 * the call starts on ring `ring`.
 *
 * Warp-cooperative: the lanes of a warp that call this together take consecutive
 * positions with one fetch-add by their leader, then wait together, each lane for
 * its own slot, sleeping as one (gpuio_impl_warp_pause) so the warp stays
 * converged. (Measured on an H100: with each lane waiting on its own path, a
 * thread's second call ran 4-8x slower than its first.) A warp wider than the
 * ring's slots has lanes waiting for laps that other lanes of the same call hold;
 * their turns pass on at their deadline. */
template <typename Reclaim>
GPUIO_FN int gpuio_impl_turn_acquire(const gpuio_channel *ch, const gpuio_impl_turns *tt, gpuio_u32 ring,
                                     gpuio_slot *s, gpuio_u64 deadline, const Reclaim &reclaim) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask);
  const bool alone = gpuio_impl_warp_alone(mask);
  gpuio_u64 *positions = gpuio_impl_ring_positions(tt, ring);
  /* A lone lane predicts its position: the counter's value now, loaded with the
   * fetch-add in flight, so that its look at the predicted slot's turn need not wait
   * for the fetch-add's answer (a fetch-add then the look it names took 422 ns, the
   * two in flight together 275: H100, run 212). The look counts only where the
   * prediction was right and the turn is (our lap, FREE): such a word is moved by
   * nobody but its lap's owner, and the fetch-add makes that owner us, so a look
   * made before it returned says what a look after it would. Otherwise the lane
   * looks again, as every lane does (turns_model.rs mirrors this). */
  const gpuio_u64 guess = alone ? gpuio_ld_relaxed_64(positions) : 0u;
  gpuio_u64 first = 0;
  if (rank == 0) first = gpuio_fetch_add_64(positions, gpuio_warp_count(mask));
  if (alone) {
    const gpuio_u64 lap = gpuio_impl_turn_lap(tt, guess);
    gpuio_turn *t = gpuio_impl_turn_at(tt->base, tt->stride, gpuio_impl_turn_index(tt, ring, guess));
    const gpuio_u64 w = gpuio_ld_acquire_dev_64(&t->word);
    if (first == guess && w == gpuio_impl_turn_word(lap, GPUIO_SLOT_FREE)) {
      gpuio_impl_turn_take(t, lap);
      gpuio_impl_turn_bind(tt, ring, first, s);
      return 0;
    }
  }
  gpuio_impl_taker k = {};
  k.ring = ring;
  k.pos = alone ? first : gpuio_warp_broadcast_64(mask, first, leader) + rank;
  int e = 1;
  for (;;) {
    gpuio_u32 ns = GPUIO_WARP_DONE;
    if (e == 1) {
      e = gpuio_impl_turn_step(ch, tt, &k, deadline, &ns, reclaim);
      /* The slot was stuck: queue again, on the next ring - unless the channel is
       * closing. Slots left abandoned at close may never be answered (direct's
       * -ESHUTDOWN NOPs once the ring is gone), and a lane that only ever meets stuck
       * slots must not spin until its deadline. (A PCIe read, but only on this rare
       * path.) */
      if (e == 2 && gpuio_impl_closing(ch)) e = -GPUIO_ESHUTDOWN;
      if (e == 2) {
        k.ring = k.ring + 1u < tt->rings ? k.ring + 1u : 0u;
        k.pos = gpuio_fetch_add_64(gpuio_impl_ring_positions(tt, k.ring), 1u);
        k.backoff.ns = 0;
        k.spins = 0;
        e = 1;
        ns = 0;
      }
    }
    if (!gpuio_impl_warp_pause(mask, ns)) break;
  }
  if (e < 0) return e;
  gpuio_impl_turn_bind(tt, k.ring, k.pos, s);
  return 0;
}

/* Whether an I/O opcode moves bytes to its endpoint (PWRITE, WRITE, SEND), names a
 * file position (PWRITE, PREAD), or needs a socket (SEND, RECV). */
GPUIO_FN bool gpuio_impl_op_writes(gpuio_u32 op) {
  return op == GPUIO_OP_PWRITE || op == GPUIO_OP_WRITE || op == GPUIO_OP_SEND;
}
GPUIO_FN bool gpuio_impl_op_positioned(gpuio_u32 op) { return op == GPUIO_OP_PWRITE || op == GPUIO_OP_PREAD; }
GPUIO_FN bool gpuio_impl_op_socket(gpuio_u32 op) { return op == GPUIO_OP_SEND || op == GPUIO_OP_RECV; }

/* The rulebook (core/src/request.rs has the table): the same rules, in the same
 * order and with the same answers, as the host's validation on forward and mailbox.
 * Every public call checks its request with it; on direct, gpuio_direct_submit
 * checks again where a request becomes an SQE, since no host ever sees it. */
GPUIO_FN int gpuio_impl_check_request(const gpuio_channel *ch, const gpuio_request *r) {
  const bool positioned = gpuio_impl_op_positioned(r->op);
  const bool socket = gpuio_impl_op_socket(r->op);
  const bool writes = gpuio_impl_op_writes(r->op);
  if (r->flags != 0) return -GPUIO_EINVAL; /* 1: reserved */
  if (r->op == GPUIO_OP_NOP) return 0;     /* 3 */
  if (!positioned && !socket && r->op != GPUIO_OP_WRITE && r->op != GPUIO_OP_READ) return -GPUIO_EINVAL; /* 2 */
  if (r->endpoint >= ch->endpoint_count) return -GPUIO_EBADF; /* 4 */
  const gpuio_endpoint *ep = gpuio_ptr<const gpuio_endpoint>(ch->endpoints) + r->endpoint;
  if (!(ep->access & (writes ? GPUIO_ACCESS_WRITE : GPUIO_ACCESS_READ))) return -GPUIO_EBADF; /* 5 */
  if (socket && ep->kind != GPUIO_EP_SOCKET) return -GPUIO_ENOTSOCK;                           /* 6a */
  if (ep->kind == GPUIO_EP_HOST_QUEUE) return -GPUIO_ESPIPE; /* 6b: gpuio_send / gpuio_recv */
  if (positioned && ep->kind != GPUIO_EP_FILE) return -GPUIO_ESPIPE; /* 6c */
  if (r->len == 0 || r->len > ch->staging_len) return -GPUIO_EINVAL;
  if (r->staging_off > ch->staging_len || ch->staging_len - r->staging_off < r->len) return -GPUIO_EFAULT;
  if (positioned && (r->offset < 0 || r->offset > (gpuio_i64)(0x7fffffffffffffffull - r->len))) return -GPUIO_EINVAL;
  return 0;
}

/* What a request needs of the descriptor before it takes a slot, loaded with its
 * checks (gpuio_impl_check_channel) as one batch: the channel's words every
 * transport uses, and forward's take words (forward is the transport a machine
 * with an NVIDIA GPU runs by default; the others read theirs when they take).
 * Words that stay put for the kernel's life, each loaded once by the call. */
typedef struct gpuio_impl_call {
  gpuio_u32 transport;
  gpuio_u32 route; /* forward's ring group for this request (gpuio_impl_route), 0: none */
  gpuio_u64 timeout_ns;
  gpuio_u64 staging;    /* the staging area's device address */
  gpuio_u64 sizes;      /* slot_size (low 32 bits), slots (high) */
  gpuio_u64 forward[4]; /* entries, state, slot_state, rings | write_group << 32 */
} gpuio_impl_call;

/* The call's words after the first 16 bytes (gpuio_impl_check_channel loads those),
 * in four 16-byte loads that the compiler leaves where they stand
 * (gpuio_ld_fixed_pair): a batch of loads is one trip to L2 only while it is a few
 * instructions - a lone thread's batch of 4 or 6 loads took one trip's time, 8 two,
 * 12 three and 16 four (H100, 2026-12-07, run 212: 168, 172, 327, 486 and 635 ns
 * after an acquire had emptied L1, where one load took 154), which is why reading
 * forward's words with the checks as sixteen strong loads was no faster than two
 * trips (run 201), and seven loads (ABI 13's layout: forward's words across three
 * 16-byte chunks) made the checks two trips (run 213). ABI 14 puts `closing` beside
 * the magic and forward's block at 192, so the checks and these are five loads.
 * The offsets are asserted where the ABI's are (device/abi/asserts.cpp: NVRTC
 * before 13.4 has no offsetof for a static_assert here). */
GPUIO_FN void gpuio_impl_call_load(const gpuio_channel *ch, gpuio_impl_call *c) {
  const char *d = (const char *)ch;
  gpuio_u64 endpoints = 0;
  gpuio_ld_fixed_pair(d + 16, &c->timeout_ns, &c->staging);
  gpuio_ld_fixed_pair(d + 48, &c->sizes, &endpoints);
  gpuio_ld_fixed_pair(d + 192, &c->forward[0], &c->forward[1]);
  gpuio_ld_fixed_pair(d + 208, &c->forward[2], &c->forward[3]);
  (void)endpoints;
  c->route = 0u;
}

/* The ring group a request asks for (forward: gpuio_forward_route): endpoint + 1
 * for a positioned write longer than GPUIO_FORWARD_ROUTE_MIN, else 0. */
GPUIO_FN gpuio_u32 gpuio_impl_route(gpuio_u32 op, gpuio_u32 ep, gpuio_u64 len) {
  return op == GPUIO_OP_PWRITE && len > GPUIO_FORWARD_ROUTE_MIN ? ep + 1u : 0u;
}

#include "gpuio/direct.h"
#include "gpuio/forward.h"
#include "gpuio/mailbox.h"

/* ------------------------------------------------------------ dispatch */

/* gpuio_impl_check_descriptor, then -ESHUTDOWN once the host began closing: what
 * every request checks first, and (where asked for) what the call needs next in
 * *call. Host queues and printf logs check only the descriptor and learn of closing
 * from their rings' polls (gpuio/queue.h), so that a message costs no read across
 * PCIe. */
GPUIO_FN int gpuio_impl_check_channel(const gpuio_channel *ch, gpuio_impl_call *call = nullptr) {
  if (!gpuio_impl_descriptor_address(ch)) return -GPUIO_EINVAL; /* a 16-byte load would fault */
  /* Every word is loaded before any is tested, so the loads are in flight together:
   * one trip to L2, not one per test or per use (each ~100-240 ns on an H100-class
   * GPU, where the previous call's acquire emptied L1: measured with ncu on an
   * H200, 2026-11-27). Loads the compiler keeps in this order, ahead of the tests:
   * the first 16 bytes strong (`closing` is there, which the host sets while the
   * kernel runs; gpuio_impl_closing says why relaxed), the rest words that stay put
   * (gpuio_impl_call_load). Without a call to fill, only the first 16 bytes are read
   * before the magic is checked; with one, up to the end of the forward block. */
  gpuio_u64 head = 0, kind = 0; /* magic | version << 32, transport | closing << 32 */
  gpuio_ld_relaxed_pair(ch, &head, &kind);
  if (call) gpuio_impl_call_load(ch, call);
  if ((gpuio_u32)head != GPUIO_MAGIC) return -GPUIO_EINVAL;
  if ((gpuio_u32)(head >> 32) != GPUIO_ABI_VERSION) return -GPUIO_EPROTO;
  if (call) call->transport = (gpuio_u32)kind;
  const bool closing = (gpuio_u32)(kind >> 32) != 0u;
  return closing ? -GPUIO_ESHUTDOWN : 0;
}

/* Counts a device call that gave up at its deadline in ch->stats.timed_out, which
 * the host reads for close()'s report, and passes the result on. The forward and
 * mailbox transports are counted here, once for each -ETIMEDOUT their acquire or
 * wait returns (so every place in gpuio/forward.h and gpuio/mailbox.h that gives
 * up is counted, whatever their protocols become); direct counts its own in
 * gpuio/direct.h, whose raw-SQE path does not come through this dispatch. */
GPUIO_FN int gpuio_impl_count_timeout(const gpuio_channel *ch, int e) {
  if (e == -GPUIO_ETIMEDOUT) gpuio_fetch_add_64(&gpuio_impl_stats(ch)->timed_out, 1u);
  return e;
}

/* Claims a slot on the channel's transport, as gpuio_impl_check_channel read it. */
GPUIO_FN int gpuio_impl_acquire_on(const gpuio_channel *ch, const gpuio_impl_call *c, gpuio_slot *s) {
  const gpuio_u32 transport = c->transport;
  const gpuio_u64 deadline = gpuio_impl_deadline_after(c->timeout_ns);
  s->transport = transport;
  s->timeout_ns = c->timeout_ns;
  switch (transport) {
  case GPUIO_TRANSPORT_DIRECT: return gpuio_direct_acquire(ch, s, deadline);
  case GPUIO_TRANSPORT_FORWARD: return gpuio_impl_count_timeout(ch, gpuio_forward_acquire_with(ch, c, s, deadline));
  case GPUIO_TRANSPORT_MAILBOX: return gpuio_impl_count_timeout(ch, gpuio_mailbox_acquire(ch, s, deadline));
  default: return -GPUIO_EPROTO;
  }
}
GPUIO_FN int gpuio_impl_acquire(const gpuio_channel *ch, gpuio_slot *s) {
  gpuio_impl_call c;
  gpuio_impl_call_load(ch, &c);
  c.transport = ch->transport;
  return gpuio_impl_acquire_on(ch, &c, s);
}

GPUIO_FN void gpuio_impl_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  switch (s->transport) {
  case GPUIO_TRANSPORT_DIRECT: gpuio_direct_submit(ch, s, r); break;
  case GPUIO_TRANSPORT_FORWARD: gpuio_forward_submit(ch, s, r); break;
  case GPUIO_TRANSPORT_MAILBOX: gpuio_mailbox_submit(ch, s, r); break;
  default: break;
  }
}

GPUIO_FN int gpuio_impl_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  switch (s->transport) {
  case GPUIO_TRANSPORT_DIRECT: return gpuio_direct_wait(ch, s, deadline, result);
  case GPUIO_TRANSPORT_FORWARD: return gpuio_impl_count_timeout(ch, gpuio_forward_wait(ch, s, deadline, result));
  case GPUIO_TRANSPORT_MAILBOX: return gpuio_impl_count_timeout(ch, gpuio_mailbox_wait(ch, s, deadline, result));
  default: return -GPUIO_EPROTO;
  }
}

/* 1 with *result once the request in `s` finished, 0 while it is in flight. */
GPUIO_FN int gpuio_impl_poll(const gpuio_channel *ch, gpuio_slot *s, gpuio_i64 *result) {
  switch (s->transport) {
  case GPUIO_TRANSPORT_DIRECT: return gpuio_direct_poll(ch, s, result);
  case GPUIO_TRANSPORT_FORWARD: return gpuio_forward_poll(ch, s, result);
  case GPUIO_TRANSPORT_MAILBOX: return gpuio_mailbox_poll(ch, s, result);
  default: return 0;
  }
}

/* How long a call that has just handed its request over waits before its first
 * look at the answer, where that look is a read across PCIe (forward, mailbox). A
 * read issued right behind the request reaches host memory just after it, before
 * the host can have answered; it comes back empty ~1.2 us later, and the answer is
 * seen only by the next. A read issued a little later finds the answer. Measured on
 * H100s, 2026-12-06: one thread's forward NOP p50 4.0-4.3 us with a 300 ns pause
 * against 4.9-5.3 without (run 194). How long is enough varies by machine and by
 * transport: in run 197, `gpuio bench --only latency`, the pause interleaved, six
 * repeats each, p50 at 200 / 350 / 500 / 700 ns: mailbox 5.50-5.70 us in five of six
 * repeats at 200 (4.64 in one) against 4.74-4.80 in five of six at 350 (5.54 in one),
 * 4.80-4.93 at 500, 4.93-5.02 at 700; forward 4.03-4.26 / 4.16-4.32 / 4.35-4.51 /
 * 4.48-4.67 (run 196 had forward's 200 ns miss in 4 of 15 repeats, 5.15-5.41);
 * whole-device NOPs 30.5-30.6 M/s at 200 and 30.3-30.9 at 500. 350 ns catches
 * mailbox's answers and costs forward ~0.1 us where 200 was enough. With forward's
 * NOP submit ~0.6 us shorter (its words and READY relaxed), 350 still beats longer
 * pauses (run 201, 2026-12-07, on a build of this header that read the descriptor
 * in one batch (084845f, reverted): forward NOP p50 3.55 / 3.81 / 4.10-4.13 us at
 * 350 / 600 / 900), though its first read now finds the answer in 32-98 % of a
 * repeat's calls against 97-99 % at 600: a miss costs a read across PCIe, a longer
 * pause costs every call. Only a synchronous call pauses: an asynchronous one's wait
 * comes when its caller asks, often after the answer.
 * Forward pauses less since its forwarder watches the entry the next request comes
 * to (core/src/forward, ForwardBuilder::watch), which answers sooner: H100,
 * 2026-12-07, run 215, four interleaved rounds of three repeats each, forward NOP
 * p50 3.65-3.68 us at 350 against 3.55-3.58 at 250 and 3.49-3.52 at 175, the first
 * read finding the answer in 68-100 % / 66-98 % / 51-83 % of a repeat's calls
 * (with ABI 14's loads: 3.55-3.62 at 350, 3.49-3.52 at 250, 75-99 % at 250). 175
 * sits near the edge where a miss costs a PCIe read; 250 does not.
 * A kernel may define GPUIO_FIRST_POLL_NS (every transport) or
 * GPUIO_FIRST_POLL_FORWARD_NS (forward alone) before including gpuio.h; emulated
 * threads (the host target) do not pause. AMD GPUs take the same pauses, not
 * measured there (none is lent). */
#ifndef GPUIO_FIRST_POLL_NS
#if defined(GPUIO_TARGET_HOST)
#define GPUIO_FIRST_POLL_NS 0u
#else
#define GPUIO_FIRST_POLL_NS 350u
#define GPUIO_FIRST_POLL_FORWARD_DEFAULT_NS 250u
#endif
#endif
#ifndef GPUIO_FIRST_POLL_FORWARD_NS
#if defined(GPUIO_FIRST_POLL_FORWARD_DEFAULT_NS)
#define GPUIO_FIRST_POLL_FORWARD_NS GPUIO_FIRST_POLL_FORWARD_DEFAULT_NS
#else
#define GPUIO_FIRST_POLL_FORWARD_NS GPUIO_FIRST_POLL_NS
#endif
#endif
/* Spins `ns` on the clock (none: no clock read), the lanes of a warp together: a
 * nanosleep this short may sleep twice as long or not at all. */
GPUIO_FN void gpuio_impl_spin_ns(gpuio_u64 ns) {
  if (ns == 0u) return;
  const gpuio_u64 until = gpuio_now_ns() + ns;
  while (gpuio_now_ns() < until) {
  }
}
GPUIO_FN void gpuio_impl_first_poll_pause(const gpuio_slot *s) {
  if (s->transport == GPUIO_TRANSPORT_DIRECT) return; /* direct's answers are device-local */
  gpuio_impl_spin_ns(s->transport == GPUIO_TRANSPORT_FORWARD ? GPUIO_FIRST_POLL_FORWARD_NS : GPUIO_FIRST_POLL_NS);
}

/* Submits `r` in a slot already acquired and waits: 0 with *result set and the
 * slot still held, or -ETIMEDOUT with the slot abandoned. */
GPUIO_FN int gpuio_impl_run(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r, gpuio_i64 *result) {
  /* One deadline for the whole request, taken before the submit: a submit may wait
   * too (direct's gate for one file's large writes, gpuio/direct.h). */
  const gpuio_u64 deadline = gpuio_impl_deadline_after(s->timeout_ns);
  gpuio_impl_submit(ch, s, r);
  gpuio_impl_first_poll_pause(s);
  return gpuio_impl_wait(ch, s, deadline, result);
}

/* gpuio_impl_run, then release: the result or -errno. */
GPUIO_FN gpuio_i64 gpuio_impl_run_release(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_i64 result = 0;
  int e = gpuio_impl_run(ch, s, r, &result);
  if (e) return e;
  gpuio_impl_release(ch, s);
  return result;
}

/* Sends `r` exactly as given, without the device-side checks: what a kernel that
 * bypasses this header could do. The host (forward, mailbox) or the kernel's ring
 * restrictions (direct) must still refuse anything out of bounds. */
GPUIO_ENGINE gpuio_i64 gpuio_impl_request_raw(const gpuio_channel *ch, const gpuio_request *r) {
  gpuio_impl_call c;
  int e = gpuio_impl_check_channel(ch, &c);
  if (e) return e;
  gpuio_slot s;
  e = gpuio_impl_acquire_on(ch, &c, &s);
  if (e) return e;
  return gpuio_impl_run_release(ch, &s, r);
}

/* A checked request on bytes already in the staging area. */
GPUIO_ENGINE gpuio_i64 gpuio_impl_request_staged(const gpuio_channel *ch, gpuio_request r) {
  gpuio_impl_call c;
  int e = gpuio_impl_check_channel(ch, &c);
  if (e) return e;
  e = gpuio_impl_check_request(ch, &r);
  if (e) return e;
  c.route = gpuio_impl_route(r.op, r.endpoint, r.len);
  gpuio_slot s;
  e = gpuio_impl_acquire_on(ch, &c, &s);
  if (e) return e;
  return gpuio_impl_run_release(ch, &s, &r);
}

/* -------------------------------------------------------- public calls */

/* Does nothing through the whole path; 0 on success. */
GPUIO_FN gpuio_i64 gpuio_nop(const gpuio_channel *ch) {
  gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
  return gpuio_impl_request_staged(ch, r);
}

/* The staging bytes the kernel manages itself: returns their device pointer and
 * stores their offset in the staging area and their length. */
GPUIO_FN char *gpuio_user_staging(const gpuio_channel *ch, gpuio_u64 *off, gpuio_u64 *len) {
  /* No channel (null, or not a descriptor this header speaks): NULL, 0 bytes. */
  if (gpuio_impl_check_descriptor(ch) != 0) {
    if (off) *off = 0;
    if (len) *len = 0;
    return nullptr;
  }
  gpuio_u64 o = (gpuio_u64)ch->slots * ch->slot_size;
  if (off) *off = o;
  if (len) *len = ch->staging_len - o;
  return gpuio_ptr<char>(ch->staging) + o;
}

/* pwrite(2) of bytes at staging_off, no copy. */
GPUIO_FN gpuio_i64 gpuio_pwrite_staged(const gpuio_channel *ch, gpuio_u32 ep, gpuio_u64 staging_off, gpuio_u64 len,
                                       gpuio_i64 offset) {
  if (len > 0xffffffffull) return -GPUIO_EINVAL;
  gpuio_request r = {GPUIO_OP_PWRITE, ep, (gpuio_u32)len, 0, staging_off, offset};
  return gpuio_impl_request_staged(ch, r);
}

/* pread(2) into staging_off, no copy. */
GPUIO_FN gpuio_i64 gpuio_pread_staged(const gpuio_channel *ch, gpuio_u32 ep, gpuio_u64 staging_off, gpuio_u64 len,
                                      gpuio_i64 offset) {
  if (len > 0xffffffffull) return -GPUIO_EINVAL;
  gpuio_request r = {GPUIO_OP_PREAD, ep, (gpuio_u32)len, 0, staging_off, offset};
  return gpuio_impl_request_staged(ch, r);
}

/* Moves `len` bytes between `buf` and endpoint `ep` through this call's staging
 * chunk, one request per slot_size bytes. Returns the bytes moved (short if the
 * OS moved fewer) or the first -errno if nothing moved. */
GPUIO_ENGINE gpuio_i64 gpuio_impl_transfer(const gpuio_channel *ch, gpuio_u32 op, gpuio_u32 ep, char *buf, gpuio_u64 len,
                                  gpuio_i64 offset) {
  gpuio_impl_call c;
  int e = gpuio_impl_check_channel(ch, &c);
  if (e) return e;
  /* The first chunk, checked before any byte is copied (len 0 breaks rule 7). */
  gpuio_request probe = {op, ep, (gpuio_u32)(len < ch->slot_size ? len : ch->slot_size), 0, 0, offset};
  e = gpuio_impl_check_request(ch, &probe);
  if (e) return e;
  const bool to_endpoint = gpuio_impl_op_writes(op);
  const bool positioned = gpuio_impl_op_positioned(op);
  gpuio_u64 done = 0;
  while (done < len) {
    gpuio_slot s;
    gpuio_u64 n = len - done < ch->slot_size ? len - done : ch->slot_size;
    c.route = gpuio_impl_route(op, ep, n);
    e = gpuio_impl_acquire_on(ch, &c, &s);
    if (e) return done ? (gpuio_i64)done : e;
    if (to_endpoint) gpuio_impl_copy(s.staging, buf + done, n);
    gpuio_request r = {op, ep, (gpuio_u32)n, 0, s.staging_off, positioned ? offset + (gpuio_i64)done : -1};
    gpuio_i64 res = 0;
    e = gpuio_impl_run(ch, &s, &r, &res);
    if (e) return done ? (gpuio_i64)done : e;
    if (!to_endpoint && res > 0) gpuio_impl_copy(buf + done, s.staging, (gpuio_u64)res);
    gpuio_impl_release(ch, &s);
    if (res < 0) return done ? (gpuio_i64)done : res;
    done += (gpuio_u64)res;
    if ((gpuio_u64)res < n) break;
  }
  return (gpuio_i64)done;
}

GPUIO_FN gpuio_i64 gpuio_pwrite(const gpuio_channel *ch, gpuio_u32 ep, const void *buf, gpuio_u64 len,
                                gpuio_i64 offset) {
  return gpuio_impl_transfer(ch, GPUIO_OP_PWRITE, ep, (char *)buf, len, offset);
}
GPUIO_FN gpuio_i64 gpuio_pread(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 len, gpuio_i64 offset) {
  return gpuio_impl_transfer(ch, GPUIO_OP_PREAD, ep, (char *)buf, len, offset);
}
/* write(2) on a stream endpoint (stdout, a pipe, a socket, an O_APPEND file; on a
 * socket the host makes it send(2) with MSG_NOSIGNAL). */
GPUIO_FN gpuio_i64 gpuio_write(const gpuio_channel *ch, gpuio_u32 ep, const void *buf, gpuio_u64 len) {
  return gpuio_impl_transfer(ch, GPUIO_OP_WRITE, ep, (char *)buf, len, -1);
}
/* A stream read (READ or RECV): at most slot_size bytes, one request. */
GPUIO_FN gpuio_i64 gpuio_impl_stream_read(const gpuio_channel *ch, gpuio_u32 op, gpuio_u32 ep, void *buf,
                                          gpuio_u64 len) {
  int e = gpuio_impl_check_descriptor(ch); /* before reading ch->slot_size; the transfer checks `closing` */
  if (e) return e;
  if (len > ch->slot_size) len = ch->slot_size;
  return gpuio_impl_transfer(ch, op, ep, (char *)buf, len, -1);
}
/* read(2) on a stream endpoint: at most slot_size bytes per call (recv(2) on a
 * socket: the host makes every stream op on a socket the socket's own). */
GPUIO_FN gpuio_i64 gpuio_read(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 len) {
  return gpuio_impl_stream_read(ch, GPUIO_OP_READ, ep, buf, len);
}

/* The opcode of gpuio_send (`sends`) or gpuio_recv on a stream endpoint: SEND / RECV
 * on a socket (send(2) with MSG_NOSIGNAL, recv(2)), WRITE / READ on anything else
 * (a pipe, stdout, an O_APPEND file). The caller checked the channel; an index
 * past the table gets WRITE / READ, which the rulebook then refuses (-EBADF). */
GPUIO_FN gpuio_u32 gpuio_impl_stream_op(const gpuio_channel *ch, gpuio_u32 ep, bool sends) {
  const bool socket =
      ep < ch->endpoint_count && gpuio_ptr<const gpuio_endpoint>(ch->endpoints)[ep].kind == GPUIO_EP_SOCKET;
  if (socket) return sends ? GPUIO_OP_SEND : GPUIO_OP_RECV;
  return sends ? GPUIO_OP_WRITE : GPUIO_OP_READ;
}

/* ------------------------------------------------ warp-cooperative calls
 *
 * gpuio_pwrite_warp / gpuio_pread_warp: every active lane of a warp calls with the
 * same arguments and gets the same result. One lane takes a slot per slot_size
 * bytes, all lanes copy the bytes between the caller's buffer and the staging chunk
 * side by side (coalesced), the one lane submits and waits, and the result is
 * broadcast. One request (and one waiter polling across PCIe) per warp instead of
 * one per lane. On the CPU device a warp is one thread. */

GPUIO_ENGINE gpuio_i64 gpuio_impl_transfer_warp(const gpuio_channel *ch, gpuio_u32 op, gpuio_u32 ep, char *buf,
                                            gpuio_u64 len, gpuio_i64 offset) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 leader = gpuio_warp_leader(mask), rank = gpuio_warp_rank(mask), count = gpuio_warp_count(mask);
  gpuio_impl_call c;
  int e = gpuio_impl_check_channel(ch, &c);
  if (e) return e;
  /* The first chunk, checked before any byte is copied (len 0 breaks rule 7). */
  gpuio_request probe = {op, ep, (gpuio_u32)(len < ch->slot_size ? len : ch->slot_size), 0, 0, offset};
  e = gpuio_impl_check_request(ch, &probe);
  if (e) return e;
  const bool to_endpoint = gpuio_impl_op_writes(op);
  gpuio_u64 done = 0;
  while (done < len) {
    const gpuio_u64 n = len - done < ch->slot_size ? len - done : ch->slot_size;
    gpuio_slot s = {};
    gpuio_i64 got = 0;
    c.route = gpuio_impl_route(op, ep, n);
    if (rank == 0) got = gpuio_impl_acquire_on(ch, &c, &s);
    got = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)got, leader);
    if (got) return done ? (gpuio_i64)done : got;
    char *staging = (char *)gpuio_warp_broadcast_64(mask, (gpuio_u64)s.staging, leader);
    if (to_endpoint) {
      gpuio_impl_copy_warp(staging, buf + done, n, rank, count);
      gpuio_fence_sc(); /* each lane's bytes before the leader publishes the request */
    }
    gpuio_warp_sync(mask);
    gpuio_i64 res = 0;
    int w = 0; /* the leader's wait: nonzero when it gave up and the slot is abandoned */
    if (rank == 0) {
      gpuio_request r = {op, ep, (gpuio_u32)n, 0, s.staging_off, offset + (gpuio_i64)done};
      w = gpuio_impl_run(ch, &s, &r, &res);
      if (w) res = w;
    }
    res = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)res, leader);
    if (!to_endpoint && res > 0) {
      gpuio_impl_copy_warp(buf + done, staging, (gpuio_u64)res < n ? (gpuio_u64)res : n, rank, count);
      gpuio_warp_sync(mask); /* every lane read the chunk before it is released */
    }
    if (rank == 0 && !w) gpuio_impl_release(ch, &s);
    if (res < 0) return done ? (gpuio_i64)done : res;
    done += (gpuio_u64)res;
    if ((gpuio_u64)res < n) break;
  }
  return (gpuio_i64)done;
}

/* pwrite(2) by a whole warp (every active lane, same arguments): bytes written. */
GPUIO_FN gpuio_i64 gpuio_pwrite_warp(const gpuio_channel *ch, gpuio_u32 ep, const void *buf, gpuio_u64 len,
                                     gpuio_i64 offset) {
  return gpuio_impl_transfer_warp(ch, GPUIO_OP_PWRITE, ep, (char *)buf, len, offset);
}
/* pread(2) by a whole warp (every active lane, same arguments): bytes read. */
GPUIO_FN gpuio_i64 gpuio_pread_warp(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 len,
                                    gpuio_i64 offset) {
  return gpuio_impl_transfer_warp(ch, GPUIO_OP_PREAD, ep, (char *)buf, len, offset);
}

/* ---------------------------------------------------- asynchronous calls
 *
 * gpuio_pwrite_async / gpuio_pread_async start one request of at most slot_size
 * bytes and return at once: 0, with the ticket in flight, or -errno (nothing in
 * flight; -EMSGSIZE when len > slot_size). A write's bytes are copied at the call,
 * so its buffer may be reused at once; a read's bytes land in `buf` at gpuio_wait.
 * gpuio_test: 1 once the request finished, 0 while it is in flight, -EINVAL for a
 * ticket not in flight. gpuio_wait: waits for it (the channel's timeout, counted
 * from the wait), copies a read's bytes, frees its slot and returns the result
 * (bytes moved or -errno); afterwards the ticket is free for another call.
 * A ticket holds one of the channel's slots from start to wait, so a thread may
 * keep several requests in flight, fewer than the channel has slots; every ticket
 * started must be waited for. */
#define GPUIO_TICKET_IN_FLIGHT 0x7469636bu /* "tick": not what zeroed memory holds */
typedef struct gpuio_ticket {
  gpuio_slot slot;
  char *dst;       /* a read's destination */
  gpuio_u64 len;   /* bytes asked for */
  gpuio_u32 state; /* GPUIO_TICKET_IN_FLIGHT while a request is in flight */
  gpuio_u32 op;
} gpuio_ticket;

GPUIO_ENGINE gpuio_i64 gpuio_impl_start(const gpuio_channel *ch, gpuio_u32 op, gpuio_u32 ep, char *buf, gpuio_u64 len,
                                    gpuio_i64 offset, gpuio_ticket *t) {
  if (!t) return -GPUIO_EINVAL;
  t->state = 0;
  gpuio_impl_call c;
  int e = gpuio_impl_check_channel(ch, &c);
  if (e) return e;
  if (len > ch->slot_size) return -GPUIO_EMSGSIZE;
  gpuio_request r = {op, ep, (gpuio_u32)len, 0, 0, offset};
  e = gpuio_impl_check_request(ch, &r);
  if (e) return e;
  c.route = gpuio_impl_route(op, ep, len);
  e = gpuio_impl_acquire_on(ch, &c, &t->slot);
  if (e) return e;
  gpuio_impl_mark_async(ch, &t->slot);
  const bool writes = gpuio_impl_op_writes(op);
  if (writes) gpuio_impl_copy(t->slot.staging, buf, len);
  r.staging_off = t->slot.staging_off;
  t->dst = writes ? nullptr : buf;
  t->len = len;
  t->op = op;
  gpuio_impl_submit(ch, &t->slot, &r);
  t->state = GPUIO_TICKET_IN_FLIGHT;
  return 0;
}

/* pwrite(2) of len <= slot_size bytes, started: 0 or -errno (see above). */
GPUIO_FN gpuio_i64 gpuio_pwrite_async(const gpuio_channel *ch, gpuio_u32 ep, const void *buf, gpuio_u64 len,
                                      gpuio_i64 offset, gpuio_ticket *t) {
  return gpuio_impl_start(ch, GPUIO_OP_PWRITE, ep, (char *)buf, len, offset, t);
}
/* pread(2) of len <= slot_size bytes into buf (filled at gpuio_wait), started. */
GPUIO_FN gpuio_i64 gpuio_pread_async(const gpuio_channel *ch, gpuio_u32 ep, void *buf, gpuio_u64 len,
                                     gpuio_i64 offset, gpuio_ticket *t) {
  return gpuio_impl_start(ch, GPUIO_OP_PREAD, ep, (char *)buf, len, offset, t);
}

/* Whether `t` holds a request in flight on a channel this header could have made
 * (the address and the magic; gpuio_test and gpuio_wait refuse anything else). */
GPUIO_FN bool gpuio_impl_ticket_in_flight(const gpuio_channel *ch, const gpuio_ticket *t) {
  return gpuio_impl_descriptor_address(ch) && ch->magic == GPUIO_MAGIC && t && t->state == GPUIO_TICKET_IN_FLIGHT;
}

/* 1 finished, 0 in flight, -EINVAL not a ticket in flight; never waits. */
GPUIO_FN int gpuio_test(const gpuio_channel *ch, gpuio_ticket *t) {
  if (!gpuio_impl_ticket_in_flight(ch, t)) return -GPUIO_EINVAL;
  gpuio_i64 ignored = 0;
  return gpuio_impl_poll(ch, &t->slot, &ignored);
}

/* The result of the request in flight on `t` (bytes moved or -errno), once it
 * finished or the channel's timeout passed (-ETIMEDOUT: the request is abandoned,
 * its slot freed when it completes). */
GPUIO_FN gpuio_i64 gpuio_wait(const gpuio_channel *ch, gpuio_ticket *t) {
  if (!gpuio_impl_ticket_in_flight(ch, t)) return -GPUIO_EINVAL;
  t->state = 0;
  gpuio_i64 res = 0;
  const int e = gpuio_impl_wait(ch, &t->slot, gpuio_impl_deadline_after(t->slot.timeout_ns), &res);
  if (e) return e;
  if (t->dst && res > 0) gpuio_impl_copy(t->dst, t->slot.staging, (gpuio_u64)res < t->len ? (gpuio_u64)res : t->len);
  gpuio_impl_release(ch, &t->slot);
  return res;
}

/* Whether the format string's last character is a newline. */
GPUIO_FN bool gpuio_impl_ends_with_newline(const char *fmt) {
  if (!fmt || !*fmt) return false;
  while (fmt[1]) ++fmt;
  return *fmt == '\n';
}

/* gpuio_fprintf on an endpoint without a printf log: formats on the device into
 * this call's staging chunk and writes it to `ep` as one write(2) request, so lines
 * from many threads never interleave. Returns the bytes written, or -errno; output
 * longer than slot_size - 1 bytes is cut to slot_size - 2 bytes plus the
 * format's final '\n' and -EMSGSIZE returned; output over INT_MAX bytes writes nothing, -EOVERFLOW (the slot's turn
 * is filled with a NOP: transports cannot skip one). An empty result writes
 * nothing and returns 0. The caller checked the channel and the request. */
/* A printf's transport steps when its endpoint has no log, as engines: with
 * GPUIO_OUT_OF_LINE every printf of the kernel (one instantiation per argument
 * list) calls the same ones. */
GPUIO_ENGINE int gpuio_impl_acquire_shared_code(const gpuio_channel *ch, gpuio_slot *s) {
  return gpuio_impl_acquire(ch, s);
}
GPUIO_ENGINE gpuio_i64 gpuio_impl_run_release_shared_code(const gpuio_channel *ch, gpuio_slot *s,
                                                           const gpuio_request *r) {
  return gpuio_impl_run_release(ch, s, r);
}

template <typename... A>
GPUIO_FN gpuio_i64 gpuio_impl_fprintf_request(const gpuio_channel *ch, gpuio_u32 ep, const char *fmt, A... args) {
  gpuio_slot s;
  int e = gpuio_impl_acquire_shared_code(ch, &s);
  if (e) return e;
  const int full = gpuio_snprintf(s.staging, ch->slot_size, fmt, args...);
  gpuio_u64 n = full < 0 ? 0 : (gpuio_u64)full;
  const bool cut = full >= 0 && n >= ch->slot_size;
  if (cut) {
    n = ch->slot_size - 1; /* what the formatter wrote, before its NUL */
    if (gpuio_impl_ends_with_newline(fmt)) s.staging[n - 1] = '\n';
  }
  if (n == 0) {
    gpuio_request nop = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
    gpuio_i64 res = gpuio_impl_run_release_shared_code(ch, &s, &nop);
    if (res < 0) return res;
    return full < 0 ? -GPUIO_EOVERFLOW : 0;
  }
  gpuio_request r = {GPUIO_OP_WRITE, ep, (gpuio_u32)n, 0, s.staging_off, -1};
  gpuio_i64 res = gpuio_impl_run_release_shared_code(ch, &s, &r);
  if (res < 0) return res;
  return cut ? -GPUIO_EMSGSIZE : res;
}

#endif /* GPUIO_API_H */
