//! The forward transport: the device queues compact requests; a host forwarder
//! thread per ring feeds them to its own ordinary io_uring and answers each one in
//! place.
//!
//! Works with any [`MemoryProvider`](crate::MemoryProvider) and on any kernel
//! with io_uring (no `NO_MMAP`, no SQPOLL): the ring is the `io-uring` crate's
//! default mmap'd one, and only the host thread touches it. Device side:
//! `device/include/gpuio/forward.h`.
//!
//! # Memory
//!
//! ```text
//! shared:        ForwardEntry entries[slots]     stamp (or answer), request (one line each)
//! device-local:  ForwardState state[rings]       reserve: the ring's next position (fetch-add)
//!                ForwardSlot slots[slots]        turn, holder, since, state
//! ```
//!
//! **Rings.** The slots are split into `rings` runs of consecutive slots
//! ([`ForwardBuilder::rings`]); ring `r` takes positions from `state[r]`, and lap
//! `L` of its slot `j` is the channel's position `L·slots + r·slots/rings + j`, so
//! entries, stamps and their checks are the same as with one ring. A warp uses ring
//! `warp % rings` (a long pwrite, its file's group of rings: `route_writes`
//! below); forwarder thread `f` serves a run of consecutive rings' entries
//! ([`ForwardBuilder::forwarders`]; by default ring `f` alone), with its own
//! io_uring. Warps of different rings share no counter, turn or slot — until a
//! lane finds its slot stuck (held by an asynchronous call, say) and takes its next
//! position on the next ring, so that one thread's tickets may hold more than its
//! ring's share of the slots (`gpuio/api.h`, "turns").
//!
//! Entry `i` starts with `stamp = i << 2 | FREE`; zeroed slot state is "turn 0, FREE",
//! so position `i` finds slot `i` free.
//!
//! # Protocol (`crate::abi` module doc, `gpuio/forward.h`)
//!
//! A request takes position `pos` and waits for its turn on slot `pos % slots`
//! (device-local), holds the slot, writes the entry and release-stores
//! `pos << 2 | READY`. The forwarder scans the entries and takes every READY one
//! **in any order**; it validates each with [`crate::request::validate`] (a refused
//! request is answered at once with its `-errno`, no syscall), turns the others into
//! SQEs (`user_data` = position) and submits everything it gathered with one
//! `io_uring_enter`. For each CQE it release-stores the answer into the stamp:
//! DONE, the result and the position's low bits in one word (`abi::stamp::answer`).
//! The device acquires it, result and all in one read, and frees the slot.
//!
//! # Choices
//!
//! * **Reservation by fetch-add, turns per slot.** Each waiter watches its own
//!   slot's `turn` word instead of every waiter polling one counter (which collapsed
//!   at 132 × 1024 threads on an H100: 6.7k requests/s).
//! * **Any order.** Because the forwarder does not serve positions in order, a
//!   position whose caller gave up, or passed over a stuck slot, leaves no hole, and
//!   a request that never completes (a read of an empty pipe) holds only its own
//!   slot: turn owners pass over a slot held longer than a quarter of the timeout
//!   and queue again elsewhere.
//! * **Untrusted stamps.** A READY stamp for a position its entry cannot hold (not
//!   `≡ entry (mod slots)`, or the last one taken from it again), or for a new
//!   position while the entry's request is still unanswered (nobody held the entry
//!   to stamp it), is not a request: it is ignored, the request in flight is
//!   answered as usual, and it is a protocol violation: the first one is reported
//!   as soon as the forwarder sees it ([`Transport::violation`]), every one at
//!   `close()`. A position below one taken from its entry before is served and
//!   reported: the host cannot tell whether it or the earlier one was the
//!   scribble, and a position stamped a thousand laps ahead must not make the
//!   entry refuse the kernel's own requests for good (`queue::classify`).
//! * **Abandoned waits.** A waiter that times out marks its slot `ABANDONED`; the
//!   next turn owner takes the slot over once the host's DONE for it is there. The
//!   host never needs to know; the device counts every call that gave up in the
//!   descriptor's `stats.timed_out`, which `close()` reports.
//! * **SQEs.** `PWRITE`/`PREAD` become `Write`/`Read` at the offset; stream
//!   `WRITE`/`READ` use offset `-1` (the file position; ignored by pipes and
//!   sockets). A `NOP` never reaches the ring: the forwarder answers it 0 when it
//!   takes it, so a NOP's round trip is the transport's own. `PWRITE`s taken in
//!   one pass whose ranges of one file follow each other end to end become one
//!   `WRITEV`, each answered its share ([`crate::runs`]); a run of at most
//!   [`ForwardBuilder::inline_writes`] bytes (64 KiB) to a regular file the
//!   forwarder writes itself with one `pwritev`, sparing it io_uring's hand-off to
//!   a worker. `PREAD`s of a regular file taken together so become one `READV`.
//!   The buffer is the staging area's host address plus `staging_off`.
//!   Endpoints are registered as fixed files when the kernel allows (else raw fds
//!   are used), so a request names an endpoint index only.
//!   Short reads and writes are returned as they are (the device header decides).
//! * **Workers.** A write io_uring cannot finish at once goes to an io-wq worker
//!   of the forwarder that took it, and so does a regular file's read of more than
//!   [`ForwardBuilder::inline_reads`] bytes (`IOSQE_ASYNC`), so that long reads
//!   are copied by many threads while few poll the queue; groups of
//!   [`ForwardBuilder::wq_share`] forwarders may share how their workers take
//!   turns at one file (`io_wq`), so that one file's writes from every ring are not
//!   all queued on its lock at once; where a channel has several such groups, the
//!   device sends a file's long pwrites to one of them, chosen by endpoint
//!   ([`ForwardBuilder::route_writes`], `abi::ForwardQueue::write_group`).
//! * **Counting.** Every request the forwarder takes off the queue is `submitted`;
//!   it ends `completed` (result `>= 0`) or `failed` (`-errno`, refused ones
//!   included), so at a clean close `submitted == completed + failed`.
//! * **Idling.** With nothing ready and nothing in flight the thread polls with
//!   [`Backoff`](crate::transport::Backoff) (sleeps up to `idle_max`); with ops
//!   in flight it sleeps in `io_uring_enter` for a completion with a timeout that
//!   grows the same way, so neither costs CPU when nothing happens.
//! * **Closing.** Once the channel sets `closing`, devices start no new request (the
//!   header checks it before every call and while waiting for an entry), but a
//!   request whose entry was already reserved may still be published. The
//!   forwarder keeps serving until nothing is ready or in flight for `quiet`, or
//!   the deadline passes. Ops that make no progress for `quiet` (a read of a pipe
//!   nobody writes) are cancelled once (`IORING_ASYNC_CANCEL_ANY`) and answered
//!   `-ECANCELED`; requests published but not started by the deadline are refused
//!   with `-ESHUTDOWN` (counted as failed) and reported, ops still in the ring are
//!   reported.
//!
//! # Speed, later (DESIGN §1)
//!
//! One shared queue with one ready word per request is the design measured at
//! 13.7 M msg/s; the fast one is several queues (one host thread or ring each,
//! picked by SM/block), a warp publishing a chunk of requests with one ready word,
//! and the device caching the consumer's progress instead of polling entries across
//! PCIe. On the host: registered staging buffers (`READ_FIXED`/`WRITE_FIXED`) where
//! `RLIMIT_MEMLOCK` allows and `COOP_TASKRUN`/`DEFER_TASKRUN` + `SINGLE_ISSUER`.

