//! The mailbox transport: LLVM-libc-style RPC. Device side: `gpuio/mailbox.h`.
//!
//! A kernel thread takes a *port* (a [`abi::MailboxPort`] in shared memory), writes
//! its request into it and flips `device_out`; a host server thread sees the flip,
//! validates the request ([`gpuio_core::request::validate`]), makes one plain
//! syscall (`pwrite`, `pread`, `write`, `read`) on the endpoint's fd with the
//! port's staging chunk, and answers: `host_out` = its flip back with the result in
//! the same word, so the device reads both at once. Nothing here
//! needs io_uring: this is the transport for machines where io_uring is blocked
//! (many container runtimes' seccomp profiles).
//!
//! # Layout
//!
//! ```text
//! shared        MailboxPort ports[port_count]   192 B each: device_out | host_out (flip, result) | req
//! device-local  u32 locks[port_count + 1][LOCK_WORDS_PER_PORT]
//!               per port its turn (gpuio_turn) and its last device_out,
//!               then the position counter
//!               (device atomics only; the layout is the header's business)
//! staging       chunk i (i * slot_size ..+ slot_size) belongs to port i
//! ```
//!
//! # Choices
//!
//! * **Ownership by two flags, one writer each.** The device owns a port when
//!   `device_out == host_out` (its flip, the low 32 bits). The device alone writes
//!   `device_out` and `req`; the host alone writes `host_out`, the result riding in
//!   its high 32 bits (`abi::mailbox_answer`). Publishing is a release store,
//!   observing an acquire load, so no read-modify-write ever crosses PCIe.
//! * **Ports by turns.** A call takes a position (one device fetch-add per warp;
//!   the lanes of a warp get consecutive ports) and waits for its turn on port
//!   `pos % port_count`, as forward's slots are handed out (`gpuio/api.h`); the
//!   lanes of a warp wait together. Measured on an H100 at 132 × 1024 threads: the
//!   previous scheme, thread `t` on port `t % port_count` under a FIFO ticket lock,
//!   did 12.7k requests/s and the whole-device case timed out.
//! * **`port_count = min(slots, max_ports)`**, 256 by default: port `i` owns staging
//!   chunk `i`, so there can be no more ports than slots.
//! * **Abandoned requests stay put.** A device wait that times out leaves the port
//!   pending and marked abandoned; the next turn owner takes it over only once the
//!   host has answered, so a late answer never lands in someone else's request and
//!   the staging chunk is never reused early. A port pending for longer than a
//!   quarter of the call timeout (a deferred read of an empty pipe) is passed over.
//! * **Server threads by load** (at most `server_threads`: by default 4, or on a
//!   channel of slots of 1 MiB or more one per 64 request slots, 4 to 16, or
//!   `GPUIO_MAILBOX_THREADS`): thread 0 always serves;
//!   the others sleep until a round answers several requests, then one more is
//!   woken, and a woken thread that finds nothing for a while sleeps again
//!   (`server`'s doc). Every thread scans every port round-robin (every pending port
//!   answered once per round) and answers a port only after claiming it; an idle
//!   round backs off to sleeps of at most `idle_sleep_max`. Syscalls are made on
//!   raw pointers into staging memory (`crate::sys`), never through Rust references
//!   to bytes a device may write.
//! * **Counters**: `submitted` counts every request a server took, `completed` those
//!   answered `>= 0`, `failed` those answered `-errno`, refused ones included; a
//!   request's counts are updated before its answer is published. Device calls that
//!   gave up (`-ETIMEDOUT`) are counted by the device in the descriptor's
//!   `stats.timed_out`, which `close()` reports.
//! * **Closing.** `Channel::close` sets `closing`; the device then refuses new calls
//!   (`-ESHUTDOWN`). A thread that passed that check just before may still be
//!   writing its request, so the servers keep serving until no port of theirs has
//!   been pending for `close_grace`, and never past the deadline. Then they stop and
//!   are joined; ports still pending are reported. A server stuck in a blocking
//!   syscall (a `read` on a pipe nobody writes) is not waited for past the
//!   deadline: it is left running detached, holding the channel's memory and
//!   endpoints alive ([`OpenContext::keepalive`]), and the report says so.

mod server;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpuio_core::abi::{self, TransportKind};
use gpuio_core::memory::SharedMemory;
use gpuio_core::transport::{
    device_stats, Counters, OpenContext, Transport, TransportBuilder, TransportError,
    TransportReport,
};

