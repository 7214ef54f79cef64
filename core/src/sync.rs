//! The atomics the host's lock-free protocol code is written against: std's, or
//! loom's under `--cfg loom`, so that the loom models (`.ci/loom`) run the very code
//! the forwarder runs, interleaving by interleaving.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
