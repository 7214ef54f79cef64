//! The bytes host and device share. `device/include/gpuio/abi.h` describes the
//! same bytes in C; `gpuio-device`'s build script turns [`layout()`] into one named
//! `static_assert` per size, alignment, offset and constant and compiles them with
//! that header, so the two cannot drift apart without the build failing.
//!
//! # Layout, as one equivalent struct
//!
//! ```text
//! shared (host-visible, device-mapped; never write-combined — the host polls it):
//!   Channel            descriptor                      (this file, 384 B)
//!   Endpoint           endpoints[endpoint_count]       (16 B each)
//!   u8                 staging[staging_len]            = slots × slot_size, then the
//!                                                        kernel's own zero-copy area
//!   transport rings    io_uring SQ/CQ/SQEs (direct), ForwardEntry[slots] (forward),
//!                      MailboxPort[port_count] (mailbox)
//! device-local (device memory on a GPU: only the device's own atomics touch it):
//!   DirectState + DirectSlot[slots]  |  ForwardState + ForwardSlot[slots]  |  u32 locks[port_count][1040]
//! ```
//!
//! # Ownership in one sentence per protocol
//!
//! * **Request slots.** A request holds slot `pos % slots` from reservation until its
//!   result is consumed; the slot's staging chunk (`slot * slot_size ..+ slot_size`)
//!   belongs to that request alone for the same span.
//! * **Direct.** A request takes position `pos` (device fetch-add) and slot
//!   `pos % slots` by turns, as on forward (a stuck slot is passed over), in the
//!   slot's device-local [`DirectSlot::turn`]. Holding it, it writes SQE
//!   `pos % slots` (`user_data = pos`), takes the next SQ position `q` (device
//!   fetch-add at submit), writes `sq_array[q % sq_entries]` and stamps
//!   `DirectSlot[q % sq_entries].sq_ready = q + 1`; whoever holds the publish lock
//!   advances the SQ tail over consecutive stamped positions with a system-scope
//!   release store; the kernel's SQPOLL thread consumes. A reaper (try-lock) copies
//!   each CQE's `res` into `DirectSlot[user_data % slots]`, releases its
//!   `done = pos + 1`, and advances the CQ head with a release store. A waiter that
//!   times out marks its slot ABANDONED; the next turn owner takes it over once its
//!   `done` is there.
//! * **Forward.** A request takes position `pos` (device fetch-add) and slot
//!   `pos % slots`, whose device-local [`ForwardSlot`] says whose turn it is and who
//!   holds it; once it holds the slot it writes entry `pos % slots` and stamps
//!   `stamp = pos·4 + READY` (released, but relaxed for a NOP; the request's words
//!   are marked written: [`forward_words`]); the host forwarder takes READY entries
//!   whose words are all there, in any order, validates, submits to its own
//!   io_uring, zeroes the words and releases the answer as the stamp itself,
//!   [`stamp::answer`]`(pos, result)` (DONE, the result and the position's low 30
//!   bits in one word); the device acquires that word, the result with it, and frees
//!   the slot. The host writes only answers (and the zeroed words); the device only
//!   requests and READY stamps.
//! * **Mailbox.** The device owns a port when `device_out == host_out` (its low 32
//!   bits): it writes the packet and flips `device_out` (release); the host acquires,
//!   executes, and release-stores `host_out` = its flip with the result above it
//!   ([`mailbox_answer`]); the device acquires that word, result and all.
//!
//! Every publish is a release store at system scope (but a forward NOP's:
//! [`forward_words`]) and every observe an acquire load
//! at system scope (`st.release.sys` / `ld.acquire.sys` on CUDA, `__hip_atomic_*` with
//! system scope on HIP, `__atomic_*` on the host).

/// `Channel::magic`: "GPIO" read as a little-endian `u32`.
pub const MAGIC: u32 = u32::from_le_bytes(*b"GPIO");
/// Bumped whenever any struct in this file changes, or what a request may say
/// (6: the socket opcodes [`op::SEND`] and [`op::RECV`]; `QueueRing::polled_at`;
/// 7: a queue to the device hands positions out by [`QueueCredits`], not claim
/// funnels, and its readers free cells in [`Queue::frees`], not in the cells;
/// 8: a queue to the device has `rings` rings, one host `Sender` each, with their
/// credits and free words side by side; the device reads `closing` from its own
/// copy of the descriptor; 9: [`QueueRing::tail`] has a line of its own; 12: a
/// cell's header is one 8-byte stamp, [`CellHeader`]; 13: a forward entry holds its
/// request as marked words, [`forward_words`]; 14: [`Channel::closing`] beside the
/// magic, [`Channel::forward`] 16-byte aligned, so a call's checks and forward's
/// take read their words in five 16-byte loads).
pub const ABI_VERSION: u32 = 14;

/// How requests travel. `Channel::transport`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportKind {
    /// The device writes io_uring SQEs itself; SQPOLL consumes them.
    Direct = 1,
    /// The device enqueues compact requests; a host forwarder feeds an io_uring.
    Forward = 2,
    /// One mailbox port per warp; a host server thread does plain syscalls.
    Mailbox = 3,
}

impl TransportKind {
    pub const ALL: [TransportKind; 3] = [Self::Direct, Self::Forward, Self::Mailbox];

