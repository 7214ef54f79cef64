/* gpuio/mailbox.h - device side of the mailbox transport (host side:
 * backend-rpc/src/mailbox/).
 *
 * Memory (see abi.h / abi.rs):
 *   shared        gpuio_mailbox_port ports[port_count]       device_out | host_out | req
 *   device-local  gpuio_u32 locks[port_count + 1][GPUIO_MB_LOCK_WORDS]   (64 B each)
 *                 entry i < port_count: port i's gpuio_turn, then its last device_out
 *                 (word GPUIO_MB_SENT_WORD); entry port_count: the position counter
 *                 (a gpuio_u64)
 *
 * Protocol, in one sentence: the device owns port i when device_out == host_out.
 * The owner writes `req`, then flips device_out with a system-scope release store;
 * the host server acquires device_out, sees it differ from host_out, executes the
 * request and release-stores host_out = its flip (low 32 bits) with the result above
 * it (high 32: abi.rs mailbox_answer); the device acquires host_out, sees its flip
 * equal device_out again, and has the result from the same read. (Measured on an
 * H100, 2026-11-27: a separate result field read after the flip was a second read
 * across PCIe, ~1 us of every round trip.)
 * Each flag has one writer (device_out: the device, host_out: the host), so no
 * GPU<->host atomic read-modify-write is ever needed on mapped memory.
 *
 * Which port: ports are handed out by turns (gpuio/api.h, "turns"), as forward's
 * slots are: a call takes a position (one fetch-add per warp, the lanes of a warp on
 * consecutive ports) and waits for its turn on port pos % port_count. A request
 * whose waiter gave up leaves its port ABANDONED; the next turn owner takes it over
 * once the host has answered (device_out == host_out), so the late answer never
 * lands in someone else's request and the staging chunk is never reused early; a
 * port held or abandoned for longer than timeout / 4 (a read the host defers
 * because its pipe is empty) is passed over and the call queues again elsewhere.
 *
 * Port i owns staging chunk i, so port_count <= slots.
 *
 * (Until 2026-11-23 thread t used port t % port_count under a FIFO ticket lock; at
 * 132 x 1024 threads on an H100 that did 12.7k requests/s and the full-device case
 * timed out.)
 */
#ifndef GPUIO_MAILBOX_H
#define GPUIO_MAILBOX_H

/* Device-local u32s per entry of ch->mailbox.locks (the host allocates port_count + 1
 * entries): a gpuio_turn, padded to a cache line. abi.rs's MB_LOCK_WORDS, which the
 * host allocates by; the build asserts that the two agree. */
#define GPUIO_MB_LOCK_WORDS 16u

GPUIO_FN gpuio_mailbox_port *gpuio_mailbox_port_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_mailbox_port>(ch->mailbox.ports) + i;
}

GPUIO_FN gpuio_turn *gpuio_mailbox_turn_at(const gpuio_channel *ch, gpuio_u32 i) {
  return (gpuio_turn *)(gpuio_ptr<gpuio_u32>(ch->mailbox.locks) + (gpuio_u64)i * GPUIO_MB_LOCK_WORDS);
}

/* Port i's last `device_out`, mirrored in device-local memory after its gpuio_turn
 * (word GPUIO_MB_SENT_WORD of its entry; zeroed like the port): the flip reads this
 * instead of the shared word, which was a read across PCIe on every request (1.2 us
 * of an H100's NOP, measured). Like device_out, only the port's holder writes it, and
 * the turn's release and acquire hand it from holder to holder. */
#define GPUIO_MB_SENT_WORD 8u
static_assert(sizeof(gpuio_turn) <= GPUIO_MB_SENT_WORD * sizeof(gpuio_u32), "the mirror is past the turn");
static_assert(GPUIO_MB_SENT_WORD < GPUIO_MB_LOCK_WORDS, "the mirror is inside the entry");
GPUIO_FN gpuio_u32 *gpuio_mailbox_sent_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_u32>(ch->mailbox.locks) + (gpuio_u64)i * GPUIO_MB_LOCK_WORDS + GPUIO_MB_SENT_WORD;
}

