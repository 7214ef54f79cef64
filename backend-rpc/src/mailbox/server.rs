//! The mailbox server: host threads that answer ports with plain syscalls.
//!
//! Each typed request is one plain syscall: `pwrite`/`pread` on files, `write`/`read`
//! on pipes, `send` with `MSG_NOSIGNAL` and `recv` on sockets (the rulebook makes
//! every stream op on a socket one of those), so a send to a closed peer answers
//! `-EPIPE` and never raises `SIGPIPE` in the host. Pwrites, and preads of regular
//! files, that a thread takes in one round wait for its end: those whose ranges of
//! one file follow each other are then made as one `pwritev` or `preadv` ([`runs`]).
//!
//! Server threads by load: thread 0 always serves; threads 1, 2, … sleep (parked)
//! until a thread's round answers [`WAKE_AT`] requests or more, then the next
//! sleeping one is woken, and a woken thread that answers nothing for
//! [`PARK_AFTER`] sleeps again. So a quiet channel costs one backing-off thread,
//! and a busy one gets as many as it keeps busy. Every thread scans every port
//! round-robin, each from its own start, and serves a pending port only after
//! claiming it ([`Shared::claims`]): one thread per request, and every pending
//! port is answered once per round, so no port starves another. A round that finds
//! nothing backs off ([`Backoff`]) to almost no CPU.
//! A stream read or write whose endpoint is not ready (`poll`) stays pending and is
//! looked at again next round, so one read of an empty pipe never stops the thread
//! and the ports it serves; its caller's deadline bounds its wait, and close reports
//! it if it is still pending then.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gpuio_core::abi;
use gpuio_core::endpoint::Endpoint;
use gpuio_core::memory::SharedMemory;
use gpuio_core::request::{self, Request};
use gpuio_core::runs::{self, Direction};
use gpuio_core::transport::{Backoff, CounterBlock, Counters, TransportError};
use gpuio_core::KeepAlive;

use crate::sys;

/// The device's flag word (`device_out`): std's atomic over shared memory, or
/// loom's in the models (`loom_model.rs`).
pub(crate) trait Flag {
    fn load(&self, order: Ordering) -> u32;
}

impl Flag for AtomicU32 {
    fn load(&self, order: Ordering) -> u32 {
        AtomicU32::load(self, order)
    }
}

/// A port's answer word (`host_out`: the host's flip and the result,
/// `abi::mailbox_answer`): std's atomic over shared memory, or loom's.
pub(crate) trait AnswerWord {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
}

impl AnswerWord for AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order)
    }
}

/// What the host's half of the port hand-off touches: the device's flag, the request
/// it reads and the answer word it writes. [`Ports`] is the real one.
pub(crate) trait PortView {
    type Flag: Flag;
    type Answer: AnswerWord;
    fn device_out(&self, i: u32) -> &Self::Flag;
    fn host_out(&self, i: u32) -> &Self::Answer;
    fn request(&self, i: u32) -> abi::Request;
}

/// The host's half of the port hand-off (`gpuio/mailbox.h`), first step: port `i`'s
/// request and the device's flag it came with, if it holds one (`device_out`,
/// acquired, differs from `host_out`'s flip). [`reply`] answers it; a request left
/// unanswered is found again next round.
pub(crate) fn take<P: PortView>(ports: &P, i: u32) -> Option<(u32, abi::Request)> {
    // Acquire: the request (and its staging bytes) written before the flip are
    // visible from here on. `host_out` is ours alone.
    let sent = ports.device_out(i).load(Ordering::Acquire);
    if sent == abi::mailbox_answer::flip(ports.host_out(i).load(Ordering::Relaxed)) {
        return None;
    }
    Some((sent, ports.request(i)))
}

/// The hand-off's second step: answers the request [`take`] found with flag `sent`:
/// `host_out` = that flag's flip with the result (release), one word. A result
/// beyond 32 bits (none: Linux moves at most 0x7ffff000 bytes a call) is answered
/// `-EOVERFLOW`.
pub(crate) fn reply<P: PortView>(ports: &P, i: u32, sent: u32, result: i64) {
    let result = i32::try_from(result).unwrap_or(-libc::EOVERFLOW);
    // Release: the bytes read into staging before the answer.
    ports
        .host_out(i)
        .store(abi::mailbox_answer::word(sent, result), Ordering::Release);
}

