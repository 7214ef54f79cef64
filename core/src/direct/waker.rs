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
//!
//! **It watches the ring words too.** Each time it looks at the SQ it reads the
//! kernel's SQ head, then the SQ tail, then the count of SQ positions the device
//! published ([`PublishedWord`]: gpuio's publisher stores it before each tail it
//! releases, and the kernel consumes only up to a tail it read). On an honest
//! channel `head <= tail <= published` for reads in that order, and no more than
//! `2 × sq_entries` are pending (`SqWords` says why twice). Anything else is a kernel writing the SQ tail itself
//! (moved a lap ahead, SQPOLL replays stale SQEs for as long as the ring lives,
//! burning a host core and completing requests nobody made): the waker records a
//! protocol violation once ([`Waker::violation`]), stops the ring at once
//! ([`SqpollRing::stop`]: its fd closed, SQPOLL takes nothing more from it) and
//! ends, so the damage is bounded by one poll instead of lasting until `close()`.
//!
//! **It keeps the CQ tail from going back.** The CQ tail only grows, yet on Linux
//! 6.18.44 (the CPU device, `tests/sockets.rs` in five processes at once, in about
//! one round of them in thirty) the word was seen to read 0 after 1–4 while the kernel's own count
//! (`CachedCqTail` in the ring's `/proc/self/fdinfo`) held 1–4, with nothing else of
//! the ring's first 32 bytes changed; with a hardware write watchpoint on the word's
//! user address (every CPU, user and kernel mode) it went back with no store through
//! that address, so the store came through the kernel's own mapping of the page.
//! The completion it hid stayed unseen until the next one was posted — in a kernel
//! waiting for that answer, never (`-ETIMEDOUT`). The waker remembers the highest
//! tail it read (the kernel stored it, with the CQEs below it written) and, on
//! reading a lower one, puts that back ([`SqpollRing::restore_cq_tail`]: only if
//! the word still holds what was read, so a newer store of the kernel's stands). A
//! completion posted and hidden between two of its looks (1 ms apart at most while
//! the ring is idle) it learns of from the kernel itself: while requests are out
//! (the device published more than the tail shows and the kernel took them all), it
//! reads the kernel's count ([`SqpollRing::kernel_cq_tail`]) every
//! [`KERNEL_COUNT_EVERY`]; a count above the word, the same at two reads in a row
//! with the word unchanged, is put in the word the same way (the kernel writes a
//! CQE and commits the count within one posting, so a count that stood still for
//! that long, with the word below it, is not a CQE still being written). The count
//! of restorations is in [`WakerReport::cq_tail_restored`] and logged.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::memory::SharedMemory;
use crate::transport::{Backoff, TransportError};
use crate::uring::SqpollRing;

/// The `u64` in shared memory where the device counts the SQ positions it
/// published: `Channel::stats.submitted`, which `gpuio_direct_publish` stores before
/// every SQ tail it releases, so a tail read before it is never above it.
pub struct PublishedWord {
    memory: Arc<dyn SharedMemory>,
    offset: usize,
}

impl PublishedWord {
    /// The word at `offset` in `memory`; refuses one out of range or misaligned.
    pub fn new(memory: Arc<dyn SharedMemory>, offset: usize) -> Result<Self, TransportError> {
        memory.atomic_u64(offset)?;
        Ok(Self { memory, offset })
    }

    /// The count, acquired (`None` only if the memory refused the access `new`
    /// checked).
    fn load(&self) -> Option<u64> {
        self.memory
            .atomic_u64(self.offset)
            .ok()
            .map(|a| a.load(Ordering::Acquire))
    }
}