/* The host's flip in its answer word `host_out` (the result rides above it: abi.rs
 * mailbox_answer). */
GPUIO_FN gpuio_u32 gpuio_mailbox_flip(gpuio_u64 answer) { return (gpuio_u32)answer; }

/* An abandoned port may be taken over once the host answered what is in it. */
struct gpuio_mailbox_reclaim {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_u32 index, gpuio_u64) const {
    gpuio_mailbox_port *port = gpuio_mailbox_port_at(ch, index);
    return gpuio_mailbox_flip(gpuio_ld_acquire_64(&port->host_out)) == gpuio_ld_relaxed_32(&port->device_out);
  }
  GPUIO_METHOD void nudge() const {} /* the host answers by itself */
};

/* Takes a port by its turn: 0, -ETIMEDOUT, -ESHUTDOWN (the channel began closing
 * while we waited) or -EPROTO (no ports). */
GPUIO_FN int gpuio_mailbox_acquire(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline) {
  const gpuio_u32 n = ch->mailbox.port_count;
  if (n == 0 || n > ch->slots) return -GPUIO_EPROTO;
  const gpuio_impl_turns tt = {gpuio_mailbox_turn_at(ch, 0), GPUIO_MB_LOCK_WORDS * 4u,
                               (gpuio_u64 *)gpuio_mailbox_turn_at(ch, n), 0u, n, 1u};
  const gpuio_mailbox_reclaim reclaim = {ch};
  const int e = gpuio_impl_turn_acquire(ch, &tt, 0u, s, deadline, reclaim);
  if (e) return e;
  gpuio_impl_slot_stage(s, ch->staging, ch->slot_size);
  s->shared = (char *)gpuio_mailbox_port_at(ch, s->index);
  return 0;
}

/* Writes the request into the port and hands the port to the host. */
GPUIO_FN void gpuio_mailbox_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_mailbox_port *port = (gpuio_mailbox_port *)s->shared;
  port->req = *r;
  /* Only the port's holder writes device_out (and its mirror), so the mirror holds
   * its own side's last write. The release orders the request (and the staging
   * bytes) first. */
  gpuio_u32 *sent = gpuio_mailbox_sent_at(ch, s->index);
  const gpuio_u32 flipped = gpuio_ld_relaxed_32(sent) ^ 1u;
  gpuio_st_relaxed_32(sent, flipped);
  s->pos = flipped; /* the turn is no longer needed: pos now names what we sent */
  gpuio_st_release_32(&port->device_out, flipped);
}

/* Whether the host answered (no waiting): 1 with *result, else 0. */
GPUIO_FN int gpuio_mailbox_poll(const gpuio_channel *ch, gpuio_slot *s, gpuio_i64 *result) {
  (void)ch;
  const gpuio_mailbox_port *port = (const gpuio_mailbox_port *)s->shared;
  const gpuio_u64 answer = gpuio_ld_acquire_64(&port->host_out);
  if (gpuio_mailbox_flip(answer) != (gpuio_u32)s->pos) return 0;
  *result = (gpuio_i64)(gpuio_i32)(gpuio_u32)(answer >> 32);
  return 1;
}

struct gpuio_mailbox_answered {
  const gpuio_channel *ch;
  GPUIO_METHOD bool operator()(gpuio_slot *s, gpuio_i64 *result) const { return gpuio_mailbox_poll(ch, s, result); }
};
/* Waits for the host's answer: 0 and *result with the port still held, or
 * -ETIMEDOUT with the port abandoned (the next turn owner takes it over once the
 * host answers). The lanes of a warp wait together. */
GPUIO_FN int gpuio_mailbox_wait(const gpuio_channel *ch, gpuio_slot *s, gpuio_u64 deadline, gpuio_i64 *result) {
  const gpuio_mailbox_answered answered = {ch};
  return gpuio_impl_wait_answer(s, deadline, GPUIO_WAIT_SHARED_NS, result, answered);
}

#endif
