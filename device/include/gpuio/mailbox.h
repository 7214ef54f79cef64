/* gpuio/mailbox.h — device side of the mailbox transport (host side:
 * backend-rpc/src/mailbox/).
 *
 * Memory (see abi.h / abi.rs):
 *   shared        gpuio_mailbox_port ports[port_count]       device_out | host_out | req | result
 *   device-local  gpuio_u32 locks[port_count][GPUIO_MB_LOCK_WORDS]   (4160 B a port)
 *                 per port: [0] a ticket lock, [16..1040) a bitmap of given-up tickets
 *
 * Protocol, in one sentence: the device owns port i when device_out == host_out.
 * The owner writes `req`, then flips device_out with a system-scope release store;
 * the host server acquires device_out, sees it differ from host_out, executes the
 * request, writes `result` and flips host_out with a release store; the device
 * acquires host_out, sees it equal device_out again, and reads `result`.
 * Each flag has one writer (device_out: the device, host_out: the host), so no
 * GPU<->host atomic read-modify-write is ever needed on mapped memory.
 *
 * Which port: thread t uses port t % port_count. Calls are per thread, so
 * giving every lane of a warp its own port (port_count >= 64, as by default)
 * lets a warp's lanes work in parallel and never makes one lane wait for a lock
 * another lane of the same warp holds: without independent thread scheduling
 * (AMD wavefronts, pre-Volta NVIDIA) such a wait only ends at the deadline.
 *
 * Threads t and t + port_count share a port, so a lock serialises them from
 * acquire to release (or to a wait that timed out). It is a FIFO ticket lock:
 * a plain try-lock lets the thread that just released win again and again (on
 * the CPU device the others are yielding) until someone times out. Lock word:
 *   bits 30..16  next     the ticket the next arrival takes
 *   bits 15..1   serving  the ticket whose turn it is
 *   bit  0       held     the turn was taken: the port has an owner
 * Tickets count modulo 2^15, so a port serves up to 2^14 waiters at once.
 * A waiter may give up (deadline, closing). It then sets its ticket's bit in
 * the port's bitmap (one bit per ticket number), and whoever sees the turn of a
 * marked ticket untaken passes over it at once and clears the bit; a waiter
 * that gives up when its own turn (or that of marked tickets after it) has come
 * passes over them itself, so a port its waiters all left is free again. A turn
 * left untaken for `patience` (timeout_ns / 64, at least 1 ms) is passed over
 * too: its owner is too slow to take it, notices, and queues again.
 *
 * Port i owns staging chunk i, so port_count <= slots.
 *
 * An abandoned request (wait timed out) keeps its port busy until the host
 * answers: the waiter unlocks, and the next owner of the lock waits for
 * device_out == host_out before it binds the port, so the late answer never
 * lands in someone else's request and the staging chunk is never reused early.
 */
#ifndef GPUIO_MAILBOX_H
#define GPUIO_MAILBOX_H

/* Device-local u32s per port (the host allocates port_count times this): the
 * lock word, padding to a cache line, then one bit per ticket number. */
#define GPUIO_MB_LOCK_WORDS 1040u
#define GPUIO_MB_BITMAP 16u
#define GPUIO_MB_TICKETS 0x7fffu

GPUIO_FN gpuio_mailbox_port *gpuio_mailbox_port_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_mailbox_port>(ch->mailbox.ports) + i;
}

GPUIO_FN gpuio_u32 *gpuio_mailbox_lock_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_u32>(ch->mailbox.locks) + (gpuio_u64)i * GPUIO_MB_LOCK_WORDS;
}

GPUIO_FN gpuio_u32 gpuio_mb_next(gpuio_u32 w) { return (w >> 16) & GPUIO_MB_TICKETS; }
GPUIO_FN gpuio_u32 gpuio_mb_serving(gpuio_u32 w) { return (w >> 1) & GPUIO_MB_TICKETS; }
GPUIO_FN gpuio_u32 gpuio_mb_word(gpuio_u32 next, gpuio_u32 serving, gpuio_u32 held) {
  return ((next & GPUIO_MB_TICKETS) << 16) | ((serving & GPUIO_MB_TICKETS) << 1) | (held & 1u);
}
/* Whether ticket t comes after ticket `now` in the queue (modulo 2^15). */
GPUIO_FN bool gpuio_mb_after(gpuio_u32 t, gpuio_u32 now) {
  gpuio_u32 d = (t - now) & GPUIO_MB_TICKETS;
  return d != 0 && d <= GPUIO_MB_TICKETS / 2u;
}

