//! Probe → select → open.
//!
//! [`Runtime::probe`] asks every backend once and keeps the answers. Selection reads
//! only those answers and is a fixed, reproducible order over (backend, transport)
//! pairs that are available:
//!
//! 1. a GPU backend before the CPU device;
//! 2. `direct` > `forward` > `mailbox`;
//! 3. the backend's score, higher first;
//! 4. the backends' fixed order ([`default_backends`]).
//!
//! `GPUIO_BACKEND=<backend>[/<transport>]` (or the CLI's `--backend`) forces a pair;
//! a backend alone gets its best available transport. If what was asked for is
//! unavailable, selection fails with the probe's reason — it never falls back to
//! something the user did not ask for.
//!
//! # When open fails anyway
//!
//! The probes say "available" only where `open` with the default configuration
//! will succeed, but a channel can still fail to open for a reason of resources:
//! a larger configuration, other channels already holding locked memory, a
//! process out of descriptors ([`TransportError::is_resource`]). Then
//! [`ChannelFactory::open`] tries the chosen backend's next available transports,
//! in selection order, and records each step as a [`Fallback`] with its reason
//! ([`ChannelFactory::fallbacks`]; `gpuio run` prints them). It stays on the chosen
//! backend, whose device the factory's modules were loaded for. If every transport
//! fails, [`OpenError::Exhausted`] lists each one's failure. A failure that is not
//! about resources (a bad configuration, an endpoint a transport cannot confine)
//! is returned as it is, without trying another transport.
//!
//! A forced pair (`backend/transport`) never falls back: its resource failure is
//! [`OpenError::Forced`]. A forced backend alone (`GPUIO_BACKEND=cpu`) falls back
//! among that backend's transports, as an unforced choice does: only the backend
//! was asked for.
//!
//! [`TransportError::is_resource`]: gpuio_core::TransportError::is_resource

use std::fmt;
use std::sync::{Arc, Mutex};

use gpuio_core::backend::{Availability, BackendError, BackendProbe};
use gpuio_core::device::{DeviceError, Module};
use gpuio_core::{Channel, ChannelConfig, TransportKind};

use crate::backends::{default_backends, AnyBackend, DynBackend};

/// The environment variable that forces a backend or pair.
pub const BACKEND_ENV: &str = "GPUIO_BACKEND";

/// One (backend, transport) pair, written `backend/transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pair {
    pub backend: &'static str,
    pub transport: TransportKind,
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.backend, self.transport)
    }
}

/// Where a request for a backend came from (said in errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The `GPUIO_BACKEND` environment variable.
    Env,
    /// The CLI's `--backend` flag.
    Flag,
    /// A program's call ([`Runtime::with`]).
    Code,
}

/// A request for a backend, and maybe a transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub backend: String,
    pub transport: Option<TransportKind>,
    pub origin: Origin,
    /// The text as given.
    pub given: String,
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.origin {
            Origin::Env => write!(f, "{BACKEND_ENV}={}", self.given),
            Origin::Flag => write!(f, "--backend {}", self.given),
            Origin::Code => write!(f, "Runtime::with({})", self.given),
        }
    }
}

impl Request {
    /// Parses `backend` or `backend/transport` (the backend's name is checked when
    /// selecting, against the backends there are).
    pub fn parse(given: &str, origin: Origin) -> Result<Self, SelectError> {
        let given = given.trim();
        let bad = |why: String| SelectError::BadRequest {
            given: given.to_string(),
            origin,
            why,
        };
        let (backend, transport) = match given.split_once('/') {
            Some((b, t)) => {
                let t = TransportKind::from_name(t.trim())
                    .ok_or_else(|| bad(format!("unknown transport {:?}", t.trim())))?;
                (b.trim(), Some(t))
            }
            None => (given, None),
        };
        if backend.is_empty() {
            return Err(bad("no backend named".to_string()));
        }
        Ok(Self {
            backend: backend.to_ascii_lowercase(),
            transport,
            origin,
            given: given.to_string(),
        })
    }

