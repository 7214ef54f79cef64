//! The waker: a host thread that wakes the ring's SQPOLL thread when it sleeps with
//! work pending.
//!
//! After `sq_thread_idle` without work the kernel's SQPOLL thread sets
//! `IORING_SQ_NEED_WAKEUP` and sleeps until someone calls
//! `io_uring_enter(IORING_ENTER_SQ_WAKEUP)`, which a GPU cannot do. The waker
//! watches the ring: while published entries are pending (SQ tail != the kernel's
//! SQ head) it checks the flag every `busy_poll` and makes the call when it is set;
//! while the ring is idle it backs off ([`Backoff`]) to sleeps of `idle_max`, so an
//! idle channel costs almost no CPU. A lost race (the flag set just after the
//! waker looked) costs at most one more poll: the waker keeps looking for as long as
//! entries are pending, so no submission waits past the next poll.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::transport::{Backoff, TransportError};
use crate::uring::SqpollRing;

/// How the waker polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakerConfig {
    /// Poll interval while entries are pending (20–50 µs answers a sleeping SQPOLL
    /// thread fast without spinning a core).
    pub busy_poll: Duration,
    /// Longest sleep while the ring is idle.
    pub idle_max: Duration,
}

impl Default for WakerConfig {
    fn default() -> Self {
        Self {
            busy_poll: Duration::from_micros(30),
            idle_max: Duration::from_millis(1),
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    wakeups: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

/// A running waker thread. Dropping it stops and joins it (bounded).
#[derive(Debug)]
pub struct Waker {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

/// What the waker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WakerReport {
    /// `IORING_ENTER_SQ_WAKEUP` calls made.
    pub wakeups: u64,
    /// Problems, in words (failed wake-ups, a thread that would not stop).
    pub problems: Vec<String>,
}

impl Waker {
    /// Starts watching `ring`.
    pub fn spawn(ring: Arc<SqpollRing>, config: WakerConfig) -> Result<Self, TransportError> {
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name("gpuio-direct-waker".into())
            .spawn(move || run(&ring, &s, config))
            .map_err(|e| TransportError::os("spawn(gpuio-direct-waker)", e))?;
        Ok(Self {
            shared,
            handle: Some(handle),
        })
    }

    /// `IORING_ENTER_SQ_WAKEUP` calls made so far.
    pub fn wakeups(&self) -> u64 {
        self.shared.wakeups.load(Ordering::Relaxed)
    }

    /// Stops the thread and joins it, waiting until `deadline` at most (the thread
    /// notices within one poll, `idle_max` at worst). A thread that does not stop in
    /// time is left to finish on its own and reported.
    pub fn stop(&mut self, deadline: Instant) -> WakerReport {
        self.shared.stop.store(true, Ordering::Release);
        let mut problems = Vec::new();
        if let Some(h) = self.handle.take() {
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(100));
            }
            if h.is_finished() {
                if h.join().is_err() {
                    problems.push("the waker thread panicked".to_string());
                }
            } else {
                problems.push("the waker thread did not stop in time (left detached)".into());
            }
        }
        let errors = self.shared.errors.load(Ordering::Relaxed);
        if errors > 0 {
            let first = self
                .shared
                .first_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_default();
            problems.push(format!("{errors} SQPOLL wake-ups failed; first: {first}"));
        }
        WakerReport {
            wakeups: self.wakeups(),
            problems,
        }
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        if self.handle.is_some() {
            let r = self.stop(Instant::now() + Duration::from_secs(1));
            for p in r.problems {
                tracing::warn!(problem = %p, "direct waker");
            }
        }
    }
}

fn run(ring: &SqpollRing, shared: &Shared, config: WakerConfig) {
    let mut backoff = Backoff::new(config.idle_max);
    while !shared.stop.load(Ordering::Acquire) {
        if ring.sq_pending() == 0 {
            backoff.idle();
            continue;
        }
        backoff.reset();
        // The kernel sets NEED_WAKEUP, then re-reads the tail before sleeping; read
        // the flag after the tail we saw (SeqCst pairs with the kernel's smp_mb).
        fence(Ordering::SeqCst);
        if ring.needs_wakeup() {
            match ring.wake() {
                Ok(()) => {
                    shared.wakeups.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    if shared.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                        tracing::warn!(error = %e, "waking the SQPOLL thread failed");
                        *shared.first_error.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(e.to_string());
                    }
                }
            }
        }
        std::thread::sleep(config.busy_poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uring::ring::tests::confined_ring;
    use io_uring::opcode;

    #[test]
    fn waker_wakes_a_sleeping_sqpoll_thread_and_the_entry_completes() {
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(1));
        let ring = Arc::new(ring);
        let nop = opcode::Nop::new()
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE)
            .user_data(7);
        // Until the SQPOLL thread sleeps, an entry pushed without a waker completes
        // on its own; once it sleeps (1 ms idle), one stays pending with the flag set.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "SQPOLL never went to sleep");
            std::thread::sleep(Duration::from_millis(20));
            // SAFETY: the test is the only producer; a NOP names no memory.
            unsafe { ring.push(&nop) }.unwrap();
            std::thread::sleep(Duration::from_millis(100));
            if ring.sq_pending() == 1 && ring.needs_wakeup() {
                break;
            }
            while ring.pop().is_none() {
                assert!(
                    Instant::now() < deadline,
                    "a NOP consumed but never completed"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut waker = Waker::spawn(ring.clone(), WakerConfig::default()).unwrap();
        let c = loop {
            if let Some(c) = ring.pop() {
                break c;
            }
            assert!(Instant::now() < deadline, "the NOP never completed");
            std::thread::sleep(Duration::from_micros(100));
        };
        assert_eq!((c.user_data, c.res), (7, 0));
        let report = waker.stop(Instant::now() + Duration::from_secs(5));
        assert!(report.wakeups >= 1, "{report:?}");
        assert!(report.problems.is_empty(), "{report:?}");
    }

    #[test]
    fn an_idle_waker_stops_promptly_and_reports_nothing() {
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(50));
        let mut waker = Waker::spawn(Arc::new(ring), WakerConfig::default()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let report = waker.stop(Instant::now() + Duration::from_secs(5));
        assert_eq!(report, WakerReport::default());
    }
}
