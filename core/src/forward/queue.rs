//! The forward queue as the host sees it: `ForwardEntry[slots]` in shared memory,
//! viewed as atomics so that whatever the device does concurrently, every host
//! access is a defined atomic access.

use std::mem::size_of;
use std::sync::Arc;

use crate::abi::{self, stamp};
use crate::memory::SharedMemory;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::transport::TransportError;

/// `stamp` for position `pos` in state `state` (`stamp::{FREE, READY, DONE}`).
pub(crate) fn stamp_of(pos: u64, state: u64) -> u64 {
    (pos << stamp::SHIFT) | state
}

/// The position an entry holds READY and not yet taken, given its acquired `stamp`,
/// the last position taken from it (`last`) and whether that one is still unanswered
/// (`open`): a READY stamp for the position in the ring is not new.
pub(crate) fn untaken(stamp: u64, last: Option<u64>, open: bool) -> Option<u64> {
    let pos = stamp >> stamp::SHIFT;
    let in_flight = open && last == Some(pos);
    (stamp & 3 == stamp::READY && !in_flight).then_some(pos)
}

/// What a READY stamp for `pos` on entry `i` of `slots` is, given the last position
/// taken from the entry (`last`) and whether that one is still unanswered (`open`).
/// gpuio's device code stamps READY only for a position of this entry
/// (`≡ i mod slots`), only once the entry's previous request was answered (a slot
/// is taken again only after its DONE), and for positions that only grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// A request, as the protocol says.
    Request,
    /// A request for a position below one already taken from the entry: only a
    /// stamp the kernel wrote itself (that later position, or this one replayed)
    /// puts it there. It is served, because the host cannot tell which of the two
    /// was the scribble, and a kernel's honest requests must not wait forever
    /// behind a position it stamped a thousand laps ahead; it is reported.
    Behind,
    /// Not a request: ignored and reported.
    Bad(BadStamp),
}

/// Why a READY stamp is not a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadStamp {
    /// A position this entry cannot hold (`≢ i mod slots`), or the one last taken
    /// from it again after it was answered (a replay).
    Foreign,
    /// A new position while the entry's request is still unanswered: nobody held
    /// the entry to stamp it.
    Unanswered,
}

pub(crate) fn classify(i: usize, slots: usize, pos: u64, last: Option<u64>, open: bool) -> Stamp {
    if pos % slots as u64 != i as u64 || last == Some(pos) {
        Stamp::Bad(BadStamp::Foreign)
    } else if open {
        Stamp::Bad(BadStamp::Unanswered)
    } else if last.is_some_and(|t| pos < t) {
        Stamp::Behind
    } else {
        Stamp::Request
    }
}

/// One `abi::ForwardEntry`, field for field, as atomics.
#[repr(C, align(64))]
#[derive(Debug)]
pub(crate) struct EntryView {
    /// `pos << 2 | FREE/READY/DONE`: the device writes FREE→READY and DONE→FREE,
    /// the host READY→DONE (release); each side acquires the other's.
    pub stamp: AtomicU64,
    pub op: AtomicU32,
    pub endpoint: AtomicU32,
    pub len: AtomicU32,
    pub flags: AtomicU32,
    pub staging_off: AtomicU64,
    /// An `i64` (`Request::offset`).
    pub offset: AtomicU64,
    /// An `i64`: written by the host before it releases DONE.
    pub result: AtomicU64,
}

// Under loom the atomics carry the model checker's bookkeeping: the view is then built
// from values (`EntryView::free`), never laid over shared memory.
#[cfg(not(loom))]
const _: () = {
    use std::mem::offset_of;
    type E = abi::ForwardEntry;
    type R = abi::Request;
    let req = offset_of!(E, req);
    assert!(size_of::<EntryView>() == size_of::<E>());
    assert!(std::mem::align_of::<EntryView>() == std::mem::align_of::<E>());
    assert!(offset_of!(EntryView, stamp) == offset_of!(E, stamp));
    assert!(offset_of!(EntryView, op) == req + offset_of!(R, op));
    assert!(offset_of!(EntryView, endpoint) == req + offset_of!(R, endpoint));
    assert!(offset_of!(EntryView, len) == req + offset_of!(R, len));
    assert!(offset_of!(EntryView, flags) == req + offset_of!(R, flags));
    assert!(offset_of!(EntryView, staging_off) == req + offset_of!(R, staging_off));
    assert!(offset_of!(EntryView, offset) == req + offset_of!(R, offset));
    assert!(offset_of!(EntryView, result) == offset_of!(E, result));
};

