//! The backends the facade knows, in one `enum_dispatch` enum, and the fixed list
//! [`Runtime`](crate::runtime::Runtime) probes.
//!
//! # Integration seams
//! * **CUDA**: [`cuda::CudaPlaceholder`] stands where
//!   `gpuio_backend_cuda_mapped::CudaBackend` goes: replace the `Cuda` variant's type
//!   and the line in [`default_backends`].
//! * **Transport builders for the CPU device**: [`cpu_builders`] returns which
//!   builders (direct, forward, mailbox) the CPU backend opens channels with.

pub mod cpu;
pub mod cuda;

use enum_dispatch::enum_dispatch;
use gpuio_backend_hsa_svm::HsaBackend;
use gpuio_core::backend::{Backend, BackendError, BackendProbe};
use gpuio_core::{Channel, ChannelConfig, TransportKind};

pub use cpu::{CpuBackend, TransportBuilders};
pub use cuda::CudaPlaceholder;

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
    // INTEGRATOR: replace `CudaPlaceholder` by `gpuio_backend_cuda_mapped::CudaBackend`.
    Cuda(CudaPlaceholder),
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

/// The transport builders the CPU device opens channels with.
///
/// INTEGRATOR: fill in `gpuio_core::direct::DirectBuilder`,
/// `gpuio_backend_cuda_mapped::forward::ForwardBuilder` and
/// `gpuio_backend_rpc::mailbox::MailboxBuilder`. A builder left `None` makes
/// `open` on that transport fail with a reason saying so; probing is unaffected.
pub fn cpu_builders() -> TransportBuilders {
    TransportBuilders::none()
}

/// The backends in their fixed order, GPUs first (ties in selection go to the
/// earlier one).
pub fn default_backends() -> Vec<AnyBackend> {
    vec![
        // INTEGRATOR: `CudaBackend::new()` (or however it is made) here.
        AnyBackend::Cuda(CudaPlaceholder::new()),
        AnyBackend::Hsa(HsaBackend::new()),
        AnyBackend::Cpu(CpuBackend::new(cpu_builders())),
    ]
}
