//! The backend role: a device and its memory provider, and a probe saying which
//! transports can run on them here.
//!
//! Like a wgpu-hal adapter, a backend answers [`Backend::probe`] with data —
//! what it found, its capabilities, and for each transport either a score or a
//! reason a person can act on — and selection reads only those values. A backend
//! builds no transport itself: every transport is generic over the memory
//! provider, so the facade opens every channel the same way, on the provider of
//! [`Backend::device`].

use std::sync::Arc;

use crate::abi::TransportKind;
use crate::channel::ChannelError;
use crate::device::Device;

/// Whether one (backend, transport) pair can run here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// Usable. The score is the one ranking key of selection: higher is preferred,
    /// across backends (a GPU pair scores above every CPU pair).
    Available { score: u32 },
    /// Not usable, and why, in words a person can act on.
    Unavailable { reason: String },
}

impl Availability {
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available { .. })
    }
    pub fn score(&self) -> Option<u32> {
        match self {
            Self::Available { score } => Some(*score),
            Self::Unavailable { .. } => None,
        }
    }
}

/// One capability a probe found, as a name and a value in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capability {
    pub name: String,
    pub value: String,
}

impl Capability {
    pub fn new(name: impl Into<String>, value: impl ToString) -> Self {
        Self {
            name: name.into(),
            value: value.to_string(),
        }
    }
}

/// What a backend's probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendProbe {
    pub backend: &'static str,
    /// The device it would run on, in words ("NVIDIA H100 80GB HBM3, sm_90").
    pub device: String,
    pub capabilities: Vec<Capability>,
    pub transports: Vec<(TransportKind, Availability)>,
}

impl BackendProbe {
    pub fn availability(&self, t: TransportKind) -> Availability {
        self.transports
            .iter()
            .find(|(k, _)| *k == t)
            .map(|(_, a)| a.clone())
            .unwrap_or(Availability::Unavailable {
                reason: format!("{} has no {t} transport", self.backend),
            })
    }
}

/// Why a backend could not open a channel.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{backend}/{transport} is unavailable: {reason}")]
    Unavailable {
        backend: &'static str,
        transport: TransportKind,
        reason: String,
    },
    #[error(transparent)]
    Channel(#[from] ChannelError),
}

impl BackendError {
    /// Whether the failure is about resources (see
    /// [`TransportError::is_resource`](crate::transport::TransportError::is_resource)),
    /// so that another transport may still open. A pair its probe found
    /// unavailable is not: selection never offers one.
    pub fn is_resource(&self) -> bool {
        match self {
            Self::Unavailable { .. } => false,
            Self::Channel(e) => e.is_resource(),
        }
    }
}

/// A device, its memory provider and its probe.
pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;
    /// Whether it runs kernels on a GPU (said in `gpuio probe`).
    fn is_gpu(&self) -> bool;
    /// Asks the machine; never panics, never blocks for long.
    fn probe(&self) -> BackendProbe;
    /// The device kernels run on; channels use its memory provider. `Err` says, in
    /// words a person can act on, why there is none here.
    fn device(&self) -> Result<Arc<dyn Device>, String>;
}
