//! The transport role: how requests travel between a kernel and the host.
//!
//! A transport is built inside [`OpenContext`] (which owns every allocation, so the
//! memory outlives any kernel still holding the descriptor), fills in its part of
//! the descriptor, runs whatever host threads it needs, and on [`Transport::close`]
//! drains what is in flight within a deadline and reports counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::abi::{self, TransportKind};
use crate::endpoint::Endpoint;
use crate::memory::{
    ChannelMemory, KeepAlive, LocalMemory, MemoryError, MemoryProvider, SharedMemory, SharedRegion,
};

/// Counts a transport keeps. At a clean close `submitted == completed + failed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests accepted (validated and handed on, or published to the kernel).
    pub submitted: u64,
    /// Requests that finished with a result `>= 0`.
    pub completed: u64,
    /// Requests that finished with `-errno`, refused ones included.
    pub failed: u64,
}

impl Counters {
    /// Requests finished, successfully or not.
    pub fn finished(&self) -> u64 {
        self.completed.saturating_add(self.failed)
    }

    /// Requests accepted but not finished; 0 when more finished than were accepted,
    /// which [`Counters::excess`] counts.
    pub fn unfinished(&self) -> u64 {
        self.submitted.saturating_sub(self.finished())
    }

    /// Requests finished beyond those accepted. No honest channel has any: only a
    /// kernel that wrote ring words or counters it does not own (a direct SQ tail
    /// moved a lap ahead makes the kernel replay stale SQEs, each completing again)
    /// can make them, so they are a protocol violation, never clamped away.
    pub fn excess(&self) -> u64 {
        self.finished().saturating_sub(self.submitted)
    }

    /// `submitted == completed + failed`: nothing left unfinished, nothing finished
    /// twice.
    pub fn balanced(&self) -> bool {
        self.submitted == self.finished()
    }
}

/// What a transport says when it closes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportReport {
    pub counters: Counters,
    /// Device calls that gave up waiting (`-ETIMEDOUT`), where the transport knows.
    pub timed_out: u64,
    /// What could not be finished or cleaned up, in words.
    pub problems: Vec<String>,
}

/// The counters the device keeps in a channel's descriptor ([`abi::Channel::stats`]),
/// as it last stored them. Every transport's device side counts its timed-out
/// calls there; only direct's counts its requests there too.
pub fn device_stats(descriptor: &Arc<dyn SharedMemory>) -> abi::Stats {
    use std::mem::offset_of;
    use std::sync::atomic::Ordering;
    let base = offset_of!(abi::Channel, stats);
    let read = |field: usize| match descriptor.atomic_u64(base + field) {
        Ok(a) => a.load(Ordering::Acquire),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the device's counters in the descriptor");
            0
        }
    };
    abi::Stats {
        submitted: read(offset_of!(abi::Stats, submitted)),
        completed: read(offset_of!(abi::Stats, completed)),
        failed: read(offset_of!(abi::Stats, failed)),
        timed_out: read(offset_of!(abi::Stats, timed_out)),
        _pad: [0; 4],
    }
}

/// Why a transport (or channel) could not be set up or used.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("{call} failed: {source}")]
    Os {
        call: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error("invalid channel configuration: {0}")]
    Config(String),
    /// An endpoint's declared access cannot be enforced by this transport.
    #[error(transparent)]
    Endpoint(#[from] crate::endpoint::ConfineError),
    /// What the channel would pin exceeds a process limit, known before any system
    /// call (the direct transport's staging area against `RLIMIT_MEMLOCK`).
    /// `reason` gives the numbers and what to do about them.
    #[error("{reason}")]
    Limit {
        /// The limit's name (`RLIMIT_MEMLOCK`).
        limit: &'static str,
        /// Bytes the channel needs under it.
        need: u64,
        /// Bytes the limit allows.
        allowed: u64,
        reason: String,
    },
}

impl TransportError {
    /// An OS call failure from an errno-style error.
    pub fn os(call: &'static str, source: impl Into<std::io::Error>) -> Self {
        Self::Os {
            call,
            source: source.into(),
        }
    }

