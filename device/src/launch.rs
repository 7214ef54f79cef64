//! The device role: who runs a kernel. The CPU device implements it here; GPU
//! backends implement it in their crates. Conformance cases and benchmarks are
//! written against this trait, so the same case runs on every device.

use std::time::Duration;

use gpuio_core::Channel;

/// Why a kernel could not be compiled, launched or finished.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("kernel {kernel}: {finished} of {threads} threads finished within {waited:?}")]
    Timeout {
        kernel: String,
        threads: usize,
        finished: usize,
        waited: Duration,
    },
    #[error("kernel {kernel} failed: {message}")]
    Kernel { kernel: String, message: String },
    #[error("no kernel named {0}")]
    NoSuchKernel(String),
    #[error("{call} failed: {message}")]
    Driver { call: &'static str, message: String },
    #[error(transparent)]
    Memory(#[from] gpuio_core::MemoryError),
}

/// Memory a kernel can read and write, and the host can fill and read back.
pub trait DeviceBuffer: Send + Sync {
    fn device_addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies the buffer's contents into `out` (`out.len() <= len()`).
    fn download(&self, out: &mut [u8]) -> Result<(), DeviceError>;
}

/// A kernel in flight.
pub trait RunningKernel: Send {
    /// Waits up to `timeout`; returns the parameters as the kernel left them.
    fn join(self: Box<Self>, timeout: Duration) -> Result<Vec<u64>, DeviceError>;
}

/// A device that runs conformance and benchmark kernels (`kernels/conformance.h`).
pub trait Device: Send + Sync {
    /// In words, e.g. "CPU (2 cores)" or "NVIDIA H100 80GB HBM3 (sm_90)".
    fn name(&self) -> String;
    /// The memory provider channels for this device must use.
    fn provider(&self) -> std::sync::Arc<dyn gpuio_core::MemoryProvider>;
    /// A buffer holding `bytes` (zeroed when `bytes` is shorter than `len`).
    fn buffer(&self, len: usize, bytes: &[u8]) -> Result<Box<dyn DeviceBuffer>, DeviceError>;
    /// Starts `grid × block` threads of kernel `name` on `channel` with `params`.
    fn launch(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError>;
}
