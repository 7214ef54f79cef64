//! The device role: who runs a kernel. The CPU device implements it in
//! `gpuio-device`, GPU backends in their crates. Users' kernels, conformance cases
//! and benchmarks are written against these traits, so the same kernel source runs
//! on every device.
//!
//! * [`Device::load`] compiles a kernel file (C++ that includes `gpuio.h`) for the
//!   device and loads it as a [`Module`];
//! * [`Module::launch`] starts `grid × block` threads of one of its kernels on a
//!   channel; every kernel has the signature
//!   `GPUIO_KERNEL(name)(const gpuio_channel *ch, gpuio_u64 *params)`;
//! * [`RunningKernel::join`] waits, with a deadline, and hands back the params as
//!   the kernel left them.
//!
//! A device also measures what benchmarks hold gpuio against, in the same run:
//! [`Device::copy_bandwidth`] (the ceiling of any transfer between host and device
//! memory: pinned `cuMemcpy` over PCIe on a GPU, `memcpy` on the CPU device) and
//! [`Device::native_printf`] (the device's own `printf`).

use std::sync::Arc;
use std::time::Duration;

use crate::channel::Channel;
use crate::memory::MemoryProvider;

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
    /// The kernel source did not compile; `log` is the compiler's own output.
    #[error("compiling {name} failed:\n{log}")]
    Compile { name: String, log: String },
    /// No compiler for this device could be run.
    #[error("{0}")]
    NoCompiler(String),
    #[error("{call} failed: {message}")]
    Driver { call: &'static str, message: String },
    #[error(transparent)]
    Memory(#[from] crate::memory::MemoryError),
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
    /// How the device runs this kernel, in words, where it has something to say
    /// (CUDA: which build of the file and its registers a thread).
    fn describe(&self) -> Option<String> {
        None
    }
}

/// Kernels compiled and loaded on one device.
pub trait Module: Send + Sync {
    /// Starts `grid × block` threads of `kernel` on `channel` with `params`
    /// (copied to memory the kernel reads and writes; `join` returns them).
    fn launch(
        &self,
        kernel: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError>;
}

/// Bytes per second of plain copies between host and device memory, the best of
/// a few tries each way: the ceiling any transfer between the two can reach.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyBandwidth {
    /// How it was copied, in words ("pinned cuMemcpyDtoH / cuMemcpyHtoD").
    pub how: &'static str,
    /// Bytes per copy.
    pub bytes: usize,
    /// Device memory to host memory, bytes per second.
    pub device_to_host: f64,
    /// Host memory to device memory, bytes per second.
    pub host_to_device: f64,
}

/// A device that runs kernels written against `gpuio.h`.
pub trait Device: Send + Sync {
    /// In words, e.g. "CPU (2 cores)" or "NVIDIA H100 80GB HBM3 (sm_90)".
    fn name(&self) -> String;
    /// The memory provider channels for this device must use.
    fn provider(&self) -> Arc<dyn MemoryProvider>;
    /// A launch shape `(grid, block)` that fills the device: every multiprocessor
    /// with a 1024-thread block on a GPU; a few threads per core on the CPU device.
    fn full_shape(&self) -> (u32, u32);
    /// Compiles `source`, a kernel file that includes `gpuio.h`, for this device
    /// and loads it. `name` names the source in diagnostics (a file name). Compiled
    /// images are cached by a hash of the source and the header.
    fn load(&self, name: &str, source: &str) -> Result<Arc<dyn Module>, DeviceError>;
    /// A buffer holding `bytes` (zeroed when `bytes` is shorter than `len`).
    fn buffer(&self, len: usize, bytes: &[u8]) -> Result<Box<dyn DeviceBuffer>, DeviceError>;
    /// Starts `grid × block` threads of the built-in conformance or benchmark kernel
    /// `name` (`kernels/conformance.h`, with or without its `gpuio_k_` prefix).
    fn launch(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError>;
    /// Copies `bytes` between host memory and device memory `tries` times each
    /// way (after one untimed copy each way) and keeps the fastest of each: the
    /// ceiling for I/O that crosses between them. GPUs copy between pinned host
    /// memory and device memory; the CPU device's equivalent is `memcpy`.
    fn copy_bandwidth(&self, bytes: usize, tries: u32) -> Result<CopyBandwidth, DeviceError>;
    /// What [`Device::native_printf`] prints with, in words ("CUDA device printf").
    fn native_printf_name(&self) -> &'static str;
    /// Makes room for `lines` lines of [`Device::native_printf`] in one call, on a
    /// device whose printf buffer is sized once, before its first printing kernel
    /// (CUDA's: lines that do not fit are dropped). A caller whose first call prints
    /// fewer lines than a later one says so first. Nothing to do by default.
    fn reserve_native_printf(&self, lines: u64) -> Result<(), DeviceError> {
        let _ = lines;
        Ok(())
    }
    /// Runs the built-in kernel `native_printf` (`grid × block` threads, `lines`
    /// lines each, the same lines as `printf_lines` prints with `gpuio_printf`), which
    /// prints with the device's own `printf` (CUDA's, HIP's, the C library's on the CPU
    /// device), and returns once its output has reached the C library's `stdout`
    /// stream: a GPU's printf buffer is flushed by a synchronisation, so that is
    /// included. The caller flushes `stdout` (`fflush`) to see every line on fd 1.
    /// `channel` is one the kernel receives and does not use.
    fn native_printf(
        &self,
        grid: u32,
        block: u32,
        lines: u64,
        channel: &Channel,
    ) -> Result<(), DeviceError> {
        let run = self.launch("native_printf", grid, block, channel, &[lines, 0, 0])?;
        run.join(Duration::from_secs(300)).map(drop)
    }
}