mod forwarder;
mod io_wq;
mod queue;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::abi::{self, TransportKind};
use crate::memory::SharedMemory;
use crate::transport::{
    device_stats, CounterBlock, Counters, OpenContext, Transport, TransportBuilder, TransportError,
    TransportReport,
};

use forwarder::{Control, Exit, Forwarder, ForwarderConfig};
use queue::QueueView;

/// Builds forward transports. `Default` suits the CPU device and GPUs alike.
#[derive(Clone, Debug)]
pub struct ForwardBuilder {
    /// Most io_uring entries (rounded up to a power of two; never more than the
    /// channel's slots): how many requests may be in the kernel at once.
    pub ring_entries: u32,
    /// Longest the forwarder sleeps between polls when idle.
    pub idle_max: Duration,
    /// While closing: how long nothing must be ready or in flight before the
    /// forwarder stops early.
    pub quiet: Duration,
    /// Register endpoints as io_uring fixed files (falls back to raw fds if the
    /// kernel refuses).
    pub fixed_files: bool,
    /// Rings the channel's slots are split into, each with its own position
    /// counter on the device and, unless [`Self::forwarders`] says fewer, its own
    /// forwarder thread and io_uring on the host;
    /// a warp uses ring `warp % rings` (`abi::ForwardQueue::rings`). Rounded down to
    /// a power of two, at most the slots. 0 (the default, unless [`RINGS_ENV`]
    /// says): a ring per 64 slots up to [`DEFAULT_RINGS`] (4), or up to
    /// [`BULK_RINGS`] (16) on a channel whose slots hold [`BULK_SLOT_SIZE`] (1 MiB)
    /// or more. Small requests from the whole device want few host threads polling
    /// the queue: on a 16-core H200 host (2026-11-29) a channel of 1024 slots made
    /// 65–81 M NOPs/s in 4 rings and 2.3–2.8 M/s in 16. Long writes of many files
    /// want many: io_uring hands a buffered write to a worker of the thread that
    /// submitted it, and one forwarder's workers wrote about two files at a time,
    /// so a channel of 1024 slots of 1 MiB wrote eight files from every warp at
    /// 15.7–18.9 GB/s in 16 rings and 7.3–10.0 in 4 (reads were copied by io-wq
    /// workers either way, [`Self::inline_reads`]).
    pub rings: u32,
    /// Fewest slots a ring may have: `rings` is halved until each ring has this
    /// many (64 by default; 0 for no floor). The lanes of a warp that call together
    /// take consecutive slots of one ring and wait for all of them together, so a
    /// ring with fewer free slots than a warp has lanes leaves the last lanes
    /// waiting for slots their own warp holds, until their deadline (measured on an
    /// H100: a 64-slot channel split into 4 rings of 16 timed out a warp of 32 NOPs
    /// beside one stuck read).
    pub min_ring_slots: u32,
    /// Runs of pwrites (`crate::runs`) of at most this many bytes to a regular file
    /// are written by the forwarder thread itself with one `pwritev`, not handed to
    /// its io_uring (0: every pwrite goes through the ring). A buffered write to a
    /// file system that cannot write without blocking (ext4) is handed by io_uring
    /// to an io-wq worker, and a small one waits far longer for that worker than
    /// its copy takes: on an H100 host (ext4, 2026-11-27, six runs each) one
    /// thread's 64 B pwrite took 6.5–7.0 µs p50 written here against 22–26 µs
    /// through the ring, and whole-device 64 B pwrites ran 5.1–8.1 M/s against
    /// 3.9–5.3. A pass over the ring writes at most four times this itself, so
    /// that its other requests do not wait long behind the copies; set 0 where a
    /// regular file's writes may block for long (a network file system).
    /// [`DEFAULT_INLINE_WRITES`] by default, or [`INLINE_WRITES_ENV`].
    pub inline_writes: usize,
    /// Preads of a regular file taken together (a run, or one alone) of more than
    /// this many bytes are handed to io_uring's worker threads (`IOSQE_ASYNC`), so
    /// that many copy at once; shorter ones the forwarder copies itself (io_uring
    /// issues a read the page cache can answer inside `io_uring_enter`, on the
    /// forwarder's thread, while its ring's other requests wait, at a few GB/s a
    /// thread). Measured on an H200 host (2026-11-29, `gpuio bench --only
    /// requests`, two interleaved rounds each): 1 MiB reads of one file from every
    /// warp 36.8 / 36.8 GB/s handed to workers against 24.1 / 28.7 read by the
    /// forwarders, a file per SM group 36.6 / 36.7 against 29.3 / 29.3;
    /// but runs of 4 KiB preads (a default ring's 64 slots make at most 256 KiB)
    /// ran 1.57–1.67 M/s handed over past 64 KiB against 1.68–1.91 read here, so
    /// the default keeps runs up to 256 KiB here. [`DEFAULT_INLINE_READS`] by
    /// default, or [`INLINE_READS_ENV`] (`usize::MAX` keeps every read on the
    /// forwarders).
    pub inline_reads: usize,
    /// Rings whose forwarders' io-wq workers share one hash map, so that a file's
    /// writes that io_uring hands to workers run one at a time within the group
    /// (groups of consecutive rings; 0 or 1: each forwarder its own, as without
    /// gpuio's help; the rings one forwarder serves share its own already). Fewer
    /// workers queue on one file's lock and spin; fewer files are written side by
    /// side. Measured on an H200 host (ext4, 2026-11-28, 16 rings, 1 MiB writes from
    /// every warp, four runs each): one file 2.67–3.52 GB/s in every setting, at
    /// 2.9–3.5 s of host CPU per GB each its own, 1.15–1.48 in groups of 4,
    /// 0.36–0.45 all 16 together; eight files 13.4–15.3 GB/s each its own, 13.7–15.1
    /// in groups of 4, 8.1–11.3 all together; one file's 4 KiB pwrites from every
    /// thread 0.75–0.84 M/s in groups of 4 at 2.6–2.7 s of host CPU per million,
    /// 0.86–0.93 each its own at 4.9–5.5 (three runs each; NOPs, 64 B pwrites and
    /// reads alike). [`DEFAULT_WQ_SHARE`] by default, or
    /// [`WQ_SHARE_ENV`] (`io_wq` module).
    pub wq_share: u32,
    /// Whether the device sends a file's positioned writes of more than 64 KiB
    /// (`abi::FORWARD_ROUTE_MIN`) to one group of [`Self::wq_share`] rings, chosen
    /// by endpoint, where the channel has several groups: its long writes then
    /// queue for that group's turns at the file, where every group's workers would
    /// queue on the file's lock at once, spinning. (The lanes of a warp that call
    /// together must all name one endpoint; smaller writes and every other request
    /// stay on their warp's ring.) Measured on H200 hosts (ext4, 2026-11-29,
    /// 1024 slots of 1 MiB in 16 rings, `gpuio bench --only bulk`, six single
    /// passes each on three machines, interleaved): one file's 1 MiB writes from
    /// every warp 0.674–0.771× one host thread's routed (median 0.73×) against
    /// 0.543–0.659× (0.64×), at 0.25–0.40 s of host CPU per GB against
    /// 0.88–1.34. Eight files' (one per SM group) are mixed: routed 10.7–20.0
    /// GB/s against 13.2–17.5, behind on two machines of three and ahead on one
    /// (leaving out each call's first pass, slow whatever the build). On by
    /// default (one file's writes are the common case, and the host's cores are
    /// spared either way); [`ROUTE_WRITES_ENV`] set to 0 turns it off.
    pub route_writes: bool,
    /// Host threads serving the rings, each a run of consecutive rings with its own
    /// io_uring (as deep as its entries): rounded down to a power of two, at most
    /// `rings`; 0 (the default, unless [`FORWARDERS_ENV`] says): one per ring. The
    /// device sees rings only, so this changes nothing on its side. Fewer
    /// forwarders than rings suit a channel of many rings that carries small
    /// calls from the whole device: how many host cores pass over the queue at
    /// once matters (see [`DEFAULT_RINGS`]). But io_uring hands a buffered write to
    /// a worker of the thread that submitted it, so fewer forwarders write fewer
    /// files at once. Measured on an H200 host (2026-11-29, 1024 slots of 1 MiB:
    /// 16 rings, two interleaved runs each): whole-device NOPs 57.9–76.1 M/s with
    /// 4 forwarders against 2.49–2.62 with 16 (2.79–2.90 with 8); eight files'
    /// 1 MiB writes from every warp 10.7–11.2 GB/s against 16.9–18.3 (from the
    /// staging area 13.7–14.1 against 23.1–23.2); reads of one file or eight,
    /// and one file's writes, alike (33.1–36.7 GB/s, 3.05–3.69).
    pub forwarders: u32,
    /// How long an idle forwarder, between passes over its entries, watches the
    /// one entry its ring's next request comes to (the one after the last it took)
    /// before passing over them all again; zero: no watch. A pass looks at each of
    /// the forwarder's entries in turn, so a request published while one runs waits
    /// for the pass's end, and a round trip's latency varied with where in the pass
    /// its entry fell. Requests that come to another entry meanwhile (out of
    /// position order) wait for the watch's end. [`DEFAULT_WATCH`] by default, or
    /// [`WATCH_ENV`] (nanoseconds).
    pub watch: Duration,
}