/// The shared `MailboxPort[count]` array, seen from the host.
///
/// Per port, the host only ever *loads* `device_out` and `req` and *stores*
/// `host_out`; the device does the opposite. Which side may touch `req` at a given
/// moment is decided by the two flags (abi.rs).
pub(crate) struct Ports {
    base: NonNull<abi::MailboxPort>,
    count: u32,
    _mem: Arc<dyn SharedMemory>,
}

// SAFETY: `Ports` is a view of shared memory it keeps alive (`_mem`); every access
// goes through atomics or volatile copies whose ordering the flag protocol provides.
unsafe impl Send for Ports {}
// SAFETY: as above.
unsafe impl Sync for Ports {}

impl Ports {
    /// Views `mem` as `count` ports. Fails if it is too small or misaligned.
    pub(crate) fn new(mem: Arc<dyn SharedMemory>, count: u32) -> Result<Self, TransportError> {
        let region = mem.region();
        let need = count as usize * std::mem::size_of::<abi::MailboxPort>();
        let align = std::mem::align_of::<abi::MailboxPort>();
        if region.len < need || !(region.host_ptr.as_ptr() as usize).is_multiple_of(align) {
            return Err(TransportError::Config(format!(
                "mailbox ports need {need} bytes aligned to {align}, got {region:?}"
            )));
        }
        Ok(Self {
            base: region.host_ptr.cast(),
            count,
            _mem: mem,
        })
    }

    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    fn port(&self, i: u32) -> *mut abi::MailboxPort {
        assert!(i < self.count, "port {i} of {}", self.count);
        // SAFETY: `i < count` and `new` checked the memory holds `count` ports.
        unsafe { self.base.as_ptr().add(i as usize) }
    }

    /// Whether port `i` holds a request the host has not answered.
    pub(crate) fn is_pending(&self, i: u32) -> bool {
        self.device_out(i).load(Ordering::Acquire)
            != abi::mailbox_answer::flip(self.host_out(i).load(Ordering::Acquire))
    }
}

impl PortView for Ports {
    type Flag = AtomicU32;
    type Answer = AtomicU64;

    /// Flipped by the device to send.
    fn device_out(&self, i: u32) -> &AtomicU32 {
        // SAFETY: the field lies inside the live, aligned port (see `port`); AtomicU32
        // has u32's layout, and the device touches the word only atomically.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.port(i)).device_out)) }
    }

    /// Written by the host to answer: its flip and the result.
    fn host_out(&self, i: u32) -> &AtomicU64 {
        // SAFETY: the field lies inside the live port, 8-aligned (abi.rs's layout,
        // checked against the header); AtomicU64 has u64's layout, and the device
        // touches the word only atomically.
        unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*self.port(i)).host_out)) }
    }

    /// A copy of port `i`'s request. Meaningful after an acquire load of
    /// `device_out` that differs from `host_out`.
    fn request(&self, i: u32) -> abi::Request {
        // SAFETY: the field is in bounds and aligned; a volatile copy of plain data
        // (every bit pattern is a valid Request) never creates a reference.
        unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*self.port(i)).req)) }
    }
}

/// The staging area as the host addresses it.
pub(crate) struct Staging {
    pub(crate) host: NonNull<u8>,
    /// Bytes a request may name (`Channel::staging_len`).
    pub(crate) len: u64,
}

// SAFETY: an address range in memory the channel keeps alive (`Shared::_keep`); the
// bytes are only handed to syscalls as raw pointers.
unsafe impl Send for Staging {}
// SAFETY: as above.
unsafe impl Sync for Staging {}

/// The transport's counts: one block per server thread (each written by its
/// thread alone), summed when read.
#[derive(Debug)]
pub(crate) struct CounterCells(Box<[CounterBlock]>);

impl CounterCells {
    pub(crate) fn new(threads: u32) -> Self {
        Self(
            (0..threads.max(1))
                .map(|_| CounterBlock::default())
                .collect(),
        )
    }

    /// Server thread `index`'s block.
    fn of(&self, index: u32) -> &CounterBlock {
        &self.0[index as usize % self.0.len()]
    }

