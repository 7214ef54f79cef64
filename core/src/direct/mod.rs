//! The direct transport: the device writes io_uring SQEs itself, the kernel's
//! SQPOLL thread does the I/O, and the device reaps the CQEs. No host thread touches
//! the data path.
//!
//! Host work, and where it lives:
//! * set-up (`direct/host.rs`): one SQPOLL ring per channel in the channel's shared memory
//!   (`IORING_SETUP_NO_MMAP`), `slots` SQ entries and `2 × slots` CQ entries,
//!   created disabled and confined before it is enabled — the endpoints are the
//!   fixed-file table in index order, the staging area is fixed buffer 0, and only
//!   `NOP`, `READ_FIXED` and `WRITE_FIXED` with `IOSQE_FIXED_FILE` are accepted —
//!   so whatever bytes a kernel writes into an SQE, it reaches only registered files
//!   and staging memory. `IOSQE_ASYNC` may be set: the device sets it on positioned
//!   transfers of 64 KiB and more, which then run on the kernel's io-wq workers,
//!   many at once, instead of one after another on the SQPOLL thread (H100,
//!   2026-11-28, whole-device 1 MiB reads of one file: 17.5 GB/s, the median of
//!   three, against 5.5). The kernel counts a marked request on a fixed file with
//!   sockets' and pipes' work (the file is looked up only when a worker runs it), so
//!   one cap, [`DirectBuilder::io_workers`], bounds both the workers of the device's
//!   transfers and those a raw SQE could hold with a marked socket or pipe read
//!   that waits. Capped at four, four workers ran and reads stopped at 14.6 GB/s;
//!   at the H200 host's 16 CPUs, 16 ran them at 33.4 (H200, 2026-11-28, run 101,
//!   three repeats each; 8: 23.1; uncapped: 31.1, with up to 493 workers on one
//!   file's writes). Nor does the kernel keep one file's marked writes apart (it
//!   serializes only the bounded kind by file), so the device does: a marked write
//!   takes a device-local gate of its file's bucket (`write_gates`, endpoint % 32)
//!   before its SQE is written, one write at a time, given back with its completion
//!   (`GPUIO_DIRECT_WRITE_DEPTH`, `gpuio/direct.h`); a write that has waited half its
//!   timeout for its turn goes without it, so the gate never fails a write. One
//!   file's 1 MiB writes from the whole device: the same 3 GB/s at 0.65 s of host CPU
//!   per GB instead of 4.0; a file per SM group: 18.3 GB/s instead of 8.9 (H200, run
//!   104). Sockets' `SEND`/`RECV` requests go as
//!   `WRITE_FIXED`/`READ_FIXED` too (the same calls on a socket): io_uring's `SEND`/`RECV` take a
//!   buffer address no restriction binds to the staging area, so the ring refuses
//!   them (`crate::request`, "Sockets"). Each registered file carries exactly its endpoint's
//!   declared access ([`Endpoint::fd_with_declared_access`]: a file opened
//!   read-write but declared read-only is registered as a read-only reopening), so
//!   a raw `WRITE_FIXED` on it fails with `-EBADF` in io_uring itself; an endpoint
//!   that cannot be narrowed (a socket declared read-only) fails the open. The device-local `DirectState` and `DirectSlot[slots]`
//!   (zeroed: every slot free for lap 0) are allocated and `desc.direct` filled in.
//! * the waker ([`waker`]): wakes the SQPOLL thread when it sleeps with work pending,
//!   and checks the SQ words each time it looks: an SQ tail that a kernel moved
//!   itself is a protocol violation it reports while the kernel runs
//!   ([`Transport::violation`]), stopping the ring at once so that SQPOLL does not
//!   replay stale SQEs until `close()`.
//! * teardown ([`DirectTransport::close`]): waits (bounded) until the ring has
//!   settled — every SQ position taken published, every SQE consumed, every
//!   published request completed — and stayed so for `close_quiet`, with the waker
//!   still running; then stops the waker and closes the ring. Requests that sit in
//!   the kernel while nothing moves for `cancel_after` (a read of a pipe nobody
//!   writes) are cancelled once (`IORING_REGISTER_SYNC_CANCEL`, the one
//!   registration the ring's restrictions leave the host), so they are answered
//!   `-ECANCELED` and counted as failed instead of waited for. The channel sets
//!   `closing` first; a device call that takes an SQ position afterwards sees it
//!   and fills its SQE with a NOP answering `-ESHUTDOWN` instead of a request, so
//!   nothing is accepted after the drain.
//!
//! **The close handshake.** The host stores `closing` in the kernel's copy of the
//! descriptor ([`LocalMemory::store_u32`](crate::memory::LocalMemory::store_u32)),
//! fences, then reads `sq_reserve` ([`LocalMemory::read`](crate::memory::LocalMemory::read));
//! a device submitter takes its SQ position from `sq_reserve` (an atomic), fences
//! (device scope, sequentially consistent), then reads `closing` from its copy. All
//! four accesses are to device memory, and each is made where that memory is
//! coherent (a GPU's L2; the host's copies go through it too, and each has finished
//! before the next begins). So if the submitter read `closing` before the host's
//! store, its position was taken before that, and the host's later read sees it and
//! drains it; otherwise the submitter sees `closing`. (On the CPU device both sides
//! are CPU threads and the fences are sequentially consistent ones.) The handshake
//! read the shared descriptor's `closing` across PCIe, behind a system-scope fence,
//! until 2026-11-29: 2.8 µs of each submit, measured on an H200.
//!
//! The device side is `device/include/gpuio/direct.h`; the protocol is in
//! [`crate::abi`]'s module doc.
//!
//! **Who reaps at close.** Only the device reaps the CQ: its reap lock lives in
//! device memory, and the host cannot tell whether a kernel still runs, so reaping
//! from the host could race a device reaper. Completions that no device thread
//! reaped (a kernel whose waiters timed out and returned, or one that died) stay in
//! the CQ; `close()` reads them without consuming them and counts them in its report,
//! so a request the kernel completed is never reported as lost.

