//! The backends the facade knows, in one `enum_dispatch` enum, the fixed list
//! [`Runtime`](crate::runtime::Runtime) probes, and the one place a channel is
//! opened.
//!
//! A backend supplies a device (and through it the memory provider) and a probe;
//! the transports are generic over the memory provider, so [`open`] builds every
//! channel the same way, on every backend.

pub mod cpu;

use std::sync::Arc;

use enum_dispatch::enum_dispatch;
use gpuio_backend_hsa_svm::HsaBackend;
use gpuio_core::backend::{Availability, Backend, BackendError, BackendProbe};
use gpuio_core::device::Device;
use gpuio_core::transport::TransportBuilder;
use gpuio_core::{Channel, ChannelConfig, TransportKind};

pub use cpu::CpuBackend;
pub use gpuio_backend_cuda_mapped::CudaBackend;

/// The backend role as the facade dispatches it: every [`Backend`] is one.
///
/// (`enum_dispatch` needs a trait defined in this crate; the blanket impl below makes
/// every `gpuio_core::backend::Backend` a `DynBackend`.)
#[enum_dispatch]
pub trait DynBackend {
    fn name(&self) -> &'static str;
    fn is_gpu(&self) -> bool;
    fn probe(&self) -> BackendProbe;
    fn device(&self) -> Result<Arc<dyn Device>, String>;
}

impl<T: Backend> DynBackend for T {
    fn name(&self) -> &'static str {
        Backend::name(self)
    }
    fn is_gpu(&self) -> bool {
        Backend::is_gpu(self)
    }
    fn probe(&self) -> BackendProbe {
        Backend::probe(self)
    }
    fn device(&self) -> Result<Arc<dyn Device>, String> {
        Backend::device(self)
    }
}

/// Every backend gpuio can run on.
// One value per backend per process, each behind an `Arc`: size differences cost nothing.
#[allow(clippy::large_enum_variant)]
#[enum_dispatch(DynBackend)]
pub enum AnyBackend {
    Cuda(CudaBackend),
    Hsa(HsaBackend),
    Cpu(CpuBackend),
}

impl std::fmt::Debug for AnyBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The builder of one transport: the io_uring transports live in core, the mailbox
/// server in backend-rpc; each serves every memory provider.
pub fn transport_builder(kind: TransportKind) -> Box<dyn TransportBuilder> {
    match kind {
        TransportKind::Direct => Box::new(gpuio_core::direct::DirectBuilder::default()),
        TransportKind::Forward => Box::new(gpuio_core::forward::ForwardBuilder::default()),
        TransportKind::Mailbox => Box::new(gpuio_backend_rpc::mailbox::MailboxBuilder::default()),
    }
}

/// Opens a channel on `transport` of `backend`, whose probe answered `probe`: the
/// one place a channel is opened, for every backend.
pub fn open(
    backend: &AnyBackend,
    probe: &BackendProbe,
    transport: TransportKind,
    config: ChannelConfig,
) -> Result<Channel, BackendError> {
    let unavailable = |reason: String| BackendError::Unavailable {
        backend: probe.backend,
        transport,
        reason,
    };
    if let Availability::Unavailable { reason } = probe.availability(transport) {
        return Err(unavailable(reason));
    }
    let device = backend.device().map_err(unavailable)?;
    Ok(Channel::open(
        device.provider(),
        transport_builder(transport).as_ref(),
        config,
    )?)
}

/// The backends in their fixed order, GPUs first (ties in selection go to the
/// earlier one).
pub fn default_backends() -> Vec<AnyBackend> {
    vec![
        AnyBackend::Cuda(CudaBackend::new()),
        AnyBackend::Hsa(HsaBackend::new()),
        AnyBackend::Cpu(CpuBackend::new()),
    ]
}
