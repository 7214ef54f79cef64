//! gpuio-backend-hsa-svm: AMD GPUs through HSA fine-grained memory (probing only, for now).
