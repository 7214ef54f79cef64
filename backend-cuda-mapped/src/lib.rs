//! gpuio-backend-cuda-mapped: NVIDIA GPUs through mapped pinned memory.
//!
//! * [`sys`] — libcuda and libnvrtc, loaded at run time and checked before any
//!   use (a machine without them gets a reason, never a panic), every call
//!   checked into a [`sys::CudaError`];
//! * [`memory`] — the CUDA memory provider: registered anonymous mappings
//!   (shared) and device memory (local);
//! * [`nvrtc`] — kernels that include `gpuio.h`, compiled for the GPU's own
//!   architecture and cached on disk;
//! * [`device`] — [`CudaDevice`], the `gpuio_device::Device` that launches them;
//! * [`backend`] — [`CudaBackend`]: probe and channel factory.

pub mod backend;
pub mod device;
pub mod memory;
pub mod nvrtc;
pub mod sys;

pub use backend::CudaBackend;
pub use device::CudaDevice;
pub use memory::CudaMemory;
