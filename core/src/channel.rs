//! A channel: one descriptor, its endpoints, its staging area and one transport.
//!
//! `Channel::open` lays out the shared memory, lets the transport build itself, and
//! publishes the descriptor; kernels receive [`Channel::device_ptr`]. `close()` tells
//! the device to stop (`closing`), drains everything accepted within a bound, joins
//! the transport's threads and reports `submitted / completed / failed`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::abi::{self, TransportKind};
use crate::endpoint::Endpoint;
use crate::memory::{ChannelMemory, KeepAlive, MemoryProvider, SharedMemory, SharedRegion};
use crate::queue::{
    Direction, LogConfig, LogDrain, LogReport, QueueError, QueueReport, QueueShared, Receiver,
    Sender,
};
use crate::transport::{Counters, OpenContext, Transport, TransportBuilder, TransportError};

/// Offset of the endpoint table in the descriptor's allocation.
const ENDPOINTS_OFFSET: usize = 512;

/// How to open a channel. `Default` gives 256 slots of 64 KiB, 1 MiB of the
/// kernel's own staging, a 5 s per-call device deadline and a 10 s close bound.
#[derive(Debug)]
pub struct ChannelConfig {
    pub endpoints: Vec<Endpoint>,
    /// Endpoint `gpuio_printf` writes to.
    pub stdout_endpoint: Option<u32>,
    /// Endpoints whose `gpuio_printf`/`gpuio_fprintf` lines travel over a printf log
    /// (a stream a host thread writes out while the kernel runs) instead of one
    /// request per line. [`ChannelConfig::stdout`] gives stdout one; see
    /// [`ChannelConfig::log`].
    pub logs: Vec<(u32, LogConfig)>,
    /// Requests in flight at once (rounded up to a power of two). On `direct` a
    /// request's round trip is long (the kernel's SQPOLL thread between two trips
    /// across PCIe), so its rate from many threads grows with the slots: whole-device
    /// NOPs on an H200 (2026-11-29, `gpuio bench` at 7069a74) 11.9 M/s at 256 slots,
    /// 24.7 at 1024. `forward`'s grew too once a channel of small slots kept four
    /// host threads polling (28.2 M/s at 256, 63.1 at 1024, H200, 2026-11-29, at
    /// 58af2e9: see `ForwardBuilder::rings`).
    pub slots: u32,
    /// Staging bytes per slot: the largest single request a convenience call makes
    /// (longer calls are split).
    pub slot_size: u32,
    /// Staging bytes the kernel manages itself (`gpuio_user_staging`).
    pub user_staging: usize,
    /// Longest a single device call waits before `-ETIMEDOUT`.
    pub call_timeout: Duration,
    /// Longest `close()` waits for work in flight.
    pub close_timeout: Duration,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        Self {
            endpoints: Vec::new(),
            stdout_endpoint: None,
            logs: Vec::new(),
            slots: 256,
            slot_size: 64 << 10,
            user_staging: 1 << 20,
            call_timeout: Duration::from_secs(5),
            close_timeout: Duration::from_secs(10),
        }
    }
}

impl ChannelConfig {
    /// Request slots as `open` uses them: at least one, rounded up to a power of two.
    pub fn effective_slots(&self) -> u32 {
        self.slots.max(1).next_power_of_two()
    }

    /// Staging bytes per slot as `open` uses them: at least a page (4096).
    pub fn effective_slot_size(&self) -> u32 {
        self.slot_size.max(4096)
    }

    /// Bytes of the staging area `open` allocates: every slot's bytes, then the
    /// kernel's own (`slots × slot_size + user_staging`, after the rounding above).
    /// The direct transport registers all of it as one io_uring fixed buffer.
    pub fn staging_len(&self) -> u64 {
        u64::from(self.effective_slots()) * u64::from(self.effective_slot_size())
            + self.user_staging as u64
    }