use server::{
    Claim, Control, CounterCells, Helpers, PortView, Ports, ServerConfig, Shared, Staging,
};

/// Device-local `u32`s per entry of the lock area: [`gpuio_core::abi::MB_LOCK_WORDS`]
/// (defined there once; the header's `GPUIO_MB_LOCK_WORDS` is asserted against it at
/// build time). The area holds `port_count + 1` entries: one per port, then the
/// position counter.
pub const LOCK_WORDS_PER_PORT: usize = gpuio_core::abi::MB_LOCK_WORDS as usize;

/// Builds mailbox transports.
#[derive(Clone, Debug)]
pub struct MailboxBuilder {
    max_ports: u32,
    /// The most server threads; `None`: by the channel's slots
    /// ([`MailboxBuilder::default_threads`]).
    server_threads: Option<u32>,
    idle_sleep_max: Duration,
    close_grace: Duration,
    watch: Duration,
    /// The most server threads awake at once, over every channel built (tests).
    peak_threads: Arc<AtomicU32>,
}

/// The environment variable that sets the most server threads a mailbox channel may
/// wake ([`MailboxBuilder::server_threads`]).
pub const THREADS_ENV: &str = "GPUIO_MAILBOX_THREADS";

/// The environment variable that sets [`MailboxBuilder::watch`]: nanoseconds, at
/// most [`MOST_WATCH`](gpuio_core::transport::MOST_WATCH); 0 turns the watch off.
pub const WATCH_ENV: &str = "GPUIO_MAILBOX_WATCH_NS";

/// The fewest of the most server threads a mailbox channel wakes unless told
/// otherwise: the default channel (256 slots) has 4. Measured on an H100 (2026-11-25,
/// the whole-device figures of `gpuio bench`, same binary, the most set by
/// `GPUIO_MAILBOX_THREADS`): 1 MiB reads 5.2 GB/s with one thread, 11.0 with 4, 11.9
/// with 8; 1 MiB writes, a file per SM group, 3.5 / 6.6 / 8.4 GB/s; the mixed write +
/// read + printf kernel held 0.94x one host thread with 1 and with 4, 0.79x with 8.
/// Four doubles bulk I/O without costing small requests; a quiet channel still keeps
/// one thread (the others sleep).
pub const DEFAULT_SERVER_THREADS: u32 = 4;

/// The most server threads a big channel of long slots
/// ([`BULK_SLOT_SIZE`](gpuio_core::transport::BULK_SLOT_SIZE) or more) wakes unless
/// told otherwise (one per 64 slots up to this). Measured on an H100 (2026-11-26,
/// `gpuio bench --only requests`, a bulk channel of 1024 slots of 1 MiB, 256 ports):
/// 1 MiB reads from every warp, one file, 11.8 GB/s with 4 threads, 23.8 and 19.6
/// with 16; the host threads reading the page cache into staging set that pace. A
/// channel of smaller slots keeps [`DEFAULT_SERVER_THREADS`]: its small calls from
/// the whole device ran 4.4–5.7 M NOPs/s with 4 threads on 1024 slots, 2.8–3.1 with
/// 16 (H200, 2026-11-29), every thread scanning every port.
pub const MAX_DEFAULT_SERVER_THREADS: u32 = 16;

impl Default for MailboxBuilder {
    /// 256 ports at most; at most 4 server threads, or on a channel of long slots one
    /// per 64 request slots, 4 to 16 ([`MailboxBuilder::default_threads`]), or
    /// `GPUIO_MAILBOX_THREADS` (1 to 64);
    /// idle sleeps up to 1 ms, 20 ms of grace at close; an idle server watches the
    /// port the next request comes to for up to 2 µs between rounds
    /// ([`MailboxBuilder::watch`], or `GPUIO_MAILBOX_WATCH_NS`).
    fn default() -> Self {
        let server_threads = std::env::var(THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| (1..=64).contains(n));
        Self {
            max_ports: 256,
            server_threads,
            idle_sleep_max: Duration::from_millis(1),
            close_grace: Duration::from_millis(20),
            watch: gpuio_core::transport::watch_from(
                WATCH_ENV,
                std::env::var(WATCH_ENV).ok().as_deref(),
            ),
            peak_threads: Arc::new(AtomicU32::new(0)),
        }
    }
}