pub use crate::transport::{DEFAULT_WATCH, MOST_WATCH};

/// The environment variable that sets [`ForwardBuilder::watch`]: nanoseconds, at
/// most [`MOST_WATCH`]; 0 turns the watch off.
pub const WATCH_ENV: &str = "GPUIO_FORWARD_WATCH_NS";

/// [`ForwardBuilder::watch`] from [`WATCH_ENV`]'s value
/// ([`crate::transport::watch_from`]).
fn watch_from(value: Option<&str>) -> Duration {
    crate::transport::watch_from(WATCH_ENV, value)
}

/// The environment variable that sets [`ForwardBuilder::forwarders`] (1 to 64).
pub const FORWARDERS_ENV: &str = "GPUIO_FORWARD_FORWARDERS";

/// The environment variable that turns [`ForwardBuilder::route_writes`] off (`0`)
/// or on (`1`).
pub const ROUTE_WRITES_ENV: &str = "GPUIO_FORWARD_ROUTE_WRITES";

/// [`ForwardBuilder::wq_share`] unless said otherwise: groups of four forwarders.
pub const DEFAULT_WQ_SHARE: u32 = 4;

/// The environment variable that sets [`ForwardBuilder::wq_share`] (0 to 64).
pub const WQ_SHARE_ENV: &str = "GPUIO_FORWARD_WQ_SHARE";