    /// The same configuration with every endpoint's descriptor duplicated again, for
    /// a second `open` (a fallback to another transport) while this one is kept.
    pub fn try_clone(&self) -> Result<Self, crate::endpoint::CloneError> {
        Ok(Self {
            endpoints: self
                .endpoints
                .iter()
                .map(Endpoint::try_clone)
                .collect::<Result<_, _>>()?,
            stdout_endpoint: self.stdout_endpoint,
            logs: self.logs.clone(),
            slots: self.slots,
            slot_size: self.slot_size,
            user_staging: self.user_staging,
            call_timeout: self.call_timeout,
            close_timeout: self.close_timeout,
        })
    }

    /// Registers an endpoint and returns the index kernels name it by.
    pub fn endpoint(&mut self, ep: Endpoint) -> u32 {
        self.endpoints.push(ep);
        (self.endpoints.len() - 1) as u32
    }

    /// Registers an endpoint and makes it the target of `gpuio_printf`, with a printf
    /// log of the default size (take it away with [`ChannelConfig::no_log`] to make
    /// one request per line instead).
    pub fn stdout(&mut self, ep: Endpoint) -> u32 {
        let i = self.endpoint(ep);
        self.stdout_endpoint = Some(i);
        self.log(i, LogConfig::default());
        i
    }

    /// Gives endpoint `ep` (a stream or file the kernel may write) a printf log:
    /// `gpuio_fprintf(ch, ep, ...)` then formats on the device and appends the line
    /// to a stream that a host thread writes to the endpoint while the kernel runs,
    /// with no round trip per line. Replaces the endpoint's log if it had one.
    ///
    /// ```
    /// use gpuio_core::{Access, ChannelConfig, Endpoint, LogConfig};
    /// let mut cfg = ChannelConfig::default();
    /// let log = std::fs::File::create(std::env::temp_dir().join("gpuio-doc-log.txt"))?;
    /// let ep = cfg.endpoint(Endpoint::file("log", &log, Access::WRITE)?);
    /// cfg.log(ep, LogConfig { max_line: 255, ..LogConfig::default() });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn log(&mut self, ep: u32, log: LogConfig) {
        self.no_log(ep);
        self.logs.push((ep, log));
    }

    /// Takes endpoint `ep`'s printf log away: each `gpuio_fprintf` on it is then one
    /// write request through the transport.
    pub fn no_log(&mut self, ep: u32) {
        self.logs.retain(|(i, _)| *i != ep);
    }
}

/// Why a channel could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("opening a {transport} channel: {source}")]
    Open {
        transport: TransportKind,
        #[source]
        source: TransportError,
    },
}

impl ChannelError {
    /// Whether another transport might open where this one could not
    /// ([`TransportError::is_resource`]).
    pub fn is_resource(&self) -> bool {
        match self {
            Self::Open { source, .. } => source.is_resource(),
        }
    }
}

/// What `close()` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseReport {
    pub transport: TransportKind,
    pub counters: Counters,
    /// Device calls that gave up waiting.
    pub timed_out: u64,
    /// What could not be finished, in words; empty on a clean close.
    pub problems: Vec<String>,
    /// Each host queue's counts: `sent = received + in flight`.
    pub queues: Vec<QueueReport>,
    /// What each printf log wrote.
    pub logs: Vec<LogReport>,
    /// From the start of the close until every printf log had written what was
    /// printed before it (the logs finish first, then the transport).
    pub logs_elapsed: Duration,
    pub elapsed: Duration,
}

impl CloseReport {
    /// Everything accepted finished and nothing went wrong while closing.
    /// The counts must balance exactly: more finished than submitted is as unclean
    /// as fewer ([`Counters::excess`]).
    pub fn is_clean(&self) -> bool {
        self.counters.balanced() && self.problems.is_empty()
    }
}