    pub fn name(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Forward => "forward",
            Self::Mailbox => "mailbox",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an endpoint is. `Endpoint::kind`.
pub mod endpoint_kind {
    /// A regular file: positioned reads and writes.
    pub const FILE: u32 = 1;
    /// A connected socket: `send`/`recv`.
    pub const SOCKET: u32 = 2;
    /// A pipe, tty or any other stream fd (stdout): unpositioned reads and writes.
    pub const PIPE: u32 = 3;
    /// A message stream that ends in the host program itself.
    pub const HOST_QUEUE: u32 = 4;
}

/// What a kernel may do with an endpoint. `Endpoint::access` bits.
pub mod access {
    pub const READ: u32 = 1;
    pub const WRITE: u32 = 2;
}

/// Request opcodes. The top byte is gpuio's base byte (`'G'`), so host handlers for
/// other families can chain: a handler answers "unhandled" to opcodes not its own.
pub mod op {
    pub const BASE: u32 = (b'G' as u32) << 24;
    /// Does nothing; completes with 0.
    pub const NOP: u32 = BASE;
    /// `pwrite(endpoint, staging[staging_off..+len], offset)`.
    pub const PWRITE: u32 = BASE | 1;
    /// `pread(endpoint, staging[staging_off..+len], offset)`.
    pub const PREAD: u32 = BASE | 2;
    /// `write(endpoint, staging[staging_off..+len])`: streams, at the current position.
    pub const WRITE: u32 = BASE | 3;
    /// `read(endpoint, staging[staging_off..+len])`: streams.
    pub const READ: u32 = BASE | 4;
    /// `send(endpoint, staging[staging_off..+len], MSG_NOSIGNAL)`: a connected
    /// socket alone (`-ENOTSOCK` on any other endpoint). A peer that closed gives
    /// `-EPIPE`, never `SIGPIPE` to the host.
    pub const SEND: u32 = BASE | 5;
    /// `recv(endpoint, staging[staging_off..+len], 0)`: a connected socket alone
    /// (`-ENOTSOCK` elsewhere); 0 once the peer shut down its side.
    pub const RECV: u32 = BASE | 6;

    pub fn name(op: u32) -> &'static str {
        match op {
            NOP => "nop",
            PWRITE => "pwrite",
            PREAD => "pread",
            WRITE => "write",
            READ => "read",
            SEND => "send",
            RECV => "recv",
            _ => "unknown",
        }
    }
}

/// The descriptor a kernel receives (by device pointer). Lives in shared memory.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Channel {
    /// [`MAGIC`]; the header refuses a descriptor without it (`-EINVAL`).
    pub magic: u32,
    /// [`ABI_VERSION`]; the header refuses any other (`-EPROTO`).
    pub version: u32,
    /// A [`TransportKind`] as `u32`; the header dispatches on it at run time.
    pub transport: u32,
    /// Set to 1 by the host when `close()` begins: in the shared descriptor
    /// (release), then in the kernel's device-local copy (`LocalMemory::store_u32`,
    /// a copy that waits for no kernel). New device calls then fail with
    /// `-ESHUTDOWN` and are never submitted. The device reads its own copy: a call
    /// checks it without crossing PCIe (on an H100 the shared word's read was 1.4 of
    /// a NOP's 9.9 µs), and so does the direct transport's close handshake
    /// (`crate::direct`).
    pub closing: u32,
    /// Longest a single device call waits, in nanoseconds, before `-ETIMEDOUT`.
    pub timeout_ns: u64,
    /// Device address of the staging area.
    pub staging: u64,
    /// Host address of the same bytes: what io_uring and syscalls are given.
    pub staging_host: u64,
    /// Bytes in the staging area: `slots * slot_size` plus the kernel's own area.
    pub staging_len: u64,
    /// Staging bytes owned by each request slot.
    pub slot_size: u32,
    /// Request slots (a power of two): requests that may be in flight at once.
    pub slots: u32,
    /// Device address of `Endpoint[endpoint_count]`.
    pub endpoints: u64,
    pub endpoint_count: u32,
    /// Endpoint `gpuio_printf` writes to; -1 when the host registered none.
    pub stdout_endpoint: i32,
    /// Reserved, zero.
    pub flags: u32,
    pub _pad0: u32,
    pub direct: DirectRing,
    /// At offset 192, 16-byte aligned: the take reads it in two 16-byte loads.
    pub forward: ForwardQueue,
    /// Device address of the shared descriptor, where `stats` live (and the host's
    /// `closing`). A kernel is given a copy of the descriptor (and of the endpoint
    /// table) in device-local memory, so the fields it reads on every call cost no
    /// PCIe round trip; only `stats` is reached through this pointer.
    /// In the shared descriptor it points to itself.
    pub shared: u64,
    pub mailbox: Mailbox,
    /// Device address of `Queue[queue_count]`: the host queues' rings (see [`Queue`]).
    /// A host-queue endpoint names its entry by `Endpoint::queue`.
    pub queues: u64,
    pub queue_count: u32,
    /// Reserved, zero: fills the line up to `stats`. Spelled out (here and in the
    /// header) so that the descriptor has no padding and can be written as bytes
    /// (`bytemuck::Pod`); a field added above takes its bytes from here.
    pub _pad1: [u32; 11],
    /// Counters the device keeps: all four on the direct transport; on forward and
    /// mailbox only `timed_out` (the host counts their requests itself). On its own
    /// cache line.
    pub stats: Stats,
}

/// Where the direct transport's io_uring lives. Device addresses of the kernel's
/// ring fields (all `u32`), SQE array and CQE array, laid out by `io_uring_setup`
/// with `IORING_SETUP_NO_MMAP` inside shared memory.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DirectRing {
    pub sq_head: u64,
    pub sq_tail: u64,
    pub sq_flags: u64,
    pub sq_array: u64,
    pub sqes: u64,
    pub cq_head: u64,
    pub cq_tail: u64,
    pub cqes: u64,
    pub sq_mask: u32,
    pub cq_mask: u32,
    pub sq_entries: u32,
    pub cq_entries: u32,
    /// Device-local [`DirectState`].
    pub state: u64,
    /// Device-local `DirectSlot[Channel::slots]`.
    pub slot_state: u64,
    /// Host address of the staging area as registered fixed buffer 0.
    pub fixed_buffer_host: u64,
    pub _pad: u64,
}

/// Device-local state of the direct transport. Touched only by device atomics.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct DirectState {
    /// Next request position (fetch-add): request slots by turns.
    pub reserve: u64,
    /// Next SQ position (fetch-add at submit, once the slot is held).
    pub sq_reserve: u64,
    /// SQ positions below this are published to the SQ tail.
    pub published: u64,
    /// Held while advancing the SQ tail (0 free, 1 held).
    pub publish_lock: u32,
    /// Held while draining the CQ (0 free, 1 held).
    pub reap_lock: u32,
    /// CQEs consumed so far (the CQ head, full width). The reap-lock holder reads and
    /// advances it here and only stores the result to the kernel's CQ head: no device
    /// thread reads back a ring word another thread wrote to host memory.
    pub reaped: u64,
    /// Completions with `res >= 0` / `res < 0` so far (reap-lock holder). Copied into
    /// `Channel::stats` by plain stores.
    pub completed: u64,
    pub failed: u64,
    /// Marked writes in flight per bucket of files (`endpoint % 32`): a submitter
    /// takes one while fewer than the header's `GPUIO_DIRECT_WRITE_DEPTH` are, the
    /// reap-lock holder gives it back with the write's completion, so that one file's
    /// large writes do not queue on its lock in many io-wq workers at once.
    pub write_gates: [u32; 32],
}

