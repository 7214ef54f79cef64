// Reports every size and offset of gpuio/abi.h, in the order core/src/abi.rs's
// layout() lists them, so the abi_layout test can compare the two entry by entry.
#include <cstddef>
#include "gpuio.h"

#define S(t) sizeof(t)
#define O(t, f) offsetof(t, f)
static const unsigned long long layout[] = {
    S(gpuio_channel), O(gpuio_channel, magic), O(gpuio_channel, version), O(gpuio_channel, transport),
    O(gpuio_channel, flags), O(gpuio_channel, timeout_ns), O(gpuio_channel, staging), O(gpuio_channel, staging_host),
    O(gpuio_channel, staging_len), O(gpuio_channel, slot_size), O(gpuio_channel, slots), O(gpuio_channel, endpoints),
    O(gpuio_channel, endpoint_count), O(gpuio_channel, stdout_endpoint), O(gpuio_channel, scratch),
    O(gpuio_channel, scratch_len), O(gpuio_channel, closing), O(gpuio_channel, shared), O(gpuio_channel, direct), O(gpuio_channel, forward),
    O(gpuio_channel, mailbox), O(gpuio_channel, queues), O(gpuio_channel, queue_count), O(gpuio_channel, stats),
    S(gpuio_direct_ring), O(gpuio_direct_ring, sq_head), O(gpuio_direct_ring, sq_tail), O(gpuio_direct_ring, sq_flags),
    O(gpuio_direct_ring, sq_array), O(gpuio_direct_ring, sqes), O(gpuio_direct_ring, cq_head),
    O(gpuio_direct_ring, cq_tail), O(gpuio_direct_ring, cqes), O(gpuio_direct_ring, sq_mask),
    O(gpuio_direct_ring, cq_mask), O(gpuio_direct_ring, sq_entries), O(gpuio_direct_ring, cq_entries),
    O(gpuio_direct_ring, state), O(gpuio_direct_ring, slot_state), O(gpuio_direct_ring, fixed_buffer_host),
    S(gpuio_direct_state), O(gpuio_direct_state, reserve), O(gpuio_direct_state, sq_reserve), O(gpuio_direct_state, published),
    O(gpuio_direct_state, publish_lock), O(gpuio_direct_state, reap_lock),
    O(gpuio_direct_state, reaped), O(gpuio_direct_state, completed), O(gpuio_direct_state, failed),
    S(gpuio_direct_slot), O(gpuio_direct_slot, turn), O(gpuio_direct_slot, done), O(gpuio_direct_slot, sq_ready),
    O(gpuio_direct_slot, res),
    S(gpuio_forward_queue), O(gpuio_forward_queue, entries), O(gpuio_forward_queue, state),
    O(gpuio_forward_queue, slot_state),
    S(gpuio_forward_state), O(gpuio_forward_state, reserve),
    S(gpuio_turn), O(gpuio_turn, turn), O(gpuio_turn, holder), O(gpuio_turn, since), O(gpuio_turn, state),
    O(gpuio_turn, holder_thread),
    S(gpuio_request), O(gpuio_request, op), O(gpuio_request, endpoint), O(gpuio_request, len),
    O(gpuio_request, flags), O(gpuio_request, staging_off), O(gpuio_request, offset),
    S(gpuio_forward_entry), O(gpuio_forward_entry, stamp), O(gpuio_forward_entry, req), O(gpuio_forward_entry, result),
    S(gpuio_mailbox), O(gpuio_mailbox, ports), O(gpuio_mailbox, locks), O(gpuio_mailbox, port_count),
    S(gpuio_mailbox_port), O(gpuio_mailbox_port, device_out), O(gpuio_mailbox_port, host_out),
    O(gpuio_mailbox_port, req), O(gpuio_mailbox_port, result),
    S(gpuio_endpoint), O(gpuio_endpoint, kind), O(gpuio_endpoint, access), O(gpuio_endpoint, queue), O(gpuio_endpoint, log),
    S(gpuio_queue), O(gpuio_queue, direction), O(gpuio_queue, rings), O(gpuio_queue, cells), O(gpuio_queue, cell_size),
    O(gpuio_queue, max_message), O(gpuio_queue, cells_addr), O(gpuio_queue, control), O(gpuio_queue, ring_state),
    S(gpuio_queue_control), O(gpuio_queue_control, head), O(gpuio_queue_control, closed),
    S(gpuio_queue_ring), O(gpuio_queue_ring, tail), O(gpuio_queue_ring, cached_head), O(gpuio_queue_ring, polling), O(gpuio_queue_ring, seen),
    S(gpuio_cell_header), O(gpuio_cell_header, ready), O(gpuio_cell_header, len), O(gpuio_cell_header, count),
    S(gpuio_stats), O(gpuio_stats, submitted), O(gpuio_stats, completed), O(gpuio_stats, failed),
    O(gpuio_stats, timed_out),
    GPUIO_MAGIC, GPUIO_ABI_VERSION, GPUIO_TRANSPORT_DIRECT, GPUIO_TRANSPORT_FORWARD, GPUIO_TRANSPORT_MAILBOX,
    GPUIO_OP_NOP, GPUIO_OP_PWRITE, GPUIO_OP_PREAD, GPUIO_OP_WRITE, GPUIO_OP_READ,
    GPUIO_EP_FILE, GPUIO_EP_SOCKET, GPUIO_EP_PIPE, GPUIO_EP_HOST_QUEUE, GPUIO_QUEUE_TO_HOST, GPUIO_QUEUE_TO_DEVICE, GPUIO_QUEUE_SEEN_CLOSED,
    GPUIO_QUEUE_SEEN_SHUTDOWN,
    GPUIO_ACCESS_READ, GPUIO_ACCESS_WRITE,
    GPUIO_SLOT_FREE, GPUIO_SLOT_IN_FLIGHT, GPUIO_SLOT_DONE, GPUIO_SLOT_ABANDONED, GPUIO_SLOT_HELD_ASYNC,
    GPUIO_STAMP_FREE, GPUIO_STAMP_READY, GPUIO_STAMP_DONE,
};

extern "C" const unsigned long long *gpuio_abi_layout(unsigned long long *count) {
  *count = sizeof(layout) / sizeof(layout[0]);
  return layout;
}
