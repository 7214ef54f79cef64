//! The forwarder thread: takes READY entries in any order, validates them,
//! batches them into its io_uring, reaps completions and answers in place.
//!
//! Each typed request is one SQE: `WRITE`/`READ` for files and pipes (offset -1
//! for streams: the file position), `SEND` with `MSG_NOSIGNAL` and `RECV` for
//! sockets (the rulebook makes every stream op on a socket one of those) — but a
//! NOP, answered here, and pwrites and preads taken in one pass whose ranges of one
//! file follow each other, sent as one `WRITEV` or `READV` ([`runs`](crate::runs))
//! or, a run of pwrites of a few KiB, written here with one `pwritev`.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::endpoint::Endpoint;
use crate::memory::SharedRegion;
use crate::request::{validate, Request, Staging};
use crate::runs::{self, Direction, Part};
use crate::transport::{Backoff, CounterBlock, TransportError};
use io_uring::{opcode, squeue, types, IoUring};

use super::io_wq::Anchor;
use super::queue::{self, BadStamp, QueueView, Stamp};

/// First sleep in `io_uring_enter` while waiting for a completion; doubles up to
/// `idle_max` while nothing happens.
const FIRST_CQ_WAIT: Duration = Duration::from_micros(20);

/// `user_data` of the cancel request sent at close (no position is ever this big:
/// stamps hold positions below 2^62).
const CANCEL: u64 = u64::MAX;

/// `user_data` bit of a run sent as one `WRITEV` or `READV` ([`runs`]); the rest is
/// the run's index in `Forwarder::runs`.
const RUN: u64 = 1 << 63;

/// A run in the ring: its requests' positions in file order, and the iovecs the
/// `WRITEV` or `READV` names (one per request, its length).
struct InRing {
    positions: Vec<u64>,
    iovecs: Iovecs,
}

/// The iovecs of a `WRITEV` or `READV`, kept until its completion.
struct Iovecs(Box<[libc::iovec]>);

// SAFETY: the iovecs point into the staging area, which the forwarder holds (its
// `staging` region) for as long as it holds these; nothing reads or writes through
// them but the kernel, for the op that names them.
unsafe impl Send for Iovecs {}

#[derive(Clone, Debug)]
pub(crate) struct ForwarderConfig {
    pub ring_entries: u32,
    pub idle_max: Duration,
    pub quiet: Duration,
    pub fixed_files: bool,
    /// The entries this forwarder serves (its ring's slots); the others are other
    /// forwarders'.
    pub entries: std::ops::Range<usize>,
    /// Entries a ring has: `entries` is a run of whole rings, and a ring's
    /// positions come to its entries in turn.
    pub ring_slots: usize,
    /// How long an idle forwarder watches the entry its ring's next request comes
    /// to ([`ForwardBuilder::watch`](super::ForwardBuilder::watch)).
    pub watch: Duration,
    /// Ring 0's forwarder leads: it backs off like every host thread (up to
    /// `idle_max`, [`Backoff::DEEP_MAX`] after a quiet spell) and, while it sleeps,
    /// looks at the other rings' entries and wakes their forwarders when one holds
    /// a request, and when it finds work itself after sleeping. The others sleep up
    /// to [`PEER_IDLE_MAX`] unless woken: an idle channel then wakes one forwarder
    /// about a hundred times a second, not every ring's.
    pub lead: bool,
    /// Runs of pwrites of at most this many bytes are written by this thread
    /// itself, at most [`INLINE_PASS`] times that in a pass
    /// ([`ForwardBuilder::inline_writes`](super::ForwardBuilder::inline_writes)).
    pub inline_writes: usize,
    /// A regular file's preads taken together (a run, or one alone) of more than
    /// this many bytes are handed to io-wq workers (`IOSQE_ASYNC`) instead of being
    /// copied by this thread inside `io_uring_enter`
    /// ([`ForwardBuilder::inline_reads`](super::ForwardBuilder::inline_reads)).
    pub inline_reads: usize,
    /// The channel's io-wq anchor, entered before anything else ([`Anchor`]).
    pub anchor: Option<Arc<Anchor>>,
}

/// The SQE flags that hand an op to an io-wq worker at once (`to_worker`), or
/// none.
fn worker_flags(to_worker: bool) -> squeue::Flags {
    if to_worker {
        squeue::Flags::ASYNC
    } else {
        squeue::Flags::empty()
    }
}

