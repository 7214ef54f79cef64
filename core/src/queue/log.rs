//! Printf logs: `gpuio_printf` / `gpuio_fprintf` as a stream instead of a request
//! per line. A log is a host queue to the host whose messages are whole lines; the
//! device half is `gpuio/log.h`. One host thread per log drains its rings while the
//! kernel runs and writes the lines to the endpoint's descriptor, many lines per
//! write(2): whole lines, each thread's in order (a thread always prints on one
//! ring, and a ring is read in order), nothing dropped without being counted.
//!
//! A log's rings are split among a few host threads (`LogConfig::threads`): one
//! thread drains each ring, in order, so each kernel thread's lines stay in order,
//! and every write carries whole lines (a regular file's offset moves atomically
//! with each write; a pipe writes up to `PIPE_BUF` bytes atomically). A thread polls
//! while lines come and sleeps while none do: the first thread up to 2 ms at a
//! time (10 ms after a quiet spell, 50 ms after a long one), watching the others'
//! rings and waking their threads when lines come there; the others sleep up to
//! 500 ms unless woken, so an idle log costs next to no CPU. On a stream (pipe,
//! socket, tty) it writes at most `PIPE_BUF` bytes of whole lines at a time after
//! `poll` says there is room, so a reader that stops reading never blocks it past
//! the channel's close bound and lines from other writers to the same pipe never
//! land inside one of ours. On a socket each write is `send(2)` with
//! `MSG_NOSIGNAL`, as a kernel's own sends are (`crate::request`, "Sockets"): a
//! reader that closed ends the log with `EPIPE` (reported, the lines counted lost)
//! and never raises `SIGPIPE` in the host.

use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use super::receiver::{Receiver, RecvError};
use super::{QueueConfig, QueueShared};
use crate::endpoint::{Endpoint, EndpointKind};
use crate::transport::Backoff;

/// How a printf log is sized. `Default`: lines of up to 1023 bytes, 32 rings of 512
/// lines each (about 17 MiB of shared memory), written out by half the host's cores,
/// at least 1 and at most 8 threads. Measured on an H100 (every SM printing 64-byte
/// lines, docs/validation/h100-2026-11-25-queues/): 8 rings and 4 threads wrote
/// 12.6 M lines/s, 32 rings and 4 threads 15.2 M, 32 rings and 8 threads 18.0 M
/// (1.15 GB/s) — more rings, fewer warps reserving on each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// Longest line in bytes; a longer one is cut to this length, keeping its final
    /// newline, and the call returns `-EMSGSIZE`.
    pub max_line: u32,
    /// Lines each ring holds before printing threads wait for the host to write.
    pub capacity: u32,
    /// Rings: a printing warp uses ring `warp % rings`.
    pub rings: u32,
    /// Host threads writing the lines out (at most one per ring): one thread wrote
    /// about 6 M lines/s on an H100's host, so a device printing faster needs more.
    pub threads: u32,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            max_line: 1023,
            capacity: 512,
            rings: 32,
            threads: std::thread::available_parallelism()
                .map_or(4, |n| (n.get() / 2).clamp(1, 8) as u32),
        }
    }
}

impl LogConfig {
    /// The host queue that carries the log: one more byte per cell than the longest
    /// line, where the device's formatter puts its NUL.
    pub(crate) fn queue(&self) -> QueueConfig {
        QueueConfig {
            max_message: self.max_line.saturating_add(1),
            capacity: self.capacity,
            rings: self.rings,
            timeout: Duration::from_secs(30),
        }
    }
}

/// What a printf log wrote, reported by `close()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogReport {
    /// The endpoint the log writes to.
    pub endpoint: String,
    /// Lines written to the endpoint.
    pub lines: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Lines the kernel printed that were not written: the descriptor refused them
    /// (`error` says why) or the channel closed before they could be.
    pub lost: u64,
    /// The first write error.
    pub error: Option<String>,
}

impl std::fmt::Display for LogReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "printf log to {:?}: {} lines, {} bytes written",
            self.endpoint, self.lines, self.bytes
        )?;
        if self.lost > 0 {
            write!(f, ", {} lines lost", self.lost)?;
        }
        if let Some(e) = &self.error {
            write!(f, " ({e})")?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct LogStats {
    lines: AtomicU64,
    bytes: AtomicU64,
    lost: AtomicU64,
    error: Mutex<Option<String>>,
}

impl LogStats {
    fn fail(&self, what: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(what);
        }
    }
}

