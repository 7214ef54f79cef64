//! The host's end of a queue to the host: takes the kernel's messages in order,
//! ring by ring, checking every header it reads.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::poller::{self, WaitFor};
use super::{QueueShared, HEADER};
use crate::abi::cell;
use crate::memory::MemoryError;

/// Why [`Receiver`] gave no message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// No message is there now (`try_recv`).
    #[error("no message is waiting")]
    Empty,
    /// The channel closed and every message published before that was taken: the
    /// end of the stream.
    #[error("the channel closed and every message was received")]
    Closed,
    /// None came within the wait.
    #[error("no message came within {0:?}")]
    Timeout(Duration),
    /// The kernel wrote something into the queue that the protocol does not allow;
    /// the ring it was found on is no longer read.
    #[error("protocol violation: {0}")]
    Protocol(String),
}

/// Receives the messages a kernel sends with `gpuio_send` on a queue to the host.
///
/// One thread's messages come in the order it sent them; messages of different
/// threads interleave. Besides the blocking, non-blocking and timed calls it is an
/// [`Iterator`] (through [`Receiver::iter`]) and an async
/// [`Stream`](futures_core::Stream) that needs no thread of its own: one shared
/// poller thread watches the queues that async tasks wait on and sleeps while none
/// do. The stream ends once the channel closes and every message sent before that
/// was taken, so close the channel after the kernel finishes.
pub struct Receiver {
    q: Arc<QueueShared>,
    /// The rings this receiver reads (all of them, unless it was split).
    rings: Vec<u32>,
    /// Positions taken so far, per ring read.
    heads: Vec<u64>,
    /// Cells left in the group being read, per ring.
    group_left: Vec<u32>,
    /// Rings found scribbled: no longer read.
    broken: Vec<bool>,
    /// The cells of a run being taken ([`take_run`]), copied out in one go.
    scratch: Vec<u8>,
    next: usize,
    ended: bool,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("queue", &self.q)
            .field("received", &self.q.taken_to_host())
            .finish()
    }
}

impl Receiver {
    pub(crate) fn new(q: Arc<QueueShared>) -> Self {
        let rings = (0..q.rings).collect();
        Self::of_rings(q, rings)
    }

    fn of_rings(q: Arc<QueueShared>, rings: Vec<u32>) -> Self {
        let n = rings.len();
        Self {
            q,
            rings,
            heads: vec![0; n],
            group_left: vec![0; n],
            broken: vec![false; n],
            scratch: Vec::new(),
            next: 0,
            ended: false,
        }
    }

    /// The queue this receiver reads.
    pub(crate) fn queue(&self) -> &Arc<QueueShared> {
        &self.q
    }

    /// The rings this receiver reads ([`Receiver::split`]).
    pub(crate) fn rings(&self) -> &[u32] {
        &self.rings
    }

    /// Splits the queue's rings among `n` receivers (fewer if the queue has fewer
    /// rings), to drain them from several threads: one thread's messages all travel
    /// on one ring, so each receiver still sees them in order. Call it before
    /// receiving anything.
    pub fn split(self, n: usize) -> Vec<Receiver> {
        let n = n.clamp(1, self.rings.len());
        (0..n)
            .map(|k| {
                let rings = self.rings.iter().copied().skip(k).step_by(n).collect();
                Receiver::of_rings(self.q.clone(), rings)
            })
            .collect()
    }