impl std::fmt::Display for CloseReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counters;
        // The counts as an equation that holds: unfinished requests on the right,
        // finished ones beyond the submitted on the left.
        write!(
            f,
            "{}: submitted {}{} = completed {} + failed {}{}, {} timed out, closed in {:?}",
            self.transport,
            c.submitted,
            match c.excess() {
                0 => String::new(),
                n => format!(" + excess {n} (finished but never submitted)"),
            },
            c.completed,
            c.failed,
            match c.unfinished() {
                0 => String::new(),
                n => format!(" + unfinished {n}"),
            },
            self.timed_out,
            self.elapsed
        )?;
        for q in &self.queues {
            write!(f, "; {q}")?;
        }
        for l in &self.logs {
            write!(f, "; {l}")?;
        }
        for p in &self.problems {
            write!(f, "; {p}")?;
        }
        Ok(())
    }
}

/// An open channel. Dropping it closes it (logging the report).
pub struct Channel {
    memory: Arc<ChannelMemory>,
    descriptor: Arc<dyn SharedMemory>,
    /// The kernel's copy of the descriptor and endpoint table, in device-local
    /// memory (see `abi::Channel::shared`).
    local: Arc<dyn crate::memory::LocalMemory>,
    staging: Arc<dyn SharedMemory>,
    endpoints: Vec<Arc<Endpoint>>,
    /// The host queue behind each endpoint index, if it is one.
    queues: Vec<Option<Arc<QueueShared>>>,
    /// The threads writing each printf log out.
    logs: Vec<LogDrain>,
    transport: Option<Box<dyn Transport>>,
    kind: TransportKind,
    provider: &'static str,
    user_staging: (u64, u64),
    close_timeout: Duration,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel")
            .field("transport", &self.kind)
            .field("provider", &self.provider)
            .field("descriptor", &self.descriptor.region())
            .field("endpoints", &self.endpoints.len())
            .finish()
    }
}