/// Bytes of lines gathered before one write to a file.
const FILE_BATCH: usize = 1 << 20;
/// Bytes of whole lines one write to a stream carries at most: `PIPE_BUF`, which a
/// pipe writes atomically once `poll` says it has room.
const STREAM_BATCH: usize = 4096;

/// The host thread draining one printf log.
pub(crate) struct LogDrain {
    endpoint: String,
    q: Arc<QueueShared>,
    stats: Arc<LogStats>,
    /// Set when `close()` runs out of time: stop writing, count the rest as lost.
    abandon: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl LogDrain {
    /// Starts the threads that write `q`'s lines to `endpoint`'s descriptor.
    pub(crate) fn start(
        q: Arc<QueueShared>,
        endpoint: Arc<Endpoint>,
        threads: u32,
    ) -> Result<Self, std::io::Error> {
        let peers: Arc<OnceLock<Vec<Thread>>> = Arc::new(OnceLock::new());
        let mut this = Self {
            endpoint: endpoint.name.clone(),
            q: q.clone(),
            stats: Arc::new(LogStats::default()),
            abandon: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
        };
        // Several threads only where each write of whole lines lands whole: a regular
        // file (its offset moves atomically with each write) or a pipe (writes up to
        // PIPE_BUF are atomic). A socket may take part of a write and interleave the
        // rest with another thread's: one thread. What the descriptor is, not how it
        // was registered, decides: stdout is registered as a stream but may be a file.
        use rustix::fs::FileType;
        let file_type = endpoint
            .fd()
            .and_then(|fd| rustix::fs::fstat(fd).ok())
            .map(|st| FileType::from_raw_mode(st.st_mode));
        let sink = match file_type {
            Some(FileType::Socket) => Sink::Socket,
            Some(FileType::RegularFile) => Sink::File,
            Some(_) => Sink::Stream,
            None if endpoint.kind == EndpointKind::File => Sink::File,
            None => Sink::Stream,
        };
        let threads = match file_type {
            Some(FileType::RegularFile | FileType::Fifo) => threads,
            _ => 1,
        };
        for (k, rx) in Receiver::new(q)
            .split(threads.max(1) as usize)
            .into_iter()
            .enumerate()
        {
            let (stats, abandon, endpoint) =
                (this.stats.clone(), this.abandon.clone(), endpoint.clone());
            let idle = Idle::new(k, peers.clone(), &rx);
            let spawned = std::thread::Builder::new()
                .name(format!("gpuio-log-{}-{k}", endpoint.name))
                .spawn(move || drain(rx, &endpoint, sink, &stats, &abandon, idle));
            match spawned {
                Ok(t) => this.threads.push(t),
                Err(e) => {
                    // Stop the ones started (Drop finishes them).
                    this.abandon.store(true, Ordering::Release);
                    return Err(e);
                }
            }
        }
        // The first thread wakes the others when lines come after a quiet spell.
        let _ = peers.set(this.threads.iter().map(|t| t.thread().clone()).collect());
        Ok(this)
    }

    /// Waits until the threads wrote every line published before the channel began
    /// closing, at most until `deadline`; then stops it and reports.
    pub(crate) fn finish(&mut self, deadline: Instant) -> LogReport {
        // The channel is closing: no drain thread sleeps its long sleep now (each
        // looks at its rings, or at `abandon`, at once).
        let wake = |threads: &[JoinHandle<()>]| threads.iter().for_each(|t| t.thread().unpark());
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            wake(&self.threads);
            std::thread::sleep(Duration::from_micros(200));
        }
        if self.threads.iter().any(|t| !t.is_finished()) {
            self.abandon.store(true, Ordering::Release);
            wake(&self.threads);
            self.stats
                .fail("the channel's close bound passed while writing".into());
        }
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                self.stats.fail("a log thread panicked".into());
            }
        }
        if let Some(v) = self.q.violation() {
            self.stats.fail(format!("protocol violation: {v}"));
        }
        // Lines published that the thread never took (printed after it stopped).
        let left = self.q.report().in_flight;
        LogReport {
            endpoint: self.endpoint.clone(),
            lines: self.stats.lines.load(Ordering::Acquire),
            bytes: self.stats.bytes.load(Ordering::Acquire),
            lost: self.stats.lost.load(Ordering::Acquire) + left,
            error: self.stats.error.lock().map(|e| e.clone()).unwrap_or(None),
        }
    }
}

impl Drop for LogDrain {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.finish(Instant::now() + Duration::from_secs(1));
        }
    }
}