    pub(crate) fn get(&self) -> Counters {
        CounterBlock::sum(self.0.iter())
    }
}

/// A port's claim, on a cache line of its own: the server threads take the claims
/// of different ports at once.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Claim(AtomicBool);

/// How the server threads are told to stop.
#[derive(Debug, Default)]
pub(crate) struct Control {
    /// Set by `close`: serve until quiet, never past this instant.
    pub(crate) drain_until: OnceLock<Instant>,
    /// Stop after the current request (close's deadline passed, or the transport was
    /// dropped without closing).
    pub(crate) stop: AtomicBool,
}

/// A round that answers this many requests or more wakes one more sleeping server
/// thread.
pub(crate) const WAKE_AT: u32 = 4;

/// A woken server thread that answers nothing for this long goes back to sleep.
pub(crate) const PARK_AFTER: Duration = Duration::from_millis(2);

/// The server threads beyond the first, and which of them are awake.
#[derive(Debug, Default)]
pub(crate) struct Helpers {
    /// Per server thread (index 0 is always awake): whether it serves now.
    awake: Box<[AtomicBool]>,
    /// The threads, once spawned, to wake them.
    threads: OnceLock<Vec<std::thread::Thread>>,
    /// The most threads that were awake at once (shared with the builder's tests).
    peak: Arc<AtomicU32>,
}

impl Helpers {
    pub(crate) fn new(threads: u32, peak: Arc<AtomicU32>) -> Self {
        let awake: Box<[AtomicBool]> = (0..threads).map(|k| AtomicBool::new(k == 0)).collect();
        peak.fetch_max(1, Ordering::Relaxed);
        Self {
            awake,
            threads: OnceLock::new(),
            peak,
        }
    }

    /// Hands over the spawned threads (index order), so that they can be woken.
    pub(crate) fn set_threads(&self, threads: Vec<std::thread::Thread>) {
        let _ = self.threads.set(threads);
    }

    /// Wakes the first sleeping thread, if any.
    fn wake_one(&self) {
        for (k, awake) in self.awake.iter().enumerate().skip(1) {
            if !awake.swap(true, Ordering::AcqRel) {
                let now = self
                    .awake
                    .iter()
                    .filter(|a| a.load(Ordering::Relaxed))
                    .count();
                self.peak.fetch_max(now as u32, Ordering::Relaxed);
                if let Some(t) = self.threads.get().and_then(|t| t.get(k)) {
                    t.unpark();
                }
                tracing::trace!(thread = k, "mailbox server woken by load");
                return;
            }
        }
    }

    /// Wakes every thread (closing, or stopping).
    pub(crate) fn wake_all(&self) {
        for t in self.threads.get().into_iter().flatten() {
            t.unpark();
        }
    }