/// [`ForwardBuilder::inline_writes`] unless said otherwise.
pub const DEFAULT_INLINE_WRITES: usize = 64 << 10;

/// The environment variable that sets [`ForwardBuilder::inline_writes`]: bytes, at
/// most [`MOST_INLINE_WRITES`]; 0 sends every pwrite through the ring.
pub const INLINE_WRITES_ENV: &str = "GPUIO_FORWARD_INLINE_WRITES";

/// The most [`INLINE_WRITES_ENV`] may say (1 MiB): a forwarder copies up to four
/// times this in a pass while its ring's other requests wait.
pub const MOST_INLINE_WRITES: usize = 1 << 20;

/// [`ForwardBuilder::inline_reads`] unless said otherwise.
pub const DEFAULT_INLINE_READS: usize = 256 << 10;

/// The environment variable that sets [`ForwardBuilder::inline_reads`]: bytes.
pub const INLINE_READS_ENV: &str = "GPUIO_FORWARD_INLINE_READS";

/// [`ForwardBuilder::inline_writes`] from [`INLINE_WRITES_ENV`]'s value, if set: a
/// byte count up to [`MOST_INLINE_WRITES`]; anything else is reported and leaves
/// the default.
fn inline_writes_from(value: Option<&str>) -> usize {
    bytes_from(
        INLINE_WRITES_ENV,
        value,
        DEFAULT_INLINE_WRITES,
        MOST_INLINE_WRITES,
    )
}