/* Given-up marks: bit t % 32 of bitmap word t / 32. */
GPUIO_FN bool gpuio_mb_marked(gpuio_u32 *lock, gpuio_u32 t) {
  return (gpuio_ld_relaxed_32(lock + GPUIO_MB_BITMAP + (t >> 5)) >> (t & 31u)) & 1u;
}
GPUIO_FN void gpuio_mb_set_mark(gpuio_u32 *lock, gpuio_u32 t, bool on) {
  gpuio_u32 *word = lock + GPUIO_MB_BITMAP + (t >> 5), bit = 1u << (t & 31u);
  for (;;) { /* fails only when another bit of the word changed: someone progressed */
    gpuio_u32 old = gpuio_ld_relaxed_32(word);
    gpuio_u32 want = on ? (old | bit) : (old & ~bit);
    if (old == want || gpuio_cas_32(word, old, want) == old) return;
  }
}

/* Passes over the turn in `w` (serving, not held). */
GPUIO_FN void gpuio_mailbox_skip(gpuio_u32 *lock, gpuio_u32 w) {
  gpuio_u32 s = gpuio_mb_serving(w);
  if (gpuio_cas_32(lock, w, gpuio_mb_word(gpuio_mb_next(w), s + 1u, 0u)) == w && gpuio_mb_marked(lock, s))
    gpuio_mb_set_mark(lock, s, false);
}

/* Passes over turns of given-up tickets from the current one on (at most `n`). */
GPUIO_FN void gpuio_mailbox_skip_marked(gpuio_u32 *lock, gpuio_u32 n) {
  for (gpuio_u32 i = 0; i < n; i++) {
    gpuio_u32 w = gpuio_ld_relaxed_32(lock);
    gpuio_u32 s = gpuio_mb_serving(w);
    if ((w & 1u) || s == gpuio_mb_next(w) || !gpuio_mb_marked(lock, s)) return;
    gpuio_mailbox_skip(lock, w);
  }
}

/* Gives up ticket k without having had its turn. */
GPUIO_FN void gpuio_mailbox_abandon(gpuio_u32 *lock, gpuio_u32 k) {
  gpuio_mb_set_mark(lock, k, true);
  gpuio_u32 s = gpuio_mb_serving(gpuio_ld_relaxed_32(lock));
  /* Passed over already (too slow): nobody will look at the mark; take it back. */
  if (gpuio_mb_after(s, k)) gpuio_mb_set_mark(lock, k, false);
  gpuio_mailbox_skip_marked(lock, 64u);
}

/* Gives the turn to the next ticket. */
GPUIO_FN void gpuio_mailbox_unlock(gpuio_u32 *lock) {
  /* Release: everything this owner did to the port (its request, its flip of
   * device_out) is visible to whoever takes the lock next (the CAS is relaxed on
   * CUDA). */
  gpuio_fence_sc();
  for (;;) {
    /* Fails only when an arrival took a ticket meanwhile: someone progressed. */
    gpuio_u32 w = gpuio_ld_relaxed_32(lock);
    if (gpuio_cas_32(lock, w, gpuio_mb_word(gpuio_mb_next(w), gpuio_mb_serving(w) + 1u, 0u)) == w) return;
  }
}

/* Takes a ticket and waits for its turn. 0 (held), -ETIMEDOUT or -ESHUTDOWN. */
GPUIO_FN int gpuio_mailbox_lock(const gpuio_channel *ch, gpuio_u32 *lock, gpuio_u64 deadline) {
  gpuio_u64 patience = ch->timeout_ns / 64u;
  if (patience < 1000000u) patience = 1000000u;
  for (gpuio_u32 spins = 0;; spins++) {
    /* Take ticket k; if the lock is free with nobody waiting, take the turn too. */
    gpuio_u32 w = gpuio_ld_relaxed_32(lock);
    gpuio_u32 k = gpuio_mb_next(w);
    bool free_now = gpuio_mb_serving(w) == k && !(w & 1u);
    if (gpuio_cas_32(lock, w, gpuio_mb_word(k + 1u, gpuio_mb_serving(w), free_now ? 1u : (w & 1u))) != w) {
      if (gpuio_impl_past(deadline)) return -GPUIO_ETIMEDOUT;
      gpuio_pause();
      continue;
    }
    if (free_now) return 0;
    gpuio_u32 stalled = 0xffffffffu; /* a turn seen untaken, and since when */
    gpuio_u64 since = 0;
    for (;; spins++) {
      w = gpuio_ld_relaxed_32(lock);
      gpuio_u32 s = gpuio_mb_serving(w);
      bool again = false; /* something changed: look again without pausing */
      if (w & 1u) {
        stalled = 0xffffffffu;
      } else if (s == k) {
        if (gpuio_cas_32(lock, w, w | 1u) == w) return 0;
        again = true;
      } else if (gpuio_mb_after(s, k)) {
        break; /* our turn was passed over (we were too slow): queue again */
      } else if (gpuio_mb_marked(lock, s)) {
        gpuio_mailbox_skip(lock, w); /* its owner gave up */
        again = true;
      } else {
        gpuio_u64 now = gpuio_now_ns();
        if (s != stalled) {
          stalled = s;
          since = now;
        } else if (now - since > patience) {
          gpuio_mailbox_skip(lock, w);
        }
      }
      int e = 0;
      if (gpuio_impl_past(deadline)) e = -GPUIO_ETIMEDOUT;
      /* A PCIe read, so only now and then: stop queueing once the channel closes. */
      else if ((spins & 31u) == 31u && gpuio_ld_acquire_32(&ch->closing)) e = -GPUIO_ESHUTDOWN;
      if (e) {
        gpuio_mailbox_abandon(lock, k);
        return e;
      }
      if (!again) {
        /* A waiter far back in the queue sleeps in proportion to its distance (well
         * under `patience`, so its turn is never passed over for being asleep) and
         * leaves the lock word to the ones in front. */
        const gpuio_u32 d = (k - s) & GPUIO_MB_TICKETS;
        if (d <= 1u) gpuio_pause();
        else gpuio_sleep_ns(d > 100u ? 200000u : d * 2000u);
      }
    }
  }
}