    /// The most server threads that were awake at once.
    pub(crate) fn peak(&self) -> u32 {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Everything the server threads share. Holds the channel's memory and endpoints
/// alive, so a thread that outlives `close` (stuck in a syscall) stays sound.
pub(crate) struct Shared {
    pub(crate) ports: Ports,
    /// Per port: a server thread is answering it (host-side; taken with a swap before
    /// a thread looks at the request, so that one thread alone writes the answer).
    pub(crate) claims: Box<[Claim]>,
    pub(crate) helpers: Helpers,
    pub(crate) endpoints: Vec<Arc<Endpoint>>,
    /// Per endpoint, whether it is a regular file: only those have their preads
    /// held and joined ([`Endpoint::is_regular_file`]).
    pub(crate) regular: Box<[bool]>,
    pub(crate) staging: Staging,
    pub(crate) counters: CounterCells,
    pub(crate) control: Control,
    pub(crate) _keep: KeepAlive,
}

/// How one server thread behaves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerConfig {
    /// Which thread: 0 always serves, the others when the load wakes them.
    pub(crate) index: u32,
    /// How many there are: thread `index` starts its rounds at port
    /// `index * ports / threads`.
    pub(crate) threads: u32,
    /// Longest idle sleep.
    pub(crate) idle_max: Duration,
    /// How long a closing server must see no request before it stops.
    pub(crate) close_grace: Duration,
    /// How long an idle server watches the port the next request comes to
    /// ([`MailboxBuilder::watch`](super::MailboxBuilder::watch)).
    pub(crate) watch: Duration,
}

/// One server thread's loop.
pub(crate) fn run(shared: Arc<Shared>, cfg: ServerConfig) {
    let span = tracing::debug_span!("mailbox.server", index = cfg.index);
    let _enter = span.enter();
    let mut backoff = Backoff::parking(cfg.idle_max);
    let mut quiet_since: Option<Instant> = None;
    let mut served_at = Instant::now();
    let awake = &shared.helpers.awake[cfg.index as usize];
    let mut held = Held::new(shared.ports.count());
    // The port the next request most likely comes to: the one after the last served.
    let mut next = first_port(shared.ports.count(), cfg);
    loop {
        if shared.control.stop.load(Ordering::Acquire) {
            break;
        }
        let draining = shared.control.drain_until.get().copied();
        if cfg.index > 0 && draining.is_none() && !awake.load(Ordering::Acquire) {
            // Asleep until the load (or a close) wakes it; the timeout only bounds
            // a missed wake-up.
            std::thread::park_timeout(Duration::from_millis(50));
            served_at = Instant::now();
            continue;
        }
        let served = serve_round(&shared, cfg, &mut held, &mut next);
        let now = Instant::now();
        if let Some(deadline) = draining {
            if now >= deadline {
                break;
            }
            if served > 0 {
                quiet_since = None;
            } else if now.duration_since(*quiet_since.get_or_insert(now)) >= cfg.close_grace {
                break;
            }
        }
        if served >= WAKE_AT {
            shared.helpers.wake_one();
        }
        if served > 0 {
            served_at = now;
            backoff.reset();
        } else if cfg.index > 0 && now.duration_since(served_at) >= PARK_AFTER {
            awake.store(false, Ordering::Release);
            tracing::trace!(thread = cfg.index, "mailbox server idle: asleep again");
        } else if !watched(&shared, cfg, &backoff, next) {
            backoff.idle();
        }
    }
    tracing::debug!("mailbox server stopped");
}

/// The pwrites and preads one server thread took in a round and has not answered
/// yet: their ports stay claimed until [`make_runs`] answers them.
struct Held {
    pwrites: Vec<runs::Part>,
    /// Preads of regular files.
    preads: Vec<runs::Part>,
    /// Per port, the device's flag its held request came with.
    sent: Box<[u32]>,
}

impl Held {
    fn new(ports: u32) -> Self {
        Self {
            pwrites: Vec::new(),
            preads: Vec::new(),
            sent: vec![0; ports as usize].into_boxed_slice(),
        }
    }

    fn len(&self) -> usize {
        self.pwrites.len() + self.preads.len()
    }

