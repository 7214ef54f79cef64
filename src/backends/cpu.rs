//! The CPU device: kernels compiled as host C++, one OS thread per emulated GPU
//! thread, plain host memory. Always present, and last in selection (the lowest
//! scores); which transports it offers is what io_uring allows here.

use std::sync::{Arc, OnceLock};

use gpuio_core::backend::{Availability, Backend, BackendProbe, Capability};
use gpuio_core::device::Device;
use gpuio_core::probe::UringProbe;
use gpuio_core::{HostMemory, MemoryProvider, TransportKind};
use gpuio_device::cpu::CpuDevice;

/// Scores of the CPU device's transports: below any GPU's.
pub const SCORE_DIRECT: u32 = 3;
pub const SCORE_FORWARD: u32 = 2;
pub const SCORE_MAILBOX: u32 = 1;

/// The CPU device backend.
#[derive(Debug, Default)]
pub struct CpuBackend {
    /// io_uring facts: given, or asked for once on first use.
    uring: OnceLock<UringProbe>,
}

impl CpuBackend {
    pub const NAME: &'static str = "cpu";

    /// Probes io_uring (with `GPUIO_PROBE_FAKE` applied) on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `uring` instead of asking the kernel (for tests and callers that probed).
    pub fn with_uring(uring: UringProbe) -> Self {
        Self {
            uring: OnceLock::from(uring),
        }
    }

    pub fn uring(&self) -> &UringProbe {
        self.uring.get_or_init(|| UringProbe::detect(&HostMemory))
    }

    fn availability(&self, kind: TransportKind) -> Availability {
        let u = self.uring();
        match kind {
            TransportKind::Direct => u.direct(SCORE_DIRECT),
            TransportKind::Forward => u.forward(SCORE_FORWARD),
            TransportKind::Mailbox => u.mailbox(SCORE_MAILBOX),
        }
    }
}

/// The host threads a CPU-device kernel's emulated threads share.
fn host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn is_gpu(&self) -> bool {
        false
    }

    fn probe(&self) -> BackendProbe {
        let u = self.uring();
        let mut capabilities = vec![
            Capability::new("host threads", host_threads()),
            Capability::new("memory provider", HostMemory.name()),
            Capability::new(
                "kernel.io_uring_disabled",
                u.io_uring_disabled
                    .map_or_else(|| "(no such sysctl)".to_string(), |v| v.to_string()),
            ),
        ];
        capabilities.push(Capability::new("RLIMIT_MEMLOCK", u.memlock.describe()));
        for (name, fact) in u.facts() {
            capabilities.push(Capability::new(
                format!("io_uring.{}", name.name()),
                match fact {
                    Ok(()) => "ok".to_string(),
                    Err(r) => r.to_string(),
                },
            ));
        }
        BackendProbe {
            backend: Self::NAME,
            device: format!(
                "CPU device (one OS thread per emulated GPU thread, on {} cores)",
                host_threads()
            ),
            capabilities,
            transports: TransportKind::ALL
                .into_iter()
                .map(|k| (k, self.availability(k)))
                .collect(),
        }
    }

    fn device(&self) -> Result<Arc<dyn Device>, String> {
        Ok(Arc::new(CpuDevice))
    }
}
