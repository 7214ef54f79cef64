//! gpuio
