//! The forward queue as the host sees it: `ForwardEntry[slots]` in shared memory,
//! each field read and written as an atomic at the offset `abi::ForwardEntry` gives
//! it (there is no second description of the entry's bytes), so that whatever the
//! device does concurrently, every host access is a defined atomic access.

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

/// Memory as atomics by byte offset, each field at its own width: the `u64` at `off`
/// is `u64s[off / 8]`, the `u32` at `off` is `u32s[off / 4]`. Over shared memory
/// ([`QueueView`]) both slices cover the same bytes, and no byte is ever accessed
/// at two widths: every access goes through [`Entry`], which gives each field of
/// `abi::ForwardEntry` the width abi.rs declares. Under loom the slices are the
/// model's own atomics, so the models run the very accessors the forwarder runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Words<'a> {
    u64s: &'a [AtomicU64],
    u32s: &'a [AtomicU32],
}

impl<'a> Words<'a> {
    /// The words of `u64s.len() * 8` bytes: a loom model's own atomics.
    #[cfg(all(test, loom))]
    pub fn new(u64s: &'a [AtomicU64], u32s: &'a [AtomicU32]) -> Self {
        assert_eq!(
            u64s.len() * 2,
            u32s.len(),
            "both widths cover the same bytes"
        );
        Self { u64s, u32s }
    }

    /// The `len` bytes at `ptr` as words.
    ///
    /// # Safety
    ///
    /// 1. `ptr` is aligned to 8 and `len` bytes from it are one live allocation, for `'a`.
    /// 2. For `'a`, nobody accesses those bytes other than atomically (the device's
    ///    plain stores are ordered by the stamp protocol, as the header says), and
    ///    no Rust reference other than atomics' points into them.
    #[cfg(not(loom))]
    pub unsafe fn over(ptr: *mut u8, len: usize) -> Self {
        // SAFETY: caller's 1: aligned, in bounds and live for `'a` (`len / 8` and
        // `len / 4` words stay inside `len` bytes); caller's 2: atomics are the only
        // access. AtomicU64 and AtomicU32 have the layout of u64 and u32, and any
        // bytes are valid for them.
        unsafe {
            Self {
                u64s: std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), len / 8),
                u32s: std::slice::from_raw_parts(ptr.cast::<AtomicU32>(), len / 4),
            }
        }
    }

    fn u64_at(&self, off: usize) -> &'a AtomicU64 {
        debug_assert!(off.is_multiple_of(8), "u64 at {off}");
        &self.u64s[off / 8]
    }

    fn u32_at(&self, off: usize) -> &'a AtomicU32 {
        debug_assert!(off.is_multiple_of(4), "u32 at {off}");
        &self.u32s[off / 4]
    }
}

/// Where each field of `abi::ForwardEntry` lies, from abi.rs's own definition.
mod at {
    use std::mem::offset_of;

    use crate::abi::{ForwardEntry, Request};

    const REQ: usize = offset_of!(ForwardEntry, req);
    pub const STAMP: usize = offset_of!(ForwardEntry, stamp);
    pub const OP: usize = REQ + offset_of!(Request, op);
    pub const ENDPOINT: usize = REQ + offset_of!(Request, endpoint);
    pub const LEN: usize = REQ + offset_of!(Request, len);
    pub const FLAGS: usize = REQ + offset_of!(Request, flags);
    pub const STAGING_OFF: usize = REQ + offset_of!(Request, staging_off);
    pub const OFFSET: usize = REQ + offset_of!(Request, offset);

    // The width each field is accessed at, as abi.rs types it: a field whose type
    // changes there fails to compile here.
    const _: fn(&ForwardEntry) -> [&u64; 2] = |e| [&e.stamp, &e.req.staging_off];
    const _: fn(&ForwardEntry) -> [&u32; 4] =
        |e| [&e.req.op, &e.req.endpoint, &e.req.len, &e.req.flags];
    const _: fn(&ForwardEntry) -> [&i64; 1] = |e| [&e.req.offset];
}

/// One `abi::ForwardEntry` in [`Words`]: each field read or written as an atomic
/// at its offset in abi.rs's definition (`at`). The orderings are the protocol's
/// (abi.rs module doc): the device writes the request with plain stores and
/// releases READY; the host acquires the stamp, reads the request and releases the
/// answer (DONE with the result in the same word).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<'a> {
    words: Words<'a>,
    /// Byte offset of the entry in `words`.
    base: usize,
}

impl<'a> Entry<'a> {
    /// Entry `i` of the `ForwardEntry[]` array that `words` holds.
    pub fn nth(words: Words<'a>, i: usize) -> Self {
        Self {
            words,
            base: i * size_of::<abi::ForwardEntry>(),
        }
    }