/// [`ForwardBuilder::inline_reads`] from [`INLINE_READS_ENV`]'s value, if set: a
/// byte count; anything else is reported and leaves the default.
fn inline_reads_from(value: Option<&str>) -> usize {
    bytes_from(INLINE_READS_ENV, value, DEFAULT_INLINE_READS, usize::MAX)
}

/// Environment variable `name`'s `value`, if set: a byte count up to `most`;
/// anything else is reported and gives `default`.
fn bytes_from(name: &str, value: Option<&str>, default: usize, most: usize) -> usize {
    let Some(v) = value else {
        return default;
    };
    match v.trim().parse::<usize>() {
        Ok(n) if n <= most => n,
        _ => {
            tracing::warn!(
                value = v,
                "{name} is not a byte count up to {most}; using {default}"
            );
            default
        }
    }
}

/// Environment variable `name` as a count from 1 to 64; 0 where it is unset or
/// anything else (the builder's "choose for me").
fn count_env(name: &str) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or(0)
}

/// [`ForwardBuilder::wq_share`] from [`WQ_SHARE_ENV`]'s value, if set: a count up
/// to 64; anything else is reported and leaves the default.
fn wq_share_from(value: Option<&str>) -> u32 {
    let Some(v) = value else {
        return DEFAULT_WQ_SHARE;
    };
    match v.trim().parse::<u32>() {
        Ok(n) if n <= 64 => n,
        _ => {
            tracing::warn!(
                value = v,
                "{WQ_SHARE_ENV} is not a count of forwarders up to 64; using {DEFAULT_WQ_SHARE}"
            );
            DEFAULT_WQ_SHARE
        }
    }
}