impl EntryView {
    /// An entry on its own, free for position `pos` (the loom models' queue).
    #[cfg(all(test, loom))]
    pub fn free(pos: u64) -> Self {
        Self {
            stamp: AtomicU64::new(stamp_of(pos, stamp::FREE)),
            op: AtomicU32::new(0),
            endpoint: AtomicU32::new(0),
            len: AtomicU32::new(0),
            flags: AtomicU32::new(0),
            staging_off: AtomicU64::new(0),
            offset: AtomicU64::new(0),
            result: AtomicU64::new(0),
        }
    }

    /// The stamp, acquired: after READY this makes the request fields readable.
    pub fn stamp(&self) -> u64 {
        self.stamp.load(Ordering::Acquire)
    }

    /// The request fields (call after acquiring READY).
    pub fn request(&self) -> abi::Request {
        abi::Request {
            op: self.op.load(Ordering::Relaxed),
            endpoint: self.endpoint.load(Ordering::Relaxed),
            len: self.len.load(Ordering::Relaxed),
            flags: self.flags.load(Ordering::Relaxed),
            staging_off: self.staging_off.load(Ordering::Relaxed),
            offset: self.offset.load(Ordering::Relaxed) as i64,
        }
    }

    /// Writes the request fields (what the device does; used by host-side tests).
    #[cfg(test)]
    pub fn set_request(&self, r: &abi::Request) {
        self.op.store(r.op, Ordering::Relaxed);
        self.endpoint.store(r.endpoint, Ordering::Relaxed);
        self.len.store(r.len, Ordering::Relaxed);
        self.flags.store(r.flags, Ordering::Relaxed);
        self.staging_off.store(r.staging_off, Ordering::Relaxed);
        self.offset.store(r.offset as u64, Ordering::Relaxed);
    }

    /// Answers position `pos`: the result, then DONE (release).
    pub fn answer(&self, pos: u64, result: i64) {
        self.result.store(result as u64, Ordering::Relaxed);
        self.stamp
            .store(stamp_of(pos, stamp::DONE), Ordering::Release);
    }

    /// The result (call after acquiring DONE; used by host-side tests).
    #[cfg(test)]
    pub fn result(&self) -> i64 {
        self.result.load(Ordering::Relaxed) as i64
    }
}

/// The shared `ForwardEntry[slots]`, holding its memory alive.
#[derive(Clone, Debug)]
pub(crate) struct QueueView {
    mem: Arc<dyn SharedMemory>,
    slots: u32,
}

impl QueueView {
    /// Views `mem` as `slots` entries; refuses memory too small or misaligned.
    pub fn new(mem: Arc<dyn SharedMemory>, slots: u32) -> Result<Self, TransportError> {
        let r = mem.region();
        let need = slots as usize * size_of::<EntryView>();
        if !slots.is_power_of_two()
            || r.len < need
            || !(r.host_ptr.as_ptr() as usize).is_multiple_of(std::mem::align_of::<EntryView>())
        {
            return Err(TransportError::Config(format!(
                "forward queue: {slots} entries need {need} bytes aligned to 64, got {r:?}"
            )));
        }
        Ok(Self { mem, slots })
    }

    /// Where the device finds the entries.
    pub fn device_addr(&self) -> u64 {
        self.mem.region().device_addr
    }

    pub fn entries(&self) -> &[EntryView] {
        let r = self.mem.region();
        // SAFETY: `new` checked that the region holds `slots` entries and is aligned
        // for them; `EntryView` is `ForwardEntry`'s layout (asserted above) made of
        // atomics, which any bytes are valid for; the region lives as long as
        // `self.mem`, which the returned borrow cannot outlive; the device touches it
        // only through atomics and plain stores ordered by the stamp protocol.
        unsafe {
            std::slice::from_raw_parts(r.host_ptr.as_ptr().cast::<EntryView>(), self.slots as usize)
        }
    }

    /// The entry position `pos` uses.
    pub fn entry(&self, pos: u64) -> &EntryView {
        &self.entries()[(pos & u64::from(self.slots - 1)) as usize]
    }

    /// Stamps entry `i` free for position `i` (before the descriptor is published).
    pub fn init(&self) {
        for (i, e) in self.entries().iter().enumerate() {
            e.stamp
                .store(stamp_of(i as u64, stamp::FREE), Ordering::Release);
        }
    }
}