/// Per-slot state of the direct transport (device-local). Zeroed memory is "turn 0,
/// FREE, nothing answered, nothing stamped".
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DirectSlot {
    /// Whose turn it is to take the slot and who holds it (`gpuio/api.h`, turns).
    pub turn: Turn,
    /// `pos + 1` once the CQE of position `pos` (held in this slot) was reaped and
    /// its `res` stored (release, by the reap-lock holder).
    pub done: u64,
    /// `q + 1` once SQ position `q` (with `q % sq_entries` == this slot's index) has
    /// its SQE and `sq_array` entry written and may be published.
    pub sq_ready: u64,
    /// The CQE's `res`, valid once `done == pos + 1`.
    pub res: i32,
    /// 1 + the write gate ([`DirectState::write_gates`]) the request in flight
    /// holds, or 0.
    pub gate: u32,
    pub _pad2: u64,
}

/// The slot states a [`Turn`]'s word holds (device-local).
pub mod slot_state {
    pub const FREE: u32 = 0;
    pub const IN_FLIGHT: u32 = 1;
    pub const DONE: u32 = 2;
    /// The waiter timed out; whoever sees the completion frees the slot.
    pub const ABANDONED: u32 = 3;
    /// (Turns only.) Held by an asynchronous call, which may keep it for as long
    /// as its caller likes: turn owners pass over it at once.
    pub const HELD_ASYNC: u32 = 4;
}

/// The forward transport's request queue.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ForwardQueue {
    /// Shared `ForwardEntry[Channel::slots]`.
    pub entries: u64,
    /// Device-local [`ForwardState`]`[rings]`.
    pub state: u64,
    /// Device-local [`ForwardSlot`]`[Channel::slots]`: whose turn it is on each
    /// slot and who holds it (see `gpuio/forward.h`).
    pub slot_state: u64,
    /// Rings the slots are split into (0 is read as 1): ring `r` owns slots
    /// `r·slots/rings ..` `(r+1)·slots/rings`, takes positions from its own
    /// `ForwardState`, and a forwarder thread serves it (its own, unless
    /// `ForwardBuilder::forwarders` asks for fewer threads than rings); a warp uses ring
    /// `warp % rings` (a long pwrite its file's group: [`Self::write_group`]). A
    /// power of two no larger than the slots.
    pub rings: u32,
    /// Consecutive rings whose forwarders' io-wq workers take turns at a file
    /// (`ForwardBuilder::wq_share`), a power of two dividing `rings`; 0 or 1: none.
    /// Where there are several such groups, a positioned write longer than
    /// [`FORWARD_ROUTE_MIN`] goes to group `endpoint % (rings / write_group)` (its
    /// ring there by warp), so that one file's long writes queue for one group's
    /// turns instead of every group's workers queueing on the file's lock.
    pub write_group: u32,
}

/// See [`ForwardQueue::write_group`]: writes of more than this many bytes are
/// routed by endpoint (the forwarder writes up to 64 KiB itself, unrouted).
pub const FORWARD_ROUTE_MIN: u32 = 64 << 10;

/// `ForwardEntry::stamp`: `pos << 2 | FREE` or `pos << 2 | READY` (the position is
/// `stamp >> 2`), or an answer ([`stamp::answer`]): DONE in the low bits, the result above
/// them and the position's low 30 bits on top, so that the device reads the answer
/// and its result in one read across PCIe (a second read of a separate `result`
/// field was a microsecond of every forward request's round trip on an H100).
pub mod stamp {
    pub const FREE: u64 = 0;
    pub const READY: u64 = 1;
    pub const DONE: u64 = 2;
    pub const SHIFT: u32 = 2;
    /// Where an answer keeps the position's low bits.
    pub const ANSWER_TAG_SHIFT: u32 = 34;
    /// The position bits an answer keeps. Enough: once a request stamped READY for
    /// `pos`, the only answer its entry holds before the slot is taken again is the
    /// one for `pos` (the host answers each READY once; an abandoned slot is taken
    /// over only once answered), so the tag only has to tell that answer from the
    /// READY stamp and from answers of earlier laps, which differ in the low bits.
    pub const ANSWER_TAG_MASK: u64 = (1 << 30) - 1;

    /// The stamp that answers position `pos` with `result` (`>= 0`, or `-errno`).
    pub fn answer(pos: u64, result: i32) -> u64 {
        ((pos & ANSWER_TAG_MASK) << ANSWER_TAG_SHIFT) | (u64::from(result as u32) << SHIFT) | DONE
    }

    /// The result in `stamp`, if it is the answer to `pos`.
    pub fn answered(stamp: u64, pos: u64) -> Option<i32> {
        (stamp & 3 == DONE && stamp >> ANSWER_TAG_SHIFT == pos & ANSWER_TAG_MASK)
            .then_some((stamp >> SHIFT) as u32 as i32)
    }
}

/// Device-local state of one ring of the forward transport.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ForwardState {
    /// Next request position (fetch-add).
    pub reserve: u64,
    pub _pad: u64,
}

/// One request slot's turns (device-local; the slots of forward, mailbox and direct). Zeroed memory is
/// "turn 0, FREE": slot `i` is free for position `i`. Lap `L` of slot `i` is
/// position `L·slots + i`. See `gpuio/api.h` (gpuio_impl_turn_*).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Turn {
    /// The lap whose turn it is to take the slot, and the slot's [`slot_state`]:
    /// [`turn_word::word`]. The turn is changed only by its owner (when it takes the
    /// slot or passes the turn on); the state FREE/ABANDONED → IN_FLIGHT only by the
    /// turn owner, IN_FLIGHT → FREE/ABANDONED/HELD_ASYNC only by the holder; each
    /// by an atomic operation that leaves the other half as it is. A take is one
    /// compare-and-swap from (L, FREE) to (L, IN_FLIGHT); the taker then writes the
    /// fields below and hands the turn on with an atomic add.
    pub word: u64,
    /// The lap holding the slot (valid unless the state is FREE).
    pub holder: u64,
    /// `gpuio_now_ns()` when the holder took the slot: a turn owner passes over a
    /// slot held longer than a quarter of the channel's timeout.
    pub since: u64,
    /// Low 32 bits of the global thread id of the holder: a thread whose next
    /// position lands on a slot it holds itself (an asynchronous call still in
    /// flight) passes its turn on at once instead of waiting for itself.
    pub holder_thread: u32,
    pub _pad: u32,
}