    /// Takes up to `max` messages that are there now, handing each to `f` (the
    /// slice is a copy, valid for the call), and returns how many it took: the
    /// fastest way to drain, with no allocation per message: each message is handed
    /// out from the one copy of its group's cells (a thread on the development
    /// machine took 64-byte messages from cache-hot cells at 9.8 ns each this way,
    /// at 23.8 ns when they were gathered into a batch first and handed out from
    /// there).
    pub fn drain(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> Result<usize, RecvError> {
        let mut n = 0;
        while n < max {
            // In batches of about 64 KiB, each ring's head released once a batch.
            match self.take_published(64 << 10, max - n, &mut f) {
                Ok(0) => break,
                Ok(got) => n += got,
                Err(e) if n == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(n)
    }

    /// The queue's name, as registered.
    pub fn name(&self) -> &str {
        &self.q.name
    }

    /// Longest message the queue carries.
    pub fn max_message(&self) -> usize {
        self.q.max_message as usize
    }

    /// Messages taken so far from the rings this receiver reads.
    pub fn received(&self) -> u64 {
        self.heads.iter().sum()
    }

    /// The next message, if one is there now.
    pub fn try_recv(&mut self) -> Result<Vec<u8>, RecvError> {
        let mut buf = Vec::new();
        self.try_recv_into(&mut buf).map(|()| buf)
    }

    /// [`Receiver::try_recv`] into `buf` (cleared first), reusing its allocation.
    pub fn try_recv_into(&mut self, buf: &mut Vec<u8>) -> Result<(), RecvError> {
        buf.clear();
        self.try_recv_append(buf)
    }

    /// [`Receiver::try_recv`], appending the message's bytes to `buf`.
    pub(crate) fn try_recv_append(&mut self, buf: &mut Vec<u8>) -> Result<(), RecvError> {
        if self.ended {
            return Err(RecvError::Closed);
        }
        // `closing` before the rings: what the kernel published before the host
        // began closing is then seen below.
        let closing = self.q.channel_closing();
        let rings = self.rings.len();
        for i in 0..rings {
            let k = (self.next + i) % rings;
            if self.broken[k] {
                continue;
            }
            match self.take(k, buf).and_then(|taken| {
                if taken {
                    self.publish_head(k)?;
                }
                Ok(taken)
            }) {
                Ok(true) => {
                    // Finish a group before moving on; then the next ring.
                    self.next = if self.group_left[k] > 0 {
                        k
                    } else {
                        (k + 1) % rings
                    };
                    return Ok(());
                }
                Ok(false) => {}
                Err(what) => return Err(self.break_ring(k, what)),
            }
        }
        if closing {
            self.ended = true;
            return Err(RecvError::Closed);
        }
        Err(RecvError::Empty)
    }

    /// Takes ring `ri`'s next message, appended to `buf`: `Ok(true)`, `Ok(false)` when
    /// none is published, or what is wrong with the ring.
    fn take(&mut self, ri: usize, buf: &mut Vec<u8>) -> Result<bool, String> {
        take(
            &*self.q,
            self.rings[ri],
            &mut self.heads[ri],
            &mut self.group_left[ri],
            buf,
        )
    }

    /// Releases ring `ri`'s head to the kernel: the cells before it are free again.
    fn publish_head(&self, ri: usize) -> Result<(), String> {
        publish_head(&*self.q, self.rings[ri], self.heads[ri])
    }

    /// A ring found scribbled: no longer read, and the violation noted.
    fn break_ring(&mut self, k: usize, what: String) -> RecvError {
        self.broken[k] = true;
        let what = format!("queue {:?}, ring {}: {what}", self.q.name, self.rings[k]);
        self.q.note_violation(what.clone());
        RecvError::Protocol(what)
    }

    /// Takes the messages published now on this receiver's rings, ring after ring,
    /// until `out` holds at least `max_bytes` or `max` were taken: appends their bytes to `out` and where
    /// each ends to `ends`, releasing each ring's head once for all it took (instead
    /// of once per message, as [`Receiver::try_recv`] does). Returns how many it
    /// took; `Closed` once the channel is closing and nothing is left.
    pub(crate) fn take_available(
        &mut self,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
        max_bytes: usize,
        max: usize,
    ) -> Result<usize, RecvError> {
        let budget = max_bytes.saturating_sub(out.len());
        self.take_published(budget, max, &mut |m: &[u8]| {
            out.extend_from_slice(m);
            ends.push(out.len());
        })
    }

    /// [`Receiver::take_available`], handing each message to `sink` (the slice is
    /// valid for the call) until about `max_bytes` or `max` messages were handed out.
    fn take_published(
        &mut self,
        max_bytes: usize,
        max: usize,
        sink: &mut impl FnMut(&[u8]),
    ) -> Result<usize, RecvError> {
        if self.ended {
            return Err(RecvError::Closed);
        }
        // `closing` before the rings, as in try_recv_append.
        let closing = self.q.channel_closing();
        let rings = self.rings.len();
        let mut n = 0;
        // Bytes handed out so far, all rings.
        let bytes = std::cell::Cell::new(0usize);
        let mut counted = |m: &[u8]| {
            bytes.set(bytes.get() + m.len());
            sink(m);
        };
        for i in 0..rings {
            let k = (self.next + i) % rings;
            if self.broken[k] {
                continue;
            }
            let before = self.heads[k];
            let mut failed = None;
            let per = (self.q.max_message as usize).max(1);
            while bytes.get() < max_bytes && n < max {
                // Whole runs of a group, up to about max_bytes.
                let room = (max - n).min((max_bytes - bytes.get()).div_ceil(per));
                match take_run(
                    &*self.q,
                    self.rings[k],
                    &mut self.heads[k],
                    &mut self.group_left[k],
                    &mut self.scratch,
                    &mut counted,
                    room,
                ) {
                    Ok(0) => break,
                    Ok(got) => n += got,
                    Err(what) => {
                        failed = Some(what);
                        break;
                    }
                }
            }
            if self.heads[k] != before {
                if let Err(what) = self.publish_head(k) {
                    failed.get_or_insert(what);
                }
            }
            if let Some(what) = failed {
                let e = self.break_ring(k, what);
                if n == 0 {
                    return Err(e);
                }
                return Ok(n);
            }
            if bytes.get() >= max_bytes || n >= max {
                // Start from this ring next time (it may hold more).
                self.next = k;
                return Ok(n);
            }
        }
        if n == 0 && closing {
            self.ended = true;
            return Err(RecvError::Closed);
        }
        Ok(n)
    }

    /// The next message, waiting at most the queue's timeout
    /// ([`QueueConfig::timeout`](super::QueueConfig::timeout)).
    pub fn recv(&mut self) -> Result<Vec<u8>, RecvError> {
        self.recv_timeout(self.q.timeout)
    }

    /// The next message, waiting at most `wait`.
    pub fn recv_timeout(&mut self, wait: Duration) -> Result<Vec<u8>, RecvError> {
        let mut buf = Vec::new();
        self.recv_into(&mut buf, wait).map(|()| buf)
    }

    /// [`Receiver::recv_timeout`] into `buf`, reusing its allocation.
    pub fn recv_into(&mut self, buf: &mut Vec<u8>, wait: Duration) -> Result<(), RecvError> {
        let deadline = Instant::now() + wait;
        let mut backoff = Backoff::default();
        loop {
            match self.try_recv_into(buf) {
                Err(RecvError::Empty) => {}
                other => return other,
            }
            if Instant::now() >= deadline {
                return Err(RecvError::Timeout(wait));
            }
            backoff.pause(deadline);
        }
    }

    /// The messages as they come, each waited for at most the queue's timeout; ends
    /// at the end of the stream, or after yielding the first error.
    pub fn iter(&mut self) -> Iter<'_> {
        Iter {
            rx: self,
            done: false,
        }
    }

    fn has_message(q: &QueueShared) -> bool {
        (0..q.rings).any(|r| ring_has_message(q, r)) || q.channel_closing()
    }
}

/// Whether ring `r` of `q` holds a message its reader has not taken: the cell at the
/// head its reader published is ready (or a word cannot be read, which the reader
/// will report). One look, no waiting; any thread may ask.
pub(crate) fn ring_has_message(q: &QueueShared, r: u32) -> bool {
    let Ok(head) = q.head_word(r).map(|h| h.load(Ordering::Acquire)) else {
        return true;
    };
    q.stamp(r, head)
        .map(|w| cell::holds(w.load(Ordering::Acquire), head))
        .unwrap_or(true)
}

/// A 64-bit word of a ring the host loads and stores atomically (a cell's stamp,
/// `head`):
/// std's atomic over shared memory, loom's in the model (`loom_model.rs`).
pub(crate) trait Word {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
}

impl Word for AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order)
    }
}

