//! The host's end of a queue to the device: publishes messages for `gpuio_recv`.

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::poller::{self, WaitFor};
use super::receiver::{Backoff, Word};
use super::QueueShared;
use crate::abi::cell;
use crate::memory::MemoryError;

/// Why [`Sender`] did not send a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Every cell holds a message the kernel has not taken yet (`try_send`).
    #[error("the queue is full")]
    Full,
    /// The sender was closed, or the channel is closing.
    #[error("the queue is closed")]
    Closed,
    #[error("a message of {len} bytes is longer than the queue's maximum of {max}")]
    TooLong { len: usize, max: usize },
    /// The queue stayed full for the whole wait.
    #[error("the queue stayed full for {0:?}")]
    Timeout(Duration),
    /// The kernel wrote something into the queue that the protocol does not allow.
    #[error("protocol violation: {0}")]
    Protocol(String),
}

/// Sends messages that a kernel receives with `gpuio_recv` from a queue to the
/// device, in order. Closing it (or dropping it) is the end of the stream: once
/// the kernel took every message, `gpuio_recv` returns 0.
///
/// Blocking ([`Sender::send`]), non-blocking ([`Sender::try_send`]) and timed, and
/// an async [`Sink`](futures_sink::Sink) of `Vec<u8>` that needs no thread of its own.
///
/// A queue with several rings ([`QueueConfig::rings`](crate::QueueConfig::rings))
/// takes one sending thread per ring: [`Sender::split`] gives each its own
/// `Sender`. Unsplit, a `Sender` sends on ring 0 alone.
pub struct Sender {
    q: Arc<QueueShared>,
    /// The rings this sender closes; it sends on the first.
    rings: std::ops::Range<u32>,
    closed: bool,
    /// Positions below this one were seen free (their free word said the kernel
    /// freed it) by a look-ahead; only this sender writes them, so they stay free.
    free_upto: u64,
}

/// Cells a sender checks beyond the one it needs when it finds that one free. The
/// kernel's frees arrive across PCIe and take their free words' lines out of the
/// host's caches: checked one per message, every send waited for memory; checked
/// together, the reads overlap. (The free words sit eight to a line apart from the
/// cells, which only the host writes: when the kernel freed each cell in its own
/// header, every send read a line the device had written, and one host thread sent
/// 35 M messages/s of 64 B on an H100's host.)
const LOOK_AHEAD: u64 = 32;

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("queue", &self.q)
            .field("rings", &self.rings)
            .field("sent", &self.sent())
            .finish()
    }
}

impl Sender {
    pub(crate) fn new(q: Arc<QueueShared>) -> Self {
        let rings = 0..q.rings;
        Self {
            q,
            rings,
            closed: false,
            free_upto: 0,
        }
    }

    /// The queue's name, as registered.
    pub fn name(&self) -> &str {
        &self.q.name
    }

    /// Longest message the queue carries.
    pub fn max_message(&self) -> usize {
        self.q.max_message as usize
    }

    /// Messages this sender published so far (on every ring it owns).
    pub fn sent(&self) -> u64 {
        self.rings
            .clone()
            .map(|r| self.q.tail(r).load(Ordering::Relaxed))
            .sum()
    }