/// [`Turn::word`]: the lap whose turn it is above [`turn_word::SHIFT`] bits, the
/// slot's [`slot_state`] below (`gpuio_impl_turn_word` in `gpuio/api.h`).
pub mod turn_word {
    /// Bits below the lap.
    pub const SHIFT: u32 = 3;
    /// The state's bits.
    pub const STATE: u64 = (1 << SHIFT) - 1;

    /// The word of `lap`'s turn with the slot in `state`.
    pub const fn word(lap: u64, state: u32) -> u64 {
        lap << SHIFT | state as u64
    }
    /// The lap whose turn it is.
    pub const fn lap(word: u64) -> u64 {
        word >> SHIFT
    }
    /// The slot's state.
    pub const fn state(word: u64) -> u32 {
        (word & STATE) as u32
    }
}

/// The forward transport's slots are bare turns.
pub type ForwardSlot = Turn;

/// A request as the host sees it, before it validates anything.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// One of [`op`].
    pub op: u32,
    /// Index into the endpoint table.
    pub endpoint: u32,
    /// Bytes to move.
    pub len: u32,
    /// Reserved, zero.
    pub flags: u32,
    /// Where the bytes sit in the staging area.
    pub staging_off: u64,
    /// File offset for positioned ops; ignored by stream ops.
    pub offset: i64,
}

/// One forward-queue entry (shared, one cache line).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ForwardEntry {
    /// `pos << 2 | stamp::{FREE, READY}`, or the answer ([`stamp::answer`]); see
    /// the module doc for who writes what.
    pub stamp: u64,
    /// The request, in [`forward_words`]: each word marked as written, so that the
    /// host takes a request whose words it has all seen, whatever order they came in.
    pub words: [u64; forward_words::COUNT],
}

/// A forward request's words ([`ForwardEntry::words`]). Each word carries
/// [`forward_words::SET`] in bit 0 and one 32-bit field (or half of a 64-bit one) in
/// its high half; `words[0]` carries `op` (31 bits: every op is smaller) in bits
/// 1..32 and `flags` on top. The host zeroes the words when it answers
/// (`forward::queue::Entry::answer`, before the release of the answer), so a word
/// with SET was written for the request the entry's READY stamp names: the device
/// writes the next request only after it acquired that answer.
///
/// Why: a NOP, which touches no staging chunk, is stamped READY relaxed, so that the
/// stamp need not wait for the words to cross PCIe first (a release of READY after
/// the words did, ~0.5 us of every round trip: H100, runs 199-200, 2026-12-07); the
/// host takes a request once every word is there. Every other request's READY is
/// released, which orders what its chunk holds (`gpuio/forward.h` has the figures).
pub mod forward_words {
    use super::Request;

    /// Words after the stamp: the rest of the entry's cache line.
    pub const COUNT: usize = 7;
    /// Bit 0 of every word of a request that was written.
    pub const SET: u64 = 1;

    /// `r` as the device writes it.
    pub fn encode(r: &Request) -> [u64; COUNT] {
        let hi = |v: u32| SET | (u64::from(v) << 32);
        let staging_off = r.staging_off;
        let offset = r.offset as u64;
        [
            SET | (u64::from(r.op & 0x7fff_ffff) << 1) | (u64::from(r.flags) << 32),
            hi(r.endpoint),
            hi(r.len),
            hi(staging_off as u32),
            hi((staging_off >> 32) as u32),
            hi(offset as u32),
            hi((offset >> 32) as u32),
        ]
    }

    /// The request in `w`, once every word is written (else `None`: some are still
    /// on their way, or were never written).
    pub fn decode(w: &[u64; COUNT]) -> Option<Request> {
        if w.iter().any(|&x| x & SET == 0) {
            return None;
        }
        let hi = |x: u64| (x >> 32) as u32;
        let wide = |lo: u64, high: u64| u64::from(hi(lo)) | (u64::from(hi(high)) << 32);
        Some(Request {
            op: ((w[0] >> 1) as u32) & 0x7fff_ffff,
            flags: hi(w[0]),
            endpoint: hi(w[1]),
            len: hi(w[2]),
            staging_off: wide(w[3], w[4]),
            offset: wide(w[5], w[6]) as i64,
        })
    }
}

/// The mailbox transport's ports.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Mailbox {
    /// Shared `MailboxPort[port_count]`.
    pub ports: u64,
    /// Device-local lock state, `u32[port_count][GPUIO_MB_LOCK_WORDS]` (threads that
    /// share a port queue on it; gpuio/mailbox.h describes the words).
    pub locks: u64,
    pub port_count: u32,
    pub _pad: u32,
    pub _pad1: u64,
}

/// Device-local `u32`s per entry of the mailbox's lock area (`Mailbox::locks`,
/// `GPUIO_MB_LOCK_WORDS` in `gpuio/mailbox.h`): a port's [`Turn`], padded to 64 bytes.
/// The area holds `port_count + 1` entries: one per port, then the position counter.
pub const MB_LOCK_WORDS: u32 = 16;

/// One mailbox port (shared). The two flags sit on their own cache lines so the
/// device's and the host's writes never share a line.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct MailboxPort {
    /// Flipped by the device to send a request.
    pub device_out: u32,
    pub _pad0: [u32; 15],
    /// The host's answer ([`mailbox_answer`]): its flip in the low 32 bits (equal to
    /// `device_out` again once answered), the result (`>= 0` or `-errno`) in the
    /// high 32, so that the device reads both in one read across PCIe.
    pub host_out: u64,
    pub _pad1: [u32; 14],
    pub req: Request,
}

/// [`MailboxPort::host_out`]: the host's flip and the result in one word. (A second
/// read of a separate result field after the flip was ~1 us of every mailbox round
/// trip on an H100, measured 2026-11-27.) Results fit 32 bits: Linux moves at most
/// 0x7ffff000 bytes in one read or write.
pub mod mailbox_answer {
    /// The word that answers the request sent with flip `flip`.
    pub fn word(flip: u32, result: i32) -> u64 {
        (u64::from(result as u32) << 32) | u64::from(flip)
    }
    /// The flip in `word`.
    pub fn flip(word: u64) -> u32 {
        word as u32
    }
    /// The result in `word`.
    pub fn result(word: u64) -> i32 {
        (word >> 32) as u32 as i32
    }
}

