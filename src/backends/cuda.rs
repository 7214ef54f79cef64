//! PLACEHOLDER for the NVIDIA backend until `gpuio_backend_cuda_mapped::CudaBackend`
//! is wired in (see [`super`]): it only looks for the driver library, so `gpuio
//! probe` can say "libcuda not found" on machines without one, in the same words
//! the real backend's probe uses. It never offers a transport.

use gpuio_backend_hsa_svm::sys::loader_message;
use gpuio_core::backend::{Availability, Backend, BackendError, BackendProbe, Capability};
use gpuio_core::{Channel, ChannelConfig, TransportKind};

/// Names of the CUDA driver library, in the order they are tried.
pub const LIBCUDA_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

/// Stands in for `CudaBackend` (INTEGRATOR: delete this file once it is wired).
#[derive(Debug, Default, Clone, Copy)]
pub struct CudaPlaceholder;

impl CudaPlaceholder {
    pub const NAME: &'static str = "cuda";

    pub fn new() -> Self {
        Self
    }

    /// Which libcuda opens, or every name tried with the loader's message.
    fn find_libcuda() -> Result<&'static str, Vec<(&'static str, String)>> {
        let mut tried = Vec::new();
        for &name in LIBCUDA_NAMES {
            // SAFETY: loading the driver library runs only its own initialisers; it is
            // unloaded again when the handle drops (nothing from it is called).
            match unsafe { libloading::Library::new(name) } {
                Ok(_lib) => return Ok(name),
                Err(e) => tried.push((name, loader_message(name, &e))),
            }
        }
        Err(tried)
    }
}

impl Backend for CudaPlaceholder {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn probe(&self) -> BackendProbe {
        let (library, reason) = match Self::find_libcuda() {
            Ok(name) => (
                name.to_string(),
                format!(
                    "{name} is present, but this build's CUDA backend is a placeholder \
                     (gpuio::backends::cuda): it cannot open channels"
                ),
            ),
            Err(tried) => {
                let tried = tried
                    .iter()
                    .map(|(n, why)| format!("{n}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ");
                (
                    "not found".to_string(),
                    format!(
                        "libcuda not found (tried {tried}): install the NVIDIA driver, or run \
                         the container with the NVIDIA container toolkit (--gpus all)"
                    ),
                )
            }
        };
        BackendProbe {
            backend: Self::NAME,
            device: "none".to_string(),
            capabilities: vec![Capability::new("libcuda", library)],
            transports: TransportKind::ALL
                .into_iter()
                .map(|t| {
                    (
                        t,
                        Availability::Unavailable {
                            reason: reason.clone(),
                        },
                    )
                })
                .collect(),
        }
    }

    fn open(
        &self,
        transport: TransportKind,
        _config: ChannelConfig,
    ) -> Result<Channel, BackendError> {
        let reason = match self.probe().availability(transport) {
            Availability::Unavailable { reason } => reason,
            Availability::Available { .. } => "the CUDA backend is a placeholder".to_string(),
        };
        Err(BackendError::Unavailable {
            backend: Self::NAME,
            transport,
            reason,
        })
    }
}