/// The environment variable that sets [`ForwardBuilder::rings`] (1 to 64).
pub const RINGS_ENV: &str = "GPUIO_FORWARD_RINGS";

/// Most rings of a forward channel unless said otherwise ([`ForwardBuilder::rings`]
/// 0): with [`ForwardBuilder::min_ring_slots`] at 64, a ring (and a forwarder
/// thread) per 64 slots up to this many, so the default channel of 256 slots has
/// 4, and so does a channel of 1024 slots or more for small calls. Sixteen (the
/// earlier cap for every channel) made whole-device small requests crawl on a
/// 16-core host: sixteen threads polling the queue at once, NOPs on 1024 slots
/// 2.3–2.8 M/s against 65–81 in 4 rings (H200, 2026-11-29).
pub const DEFAULT_RINGS: u32 = 4;

/// Most rings of a channel of long slots ([`BULK_SLOT_SIZE`] or more) unless said
/// otherwise: io_uring hands a buffered write to a worker of the thread that
/// submitted it, and one forwarder's workers wrote about two files at a time, so
/// many forwarders write many files at once (eight files' 1 MiB writes from every
/// warp of an H200, 1024 slots of 1 MiB, 2026-11-29: 15.7–18.9 GB/s in 16 rings,
/// 7.3–10.0 in 4).
pub const BULK_RINGS: u32 = 16;

pub use crate::transport::BULK_SLOT_SIZE;

impl Default for ForwardBuilder {
    fn default() -> Self {
        Self {
            ring_entries: 1024,
            idle_max: Duration::from_micros(500),
            quiet: Duration::from_millis(50),
            fixed_files: true,
            rings: count_env(RINGS_ENV),
            min_ring_slots: 64,
            inline_writes: inline_writes_from(std::env::var(INLINE_WRITES_ENV).ok().as_deref()),
            inline_reads: inline_reads_from(std::env::var(INLINE_READS_ENV).ok().as_deref()),
            wq_share: wq_share_from(std::env::var(WQ_SHARE_ENV).ok().as_deref()),
            route_writes: std::env::var(ROUTE_WRITES_ENV).map_or(true, |v| v.trim() != "0"),
            forwarders: count_env(FORWARDERS_ENV),
            watch: watch_from(std::env::var(WATCH_ENV).ok().as_deref()),
        }
    }
}

impl TransportBuilder for ForwardBuilder {
    fn kind(&self) -> TransportKind {
        TransportKind::Forward
    }