#[cfg(all(test, loom))]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        loom::sync::atomic::AtomicU64::load(self, order)
    }
    fn store(&self, value: u64, order: Ordering) {
        loom::sync::atomic::AtomicU64::store(self, value, order)
    }
}

/// The words of a queue to the host that [`take`] and [`publish_head`] read and write:
/// the queue's shared memory ([`QueueShared`]), or a loom model's own atomics and
/// cells, so that the model runs the very code a [`Receiver`] runs.
pub(crate) trait Cells {
    type Word: Word;
    /// Cells per ring.
    fn cells(&self) -> u32;
    fn max_message(&self) -> u32;
    /// Position `pos`'s `CellHeader::stamp` on ring `ring` ([`cell`]: which
    /// position the cell holds, the message's length, the group's count).
    fn stamp(&self, ring: u32, pos: u64) -> Result<&Self::Word, MemoryError>;
    /// The first `out.len()` bytes of its message.
    fn payload(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError>;
    /// Bytes per cell: its header (the stamp: 8 bytes), then room for the longest
    /// message.
    fn cell_size(&self) -> usize;
    /// Copies `out.len() / cell_size()` whole cells from position `pos` on (the caller
    /// keeps them within one lap of the ring), headers included, as they are now.
    fn copy_cells(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError>;
    /// Ring `ring`'s `QueueControl::head`.
    fn head_word(&self, ring: u32) -> Result<&Self::Word, MemoryError>;
}

impl Cells for QueueShared {
    type Word = AtomicU64;
    fn cells(&self) -> u32 {
        self.cells
    }
    fn max_message(&self) -> u32 {
        self.max_message
    }
    fn stamp(&self, ring: u32, pos: u64) -> Result<&AtomicU64, MemoryError> {
        QueueShared::stamp(self, ring, pos)
    }
    fn payload(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        QueueShared::payload(self, ring, pos, out)
    }
    fn cell_size(&self) -> usize {
        self.cell_size as usize
    }
    fn copy_cells(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        QueueShared::copy_cells(self, ring, pos, out)
    }
    fn head_word(&self, ring: u32) -> Result<&AtomicU64, MemoryError> {
        QueueShared::head_word(self, ring)
    }
}

/// Takes ring `r`'s next message at `*head`, appended to `buf`: `Ok(true)` (and
/// `*head` moved past it), `Ok(false)` when none is published, or what is wrong with
/// the ring. `*group_left`: cells left in the group being read.
pub(crate) fn take<C: Cells + ?Sized>(
    q: &C,
    r: u32,
    head: &mut u64,
    group_left: &mut u32,
    buf: &mut Vec<u8>,
) -> Result<bool, String> {
    let mem = |e: MemoryError| format!("reading the ring: {e}");
    let pos = *head;
    let cells = u64::from(q.cells());
    let word = q.stamp(r, pos).map_err(mem)?;
    let first = *group_left == 0;
    let stamp = if first {
        let v = word.load(Ordering::Acquire);
        if !cell::holds(v, pos) {
            // Not yet published: the cell still holds the previous lap's message,
            // or was never written.
            let previous_lap = pos.checked_sub(cells);
            if previous_lap.map_or(v == 0, |p| cell::holds(v, p)) {
                return Ok(false);
            }
            return Err(format!(
                "the cell for message {pos} is stamped for message {} (mod 2^32; \
                 expected {pos} once published, {} before)",
                cell::position(v),
                previous_lap.map_or("a cell never written".to_string(), |p| p.to_string())
            ));
        }
        v
    } else {
        // A later cell of a published group: its sender stamped it before the
        // group's first cell was released. Allow a moment for the stamp to land.
        let until = Instant::now() + Duration::from_millis(10);
        loop {
            let v = word.load(Ordering::Acquire);
            if cell::holds(v, pos) {
                break v;
            }
            if Instant::now() > until {
                return Err(format!(
                    "message {pos} belongs to a published group but its cell is stamped \
                     for message {} (mod 2^32)",
                    cell::position(v)
                ));
            }
            std::hint::spin_loop();
        }
    };
    let (len, count) = (cell::len(stamp), cell::count(stamp));
    if first {
        if count == 0 || u64::from(count) > cells {
            return Err(format!(
                "message {pos} heads a group of {count} messages; a ring holds {cells}"
            ));
        }
        *group_left = count;
    }
    if len > q.max_message() {
        return Err(format!(
            "message {pos} claims {len} bytes; the queue's maximum is {}",
            q.max_message()
        ));
    }
    let at = buf.len();
    buf.resize(at + len as usize, 0);
    q.payload(r, pos, &mut buf[at..]).map_err(mem)?;
    *group_left -= 1;
    *head = pos + 1;
    Ok(true)
}

/// Takes up to `max` messages of ring `r` from `*head` on, handing each to `sink`
/// (the slice is valid for the call); returns how many (0: none is published).
///
/// The rest of a group after its first message comes in one copy of its cells
/// (`scratch`): the group's first stamp was acquired ([`take`]) and its sender wrote
/// every cell of the group before releasing it, so the copy holds them. Each copied
/// cell is still checked (its stamp's position and length) before its message is
/// believed; a cell whose stamp is not there yet ends the run, and the next call reads it alone
/// ([`take`], which allows its stamp a moment to land). One copy instead of a header,
/// a length and a payload read per message: a host thread read 64-byte messages at
/// 22 M msg/s one at a time from cache-hot cells, and at about 9 M msg/s per thread
/// from cells the H100 had written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn take_run<C: Cells + ?Sized>(
    q: &C,
    r: u32,
    head: &mut u64,
    group_left: &mut u32,
    scratch: &mut Vec<u8>,
    sink: &mut impl FnMut(&[u8]),
    max: usize,
) -> Result<usize, String> {
    if max == 0 {
        return Ok(0);
    }
    let mut got = 0;
    // A group's first message, or a cell the last run stopped at: one at a time.
    if *group_left == 0 || !stamped(q, r, *head)? {
        scratch.clear();
        if !take(q, r, head, group_left, scratch)? {
            return Ok(0);
        }
        sink(scratch);
        got = 1;
    }
    let cells = u64::from(q.cells());
    let size = q.cell_size();
    let pos = *head;
    let lap_left = cells - pos % cells;
    let n = u64::from(*group_left).min(lap_left).min((max - got) as u64) as usize;
    if n == 0 {
        return Ok(got);
    }
    scratch.resize(n * size, 0);
    if let Err(e) = q.copy_cells(r, pos, scratch) {
        // The message taken above is handed out; the next run meets the error.
        return if got > 0 {
            Ok(got)
        } else {
            Err(format!("reading the ring: {e}"))
        };
    }
    let word = |cell: &[u8], at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&cell[at..at + 8]);
        u64::from_ne_bytes(b)
    };
    for (i, bytes) in scratch.chunks_exact(size).enumerate() {
        let at = pos + i as u64;
        let stamp = word(bytes, 0);
        if !cell::holds(stamp, at) {
            break; // not stamped yet in the copy: the next run reads it alone
        }
        let len = cell::len(stamp);
        if len > q.max_message() && got > 0 {
            break; // hand out what came before it; the next run reports it
        }
        if len > q.max_message() {
            return Err(format!(
                "message {at} claims {len} bytes; the queue's maximum is {}",
                q.max_message()
            ));
        }
        sink(&bytes[HEADER..HEADER + len as usize]);
        *head = at + 1;
        *group_left -= 1;
        got += 1;
    }
    Ok(got)
}