    /// The errno of the failed system call, where the failure was one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Self::Os { source, .. } | Self::Memory(MemoryError::Os { source, .. }) => {
                errno_of(source)
            }
            _ => None,
        }
    }

    /// Whether the failure is about resources of this machine or process rather
    /// than about the request: memory or pinned-memory limits (`ENOMEM`, `EAGAIN`,
    /// `ENOBUFS`, [`Self::Limit`]), descriptors (`EMFILE`, `ENFILE`), permission to
    /// use a facility (`EPERM`, `EACCES`: io_uring switched off, a seccomp filter) or
    /// a facility the kernel lacks ([`Self::Unsupported`]). Another transport may
    /// then open where this one could not; a bad configuration or an endpoint this
    /// transport cannot confine is not such a failure.
    pub fn is_resource(&self) -> bool {
        match self {
            Self::Limit { .. } | Self::Unsupported(_) => true,
            Self::Os { .. } | Self::Memory(MemoryError::Os { .. }) => {
                self.errno().is_some_and(is_resource_errno)
            }
            Self::Memory(_) | Self::Config(_) | Self::Endpoint(_) => false,
        }
    }
}

/// The errnos [`TransportError::is_resource`] counts as resource failures.
pub fn is_resource_errno(errno: i32) -> bool {
    [
        libc::ENOMEM,
        libc::EAGAIN,
        libc::EPERM,
        libc::EACCES,
        libc::EMFILE,
        libc::ENFILE,
        libc::ENOBUFS,
    ]
    .contains(&errno)
}

/// The errno inside `e`: its own, or that of an [`ErrnoError`] it wraps (an errno
/// given with more words).
fn errno_of(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ErrnoError>())
            .map(|inner| inner.errno)
    })
}

/// An errno with a hint after the system's text (`Cannot allocate memory (os error
/// 12) (pinned memory counts against RLIMIT_MEMLOCK…)`), keeping the errno readable
/// by [`TransportError::errno`].
#[derive(Debug)]
pub struct ErrnoError {
    pub errno: i32,
    pub hint: &'static str,
}

impl std::fmt::Display for ErrnoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}",
            std::io::Error::from_raw_os_error(self.errno),
            self.hint
        )
    }
}

impl std::error::Error for ErrnoError {}

/// What a transport is built from.
pub struct OpenContext<'a> {
    pub provider: &'a Arc<dyn MemoryProvider>,
    pub endpoints: &'a [Arc<Endpoint>],
    /// The staging area (shared).
    pub staging: SharedRegion,
    /// The descriptor's own shared memory (the direct transport reads `stats`).
    pub descriptor: Arc<dyn SharedMemory>,
    /// Request slots (power of two) and staging bytes per slot.
    pub slots: u32,
    pub slot_size: u32,
    /// The descriptor being built; the transport fills its own fields.
    pub desc: &'a mut abi::Channel,
    pub(crate) memory: Arc<ChannelMemory>,
}

impl OpenContext<'_> {
    /// Zeroed shared memory kept alive as long as the channel and its kernels.
    pub fn alloc_shared(&self, len: usize) -> Result<Arc<dyn SharedMemory>, TransportError> {
        let m: Arc<dyn SharedMemory> = Arc::from(self.provider.alloc_shared(len)?);
        self.memory.keep_shared(m.clone());
        Ok(m)
    }

    /// A handle on every allocation of the channel (the staging area and descriptor
    /// included, once `Channel::open` finishes): a host thread that may outlive
    /// `Transport::close` (stuck in a blocking syscall) holds one, so the memory it
    /// still reads or writes is never freed under it.
    pub fn keepalive(&self) -> KeepAlive {
        KeepAlive(self.memory.clone())
    }

    /// Zeroed device-local memory kept alive as long as the channel and its kernels.
    pub fn alloc_local(&self, len: usize) -> Result<Arc<dyn LocalMemory>, TransportError> {
        let m: Arc<dyn LocalMemory> = Arc::from(self.provider.alloc_local(len)?);
        self.memory.keep_local(m.clone());
        Ok(m)
    }
}