    fn u64(&self, field: usize) -> &'a AtomicU64 {
        self.words.u64_at(self.base + field)
    }

    fn u32(&self, field: usize) -> &'a AtomicU32 {
        self.words.u32_at(self.base + field)
    }

    /// The stamp, acquired: after READY this makes the request fields readable.
    pub fn stamp(&self) -> u64 {
        self.u64(at::STAMP).load(Ordering::Acquire)
    }

    /// Release-stores `stamp`: the host stamps FREE at init ([`QueueView::init`])
    /// and DONE in [`Self::answer`]; tests playing the device stamp READY and FREE.
    pub fn set_stamp(&self, stamp: u64) {
        self.u64(at::STAMP).store(stamp, Ordering::Release);
    }

    /// The request fields (call after acquiring READY).
    pub fn request(&self) -> abi::Request {
        abi::Request {
            op: self.u32(at::OP).load(Ordering::Relaxed),
            endpoint: self.u32(at::ENDPOINT).load(Ordering::Relaxed),
            len: self.u32(at::LEN).load(Ordering::Relaxed),
            flags: self.u32(at::FLAGS).load(Ordering::Relaxed),
            staging_off: self.u64(at::STAGING_OFF).load(Ordering::Relaxed),
            offset: self.u64(at::OFFSET).load(Ordering::Relaxed) as i64,
        }
    }

    /// Writes the request fields (what the device does; used by host-side tests).
    #[cfg(test)]
    pub fn set_request(&self, r: &abi::Request) {
        self.u32(at::OP).store(r.op, Ordering::Relaxed);
        self.u32(at::ENDPOINT).store(r.endpoint, Ordering::Relaxed);
        self.u32(at::LEN).store(r.len, Ordering::Relaxed);
        self.u32(at::FLAGS).store(r.flags, Ordering::Relaxed);
        self.u64(at::STAGING_OFF)
            .store(r.staging_off, Ordering::Relaxed);
        self.u64(at::OFFSET)
            .store(r.offset as u64, Ordering::Relaxed);
    }

    /// Answers position `pos`: the stamp becomes the answer, result and all
    /// ([`stamp::answer`]), released.
    pub fn answer(&self, pos: u64, result: i32) {
        self.set_stamp(stamp::answer(pos, result));
    }

    /// The result, if the entry holds the answer to `pos` (what the device's wait
    /// reads; used by host-side tests and models).
    #[cfg(test)]
    pub fn answered(&self, pos: u64) -> Option<i32> {
        stamp::answered(self.stamp(), pos)
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
        let need = slots as usize * size_of::<abi::ForwardEntry>();
        let align = std::mem::align_of::<abi::ForwardEntry>();
        if !slots.is_power_of_two()
            || r.len < need
            || !(r.host_ptr.as_ptr() as usize).is_multiple_of(align)
        {
            return Err(TransportError::Config(format!(
                "forward queue: {slots} entries need {need} bytes aligned to {align}, got {r:?}"
            )));
        }
        Ok(Self { mem, slots })
    }

    /// Where the device finds the entries.
    pub fn device_addr(&self) -> u64 {
        self.mem.region().device_addr
    }

    /// How many entries there are.
    pub fn slots(&self) -> usize {
        self.slots as usize
    }

    #[cfg(not(loom))]
    fn words(&self) -> Words<'_> {
        let r = self.mem.region();
        let len = self.slots() * size_of::<abi::ForwardEntry>();
        // SAFETY: 1. `new` checked that the region holds `len` bytes aligned to 64,
        // and it lives as long as `self.mem`, which the words cannot outlive; 2. the
        // host touches the entries only through `Entry`'s atomics, the device only
        // through atomics and plain stores ordered by the stamp protocol.
        unsafe { Words::over(r.host_ptr.as_ptr(), len) }
    }

    // Under loom the atomics carry the model checker's bookkeeping and cannot be laid
    // over memory: the models build their entries from loom atomics (`Words::new`).
    #[cfg(loom)]
    fn words(&self) -> Words<'_> {
        unreachable!("the loom models build their own entries")
    }

    /// Entry `i` (`i < slots`).
    pub fn entry_at(&self, i: usize) -> Entry<'_> {
        Entry::nth(self.words(), i)
    }

    /// The entry position `pos` uses.
    pub fn entry(&self, pos: u64) -> Entry<'_> {
        self.entry_at((pos & u64::from(self.slots - 1)) as usize)
    }

    /// Stamps entry `i` free for position `i` (before the descriptor is published).
    pub fn init(&self) {
        for i in 0..self.slots() {
            self.entry_at(i).set_stamp(stamp_of(i as u64, stamp::FREE));
        }
    }
}
