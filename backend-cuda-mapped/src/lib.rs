//! gpuio-backend-cuda-mapped: NVIDIA GPUs through mapped pinned memory, and the
//! forward transport (usable with any memory provider).

pub mod forward;