/// One registered endpoint as the device sees it. The fd stays on the host.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Endpoint {
    /// One of [`endpoint_kind`].
    pub kind: u32,
    /// [`access`] bits.
    pub access: u32,
    /// For a host queue: its index in `Channel::queues`. Zero otherwise.
    pub queue: u32,
    /// For a stream or file the host gave a printf log: its queue's index in
    /// `Channel::queues`, plus one (0: no log). `gpuio_printf`/`gpuio_fprintf` on this
    /// endpoint then send whole lines to that queue (to the host), which a host thread
    /// writes to the endpoint's descriptor; without a log each call is one request.
    pub log: u32,
}

/// [`Queue::direction`] values.
pub mod queue_direction {
    /// The device sends, the host program receives (`gpuio_send` → `Receiver`).
    pub const TO_HOST: u32 = 1;
    /// The host program sends, the device receives (`Sender` → `gpuio_recv`).
    pub const TO_DEVICE: u32 = 2;
}

/// One host queue: framed messages between the kernel and the host program, with no
/// syscall and no request round trip. A queue has `rings` rings of `cells` cells of
/// `cell_size` bytes each; a message takes one cell: a [`CellHeader`], then the
/// message's bytes (at most `max_message`).
///
/// Positions count cells forever (`u64`); cell `p % cells` of a ring holds position
/// `p`. A cell's header says which position it holds, so a stale cell from an earlier
/// lap is never mistaken for a new one.
///
/// **To the host** (`gpuio_send`): a thread sends on ring `warp % rings`, so one
/// thread's messages stay in order. The lanes of a warp that send together are one
/// *group*: the first lane reserves `k` consecutive positions by compare-and-swap on
/// the ring's device-local `tail`, only while `tail + k <= head + cells` (the host's
/// `head` is cached on the device and re-read across PCIe, with the channel's
/// `closing`, by one sender at a time for all (`QueueRing::polling`): when the ring
/// looks full, and otherwise after a publish at most every `GPUIO_QUEUE_POLL_NS`
/// (`QueueRing::polled_at`); no send waits on a read of host memory while the ring
/// has room), so a reservation is
/// never left unpublished. The lanes write each cell whole, its stamp
/// ([`cell::stamp`]`(pos, len, count)`, except the group's first) and message side by
/// side (coalesced stores, `gpuio_impl_queue_fill_group`); after the warp syncs,
/// the first lane stores the group's first stamp with a system-scope
/// release, and that one store publishes the whole group. The host reads groups in
/// order: at its `head`, a first stamp that holds `head` (acquire) makes `count`
/// cells readable; it checks every stamp (each holds its position, `len <=
/// max_message`, `count` within the ring), copies the bytes out and then
/// releases `head += count` to [`QueueControl::head`]. A first stamp holding
/// anything other than `head`, `head - cells` (the previous lap) or 0 (never
/// written) was scribbled: the host reports a protocol violation and stops reading
/// that ring.
///
/// **To the device** (`gpuio_recv`): `rings` rings of two cells at least (with one,
/// "free for `p + 1`" and "holds `p`" would once have been the same word), each
/// written by one host `Sender` (a thread of its own: `Sender::split`), each with
/// its own positions, head, `closed`, credits and free words; what follows is one
/// ring's protocol. A reading warp takes from ring `warp % rings` first and from the
/// next rings in turn when that one has no credit; the end of stream is every ring
/// at its end. Cell `p % cells`
/// holds the message for `p` when its stamp holds `p` (released by the host, which
/// writes the bytes first; then it releases `QueueControl::head = p + 1`), and is
/// free for position `p` when its *free word* `frees[p % cells] == p` (a compact
/// array of `u64` beside the cells, [`Queue::frees`]: only the host writes the cells,
/// so a ring that fits the host's caches stays there, and the host learns of frees
/// from eight words a line instead of reading every cell the device wrote into). Readers do not poll the host each: one at a time
/// (`QueueRing::polling`, taken by a compare-and-swap and then an acquire of
/// that word) reads `closed`, then `head` (acquire), and leaves them in
/// `QueueRing::cached_head` / `seen`; the others wait on that device-local copy.
/// Positions are handed out by *credits* ([`QueueCredits`]): after the poller
/// releases a larger `cached_head` it adds the difference to the ring's device-local
/// credit count, so that credits never exceed published positions not yet handed
/// out. A reader takes up to `k` credits with one fetch-add of `-k` (keeping
/// `clamp(old, 0, k)` and adding back the rest; the count may dip below zero
/// meanwhile), then the positions with a fetch-add of the ring's `tail` by what it
/// kept: a claim never fails and never retries, and every position it gets is below
/// a published `cached_head`, which the reader acquires before it reads the cell.
/// A reader that must look at a message before taking it (a buffer shorter than
/// `max_message`) holds one credit and claims that position by compare-and-swap on
/// `tail` (`h → h + 1`). Either way it acquires the stamp of `h`, copies the message
/// out and frees the cell with `frees[h % cells] = h + cells` (release). The host
/// initialises `frees[p] = p` for lap 0 and sets `closed` after its last `head` when its `Sender`
/// closes; once `closed` is seen and `tail` reached the final `cached_head` (every
/// position below it handed out: `tail` grows only by credits), a reader reports end
/// of stream. A reader that finds no credit while `tail` is below `cached_head`
/// (credits another reader holds for an instant) looks again instead of polling or
/// ending.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Queue {
    /// A [`queue_direction`] value.
    pub direction: u32,
    pub rings: u32,
    /// Cells per ring (a power of two).
    pub cells: u32,
    /// Bytes per cell: an 8-byte [`CellHeader`] and `max_message` bytes, rounded up
    /// to 8.
    pub cell_size: u32,
    pub max_message: u32,
    /// Reserved, zero.
    pub _reserved: u32,
    /// Device address of ring 0's cells (shared); ring `r` starts `r · cells ·
    /// cell_size` bytes further on.
    pub cells_addr: u64,
    /// Device address of `QueueControl[rings]` (shared; written by the host).
    pub control: u64,
    /// Device address of `QueueRing[rings]` (device-local); for a queue to the
    /// device, `QueueCredits[rings]` follow ([`QueueCredits`]).
    pub ring_state: u64,
    /// To the device: the address of `u64 frees[rings · cells]` (shared), where
    /// readers free cells (ring `r`'s `frees[r · cells + p % cells] = p + cells`,
    /// release). To the host: 0.
    pub frees: u64,
    pub _pad: [u64; 1],
}