mod host;
#[cfg(all(test, loom))]
mod loom_model;
pub mod waker;

use std::time::{Duration, Instant};

use crate::abi::TransportKind;
#[cfg(doc)]
use crate::endpoint::Endpoint;
use crate::transport::{
    Counters, OpenContext, Transport, TransportBuilder, TransportError, TransportReport,
};

use host::{RingOwner, Snapshot};
pub use waker::{PublishedWord, Waker, WakerConfig};

/// Bits of an SQE's `user_data` below which the device puts the request's position;
/// above them it puts the errno of a request its rulebook refused, submitted as a
/// NOP (`GPUIO_DIRECT_SEQ_SHIFT` and `gpuio_direct_submit` in `gpuio/direct.h`).
const REFUSED_SHIFT: u32 = 52;

/// Whether a completion answers its request with success: `res >= 0`, and not the
/// NOP that answers a refused request (whose waiter is answered `-errno`).
fn answered_ok(c: &crate::uring::Completion) -> bool {
    c.res >= 0 && c.user_data >> REFUSED_SHIFT == 0
}

use crate::channel::ChannelConfig;
use crate::uring::RingSpec;

/// Bytes a direct channel opened with `config` pins, charged to `RLIMIT_MEMLOCK`
/// in a process without `CAP_IPC_LOCK`: the staging area (registered as an io_uring
/// fixed buffer, whole pages) and the ring's memory (SQ and CQ rings, SQE array;
/// an upper bound of what the kernel charges for them). 17 MiB + 36 KiB for the
/// default configuration.
pub fn pinned_bytes(config: &ChannelConfig) -> u64 {
    let page = rustix::param::page_size() as u64;
    let spec = RingSpec::new(config.effective_slots(), Duration::ZERO);
    config.staging_len().div_ceil(page) * page
        + spec.rings_bytes() as u64
        + spec.sqes_bytes() as u64
}

/// Builds direct transports. `Default` gives a 50 ms SQPOLL idle time and a waker
/// polling every 30 µs while busy, backing off to 1 ms when idle.
#[derive(Clone, Debug)]
pub struct DirectBuilder {
    /// How long the kernel's SQPOLL thread polls an idle ring before it sleeps
    /// (then the waker has to wake it: a few tens of µs more on the next request).
    pub sq_thread_idle: Duration,
    pub waker: WakerConfig,
    /// How long the ring must stay settled before `close()` believes it.
    pub close_quiet: Duration,
    /// While closing: how long requests may sit in the kernel with nothing on the
    /// ring moving before `close()` cancels them (a read of a pipe nobody writes),
    /// so that they are answered `-ECANCELED` and counted instead of waited for.
    pub cancel_after: Duration,
    /// Most of the kernel's io-wq workers the ring's marked requests run on at once
    /// (`IORING_REGISTER_IOWQ_MAX_WORKERS`): the device's large file transfers, and
    /// any socket or pipe read a raw SQE marks, which holds its worker while it
    /// waits. Default: the machine's CPUs, at least [`MIN_IO_WORKERS`].
    pub io_workers: u32,
}

/// The least [`DirectBuilder::io_workers`] defaults to.
pub const MIN_IO_WORKERS: u32 = 4;

