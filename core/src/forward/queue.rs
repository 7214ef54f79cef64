//! The forward queue as the host sees it: `ForwardEntry[slots]` in shared memory,
//! each field read and written as an atomic at the offset `abi::ForwardEntry` gives
//! it (there is no second description of the entry's bytes), so that whatever the
//! device does concurrently, every host access is a defined atomic access.

use std::mem::size_of;
use std::sync::Arc;

use crate::abi::{self, forward_words, stamp};
use crate::memory::SharedMemory;
use crate::sync::{AtomicU64, Ordering};
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

/// Memory as 8-byte atomics by byte offset: the `u64` at `off` is `u64s[off / 8]`.
/// Over shared memory ([`QueueView`]) the slice covers the entries' bytes, every field
/// of `abi::ForwardEntry` a `u64`, reached through [`Entry`]. Under loom the slice
/// is the model's own atomics, so the models run the very accessors the forwarder
/// runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Words<'a> {
    u64s: &'a [AtomicU64],
}

impl<'a> Words<'a> {
    /// The words of `u64s.len() * 8` bytes: a loom model's own atomics.
    #[cfg(all(test, loom))]
    pub fn new(u64s: &'a [AtomicU64]) -> Self {
        Self { u64s }
    }

    /// The `len` bytes at `ptr` as words.
    ///
    /// # Safety
    ///
    /// 1. `ptr` is aligned to 8 and `len` bytes from it are one live allocation, for `'a`.
    /// 2. For `'a`, nobody accesses those bytes other than atomically (the device's
    ///    stores are 8-byte atomics, ordered by the stamp protocol, as the header
    ///    says), and no Rust reference other than atomics' points into them.
    #[cfg(not(loom))]
    pub unsafe fn over(ptr: *mut u8, len: usize) -> Self {
        // SAFETY: caller's 1: aligned, in bounds and live for `'a` (`len / 8` words
        // stay inside `len` bytes); caller's 2: atomics are the only access.
        // AtomicU64 has the layout of u64, and any bytes are valid for it.
        unsafe {
            Self {
                u64s: std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), len / 8),
            }
        }
    }

    fn u64_at(&self, off: usize) -> &'a AtomicU64 {
        debug_assert!(off.is_multiple_of(8), "u64 at {off}");
        &self.u64s[off / 8]
    }
}

/// Where each field of `abi::ForwardEntry` lies, from abi.rs's own definition.
mod at {
    use std::mem::offset_of;

    use crate::abi::ForwardEntry;

    pub const STAMP: usize = offset_of!(ForwardEntry, stamp);
    pub const WORDS: usize = offset_of!(ForwardEntry, words);

    // The width each field is accessed at, as abi.rs types it: a field whose type
    // changes there fails to compile here.
    const _: fn(&ForwardEntry) -> (&u64, &[u64; crate::abi::forward_words::COUNT]) =
        |e| (&e.stamp, &e.words);
}

/// One `abi::ForwardEntry` in [`Words`]: each field read or written as an atomic
/// at its offset in abi.rs's definition (`at`). The orderings are the protocol's
/// (abi.rs module doc): the device writes the request's words (relaxed, each marked
/// [`abi::forward_words::SET`]) and stamps READY (released, relaxed for a NOP); the
/// host acquires the stamp, takes the request once every word is there, and answers:
/// zeroes the words, then releases the answer (DONE with the result in the same
/// word).
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

    fn word(&self, k: usize) -> &'a AtomicU64 {
        self.u64(at::WORDS + 8 * k)
    }

    /// The stamp, acquired: a released READY makes what the device did to the
    /// request's staging chunk visible; the words are read for their marks.
    pub fn stamp(&self) -> u64 {
        self.u64(at::STAMP).load(Ordering::Acquire)
    }

    /// Release-stores `stamp`: the host stamps FREE at init ([`QueueView::init`])
    /// and DONE in [`Self::answer`]; tests playing the device stamp READY and FREE.
    pub fn set_stamp(&self, stamp: u64) {
        self.u64(at::STAMP).store(stamp, Ordering::Release);
    }

    /// The request, once every one of its words is there (call after reading READY);
    /// `None` while some are still on their way across PCIe.
    pub fn request(&self) -> Option<abi::Request> {
        let w: [u64; forward_words::COUNT] =
            std::array::from_fn(|k| self.word(k).load(Ordering::Relaxed));
        forward_words::decode(&w)
    }

    /// Writes the request's words (relaxed; used by host-side tests).
    #[cfg(test)]
    pub fn set_request(&self, r: &abi::Request) {
        for (k, w) in forward_words::encode(r).into_iter().enumerate() {
            self.word(k).store(w, Ordering::Relaxed);
        }
    }

    /// Word `k` of the request (tests that play a device whose words are late).
    #[cfg(all(test, not(loom)))]
    pub fn word_for_tests(&self, k: usize) -> &'a AtomicU64 {
        self.word(k)
    }

    /// Hands request `r` over for position `pos` as `gpuio_forward_submit` does: the
    /// words (relaxed), then READY, released - relaxed for a NOP (for the tests and
    /// the loom models playing the device).
    #[cfg(test)]
    pub fn publish(&self, pos: u64, r: &abi::Request) {
        self.set_request(r);
        let order = if r.op == abi::op::NOP {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        self.u64(at::STAMP)
            .store(stamp_of(pos, stamp::READY), order);
    }

    /// Answers position `pos`: the request's words zeroed (so that the next
    /// request's show as they arrive), then the stamp becomes the answer, result and
    /// all ([`stamp::answer`]), released.
    pub fn answer(&self, pos: u64, result: i32) {
        for k in 0..forward_words::COUNT {
            self.word(k).store(0, Ordering::Relaxed);
        }
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