/// What the host publishes for one ring (shared, one cache line).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueControl {
    /// To the host: positions the host has consumed. To the device: positions the
    /// host has published (after each message's stamp). Release by the host.
    pub head: u64,
    /// To the device: 1 once the ring's `Sender` closed, after its last `head`
    /// (release by the host).
    pub closed: u32,
    pub _pad: [u32; 13],
}

/// One ring's device-local state: two lines, `tail` alone in the first. Every
/// sender reads `seen`, `cached_head` and `polled_at` while other warps of its ring
/// compare-and-swap `tail`; in one line (ABI 8) those reads queued behind the atomics
/// at the line's L2 slice: 64 B messages from every thread of an H100 into 16 rings
/// (no host; `docs/validation/h100-2026-11-26-night/run19-sendprobe2.cu`,
/// 2026-11-26) moved 229–257 M msg/s with one line and 597–615 M with `tail` in a
/// line of its own (a bare fetch-add: 640–644 M).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueRing {
    /// To the host: positions reserved by senders. To the device: positions claimed
    /// by readers.
    pub tail: u64,
    pub _tail_line: [u64; 7],
    /// The last `QueueControl::head` read from the host: by a sender that found the
    /// ring full (to the host), or by the one reader polling for all (to the device).
    pub cached_head: u64,
    /// 1 while one device thread (a sender finding the ring full, or a reader
    /// finding it empty) reads the host's words for all the others, who wait on this
    /// device-local state instead of each polling across PCIe.
    pub polling: u32,
    /// [`queue_seen`] bits the polling thread found.
    pub seen: u32,
    /// (To the host.) When a sender last read the host's words (`gpuio_now_ns`):
    /// senders refresh `cached_head` and `seen` from the host at most this often
    /// while the ring has room, instead of each reading `closing` across PCIe.
    pub polled_at: u64,
    pub _pad: [u64; 5],
}

/// One ring of a queue to the device's credits, a 64-byte line each after the
/// queue's `QueueRing[rings]` (device-local; `gpuio_impl_queue_credits`). Before them (ABI 6) a reading warp
/// took one of 128 claim funnels and competed for `tail` by compare-and-swap: with
/// every warp of an H100 reading, `ncu` put 97 % of the reading kernel's stall
/// samples on that loop (88 L2 atomics a message without funnels), and the queue
/// moved 9.0 / 10.9 / 11.6 / 11.5 M messages/s with 16 / 64 / 128 / 256 funnels
/// (64 B, 2026-11-26).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCredits {
    /// Published positions not yet handed to a reader: added to by the polling
    /// reader after it releases a larger `cached_head`, taken by readers with a
    /// fetch-add of `-k`; below zero for an instant while a reader gives back what
    /// it could not keep.
    pub available: i64,
    pub _pad: [u64; 7],
}

/// [`QueueRing::seen`] bits.
pub mod queue_seen {
    /// (To the device.) The host's `Sender` closed; `cached_head` is its final count.
    pub const CLOSED: u32 = 1;
    /// The channel is closing.
    pub const SHUTDOWN: u32 = 2;
}

/// The first 8 bytes of every cell: one word, its [`cell`] stamp — which position
/// the cell holds (`pos + 1`, its low 32 bits), the message's length and, to the
/// host on a group's first cell, how many cells the group holds — so that the
/// release that publishes a cell also publishes its length, and a message of 64
/// bytes takes 72 bytes of the bus, not 80.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellHeader {
    /// [`cell::stamp`]`(pos, len, count)` once the cell holds position `pos`'s
    /// message (to the host: released on a group's first cell; to the device:
    /// released by the host, which keeps the frees in [`Queue::frees`]); 0 in a
    /// cell never written.
    pub stamp: u64,
}

/// The word [`CellHeader::stamp`]: `tag(pos) | len << LEN_SHIFT | count <<
/// COUNT_SHIFT`, where `tag(pos) = (pos + 1) mod 2^32`. Thirty-two bits of the
/// position tell a cell's message from the previous lap's (`pos + 1 - cells`, the
/// least it can hold while not yet rewritten) for any ring of fewer than 2^32 cells;
/// `len` takes 21 bits ([`MAX_MESSAGE_LIMIT`](crate::queue::MAX_MESSAGE_LIMIT) is
/// 2^20), `count` the other 11 (at most a warp's lanes).
pub mod cell {
    /// Bits of the stamp that hold the position's tag.
    pub const TAG_MASK: u64 = 0xffff_ffff;
    /// Where the length starts.
    pub const LEN_SHIFT: u32 = 32;
    /// The length's bits, below `LEN_SHIFT`.
    pub const LEN_MASK: u64 = (1 << 21) - 1;
    /// Where the count starts (the top 11 bits).
    pub const COUNT_SHIFT: u32 = 53;

    /// The tag of position `pos`: `(pos + 1) mod 2^32`.
    pub const fn tag(pos: u64) -> u64 {
        pos.wrapping_add(1) & TAG_MASK
    }

    /// The stamp of a cell that holds position `pos`'s message of `len` bytes, the
    /// first of `count` (to the host; 1 otherwise).
    pub const fn stamp(pos: u64, len: u32, count: u32) -> u64 {
        tag(pos) | (len as u64 & LEN_MASK) << LEN_SHIFT | (count as u64) << COUNT_SHIFT
    }

    /// Whether `stamp` says its cell holds position `pos`.
    pub const fn holds(stamp: u64, pos: u64) -> bool {
        stamp & TAG_MASK == tag(pos)
    }

    /// The position `stamp` names, mod 2^32 (for reports).
    pub const fn position(stamp: u64) -> u64 {
        (stamp & TAG_MASK).wrapping_sub(1) & TAG_MASK
    }

    /// The message's length in `stamp`.
    pub const fn len(stamp: u64) -> u32 {
        ((stamp >> LEN_SHIFT) & LEN_MASK) as u32
    }

    /// The group's count in `stamp`.
    pub const fn count(stamp: u64) -> u32 {
        (stamp >> COUNT_SHIFT) as u32
    }
}

/// Counters a device-driven transport keeps in shared memory.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Stats {
    /// Requests handed to the transport (direct: published to the SQ).
    pub submitted: u64,
    /// Requests completed with `res >= 0`.
    pub completed: u64,
    /// Requests completed with `res < 0`.
    pub failed: u64,
    /// Device calls that gave up waiting (their requests are still counted above
    /// once they complete), on every transport.
    pub timed_out: u64,
    /// Reserved, zero: the rest of the cache line, spelled out so that the struct has
    /// no padding (`bytemuck::Pod`).
    pub _pad: [u64; 4],
}

