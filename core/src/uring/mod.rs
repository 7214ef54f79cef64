//! io_uring set-up for the direct transport: a ring whose memory gpuio owns.
//!
//! Three layers, in the cudarc manner:
//! * [`sys`] — the raw system calls (via `rustix::io_uring`), the only `unsafe`
//!   calls into the kernel, each with its precondition;
//! * this module — checked wrappers returning [`UringError`] (the call and its
//!   errno) and the ring's [`RingSpec`] / [`RingLayout`];
//! * [`ring`] — owners: [`DisabledRing`] (created with `IORING_SETUP_R_DISABLED`,
//!   where files, the fixed buffer and restrictions are registered) becomes an
//!   [`SqpollRing`] once enabled; dropping it closes the ring.
//!
//! The ring is created with `IORING_SETUP_SQPOLL | IORING_SETUP_NO_MMAP`: its SQ/CQ
//! rings and SQE array live in [`SharedMemory`](crate::memory::SharedMemory) the
//! caller allocated (so a device can map the same bytes), and the kernel's SQPOLL
//! thread consumes whatever a producer publishes to the SQ tail. Nothing in here
//! knows about devices: the direct transport (`crate::direct`) hands the layout to
//! the device and runs the waker.

pub mod ring;
pub mod sys;

use std::time::Duration;

pub use ring::{Completion, DisabledRing, Restrictions, SqpollRing};

/// Why an io_uring call failed.
#[derive(Debug, thiserror::Error)]
pub enum UringError {
    /// A system call failed with `errno`; `hint` says what usually causes it.
    #[error("{call} failed: {errno}{hint}")]
    Sys {
        call: &'static str,
        errno: rustix::io::Errno,
        hint: &'static str,
    },
    /// The kernel laid the ring out in a way gpuio cannot use, or the caller's
    /// memory does not fit it.
    #[error("io_uring ring layout: {0}")]
    Layout(String),
    /// The host tried to push an SQE into a full submission queue.
    #[error("the submission queue is full")]
    SqFull,
    /// The ring's fd was closed early ([`SqpollRing::stop`]); nothing more can be
    /// asked of the kernel about it.
    #[error("the ring was stopped (its fd closed)")]
    Stopped,
}

impl UringError {
    fn sys(call: &'static str, errno: rustix::io::Errno) -> Self {
        Self::Sys {
            call,
            errno,
            hint: "",
        }
    }

    /// The errno of a failed system call.
    pub fn errno(&self) -> Option<rustix::io::Errno> {
        match self {
            Self::Sys { errno, .. } => Some(*errno),
            _ => None,
        }
    }
}

impl From<UringError> for crate::transport::TransportError {
    fn from(e: UringError) -> Self {
        match e {
            UringError::Sys { call, errno, hint } => {
                let errno = errno.raw_os_error();
                let raw = std::io::Error::from_raw_os_error(errno);
                let source = if hint.is_empty() {
                    raw
                } else {
                    std::io::Error::new(raw.kind(), crate::transport::ErrnoError { errno, hint })
                };
                Self::Os { call, source }
            }
            other => Self::Unsupported(other.to_string()),
        }
    }
}

/// Longest [`retry_transient`] keeps trying.
pub const TRANSIENT_RETRY: Duration = Duration::from_millis(100);

/// Runs `call`, and again while it fails in a way `transient` accepts (`ENOMEM` or
/// `EAGAIN` from a ring set-up or a buffer registration), sleeping 1, 2, 4… ms
/// between tries, for at most [`TRANSIENT_RETRY`]; then returns its last result.
///
/// Why: the kernel frees a closed ring in a worker, moments after `close(2)`
/// returned, and only then takes the ring's pages (and any buffer still registered
/// on it) off the user's `RLIMIT_MEMLOCK` charge. A ring set up right after another
/// was closed (the probe's, or an earlier channel's) may be refused for that
/// moment. A limit that is simply too low fails the same way every time, so this
/// only costs the bound before the error is reported; callers check the limit
/// first where they can ([`crate::probe::Memlock`]).
pub fn retry_transient<T, E>(
    transient: impl Fn(&E) -> bool,
    mut call: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let deadline = std::time::Instant::now() + TRANSIENT_RETRY;
    let mut pause = Duration::from_millis(1);
    loop {
        match call() {
            Err(e) if transient(&e) && std::time::Instant::now() + pause < deadline => {
                tracing::debug!("transient refusal, trying again in {pause:?}");
                std::thread::sleep(pause);
                pause *= 2;
            }
            other => return other,
        }
    }
}

/// Whether `e` is an errno [`retry_transient`] waits out (`ENOMEM`, `EAGAIN`).
pub fn is_transient(e: &UringError) -> bool {
    matches!(
        e.errno(),
        Some(rustix::io::Errno::NOMEM) | Some(rustix::io::Errno::AGAIN)
    )
}