    /// One sender per ring this one owns, in ring order, each free to move to its
    /// own thread: with a queue of several rings, several host threads send at
    /// once and no word is shared between them. Each ends its own ring's stream
    /// when it closes; `gpuio_recv` returns 0 once every ring is closed and
    /// drained. What this sender sent stays on its first ring (ring 0 for the
    /// channel's `Sender`), whose sender comes first.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gpuio_core::{forward::ForwardBuilder, memory::HostMemory};
    /// use gpuio_core::{Channel, ChannelConfig, Endpoint, QueueConfig};
    /// let mut cfg = ChannelConfig::default();
    /// let rings = QueueConfig { rings: 4, ..QueueConfig::default() };
    /// let work = cfg.endpoint(Endpoint::queue_to_device("work", rings));
    /// let channel = Channel::open(Arc::new(HostMemory), &ForwardBuilder::default(), cfg)?;
    /// let senders = channel.sender(work)?.split();
    /// assert_eq!(senders.len(), 4);
    /// std::thread::scope(|s| {
    ///     for (i, mut tx) in senders.into_iter().enumerate() {
    ///         // A kernel launched on `channel` takes these with gpuio_recv.
    ///         s.spawn(move || tx.send(format!("from thread {i}").as_bytes()));
    ///     }
    /// });
    /// let report = channel.close();
    /// assert_eq!((report.queues[0].sent, report.queues[0].in_flight), (4, 4));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn split(mut self) -> Vec<Sender> {
        let rings = std::mem::replace(&mut self.rings, 0..0);
        let (first, closed) = (rings.start, self.closed);
        rings
            .map(|r| Sender {
                q: self.q.clone(),
                rings: r..r + 1,
                closed,
                // What this sender saw free is on the ring it sent on.
                free_upto: if r == first { self.free_upto } else { 0 },
            })
            .collect()
    }

    /// Publishes `msg` if a cell is free now.
    pub fn try_send(&mut self, msg: &[u8]) -> Result<(), SendError> {
        if msg.len() > self.q.max_message as usize {
            return Err(SendError::TooLong {
                len: msg.len(),
                max: self.q.max_message as usize,
            });
        }
        if self.closed || self.rings.is_empty() || self.q.channel_closing() {
            return Err(SendError::Closed);
        }
        if let Some(v) = self.q.violation() {
            return Err(SendError::Protocol(v));
        }
        let ring = RingOut {
            q: &self.q,
            ring: self.rings.start,
        };
        send_next(&ring, &mut self.free_upto, msg)
    }

    /// Publishes `msg`, waiting at most the queue's timeout for a free cell.
    pub fn send(&mut self, msg: &[u8]) -> Result<(), SendError> {
        self.send_timeout(msg, self.q.timeout)
    }

    /// Publishes `msg`, waiting at most `wait` for a free cell.
    pub fn send_timeout(&mut self, msg: &[u8], wait: Duration) -> Result<(), SendError> {
        // The clock is read only once the queue is found full: most sends find room.
        match self.try_send(msg) {
            Err(SendError::Full) => {}
            other => return other,
        }
        let deadline = Instant::now() + wait;
        let mut backoff = Backoff::default();
        loop {
            match self.try_send(msg) {
                Err(SendError::Full) => {}
                other => return other,
            }
            if Instant::now() >= deadline {
                return Err(SendError::Timeout(wait));
            }
            backoff.pause(deadline);
        }
    }

    /// Ends the stream of every ring this sender owns: the kernel's `gpuio_recv`
    /// returns 0 once every ring is closed and drained. Further sends fail with
    /// [`SendError::Closed`].
    pub fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        for ring in self.rings.clone() {
            close(&RingOut { q: &self.q, ring });
        }
    }

    fn has_space(q: &QueueShared, ring: u32) -> bool {
        let t = q.tail(ring).load(Ordering::Relaxed);
        q.free_word(ring, t)
            .map(|w| w.load(Ordering::Acquire) == t)
            .unwrap_or(true)
            || q.channel_closing()
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.close();
    }
}

impl futures_sink::Sink<Vec<u8>> for Sender {
    type Error = SendError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), SendError>> {
        let this = self.get_mut();
        for attempt in 0..2 {
            if this.closed || this.rings.is_empty() || this.q.channel_closing() {
                return Poll::Ready(Err(SendError::Closed));
            }
            if Sender::has_space(&this.q, this.rings.start) {
                return Poll::Ready(Ok(()));
            }
            if attempt == 0 {
                poller::wait(
                    this.q.clone(),
                    WaitFor::Space(Sender::has_space, this.rings.start),
                    cx.waker().clone(),
                );
            }
        }
        Poll::Pending
    }

    fn start_send(self: Pin<&mut Self>, item: Vec<u8>) -> Result<(), SendError> {
        self.get_mut().try_send(&item)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), SendError>> {
        // Every message is published as it is sent.
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), SendError>> {
        self.get_mut().close();
        Poll::Ready(Ok(()))
    }
}

/// The words of a queue to the device that its [`Sender`] reads and writes: the
/// queue's shared memory ([`QueueShared`]), or a loom model's own words
/// (`loom_model_down.rs`), so that the model runs the sender's own code.
pub(crate) trait Outbox {
    type Word: Word;
    type Flag: Flag;
    /// Cells in the ring.
    fn cells(&self) -> u32;
    /// The queue's name, for reports.
    fn name(&self) -> &str;
    /// Position `pos`'s `CellHeader::stamp` (the host releases
    /// [`cell::stamp`]`(pos, len, 1)` into it).
    fn stamp(&self, pos: u64) -> Result<&Self::Word, MemoryError>;
    /// Position `pos`'s free word (`Queue::frees`: `pos` once the cell is free for
    /// it; the device releases `pos + cells` when it takes `pos`).
    fn free_word(&self, pos: u64) -> Result<&Self::Word, MemoryError>;
    /// Writes `msg`'s bytes into position `pos`'s cell (its stamp says how long).
    fn write_message(&self, pos: u64, msg: &[u8]) -> Result<(), MemoryError>;
    /// `QueueControl::head`: messages published.
    fn head_word(&self) -> Result<&Self::Word, MemoryError>;
    /// `QueueControl::closed`.
    fn closed_word(&self) -> Result<&Self::Flag, MemoryError>;
    /// The sender's next position, which is also how many messages it published
    /// (host-private).
    fn sent_word(&self) -> &Self::Word;
    fn note_violation(&self, what: String);
}

/// A 32-bit flag the host stores atomically (`closed`).
pub(crate) trait Flag {
    fn store(&self, value: u32, order: Ordering);
}

