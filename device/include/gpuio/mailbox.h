/* gpuio/mailbox.h — device side of the mailbox transport (host side:
 * backend-rpc/src/mailbox/).
 *
 * Memory (see abi.h / abi.rs):
 *   shared        gpuio_mailbox_port ports[port_count]   device_out | host_out | req | result
 *   device-local  gpuio_u32 locks[port_count]            0 free, 1 held
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
 * giving every lane of a warp its own port (the host makes port_count a
 * multiple of 64 where slots allow) lets a warp's lanes work in parallel and
 * never makes one lane spin on a lock another lane of the same warp holds:
 * without independent thread scheduling (AMD wavefronts, pre-Volta NVIDIA)
 * such a spin only ends at the deadline. Threads t and t + port_count still
 * share a port, so a device-local lock serialises them; the lock is held from
 * acquire to release (or to a wait that timed out).
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

GPUIO_FN gpuio_mailbox_port *gpuio_mailbox_port_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_mailbox_port>(ch->mailbox.ports) + i;
}

GPUIO_FN gpuio_u32 *gpuio_mailbox_lock_at(const gpuio_channel *ch, gpuio_u32 i) {
  return gpuio_ptr<gpuio_u32>(ch->mailbox.locks) + i;
}

GPUIO_FN void gpuio_mailbox_unlock(gpuio_u32 *lock) {
  /* Release: everything this owner did to the port (its request, its flip of
   * device_out) is visible to whoever takes the lock next. */
  gpuio_st_release_32(lock, 0);
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

  for (gpuio_u32 spins = 0; gpuio_cas_32(lock, 0u, 1u) != 0u; spins++) {
    if (gpuio_past(deadline)) return -GPUIO_ETIMEDOUT;
    /* A PCIe read, so only now and then: stop queueing once the channel closes. */
    if ((spins & 31u) == 31u && gpuio_ld_acquire_32(&ch->closing)) return -GPUIO_ESHUTDOWN;
    gpuio_pause();
  }
  /* The CAS is relaxed on CUDA: the fence makes it an acquire, so the loads below
   * see the previous owner's flip of device_out (it released the lock after it). */
  gpuio_fence_sc();

  /* A previous owner may have abandoned a request the host has not answered yet. */
  while (gpuio_ld_acquire_32(&port->host_out) != gpuio_ld_relaxed_32(&port->device_out)) {
    if (gpuio_past(deadline)) {
      gpuio_mailbox_unlock(lock);
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_pause();
  }
  if (gpuio_ld_acquire_32(&ch->closing)) {
    gpuio_mailbox_unlock(lock);
    return -GPUIO_ESHUTDOWN;
  }
  gpuio_slot_bind(ch, s, i);
  s->pos = 0;
  return 0;
}

/* Writes the request into the port and hands the port to the host. */
GPUIO_FN void gpuio_mailbox_submit(const gpuio_channel *ch, gpuio_slot *s, const gpuio_request *r) {
  gpuio_mailbox_port *port = gpuio_mailbox_port_at(ch, s->index);
  port->req.op = r->op;
  port->req.endpoint = r->endpoint;
  port->req.len = r->len;
  port->req.flags = r->flags;
  port->req.staging_off = r->staging_off;
  port->req.offset = r->offset;
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
  while (gpuio_ld_acquire_32(&port->host_out) != sent) {
    if (gpuio_past(deadline)) {
      gpuio_mailbox_unlock(gpuio_mailbox_lock_at(ch, s->index));
      return -GPUIO_ETIMEDOUT;
    }
    gpuio_pause();
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