/// Whether the cell at `pos` of ring `r` carries its stamp, read relaxed: within a
/// group whose first stamp was acquired, that is enough.
fn stamped<C: Cells + ?Sized>(q: &C, r: u32, pos: u64) -> Result<bool, String> {
    let word = q
        .stamp(r, pos)
        .map_err(|e| format!("reading the ring: {e}"))?;
    Ok(cell::holds(word.load(Ordering::Relaxed), pos))
}

/// Releases ring `r`'s `head` to the kernel: the cells before it are free again.
pub(crate) fn publish_head<C: Cells + ?Sized>(q: &C, r: u32, head: u64) -> Result<(), String> {
    q.head_word(r)
        .map_err(|e| format!("reading the ring: {e}"))?
        .store(head, Ordering::Release);
    Ok(())
}

/// Spins for the first 100 µs of a wait (a message usually comes quickly), then
/// sleeps, from 10 µs doubling to 1 ms.
#[derive(Default)]
pub(crate) struct Backoff {
    started: Option<Instant>,
    sleep: Duration,
}

impl Backoff {
    pub(crate) fn pause(&mut self, deadline: Instant) {
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        if now - started < Duration::from_micros(100) {
            std::hint::spin_loop();
            return;
        }
        self.sleep = (self.sleep * 2).clamp(Duration::from_micros(10), Duration::from_millis(1));
        std::thread::sleep(self.sleep.min(deadline.saturating_duration_since(now)));
    }
}