    /// The held parts that move bytes `direction`'s way.
    fn parts(&mut self, direction: Direction) -> &mut Vec<runs::Part> {
        match direction {
            Direction::Write => &mut self.pwrites,
            Direction::Read => &mut self.preads,
        }
    }
}

/// Between rounds that answered nothing, while `backoff` still spins: watches port
/// `next` for a request to come (`cfg.watch`, [`gpuio_core::transport::watch`]);
/// whether one came. Not where `next` is pending already: the round just left that
/// request there (a stream read that would block), and watching it would keep this
/// thread from ever backing off.
fn watched(shared: &Shared, cfg: ServerConfig, backoff: &Backoff, next: u32) -> bool {
    !cfg.watch.is_zero()
        && backoff.spinning()
        && !shared.ports.is_pending(next)
        && gpuio_core::transport::watch(cfg.watch, || shared.ports.is_pending(next))
}

/// Where server thread `cfg.index` starts its rounds: its share of the ports.
fn first_port(count: u32, cfg: ServerConfig) -> u32 {
    (u64::from(cfg.index) * u64::from(count) / u64::from(cfg.threads.max(1))) as u32
}

/// Answers every pending port once, from `next` on, each only after claiming it;
/// pwrites and preads of regular files at the round's end, those whose ranges of one
/// file follow each other as one `pwritev` or `preadv` ([`runs`]). Returns how many
/// it answered; `next` becomes the port after the last it took (where a lone device
/// thread's next request comes, so the next round looks there first).
fn serve_round(shared: &Shared, cfg: ServerConfig, held: &mut Held, next: &mut u32) -> u32 {
    let count = shared.ports.count();
    let start = *next % count.max(1);
    let mut served = 0;
    for k in 0..count {
        let i = (start + k) % count;
        if !shared.ports.is_pending(i) {
            continue;
        }
        let claim = &shared.claims[i as usize].0;
        if claim.swap(true, Ordering::Acquire) {
            continue; // another thread answers it
        }
        let outcome = serve_port(shared, cfg.index, i, held);
        if !matches!(outcome, Served::Left) {
            *next = (i + 1) % count;
        }
        match outcome {
            Served::Held => {
                if held.len() >= runs::MOST_PARTS {
                    served += make_runs(shared, cfg.index, held);
                }
                continue; // claimed until answered
            }
            Served::Answered => served += 1,
            Served::Left => {}
        }
        claim.store(false, Ordering::Release);
    }
    served + make_runs(shared, cfg.index, held)
}

/// What [`serve_port`] did with a port.
enum Served {
    /// Answered.
    Answered,
    /// Nothing to answer, or a stream that is not ready: left pending.
    Left,
    /// A pwrite or a pread of a regular file, held (and its port claimed) for
    /// [`make_runs`].
    Held,
}

/// Answers port `i` if it holds a request, counting it as server thread `thread`'s,
/// or holds it in `held` if it is a pwrite or a pread of a regular file. The caller
/// holds the port's claim (or is the only server).
fn serve_port(shared: &Shared, thread: u32, i: u32, held: &mut Held) -> Served {
    let Some((sent, raw)) = take(&shared.ports, i) else {
        return Served::Left;
    };
    let counts = shared.counters.of(thread);
    let checked = validate(shared, &raw);
    // Pwrites, and preads of regular files, wait for the round's end (make_runs).
    let part = checked
        .as_ref()
        .ok()
        .and_then(|r| runs::Part::of(u64::from(i), r));
    if let Some((part, direction)) = part {
        let regular = shared.regular.get(part.endpoint as usize) == Some(&true);
        if direction == Direction::Write || regular {
            counts.submitted();
            held.sent[i as usize] = sent;
            held.parts(direction).push(part);
            return Served::Held;
        }
    }
    // A stream that would block: answering it now would stop this thread, and
    // every port it serves, until data comes. Leave it pending (the caller's
    // deadline still bounds its wait) and look again next round.
    if checked.as_ref().is_ok_and(|r| !ready(shared, r)) {
        return Served::Left;
    }
    counts.submitted();
    let result = match checked {
        Ok(r) => execute(shared, &r),
        Err(errno) => i64::from(errno),
    };
    counts.finished(result);
    reply(&shared.ports, i, sent, result);
    Served::Answered
}

/// Makes the held pwrites and preads, a run of more than one as one `pwritev` or
/// `preadv`, answers each and lets its port go. Returns how many it answered.
fn make_runs(shared: &Shared, thread: u32, held: &mut Held) -> u32 {
    let mut answered = 0;
    for direction in [Direction::Write, Direction::Read] {
        let mut parts = std::mem::take(held.parts(direction));
        answered += make_parts(shared, thread, held, &mut parts, direction);
        *held.parts(direction) = parts; // keeps its allocation for the next round
    }
    answered
}

/// Makes held parts that move bytes `direction`'s way, in runs; empties `parts`.
fn make_parts(
    shared: &Shared,
    thread: u32,
    held: &Held,
    parts: &mut Vec<runs::Part>,
    direction: Direction,
) -> u32 {
    let mut answered = 0;
    for run in runs::runs(parts) {
        let run = &parts[run];
        let results = match run {
            [one] => vec![execute(shared, &one.request(direction))],
            // SAFETY: `validate` put every range inside the staging area, which
            // `Shared::_keep` keeps mapped; no Rust reference points into it; a held
            // pread's endpoint is a regular file (serve_port).
            _ => unsafe {
                runs::make(
                    direction,
                    &shared.endpoints,
                    shared.staging.host.as_ptr(),
                    run,
                )
            }
            .into_iter()
            .map(i64::from)
            .collect(),
        };
        answered += answer_held(shared, thread, held, run, results);
    }
    parts.clear();
    answered
}

/// Answers each held part of `run` its result and lets its port go.
fn answer_held(
    shared: &Shared,
    thread: u32,
    held: &Held,
    run: &[runs::Part],
    results: Vec<i64>,
) -> u32 {
    let counts = shared.counters.of(thread);
    let mut answered = 0;
    for (w, result) in run.iter().zip(results) {
        let i = w.id as u32; // a port index, from serve_port
        counts.finished(result);
        reply(&shared.ports, i, held.sent[i as usize], result);
        shared.claims[i as usize].0.store(false, Ordering::Release);
        answered += 1;
    }
    answered
}

/// Whether `req` can run without blocking: stream reads and writes wait until
/// `poll` says their endpoint is ready; everything else (positioned I/O on
/// files, NOPs) is ready at once.
fn ready(shared: &Shared, req: &Request) -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let (endpoint, events) = match *req {
        Request::Read { endpoint, .. } | Request::Recv { endpoint, .. } => {
            (endpoint, PollFlags::IN)
        }
        Request::Write { endpoint, .. } | Request::Send { endpoint, .. } => {
            (endpoint, PollFlags::OUT)
        }
        Request::Nop | Request::Pwrite { .. } | Request::Pread { .. } => return true,
    };
    let Some(fd) = shared
        .endpoints
        .get(endpoint as usize)
        .and_then(|ep| ep.fd())
    else {
        return true;
    };
    let mut fds = [PollFd::new(&fd, events)];
    match poll(
        &mut fds,
        Some(&rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        }),
    ) {
        // Ready, or an error or hang-up the syscall itself will report.
        Ok(n) => n > 0,
        Err(_) => true,
    }
}