/// Slots of at least this many bytes make a channel of long transfers, which gets
/// more host threads unless told otherwise (forward's
/// [`BULK_RINGS`](crate::forward::BULK_RINGS), mailbox's server threads): long
/// transfers want many threads to copy and write, while small calls from the whole
/// device want few polling at once (on a 16-core H200 host, 2026-11-29, whole-device
/// NOPs on 1024 slots: forward 2.3–2.8 M/s in 16 rings against 65–81 in 4; mailbox
/// 2.8–3.1 with 16 threads against 4.4–5.7 with 4).
pub const BULK_SLOT_SIZE: u32 = 1 << 20;

/// Builds one kind of transport. Implemented once per transport; the facade holds
/// one builder per (backend, transport) pair.
pub trait TransportBuilder: Send + Sync {
    fn kind(&self) -> TransportKind;
    fn build(&self, ctx: &mut OpenContext<'_>) -> Result<Box<dyn Transport>, TransportError>;
}

/// A transport at work.
pub trait Transport: Send {
    fn kind(&self) -> TransportKind;
    /// How it serves the channel on the host, in words (`gpuio run` shows it):
    /// the threads and rings its defaults or settings chose. Empty if nothing was
    /// chosen.
    fn shape(&self) -> String {
        String::new()
    }
    /// Counts so far.
    fn counters(&self) -> Counters;
    /// The first protocol violation the transport saw while the channel is open
    /// (a kernel writing words it does not own), if it checks for any before
    /// `close()`; `close()` reports it either way.
    fn violation(&self) -> Option<String> {
        None
    }
    /// Drain everything accepted, stop host threads, release the OS resources the
    /// transport holds (memory stays with the channel). Returns by `deadline`
    /// whatever happens, saying what it could not finish.
    fn close(&mut self, deadline: Instant) -> TransportReport;
}

/// One host thread's share of a transport's [`Counters`], written by that thread
/// alone, on cache lines of its own; a transport with several threads keeps one
/// each and reads their sum ([`CounterBlock::sum`]). (Shared by every thread, the
/// two read-modify-writes a request makes bounced one line between them: on an
/// H200, 2026-11-27, that line held forward's whole-device NOPs at 8.95 M/s, 15.3-17.9
/// M/s with a block per thread.)
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CounterBlock {
    submitted: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
}

impl CounterBlock {
    /// A request was accepted.
    pub fn submitted(&self) {
        self.submitted.fetch_add(1, Ordering::AcqRel);
    }

    /// A request finished with `result` (`>= 0`: completed, else failed).
    pub fn finished(&self, result: i64) {
        let counter = if result >= 0 {
            &self.completed
        } else {
            &self.failed
        };
        counter.fetch_add(1, Ordering::AcqRel);
    }

    /// The transport's counts: the sum of its threads' blocks. Every block's
    /// finishes are read before any submission: a request is counted submitted (by
    /// the thread that takes it) before it finishes, and counts only grow, so the
    /// sum never shows more finished than submitted.
    pub fn sum<'a>(blocks: impl Iterator<Item = &'a CounterBlock> + Clone) -> Counters {
        let total = |f: fn(&CounterBlock) -> &AtomicU64| -> u64 {
            blocks.clone().map(|b| f(b).load(Ordering::Acquire)).sum()
        };
        let completed = total(|b| &b.completed);
        let failed = total(|b| &b.failed);
        let submitted = total(|b| &b.submitted);
        Counters {
            submitted,
            completed,
            failed,
        }
    }
}

/// How long an idle host thread that serves the device's requests (a forwarder, a
/// mailbox server) watches the one place the device's next request most likely
/// comes to, between passes over all of them, unless told otherwise ([`watch`]).
pub const DEFAULT_WATCH: Duration = Duration::from_micros(2);

/// The longest watch an environment variable may ask for ([`watch_from`]).
pub const MOST_WATCH: Duration = Duration::from_micros(100);

/// Looks between two readings of the clock in [`watch`].
const WATCH_LOOKS: u32 = 16;

