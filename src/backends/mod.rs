//! The backends the facade knows, in one `enum_dispatch` enum, and the fixed list
//! [`Runtime`](crate::runtime::Runtime) probes.
//!
//! Every backend opens channels with the same transport builders ([`builders`]):
//! the transports are generic over the memory provider, so one builder serves the
//! CPU device and every GPU.

pub mod cpu;

use std::sync::Arc;

use enum_dispatch::enum_dispatch;
use gpuio_backend_cuda_mapped::backend::UringVerdict;
use gpuio_backend_hsa_svm::HsaBackend;
use gpuio_core::backend::{Backend, BackendError, BackendProbe};
use gpuio_core::probe::UringProbe;
use gpuio_core::TransportBuilder;
use gpuio_core::{Channel, ChannelConfig, TransportKind};

pub use cpu::{CpuBackend, TransportBuilders};
pub use gpuio_backend_cuda_mapped::CudaBackend;

/// The backend role as the facade dispatches it: every [`Backend`] is one.
///
/// (`enum_dispatch` needs a trait defined in this crate; the blanket impl below makes
/// every `gpuio_core::backend::Backend` a `DynBackend`.)
#[enum_dispatch]
pub trait DynBackend {
    fn name(&self) -> &'static str;
    fn probe(&self) -> BackendProbe;
    fn open(
        &self,
        transport: TransportKind,
        config: ChannelConfig,
    ) -> Result<Channel, BackendError>;
}

impl<T: Backend> DynBackend for T {
    fn name(&self) -> &'static str {
        Backend::name(self)
    }
    fn probe(&self) -> BackendProbe {
        Backend::probe(self)
    }
    fn open(
        &self,
        transport: TransportKind,
        config: ChannelConfig,
    ) -> Result<Channel, BackendError> {
        Backend::open(self, transport, config)
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

impl AnyBackend {
    /// Whether it runs kernels on a GPU (every GPU pair ranks before the CPU device).
    pub fn is_gpu(&self) -> bool {
        match self {
            Self::Cuda(_) | Self::Hsa(_) => true,
            Self::Cpu(_) => false,
        }
    }
}

impl std::fmt::Debug for AnyBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One builder per transport, shared by every backend.
pub fn builders() -> Vec<Arc<dyn TransportBuilder>> {
    vec![
        Arc::new(gpuio_core::direct::DirectBuilder::default()),
        Arc::new(gpuio_core::forward::ForwardBuilder::default()),
        Arc::new(gpuio_backend_rpc::mailbox::MailboxBuilder::default()),
    ]
}

/// The transport builders the CPU device opens channels with.
pub fn cpu_builders() -> TransportBuilders {
    let mut b = TransportBuilders::none();
    for t in builders() {
        match t.kind() {
            TransportKind::Direct => b.direct = Some(t),
            TransportKind::Forward => b.forward = Some(t),
            TransportKind::Mailbox => b.mailbox = Some(t),
        }
    }
    b
}

/// The NVIDIA backend with every transport; its direct pair also needs the host's
/// io_uring facts, asked with the CUDA memory provider (so fixed buffers are tried
/// on CUDA-registered memory).
pub fn cuda_backend() -> CudaBackend {
    CudaBackend::new(builders()).with_uring_check(Arc::new(|provider| {
        let u = UringProbe::detect(provider);
        UringVerdict::from_availability(u.direct(0), u.forward(0))
    }))
}

/// The device a backend runs kernels on, for conformance and benchmarks.
pub fn device_of(backend: &AnyBackend) -> Result<Arc<dyn gpuio_device::Device>, String> {
    match backend {
        AnyBackend::Cpu(_) => Ok(Arc::new(gpuio_device::cpu::CpuDevice)),
        AnyBackend::Cuda(c) => Ok(Arc::new(c.device()?)),
        AnyBackend::Hsa(_) => Err("the HSA backend cannot run kernels yet".to_string()),
    }
}

/// The backends in their fixed order, GPUs first (ties in selection go to the
/// earlier one).
pub fn default_backends() -> Vec<AnyBackend> {
    vec![
        AnyBackend::Cuda(cuda_backend()),
        AnyBackend::Hsa(HsaBackend::new()),
        AnyBackend::Cpu(CpuBackend::new(cpu_builders())),
    ]
}
