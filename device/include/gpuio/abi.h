/* gpuio/abi.h — the bytes host and device share.
 *
 * Mirror of core/src/abi.rs, which carries the full description of the layout
 * and of who owns what when. gpuio-device's build script generates one named
 * static_assert per size, alignment, offset and constant of abi.rs's layout()
 * (every field, padding included) and compiles them with this header, so a
 * mismatch fails the build and names the entry.
 *
 * Ownership, in one sentence per protocol (details in abi.rs):
 *  - request slot `pos % slots` and its staging chunk belong to one request from
 *    reservation until its result is consumed;
 *  - direct: a request holds slot pos%slots by turns (as forward), writes SQE
 *    pos%slots and takes its SQ position at submit; the publish-lock holder
 *    advances the SQ tail over consecutive written positions (release, system
 *    scope); the reap-lock holder copies CQEs into slot state and advances the CQ
 *    head (release, system scope);
 *  - forward: a request holds slot pos%slots (turns in device-local
 *    gpuio_forward_slot), hands its entry to the host with pos<<2|READY, the host
 *    answers with pos<<2|DONE (in any order), the device frees the slot;
 *  - mailbox: the device owns a port when device_out == host_out;
 *  - host queues: a sending warp reserves consecutive cells of its ring only while
 *    the (cached) host head leaves room, fills them and publishes the group with one
 *    release of its first cell's `stamp`; the host consumes groups in order and
 *    releases `head`. To the device: each ring has one host Sender, which fills
 *    cell p%cells when its free word says p and releases its stamp, then head; a
 *    reader takes credits and positions of a ring (device-local), copies the
 *    message out and frees the cell with frees[p%cells] = p + cells.
 */
#ifndef GPUIO_ABI_H
#define GPUIO_ABI_H

/* No <stdint.h>: NVRTC compiles this header with no include path at all. */
typedef unsigned char gpuio_u8;
typedef unsigned short gpuio_u16;
typedef unsigned int gpuio_u32;
typedef int gpuio_i32;
typedef unsigned long long gpuio_u64;
typedef long long gpuio_i64;

static_assert(sizeof(gpuio_u16) == 2, "u16");
static_assert(sizeof(gpuio_u32) == 4, "u32");
static_assert(sizeof(gpuio_u64) == 8, "u64");
static_assert(sizeof(void *) == 8, "gpuio needs 64-bit pointers");

#define GPUIO_MAGIC 0x4f495047u /* "GPIO" little-endian */
#define GPUIO_ABI_VERSION 14u

#define GPUIO_TRANSPORT_DIRECT 1u
#define GPUIO_TRANSPORT_FORWARD 2u
#define GPUIO_TRANSPORT_MAILBOX 3u

#define GPUIO_EP_FILE 1u
#define GPUIO_EP_SOCKET 2u
#define GPUIO_EP_PIPE 3u
#define GPUIO_EP_HOST_QUEUE 4u

#define GPUIO_ACCESS_READ 1u
#define GPUIO_ACCESS_WRITE 2u

/* Opcodes: base byte 'G', so host handlers of other families can chain. */
#define GPUIO_OP_BASE (((gpuio_u32)'G') << 24)
#define GPUIO_OP_NOP (GPUIO_OP_BASE | 0u)
#define GPUIO_OP_PWRITE (GPUIO_OP_BASE | 1u)
#define GPUIO_OP_PREAD (GPUIO_OP_BASE | 2u)
#define GPUIO_OP_WRITE (GPUIO_OP_BASE | 3u)
#define GPUIO_OP_READ (GPUIO_OP_BASE | 4u)
/* send(2) with MSG_NOSIGNAL / recv(2): connected sockets alone (-ENOTSOCK elsewhere). */
#define GPUIO_OP_SEND (GPUIO_OP_BASE | 5u)
#define GPUIO_OP_RECV (GPUIO_OP_BASE | 6u)

#define GPUIO_SLOT_FREE 0u
#define GPUIO_SLOT_IN_FLIGHT 1u
#define GPUIO_SLOT_DONE 2u
#define GPUIO_SLOT_ABANDONED 3u
#define GPUIO_SLOT_HELD_ASYNC 4u /* turns only: held by an asynchronous call */
/* A turn's word (gpuio_turn.word, abi.rs turn_word): the lap whose turn it is above
 * GPUIO_TURN_SHIFT bits, the slot's GPUIO_SLOT_* state below, so one compare-and-swap
 * both takes a FREE slot and hands the turn on. */
#define GPUIO_TURN_SHIFT 3u
#define GPUIO_TURN_STATE 7ull