/// The machine's CPUs (as the process may use them), at least [`MIN_IO_WORKERS`].
fn default_io_workers() -> u32 {
    std::thread::available_parallelism()
        .map_or(MIN_IO_WORKERS, |n| {
            u32::try_from(n.get()).unwrap_or(u32::MAX)
        })
        .max(MIN_IO_WORKERS)
}

impl Default for DirectBuilder {
    fn default() -> Self {
        Self {
            sq_thread_idle: Duration::from_millis(50),
            waker: WakerConfig::default(),
            close_quiet: Duration::from_millis(2),
            cancel_after: Duration::from_millis(50),
            io_workers: default_io_workers(),
        }
    }
}

impl DirectBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn sq_thread_idle(mut self, idle: Duration) -> Self {
        self.sq_thread_idle = idle;
        self
    }

    pub fn waker(mut self, waker: WakerConfig) -> Self {
        self.waker = waker;
        self
    }

    /// [`DirectBuilder::io_workers`] (0: as many as the kernel allows).
    pub fn io_workers(mut self, workers: u32) -> Self {
        self.io_workers = workers;
        self
    }
}

impl TransportBuilder for DirectBuilder {
    fn kind(&self) -> TransportKind {
        TransportKind::Direct
    }

    fn build(&self, ctx: &mut OpenContext<'_>) -> Result<Box<dyn Transport>, TransportError> {
        let owner = RingOwner::open(ctx, self)?;
        let published = PublishedWord::new(
            ctx.descriptor.clone(),
            std::mem::offset_of!(crate::abi::Channel, stats)
                + std::mem::offset_of!(crate::abi::Stats, submitted),
        )?;
        let waker = Waker::spawn(owner.ring.clone(), Some(published), self.waker)?;
        Ok(Box::new(DirectTransport {
            owner: Some(owner),
            waker,
            entries: ctx.slots,
            close_quiet: self.close_quiet,
            cancel_after: self.cancel_after,
        }))
    }
}

/// A direct channel's host side: the ring and its waker.
#[derive(Debug)]
pub struct DirectTransport {
    /// `None` once closed (the ring fd is closed with it).
    owner: Option<RingOwner>,
    waker: Waker,
    /// The ring's SQ entries (one per slot).
    entries: u32,
    close_quiet: Duration,
    cancel_after: Duration,
}

/// How a drain ended.
struct Drained {
    /// The last snapshot.
    snap: Snapshot,
    /// Whether the ring settled (and stayed so for `close_quiet`).
    settled: bool,
    /// Whether requests stuck in the kernel were cancelled.
    cancelled: bool,
    /// Protocol violations seen ([`Snapshot::violations`]); the drain stops at the
    /// first snapshot that shows one.
    violations: Vec<String>,
    problems: Vec<String>,
}