    /// The request in `GPUIO_BACKEND`, if it is set and not empty.
    pub fn from_env() -> Result<Option<Self>, SelectError> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v, Origin::Env).map(Some),
            _ => Ok(None),
        }
    }

    /// The request of a CLI's `--backend` flag, else `GPUIO_BACKEND`'s.
    pub fn from_flag_or_env(flag: Option<&str>) -> Result<Option<Self>, SelectError> {
        match flag {
            Some(v) => Self::parse(v, Origin::Flag).map(Some),
            None => Self::from_env(),
        }
    }
}

/// Why no channel factory could be chosen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("{} is not <backend>[/<transport>]: {why} (backends: cuda, hsa, cpu; transports: direct, forward, mailbox)", origin_text(*.origin, .given))]
    BadRequest {
        given: String,
        origin: Origin,
        why: String,
    },
    #[error("{request} asks for backend {backend:?}, which does not exist (backends: {known})")]
    UnknownBackend {
        request: String,
        backend: String,
        known: String,
    },
    #[error("{pair} was asked for ({request}) but is unavailable: {reason}")]
    Unavailable {
        pair: Pair,
        request: String,
        reason: String,
    },
    #[error(
        "{backend} was asked for ({request}) but none of its transports is available: {reasons}"
    )]
    NoTransport {
        backend: &'static str,
        request: String,
        reasons: String,
    },
    #[error("no backend is available here: {reasons}")]
    NothingAvailable { reasons: String },
}

fn origin_text(origin: Origin, given: &str) -> String {
    match origin {
        Origin::Env => format!("{BACKEND_ENV}={given}"),
        Origin::Flag => format!("--backend {given}"),
        Origin::Code => format!("Runtime::with({given})"),
    }
}

/// Why a channel, device or module could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    Open(#[from] BackendError),
    #[error(transparent)]
    OpenChannel(#[from] OpenError),
    /// The pair's backend has no device to run kernels on here.
    #[error("{pair} has no device to run kernels on: {reason}")]
    NoDevice { pair: Pair, reason: String },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("reading {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One step of [`ChannelFactory::open`]'s fallback: `from` could not open a channel
/// for a reason of resources, so `to` was tried next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    pub from: Pair,
    pub to: Pair,
    /// `from`'s failure, in words.
    pub reason: String,
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} could not open a channel, so {} was tried: {}",
            self.from, self.to, self.reason
        )
    }
}

/// One pair's failure to open, in [`OpenError::Exhausted`].
#[derive(Debug)]
pub struct PairFailure {
    pub pair: Pair,
    pub error: BackendError,
}

/// Why [`ChannelFactory::open`] gave no channel.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The chosen pair failed for a reason another transport would not avoid (or
    /// it was the only one there is), before any fallback.
    #[error(transparent)]
    Failed(Box<BackendError>),
    /// The pair was forced, so its resource failure is not replaced by another
    /// transport.
    #[error("{pair} was asked for ({request}) and could not open; a forced pair does not fall back to another transport: {source}")]
    Forced {
        pair: Pair,
        request: String,
        #[source]
        source: Box<BackendError>,
    },
    /// Every transport tried failed; each failure, in the order tried.
    #[error("no transport of {backend} could open a channel: {}", list_failures(.failures))]
    Exhausted {
        backend: &'static str,
        failures: Vec<PairFailure>,
    },
}

impl OpenError {
    /// Whether the failure (every failure, when several pairs were tried) is about
    /// resources rather than the request.
    pub fn is_resource(&self) -> bool {
        match self {
            Self::Failed(e) | Self::Forced { source: e, .. } => e.is_resource(),
            Self::Exhausted { failures, .. } => failures.iter().all(|f| f.error.is_resource()),
        }
    }
}

fn list_failures(failures: &[PairFailure]) -> String {
    failures
        .iter()
        .map(|f| format!("{}: {}", f.pair, f.error))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One pair as the probe found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairStatus {
    pub pair: Pair,
    /// Whether the backend runs kernels on a GPU.
    pub gpu: bool,
    pub availability: Availability,
}

struct Entry {
    backend: Arc<AnyBackend>,
    probe: BackendProbe,
    gpu: bool,
}

/// Every backend, probed once.
pub struct Runtime {
    entries: Vec<Entry>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.probe))
            .finish()
    }
}