/// A pass writes at most this many times [`ForwarderConfig::inline_writes`] bytes
/// itself; the rest of its runs go through the ring, so that a pass over a full
/// ring of small writes does not keep its other requests waiting for long.
pub(crate) const INLINE_PASS: usize = 4;

/// Longest idle sleep of a forwarder other than ring 0's (which wakes it sooner
/// when there is work).
pub(crate) const PEER_IDLE_MAX: Duration = Duration::from_millis(50);

/// What the loop did, for the debug log at exit.
#[derive(Debug, Default)]
struct LoopStats {
    rounds: u64,
    taken: u64,
    waits: u64,
    waited: Duration,
    /// Idle sleeps (past the spins and yields) and the time they took, from the
    /// channel's opening: the wait for the kernel's launch counts too.
    sleeps: u64,
    slept: Duration,
    /// Watches of the next entry, and those that saw its request come.
    watches: u64,
    watched: u64,
    most_in_flight: u32,
}

/// What the transport and the thread share: the transport tells the thread to
/// stop; the thread tells the transport the first protocol violation it saw.
#[derive(Debug, Default)]
pub(crate) struct Control {
    stopping: AtomicBool,
    deadline: Mutex<Option<Instant>>,
    /// The forwarder threads of rings 1, 2, … (set once they run): ring 0's
    /// forwarder wakes them when the device is busy again, and `stop` wakes them.
    peers: std::sync::OnceLock<Vec<std::thread::Thread>>,
    /// Whether `peers` is set: released after the set, acquired before the get, so
    /// that ThreadSanitizer sees the order the `OnceLock` gives (as `violated` for
    /// `violation`; it once reported ring 0's forwarder waking its peers as a race
    /// with their naming).
    peers_named: AtomicBool,
    /// The first stamp that broke the protocol, in words (`close()` counts them all).
    /// Written once, by the first forwarder thread to see one, before `violated` is
    /// released.
    violation: Mutex<Option<String>>,
    /// Whether `violation` holds one. The readers' ordering comes from this flag, an
    /// atomic in gpuio's own code: ThreadSanitizer (.ci/tsan) does not see the
    /// ordering inside the precompiled std's mutex or `OnceLock`.
    violated: AtomicBool,
}

