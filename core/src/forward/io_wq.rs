//! One io-wq hash map for each group of a channel's forwarders.
//!
//! io_uring hands an op it cannot finish at once (a buffered write of 1 MiB, say)
//! to an io-wq worker of the task that submitted it, and runs the writes of one
//! regular file ("hashed" work, keyed by the inode) one at a time among the
//! workers that share a hash map. Since Linux 5.12 a task's io-wq is made when the
//! task first uses io_uring (submits to a ring, creates one, or registers one in
//! its table of rings), with that ring's hash map, and kept for the task's life.
//! Forwarder threads that first submit to their own rings so get a hash map each,
//! and one file's 1 MiB writes from sixteen forwarders ran on 32 workers at once,
//! queued on the file's lock: on an H200 (2026-11-28, `gpuio bench --only bulk`)
//! 2.83 GB/s at 3.6 s of io-wq CPU per GB (10.5 cores busy), where one forwarder
//! alone wrote the file at 3.40 GB/s with one worker at 0.29 s per GB.
//!
//! [`Anchor`] is a ring, never submitted to, that every forwarder thread of a group
//! registers in its own table of rings before anything else (and unregisters
//! again), so that the group's io-wqs take the anchor's hash map: a file's writes
//! then run one at a time within the group, and different files' side by side
//! ([`ForwardBuilder::wq_share`](super::ForwardBuilder::wq_share) says how many
//! forwarders make a group, and what each size was measured to do). It saves host
//! CPU and changes nothing else: on a kernel that makes io-wqs another way (or
//! before 5.18, without ring registration) nothing is shared, and a forwarder whose
//! anchor could not be made works as before.
//!
//! The figures of `wq_share` were measured (H200, runs 114–117) with an anchor that
//! each thread entered by submitting a NOP to it under a lock. Registering the ring
//! reaches the same kernel call (`__io_uring_add_tctx_node`, which makes a task's
//! io_uring context with the ring's hash map) without sharing the ring's queues
//! between threads or taking a lock, so it replaced the NOP; it has not been
//! measured on a GPU yet.

use std::os::fd::{AsFd, OwnedFd};

use crate::uring::sys;

/// The ring every forwarder thread of one group registers first.
#[derive(Debug)]
pub(crate) struct Anchor(OwnedFd);

impl Anchor {
    /// A ring of two entries; `None` (logged) if the kernel refuses one.
    pub fn new() -> Option<Self> {
        let mut params = sys::io_uring_params::default();
        // SAFETY: neither ATTACH_WQ nor NO_MMAP: the kernel allocates the ring's
        // memory itself, and nothing here maps or submits to it.
        match unsafe { sys::setup(2, &mut params) } {
            Ok(fd) => Some(Self(fd)),
            Err(e) => {
                tracing::debug!(error = %e, "no io-wq anchor ring; forwarders keep their own");
                None
            }
        }
    }

    /// Registers the anchor in the calling thread's table of rings and unregisters
    /// it, which makes the thread's io-wq (if it has none yet) with the anchor's
    /// hash map. Nothing is shared between threads but the ring's fd.
    pub fn enter(&self) -> std::io::Result<()> {
        let index = sys::register_ring_fd(self.0.as_fd())?;
        sys::unregister_ring_fd(self.0.as_fd(), index)?;
        Ok(())
    }
}