/// Looks at `ready` until it says yes or `how_long` has passed: whether it said yes.
/// A host thread that passes over many request slots in turn sees a request
/// published while a pass runs only at the pass's end, so a lone device thread's
/// round trip varied with where in the pass its slot fell (H100, 2026-12-07, run
/// 214: forward's first read of the answer found it in 30-90 % of calls without a
/// watch, 88-99 % with one of 2 µs); between passes that found nothing, a thread
/// watches the slot the next request most likely comes to.
pub fn watch(how_long: Duration, ready: impl Fn() -> bool) -> bool {
    let until = Instant::now() + how_long;
    loop {
        for _ in 0..WATCH_LOOKS {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if Instant::now() >= until {
            return false;
        }
    }
}

/// A watch's length from environment variable `name`'s `value`, if set:
/// nanoseconds up to [`MOST_WATCH`] (0: no watch); anything else is reported and
/// gives [`DEFAULT_WATCH`].
pub fn watch_from(name: &str, value: Option<&str>) -> Duration {
    let Some(v) = value else {
        return DEFAULT_WATCH;
    };
    match v.trim().parse::<u64>() {
        Ok(n) if n <= MOST_WATCH.as_nanos() as u64 => Duration::from_nanos(n),
        _ => {
            tracing::warn!(
                value = v,
                "{name} is not a count of nanoseconds up to {}; using {}",
                MOST_WATCH.as_nanos(),
                DEFAULT_WATCH.as_nanos()
            );
            DEFAULT_WATCH
        }
    }
}

/// Idle rounds a [`Backoff`] spins before it yields.
const SPIN_ROUNDS: u32 = 64;

/// Sleeps that grow from a spin to `max`: host threads poll shared memory with this
/// so an idle channel costs almost no CPU and a busy one answers at once. A thread
/// spins, then yields, until it has been idle for [`Backoff::SPIN_FOR`]; then it
/// sleeps, longer each time up to `max`. After [`Backoff::DEEP_AFTER`] without work
/// the sleeps grow further, to [`Backoff::DEEP_MAX`]: a channel left open and idle
/// then wakes each of its threads about a hundred times a second, and the first
/// request after such a quiet spell waits that much longer; after
/// [`Backoff::DEEPER_AFTER`], up to [`Backoff::DEEPER_MAX`]. (Measured on the CPU
/// device, 2026-11-26: an idle forwarder or printf-log thread spent about 20 µs of
/// CPU a wake-up, so a hundred wake-ups a second were a quarter of a percent of a
/// core each; an idle forward channel with a stdout log cost 1.1-1.3 % of a core on
/// an H100's host.)
#[derive(Debug)]
pub struct Backoff {
    idle_rounds: u32,
    /// Sleeps since work was last found.
    sleeps: u32,
    idle_since: Option<std::time::Instant>,
    max: Duration,
    /// Sleep with `std::thread::park_timeout`, so another thread can cut the sleep
    /// short with `Thread::unpark`.
    park: bool,
}

impl Backoff {
    /// Idle this long before the first sleep. Any sleep takes at least the
    /// kernel's timer slack (50 µs for an ordinary thread), ten device round trips:
    /// a thread that slept after 128 idle rounds, as this once did, slept through
    /// the gaps between a busy device's bursts. (H200, 2026-11-27, whole-device
    /// NOPs on a forward channel of 1024 slots: in 16 rings 2.8 M/s, each forwarder
    /// asleep ~400 ms in ~5,000 sleeps, ~100 ms of it before the launch; in 4
    /// rings, busier each, 27-36 M/s. With this spell, in one call against the
    /// earlier backoff: 16 rings 21.2 / 7.7 M/s against 9.8 / 6.7.)
    pub const SPIN_FOR: Duration = Duration::from_micros(200);
    /// Idle this long before the sleeps grow past `max`.
    pub const DEEP_AFTER: Duration = Duration::from_millis(100);
    /// The longest sleep after a quiet spell.
    pub const DEEP_MAX: Duration = Duration::from_millis(10);
    /// Idle this long before the sleeps grow past `DEEP_MAX`.
    pub const DEEPER_AFTER: Duration = Duration::from_secs(1);
    /// The longest sleep after a long quiet spell.
    pub const DEEPER_MAX: Duration = Duration::from_millis(50);

    pub fn new(max: Duration) -> Self {
        Self {
            idle_rounds: 0,
            sleeps: 0,
            idle_since: None,
            max,
            park: false,
        }
    }
    /// [`Backoff::new`], but its sleeps end early when another thread unparks this
    /// one.
    pub fn parking(max: Duration) -> Self {
        Self {
            park: true,
            ..Self::new(max)
        }
    }
    /// Whether it is still in its first idle rounds, spinning (not yet yielding or
    /// sleeping).
    pub fn spinning(&self) -> bool {
        self.idle_rounds < SPIN_ROUNDS
    }
    /// Whether it has been idle long enough to sleep (not just spin or yield).
    pub fn sleeping(&self) -> bool {
        self.sleeps > 0
    }
    /// Work was found: poll hot again.
    pub fn reset(&mut self) {
        self.idle_rounds = 0;
        self.sleeps = 0;
        self.idle_since = None;
    }
    /// Nothing to do: spin, then yield until idle for `SPIN_FOR`, then sleep longer
    /// each time up to `max` (up to `DEEP_MAX` once idle for `DEEP_AFTER`,
    /// `DEEPER_MAX` once idle for `DEEPER_AFTER`). Returns how long it slept, if it did.
    pub fn idle(&mut self) -> Option<Duration> {
        self.idle_rounds = self.idle_rounds.saturating_add(1);
        let since = *self.idle_since.get_or_insert_with(std::time::Instant::now);
        if self.idle_rounds <= SPIN_ROUNDS {
            std::hint::spin_loop();
            return None;
        }
        let idle = since.elapsed();
        if idle < Self::SPIN_FOR {
            std::thread::yield_now();
            return None;
        }
        self.sleeps = self.sleeps.saturating_add(1);
        let cap = if idle >= Self::DEEPER_AFTER {
            self.max.max(Self::DEEPER_MAX)
        } else if idle >= Self::DEEP_AFTER {
            self.max.max(Self::DEEP_MAX)
        } else {
            self.max
        };
        let us = 1u64 << self.sleeps.min(20);
        let sleep = Duration::from_micros(us).min(cap);
        let start = std::time::Instant::now();
        if self.park {
            std::thread::park_timeout(sleep);
        } else {
            std::thread::sleep(sleep);
        }
        Some(start.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uring::UringError;

    #[test]
    fn a_transports_counts_are_the_sum_of_its_threads_blocks() {
        let blocks: Vec<CounterBlock> = (0..3).map(|_| CounterBlock::default()).collect();
        for (i, b) in blocks.iter().enumerate() {
            for _ in 0..=i {
                b.submitted();
            }
            b.finished(0);
            if i > 0 {
                b.finished(-i64::from(libc::EIO));
            }
        }
        let c = CounterBlock::sum(blocks.iter());
        assert_eq!(
            c,
            Counters {
                submitted: 6,
                completed: 3,
                failed: 2,
            }
        );
        assert_eq!(c.unfinished(), 1);
        assert_eq!(c.excess(), 0);
    }

    #[test]
    fn resource_failures_are_told_apart_from_bad_requests() {
        let os =
            |errno| TransportError::os("io_uring_setup", std::io::Error::from_raw_os_error(errno));
        for errno in [
            libc::ENOMEM,
            libc::EAGAIN,
            libc::EPERM,
            libc::EMFILE,
            libc::ENOBUFS,
        ] {
            assert!(os(errno).is_resource(), "errno {errno}");
        }
        for errno in [libc::EINVAL, libc::EBADF, libc::EFAULT] {
            assert!(!os(errno).is_resource(), "errno {errno}");
        }
        assert!(!TransportError::Config("x".into()).is_resource());
        assert!(TransportError::Unsupported("x".into()).is_resource());
        let limit = TransportError::Limit {
            limit: "RLIMIT_MEMLOCK",
            need: 2,
            allowed: 1,
            reason: "too low".into(),
        };
        assert!(limit.is_resource());
        assert_eq!(limit.to_string(), "too low");
    }

    #[test]
    fn an_errno_given_with_a_hint_keeps_its_errno_and_its_words() {
        let e: TransportError = UringError::Sys {
            call: "io_uring_register(IORING_REGISTER_BUFFERS)",
            errno: rustix::io::Errno::NOMEM,
            hint: " (raise `ulimit -l`)",
        }
        .into();
        assert_eq!(e.errno(), Some(libc::ENOMEM));
        assert!(e.is_resource());
        let text = e.to_string();
        assert!(text.contains("(os error 12) (raise `ulimit -l`)"), "{text}");
    }
}