impl Channel {
    pub fn open(
        provider: Arc<dyn MemoryProvider>,
        builder: &dyn TransportBuilder,
        config: ChannelConfig,
    ) -> Result<Channel, ChannelError> {
        let kind = builder.kind();
        let span =
            tracing::info_span!("channel.open", transport = %kind, provider = provider.name());
        let _enter = span.enter();
        let fail = |source: TransportError| {
            tracing::error!(error = %source, "open failed");
            ChannelError::Open {
                transport: kind,
                source,
            }
        };
        let slots = config.effective_slots();
        let slot_size = config.effective_slot_size();
        let staging_len = config.staging_len();
        if let Some(i) = config.stdout_endpoint {
            if i as usize >= config.endpoints.len() {
                return Err(fail(TransportError::Config(format!(
                    "stdout endpoint {i} is not registered ({} endpoints)",
                    config.endpoints.len()
                ))));
            }
        }
        for (n, (i, _)) in config.logs.iter().enumerate() {
            let Some(ep) = config.endpoints.get(*i as usize) else {
                return Err(fail(TransportError::Config(format!(
                    "printf log for endpoint {i}: it is not registered ({} endpoints)",
                    config.endpoints.len()
                ))));
            };
            if ep.queue_config().is_some() || ep.fd().is_none() || !ep.access.write {
                return Err(fail(TransportError::Config(format!(
                    "printf log for endpoint {i} ({:?}): only a stream or file the kernel \
                     may write can have one",
                    ep.name
                ))));
            }
            if config.logs[..n].iter().any(|(j, _)| j == i) {
                return Err(fail(TransportError::Config(format!(
                    "endpoint {i} ({:?}) has two printf logs",
                    ep.name
                ))));
            }
        }
        let memory = Arc::new(ChannelMemory::default());
        let endpoints: Vec<Arc<Endpoint>> = config.endpoints.into_iter().map(Arc::new).collect();
        let table_len = endpoints.len() * std::mem::size_of::<abi::Endpoint>();
        // The host queues' table follows the endpoint table, on its own cache line.
        let queue_count = endpoints
            .iter()
            .filter(|e| e.queue_config().is_some())
            .count()
            + config.logs.len();
        let queues_off = table_len.next_multiple_of(64);
        let tables_len = queues_off + queue_count * std::mem::size_of::<abi::Queue>();
        let descriptor: Arc<dyn SharedMemory> = Arc::from(
            provider
                .alloc_shared(ENDPOINTS_OFFSET + tables_len)
                .map_err(|e| fail(e.into()))?,
        );
        let mut queues = Vec::with_capacity(endpoints.len());
        let mut queue_table = Vec::with_capacity(queue_count);
        let mut abi_endpoints = Vec::with_capacity(endpoints.len());
        for ep in &endpoints {
            let mut entry = ep.to_abi();
            match ep.queue_config() {
                Some((direction, qc)) => {
                    let (q, desc) =
                        QueueShared::create(&provider, descriptor.clone(), &ep.name, direction, qc)
                            .map_err(fail)?;
                    entry.queue = queue_table.len() as u32;
                    queue_table.push(desc);
                    queues.push(Some(q));
                }
                None => queues.push(None),
            }
            abi_endpoints.push(entry);
        }
        // Printf logs: queues to the host after the endpoints' own.
        let mut log_queues = Vec::with_capacity(config.logs.len());
        for (i, log) in &config.logs {
            let ep = &endpoints[*i as usize];
            let (q, desc) = QueueShared::create(
                &provider,
                descriptor.clone(),
                &format!("printf log to {}", ep.name),
                Direction::ToHost,
                &log.queue(),
            )
            .map_err(fail)?;
            abi_endpoints[*i as usize].log = queue_table.len() as u32 + 1;
            queue_table.push(desc);
            log_queues.push((q, ep.clone(), log.threads));
        }
        let slot_bytes = u64::from(slots) * u64::from(slot_size);
        let staging: Arc<dyn SharedMemory> = Arc::from(
            provider
                .alloc_shared(staging_len as usize)
                .map_err(|e| fail(e.into()))?,
        );
        // The endpoint table, then the queue table: the same bytes in the shared
        // descriptor and in the kernel's device-local copy.
        let mut tables = vec![0u8; tables_len];
        for (i, ep) in abi_endpoints.iter().enumerate() {
            tables[i * 16..(i + 1) * 16].copy_from_slice(bytemuck::bytes_of(ep));
        }
        for (i, q) in queue_table.iter().enumerate() {
            let at = queues_off + i * 64;
            tables[at..at + 64].copy_from_slice(bytemuck::bytes_of(q));
        }
        descriptor
            .write_bytes(ENDPOINTS_OFFSET, &tables)
            .map_err(|e| fail(e.into()))?;
        let d = descriptor.region();
        let s = staging.region();
        let mut desc = abi::Channel {
            magic: abi::MAGIC,
            version: abi::ABI_VERSION,
            transport: kind as u32,
            flags: 0,
            timeout_ns: config.call_timeout.as_nanos().min(u64::MAX as u128) as u64,
            staging: s.device_addr,
            staging_host: s.host_ptr.as_ptr() as u64,
            staging_len,
            slot_size,
            slots,
            endpoints: d.device_addr + ENDPOINTS_OFFSET as u64,
            endpoint_count: endpoints.len() as u32,
            stdout_endpoint: config.stdout_endpoint.map_or(-1, |i| i as i32),
            closing: 0,
            _pad0: 0,
            shared: d.device_addr,
            direct: Default::default(),
            forward: Default::default(),
            mailbox: Default::default(),
            queues: if queue_count > 0 {
                d.device_addr + (ENDPOINTS_OFFSET + queues_off) as u64
            } else {
                0
            },
            queue_count: queue_count as u32,
            _pad1: [0; 11],
            stats: Default::default(),
        };
        let mut ctx = OpenContext {
            provider: &provider,
            endpoints: &endpoints,
            staging: s,
            descriptor: descriptor.clone(),
            slots,
            slot_size,
            desc: &mut desc,
            memory: memory.clone(),
        };
        let transport = builder.build(&mut ctx).map_err(fail)?;
        // Every field but `stats`: the memory came zeroed (`alloc_shared`), `stats`
        // starts at zero, and the transport's threads may already read it (the direct
        // waker loads `stats.submitted` atomically from the moment it is spawned).
        debug_assert!(desc.stats == abi::Stats::default());
        descriptor
            .write_bytes(
                0,
                &bytemuck::bytes_of(&desc)[..std::mem::offset_of!(abi::Channel, stats)],
            )
            .map_err(|e| fail(e.into()))?;
        // The kernel's copy, device-local: the descriptor, then the endpoint table.
        // Only `closing` and `stats` are read through `shared` (host memory).
        let desc_len = std::mem::size_of::<abi::Channel>();
        let local: Arc<dyn crate::memory::LocalMemory> = Arc::from(
            provider
                .alloc_local(desc_len + tables_len)
                .map_err(|e| fail(e.into()))?,
        );
        let local_desc = abi::Channel {
            endpoints: local.device_addr() + desc_len as u64,
            queues: if queue_count > 0 {
                local.device_addr() + (desc_len + queues_off) as u64
            } else {
                0
            },
            ..desc
        };
        local
            .write(0, bytemuck::bytes_of(&local_desc))
            .map_err(|e| fail(e.into()))?;
        local.write(desc_len, &tables).map_err(|e| fail(e.into()))?;
        std::sync::atomic::fence(Ordering::SeqCst);
        let mut logs = Vec::with_capacity(log_queues.len());
        for (q, ep, threads) in log_queues {
            logs.push(
                LogDrain::start(q, ep, threads)
                    .map_err(|e| fail(TransportError::os("starting a printf log thread", e)))?,
            );
        }
        memory.keep_local(local.clone());
        memory.keep_shared(descriptor.clone());
        memory.keep_shared(staging.clone());
        tracing::info!(
            slots,
            slot_size,
            staging_len,
            endpoints = endpoints.len(),
            "channel open"
        );
        Ok(Channel {
            memory,
            descriptor,
            local,
            staging,
            endpoints,
            queues,
            logs,
            transport: Some(transport),
            kind,
            provider: provider.name(),
            user_staging: (slot_bytes, config.user_staging as u64),
            close_timeout: config.close_timeout,
        })
    }

