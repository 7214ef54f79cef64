//! gpuio-device: the device side of gpuio.
//!
//! * [`header`] — `include/gpuio.h` and its parts, embedded, for run-time compilers
//!   (NVRTC, hiprtc) that take headers by name;
//! * [`cpu`] — the CPU device: kernels written against `gpuio.h`, compiled as host
//!   C++ (the conformance kernels at build time, users' kernel files at run time by
//!   the system C++ compiler, cached), run on OS threads with a grid × block
//!   emulation.

pub mod cpu;
pub mod header;
pub mod kernels;
pub use gpuio_core::device::{
    CopyBandwidth, Device, DeviceBuffer, DeviceError, Module, RunningKernel,
};

/// Makes sure this crate's native library is linked into a test binary that only
/// calls into it through `extern "C"` declarations.
pub fn link() {
    cpu::runtime_linked();
}