/// What a log writes to, as its descriptor says (not as it was registered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sink {
    /// A regular file: any number of bytes per write.
    File,
    /// A pipe, tty or other stream: `PIPE_BUF` bytes at a time, once `poll` says
    /// there is room.
    Stream,
    /// A socket: as a stream, with `send(2)` and `MSG_NOSIGNAL`.
    Socket,
}

impl Sink {
    fn stream(self) -> bool {
        self != Sink::File
    }
}

/// The thread: gathers lines, writes them, until the channel closes and the rings
/// are empty.
fn drain(
    mut rx: Receiver,
    endpoint: &Endpoint,
    sink: Sink,
    stats: &LogStats,
    abandon: &AtomicBool,
    mut idle: Idle,
) {
    let Some(fd) = endpoint.fd() else {
        stats.fail("the endpoint has no descriptor".into());
        return;
    };
    let batch_max = if sink.stream() {
        STREAM_BATCH
    } else {
        FILE_BATCH
    };
    let mut batch: Vec<u8> = Vec::with_capacity(FILE_BATCH + rx.max_message());
    // Where each gathered line ends in `batch`.
    let mut ends: Vec<usize> = Vec::new();
    let mut broken = false;
    loop {
        if abandon.load(Ordering::Acquire) {
            return; // what is left in the rings is counted lost by `finish`
        }
        let mut ended = false;
        match rx.take_available(&mut batch, &mut ends, FILE_BATCH, usize::MAX) {
            Ok(_) => {}
            Err(RecvError::Closed) => ended = true,
            // A scribbled ring: the queue noted the violation (`finish` reports it),
            // and the other rings are still read.
            Err(e) => stats.fail(format!("reading the log: {e}")),
        }
        if ends.is_empty() {
            if ended {
                return;
            }
            idle.pause();
            continue;
        }
        idle.busy();
        let mut done = 0; // lines of `ends` written (or counted lost)
        let mut from = 0; // their bytes
        while done < ends.len() {
            if broken || abandon.load(Ordering::Acquire) {
                stats
                    .lost
                    .fetch_add((ends.len() - done) as u64, Ordering::Relaxed);
                break;
            }
            // Whole lines up to `batch_max` bytes (at least one line).
            let mut upto = done + 1;
            while upto < ends.len() && ends[upto] - from <= batch_max {
                upto += 1;
            }
            match write_all(fd, &batch[from..ends[upto - 1]], sink, abandon) {
                Ok(()) => {
                    stats
                        .lines
                        .fetch_add((upto - done) as u64, Ordering::Relaxed);
                    stats
                        .bytes
                        .fetch_add((ends[upto - 1] - from) as u64, Ordering::Relaxed);
                }
                Err(e) => {
                    stats.fail(format!("write to {:?}: {e}", endpoint.name));
                    stats
                        .lost
                        .fetch_add((upto - done) as u64, Ordering::Relaxed);
                    broken = true;
                }
            }
            from = ends[upto - 1];
            done = upto;
        }
        batch.clear();
        ends.clear();
        if ended {
            return;
        }
    }
}