#define GPUIO_STAMP_FREE 0ull
#define GPUIO_STAMP_READY 1ull
#define GPUIO_STAMP_DONE 2ull
#define GPUIO_STAMP_SHIFT 2u
/* A DONE stamp is the answer itself (abi.rs stamp::answer): DONE in the low bits, the
 * result as 32 bits above them, the position's low 30 bits on top - one read. */
#define GPUIO_ANSWER_TAG_SHIFT 34u
#define GPUIO_ANSWER_TAG_MASK 0x3fffffffull

typedef struct gpuio_direct_ring {
  gpuio_u64 sq_head, sq_tail, sq_flags, sq_array, sqes; /* device addresses */
  gpuio_u64 cq_head, cq_tail, cqes;
  gpuio_u32 sq_mask, cq_mask, sq_entries, cq_entries;
  gpuio_u64 state;      /* device-local gpuio_direct_state */
  gpuio_u64 slot_state; /* device-local gpuio_direct_slot[slots] */
  gpuio_u64 fixed_buffer_host;
  gpuio_u64 _pad;
} gpuio_direct_ring;

typedef struct alignas(64) gpuio_direct_state {
  gpuio_u64 reserve;    /* next request position (fetch-add): slots by turns */
  gpuio_u64 sq_reserve; /* next SQ position (fetch-add at submit) */
  gpuio_u64 published;  /* SQ positions below this are in the SQ tail */
  gpuio_u32 publish_lock;
  gpuio_u32 reap_lock;
  gpuio_u64 reaped;    /* CQEs consumed (full-width CQ head), reap-lock holder only */
  gpuio_u64 completed; /* completions res >= 0, reap-lock holder only */
  gpuio_u64 failed;    /* completions res < 0, reap-lock holder only */
  /* Marked writes in flight per bucket of files (endpoint % GPUIO_DIRECT_WRITE_GATES):
   * a submitter takes one below GPUIO_DIRECT_WRITE_DEPTH (gpuio/direct.h), the
   * reap-lock holder gives it back with the write's completion. */
  gpuio_u32 write_gates[32];
} gpuio_direct_state;
#define GPUIO_DIRECT_WRITE_GATES 32u

/* One request slot's turns, device-local (the slots of forward, mailbox, direct;
 * gpuio/api.h, abi.rs Turn). Zeroed: turn 0, FREE. */
typedef struct gpuio_turn {
  gpuio_u64 word;   /* lap << GPUIO_TURN_SHIFT | GPUIO_SLOT_*: whose turn it is, and the slot's state */
  gpuio_u64 holder; /* the lap holding the slot (unless FREE) */
  gpuio_u64 since;  /* gpuio_now_ns() when it was taken */
  gpuio_u32 holder_thread; /* low 32 bits of the holder's global thread id */
  gpuio_u32 _pad;
} gpuio_turn;

typedef struct gpuio_direct_slot {
  gpuio_turn turn;    /* whose turn, who holds it (gpuio/api.h, "turns") */
  gpuio_u64 done;     /* pos + 1 once the CQE of position pos is reaped into res */
  gpuio_u64 sq_ready; /* q + 1 once SQ position q (q % sq_entries == this slot) is written */
  gpuio_i32 res;      /* CQE res, valid once done == pos + 1 */
  gpuio_u32 gate;     /* 1 + the write gate the request in flight holds, or 0 */
  gpuio_u64 _pad2;
} gpuio_direct_slot;

typedef struct gpuio_forward_queue {
  gpuio_u64 entries;    /* shared gpuio_forward_entry[slots] */
  gpuio_u64 state;      /* device-local gpuio_forward_state[rings] */
  gpuio_u64 slot_state; /* device-local gpuio_forward_slot[slots] */
  gpuio_u32 rings;      /* ring r: slots r*slots/rings.., its own state; a forwarder serves it (0: 1) */
  gpuio_u32 write_group; /* rings per group whose workers take turns at a file (0, 1: none) */
} gpuio_forward_queue;

/* A positioned write longer than this goes to the ring group of its endpoint
 * (gpuio_forward_acquire), so one file's long writes queue in one group. */
#define GPUIO_FORWARD_ROUTE_MIN 65536u

typedef struct alignas(64) gpuio_forward_state {
  gpuio_u64 reserve;
  gpuio_u64 _pad;
} gpuio_forward_state;

typedef gpuio_turn gpuio_forward_slot; /* forward slots are bare turns */

typedef struct gpuio_request {
  gpuio_u32 op;
  gpuio_u32 endpoint;
  gpuio_u32 len;
  gpuio_u32 flags;
  gpuio_u64 staging_off;
  gpuio_i64 offset;
} gpuio_request;