impl Flag for AtomicU32 {
    fn store(&self, value: u32, order: Ordering) {
        AtomicU32::store(self, value, order)
    }
}

/// One ring of a queue to the device, as its sender sees it.
pub(crate) struct RingOut<'a> {
    q: &'a QueueShared,
    ring: u32,
}

impl Outbox for RingOut<'_> {
    type Word = AtomicU64;
    type Flag = AtomicU32;
    fn cells(&self) -> u32 {
        self.q.cells
    }
    fn name(&self) -> &str {
        &self.q.name
    }
    fn stamp(&self, pos: u64) -> Result<&AtomicU64, MemoryError> {
        self.q.stamp(self.ring, pos)
    }
    fn free_word(&self, pos: u64) -> Result<&AtomicU64, MemoryError> {
        self.q.free_word(self.ring, pos)
    }
    fn write_message(&self, pos: u64, msg: &[u8]) -> Result<(), MemoryError> {
        self.q.write_message(self.ring, pos, msg)
    }
    fn head_word(&self) -> Result<&AtomicU64, MemoryError> {
        self.q.head_word(self.ring)
    }
    fn closed_word(&self) -> Result<&AtomicU32, MemoryError> {
        self.q.closed_word(self.ring)
    }
    fn sent_word(&self) -> &AtomicU64 {
        self.q.tail(self.ring)
    }
    fn note_violation(&self, what: String) {
        self.q.note_violation(what)
    }
}

/// Publishes `msg` at the sender's next position if its cell is free now: `Full` if
/// the kernel has not freed it yet. Cells below `*free_upto` were seen free by an
/// earlier look-ahead; when the next position reaches it, the cell is looked at again
/// and so are the ones after it ([`look_ahead`]).
pub(crate) fn send_next<Q: Outbox + ?Sized>(
    q: &Q,
    free_upto: &mut u64,
    msg: &[u8],
) -> Result<(), SendError> {
    let t = q.sent_word().load(Ordering::Relaxed);
    if t >= *free_upto {
        *free_upto = look_ahead(q, t)?;
    }
    let stamp = q
        .stamp(t)
        .map_err(|e| SendError::Protocol(format!("writing the ring: {e}")))?;
    publish(q, t, stamp, msg)
}

/// Whether the cell for position `t` is free (its free word says `t`); if it is, the
/// next cells' free words are checked too (up to [`LOOK_AHEAD`]) and the first
/// position after the free ones found in a row is returned.
fn look_ahead<Q: Outbox + ?Sized>(q: &Q, t: u64) -> Result<u64, SendError> {
    let cells = u64::from(q.cells());
    let word = |p: u64| {
        q.free_word(p)
            .map_err(|e| SendError::Protocol(format!("reading the ring: {e}")))
    };
    // Acquire: the kernel copied the message out before it freed the cell.
    let v = word(t)?.load(Ordering::Acquire);
    if v != t {
        if t >= cells && v == t - cells {
            return Err(SendError::Full);
        }
        let before = t.saturating_sub(cells);
        let what = format!(
            "queue {:?}: the free word of message {t}'s cell says {v} (expected {t} once \
             the kernel freed it, {before} while it still holds message {before})",
            q.name()
        );
        q.note_violation(what.clone());
        return Err(SendError::Protocol(what));
    }
    let mut upto = t + 1;
    let end = t + LOOK_AHEAD.min(cells);
    while upto < end {
        // Acquire, as above: this sender writes these cells later without looking
        // again.
        match q.free_word(upto) {
            Ok(w) if w.load(Ordering::Acquire) == upto => upto += 1,
            _ => break,
        }
    }
    Ok(upto)
}

/// Writes `msg` into the free cell for position `t` and publishes it.
fn publish<Q: Outbox + ?Sized>(
    q: &Q,
    t: u64,
    stamp: &Q::Word,
    msg: &[u8],
) -> Result<(), SendError> {
    q.write_message(t, msg)
        .map_err(|e| SendError::Protocol(format!("writing the ring: {e}")))?;
    // The message's length rides in the stamp: `Sender`s refuse messages over the
    // queue's `max_message`, which is at most 2^20.
    stamp.store(cell::stamp(t, msg.len() as u32, 1), Ordering::Release);
    q.sent_word().store(t + 1, Ordering::Release);
    // The published count, which one reading kernel thread polls for all of
    // them (abi::QueueControl::head).
    q.head_word()
        .map_err(|e| SendError::Protocol(format!("writing the ring: {e}")))?
        .store(t + 1, Ordering::Release);
    Ok(())
}

/// Ends the stream (`closed`, released after the last `head`): the kernel's
/// `gpuio_recv` returns 0 once it took every message.
pub(crate) fn close<Q: Outbox + ?Sized>(q: &Q) {
    match q.closed_word() {
        Ok(w) => w.store(1, Ordering::Release),
        Err(e) => q.note_violation(format!("cannot mark the queue closed: {e}")),
    }
}