    /// The device address of the kernel's (device-local) copy of the descriptor:
    /// what a kernel is given.
    pub fn device_ptr(&self) -> u64 {
        self.local.device_addr()
    }

    pub fn transport(&self) -> TransportKind {
        self.kind
    }

    /// How the transport serves this channel on the host, in words (its rings and
    /// threads, as its defaults or settings chose them); empty once closed, or if
    /// it chose nothing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gpuio_core::forward::ForwardBuilder;
    /// use gpuio_core::{Channel, ChannelConfig, HostMemory};
    ///
    /// // A channel of 1024 small slots gets four rings unless GPUIO_FORWARD_RINGS says.
    /// let forward = ForwardBuilder { rings: 0, ..ForwardBuilder::default() };
    /// let config = ChannelConfig { slots: 1024, ..ChannelConfig::default() };
    /// let ch = Channel::open(Arc::new(HostMemory), &forward, config)?;
    /// assert_eq!(ch.transport_shape(), "4 rings, each its own forwarder thread");
    /// assert!(ch.close().is_clean());
    /// # Ok::<(), gpuio_core::ChannelError>(())
    /// ```
    pub fn transport_shape(&self) -> String {
        self.transport
            .as_ref()
            .map(|t| t.shape())
            .unwrap_or_default()
    }