/// What ring to create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSpec {
    /// SQ entries (a power of two, at most [`sys::MAX_SQ_ENTRIES`]).
    pub sq_entries: u32,
    /// CQ entries (a power of two, at least `sq_entries`).
    pub cq_entries: u32,
    /// How long the SQPOLL thread polls an idle ring before it sleeps and sets
    /// `IORING_SQ_NEED_WAKEUP`.
    pub sq_thread_idle: Duration,
}

impl RingSpec {
    /// A ring of `sq_entries` with twice as many CQ entries.
    pub fn new(sq_entries: u32, sq_thread_idle: Duration) -> Self {
        Self {
            sq_entries,
            cq_entries: sq_entries.saturating_mul(2),
            sq_thread_idle,
        }
    }

    /// Checks the entry counts the kernel would otherwise round or refuse.
    pub fn check(&self) -> Result<(), UringError> {
        let ok = self.sq_entries.is_power_of_two()
            && self.sq_entries <= sys::MAX_SQ_ENTRIES
            && self.cq_entries.is_power_of_two()
            && self.cq_entries >= self.sq_entries
            && self.cq_entries <= sys::MAX_CQ_ENTRIES;
        if ok {
            Ok(())
        } else {
            Err(UringError::Layout(format!(
                "{} SQ / {} CQ entries: both must be powers of two, SQ <= {}, SQ <= CQ <= {}",
                self.sq_entries,
                self.cq_entries,
                sys::MAX_SQ_ENTRIES,
                sys::MAX_CQ_ENTRIES
            )))
        }
    }

    /// Bytes for the SQ and CQ rings (`IORING_SETUP_NO_MMAP`'s `cq_off.user_addr`
    /// region). An upper bound of the kernel's `rings_size()`: the `io_rings`
    /// header (well under a page), the CQE array, then the SQ index array.
    pub fn rings_bytes(&self) -> usize {
        let page = rustix::param::page_size();
        let n =
            page + self.cq_entries as usize * sys::CQE_SIZE + page + self.sq_entries as usize * 4;
        n.div_ceil(page) * page
    }

    /// Bytes for the SQE array (`sq_off.user_addr` region).
    pub fn sqes_bytes(&self) -> usize {
        let page = rustix::param::page_size();
        (self.sq_entries as usize * sys::SQE_SIZE).div_ceil(page) * page
    }
}

/// Where the kernel put each ring field: byte offsets into the rings region
/// (`io_sqring_offsets` / `io_cqring_offsets` as `io_uring_setup` returned them),
/// and the entry counts it settled on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingLayout {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub sq_mask: u32,
    pub cq_mask: u32,
    pub sq_head: u32,
    pub sq_tail: u32,
    pub sq_flags: u32,
    pub sq_dropped: u32,
    pub sq_array: u32,
    pub cq_head: u32,
    pub cq_tail: u32,
    pub cq_overflow: u32,
    pub cqes: u32,
}

impl RingLayout {
    fn from_params(p: &sys::io_uring_params) -> Self {
        Self {
            sq_entries: p.sq_entries,
            cq_entries: p.cq_entries,
            sq_mask: p.sq_entries.wrapping_sub(1),
            cq_mask: p.cq_entries.wrapping_sub(1),
            sq_head: p.sq_off.head,
            sq_tail: p.sq_off.tail,
            sq_flags: p.sq_off.flags,
            sq_dropped: p.sq_off.dropped,
            sq_array: p.sq_off.array,
            cq_head: p.cq_off.head,
            cq_tail: p.cq_off.tail,
            cq_overflow: p.cq_off.overflow,
            cqes: p.cq_off.cqes,
        }
    }

    /// Every field lies inside a rings region of `rings_len` bytes, aligned.
    fn check(&self, rings_len: usize) -> Result<(), UringError> {
        let words = [
            ("sq head", self.sq_head),
            ("sq tail", self.sq_tail),
            ("sq flags", self.sq_flags),
            ("sq dropped", self.sq_dropped),
            ("cq head", self.cq_head),
            ("cq tail", self.cq_tail),
            ("cq overflow", self.cq_overflow),
        ];
        let arrays = [
            ("sq array", self.sq_array, self.sq_entries as usize * 4, 4),
            (
                "cqes",
                self.cqes,
                self.cq_entries as usize * sys::CQE_SIZE,
                8,
            ),
        ];
        let spans = words
            .iter()
            .map(|&(n, o)| (n, o, 4usize, 4usize))
            .chain(arrays);
        for (name, off, len, align) in spans {
            let off = off as usize;
            if off + len > rings_len || !off.is_multiple_of(align) {
                return Err(UringError::Layout(format!(
                    "{name} at {off}+{len} does not fit a rings region of {rings_len} bytes"
                )));
            }
        }
        if !self.sq_entries.is_power_of_two() || !self.cq_entries.is_power_of_two() {
            return Err(UringError::Layout(format!(
                "entry counts {} / {} are not powers of two",
                self.sq_entries, self.cq_entries
            )));
        }
        Ok(())
    }
}