/// Writes all of `bytes`; on a stream, only once `poll` says there is room, looking
/// at `abandon` between polls.
fn write_all(
    fd: BorrowedFd<'_>,
    mut bytes: &[u8],
    sink: Sink,
    abandon: &AtomicBool,
) -> Result<(), std::io::Error> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    while !bytes.is_empty() {
        if sink.stream() {
            let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
            let wait = Timespec {
                tv_sec: 0,
                tv_nsec: 50_000_000,
            };
            match poll(&mut fds, Some(&wait)) {
                Ok(0) => {
                    if abandon.load(Ordering::Acquire) {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "the reader stopped reading and the channel closed",
                        ));
                    }
                    continue;
                }
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        let wrote = match sink {
            Sink::Socket => rustix::net::send(fd.as_fd(), bytes, rustix::net::SendFlags::NOSIGNAL),
            Sink::File | Sink::Stream => rustix::io::write(fd.as_fd(), bytes),
        };
        match wrote {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// How a drain thread waits while its rings are empty: the first thread backs off
/// like every host thread ([`Backoff`]: sleeps up to 2 ms, 10 ms after a quiet
/// spell, 50 ms after a long one) and watches the others' rings: it wakes them when
/// it finds lines there (looking before each of its sleeps, and at least every
/// [`WATCH_EVERY`] while it spins or writes), or lines of its own after a quiet
/// spell. The others sleep up to [`PEER_IDLE_MAX`] between looks of their own, a
/// backstop: lines on their rings wait for the first thread's next look, no longer.
/// (An idle log's threads woke ~20 times a second each, at ~25 µs of CPU a wake on
/// an H200's host (2026-11-27, run 54): the 7 other threads of a stdout log were
/// about half of an idle channel's 0.72 % of a core.)
struct Idle {
    backoff: Backoff,
    /// The first thread's watch over the others (`None` for the others).
    watch: Option<Watch>,
}

/// The first drain thread's view of the other threads' rings.
struct Watch {
    peers: Arc<OnceLock<Vec<Thread>>>,
    q: Arc<QueueShared>,
    /// Rings the first thread drains itself (`Receiver::split`'s share 0).
    own: Vec<u32>,
    last: Instant,
}

/// Longest sleep of a drain thread other than the first.
const PEER_IDLE_MAX: Duration = Duration::from_millis(500);
/// While it spins or writes, the first thread looks at the others' rings this often.
const WATCH_EVERY: Duration = Duration::from_millis(1);

impl Watch {
    /// Wakes the other threads if one of their rings holds lines.
    fn look(&mut self) {
        self.last = Instant::now();
        let mut theirs = (0..self.q.rings).filter(|r| !self.own.contains(r));
        if theirs.any(|r| super::receiver::ring_has_message(&self.q, r)) {
            self.wake();
        }
    }

    fn wake(&self) {
        for t in self.peers.get().into_iter().flatten() {
            t.unpark();
        }
    }
}

impl Idle {
    fn new(k: usize, peers: Arc<OnceLock<Vec<Thread>>>, rx: &Receiver) -> Self {
        if k == 0 {
            Self {
                backoff: Backoff::new(Duration::from_millis(2)),
                watch: Some(Watch {
                    peers,
                    q: rx.queue().clone(),
                    own: rx.rings().to_vec(),
                    last: Instant::now(),
                }),
            }
        } else {
            Self {
                backoff: Backoff::parking(PEER_IDLE_MAX),
                watch: None,
            }
        }
    }

    fn pause(&mut self) {
        if let Some(w) = &mut self.watch {
            // Before each sleep; while spinning, now and then.
            if self.backoff.sleeping() || w.last.elapsed() >= WATCH_EVERY {
                w.look();
            }
        }
        self.backoff.idle();
    }

    fn busy(&mut self) {
        if let Some(w) = &mut self.watch {
            if self.backoff.sleeping() {
                w.wake();
            } else if w.last.elapsed() >= WATCH_EVERY {
                w.look();
            }
        }
        self.backoff.reset();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::memory::{HostMemory, MemoryProvider, SharedMemory};
    use crate::queue::{Direction, QueueConfig};
    use std::sync::mpsc;

    /// The first drain thread wakes another whose ring holds lines, however long
    /// that one would sleep: a line on any ring waits for the first thread's next
    /// look, not for the others' long sleeps.
    #[test]
    fn the_first_drain_thread_wakes_another_when_lines_wait_on_its_rings() {
        let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
        let descriptor: Arc<dyn SharedMemory> =
            Arc::from(provider.alloc_shared(1 << 12).expect("descriptor memory"));
        let config = QueueConfig {
            max_message: 16,
            capacity: 8,
            rings: 2,
            timeout: Duration::from_secs(1),
        };
        let (q, _) = QueueShared::create(&provider, descriptor, "log", Direction::ToHost, &config)
            .expect("queue");
        let mut rxs = Receiver::new(q.clone()).split(2).into_iter();
        let (first, other) = (rxs.next().unwrap(), rxs.next().unwrap());
        assert_eq!((first.rings(), other.rings()), (&[0u32][..], &[1u32][..]));

        // The other thread sleeps until it is woken (no timeout: only an unpark, or
        // a spurious wake-up, ends it).
        let (woke, woken) = mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            std::thread::park();
            woke.send(()).unwrap();
        });
        let peers = Arc::new(OnceLock::new());
        peers.set(vec![sleeper.thread().clone()]).unwrap();
        let mut idle = Idle::new(0, peers, &first);

        // A one-line message on ring 1, as a kernel publishes it: the bytes, then
        // the stamp (position 0, 6 bytes, a group of 1) with release.
        let off = q.cell_off(1, 0);
        q.mem
            .write_bytes(off + crate::queue::HEADER, b"hello\n")
            .unwrap();
        q.stamp(1, 0)
            .unwrap()
            .store(crate::abi::cell::stamp(0, 6, 1), Ordering::Release);
        assert!(super::super::receiver::ring_has_message(&q, 1));

        idle.watch
            .as_mut()
            .expect("the first thread watches")
            .look();
        woken
            .recv_timeout(Duration::from_secs(10))
            .expect("the other thread was woken");
        sleeper.join().unwrap();
    }
}