/// The SQ words the waker reads each time it looks, in this order. Each bound is
/// checked against words read on the right side of it, as head, tail and count only
/// grow: `head <= tail` with the head read before the tail, `tail <= published`
/// with the count read after it, `tail - head <= 2 × entries` with the head read
/// again after the tail (with the first head, a waker preempted between its reads saw
/// an honest ring with 935 of 256 entries pending, on a busy host).
///
/// Why twice the entries: the kernel releases the SQ head only at the end of a batch
/// (`io_commit_sqring`), after it posted the completions of the batch's requests that
/// completed inline (`io_submit_state_end`). In between, the device may reap them, take
/// the slots again and publish up to `entries` more positions, all while the head it
/// can read is still the batch's first: up to `2 × entries` honest entries look
/// pending (`direct/loom_model.rs` finds that interleaving with one slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SqWords {
    /// The kernel's SQ head, read before the tail.
    head: u32,
    /// The SQ tail.
    tail: u32,
    /// SQ positions the device published ([`PublishedWord`]).
    published: u64,
    /// The kernel's SQ head again, read after the tail.
    head_after: u32,
    /// The ring's SQ entries.
    entries: u32,
}

/// What one look of the waker read: the SQ head and tail, and with a published count,
/// the words it checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Look {
    pub head: u32,
    pub tail: u32,
    pub words: Option<SqWords>,
}

impl SqWords {
    /// Reads the words in the order their checks need (the type's doc): the head, the
    /// tail, the published count, the head again. Each reader makes its own loads
    /// (the ring's acquires, [`PublishedWord::load`]; a loom model's words in
    /// `loom_model.rs`); no count (`None`), no words to check.
    pub(super) fn look(
        sq_head: impl Fn() -> u32,
        sq_tail: impl FnOnce() -> u32,
        published: impl FnOnce() -> Option<u64>,
        entries: u32,
    ) -> Look {
        let head = sq_head();
        let tail = sq_tail();
        let words = published().map(|published| SqWords {
            head,
            tail,
            published,
            head_after: sq_head(),
            entries,
        });
        Look { head, tail, words }
    }

    /// The protocol violation these words prove, in words; `None` on an honest
    /// channel (module doc: `head <= tail <= published`, at most `2 × entries` pending;
    /// positions compared modulo 2^32 as the ring does).
    pub(super) fn violation(&self) -> Option<String> {
        let published = self.published as u32;
        let ahead = self.tail.wrapping_sub(published) as i32;
        if ahead > 0 {
            return Some(format!(
                "protocol violation: the SQ tail ({}) is {ahead} positions ahead of the {published} \
                 the device published: the kernel moved the SQ tail itself, so the SQPOLL \
                 thread would consume entries nobody wrote (seen while the kernel ran; the ring \
                 was stopped)",
                self.tail
            ));
        }
        let pending = self.tail.wrapping_sub(self.head_after);
        if pending as i32 > 0 && pending > 2 * self.entries {
            return Some(format!(
                "protocol violation: {pending} SQ entries pending (head {}, tail {}) in a ring \
                 of {} (at most twice that while the kernel ends a batch): the SQ tail was \
                 moved (seen while the kernel ran; the ring was stopped)",
                self.head_after, self.tail, self.entries
            ));
        }
        if (self.tail.wrapping_sub(self.head) as i32) < 0 {
            return Some(format!(
                "protocol violation: the kernel consumed SQ entries up to {}, past the SQ tail \
                 ({}): the SQ tail was moved and stale SQEs replayed (seen while the kernel \
                 ran; the ring was stopped)",
                self.head, self.tail
            ));
        }
        None
    }
}

/// How often the waker reads the kernel's count of completions while requests are
/// out and the CQ tail word stands still (module doc).
pub const KERNEL_COUNT_EVERY: Duration = Duration::from_millis(50);

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
    /// The protocol violation that made the waker stop the ring, in words. Written
    /// once, by the waker thread alone, before `violated` is released.
    violation: Mutex<Option<String>>,
    /// Whether `violation` holds one. The readers' ordering comes from this flag, an
    /// atomic in gpuio's own code: ThreadSanitizer (.ci/tsan) does not see the
    /// ordering inside the precompiled std's mutex or `OnceLock`.
    violated: AtomicBool,
    /// The highest CQ tail the waker has read.
    cq_tail_seen: AtomicU32,
    /// Times the waker put the CQ tail back (module doc).
    cq_tail_restored: AtomicU64,
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
    /// Times the CQ tail word was seen going back and was put back (module doc).
    pub cq_tail_restored: u64,
}