    fn build(&self, ctx: &mut OpenContext<'_>) -> Result<Box<dyn Transport>, TransportError> {
        let slots = ctx.slots;
        if !slots.is_power_of_two() {
            return Err(TransportError::Config(format!(
                "forward: slots must be a power of two, got {slots}"
            )));
        }
        let entries =
            ctx.alloc_shared(slots as usize * std::mem::size_of::<abi::ForwardEntry>())?;
        let queue = QueueView::new(entries, slots)?;
        queue.init();
        // A power of two that divides the slots (a power of two themselves).
        let wanted = match self.rings {
            0 if ctx.slot_size >= BULK_SLOT_SIZE => BULK_RINGS,
            0 => DEFAULT_RINGS,
            n => n,
        };
        let mut rings = prev_power_of_two(wanted.clamp(1, slots));
        while rings > 1 && slots / rings < self.min_ring_slots {
            rings /= 2;
        }
        let per = slots / rings;
        let state_len = rings as usize * std::mem::size_of::<abi::ForwardState>();
        let local =
            ctx.alloc_local(state_len + slots as usize * std::mem::size_of::<abi::ForwardSlot>())?;
        // The forwarders of a group of `wq_share` rings enter one anchor first
        // (`io_wq`), so that a file's writes run one at a time within the group; a
        // group of one forwarder needs none.
        let share = self.wq_share.clamp(1, rings);
        let write_group = write_group(self.route_writes, share, rings);
        // Zeroed memory is `reserve = 0` on every ring and every slot "turn 0, FREE".
        ctx.desc.forward = abi::ForwardQueue {
            entries: queue.device_addr(),
            state: local.device_addr(),
            slot_state: local.device_addr() + state_len as u64,
            rings,
            write_group,
        };
        let staging_len = ctx.desc.staging_len.min(ctx.staging.len as u64);
        let control = Arc::new(Control::default());
        // Forwarder f serves rings f·each .. (f+1)·each: `each · per` entries.
        let forwarders = match self.forwarders {
            0 => rings,
            n => prev_power_of_two(n.min(rings)),
        };
        let each = rings / forwarders;
        let span = each * per;
        let counters = ForwarderCounters::new(forwarders as usize);
        let mut threads = Vec::with_capacity(forwarders as usize);
        // Groups of `share` rings share an io-wq hash map: `share / each`
        // forwarders each (one forwarder's rings share its own io-wq already).
        let sharing = (share / each).max(1);
        // The transport keeps the anchors until its threads are joined, so that
        // theirs are never the last references dropped.
        let anchors: Vec<Option<Arc<io_wq::Anchor>>> = if sharing > 1 {
            (0..forwarders.div_ceil(sharing))
                .map(|_| io_wq::Anchor::new().map(Arc::new))
                .collect()
        } else {
            Vec::new()
        };
        for r in 0..forwarders {
            let first = (r * span) as usize;
            let config = ForwarderConfig {
                ring_entries: self.ring_entries.clamp(1, span),
                idle_max: self.idle_max,
                quiet: self.quiet,
                fixed_files: self.fixed_files,
                entries: first..first + span as usize,
                ring_slots: per as usize,
                watch: self.watch,
                lead: r == 0,
                inline_writes: self.inline_writes,
                inline_reads: self.inline_reads,
                anchor: anchors.get((r / sharing) as usize).cloned().flatten(),
            };
            let started = Forwarder::new(
                config,
                queue.clone(),
                ctx.endpoints.to_vec(),
                ctx.staging,
                staging_len,
                control.clone(),
                counters.of(r as usize),
            )
            .and_then(|forwarder| {
                std::thread::Builder::new()
                    .name(format!("gpuio-forwarder-{r}"))
                    .spawn(move || forwarder.run())
                    .map_err(|e| TransportError::os("spawn forwarder thread", e))
            });
            match started {
                Ok(thread) => threads.push(thread),
                Err(e) => {
                    // Stop the ones started: nothing was published to a device yet.
                    control.stop(Instant::now());
                    for t in threads {
                        let _ = t.join();
                    }
                    return Err(e);
                }
            }
        }
        control.set_peers(threads.iter().skip(1).map(|t| t.thread().clone()).collect());
        tracing::debug!(slots, rings, "forward transport up");
        Ok(Box::new(ForwardTransport {
            control,
            counters,
            rings,
            threads,
            descriptor: ctx.descriptor.clone(),
            _anchors: anchors,
            write_group,
        }))
    }
}

/// `abi::ForwardQueue::write_group` for `rings` in groups of `share`: the group
/// size where writes are routed and there are several groups of it (a power of
/// two dividing the rings), else 0 (every request by warp).
fn write_group(route_writes: bool, share: u32, rings: u32) -> u32 {
    if route_writes && share > 1 && share < rings && rings.is_multiple_of(share) {
        share
    } else {
        0
    }
}