    /// Name of the memory provider under this channel.
    pub fn provider(&self) -> &'static str {
        self.provider
    }

    /// The staging area.
    pub fn staging(&self) -> SharedRegion {
        self.staging.region()
    }

    /// Offset and length of the staging bytes the kernel manages itself.
    pub fn user_staging(&self) -> (u64, u64) {
        self.user_staging
    }

    pub fn endpoints(&self) -> &[Arc<Endpoint>] {
        &self.endpoints
    }

    /// The [`Receiver`] of the host queue registered at endpoint `ep` (made with
    /// [`Endpoint::queue_to_host`]); a queue has one.
    pub fn receiver(&self, ep: u32) -> Result<Receiver, QueueError> {
        self.queue(ep, Direction::ToHost, "Receiver")
            .map(Receiver::new)
    }

    /// The [`Sender`] of the host queue registered at endpoint `ep` (made with
    /// [`Endpoint::queue_to_device`]); a queue has one.
    pub fn sender(&self, ep: u32) -> Result<Sender, QueueError> {
        self.queue(ep, Direction::ToDevice, "Sender")
            .map(Sender::new)
    }

    fn queue(
        &self,
        ep: u32,
        want: Direction,
        what: &'static str,
    ) -> Result<Arc<QueueShared>, QueueError> {
        let endpoint = self
            .endpoints
            .get(ep as usize)
            .ok_or(QueueError::NoSuchEndpoint(ep))?;
        let q = self.queues[ep as usize]
            .as_ref()
            .ok_or_else(|| QueueError::NotAQueue {
                index: ep,
                name: endpoint.name.clone(),
            })?;
        if q.direction != want {
            return Err(QueueError::WrongDirection {
                index: ep,
                name: endpoint.name.clone(),
                direction: q.direction,
            });
        }
        if !q.take() {
            return Err(QueueError::AlreadyTaken {
                name: endpoint.name.clone(),
                what,
            });
        }
        Ok(q.clone())
    }

    /// A handle that keeps every allocation of this channel alive: launches hold
    /// one so a kernel outliving `close()` never touches freed memory.
    pub fn keepalive(&self) -> KeepAlive {
        KeepAlive(self.memory.clone())
    }

    pub fn counters(&self) -> Counters {
        self.transport
            .as_ref()
            .map(|t| t.counters())
            .unwrap_or_default()
    }

    /// The first protocol violation the transport saw while the channel is open,
    /// if it saw one: a kernel wrote words it does not own (on direct, the SQ
    /// tail; the ring is then stopped and every later call on the channel fails. On
    /// forward, a stamp out of turn; it is ignored, and the channel serves on).
    /// `close()` reports it too and is never clean after one.
    pub fn violation(&self) -> Option<String> {
        self.transport.as_ref().and_then(|t| t.violation())
    }

    /// Closes with the configured bound.
    pub fn close(mut self) -> CloseReport {
        self.close_within(self.close_timeout)
    }

    /// Stops new device calls, drains what was accepted for at most `bound`, stops
    /// the host threads and reports.
    pub fn close_within(&mut self, bound: Duration) -> CloseReport {
        let span = tracing::info_span!("channel.close", transport = %self.kind);
        let _enter = span.enter();
        let start = Instant::now();
        let Some(mut transport) = self.transport.take() else {
            return CloseReport {
                transport: self.kind,
                counters: Counters::default(),
                timed_out: 0,
                problems: vec!["already closed".into()],
                queues: Vec::new(),
                logs: Vec::new(),
                logs_elapsed: Duration::ZERO,
                elapsed: Duration::ZERO,
            };
        };
        match self
            .descriptor
            .atomic_u32(std::mem::offset_of!(abi::Channel, closing))
        {
            Ok(closing) => closing.store(1, Ordering::Release),
            Err(e) => tracing::error!(error = %e, "cannot flag the descriptor as closing"),
        }
        // The kernel's copy, which the device reads on every call without crossing
        // PCIe: written after the shared word, through a copy that waits for no
        // kernel (a kernel that read 0 meanwhile is one that read it just before).
        // Direct's close handshake reads this copy too (`crate::direct`).
        let flag_problem = match self
            .local
            .store_u32(std::mem::offset_of!(abi::Channel, closing), 1)
        {
            Ok(()) => None,
            Err(e) => {
                tracing::error!(error = %e, "cannot flag the kernel's descriptor as closing");
                Some(format!(
                    "the kernel's descriptor could not be flagged as closing ({e}): a \
                     kernel still running may go on making calls, which then wait for \
                     their deadline instead of failing with -ESHUTDOWN"
                ))
            }
        };
        // The logs first: lines printed before `closing` reach their endpoints while
        // the transport drains.
        let logs: Vec<LogReport> = self
            .logs
            .iter_mut()
            .map(|l| l.finish(start + bound))
            .collect();
        let logs_elapsed = start.elapsed();
        let report = transport.close(start + bound);
        let mut problems = report.problems;
        problems.extend(flag_problem);
        for l in &logs {
            if l.lost > 0 || l.error.is_some() {
                problems.push(l.to_string());
            }
        }
        let c = report.counters;
        if c.excess() > 0 {
            // Only a kernel that wrote words it does not own (ring indexes, the
            // counters) can make more requests finish than were submitted.
            problems.push(format!(
                "protocol violation: {} requests finished ({} completed + {} failed) \
                 but only {} were submitted, {} too many; the kernel wrote ring words or \
                 counters it does not own, so these counts cannot be trusted",
                c.finished(),
                c.completed,
                c.failed,
                c.submitted,
                c.excess()
            ));
        }
        let queues: Vec<QueueReport> = self.queues.iter().flatten().map(|q| q.report()).collect();
        for q in &queues {
            if let Some(v) = &q.violation {
                problems.push(format!("queue {:?}: {v}", q.name));
            }
        }
        let out = CloseReport {
            transport: self.kind,
            counters: c,
            timed_out: report.timed_out,
            problems,
            queues,
            logs,
            logs_elapsed,
            elapsed: start.elapsed(),
        };
        if out.is_clean() {
            tracing::info!(%out, "channel closed");
        } else {
            tracing::error!(%out, "channel closed with work unfinished");
        }
        out
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if self.transport.is_some() {
            let bound = self.close_timeout;
            let _ = self.close_within(bound);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(submitted: u64, completed: u64, failed: u64) -> CloseReport {
        CloseReport {
            transport: TransportKind::Direct,
            counters: Counters {
                submitted,
                completed,
                failed,
            },
            timed_out: 0,
            problems: Vec::new(),
            queues: Vec::new(),
            logs: Vec::new(),
            logs_elapsed: Duration::ZERO,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn counts_with_more_finished_than_submitted_are_never_clean_and_show_the_excess() {
        // However the problem list came out, counts that do not balance are not a
        // clean close, and the report says by how many they are off on either side.
        let r = report(1, 1001, 0);
        assert_eq!(r.counters.unfinished(), 0);
        assert_eq!(r.counters.excess(), 1000);
        assert!(!r.is_clean(), "{r}");
        let text = r.to_string();
        assert!(
            text.starts_with("direct: submitted 1 + excess 1000 (finished but never submitted) = completed 1001 + failed 0,"),
            "{text}"
        );
        let r = report(5, 3, 1);
        assert!(!r.is_clean(), "{r}");
        assert!(
            r.to_string()
                .contains("= completed 3 + failed 1 + unfinished 1,"),
            "{r}"
        );
        let r = report(5, 4, 1);
        assert!(r.is_clean(), "{r}");
        assert!(
            r.to_string()
                .starts_with("direct: submitted 5 = completed 4 + failed 1,"),
            "{r}"
        );
    }
}
