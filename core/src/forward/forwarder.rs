//! The forwarder thread: takes READY entries in position order, validates them,
//! batches them into its io_uring, reaps completions and answers in place.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::abi::{self, stamp};
use crate::endpoint::Endpoint;
use crate::memory::SharedRegion;
use crate::request::{validate, Checked};
use crate::transport::{Backoff, TransportError};
use io_uring::{opcode, squeue, types, IoUring};

use super::queue::{stamp_of, QueueView};
use super::AtomicCounters;

/// First sleep in `io_uring_enter` while waiting for a completion; doubles up to
/// `idle_max` while nothing happens.
const FIRST_CQ_WAIT: Duration = Duration::from_micros(20);

#[derive(Clone, Debug)]
pub(crate) struct ForwarderConfig {
    pub ring_entries: u32,
    pub idle_max: Duration,
    pub quiet: Duration,
    pub fixed_files: bool,
}

/// How the transport tells the thread to stop.
#[derive(Debug, Default)]
pub(crate) struct Control {
    stopping: AtomicBool,
    deadline: Mutex<Option<Instant>>,
}

impl Control {
    /// Drain, then stop; never serve past `deadline`.
    pub fn stop(&self, deadline: Instant) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = Some(deadline);
        self.stopping.store(true, Ordering::Release);
    }

    fn deadline(&self) -> Option<Instant> {
        if !self.stopping.load(Ordering::Acquire) {
            return None;
        }
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the thread left behind when it stopped.
#[derive(Debug, Default)]
pub(crate) struct Exit {
    /// Ops still in the io_uring (their entries stay READY, unanswered).
    pub in_flight: u32,
    /// Requests published but never started, answered `-ESHUTDOWN`.
    pub refused_at_close: u64,
    /// The deadline ended the drain while work was still ready or in flight.
    pub deadline_hit: bool,
    /// The last io_uring error, if submitting ever failed.
    pub ring_error: Option<String>,
}

impl Exit {
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if self.in_flight > 0 {
            p.push(format!(
                "{} operations still in the io_uring at the deadline; their requests stay unanswered",
                self.in_flight
            ));
        }
        if self.deadline_hit {
            p.push("the drain stopped at the deadline with work left".to_string());
        }
        if self.refused_at_close > 0 {
            p.push(format!(
                "{} requests queued but not started when the forwarder stopped were refused with -ESHUTDOWN",
                self.refused_at_close
            ));
        }
        if let Some(e) = &self.ring_error {
            p.push(format!("io_uring_enter failed: {e}"));
        }
        p
    }
}

/// How SQEs name an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Files {
    /// Endpoint `i` is registered file `i`.
    Fixed,
    /// Raw fds (the kernel refused registration).
    Raw,
}

pub(crate) struct Forwarder {
    config: ForwarderConfig,
    ring: IoUring,
    files: Files,
    /// Raw fds of the endpoints, by index (used with `Files::Raw`).
    fds: Vec<i32>,
    queue: QueueView,
    /// Kept alive for the fds and for validation.
    endpoints: Vec<Arc<Endpoint>>,
    staging: SharedRegion,
    staging_len: u64,
    control: Arc<Control>,
    counters: Arc<AtomicCounters>,
    /// Next position to take.
    head: u64,
    /// Ops pushed to the ring and not yet reaped.
    in_flight: u32,
    /// Most ops in the ring at once (its SQ size).
    capacity: u32,
    ring_error: Option<String>,
}

impl Forwarder {
    pub fn new(
        config: ForwarderConfig,
        queue: QueueView,
        endpoints: Vec<Arc<Endpoint>>,
        staging: SharedRegion,
        staging_len: u64,
        control: Arc<Control>,
        counters: Arc<AtomicCounters>,
    ) -> Result<Self, TransportError> {
        let ring = IoUring::new(config.ring_entries)
            .map_err(|e| TransportError::os("io_uring_setup", e))?;
        let capacity = ring.params().sq_entries();
        let fds: Vec<i32> = endpoints.iter().map(|e| e.fd().as_raw_fd()).collect();
        let files = if config.fixed_files && !fds.is_empty() {
            match ring.submitter().register_files(&fds) {
                Ok(()) => Files::Fixed,
                Err(e) => {
                    tracing::warn!(error = %e, "io_uring fixed files refused; using raw fds");
                    Files::Raw
                }
            }
        } else {
            Files::Raw
        };
        Ok(Self {
            config,
            ring,
            files,
            fds,
            queue,
            endpoints,
            staging,
            staging_len,
            control,
            counters,
            head: 0,
            in_flight: 0,
            capacity,
            ring_error: None,
        })
    }

    /// Serves the queue until told to stop, then drains within the deadline.
    pub fn run(mut self) -> Exit {
        let _span = tracing::debug_span!("forwarder").entered();
        let mut backoff = Backoff::new(self.config.idle_max);
        let mut cq_wait = FIRST_CQ_WAIT;
        let mut quiet_since: Option<Instant> = None;
        let mut deadline_hit = false;
        loop {
            let stopping = self.control.deadline();
            // Past the deadline nothing new is started (finish() refuses it).
            if stopping.is_some_and(|deadline| Instant::now() >= deadline) {
                deadline_hit = self.in_flight > 0 || self.ready_at_head();
                break;
            }
            let taken = self.take_ready();
            if !self.ring.submission().is_empty() {
                self.submit();
            }
            let reaped = self.reap();
            let progressed = taken + reaped > 0;
            if stopping.is_some() {
                let now = Instant::now();
                if progressed || self.in_flight > 0 {
                    quiet_since = None;
                } else if now.duration_since(*quiet_since.get_or_insert(now)) >= self.config.quiet {
                    break;
                }
            }
            if progressed {
                backoff.reset();
                cq_wait = FIRST_CQ_WAIT;
            } else if self.in_flight > 0 && self.ring.params().is_feature_ext_arg() {
                self.wait_for_completion(cq_wait);
                cq_wait = (cq_wait * 2).min(self.config.idle_max.max(FIRST_CQ_WAIT));
            } else {
                backoff.idle();
            }
        }
        self.finish(deadline_hit)
    }