/* Takes this thread's port: its lock, then the port itself once the host has
 * answered whatever is still in it. 0, -ETIMEDOUT, -ESHUTDOWN (the channel began
 * closing before anything was submitted) or -EPROTO (no ports). */
GPUIO_FN int gpuio_mailbox_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  gpuio_u32 n = ch->mailbox.port_count;
  if (n == 0 || n > ch->slots) return -GPUIO_EPROTO;
  gpuio_u32 i = (gpuio_u32)(gpuio_global_thread_id() % n);
  gpuio_u32 *lock = gpuio_mailbox_lock_at(ch, i);
  gpuio_mailbox_port *port = gpuio_mailbox_port_at(ch, i);

  int e = gpuio_mailbox_lock(ch, lock, deadline);
  if (e) return e;
  /* The CAS is relaxed on CUDA: the fence makes it an acquire, so the loads below
   * see the previous owner's flip of device_out (it released the lock after it). */
  gpuio_fence_sc();

  /* A previous owner may have abandoned a request the host has not answered yet. */
  while (gpuio_ld_acquire_32(&port->host_out) != gpuio_ld_relaxed_32(&port->device_out)) {
    if (gpuio_impl_past(deadline)) {
      gpuio_mailbox_unlock(lock);
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_pause();
  }
  if (gpuio_ld_acquire_32(&ch->closing)) {
    gpuio_mailbox_unlock(lock);
    return -GPUIO_ESHUTDOWN;
  }
  gpuio_impl_slot_bind(ch, s, i);
  s->pos = 0;
  return 0;
}

/* Writes the request into the port and hands the port to the host. */
GPUIO_FN void gpuio_mailbox_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_mailbox_port *port = gpuio_mailbox_port_at(ch, s->index);
  port->req = *r;
  /* Only the lock holder writes device_out, so a relaxed read of it is its own
   * last write. The release orders the request (and the staging bytes) first. */
  gpuio_u32 flipped = gpuio_ld_relaxed_32(&port->device_out) ^ 1u;
  s->pos = flipped;
  gpuio_st_release_32(&port->device_out, flipped);
}

/* Waits for the host's answer: 0 and *result with the port still held, or
 * -ETIMEDOUT with the port abandoned (its lock released; the port itself stays
 * busy until the host answers, and the next owner waits for that). */
GPUIO_FN int gpuio_mailbox_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  gpuio_mailbox_port *port = gpuio_mailbox_port_at(ch, s->index);
  gpuio_u32 sent = (gpuio_u32)s->pos;
  gpuio_impl_backoff backoff = {0};
  while (gpuio_ld_acquire_32(&port->host_out) != sent) {
    if (gpuio_impl_past(deadline)) {
      gpuio_mailbox_unlock(gpuio_mailbox_lock_at(ch, s->index));
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_impl_backoff_pause(&backoff, 1024u);
  }
  /* The acquire above orders this read after the host's write of it. */
  *result = (gpuio_i64)gpuio_ld_relaxed_64((const gpuio_u64 *)&port->result);
  return 0;
}

/* Gives the port back (the host has answered; the staging chunk is free too). */
GPUIO_FN void gpuio_mailbox_release(const gpuio_channel *ch, gpuio_slot *s) {
  gpuio_mailbox_unlock(gpuio_mailbox_lock_at(ch, s->index));
}

#endif