impl DirectTransport {
    /// Polls until the ring has settled and stayed so for `close_quiet`, or until
    /// `deadline`, or until a snapshot shows a protocol violation or the waker saw
    /// one (and stopped the ring, which then never settles): a ring that a
    /// kernel scribbled over never settles (SQPOLL may replay stale SQEs for as long
    /// as the ring lives), so waiting longer only lets the damage go on. Requests that
    /// sit in the kernel with nothing moving for `cancel_after` are cancelled, once:
    /// their `-ECANCELED` completions then settle the ring.
    fn drain(&self, owner: &RingOwner, deadline: Instant) -> Drained {
        let mut stable: Option<(Snapshot, Instant)> = None;
        let mut moved: Option<(Snapshot, Instant)> = None;
        let mut cancelled = false;
        let mut problems = Vec::new();
        loop {
            let s = owner.snapshot();
            let now = Instant::now();
            let violations = s.violations();
            if !violations.is_empty() || self.waker.violation().is_some() {
                return Drained {
                    snap: s,
                    settled: false,
                    cancelled,
                    violations,
                    problems,
                };
            }
            match moved {
                Some((prev, _)) if prev == s => {}
                _ => moved = Some((s, now)),
            }
            let still_since = moved.map_or(now, |(_, t)| t);
            if !s.settled()
                && !cancelled
                && s.only_in_kernel()
                && now.duration_since(still_since) >= self.cancel_after
            {
                cancelled = true;
                tracing::info!(?s, "closing: cancelling requests the kernel never finished");
                let wait = deadline
                    .saturating_duration_since(now)
                    .min(Duration::from_millis(100));
                if let Err(e) = owner.ring.cancel_all(wait) {
                    problems.push(format!("cancelling the requests left in flight: {e}"));
                }
            }
            if s.settled() {
                match stable {
                    Some((prev, since)) if prev == s => {
                        if now.duration_since(since) >= self.close_quiet {
                            return Drained {
                                snap: s,
                                settled: true,
                                cancelled,
                                violations,
                                problems,
                            };
                        }
                    }
                    _ => stable = Some((s, now)),
                }
            } else {
                stable = None;
            }
            if now >= deadline {
                return Drained {
                    snap: s,
                    settled: false,
                    cancelled,
                    violations,
                    problems,
                };
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Transport for DirectTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Direct
    }

    fn shape(&self) -> String {
        format!(
            "an SQPOLL ring of {} entries the device drives, and a waker thread",
            self.entries
        )
    }

    fn violation(&self) -> Option<String> {
        self.waker.violation()
    }

    fn counters(&self) -> Counters {
        let s = self.owner.as_ref().map(|o| o.stats()).unwrap_or_default();
        Counters {
            submitted: s.submitted,
            completed: s.completed,
            failed: s.failed,
        }
    }

    fn close(&mut self, deadline: Instant) -> TransportReport {
        let Some(owner) = self.owner.take() else {
            return TransportReport {
                problems: vec!["already closed".into()],
                ..Default::default()
            };
        };
        // The channel has set `closing` in the kernel's copy; order that store before
        // every read of the device's positions below (the module doc's close
        // handshake; its device side is gpuio_direct_fill: take a position, fence,
        // read `closing`).
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let Drained {
            snap,
            settled,
            cancelled,
            mut violations,
            problems: drain_problems,
        } = self.drain(&owner, deadline);
        // What the waker saw while the kernel ran comes first (it stopped the ring).
        let stopped_early = self.waker.violation();
        if let Some(v) = &stopped_early {
            violations.insert(0, v.clone());
        }
        // Completions the device had not reaped when the snapshot was taken are read,
        // not consumed (module doc). They are read with the snapshot: a device thread
        // may still reap them meanwhile, and the report adds them to the counters
        // of that same snapshot. Not on a scribbled ring: its head and tail name no
        // real completions.
        let leftover = if violations.is_empty() {
            owner.unreaped_completions(&snap)
        } else {
            Vec::new()
        };
        let mut problems = violations.clone();
        problems.extend(drain_problems);
        let waker = self
            .waker
            .stop(deadline.max(Instant::now() + Duration::from_millis(20)));
        problems.extend(waker.problems);
        if waker.cq_tail_restored > 0 {
            tracing::warn!(
                times = waker.cq_tail_restored,
                "the kernel's CQ tail word went back while the ring ran; the waker put it back"
            );
        }

        let left_ok = leftover.iter().filter(|c| answered_ok(c)).count() as u64;
        let left_failed = leftover.len() as u64 - left_ok;
        if !leftover.is_empty() {
            tracing::info!(
                completed = left_ok,
                failed = left_failed,
                "completions no device thread reaped, counted from the CQ"
            );
        }
        let stats = snap.stats;
        let counters = Counters {
            submitted: stats.submitted,
            completed: stats.completed + left_ok,
            failed: stats.failed + left_failed,
        };
        if !violations.is_empty() {
            problems.push(format!(
                "the ring was stopped {} (its fd closed, so SQPOLL stops); its counts \
                 cannot be trusted: SQ head {}, tail {}, published {}, CQ head {}, tail {}",
                if stopped_early.is_some() {
                    "by the waker when it saw the violation"
                } else {
                    "at close"
                },
                snap.sq_head,
                snap.sq_tail,
                snap.published,
                snap.cq_head,
                snap.cq_tail
            ));
        } else if !settled {
            if snap.reserved > snap.published {
                problems.push(format!(
                    "{} SQ positions were taken by device submitters but never published \
                     (a submitter stalled between taking its position and writing it)",
                    snap.reserved - snap.published
                ));
            }
            if counters.unfinished() > 0 {
                problems.push(format!(
                    "{} published requests had not completed when the bound ran out \
                     (SQ head {}, tail {}); closing the ring cancels them",
                    counters.unfinished(),
                    snap.sq_head,
                    snap.sq_tail
                ));
            }
        }
        tracing::debug!(
            ?snap,
            settled,
            cancelled,
            wakeups = waker.wakeups,
            "direct ring closed"
        );
        drop(owner); // closes the ring fd (the waker's reference is gone with it)
        TransportReport {
            counters,
            timed_out: stats.timed_out,
            problems,
        }
    }
}

impl Drop for DirectTransport {
    fn drop(&mut self) {
        if self.owner.is_some() {
            let report = self.close(Instant::now() + Duration::from_secs(1));
            for p in report.problems {
                tracing::warn!(problem = %p, "direct transport dropped without close()");
            }
        }
    }
}