const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<Request>() == 32);
    assert!(size_of::<ForwardEntry>() == 64);
    assert!(size_of::<MailboxPort>() == 192);
    assert!(size_of::<Endpoint>() == 16);
    assert!(size_of::<DirectSlot>() == 64);
    assert!(size_of::<Turn>() == 32);
    assert!(size_of::<DirectState>() == 192);
    assert!(size_of::<DirectRing>() == 112);
    assert!(size_of::<Stats>() == 64);
    assert!(size_of::<Queue>() == 64);
    assert!(size_of::<QueueControl>() == 64);
    assert!(size_of::<QueueRing>() == 128);
    assert!(size_of::<QueueCredits>() == 64);
    assert!(size_of::<CellHeader>() == 8);
    assert!(align_of::<Channel>() == 64);
    assert!(size_of::<Channel>() == 384);
    assert!(MB_LOCK_WORDS as usize * 4 == 64 && size_of::<Turn>() <= 64);
};

/// Every size, alignment, offset and constant the header must agree with, as
/// `(name, value)` pairs. `gpuio-device`'s build script turns each entry into a
/// `static_assert` named for it (`$OUT_DIR/gpuio_abi_asserts.h`) and compiles it with
/// `gpuio.h`, so a header that drifts from this file fails the build of the CPU
/// device with the entry's name. Names, and the C++ each stands for:
///
/// * `sizeof(T)`, `alignof(T)`: the struct `T` of `gpuio/abi.h`;
/// * `T.f`: `offsetof(T, f)`; `sizeof(T.f)`: the size of field `f` of `T`;
/// * `GPUIO_*`: the macro's value.
///
/// Every field of every struct is listed (padding and reserved fields too): the
/// list of a struct is also a pattern without `..`, so a field added to the struct
/// and not here does not compile.
pub fn layout() -> Vec<(&'static str, usize)> {
    use std::mem::{align_of, offset_of, size_of};
    /// The size of the field `project` reaches, without a value of `T`.
    fn field_size<T, F>(_project: fn(&T) -> &F) -> usize {
        size_of::<F>()
    }
    let mut out = Vec::new();
    macro_rules! structs {
        ($($ty:ident as $c:literal { $($f:ident),* $(,)? })*) => {$(
            // No `..`: a field of the struct missing from the list fails to compile
            // here ("pattern requires `..`").
            let _every_field_listed = |v: $ty| {
                let $ty { $($f: _),* } = v;
            };
            out.push((concat!("sizeof(", $c, ")"), size_of::<$ty>()));
            out.push((concat!("alignof(", $c, ")"), align_of::<$ty>()));
            $(
                out.push((concat!($c, ".", stringify!($f)), offset_of!($ty, $f)));
                out.push((
                    concat!("sizeof(", $c, ".", stringify!($f), ")"),
                    field_size(|v: &$ty| &v.$f),
                ));
            )*
        )*};
    }
    structs! {
        Channel as "gpuio_channel" {
            magic, version, transport, flags, timeout_ns, staging, staging_host,
            staging_len, slot_size, slots, endpoints, endpoint_count, stdout_endpoint,
            closing, _pad0, shared, direct, forward, mailbox,
            queues, queue_count, _pad1, stats,
        }
        DirectRing as "gpuio_direct_ring" {
            sq_head, sq_tail, sq_flags, sq_array, sqes, cq_head, cq_tail, cqes, sq_mask,
            cq_mask, sq_entries, cq_entries, state, slot_state, fixed_buffer_host, _pad,
        }
        DirectState as "gpuio_direct_state" {
            reserve, sq_reserve, published, publish_lock, reap_lock, reaped, completed,
            failed, write_gates,
        }
        DirectSlot as "gpuio_direct_slot" { turn, done, sq_ready, res, gate, _pad2 }
        ForwardQueue as "gpuio_forward_queue" { entries, state, slot_state, rings, write_group }
        ForwardState as "gpuio_forward_state" { reserve, _pad }
        Turn as "gpuio_turn" { word, holder, since, holder_thread, _pad }
        Request as "gpuio_request" { op, endpoint, len, flags, staging_off, offset }
        ForwardEntry as "gpuio_forward_entry" { stamp, words }
        Mailbox as "gpuio_mailbox" { ports, locks, port_count, _pad, _pad1 }
        MailboxPort as "gpuio_mailbox_port" { device_out, _pad0, host_out, _pad1, req }
        Endpoint as "gpuio_endpoint" { kind, access, queue, log }
        Queue as "gpuio_queue" {
            direction, rings, cells, cell_size, max_message, _reserved, cells_addr,
            control, ring_state, frees, _pad,
        }
        QueueControl as "gpuio_queue_control" { head, closed, _pad }
        QueueRing as "gpuio_queue_ring" { tail, _tail_line, cached_head, polling, seen, polled_at, _pad }
        QueueCredits as "gpuio_queue_credits" { available, _pad }
        CellHeader as "gpuio_cell_header" { stamp }
        Stats as "gpuio_stats" { submitted, completed, failed, timed_out, _pad }
    }
    macro_rules! constants {
        ($($name:literal => $val:expr),* $(,)?) => { $(out.push(($name, $val));)* };
    }
    constants![
        "GPUIO_MAGIC" => MAGIC as usize,
        "GPUIO_ABI_VERSION" => ABI_VERSION as usize,
        "GPUIO_FORWARD_WORDS" => forward_words::COUNT,
        "GPUIO_FORWARD_WORD_SET" => forward_words::SET as usize,
        "GPUIO_TRANSPORT_DIRECT" => TransportKind::Direct as usize,
        "GPUIO_TRANSPORT_FORWARD" => TransportKind::Forward as usize,
        "GPUIO_TRANSPORT_MAILBOX" => TransportKind::Mailbox as usize,
        "GPUIO_OP_BASE" => op::BASE as usize,
        "GPUIO_OP_NOP" => op::NOP as usize,
        "GPUIO_OP_PWRITE" => op::PWRITE as usize,
        "GPUIO_OP_PREAD" => op::PREAD as usize,
        "GPUIO_OP_WRITE" => op::WRITE as usize,
        "GPUIO_OP_READ" => op::READ as usize,
        "GPUIO_OP_SEND" => op::SEND as usize,
        "GPUIO_OP_RECV" => op::RECV as usize,
        "GPUIO_EP_FILE" => endpoint_kind::FILE as usize,
        "GPUIO_EP_SOCKET" => endpoint_kind::SOCKET as usize,
        "GPUIO_EP_PIPE" => endpoint_kind::PIPE as usize,
        "GPUIO_EP_HOST_QUEUE" => endpoint_kind::HOST_QUEUE as usize,
        "GPUIO_QUEUE_TO_HOST" => queue_direction::TO_HOST as usize,
        "GPUIO_QUEUE_TO_DEVICE" => queue_direction::TO_DEVICE as usize,
        "GPUIO_QUEUE_SEEN_CLOSED" => queue_seen::CLOSED as usize,
        "GPUIO_QUEUE_SEEN_SHUTDOWN" => queue_seen::SHUTDOWN as usize,
        "GPUIO_ACCESS_READ" => access::READ as usize,
        "GPUIO_ACCESS_WRITE" => access::WRITE as usize,
        "GPUIO_SLOT_FREE" => slot_state::FREE as usize,
        "GPUIO_SLOT_IN_FLIGHT" => slot_state::IN_FLIGHT as usize,
        "GPUIO_SLOT_DONE" => slot_state::DONE as usize,
        "GPUIO_SLOT_ABANDONED" => slot_state::ABANDONED as usize,
        "GPUIO_SLOT_HELD_ASYNC" => slot_state::HELD_ASYNC as usize,
        "GPUIO_TURN_SHIFT" => turn_word::SHIFT as usize,
        "GPUIO_TURN_STATE" => turn_word::STATE as usize,
        "GPUIO_STAMP_FREE" => stamp::FREE as usize,
        "GPUIO_STAMP_READY" => stamp::READY as usize,
        "GPUIO_STAMP_DONE" => stamp::DONE as usize,
        "GPUIO_STAMP_SHIFT" => stamp::SHIFT as usize,
        "GPUIO_ANSWER_TAG_SHIFT" => stamp::ANSWER_TAG_SHIFT as usize,
        "GPUIO_ANSWER_TAG_MASK" => stamp::ANSWER_TAG_MASK as usize,
        "GPUIO_FORWARD_ROUTE_MIN" => FORWARD_ROUTE_MIN as usize,
        "GPUIO_MB_LOCK_WORDS" => MB_LOCK_WORDS as usize,
        "GPUIO_CELL_TAG_MASK" => cell::TAG_MASK as usize,
        "GPUIO_CELL_LEN_SHIFT" => cell::LEN_SHIFT as usize,
        "GPUIO_CELL_LEN_MASK" => cell::LEN_MASK as usize,
        "GPUIO_CELL_COUNT_SHIFT" => cell::COUNT_SHIFT as usize,
    ];
    // The header spells out the errnos it answers with (NVRTC has no errno.h); the
    // host compares them with its own.
    constants![
        "GPUIO_EPERM" => libc::EPERM as usize,
        "GPUIO_EBADF" => libc::EBADF as usize,
        "GPUIO_EAGAIN" => libc::EAGAIN as usize,
        "GPUIO_EACCES" => libc::EACCES as usize,
        "GPUIO_EFAULT" => libc::EFAULT as usize,
        "GPUIO_EINVAL" => libc::EINVAL as usize,
        "GPUIO_ESPIPE" => libc::ESPIPE as usize,
        "GPUIO_EPIPE" => libc::EPIPE as usize,
        "GPUIO_ENOSYS" => libc::ENOSYS as usize,
        "GPUIO_EPROTO" => libc::EPROTO as usize,
        "GPUIO_EOVERFLOW" => libc::EOVERFLOW as usize,
        "GPUIO_ENOTSOCK" => libc::ENOTSOCK as usize,
        "GPUIO_EMSGSIZE" => libc::EMSGSIZE as usize,
        "GPUIO_ESHUTDOWN" => libc::ESHUTDOWN as usize,
        "GPUIO_ETIMEDOUT" => libc::ETIMEDOUT as usize,
    ];
    out
}