impl MailboxBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// At most this many ports (the channel's slot count caps it too).
    pub fn max_ports(mut self, n: u32) -> Self {
        self.max_ports = n;
        self
    }

    /// The most host threads serving the ports: the first always, the others while
    /// the load keeps them busy.
    pub fn server_threads(mut self, n: u32) -> Self {
        self.server_threads = Some(n);
        self
    }

    /// The most server threads of a channel with `slots` request slots of
    /// `slot_size` bytes when none was set: [`DEFAULT_SERVER_THREADS`] (the default
    /// channel of 256 slots: 4), or for slots of
    /// [`BULK_SLOT_SIZE`](gpuio_core::transport::BULK_SLOT_SIZE) or more one per 64
    /// slots, from [`DEFAULT_SERVER_THREADS`] to [`MAX_DEFAULT_SERVER_THREADS`].
    pub fn default_threads(slots: u32, slot_size: u32) -> u32 {
        if slot_size < gpuio_core::transport::BULK_SLOT_SIZE {
            return DEFAULT_SERVER_THREADS;
        }
        (slots / 64).clamp(DEFAULT_SERVER_THREADS, MAX_DEFAULT_SERVER_THREADS)
    }

    /// Longest sleep of an idle server: the worst extra latency of the first request
    /// after a quiet spell.
    pub fn idle_sleep_max(mut self, d: Duration) -> Self {
        self.idle_sleep_max = d;
        self
    }

    /// How long a closing server keeps serving after its last request, for device
    /// threads that passed the `closing` check just before it was set.
    pub fn close_grace(mut self, d: Duration) -> Self {
        self.close_grace = d;
        self
    }

    /// How long an idle server, between rounds over the ports, watches the one port
    /// the next request comes to (the one after the last it answered) before its
    /// next round; zero: no watch. A round looks at each port in turn, so a request
    /// sent while one runs waits for the round's end; requests that come to another
    /// port meanwhile wait for the watch's end. The same watch as the forward
    /// transport's forwarders ([`gpuio_core::transport::watch`]).
    pub fn watch(mut self, d: Duration) -> Self {
        self.watch = d;
        self
    }

    /// The port count a channel with `slots` request slots gets.
    pub fn port_count(&self, slots: u32) -> u32 {
        self.max_ports.min(slots)
    }

    /// The most server threads that were awake at once in any channel this builder
    /// (or a clone of it) built.
    #[cfg(test)]
    fn peak_threads(&self) -> u32 {
        self.peak_threads.load(Ordering::Relaxed)
    }
}

impl TransportBuilder for MailboxBuilder {
    fn kind(&self) -> TransportKind {
        TransportKind::Mailbox
    }

    fn build(&self, ctx: &mut OpenContext<'_>) -> Result<Box<dyn Transport>, TransportError> {
        if self.max_ports == 0 {
            return Err(TransportError::Config("mailbox: max_ports is 0".into()));
        }
        if self.server_threads == Some(0) {
            return Err(TransportError::Config(
                "mailbox: server_threads is 0".into(),
            ));
        }
        let port_count = self.port_count(ctx.slots);
        if port_count == 0 {
            return Err(TransportError::Config(
                "mailbox: the channel has no slots".into(),
            ));
        }
        let ports_mem =
            ctx.alloc_shared(port_count as usize * std::mem::size_of::<abi::MailboxPort>())?;
        let locks = ctx.alloc_local(
            (port_count as usize + 1) * LOCK_WORDS_PER_PORT * std::mem::size_of::<u32>(),
        )?;
        ctx.desc.mailbox = abi::Mailbox {
            ports: ports_mem.region().device_addr,
            locks: locks.device_addr(),
            port_count,
            ..Default::default()
        };
        let staging_len = ctx.desc.staging_len.min(ctx.staging.len as u64);
        let threads = self
            .server_threads
            .unwrap_or_else(|| Self::default_threads(ctx.slots, ctx.slot_size))
            .min(port_count);
        let shared = Arc::new(Shared {
            ports: Ports::new(ports_mem, port_count)?,
            claims: (0..port_count).map(|_| Claim::default()).collect(),
            helpers: Helpers::new(threads, self.peak_threads.clone()),
            endpoints: ctx.endpoints.to_vec(),
            regular: ctx.endpoints.iter().map(|e| e.is_regular_file()).collect(),
            staging: Staging {
                host: ctx.staging.host_ptr,
                len: staging_len,
            },
            counters: CounterCells::new(threads),
            control: Control::default(),
            _keep: ctx.keepalive(),
        });
        let mut transport = MailboxTransport {
            shared: shared.clone(),
            descriptor: ctx.descriptor.clone(),
            threads: Vec::with_capacity(threads as usize),
            // A server notices the end of its drain within one idle sleep; stopping
            // that much (and a little) before the deadline lets close join it in time.
            stop_margin: self.idle_sleep_max + Duration::from_millis(2),
            closed: false,
        };
        for index in 0..threads {
            let cfg = ServerConfig {
                index,
                threads,
                idle_max: self.idle_sleep_max,
                close_grace: self.close_grace,
                watch: self.watch,
            };
            let shared = shared.clone();
            let handle = std::thread::Builder::new()
                .name(format!("gpuio-mailbox-{index}"))
                .spawn(move || server::run(shared, cfg))
                .map_err(|e| TransportError::os("spawn (mailbox server thread)", e))?;
            transport.threads.push(handle);
        }
        shared.helpers.set_threads(
            transport
                .threads
                .iter()
                .map(|t| t.thread().clone())
                .collect(),
        );
        tracing::debug!(port_count, threads, "mailbox transport built");
        Ok(Box::new(transport))
    }
}