/* A forward request's words (abi.rs, forward_words): bit 0 of each is
 * GPUIO_FORWARD_WORD_SET, its high half one 32-bit field or half of a 64-bit one;
 * words[0] holds op (31 bits) in bits 1..32 and flags on top (gpuio_forward_encode).
 * The host zeroes them when it answers, so it takes a request once every word it
 * reads is SET, in whatever order they crossed PCIe. */
#define GPUIO_FORWARD_WORDS 7u
#define GPUIO_FORWARD_WORD_SET 1ull
typedef struct alignas(64) gpuio_forward_entry {
  gpuio_u64 stamp; /* pos << 2 | GPUIO_STAMP_FREE / READY, or the answer (GPUIO_ANSWER_*) */
  gpuio_u64 words[GPUIO_FORWARD_WORDS]; /* the request (gpuio/forward.h, gpuio_forward_encode) */
} gpuio_forward_entry;

typedef struct gpuio_mailbox {
  gpuio_u64 ports; /* shared gpuio_mailbox_port[port_count] */
  gpuio_u64 locks; /* device-local gpuio_u32[port_count][GPUIO_MB_LOCK_WORDS] (mailbox.h) */
  gpuio_u32 port_count;
  gpuio_u32 _pad;
  gpuio_u64 _pad1;
} gpuio_mailbox;

typedef struct alignas(64) gpuio_mailbox_port {
  gpuio_u32 device_out; /* flipped by the device to send */
  gpuio_u32 _pad0[15];
  gpuio_u64 host_out; /* the host's answer: its flip (low 32 bits), the result (high 32) */
  gpuio_u32 _pad1[14];
  gpuio_request req;
} gpuio_mailbox_port;

typedef struct gpuio_endpoint {
  gpuio_u32 kind;   /* GPUIO_EP_* */
  gpuio_u32 access; /* GPUIO_ACCESS_* bits */
  gpuio_u32 queue;  /* GPUIO_EP_HOST_QUEUE: index in gpuio_channel.queues */
  gpuio_u32 log;    /* a printf log: its index in gpuio_channel.queues + 1; 0: none */
} gpuio_endpoint;

/* Host queues: framed messages between the kernel and the host program (the
 * protocol, who writes what and when: abi.rs, `Queue`; the calls: gpuio/queue.h). */
#define GPUIO_QUEUE_TO_HOST 1
#define GPUIO_QUEUE_TO_DEVICE 2
typedef struct alignas(64) gpuio_queue {
  gpuio_u32 direction; /* GPUIO_QUEUE_* */
  gpuio_u32 rings, cells, cell_size, max_message, _reserved;
  gpuio_u64 cells_addr; /* ring r's cells start at cells_addr + r * cells * cell_size (shared) */
  gpuio_u64 control;    /* gpuio_queue_control[rings] (shared, written by the host) */
  gpuio_u64 ring_state; /* gpuio_queue_ring[rings] (device-local) */
  gpuio_u64 frees;      /* to the device: u64 frees[rings * cells] (shared): ring r's frees[p % cells] = p + cells */
  gpuio_u64 _pad[1];
} gpuio_queue;
typedef struct alignas(64) gpuio_queue_control {
  gpuio_u64 head;   /* to the host: positions the host consumed */
  gpuio_u32 closed; /* to the device: the host's Sender closed */
  gpuio_u32 _pad[13];
} gpuio_queue_control;
typedef struct alignas(64) gpuio_queue_ring {
  gpuio_u64 tail;          /* reserved (to the host) / claimed (to the device) positions */
  gpuio_u64 _tail_line[7]; /* tail alone in its line: the others are read beside its atomics */
  gpuio_u64 cached_head;   /* the last host head read (by a sender / by the polling reader) */
  gpuio_u32 polling;       /* to the device: 1 while one reader polls the host for all */
  gpuio_u32 seen;          /* GPUIO_QUEUE_SEEN_* the polling thread found */
  gpuio_u64 polled_at;     /* to the host: when a sender last read the host's words (ns) */
  gpuio_u64 _pad[5];
} gpuio_queue_ring;
#define GPUIO_QUEUE_SEEN_CLOSED 1u
#define GPUIO_QUEUE_SEEN_SHUTDOWN 2u
/* A queue to the device: gpuio_queue_credits[rings] after its gpuio_queue_ring[rings]
 * (gpuio/queue.h, gpuio_impl_queue_credits). */
typedef struct alignas(64) gpuio_queue_credits {
  gpuio_i64 available; /* published positions not yet handed to a reader */
  gpuio_u64 _pad[7];
} gpuio_queue_credits;
/* A cell's first 8 bytes: one word, its stamp (abi.rs, `cell`):
 * (pos + 1) mod 2^32 | len << GPUIO_CELL_LEN_SHIFT | count << GPUIO_CELL_COUNT_SHIFT,
 * released once the cell holds position pos's message of len bytes (count: to the
 * host, the cells of the group it heads; 1 otherwise); 0 in a cell never written. */