impl Control {
    /// Drain, then stop; never serve past `deadline`.
    pub fn stop(&self, deadline: Instant) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = Some(deadline);
        self.stopping.store(true, Ordering::Release);
        self.wake_peers();
    }

    /// Names the forwarder threads of rings 1, 2, … (once).
    pub fn set_peers(&self, peers: Vec<std::thread::Thread>) {
        let _ = self.peers.set(peers);
        self.peers_named.store(true, Ordering::Release);
        if self.stopping.load(Ordering::Acquire) {
            self.wake_peers();
        }
    }

    /// Cuts the idle sleep of every forwarder of rings 1, 2, … short.
    fn wake_peers(&self) {
        if !self.peers_named.load(Ordering::Acquire) {
            return; // not named yet: the get would find none
        }
        for t in self.peers.get().into_iter().flatten() {
            t.unpark();
        }
    }

    fn deadline(&self) -> Option<Instant> {
        if !self.stopping.load(Ordering::Acquire) {
            return None;
        }
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first protocol violation the thread saw, while it runs or after.
    pub fn violation(&self) -> Option<String> {
        if !self.violated.load(Ordering::Acquire) {
            return None;
        }
        self.violation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Keeps `v` unless an earlier violation was kept (by this forwarder thread or
    /// another ring's).
    fn violated(&self, v: impl FnOnce() -> String) {
        if self.violated.load(Ordering::Relaxed) {
            return;
        }
        let mut kept = self.violation.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_none() {
            *kept = Some(v());
        }
        self.violated.store(true, Ordering::Release);
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
    /// Entries the device stamped READY for a position they cannot hold.
    pub violations: u64,
    /// Entries stamped READY for a new position while their request was unanswered.
    pub unanswered_stamps: u64,
    /// Requests served that came to an entry after a later position had.
    pub behind: u64,
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
        if self.violations > 0 {
            p.push(format!(
                "protocol violation: {} forward entries were stamped READY for a position they cannot hold (ignored)",
                self.violations
            ));
        }
        if self.unanswered_stamps > 0 {
            p.push(format!(
                "protocol violation: {} forward entries were stamped READY for a new position while \
                 their request was still unanswered (ignored; the request was answered as usual)",
                self.unanswered_stamps
            ));
        }
        if self.behind > 0 {
            p.push(format!(
                "protocol violation: {} requests came to a forward entry after a later one had \
                 (a position the kernel stamped ahead, or one it replayed); served",
                self.behind
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
    /// Per endpoint, whether its fd is a regular file: only those take pwrites
    /// written here. (A pipe registered as a file would refuse a `pwritev` with
    /// `ESPIPE`, where io_uring ignores the offset, and a full one would block this
    /// thread.)
    regular: Vec<bool>,
    queue: QueueView,
    /// Kept alive for the fds and for validation.
    endpoints: Vec<Arc<Endpoint>>,
    staging: SharedRegion,
    staging_len: u64,
    control: Arc<Control>,
    counters: Arc<CounterBlock>,
    /// Per entry, the last position taken from it (`None`: none yet). A READY
    /// stamp for that position is in the ring or a replay; what any other stamp is
    /// follows from it ([`queue::classify`]).
    taken: Vec<Option<u64>>,
    /// Per entry, whether its last position taken is still unanswered.
    open: Vec<bool>,
    /// Where the next pass starts (from `config.entries.start`): the entry after
    /// the last one taken, where its ring's next position comes. (So no entry is
    /// always looked at last: the start moves with what is taken.)
    cursor: usize,
    /// READY stamps for a position their entry cannot hold, counted once each.
    violations: u64,
    /// READY stamps for a new position on an entry whose request was unanswered.
    unanswered_stamps: u64,
    /// Requests served for a position below one taken from their entry before.
    behind: u64,
    /// The last such stamp per entry, so a stamp left in place is counted once.
    bad_stamp: Vec<Option<u64>>,
    /// Ops pushed to the ring and not yet reaped.
    in_flight: u32,
    /// Most ops in the ring at once (its SQ size).
    capacity: u32,
    ring_error: Option<String>,
    /// Pwrites taken in this pass, sent at its end ([`runs`]).
    pwrites: Vec<Part>,
    /// Preads taken in this pass, sent at its end ([`runs`]).
    preads: Vec<Part>,
    /// Runs in the ring, by the index their `user_data` carries; `None` where free.
    runs: Vec<Option<InRing>>,
    /// `WRITEV`s sent and the pwrites they carried, for the debug log.
    run_counts: (u64, u64),
    /// `READV`s sent and the preads they carried, for the debug log.
    read_run_counts: (u64, u64),
    /// Runs written by this thread and the pwrites they carried, for the debug log.
    inline_counts: (u64, u64),
    /// The completions of one `reap`, (user_data, result).
    reaped: Vec<(u64, i32)>,
}

impl Forwarder {
    pub fn new(
        config: ForwarderConfig,
        queue: QueueView,
        endpoints: Vec<Arc<Endpoint>>,
        staging: SharedRegion,
        staging_len: u64,
        control: Arc<Control>,
        counters: Arc<CounterBlock>,
    ) -> Result<Self, TransportError> {
        // Retried while the kernel may still be freeing a ring closed just before
        // (its pages count against RLIMIT_MEMLOCK until then: `retry_transient`).
        let ring = crate::uring::retry_transient(
            |e: &std::io::Error| matches!(e.raw_os_error(), Some(libc::ENOMEM | libc::EAGAIN)),
            || IoUring::new(config.ring_entries),
        )
        .map_err(|e| TransportError::os("io_uring_setup", e))?;
        let capacity = ring.params().sq_entries();
        // A host queue has no fd: its slot stays empty (-1), and requests never name it
        // (validation refuses them).
        let fds: Vec<i32> = endpoints
            .iter()
            .map(|e| e.fd().map_or(-1, |fd| fd.as_raw_fd()))
            .collect();
        let regular = endpoints.iter().map(|e| e.is_regular_file()).collect();
        let slots = queue.slots();
        if config.entries.is_empty() || config.entries.end > slots {
            return Err(TransportError::Config(format!(
                "forward: a forwarder for entries {:?} of {slots}",
                config.entries
            )));
        }
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
            regular,
            queue,
            endpoints,
            staging,
            staging_len,
            control,
            counters,
            taken: vec![None; slots],
            open: vec![false; slots],
            cursor: 0,
            violations: 0,
            unanswered_stamps: 0,
            behind: 0,
            bad_stamp: vec![None; slots],
            in_flight: 0,
            capacity,
            ring_error: None,
            pwrites: Vec::new(),
            preads: Vec::new(),
            runs: Vec::new(),
            run_counts: (0, 0),
            read_run_counts: (0, 0),
            inline_counts: (0, 0),
            reaped: Vec::new(),
        })
    }

    /// Serves the queue until told to stop, then drains within the deadline.
    pub fn run(mut self) -> Exit {
        let _span = tracing::debug_span!("forwarder").entered();
        // This thread's first io_uring call: its io-wq shares the anchor's hash map.
        if let Some(anchor) = self.config.anchor.take() {
            if let Err(e) = anchor.enter() {
                tracing::debug!(error = %e, "io-wq anchor refused; this forwarder keeps its own");
            }
        }
        let mut backoff = if self.config.lead {
            Backoff::new(self.config.idle_max)
        } else {
            Backoff::parking(PEER_IDLE_MAX)
        };
        let mut cq_wait = FIRST_CQ_WAIT;
        let mut quiet_since: Option<Instant> = None;
        let mut cancelled = false;
        let mut stats = LoopStats::default();
        let mut deadline_hit = false;
        loop {
            let stopping = self.control.deadline();
            // Past the deadline nothing new is started (finish() refuses it).
            if stopping.is_some_and(|deadline| Instant::now() >= deadline) {
                deadline_hit = self.in_flight > 0 || self.any_ready();
                break;
            }
            let taken = self.take_ready();
            if !self.ring.submission().is_empty() {
                self.submit();
            }
            let reaped = self.reap();
            stats.rounds += 1;
            stats.taken += u64::from(taken);
            stats.most_in_flight = stats.most_in_flight.max(self.in_flight);
            let progressed = taken + reaped > 0;
            if stopping.is_some() {
                let now = Instant::now();
                if progressed {
                    quiet_since = None;
                } else if now.duration_since(*quiet_since.get_or_insert(now)) >= self.config.quiet {
                    if self.in_flight == 0 {
                        break;
                    }
                    // Only ops that may never finish are left (a read of a pipe
                    // nobody writes): cancel them, once, so that they are answered
                    // (-ECANCELED) and counted instead of left in the ring.
                    if !cancelled {
                        cancelled = true;
                        quiet_since = None;
                        self.cancel_in_flight();
                    }
                }
            }
            if progressed {
                if self.config.lead && backoff.sleeping() {
                    self.control.wake_peers(); // the device is busy again
                }
                backoff.reset();
                cq_wait = FIRST_CQ_WAIT;
            } else if self.in_flight > 0 && self.ring.params().is_feature_ext_arg() {
                // New requests are not seen while this sleeps: sleep long only once
                // nothing has been taken for a while (the device is quiet).
                let t = Instant::now();
                self.wait_for_completion(cq_wait);
                stats.waits += 1;
                stats.waited += t.elapsed();
                cq_wait = (cq_wait * 2).min(self.config.idle_max.max(FIRST_CQ_WAIT));
            } else {
                if self.config.lead && backoff.sleeping() && self.others_ready() {
                    self.control.wake_peers();
                }
                // Spinning: watch where the next request comes instead of passing
                // over every entry again at once.
                let seen = !self.config.watch.is_zero() && backoff.spinning() && {
                    stats.watches += 1;
                    self.watch()
                };
                if seen {
                    stats.watched += 1;
                } else if let Some(slept) = backoff.idle() {
                    stats.sleeps += 1;
                    stats.slept += slept;
                }
            }
        }
        tracing::debug!(
            entries = ?self.config.entries,
            rounds = stats.rounds,
            taken = stats.taken,
            waits = stats.waits,
            waited = ?stats.waited,
            sleeps = stats.sleeps,
            slept = ?stats.slept,
            watches = stats.watches,
            watched = stats.watched,
            most_in_flight = stats.most_in_flight,
            writevs = self.run_counts.0,
            pwrites_in_writevs = self.run_counts.1,
            written_here = self.inline_counts.0,
            pwrites_written_here = self.inline_counts.1,
            readvs = self.read_run_counts.0,
            preads_in_readvs = self.read_run_counts.1,
            "forwarder stopped"
        );
        self.finish(deadline_hit)
    }

    /// Whether some entry of this forwarder's holds a request not taken yet.
    /// Whether an entry of another ring is stamped READY (taken or not: this thread
    /// does not know what the others took; a false alarm costs one early wake-up).
    fn others_ready(&self) -> bool {
        let own = &self.config.entries;
        (0..self.taken.len())
            .filter(|i| !own.contains(i))
            .any(|i| self.queue.entry_at(i).stamp() & 3 == crate::abi::stamp::READY)
    }

    fn any_ready(&self) -> bool {
        self.config.entries.clone().any(|i| self.ready(i))
    }

    /// Whether entry `i` holds a request not taken yet, stamped for a position it
    /// can hold.
    fn ready(&self, i: usize) -> bool {
        self.untaken(i)
            .is_some_and(|pos| !matches!(self.classify(i, pos), Stamp::Bad(_)))
    }

    /// The entry after `i` in its ring: where the ring's position after `i`'s comes.
    fn after(&self, i: usize) -> usize {
        let per = self.config.ring_slots.max(1);
        let ring = self.config.entries.start + (i - self.config.entries.start) / per * per;
        ring + (i - ring + 1) % per
    }

    /// Watches the entry where the next pass starts (`cursor`) for up to
    /// `config.watch`: whether a request there is ready to take, every word of it
    /// there. Between passes, where a pass found nothing: a request published while
    /// a pass runs waits for its end, so an idle forwarder that passes over all its
    /// entries again and again sees a request late by up to a pass (~0.1–0.3 µs).
    fn watch(&self) -> bool {
        let i = self.config.entries.start + self.cursor;
        crate::transport::watch(self.config.watch, || {
            self.ready(i) && self.queue.entry_at(i).request().is_some()
        })
    }

    /// The position entry `i` holds READY and not yet taken, if any.
    fn untaken(&self, i: usize) -> Option<u64> {
        queue::untaken(self.queue.entry_at(i).stamp(), self.taken[i], self.open[i])
    }

    /// What a READY stamp for `pos` on entry `i` is ([`queue::classify`]).
    fn classify(&self, i: usize, pos: u64) -> Stamp {
        queue::classify(i, self.taken.len(), pos, self.taken[i], self.open[i])
    }

    /// Takes every READY entry of this forwarder's, in any order (one pass over
    /// them from a rotating start), while the ring has room.
    fn take_ready(&mut self) -> u32 {
        let first = self.config.entries.start;
        let n = self.config.entries.len();
        let mut taken = 0;
        let mut next = None;
        for k in 0..n {
            let held = self.pwrites.len() + self.preads.len();
            if self.in_flight as usize + held >= self.capacity as usize {
                break;
            }
            let i = first + (self.cursor + k) % n;
            let Some(pos) = self.untaken(i) else { continue };
            let req = match self.classify(i, pos) {
                Stamp::Bad(why) => {
                    // Counted once per stamp: it stays in place until the device
                    // (or, for an unanswered entry, the host's answer) overwrites it.
                    if self.bad_stamp[i] != Some(pos) {
                        self.bad_stamp[i] = Some(pos);
                        match why {
                            BadStamp::Foreign => self.violations += 1,
                            BadStamp::Unanswered => self.unanswered_stamps += 1,
                        }
                        let (slots, last) = (self.taken.len(), self.taken[i]);
                        self.control.violated(|| match why {
                            BadStamp::Foreign => format!(
                                "protocol violation: forward entry {i} of {slots} was stamped \
                                 READY for position {pos}, which it cannot hold (ignored)"
                            ),
                            BadStamp::Unanswered => format!(
                                "protocol violation: forward entry {i} was stamped READY for \
                                 position {pos} while its request for position {} was still \
                                 unanswered (ignored)",
                                last.unwrap_or_default()
                            ),
                        });
                        tracing::warn!(
                            entry = i,
                            pos,
                            ?why,
                            "forward entry stamped READY out of turn"
                        );
                    }
                    continue;
                }
                kind => {
                    // Taken once all its words are there (they cross PCIe in any
                    // order where READY was stamped without a release: abi.rs,
                    // `forward_words`); until then it stays READY for the next pass.
                    let Some(req) = self.queue.entry_at(i).request() else {
                        continue;
                    };
                    if kind == Stamp::Behind {
                        self.report_behind(i, pos);
                    }
                    req
                }
            };
            self.taken[i] = Some(pos);
            self.open[i] = true;
            next = Some(self.after(i));
            taken += 1;
            self.counters.submitted();
            match validate(&req, &self.endpoints, self.staging_len) {
                Err(errno) => self.answer(pos, errno),
                // A NOP asks the transport for nothing but the round trip: answered
                // here, as the mailbox server does, without an `io_uring_enter`.
                Ok(Request::Nop) => self.answer(pos, 0),
                // Pwrites and preads wait for the pass's end (runs).
                Ok(request) => match Part::of(pos, &request) {
                    Some((part, Direction::Read)) => self.preads.push(part),
                    Some((part, Direction::Write)) => self.pwrites.push(part),
                    None => self.push(pos, &request, false),
                },
            }
        }
        if let Some(next) = next {
            self.cursor = next - first;
        }
        self.push_pwrites();
        self.push_preads();
        taken
    }

    /// Counts and reports a request for position `pos` on entry `i` below one
    /// already taken from it ([`Stamp::Behind`]; it is served).
    fn report_behind(&mut self, i: usize, pos: u64) {
        self.behind += 1;
        let last = self.taken[i];
        self.control.violated(|| {
            format!(
                "protocol violation: a request for position {pos} came to forward entry {i} \
                 after position {} had (served)",
                last.unwrap_or_default()
            )
        });
        tracing::warn!(
            entry = i,
            pos,
            last = ?last,
            "forward request for a position below one taken from its entry"
        );
    }

    /// Makes this pass's pwrites: a run of at most `inline_writes` bytes to a
    /// regular file here, with one `pwritev` (while the pass's allowance lasts); any
    /// other run of more than one as a `WRITEV`, the rest one `WRITE` each
    /// ([`runs`]).
    fn push_pwrites(&mut self) {
        let mut pwrites = std::mem::take(&mut self.pwrites);
        let mut allowance = self.config.inline_writes.saturating_mul(INLINE_PASS);
        for run in runs::runs(&mut pwrites) {
            let run = &pwrites[run];
            let bytes: usize = run.iter().map(|w| w.staging.len()).sum();
            if self.regular_file(run) && bytes <= self.config.inline_writes && bytes <= allowance {
                allowance -= bytes;
                self.write_here(run);
            } else if let [one] = run {
                self.push(one.id, &one.request(Direction::Write), false);
            } else {
                self.push_run(run, Direction::Write, false);
            }
        }
        pwrites.clear();
        self.pwrites = pwrites; // keeps its allocation for the next pass
    }

    /// Sends this pass's preads: each run of more than one from a regular file as a
    /// `READV`, the rest one `READ` each ([`runs`]). Only a regular file's short
    /// read means its end, where the parts past it rightly read 0; a pipe
    /// registered as a file would answer them 0 while more may come. (Reads stay
    /// in the ring: one the page cache cannot answer at once waits for the disk in
    /// io_uring's worker, not here; and a regular file's of more than
    /// `inline_reads` bytes is handed to a worker at once, so that long reads are
    /// copied by many threads, not by this one while its ring waits.)
    fn push_preads(&mut self) {
        let mut preads = std::mem::take(&mut self.preads);
        for run in runs::runs(&mut preads) {
            let run = &preads[run];
            let regular = self.regular_file(run);
            // Summed only for a regular file's run: a pipe's reads never go to workers.
            let to_worker = regular
                && run.iter().map(|r| r.staging.len()).sum::<usize>() > self.config.inline_reads;
            if run.len() > 1 && regular {
                self.push_run(run, Direction::Read, to_worker);
            } else {
                for one in run {
                    self.push(one.id, &one.request(Direction::Read), to_worker);
                }
            }
        }
        preads.clear();
        self.preads = preads; // keeps its allocation for the next pass
    }

    /// Whether a run's endpoint is a regular file.
    fn regular_file(&self, run: &[Part]) -> bool {
        run.first()
            .is_some_and(|w| self.regular.get(w.endpoint as usize) == Some(&true))
    }

    /// Writes a run from this thread (one `pwritev`) and answers each part.
    fn write_here(&mut self, run: &[Part]) {
        let staging = self.staging.host_ptr.as_ptr();
        // SAFETY: `validate` put every range inside the staging area, which the
        // channel keeps mapped past `close()`; the requests stay unanswered, so their
        // chunks untouched by the device, until the answers below.
        let results = unsafe { runs::make(Direction::Write, &self.endpoints, staging, run) };
        self.inline_counts.0 += 1;
        self.inline_counts.1 += run.len() as u64;
        for (w, result) in run.iter().zip(results) {
            self.answer(w.id, result);
        }
    }

    /// Pushes one validated request's SQE; a full SQ (which cannot happen while
    /// `in_flight` stays below its size) answers it `-EAGAIN` rather than drop it.
    fn push(&mut self, pos: u64, request: &Request, to_worker: bool) {
        let sqe = self
            .sqe(request)
            .flags(worker_flags(to_worker))
            .user_data(pos);
        // SAFETY: the SQE's buffer lies inside the staging area (validated), which
        // the channel keeps alive past `close()`; the request's entry and staging
        // chunk stay the device's untouched until we answer DONE after this op's CQE.
        let pushed = unsafe { self.ring.submission().push(&sqe) };
        if pushed.is_ok() {
            self.in_flight += 1;
        } else {
            tracing::error!(pos, "io_uring SQ full; request answered -EAGAIN");
            self.answer(pos, -libc::EAGAIN);
        }
    }

    /// Pushes a run (one endpoint, ranges end to end) as one `WRITEV` or `READV`;
    /// `to_worker`: marked `IOSQE_ASYNC`, so that an io-wq worker makes it rather
    /// than this thread inside `io_uring_enter` (a read the page cache answers is
    /// otherwise copied there, while this ring's other requests wait).
    fn push_run(&mut self, run: &[Part], direction: Direction, to_worker: bool) {
        let iovecs = Iovecs(runs::iovecs(self.staging.host_ptr.as_ptr(), run));
        let positions = run.iter().map(|w| w.id).collect();
        let index = match self.runs.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                self.runs.push(None);
                self.runs.len() - 1
            }
        };
        let (ep, offset) = (run[0].endpoint, run[0].offset);
        let (iov, count) = (iovecs.0.as_ptr(), iovecs.0.len() as u32);
        macro_rules! vectored {
            ($op:ident) => {
                match self.files {
                    Files::Fixed => opcode::$op::new(types::Fixed(ep), iov, count)
                        .offset(offset)
                        .build(),
                    Files::Raw => opcode::$op::new(types::Fd(self.fds[ep as usize]), iov, count)
                        .offset(offset)
                        .build(),
                }
            };
        }
        let sqe = match direction {
            Direction::Write => vectored!(Writev),
            Direction::Read => vectored!(Readv),
        }
        .flags(worker_flags(to_worker))
        .user_data(RUN | index as u64);
        // SAFETY: every iovec names a validated staging range (inside the staging
        // area, which the channel keeps alive past `close()`) whose request stays
        // unanswered, so untouched by the device, until this op's CQE; the iovec
        // array itself is kept in `self.runs` until then.
        let pushed = unsafe { self.ring.submission().push(&sqe) };
        if pushed.is_ok() {
            self.in_flight += 1;
            let counts = match direction {
                Direction::Write => &mut self.run_counts,
                Direction::Read => &mut self.read_run_counts,
            };
            counts.0 += 1;
            counts.1 += run.len() as u64;
            self.runs[index] = Some(InRing { positions, iovecs });
        } else {
            tracing::error!(
                parts = run.len(),
                "io_uring SQ full; requests answered -EAGAIN"
            );
            for w in run {
                self.answer(w.id, -libc::EAGAIN);
            }
        }
    }

    /// The SQE for a validated request.
    fn sqe(&self, req: &Request) -> squeue::Entry {
        let base = self.staging.host_ptr.as_ptr();
        // `validate` put the staging range inside the staging area; its length came
        // from a request's `u32`.
        let ptr = |s: Staging| base.wrapping_add(s.off());
        macro_rules! rw {
            ($op:ident, $ep:expr, $ptr:expr, $staging:expr, $offset:expr) => {{
                let (ep, len) = ($ep, $staging.len() as u32);
                match self.files {
                    Files::Fixed => opcode::$op::new(types::Fixed(ep), $ptr, len)
                        .offset($offset)
                        .build(),
                    Files::Raw => opcode::$op::new(types::Fd(self.fds[ep as usize]), $ptr, len)
                        .offset($offset)
                        .build(),
                }
            }};
        }
        macro_rules! socket {
            ($op:ident, $ep:expr, $ptr:expr, $staging:expr, $flags:expr) => {{
                let (ep, len) = ($ep, $staging.len() as u32);
                match self.files {
                    Files::Fixed => opcode::$op::new(types::Fixed(ep), $ptr, len)
                        .flags($flags)
                        .build(),
                    Files::Raw => opcode::$op::new(types::Fd(self.fds[ep as usize]), $ptr, len)
                        .flags($flags)
                        .build(),
                }
            }};
        }
        // Stream ops pass u64::MAX (-1): the file position (ignored by pipes).
        match *req {
            Request::Nop => opcode::Nop::new().build(),
            Request::Pwrite {
                endpoint: ep,
                staging: s,
                offset,
            } => rw!(Write, ep, ptr(s).cast_const(), s, offset),
            Request::Pread {
                endpoint: ep,
                staging: s,
                offset,
            } => rw!(Read, ep, ptr(s), s, offset),
            Request::Write {
                endpoint: ep,
                staging: s,
            } => rw!(Write, ep, ptr(s).cast_const(), s, u64::MAX),
            Request::Read {
                endpoint: ep,
                staging: s,
            } => rw!(Read, ep, ptr(s), s, u64::MAX),
            // MSG_NOSIGNAL: the send runs in this thread (io_uring_enter issues it
            // inline), and a peer that closed must answer -EPIPE, not kill the host.
            Request::Send {
                endpoint: ep,
                staging: s,
            } => socket!(Send, ep, ptr(s).cast_const(), s, libc::MSG_NOSIGNAL),
            Request::Recv {
                endpoint: ep,
                staging: s,
            } => socket!(Recv, ep, ptr(s), s, 0),
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

    /// Asks the kernel to cancel every op in the ring (`IORING_ASYNC_CANCEL_ANY`).
    fn cancel_in_flight(&mut self) {
        tracing::debug!(
            in_flight = self.in_flight,
            "closing: cancelling ops that never finished"
        );
        let sqe = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(CANCEL);
        // SAFETY: a cancel request carries no buffer.
        if unsafe { self.ring.submission().push(&sqe) }.is_ok() {
            self.submit();
        }
    }

    /// Answers every completion the ring has.
    fn reap(&mut self) -> u32 {
        let mut n = 0;
        let mut reaped = std::mem::take(&mut self.reaped);
        reaped.extend(
            self.ring
                .completion()
                .map(|cqe| (cqe.user_data(), cqe.result())),
        );
        for &(pos, result) in &reaped {
            if pos == CANCEL {
                continue; // the cancel request itself
            }
            self.in_flight = self.in_flight.saturating_sub(1);
            if pos & RUN == 0 {
                self.answer(pos, result);
                n += 1;
                continue;
            }
            let run = usize::try_from(pos & !RUN)
                .ok()
                .and_then(|i| self.runs.get_mut(i))
                .and_then(Option::take);
            let Some(run) = run else {
                // Only this thread writes user_data: a bug, not the device's doing.
                tracing::error!(
                    user_data = pos,
                    "a WRITEV or READV completion for no run in the ring"
                );
                continue;
            };
            let shares = runs::shares(result, run.iovecs.0.iter().map(|v| v.iov_len));
            for (&pos, share) in run.positions.iter().zip(shares) {
                self.answer(pos, share);
                n += 1;
            }
            drop(run.iovecs); // only now: the kernel may read them until the CQE
        }
        reaped.clear();
        self.reaped = reaped; // keeps its allocation for the next round
        n
    }

    /// Answers `pos` without the ring (a refused request).
    fn answer(&mut self, pos: u64, result: i32) {
        let n = self.open.len() as u64;
        self.open[(pos % n) as usize] = false;
        self.queue.entry(pos).answer(pos, result);
        self.counters.finished(i64::from(result));
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
        for i in self.config.entries.clone() {
            let Some(pos) = self.untaken(i) else { continue };
            if let Stamp::Bad(_) = self.classify(i, pos) {
                continue; // not a request (counted as a violation when seen)
            }
            self.counters.submitted();
            self.answer(pos, -libc::ESHUTDOWN);
            refused += 1;
        }
        Exit {
            in_flight: self.in_flight,
            refused_at_close: refused,
            deadline_hit,
            violations: self.violations,
            unanswered_stamps: self.unanswered_stamps,
            behind: self.behind,
            ring_error: self.ring_error.take(),
        }
    }
}
