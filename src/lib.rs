//! gpuio: GPU kernels doing real I/O — files, stdout, sockets, pipes, host queues —
//! through one vendor-neutral submission channel, the backend chosen at run time.

pub use gpuio_core as core;
pub use gpuio_device as device;

pub mod bench;
pub mod conformance;