/// The largest power of two not above `n` (`n >= 1`).
fn prev_power_of_two(n: u32) -> u32 {
    1 << (31 - n.max(1).leading_zeros())
}

/// Every forwarder thread's counters (one block each, for the rings it serves);
/// the channel's are their sums.
#[derive(Debug)]
struct ForwarderCounters(Vec<Arc<CounterBlock>>);

impl ForwarderCounters {
    fn new(forwarders: usize) -> Self {
        Self((0..forwarders).map(|_| Arc::default()).collect())
    }

    /// Forwarder `f`'s counters.
    fn of(&self, f: usize) -> Arc<CounterBlock> {
        self.0[f].clone()
    }

    fn snapshot(&self) -> Counters {
        CounterBlock::sum(self.0.iter().map(|b| &**b))
    }
}

/// How long past the close deadline `close()` waits for the thread to notice it.
const JOIN_GRACE: Duration = Duration::from_millis(200);

/// A running forward transport.
pub struct ForwardTransport {
    control: Arc<Control>,
    /// One block per forwarder thread.
    counters: ForwarderCounters,
    rings: u32,
    /// The forwarder threads, each serving a run of rings (emptied by `close()`).
    threads: Vec<JoinHandle<Exit>>,
    /// The channel's descriptor: the device counts its timed-out calls in `stats`.
    descriptor: Arc<dyn SharedMemory>,
    /// The io-wq anchors (`io_wq`), dropped after the threads that entered them
    /// were joined (a last reference dropped on one thread while another drops its
    /// own is ordered by an acquire fence, which ThreadSanitizer does not see).
    _anchors: Vec<Option<Arc<io_wq::Anchor>>>,
    /// `abi::ForwardQueue::write_group`: rings per group a file's long writes go
    /// to (0: none).
    write_group: u32,
}

impl std::fmt::Debug for ForwardTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForwardTransport")
            .field("counters", &self.counters.snapshot())
            .field("running", &self.threads.len())
            .finish()
    }
}

impl Transport for ForwardTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Forward
    }

    fn shape(&self) -> String {
        let rings = self.rings;
        let forwarders = self.counters.0.len() as u32;
        let groups = match self.write_group {
            0 => String::new(),
            g => format!(
                "; a file's long writes to one of {} groups of {g}",
                rings / g
            ),
        };
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let served = if forwarders == rings {
            let each = if rings == 1 { "its" } else { "each its" };
            format!("{each} own forwarder thread")
        } else {
            format!(
                "{forwarders} forwarder thread{} ({} rings each)",
                plural(forwarders),
                rings / forwarders
            )
        };
        format!("{rings} ring{}, {served}{groups}", plural(rings))
    }

    fn counters(&self) -> Counters {
        self.counters.snapshot()
    }

    fn violation(&self) -> Option<String> {
        self.control.violation()
    }

    fn close(&mut self, deadline: Instant) -> TransportReport {
        let mut problems = Vec::new();
        self.control.stop(deadline);
        if self.threads.is_empty() {
            problems.push("forwarder already stopped".to_string());
        }
        for thread in std::mem::take(&mut self.threads) {
            while !thread.is_finished() && Instant::now() < deadline + JOIN_GRACE {
                std::thread::sleep(Duration::from_micros(200));
            }
            if !thread.is_finished() {
                problems.push(format!(
                    "forwarder thread still running {JOIN_GRACE:?} past the deadline; left detached"
                ));
            } else {
                match thread.join() {
                    Ok(exit) => problems.extend(exit.problems()),
                    Err(_) => problems.push("forwarder thread panicked".to_string()),
                }
            }
        }
        TransportReport {
            counters: self.counters.snapshot(),
            // Counted by the device (gpuio/api.h's dispatch), read as it is now.
            timed_out: device_stats(&self.descriptor).timed_out,
            problems,
        }
    }
}

impl Drop for ForwardTransport {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            // Never closed: stop at once; the thread answers what is queued with
            // -ESHUTDOWN and ends by itself.
            self.control.stop(Instant::now());
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model;
// The host-side tests lay atomics over shared memory, which loom's cannot be.
#[cfg(all(test, not(loom)))]
mod tests;