/// Checks `req` against the rulebook ([`request::validate`]); a refusal is logged.
pub(crate) fn validate(shared: &Shared, req: &abi::Request) -> Result<Request, i32> {
    request::validate(req, &shared.endpoints, shared.staging.len).inspect_err(|&errno| {
        tracing::debug!(
            op = abi::op::name(req.op),
            endpoint = req.endpoint,
            len = req.len,
            flags = req.flags,
            staging_off = req.staging_off,
            offset = req.offset,
            errno,
            "request refused"
        );
    })
}

/// Makes the one syscall of a validated request. `>= 0` or `-errno`.
pub(crate) fn execute(shared: &Shared, req: &Request) -> i64 {
    let (endpoint, staging) = match *req {
        Request::Nop => return 0,
        Request::Pwrite {
            endpoint, staging, ..
        }
        | Request::Pread {
            endpoint, staging, ..
        }
        | Request::Write { endpoint, staging }
        | Request::Read { endpoint, staging }
        | Request::Send { endpoint, staging }
        | Request::Recv { endpoint, staging } => (endpoint, staging),
    };
    let Some(fd) = shared
        .endpoints
        .get(endpoint as usize)
        .and_then(|ep| ep.fd())
    else {
        return -i64::from(libc::EBADF);
    };
    // SAFETY: `validate` checked that the range lies inside the staging area (kept
    // alive by `Shared::_keep`).
    let buf = unsafe { shared.staging.host.as_ptr().add(staging.off()) };
    let len = staging.len();
    // Validated offsets are at most i64::MAX - len.
    let at = |offset: u64| offset as i64;
    // SAFETY: `buf .. buf + len` lies in the mapped staging area, which outlives this
    // call; no Rust reference points into it.
    let r = unsafe {
        match *req {
            Request::Pwrite { offset, .. } => sys::pwrite(fd, buf, len, at(offset)),
            Request::Pread { offset, .. } => sys::pread(fd, buf, len, at(offset)),
            Request::Write { .. } => sys::write(fd, buf, len),
            Request::Read { .. } => sys::read(fd, buf, len),
            Request::Send { .. } => sys::send(fd, buf, len),
            Request::Recv { .. } => sys::recv(fd, buf, len),
            Request::Nop => return 0,
        }
    };
    match r {
        Ok(n) => n as i64,
        Err(e) => -i64::from(e.raw_os_error()),
    }
}