typedef struct gpuio_cell_header {
  gpuio_u64 stamp;
} gpuio_cell_header;
#define GPUIO_CELL_TAG_MASK 0xffffffffull
#define GPUIO_CELL_LEN_SHIFT 32u
#define GPUIO_CELL_LEN_MASK 0x1fffffull
#define GPUIO_CELL_COUNT_SHIFT 53u

typedef struct alignas(64) gpuio_stats {
  gpuio_u64 submitted, completed, failed, timed_out;
  gpuio_u64 _pad[4]; /* reserved, zero: the rest of the line */
} gpuio_stats;

typedef struct alignas(64) gpuio_channel {
  /* The words every call reads first, in one 16-byte load (gpuio_impl_check_channel):
   * closing: read through the kernel's own copy (gpuio_impl_closing). */
  gpuio_u32 magic, version, transport, closing;
  gpuio_u64 timeout_ns;
  gpuio_u64 staging;      /* device address */
  gpuio_u64 staging_host; /* host address of the same bytes */
  gpuio_u64 staging_len;
  gpuio_u32 slot_size, slots;
  gpuio_u64 endpoints; /* device address of gpuio_endpoint[endpoint_count] */
  gpuio_u32 endpoint_count;
  gpuio_i32 stdout_endpoint;
  gpuio_u32 flags, _pad0; /* flags: reserved, zero */
  gpuio_direct_ring direct;
  gpuio_forward_queue forward; /* at 192: two 16-byte loads (gpuio_impl_call_load) */
  gpuio_u64 shared;            /* the shared descriptor: closing and stats live there; a
                                  kernel is given a device-local copy (abi.rs) */
  gpuio_mailbox mailbox;
  gpuio_u64 queues; /* device address of gpuio_queue[queue_count] */
  gpuio_u32 queue_count;
  gpuio_u32 _pad1[11]; /* reserved, zero: up to stats' line */
  gpuio_stats stats;
} gpuio_channel;

static_assert(sizeof(gpuio_request) == 32, "gpuio_request");
static_assert(sizeof(gpuio_forward_entry) == 64, "gpuio_forward_entry");
static_assert(sizeof(gpuio_mailbox_port) == 192, "gpuio_mailbox_port");
static_assert(sizeof(gpuio_endpoint) == 16, "gpuio_endpoint");
static_assert(sizeof(gpuio_direct_slot) == 64, "gpuio_direct_slot");
static_assert(sizeof(gpuio_turn) == 32, "gpuio_turn");
static_assert(sizeof(gpuio_direct_state) == 192, "gpuio_direct_state");
static_assert(sizeof(gpuio_direct_ring) == 112, "gpuio_direct_ring");
static_assert(sizeof(gpuio_channel) == 384, "gpuio_channel");
static_assert(sizeof(gpuio_queue) == 64, "gpuio_queue");
static_assert(sizeof(gpuio_queue_control) == 64, "gpuio_queue_control");
static_assert(sizeof(gpuio_queue_ring) == 128, "gpuio_queue_ring");
static_assert(sizeof(gpuio_cell_header) == 8, "gpuio_cell_header");

/* io_uring's own structs, as the kernel defines them (include/uapi/linux/io_uring.h). */
typedef struct gpuio_sqe {
  gpuio_u8 opcode, flags;
  gpuio_u16 ioprio;
  gpuio_i32 fd;
  gpuio_u64 off, addr;
  gpuio_u32 len, rw_flags;
  gpuio_u64 user_data;
  gpuio_u16 buf_index, personality;
  gpuio_i32 splice_fd_in;
  gpuio_u64 addr3, _pad2;
} gpuio_sqe;
typedef struct gpuio_cqe {
  gpuio_u64 user_data;
  gpuio_i32 res;
  gpuio_u32 flags;
} gpuio_cqe;
static_assert(sizeof(gpuio_sqe) == 64, "gpuio_sqe");
static_assert(sizeof(gpuio_cqe) == 16, "gpuio_cqe");

#define GPUIO_IORING_OP_NOP 0
#define GPUIO_IORING_OP_READ_FIXED 4
#define GPUIO_IORING_OP_WRITE_FIXED 5
#define GPUIO_IORING_OP_READ 22
#define GPUIO_IORING_OP_WRITE 23
#define GPUIO_IOSQE_FIXED_FILE 1u
#define GPUIO_IOSQE_ASYNC 16u
#define GPUIO_IORING_SQ_NEED_WAKEUP 1u

#endif /* GPUIO_ABI_H */