/// The one ranking key of selection, smallest first: available pairs by score
/// (higher first), then the backends' fixed order, then the transports' order;
/// unavailable pairs after every available one, in the same fixed order.
fn rank_key(backend_index: usize, s: &PairStatus) -> (bool, std::cmp::Reverse<u32>, usize, usize) {
    let transport_index = TransportKind::ALL
        .iter()
        .position(|t| *t == s.pair.transport)
        .unwrap_or(usize::MAX);
    (
        !s.availability.is_available(),
        std::cmp::Reverse(s.availability.score().unwrap_or(0)),
        backend_index,
        transport_index,
    )
}

impl Runtime {
    /// Probes the default backends ([`default_backends`]) and ranks each one's
    /// transports by the machine's calibration when `gpuio bench` stored one
    /// ([`crate::calibration`]).
    pub fn probe() -> Self {
        let mut rt = Self::from_backends(default_backends());
        if let Some(path) = crate::calibration::Calibration::path() {
            match crate::calibration::Calibration::load(&path) {
                Ok(cal) => rt.calibrate(&cal, &path),
                Err(e) => tracing::warn!(error = %e, "calibration ignored"),
            }
        }
        rt
    }

    /// Ranks each backend's available transports by the figures `cal` holds for
    /// its device (measured ones first, fastest first; the rest after, in their
    /// probe's order). Scores are only exchanged within a backend, so every GPU
    /// pair still ranks above every CPU pair. The probe gains a capability line
    /// saying where the ranking came from.
    pub fn calibrate(&mut self, cal: &crate::calibration::Calibration, source: &std::path::Path) {
        for e in &mut self.entries {
            let device = e.probe.device.clone();
            let backend = e.probe.backend;
            let mut avail: Vec<(TransportKind, u32, Option<f64>)> = e
                .probe
                .transports
                .iter()
                .filter_map(|(t, a)| {
                    let pair = format!("{backend}/{t}");
                    a.score()
                        .map(|sc| (*t, sc, cal.figure(&pair, &device).map(|m| m.requests_per_s)))
                })
                .collect();
            if avail.iter().all(|(_, _, f)| f.is_none()) {
                continue;
            }
            let mut scores: Vec<u32> = avail.iter().map(|(_, sc, _)| *sc).collect();
            scores.sort_unstable_by(|a, b| b.cmp(a));
            avail.sort_by(|a, b| match (a.2, b.2) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => b.1.cmp(&a.1),
            });
            let mut said = Vec::new();
            for ((t, _, fig), score) in avail.iter().zip(scores) {
                if let Some((_, a)) = e.probe.transports.iter_mut().find(|(k, _)| k == t) {
                    *a = Availability::Available { score };
                }
                said.push(match fig {
                    Some(f) => format!("{t} {:.1} k req/s", f / 1e3),
                    None => format!("{t} not measured"),
                });
            }
            e.probe
                .capabilities
                .push(gpuio_core::backend::Capability::new(
                    "transports ranked by calibration",
                    format!("{} ({})", said.join(", "), source.display()),
                ));
        }
    }

    /// Probes `backends`, kept in the given (tie-breaking) order.
    pub fn from_backends(backends: Vec<AnyBackend>) -> Self {
        let entries = backends
            .into_iter()
            .map(|b| {
                let probe = b.probe();
                tracing::debug!(backend = probe.backend, ?probe, "probed");
                Entry {
                    gpu: b.is_gpu(),
                    backend: Arc::new(b),
                    probe,
                }
            })
            .collect();
        Self { entries }
    }

    /// A factory for every available pair, in selection order.
    pub fn available(&self) -> Vec<ChannelFactory> {
        self.ranked()
            .into_iter()
            .filter(|s| s.availability.is_available())
            .filter_map(|s| {
                let e = self
                    .entries
                    .iter()
                    .find(|e| e.probe.backend == s.pair.backend)?;
                Some(ChannelFactory::new(
                    e.backend.clone(),
                    e.probe.clone(),
                    s.pair,
                    Vec::new(),
                    None,
                ))
            })
            .collect()
    }

    /// The probes' answers, in the backends' order.
    pub fn probes(&self) -> impl Iterator<Item = &BackendProbe> {
        self.entries.iter().map(|e| &e.probe)
    }

    /// Every pair: the available ones in selection order, then the unavailable ones
    /// in the backends' and transports' order.
    pub fn ranked(&self) -> Vec<PairStatus> {
        let mut all: Vec<(usize, PairStatus)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            for t in TransportKind::ALL {
                all.push((
                    i,
                    PairStatus {
                        pair: Pair {
                            backend: e.probe.backend,
                            transport: t,
                        },
                        gpu: e.gpu,
                        availability: e.probe.availability(t),
                    },
                ));
            }
        }
        all.sort_by_key(|(i, s)| rank_key(*i, s));
        all.into_iter().map(|(_, s)| s).collect()
    }

    /// The best available pair, or the one `request` asks for.
    pub fn choose(&self, request: Option<&Request>) -> Result<ChannelFactory, SelectError> {
        let ranked = self.ranked();
        let Some(request) = request else {
            let best = ranked
                .iter()
                .find(|s| s.availability.is_available())
                .ok_or_else(|| SelectError::NothingAvailable {
                    reasons: reasons(&ranked),
                })?;
            return self.factory(best.pair, &ranked, None);
        };
        let entry = self
            .entries
            .iter()
            .find(|e| e.probe.backend == request.backend)
            .ok_or_else(|| SelectError::UnknownBackend {
                request: request.to_string(),
                backend: request.backend.clone(),
                known: self
                    .entries
                    .iter()
                    .map(|e| e.probe.backend)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let backend = entry.probe.backend;
        match request.transport {
            Some(transport) => {
                let pair = Pair { backend, transport };
                match entry.probe.availability(transport) {
                    Availability::Available { .. } => {
                        self.factory(pair, &[], Some(request.to_string()))
                    }
                    Availability::Unavailable { reason } => Err(SelectError::Unavailable {
                        pair,
                        request: request.to_string(),
                        reason,
                    }),
                }
            }
            None => {
                let mine: Vec<PairStatus> = ranked
                    .into_iter()
                    .filter(|s| s.pair.backend == backend)
                    .collect();
                match mine.iter().find(|s| s.availability.is_available()) {
                    Some(s) => self.factory(s.pair, &mine, None),
                    None => Err(SelectError::NoTransport {
                        backend,
                        request: request.to_string(),
                        reasons: reasons(&mine),
                    }),
                }
            }
        }
    }

    /// The factory of `pair`. Its fallbacks are the other available pairs of its
    /// backend in `ranked`, in that order; `forced` (the request's text) when the
    /// pair was asked for by name.
    fn factory(
        &self,
        pair: Pair,
        ranked: &[PairStatus],
        forced: Option<String>,
    ) -> Result<ChannelFactory, SelectError> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.probe.backend == pair.backend)
            .ok_or_else(|| SelectError::NothingAvailable {
                reasons: format!("{pair} names no probed backend"),
            })?;
        let fallback = ranked
            .iter()
            .filter(|s| {
                s.pair.backend == pair.backend && s.pair != pair && s.availability.is_available()
            })
            .map(|s| s.pair.transport)
            .collect();
        Ok(ChannelFactory::new(
            entry.backend.clone(),
            entry.probe.clone(),
            pair,
            fallback,
            forced,
        ))
    }

    /// Probes every backend and returns the chosen channel factory: the one
    /// `GPUIO_BACKEND` asks for, else the best available.
    pub fn auto() -> Result<ChannelFactory, SelectError> {
        let request = Request::from_env()?;
        Self::probe().choose(request.as_ref())
    }

    /// Probes every backend and returns the factory of `pair`, or why it is
    /// unavailable.
    pub fn with(pair: &str) -> Result<ChannelFactory, SelectError> {
        let request = Request::parse(pair, Origin::Code)?;
        Self::probe().choose(Some(&request))
    }
}

