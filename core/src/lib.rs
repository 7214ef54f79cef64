//! gpuio-core: the pieces every backend shares.
//!
//! * [`abi`] — the bytes host and device share (mirrored by `gpuio.h`);
//! * [`memory`] — shared and device-local memory providers;
//! * [`endpoint`] — what a kernel may do I/O on, by index;
//! * [`request`] — the rulebook: which requests a kernel may make, and the typed
//!   request a valid one becomes;
//! * [`transport`] — the transport role and what it is built from;
//! * [`channel`] — a descriptor, its staging area and one transport;
//! * [`queue`] — host queues: messages between a kernel and the host program;
//! * [`device`] — the device role: load kernel sources, launch, join;
//! * [`uring`] — io_uring set-up, including the direct (device-driven) ring;
//! * [`direct`], [`forward`] — the io_uring transports' host halves (their device
//!   halves are `gpuio/direct.h` and `gpuio/forward.h`);
//! * [`backend`] — the backend role: probe, capabilities, channel factories.

pub mod abi;
pub mod backend;
pub mod channel;
pub mod device;
pub mod direct;
pub mod endpoint;
pub mod forward;
pub mod memory;
pub mod probe;
pub mod queue;
pub mod request;
pub mod runs;
mod sync;
pub mod transport;
pub mod uring;

/// The device side of the slot turns (`gpuio/api.h`) in Rust, for the loom models of
/// the forward and mailbox hand-offs. Exists only under `--cfg loom`.
#[cfg(loom)]
#[doc(hidden)]
pub mod turns_model;

pub use abi::TransportKind;
pub use channel::{Channel, ChannelConfig, ChannelError, CloseReport};
pub use endpoint::{Access, Endpoint, EndpointKind};
pub use memory::{
    HostMemory, KeepAlive, LocalMemory, MemoryError, MemoryProvider, SharedMemory, SharedRegion,
};
pub use queue::{
    Direction, LogConfig, LogReport, QueueConfig, QueueError, QueueReport, Receiver, RecvError,
    SendError, Sender,
};
pub use transport::{Counters, Transport, TransportBuilder, TransportError, TransportReport};