    fn ready_at_head(&self) -> bool {
        self.queue.entry(self.head).stamp() == stamp_of(self.head, stamp::READY)
    }

    /// Takes every READY entry from `head` on, in order, while the ring has room.
    fn take_ready(&mut self) -> u32 {
        let mut taken = 0;
        while self.in_flight < self.capacity {
            let pos = self.head;
            let entry = self.queue.entry(pos);
            if entry.stamp() != stamp_of(pos, stamp::READY) {
                break;
            }
            let req = entry.request();
            self.head += 1;
            taken += 1;
            self.counters.submitted.fetch_add(1, Ordering::AcqRel);
            match validate(&req, &self.endpoints, self.staging_len) {
                Err(errno) => self.answer(pos, i64::from(errno)),
                Ok(checked) => {
                    let sqe = self.sqe(&checked).user_data(pos);
                    // SAFETY: the SQE's buffer lies inside the staging area (validated
                    // above), which the channel keeps alive past `close()`; the
                    // request's entry and staging chunk stay the device's untouched
                    // until we answer DONE after this op's CQE.
                    let pushed = unsafe { self.ring.submission().push(&sqe) };
                    if pushed.is_ok() {
                        self.in_flight += 1;
                    } else {
                        // Cannot happen while in_flight <= SQ size; answer, never drop.
                        tracing::error!(pos, "io_uring SQ full; request answered -EAGAIN");
                        self.answer(pos, -i64::from(libc::EAGAIN));
                    }
                }
            }
        }
        taken
    }

    /// The SQE for a validated request.
    fn sqe(&self, c: &Checked) -> squeue::Entry {
        let base = self.staging.host_ptr.as_ptr();
        // `validate` put [staging_off, +len) inside the staging area.
        let buf = base.wrapping_add(c.staging_off);
        let len = c.len as u32;
        let offset = match c.op {
            abi::op::PWRITE | abi::op::PREAD => c.offset as u64,
            // -1: the file position (ignored by pipes and sockets).
            _ => u64::MAX,
        };
        let ep = c.endpoint;
        macro_rules! rw {
            ($op:ident, $buf:expr) => {
                match self.files {
                    Files::Fixed => opcode::$op::new(types::Fixed(ep), $buf, len)
                        .offset(offset)
                        .build(),
                    Files::Raw => opcode::$op::new(types::Fd(self.fds[ep as usize]), $buf, len)
                        .offset(offset)
                        .build(),
                }
            };
        }
        match c.op {
            abi::op::PWRITE | abi::op::WRITE => rw!(Write, buf.cast_const()),
            abi::op::PREAD | abi::op::READ => rw!(Read, buf),
            _ => opcode::Nop::new().build(),
        }
    }

    /// Hands the queued SQEs to the kernel. Whatever it did not take stays queued
    /// and goes with the next call.
    fn submit(&mut self) {
        match self.ring.submit() {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) => {}
            Err(e) => {
                tracing::error!(error = %e, "io_uring_enter failed");
                self.ring_error = Some(e.to_string());
            }
        }
    }

    /// Answers every completion the ring has.
    fn reap(&mut self) -> u32 {
        let mut n = 0;
        let mut cq = self.ring.completion();
        cq.sync();
        for cqe in &mut cq {
            let pos = cqe.user_data();
            let result = i64::from(cqe.result());
            self.in_flight = self.in_flight.saturating_sub(1);
            let counter = if result >= 0 {
                &self.counters.completed
            } else {
                &self.counters.failed
            };
            self.queue.entry(pos).answer(pos, result);
            counter.fetch_add(1, Ordering::AcqRel);
            n += 1;
        }
        n
    }

    /// Answers `pos` without the ring (a refused request).
    fn answer(&self, pos: u64, result: i64) {
        self.queue.entry(pos).answer(pos, result);
        let counter = if result >= 0 {
            &self.counters.completed
        } else {
            &self.counters.failed
        };
        counter.fetch_add(1, Ordering::AcqRel);
    }

    /// Sleeps in `io_uring_enter` until a completion arrives or `timeout` passes.
    fn wait_for_completion(&mut self, timeout: Duration) {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
            Err(e) => {
                tracing::error!(error = %e, "io_uring_enter (wait) failed");
                self.ring_error = Some(e.to_string());
                std::thread::sleep(timeout);
            }
        }
    }

    /// After the loop: reap once more, refuse what was published but never
    /// started, and say what is left.
    fn finish(mut self, deadline_hit: bool) -> Exit {
        self.reap();
        let mut refused = 0;
        for e in self.queue.entries() {
            let s = e.stamp();
            let pos = s >> stamp::SHIFT;
            // READY below `head` is in the ring; at or above it, never taken.
            if s & 3 == stamp::READY && pos >= self.head {
                self.counters.submitted.fetch_add(1, Ordering::AcqRel);
                self.answer(pos, -i64::from(libc::ESHUTDOWN));
                refused += 1;
            }
        }
        Exit {
            in_flight: self.in_flight,
            refused_at_close: refused,
            deadline_hit,
            ring_error: self.ring_error.take(),
        }
    }
}