/// [`Receiver::iter`].
pub struct Iter<'a> {
    rx: &'a mut Receiver,
    done: bool,
}

impl Iterator for Iter<'_> {
    type Item = Result<Vec<u8>, RecvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.rx.recv() {
            Ok(m) => Some(Ok(m)),
            Err(RecvError::Closed) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl futures_core::Stream for Receiver {
    type Item = Result<Vec<u8>, RecvError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        for attempt in 0..2 {
            match this.try_recv() {
                Ok(m) => return Poll::Ready(Some(Ok(m))),
                Err(RecvError::Closed) => return Poll::Ready(None),
                Err(RecvError::Empty) if attempt == 0 => {
                    // Register, then look once more: a message published between
                    // the first look and the registration is not missed.
                    poller::wait(
                        this.q.clone(),
                        WaitFor::Message(Receiver::has_message),
                        cx.waker().clone(),
                    );
                }
                Err(RecvError::Empty) => {}
                Err(e) => return Poll::Ready(Some(Err(e))),
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    //! The drain in runs ([`take_run`]) over a real ring in host memory, its cells
    //! written by hand as a kernel (honest or not) would write them.
    use super::*;
    use crate::memory::{HostMemory, MemoryProvider, SharedMemory};
    use crate::queue::{Direction, QueueConfig, QueueShared};

    /// A queue to the host of one ring of `cells` cells, 16-byte messages at most.
    fn queue(cells: u32) -> Arc<QueueShared> {
        let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
        let descriptor: Arc<dyn SharedMemory> =
            Arc::from(provider.alloc_shared(1 << 12).expect("descriptor memory"));
        let config = QueueConfig {
            max_message: 16,
            capacity: cells,
            rings: 1,
            timeout: Duration::from_secs(1),
        };
        QueueShared::create(&provider, descriptor, "t", Direction::ToHost, &config)
            .expect("queue")
            .0
    }

    /// Writes message `pos` (`len` bytes of `pos as u8`) as a cell of a group of
    /// `count`, stamped for position `ready - 1` (`ready`: `pos + 1` when honest; 0
    /// leaves the stamp of a cell never written); the group's first cell is stamped
    /// last, with release, as `gpuio_impl_queue_group_publish` does.
    fn write_cell(q: &QueueShared, pos: u64, len: u32, count: u32, ready: u64) {
        let off = q.cell_off(0, pos);
        let bytes = vec![pos as u8; (len as usize).min(q.max_message as usize)];
        q.mem.write_bytes(off + HEADER, &bytes).unwrap();
        let stamp = ready
            .checked_sub(1)
            .map_or(0, |p| cell::stamp(p, len, count));
        q.stamp(0, pos).unwrap().store(stamp, Ordering::Release);
    }

    /// A group of `count` honest messages from position `base` on, `len` bytes each.
    fn publish_group(q: &QueueShared, base: u64, count: u32, len: u32) {
        for pos in base + 1..base + u64::from(count) {
            write_cell(q, pos, len, count, pos + 1);
        }
        write_cell(q, base, len, count, base + 1);
    }

    /// Every message [`Receiver::drain`] takes now, as (first byte, length).
    fn drain(rx: &mut Receiver) -> Result<Vec<(u8, usize)>, RecvError> {
        let mut got = Vec::new();
        rx.drain(usize::MAX, |m| {
            got.push((m.first().copied().unwrap_or(0), m.len()))
        })?;
        Ok(got)
    }

    #[test]
    fn a_group_that_wraps_around_the_ring_is_taken_whole_in_two_runs() {
        let q = queue(8);
        let mut rx = Receiver::new(q.clone());
        publish_group(&q, 0, 6, 16);
        assert_eq!(drain(&mut rx).unwrap().len(), 6);
        // Positions 6..12: the run stops at the lap's end (6, 7), the rest (8..12)
        // sits at the ring's start.
        publish_group(&q, 6, 6, 3);
        let got = drain(&mut rx).unwrap();
        assert_eq!(got, (6..12).map(|p| (p as u8, 3)).collect::<Vec<_>>());
        assert_eq!(rx.received(), 12);
        assert_eq!(q.head_word(0).unwrap().load(Ordering::Acquire), 12);
    }

    /// A group of 4 whose third cell (position 2) still shows the previous lap.
    fn group_with_a_late_stamp(q: &QueueShared) {
        write_cell(q, 1, 5, 4, 2);
        write_cell(q, 2, 5, 4, 0);
        write_cell(q, 3, 5, 4, 4);
        write_cell(q, 0, 5, 4, 1);
    }

    #[test]
    fn a_later_cell_stamped_a_moment_late_ends_the_run_and_is_waited_for() {
        let q = queue(16);
        let mut rx = Receiver::new(q.clone());
        group_with_a_late_stamp(&q);
        // The stamping thread is running before the drain starts (the barrier), and
        // stamps 1 ms later, well inside the receiver's 10 ms allowance even on a
        // loaded machine (2 ms after a spawn was once too late there).
        let running = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| {
                running.wait();
                std::thread::sleep(Duration::from_millis(1));
                q.stamp(0, 2)
                    .unwrap()
                    .store(cell::stamp(2, 5, 4), Ordering::Release);
            });
            running.wait();
            // The run stops before position 2; the next look waits for its stamp.
            assert_eq!(
                drain(&mut rx).unwrap(),
                vec![(0, 5), (1, 5), (2, 5), (3, 5)]
            );
        });
        assert!(q.violation().is_none());
    }

    #[test]
    fn a_later_cell_never_stamped_is_a_violation_and_nothing_past_it_is_believed() {
        let q = queue(16);
        let mut rx = Receiver::new(q.clone());
        group_with_a_late_stamp(&q);
        // The two before it are handed out; then the ring is broken.
        assert_eq!(drain(&mut rx).unwrap(), vec![(0, 5), (1, 5)]);
        assert!(q
            .violation()
            .is_some_and(|v| v.contains("message 2 belongs to a published group")));
        q.stamp(0, 2)
            .unwrap()
            .store(cell::stamp(2, 5, 4), Ordering::Release);
        assert_eq!(drain(&mut rx).unwrap(), vec![]);
        assert_eq!(rx.received(), 2);
    }

    #[test]
    fn a_scribbled_length_met_first_in_a_run_comes_back_as_a_protocol_error() {
        let q = queue(16);
        let mut rx = Receiver::new(q.clone());
        write_cell(&q, 1, 4096, 2, 2);
        write_cell(&q, 0, 5, 2, 1);
        let mut buf = Vec::new();
        let mut ends = Vec::new();
        // The first message alone (the run stops before the scribble)...
        assert_eq!(rx.take_available(&mut buf, &mut ends, 1 << 16, 1), Ok(1));
        // ...then the scribble is the first thing this call meets.
        let err = drain(&mut rx).unwrap_err();
        assert!(
            matches!(&err, RecvError::Protocol(what) if what.contains("message 1 claims 4096 bytes")),
            "{err:?}"
        );
    }

    #[test]
    fn a_later_cell_claiming_a_message_over_the_maximum_is_a_violation_not_a_message() {
        let q = queue(16);
        let mut rx = Receiver::new(q.clone());
        write_cell(&q, 1, 5, 3, 2);
        write_cell(&q, 2, 4096, 3, 3); // a scribbled length
        write_cell(&q, 0, 5, 3, 1);
        // The messages before the scribble are handed out and the scribble is
        // noted (close() reports it), never handed out.
        assert_eq!(drain(&mut rx).unwrap(), vec![(0, 5), (1, 5)]);
        assert!(q
            .violation()
            .is_some_and(|v| v.contains("message 2 claims 4096 bytes")));
        // The ring is no longer read: nothing past the scribble is believed.
        write_cell(&q, 3, 5, 1, 4);
        assert_eq!(drain(&mut rx).unwrap(), vec![]);
        assert_eq!(rx.received(), 2);
    }

    #[test]
    fn a_ring_holds_a_message_from_its_ready_cell_until_its_reader_takes_it() {
        let q = queue(8);
        let mut rx = Receiver::new(q.clone());
        assert!(!ring_has_message(&q, 0), "an empty ring");
        publish_group(&q, 0, 2, 16);
        assert!(
            ring_has_message(&q, 0),
            "seen by any thread, before the reader looks"
        );
        assert_eq!(drain(&mut rx).unwrap().len(), 2);
        assert!(
            !ring_has_message(&q, 0),
            "taken: the published head is past it"
        );
    }
}