/// Unavailable pairs' reasons, each distinct reason once with the pairs it covers.
fn reasons(statuses: &[PairStatus]) -> String {
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    for s in statuses {
        if let Availability::Unavailable { reason } = &s.availability {
            match grouped.iter_mut().find(|(r, _)| r == reason) {
                Some((_, pairs)) => pairs.push(s.pair.to_string()),
                None => grouped.push((reason.clone(), vec![s.pair.to_string()])),
            }
        }
    }
    grouped
        .into_iter()
        .map(|(r, pairs)| format!("{}: {r}", pairs.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A chosen (backend, transport) pair that opens channels, falling back to its
/// backend's next transports when the pair cannot open for a reason of resources
/// (module doc).
#[derive(Clone)]
pub struct ChannelFactory {
    backend: Arc<AnyBackend>,
    probe: BackendProbe,
    pair: Pair,
    /// The backend's other available transports, in selection order: tried when
    /// `pair` fails for a reason of resources. Empty for a forced pair.
    fallback: Vec<TransportKind>,
    /// The request that named `pair`, when it was forced.
    forced: Option<String>,
    /// Every fallback taken so far (shared by clones).
    taken: Arc<Mutex<Vec<Fallback>>>,
}

impl fmt::Debug for ChannelFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChannelFactory({} on {})", self.pair, self.probe.device)
    }
}

impl ChannelFactory {
    fn new(
        backend: Arc<AnyBackend>,
        probe: BackendProbe,
        pair: Pair,
        fallback: Vec<TransportKind>,
        forced: Option<String>,
    ) -> Self {
        Self {
            backend,
            probe,
            pair,
            fallback,
            forced,
            taken: Arc::default(),
        }
    }

    /// The chosen pair: the one every `open` tries first.
    pub fn pair(&self) -> Pair {
        self.pair
    }

    /// The pairs `open` tries after [`pair`](Self::pair) fails for a reason of
    /// resources, in order (none for a forced pair).
    pub fn fallback_pairs(&self) -> Vec<Pair> {
        self.fallback
            .iter()
            .map(|&transport| Pair {
                backend: self.pair.backend,
                transport,
            })
            .collect()
    }

    /// Every fallback `open` has taken so far, oldest first, each with the reason.
    pub fn fallbacks(&self) -> Vec<Fallback> {
        self.taken.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// What the backend's probe found.
    pub fn probe(&self) -> &BackendProbe {
        &self.probe
    }

    /// The backend behind this pair.
    pub fn backend(&self) -> &AnyBackend {
        &self.backend
    }

    /// The device that runs kernels for this pair (conformance, benchmarks).
    pub fn device(&self) -> Result<Arc<dyn gpuio_device::Device>, String> {
        self.backend.device()
    }

    /// Compiles `source`, a kernel file that includes `gpuio.h`, for this pair's
    /// device and loads it (compiled images are cached by a hash of the source).
    /// `name` names it in compiler messages.
    pub fn load(&self, name: &str, source: &str) -> Result<Arc<dyn Module>, RuntimeError> {
        let device = self
            .backend
            .device()
            .map_err(|reason| RuntimeError::NoDevice {
                pair: self.pair,
                reason,
            })?;
        Ok(device.load(name, source)?)
    }

    /// [`load`](Self::load)s the kernel file at `path`.
    pub fn load_file(
        &self,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Arc<dyn Module>, RuntimeError> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path).map_err(|source| RuntimeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.load(&path.display().to_string(), &source)
    }

    /// Opens a channel on this pair, or, when it fails for a reason of resources, on
    /// the next of [`fallback_pairs`](Self::fallback_pairs) that opens (module doc);
    /// [`Channel::transport`] says which. Each fallback is logged and kept
    /// ([`fallbacks`](Self::fallbacks)).
    ///
    /// Trying a second pair needs a second copy of `config`: before each try that
    /// has a next pair, the endpoints' descriptors are duplicated
    /// ([`ChannelConfig::try_clone`]). Where that fails (out of descriptors) the
    /// pair is still tried, with nothing after it.
    pub fn open(&self, config: ChannelConfig) -> Result<Channel, OpenError> {
        let order: Vec<TransportKind> = std::iter::once(self.pair.transport)
            .chain(self.fallback.iter().copied())
            .collect();
        let mut failures: Vec<PairFailure> = Vec::new();
        let mut next = Some(config);
        for (i, &transport) in order.iter().enumerate() {
            let Some(config) = next.take() else {
                break;
            };
            let pair = Pair {
                backend: self.pair.backend,
                transport,
            };
            if i + 1 < order.len() {
                match config.try_clone() {
                    Ok(copy) => next = Some(copy),
                    Err(e) => tracing::warn!(
                        %pair,
                        error = %e,
                        "no copy of the channel configuration: no fallback after this pair"
                    ),
                }
            }
            let error = match crate::backends::open(&self.backend, &self.probe, transport, config) {
                Ok(channel) => return Ok(channel),
                Err(e) => e,
            };
            let falls_back = error.is_resource() && self.forced.is_none();
            failures.push(PairFailure { pair, error });
            if !falls_back {
                break;
            }
            if let (Some(&to), Some(_)) = (order.get(i + 1), next.as_ref()) {
                let fallback = Fallback {
                    from: pair,
                    to: Pair {
                        backend: self.pair.backend,
                        transport: to,
                    },
                    reason: failures
                        .last()
                        .map_or_else(String::new, |f| f.error.to_string()),
                };
                tracing::warn!(%fallback, "falling back");
                if let Ok(mut taken) = self.taken.lock() {
                    taken.push(fallback);
                }
            }
        }
        if failures.len() > 1 {
            return Err(OpenError::Exhausted {
                backend: self.pair.backend,
                failures,
            });
        }
        let Some(PairFailure { pair, error }) = failures.pop() else {
            // `order` always holds the chosen pair, which was tried.
            return Err(OpenError::Exhausted {
                backend: self.pair.backend,
                failures,
            });
        };
        match &self.forced {
            Some(request) if error.is_resource() => Err(OpenError::Forced {
                pair,
                request: request.clone(),
                source: Box::new(error),
            }),
            _ => Err(OpenError::Failed(Box::new(error))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::{CpuBackend, CudaBackend};
    use gpuio_backend_hsa_svm::HsaBackend;

    const UP: fn(u32) -> Availability = |score| Availability::Available { score };

    fn down() -> Availability {
        Availability::Unavailable {
            reason: "not here".to_string(),
        }
    }

    /// A runtime whose probes are given, not asked for (ranking reads only them).
    fn runtime(rows: Vec<(&'static str, bool, [Availability; 3])>) -> Runtime {
        let entries = rows
            .into_iter()
            .map(|(name, gpu, avail)| Entry {
                backend: Arc::new(if gpu {
                    AnyBackend::from(CudaBackend::new())
                } else {
                    AnyBackend::from(CpuBackend::new())
                }),
                probe: BackendProbe {
                    backend: name,
                    device: name.to_string(),
                    capabilities: vec![],
                    transports: TransportKind::ALL.into_iter().zip(avail).collect(),
                },
                gpu,
            })
            .collect();
        Runtime { entries }
    }

    fn chosen(rt: &Runtime, request: Option<&str>) -> Result<String, SelectError> {
        let request = request
            .map(|r| Request::parse(r, Origin::Flag))
            .transpose()?;
        rt.choose(request.as_ref()).map(|f| f.pair().to_string())
    }

    fn measured(pair: &str, device: &str, rate: f64) -> crate::calibration::Measured {
        crate::calibration::Measured {
            pair: pair.into(),
            device: device.into(),
            requests_per_s: rate,
            threads_done: 1,
            threads: 1,
            measured_at: 0,
        }
    }

    #[test]
    fn a_calibration_ranks_a_backends_transports_by_what_was_measured_on_its_device() {
        let mut rt = runtime(vec![
            ("cuda", true, [UP(1030), UP(1020), UP(1010)]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        let mut cal = crate::calibration::Calibration::default();
        cal.record(vec![
            measured("cuda/direct", "cuda", 112e3),
            measured("cuda/forward", "cuda", 2.6e3),
            measured("cuda/mailbox", "cuda", 7.5e3),
            // Measured on another device: ignored.
            measured("cpu/mailbox", "some other machine", 1e9),
        ]);
        rt.calibrate(&cal, std::path::Path::new("/x/calibration.json"));
        let order: Vec<String> = rt.ranked().iter().map(|s| s.pair.to_string()).collect();
        assert_eq!(
            order,
            [
                "cuda/direct",
                "cuda/mailbox",
                "cuda/forward",
                "cpu/direct",
                "cpu/forward",
                "cpu/mailbox"
            ]
        );
        let cuda = rt.probes().find(|p| p.backend == "cuda").unwrap();
        let line = cuda
            .capabilities
            .iter()
            .find(|c| c.name == "transports ranked by calibration")
            .unwrap();
        assert!(line.value.contains("/x/calibration.json"), "{}", line.value);
        assert!(
            line.value.contains("direct 112.0 k req/s"),
            "{}",
            line.value
        );
    }

    #[test]
    fn a_calibration_that_favours_the_cpu_device_never_lifts_it_above_a_gpu() {
        let mut rt = runtime(vec![
            ("cuda", true, [down(), UP(1020), UP(1010)]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        let mut cal = crate::calibration::Calibration::default();
        cal.record(vec![
            measured("cpu/mailbox", "cpu", 9e9),
            measured("cpu/direct", "cpu", 1.0),
        ]);
        rt.calibrate(&cal, std::path::Path::new("c.json"));
        let order: Vec<String> = rt.ranked().iter().map(|s| s.pair.to_string()).collect();
        assert_eq!(
            order,
            [
                "cuda/forward",
                "cuda/mailbox",
                "cpu/mailbox",
                "cpu/direct",
                "cpu/forward",
                "cuda/direct"
            ]
        );
    }

    #[test]
    fn a_gpu_mailbox_ranks_before_cpu_direct() {
        let rt = runtime(vec![
            ("cuda", true, [down(), down(), UP(10)]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        assert_eq!(chosen(&rt, None).unwrap(), "cuda/mailbox");
    }

    #[test]
    fn the_score_alone_orders_the_transports_of_one_backend() {
        let rt = runtime(vec![("cpu", false, [UP(1), UP(50), UP(99)])]);
        let order: Vec<String> = rt.ranked().iter().map(|s| s.pair.to_string()).collect();
        assert_eq!(order, ["cpu/mailbox", "cpu/forward", "cpu/direct"]);
        let rt = runtime(vec![("cpu", false, [UP(7), UP(7), UP(7)])]);
        let order: Vec<String> = rt.ranked().iter().map(|s| s.pair.to_string()).collect();
        assert_eq!(order, ["cpu/direct", "cpu/forward", "cpu/mailbox"]);
    }

    #[test]
    fn between_gpus_the_score_then_the_fixed_order_decides() {
        let rt = runtime(vec![
            ("cuda", true, [UP(10), down(), down()]),
            ("hsa", true, [UP(20), down(), down()]),
        ]);
        assert_eq!(chosen(&rt, None).unwrap(), "hsa/direct");
        let rt = runtime(vec![
            ("cuda", true, [UP(10), down(), down()]),
            ("hsa", true, [UP(10), down(), down()]),
        ]);
        assert_eq!(chosen(&rt, None).unwrap(), "cuda/direct");
    }

    #[test]
    fn unavailable_pairs_come_last_in_backend_then_transport_order() {
        let rt = runtime(vec![
            ("cuda", true, [down(), down(), down()]),
            ("cpu", false, [down(), UP(2), UP(1)]),
        ]);
        let order: Vec<String> = rt.ranked().iter().map(|s| s.pair.to_string()).collect();
        assert_eq!(
            order,
            [
                "cpu/forward",
                "cpu/mailbox",
                "cuda/direct",
                "cuda/forward",
                "cuda/mailbox",
                "cpu/direct"
            ]
        );
    }

    #[test]
    fn a_forced_pair_is_honoured_or_refused_with_the_reason_never_replaced() {
        let rt = runtime(vec![
            ("cuda", true, [down(), down(), down()]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        assert_eq!(chosen(&rt, Some("cpu/mailbox")).unwrap(), "cpu/mailbox");
        let e = chosen(&rt, Some("cuda/direct")).unwrap_err();
        assert!(matches!(e, SelectError::Unavailable { .. }), "{e:?}");
        assert!(e.to_string().contains("not here"), "{e}");
        assert!(e.to_string().contains("--backend cuda/direct"), "{e}");
        let e = chosen(&rt, Some("cuda")).unwrap_err();
        assert!(matches!(e, SelectError::NoTransport { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("cuda/direct, cuda/forward, cuda/mailbox: not here"),
            "{e}"
        );
    }

    #[test]
    fn a_backend_alone_gets_its_best_available_transport() {
        let rt = runtime(vec![
            ("cuda", true, [down(), UP(20), UP(10)]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        assert_eq!(chosen(&rt, Some("cpu")).unwrap(), "cpu/direct");
        assert_eq!(chosen(&rt, Some("CUDA")).unwrap(), "cuda/forward");
    }

    #[test]
    fn malformed_and_unknown_requests_say_what_is_accepted() {
        let rt = runtime(vec![("cpu", false, [UP(3), UP(2), UP(1)])]);
        let e = chosen(&rt, Some("cpu/fast")).unwrap_err();
        assert!(e.to_string().contains("unknown transport \"fast\""), "{e}");
        assert!(e.to_string().contains("direct, forward, mailbox"), "{e}");
        let e = chosen(&rt, Some("rocm/direct")).unwrap_err();
        assert!(matches!(e, SelectError::UnknownBackend { .. }), "{e:?}");
        assert!(chosen(&rt, Some("/direct")).is_err());
    }

    fn fallback_order(rt: &Runtime, request: Option<&str>) -> Vec<String> {
        let request = request.map(|r| Request::parse(r, Origin::Flag).unwrap());
        rt.choose(request.as_ref())
            .unwrap()
            .fallback_pairs()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn open_falls_back_along_the_chosen_backends_ranking_and_never_for_a_forced_pair() {
        let rt = runtime(vec![
            ("cuda", true, [UP(1030), down(), UP(1010)]),
            ("cpu", false, [UP(3), UP(2), UP(1)]),
        ]);
        // The chosen backend's device stays: no fallback to the CPU device.
        assert_eq!(fallback_order(&rt, None), ["cuda/mailbox"]);
        assert_eq!(
            fallback_order(&rt, Some("cpu")),
            ["cpu/forward", "cpu/mailbox"]
        );
        assert!(fallback_order(&rt, Some("cpu/direct")).is_empty());
        let rt = runtime(vec![("cpu", false, [UP(1), UP(50), UP(99)])]);
        assert_eq!(fallback_order(&rt, None), ["cpu/forward", "cpu/direct"]);
    }

    #[test]
    fn a_failure_that_is_not_about_resources_is_returned_without_a_fallback() {
        // A socket declared read-only cannot be confined on direct (its registered
        // descriptor would also write): a property of the request, not of the machine.
        let rt = runtime(vec![("cpu", false, [UP(3), UP(2), UP(1)])]);
        let factory = rt.choose(None).unwrap();
        let (sock, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut cfg = ChannelConfig::default();
        cfg.endpoint(
            gpuio_core::Endpoint::new(
                "sock",
                gpuio_core::EndpointKind::Socket,
                gpuio_core::Access::READ,
                std::os::fd::AsFd::as_fd(&sock),
            )
            .unwrap(),
        );
        let e = factory.open(cfg).unwrap_err();
        assert!(matches!(e, OpenError::Failed(_)), "{e:?}");
        assert!(!e.is_resource(), "{e}");
        assert!(factory.fallbacks().is_empty());
    }

    #[test]
    fn the_default_backends_are_cuda_hsa_cpu_in_that_order() {
        let rt = Runtime::from_backends(vec![
            CudaBackend::new().into(),
            HsaBackend::new().into(),
            CpuBackend::new().into(),
        ]);
        let names: Vec<&str> = rt.probes().map(|p| p.backend).collect();
        assert_eq!(names, ["cuda", "hsa", "cpu"]);
        let defaults: Vec<&str> = default_backends().iter().map(|b| b.name()).collect();
        assert_eq!(defaults, names);
    }
}
