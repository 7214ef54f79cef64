//! gpuio: GPU kernels doing real I/O — files, stdout, sockets, pipes, host queues —
//! through one vendor-neutral submission channel, the backend chosen at run time.
//!
//! * [`backends`] — every backend in one `enum_dispatch` enum, in a fixed order;
//! * [`runtime`] — probe every backend, choose a (backend, transport) pair
//!   (`GPUIO_BACKEND` overrides), hand out its [`ChannelFactory`];
//! * [`cli`] — what the `gpuio` command's subcommands do.
//!
//! ```no_run
//! let factory = gpuio::Runtime::auto()?; // or Runtime::with("cpu/mailbox")
//! println!("running on {}", factory.pair());
//! let channel = factory.open(gpuio::core::ChannelConfig::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod backends;
pub mod cli;
pub mod runtime;

pub use gpuio_core as core;
pub use gpuio_device as device;

pub mod bench;
pub mod conformance;
pub mod run;
pub use runtime::{ChannelFactory, Pair, Runtime, RuntimeError, SelectError};