impl Waker {
    /// Starts watching `ring`; with `published`, also checks the SQ words against
    /// it (module doc) and stops the ring on a protocol violation.
    pub fn spawn(
        ring: Arc<SqpollRing>,
        published: Option<PublishedWord>,
        config: WakerConfig,
    ) -> Result<Self, TransportError> {
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name("gpuio-direct-waker".into())
            .spawn(move || run(&ring, &s, published.as_ref(), config))
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

    /// The highest CQ tail the waker has read so far.
    pub fn cq_tail_seen(&self) -> u32 {
        self.shared.cq_tail_seen.load(Ordering::Acquire)
    }

    /// The protocol violation the waker saw in the SQ words, if it saw one (it
    /// then stopped the ring and ended).
    pub fn violation(&self) -> Option<String> {
        if !self.shared.violated.load(Ordering::Acquire) {
            return None;
        }
        self.shared
            .violation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
            cq_tail_restored: self.shared.cq_tail_restored.load(Ordering::Relaxed),
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

fn run(ring: &SqpollRing, shared: &Shared, published: Option<&PublishedWord>, config: WakerConfig) {
    let mut backoff = Backoff::new(config.idle_max);
    let entries = ring.layout().sq_entries;
    let mut keeper = TailKeeper::new(ring, shared);
    while !shared.stop.load(Ordering::Acquire) {
        let tail_word = keeper.look(ring, shared);
        // The order of the reads matters (`SqWords`).
        let Look { head, tail, words } = SqWords::look(
            || ring.sq_head(),
            || ring.sq_tail(),
            || published.and_then(PublishedWord::load),
            entries,
        );
        if let Some(words) = words {
            if let Some(v) = words.violation() {
                tracing::error!(violation = %v, ?words, "direct ring stopped while the kernel runs");
                *shared.violation.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                shared.violated.store(true, Ordering::Release);
                ring.stop();
                return;
            }
        }
        // Requests out: published, all taken by the kernel, not all in the CQ tail.
        let out = words.is_some_and(|w| {
            head == w.published as u32 && (w.published as u32).wrapping_sub(tail_word) as i32 > 0
        });
        keeper.check_kernel_count(ring, shared, tail_word, out);
        if tail == head {
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

/// What the waker knows of the CQ tail word (module doc).
struct TailKeeper {
    /// The highest tail read.
    seen: u32,
    /// When to read the kernel's count next.
    next_count: Instant,
    /// The word and the kernel's count at the last read of the count, when the
    /// count was above the word.
    behind: Option<(u32, u32)>,
}

impl TailKeeper {
    fn new(ring: &SqpollRing, shared: &Shared) -> Self {
        let seen = ring.cq_tail();
        shared.cq_tail_seen.store(seen, Ordering::Release);
        Self {
            seen,
            next_count: Instant::now(),
            behind: None,
        }
    }

    /// Reads the CQ tail word: one below the highest read before is put back to it,
    /// a higher one is remembered. Returns the word as it now stands (as read, where
    /// a newer store of the kernel's beat the put-back).
    fn look(&mut self, ring: &SqpollRing, shared: &Shared) -> u32 {
        let tail = ring.cq_tail();
        if (tail.wrapping_sub(self.seen) as i32) >= 0 {
            self.remember(shared, tail);
            tail
        } else if Self::put_back(ring, shared, tail, self.seen) {
            self.seen
        } else {
            tail
        }
    }

    fn remember(&mut self, shared: &Shared, tail: u32) {
        if tail != self.seen {
            self.seen = tail;
            shared.cq_tail_seen.store(tail, Ordering::Release);
        }
    }

    /// While requests are `out` (module doc), reads the kernel's count every
    /// [`KERNEL_COUNT_EVERY`]; one above the word `tail`, twice in a row with the
    /// word unchanged, goes in the word.
    fn check_kernel_count(&mut self, ring: &SqpollRing, shared: &Shared, tail: u32, out: bool) {
        if !out {
            self.behind = None;
            return;
        }
        let now = Instant::now();
        if now < self.next_count {
            return;
        }
        self.next_count = now + KERNEL_COUNT_EVERY;
        let Some(count) = ring.kernel_cq_tail() else {
            return;
        };
        if (count.wrapping_sub(tail) as i32) <= 0 {
            self.behind = None;
            return;
        }
        if self.behind == Some((tail, count)) {
            self.behind = None;
            if Self::put_back(ring, shared, tail, count) {
                self.remember(shared, count);
            }
        } else {
            self.behind = Some((tail, count));
        }
    }

    /// Puts `to` in the CQ tail word if it still holds `from`; whether it did.
    fn put_back(ring: &SqpollRing, shared: &Shared, from: u32, to: u32) -> bool {
        if !ring.restore_cq_tail(from, to) {
            return false;
        }
        let before = shared.cq_tail_restored.fetch_add(1, Ordering::Relaxed);
        if before == 0 {
            tracing::warn!(
                read = from,
                restored = to,
                "the kernel's CQ tail word went back; put back the tail it stored"
            );
        }
        true
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
        let mut waker = Waker::spawn(ring.clone(), None, WakerConfig::default()).unwrap();
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

    /// A confined ring whose one NOP (user_data 7) has completed: its CQ tail is 1.
    fn ring_with_a_completed_nop() -> (Arc<SqpollRing>, impl Sized) {
        let out = tempfile::tempfile().unwrap();
        let (ring, staging) = confined_ring(&[&out], Duration::from_millis(50));
        let ring = Arc::new(ring);
        assert_eq!(ring.kernel_cq_tail(), Some(0), "a fresh ring's count");
        let nop = opcode::Nop::new()
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE)
            .user_data(7);
        // SAFETY: the test is the only producer; a NOP names no memory.
        unsafe { ring.push(&nop) }.unwrap();
        // No waker yet: the SQPOLL thread may have gone to sleep (a loaded machine
        // can take its 50 ms idle between the set-up and the push); wake it as the
        // waker would.
        wait_until(
            || {
                if ring.needs_wakeup() {
                    ring.wake().expect("wake the SQPOLL thread");
                }
                ring.cq_tail() == 1
            },
            "the NOP never completed",
        );
        assert_eq!(ring.kernel_cq_tail(), Some(1));
        (ring, (out, staging))
    }

    fn wait_until(done: impl Fn() -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The tail word, gone back to 0 (as the kernel was seen to do: its count
    /// stays 1), is put back by `waker`, once, and the NOP's completion is seen.
    fn put_back_once(ring: &SqpollRing, mut waker: Waker) {
        wait_until(|| ring.cq_tail() == 1, "the tail was never put back");
        let c = ring.pop().expect("the NOP's completion, seen again");
        assert_eq!((c.user_data, c.res), (7, 0));
        let report = waker.stop(Instant::now() + Duration::from_secs(5));
        assert_eq!(report.cq_tail_restored, 1, "{report:?}");
        assert!(report.problems.is_empty(), "{report:?}");
    }

    #[test]
    fn a_cq_tail_seen_going_back_is_put_back_to_the_highest_one_read() {
        let (ring, _keep) = ring_with_a_completed_nop();
        let waker = Waker::spawn(ring.clone(), None, WakerConfig::default()).unwrap();
        wait_until(
            || waker.cq_tail_seen() == 1,
            "the waker never read the tail",
        );
        assert!(ring.restore_cq_tail(1, 0), "the tail word held 1");
        put_back_once(&ring, waker);
    }

    #[test]
    fn a_completion_hidden_before_the_waker_read_it_is_put_back_from_the_kernels_count() {
        use crate::memory::{HostMemory, MemoryProvider};
        let (ring, _keep) = ring_with_a_completed_nop();
        // The word goes back before any waker read it; the device had published one.
        assert!(ring.restore_cq_tail(1, 0), "the tail word held 1");
        let published: Arc<dyn SharedMemory> = HostMemory.alloc_shared(8).unwrap().into();
        published.atomic_u64(0).unwrap().store(1, Ordering::Release);
        let word = PublishedWord::new(published, 0).unwrap();
        let waker = Waker::spawn(ring.clone(), Some(word), WakerConfig::default()).unwrap();
        put_back_once(&ring, waker);
    }

    #[test]
    fn sq_words_are_a_violation_only_when_the_tail_was_moved() {
        let w = |head, tail, published| SqWords {
            head,
            tail,
            published,
            head_after: head,
            entries: 4,
        };
        // Honest: the head at or behind the tail, the tail at or behind the count;
        // and a waker preempted between its reads, whose first head is more than a
        // ring behind the tail while the head read after the tail is not.
        for honest in [
            w(0, 0, 0),
            w(3, 5, 5),
            w(3, 5, 7),
            w(u32::MAX, 2, 1 << 32 | 2),
            // Twice the ring: the kernel's head lags a batch it completed inline.
            w(1, 9, 9),
            SqWords {
                head_after: 10,
                ..w(1, 12, 12)
            },
        ] {
            assert_eq!(honest.violation(), None, "{honest:?}");
        }
        // The tail a lap ahead of what was published; consumed past the tail; more
        // pending than the ring holds.
        for (moved, what) in [
            (w(1, 5, 1), "4 positions ahead"),
            (w(5, 1, 1), "past the SQ tail"),
            (w(1, 10, 10), "9 SQ entries pending"),
        ] {
            let v = moved.violation().unwrap_or_default();
            assert!(
                v.starts_with("protocol violation") && v.contains(what),
                "{moved:?}: {v}"
            );
        }
    }

    #[test]
    fn a_waker_that_sees_the_sq_tail_ahead_of_the_published_count_stops_the_ring_and_says_why() {
        use crate::memory::{HostMemory, MemoryProvider};
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(50));
        let ring = Arc::new(ring);
        let count: Arc<dyn SharedMemory> = Arc::from(HostMemory.alloc_shared(64).unwrap());
        let published = PublishedWord::new(count, 0).unwrap();
        let mut waker =
            Waker::spawn(ring.clone(), Some(published), WakerConfig::default()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(waker.violation(), None, "nothing moved yet");
        // A producer that is not gpuio's publisher: the tail moves, the count stays 0.
        let nop = opcode::Nop::new()
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE)
            .user_data(1);
        // SAFETY: the test is the only producer; a NOP names no memory.
        unsafe { ring.push(&nop) }.unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while waker.violation().is_none() {
            assert!(
                Instant::now() < deadline,
                "the waker never saw the moved tail"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let v = waker.violation().unwrap_or_default();
        assert!(v.contains("1 positions ahead of the 0"), "{v}");
        assert!(ring.is_stopped(), "the ring is stopped with the report");
        assert!(matches!(
            ring.wake(),
            Err(crate::uring::UringError::Stopped)
        ));
        let report = waker.stop(Instant::now() + Duration::from_secs(5));
        assert!(report.problems.is_empty(), "{report:?}");
    }

    #[test]
    fn an_idle_waker_stops_promptly_and_reports_nothing() {
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(50));
        let mut waker = Waker::spawn(Arc::new(ring), None, WakerConfig::default()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let report = waker.stop(Instant::now() + Duration::from_secs(5));
        assert_eq!(report, WakerReport::default());
    }
}
