//! One io-wq hash map for every forwarder of a channel.
//!
//! io_uring hands an op it cannot finish at once (a buffered write of 1 MiB, say)
//! to an io-wq worker of the task that submitted it, and runs the writes of one
//! regular file ("hashed" work, keyed by the inode) one at a time among the
//! workers that share a hash map. Since Linux 5.12 a task's io-wq is made when the
//! task first submits to a ring (or creates one), with that ring's hash map, and
//! kept for the task's life. Forwarder threads that first submit to their own
//! rings so get a hash map each, and one file's 1 MiB writes from sixteen
//! forwarders ran on 32 workers at once, queued on the file's lock: on an H200
//! (2026-11-28, `gpuio bench --only bulk`) 2.83 GB/s at 3.6 s of io-wq CPU per GB
//! (10.5 cores busy), where one forwarder alone wrote the file at 3.40 GB/s with
//! one worker at 0.29 s per GB.
//!
//! [`Anchor`] is a small ring that every forwarder thread of a group submits one
//! NOP to before anything else, so that the group's io-wqs take the anchor's hash
//! map: a file's writes then run one at a time within the group, and different
//! files' side by side ([`ForwardBuilder::wq_share`](super::ForwardBuilder::wq_share)
//! says how many forwarders make a group, and what each size was measured to do).
//! It saves host CPU and changes nothing else: on a kernel that makes io-wqs
//! another way nothing is shared, and a forwarder whose anchor could not be made
//! (or whose NOP fails) works as before.

use std::sync::Mutex;

use io_uring::{opcode, IoUring};

/// The ring every forwarder thread of one channel submits to first.
pub(crate) struct Anchor(Mutex<IoUring>);

impl std::fmt::Debug for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Anchor")
    }
}

impl Anchor {
    /// A ring of two entries; `None` (logged) if the kernel refuses one.
    pub fn new() -> Option<Self> {
        match IoUring::new(2) {
            Ok(ring) => Some(Self(Mutex::new(ring))),
            Err(e) => {
                tracing::debug!(error = %e, "no io-wq anchor ring; forwarders keep their own");
                None
            }
        }
    }

    /// Submits one NOP from the calling thread, which makes its io-wq (if it has
    /// none yet) with the anchor's hash map. Waits for nothing: the task's io_uring
    /// context is set up before the kernel looks at the SQE, and a NOP completes
    /// while it is submitted; its completion is taken here if it is there.
    pub fn enter(&self) {
        let Ok(mut ring) = self.0.lock() else {
            return; // a thread panicked holding it: sharing is only a saving
        };
        let nop = opcode::Nop::new().build().user_data(0);
        // SAFETY: a NOP names no buffer or file; the ring is held under the lock,
        // so this thread alone pushes to its SQ.
        if unsafe { ring.submission().push(&nop) }.is_err() {
            return; // full: an earlier NOP's entry was never consumed
        }
        if let Err(e) = ring.submit() {
            tracing::debug!(error = %e, "io-wq anchor NOP refused; this forwarder keeps its own");
        }
        ring.completion().for_each(drop);
    }
}
