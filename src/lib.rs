//! gpuio: GPU kernels doing real I/O — files, stdout, sockets, pipes, host queues —
//! through one vendor-neutral submission channel, the backend chosen at run time.
//!
//! A kernel is C++ that includes `gpuio.h` (its opening comment lists every call;
//! [`include_dir`] is where it lives). The host side:
//!
//! 1. [`Runtime::auto`] probes the machine and chooses a (backend, transport)
//!    pair ([`Runtime::with`] or `GPUIO_BACKEND=backend/transport` force one);
//! 2. [`ChannelFactory::load`] compiles a kernel file for that pair's device;
//! 3. [`ChannelFactory::open`] opens a [`Channel`] with the endpoints the kernel may
//!    use, by index ([`ChannelConfig::endpoint`], [`ChannelConfig::stdout`]);
//! 4. [`Module::launch`] starts `grid × block` threads, [`RunningKernel::join`]
//!    waits (with a deadline) and hands back the params;
//! 5. [`Channel::close`] drains everything in flight and reports
//!    (`submitted = completed + failed`).
//!
//! ```
//! use std::time::Duration;
//! use gpuio::{Access, ChannelConfig, Endpoint, Runtime};
//!
//! const KERNEL: &str = r#"
//! #include "gpuio.h"
//! GPUIO_KERNEL(squares)(const gpuio_channel *ch, gpuio_u64 *params) {
//!   gpuio_u64 t = gpuio_global_thread_id();
//!   char line[32];
//!   int n = gpuio_snprintf(line, sizeof line, "%3llu %5llu\n", t, t * t);
//!   gpuio_pwrite(ch, 0, line, n, (gpuio_i64)(t * n));
//!   gpuio_fetch_add_64(&params[0], 1);
//! }
//! "#;
//!
//! let factory = Runtime::with("cpu/mailbox")?; // the CPU device: runs anywhere
//! let module = factory.load("squares.cu", KERNEL)?;
//! let dir = tempfile::tempdir()?;
//! let file = std::fs::File::create(dir.path().join("squares.txt"))?;
//! let mut cfg = ChannelConfig::default();
//! cfg.endpoint(Endpoint::file("squares", &file, Access::WRITE)?); // endpoint 0
//! let channel = factory.open(cfg)?;
//! let params = module
//!     .launch("squares", 2, 8, &channel, &[0])?
//!     .join(Duration::from_secs(60))?;
//! let report = channel.close();
//! assert_eq!(params, [16]);
//! assert!(report.is_clean(), "{report}");
//! let text = std::fs::read_to_string(dir.path().join("squares.txt"))?;
//! assert_eq!(text.lines().nth(15), Some(" 15   225"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The modules below the re-exports are the `gpuio` command's own (probing
//! details, the conformance cases, the bench); a program needs only the items
//! at this crate's root.

#[doc(hidden)]
pub mod backends;
#[doc(hidden)]
pub mod bench;
pub mod calibration;
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod conformance;
#[doc(hidden)]
pub mod run;
pub mod runtime;

pub use gpuio_core as core;
pub use gpuio_device as device;

pub use gpuio_core::device::{DeviceError, Module, RunningKernel};
pub use gpuio_core::{Access, Channel, ChannelConfig, CloseReport, Endpoint, EndpointKind};
pub use gpuio_core::{
    LogConfig, LogReport, QueueConfig, QueueError, QueueReport, Receiver, RecvError, SendError,
    Sender,
};
pub use runtime::{ChannelFactory, Fallback, OpenError, Pair, Runtime, RuntimeError, SelectError};

/// The directory holding `gpuio.h` (and `gpuio/*.h`) in this source tree, for
/// build scripts and compilers outside gpuio (`-I`). Kernels loaded through
/// [`ChannelFactory::load`] need no include path: gpuio hands its compilers the
/// header itself.
pub fn include_dir() -> &'static std::path::Path {
    gpuio_device::header::include_dir()
}

// The README's Rust snippets compile as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