/// A running mailbox transport.
pub struct MailboxTransport {
    shared: Arc<Shared>,
    /// The channel's descriptor: the device counts its timed-out calls in `stats`.
    descriptor: Arc<dyn SharedMemory>,
    threads: Vec<JoinHandle<()>>,
    stop_margin: Duration,
    closed: bool,
}

impl MailboxTransport {
    /// Waits until every server thread has ended or `deadline` passes.
    fn wait_for_threads(&self, deadline: Instant) {
        while !self.threads.iter().all(|t| t.is_finished()) {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(1)));
        }
    }
}

impl Transport for MailboxTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Mailbox
    }

    fn shape(&self) -> String {
        let n = self.threads.len();
        format!(
            "up to {n} server thread{}, woken by load",
            if n == 1 { "" } else { "s" }
        )
    }

    fn counters(&self) -> Counters {
        self.shared.counters.get()
    }

    fn close(&mut self, deadline: Instant) -> TransportReport {
        let mut problems = Vec::new();
        if self.closed {
            problems.push("mailbox: already closed".to_string());
        }
        self.closed = true;
        let serve_until = deadline
            .checked_sub(self.stop_margin)
            .unwrap_or(deadline)
            .max(Instant::now());
        let _ = self.shared.control.drain_until.set(serve_until);
        // Sleeping server threads see the drain at once and stop after their grace.
        self.shared.helpers.wake_all();
        self.wait_for_threads(deadline);
        self.shared.control.stop.store(true, Ordering::Release);
        self.shared.helpers.wake_all();
        tracing::debug!(
            peak = self.shared.helpers.peak(),
            of = self.threads.len(),
            "mailbox server threads awake at once, at most"
        );
        for (k, t) in std::mem::take(&mut self.threads).into_iter().enumerate() {
            if !t.is_finished() {
                problems.push(format!(
                    "mailbox server thread {k} was still inside a system call at the \
                     deadline; left running detached (it keeps the channel's memory and \
                     endpoints alive and stops after that call)"
                ));
                continue;
            }
            if t.join().is_err() {
                problems.push(format!("mailbox server thread {k} panicked"));
            }
        }
        let ports = &self.shared.ports;
        for i in (0..ports.count()).filter(|&i| ports.is_pending(i)) {
            let r = ports.request(i);
            problems.push(format!(
                "mailbox port {i}: {} request (endpoint {}, {} bytes) never answered; \
                 its caller gets -ETIMEDOUT",
                abi::op::name(r.op),
                r.endpoint,
                r.len
            ));
        }
        TransportReport {
            counters: self.counters(),
            // Counted by the device (gpuio/api.h's dispatch), read as it is now.
            timed_out: device_stats(&self.descriptor).timed_out,
            problems,
        }
    }
}

impl Drop for MailboxTransport {
    fn drop(&mut self) {
        // Without a close: stop at once. Threads still running end after their current
        // request; they hold everything they touch.
        self.shared.control.stop.store(true, Ordering::Release);
        self.shared.helpers.wake_all();
        for t in std::mem::take(&mut self.threads) {
            if t.is_finished() && t.join().is_err() {
                tracing::error!("mailbox server thread panicked");
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model;
#[cfg(test)]
mod tests;