#[cfg(test)]
mod tests {
    use super::{forward_words, op, slot_state, turn_word, Request};

    proptest::proptest! {
        /// A forward entry's words give back the request the device wrote (any op
        /// below 2^31: every one is), and none of them is zero, the host's mark of
        /// a word not written yet.
        #[test]
        fn a_forward_requests_words_decode_to_it_and_every_word_is_marked(
            op in 0u32..0x8000_0000, endpoint: u32, len: u32, flags: u32,
            staging_off: u64, offset: i64,
        ) {
            let r = Request { op, endpoint, len, flags, staging_off, offset };
            let w = forward_words::encode(&r);
            proptest::prop_assert!(w.iter().all(|&x| x & forward_words::SET != 0));
            proptest::prop_assert_eq!(forward_words::decode(&w), Some(r));
        }
    }

    #[test]
    fn a_forward_request_with_any_word_unwritten_is_not_read() {
        let w = forward_words::encode(&Request {
            op: op::PREAD,
            len: 8,
            ..Request::default()
        });
        for k in 0..forward_words::COUNT {
            let mut partial = w;
            partial[k] = 0;
            assert_eq!(forward_words::decode(&partial), None, "word {k} missing");
        }
    }

    /// What `gpuio/api.h` relies on when it takes, frees and hands on a slot with
    /// one atomic operation on its turn's word.
    #[test]
    fn a_turn_word_keeps_the_lap_and_the_state_apart() {
        let states = [
            slot_state::FREE,
            slot_state::IN_FLIGHT,
            slot_state::ABANDONED,
            slot_state::HELD_ASYNC,
        ];
        // Zeroed memory is lap 0's turn on a free slot.
        assert_eq!(turn_word::word(0, slot_state::FREE), 0);
        for lap in [0, 1, 255, 1 << 40, (u64::MAX >> turn_word::SHIFT) - 1] {
            for state in states {
                let w = turn_word::word(lap, state);
                assert_eq!((turn_word::lap(w), turn_word::state(w)), (lap, state));
                // Handing the turn on (an add of one lap) keeps the state ...
                let on = w + (1 << turn_word::SHIFT);
                assert_eq!((turn_word::lap(on), turn_word::state(on)), (lap + 1, state));
                // ... and freeing (an and that clears the state) keeps the turn.
                assert_eq!(
                    w & !turn_word::STATE,
                    turn_word::word(lap, slot_state::FREE)
                );
            }
        }
    }
}
