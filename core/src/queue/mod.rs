//! Host queues: framed messages between a kernel and the host program, beside any
//! transport. The kernel sends with `gpuio_send` and the host program receives with
//! a [`Receiver`]; the host program sends with a [`Sender`] and the kernel receives
//! with `gpuio_recv`. No syscall and no request round trip per message.
//!
//! The layout and the protocol (who writes what, and when) are in
//! [`crate::abi::Queue`]; the device half is `gpuio/queue.h`. This module
//! lays a queue out when its channel opens (`QueueShared::create`) and reads the
//! kernel's side of it as untrusted input: every header is checked, a message never
//! reads past its cell, and a scribbled header is reported as a protocol violation
//! instead of being taken as a message.
//!
//! ```
//! use gpuio_core::{Endpoint, QueueConfig};
//! let mut cfg = gpuio_core::ChannelConfig::default();
//! let results = cfg.endpoint(Endpoint::queue_to_host("results", QueueConfig::default()));
//! let work = cfg.endpoint(Endpoint::queue_to_device("work", QueueConfig::default()));
//! // After Channel::open: channel.receiver(results)?, channel.sender(work)?; a kernel
//! // calls gpuio_send(ch, results, ...) and gpuio_recv(ch, work, ...).
//! # let _ = (results, work);
//! ```

mod log;
#[cfg(all(test, loom))]
mod loom_model;
#[cfg(all(test, loom))]
mod loom_model_down;
mod poller;
mod receiver;
mod sender;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::abi;
use crate::memory::{LocalMemory, MemoryError, MemoryProvider, SharedMemory, SharedView};
use crate::transport::TransportError;

pub(crate) use log::LogDrain;
pub use log::{LogConfig, LogReport};
pub use receiver::{Receiver, RecvError};
pub use sender::{SendError, Sender};

/// Which way a host queue carries messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The kernel sends (`gpuio_send`), the host program receives ([`Receiver`]).
    ToHost,
    /// The host program sends ([`Sender`]), the kernel receives (`gpuio_recv`).
    ToDevice,
}

impl Direction {
    fn abi(self) -> u32 {
        match self {
            Self::ToHost => abi::queue_direction::TO_HOST,
            Self::ToDevice => abi::queue_direction::TO_DEVICE,
        }
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ToHost => "to the host",
            Self::ToDevice => "to the device",
        })
    }
}

/// How a host queue is sized. `Default`: messages of up to 240 bytes, 1024 per
/// ring, 4 rings, host-side waits of 30 s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// Longest message, in bytes. Each message takes one cell of `16 +
    /// max_message` bytes rounded up to 16.
    pub max_message: u32,
    /// Messages each ring holds (rounded up to a power of two; at least 2 on a
    /// queue to the device). A sending warp holds its cells while it writes them,
    /// so a stream of long messages needs more of them: the cells in flight set how
    /// many warps write at once. `gpuio bench` on an H200 (2026-11-27), 4 KiB
    /// messages from every thread through 16 rings: 512 cells a ring 2.7 M msg/s,
    /// 4096 cells 7.8 M (32 GB/s).
    pub capacity: u32,
    /// Rings. To the host: a sending warp uses ring `warp % rings`, so warps on
    /// different rings never contend. To the device: one per host thread that
    /// sends ([`Sender::split`]); a [`Sender`] that is not split sends on ring 0
    /// alone, in order. A reading warp takes from ring `warp % rings` first and
    /// from the others when that one is empty; with one ring a reader polls one
    /// host word, with more it also looks at one other ring each time it polls.
    pub rings: u32,
    /// Longest a blocking host-side call ([`Receiver::recv`], [`Sender::send`])
    /// waits before it reports a timeout.
    pub timeout: Duration,
}

impl QueueConfig {
    /// Bytes one message takes in a ring, whatever its length: its cell, an 8-byte
    /// header and `max_message` bytes, rounded up to 8. A queue to the host moves
    /// the header and the message's bytes across the bus for each message.
    ///
    /// ```
    /// use gpuio_core::QueueConfig;
    /// let q = QueueConfig { max_message: 64, ..QueueConfig::default() };
    /// assert_eq!(q.cell_bytes(), 72);
    /// ```
    pub fn cell_bytes(&self) -> u32 {
        (HEADER as u32 + self.max_message).next_multiple_of(8)
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            max_message: 240,
            capacity: 1024,
            rings: 4,
            timeout: Duration::from_secs(30),
        }
    }
}

/// Largest `max_message` a queue accepts.
pub const MAX_MESSAGE_LIMIT: u32 = 1 << 20;
/// Most rings a queue may have.
pub const MAX_RINGS: u32 = 256;

/// What `close()` found on one host queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueReport {
    pub name: String,
    pub direction: Direction,
    /// Messages published by the sending side: `received + in_flight`.
    pub sent: u64,
    /// Messages the receiving side took.
    pub received: u64,
    /// Messages published and not yet taken when the channel closed (a host
    /// [`Receiver`] may still take them).
    pub in_flight: u64,
    /// A protocol violation seen on this queue, in words.
    pub violation: Option<String>,
}

impl std::fmt::Display for QueueReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "queue {:?} ({}): sent {} = received {} + in flight {}",
            self.name, self.direction, self.sent, self.received, self.in_flight
        )?;
        if let Some(v) = &self.violation {
            write!(f, "; {v}")?;
        }
        Ok(())
    }
}

/// One host queue's memory and host-side state, shared by the channel and the
/// queue's [`Receiver`] or [`Sender`] (which may outlive the channel's `close`).
pub(crate) struct QueueShared {
    pub(crate) name: String,
    pub(crate) direction: Direction,
    pub(crate) rings: u32,
    pub(crate) cells: u32,
    pub(crate) cell_size: u32,
    pub(crate) max_message: u32,
    pub(crate) timeout: Duration,
    /// The cells of every ring, then `QueueControl[rings]`.
    mem: SharedView,
    control_off: usize,
    /// To the device: where `frees[rings × cells]` starts in `mem` (ring `r`'s
    /// from `r × cells` on).
    frees_off: usize,
    /// The ring's device-local state; kept alive with the queue.
    _local: Arc<dyn LocalMemory>,
    /// The channel's shared descriptor, for `closing`.
    descriptor: SharedView,
    /// To the device, per ring: the next position of the Sender that owns the
    /// ring, which is also how many messages it published there. (To the host,
    /// none: what the Receivers took is the sum of the rings' published heads, no
    /// counter shared by the draining threads.)
    tails: Box<[SenderTail]>,
    /// Whether the Receiver or Sender was handed out.
    taken: AtomicBool,
    /// The first protocol violation seen.
    violation: Mutex<Option<String>>,
    /// Whether `violation` holds one: looked at on every send without the lock.
    violated: AtomicBool,
}

impl std::fmt::Debug for QueueShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.name)
            .field("direction", &self.direction)
            .field("rings", &self.rings)
            .field("cells", &self.cells)
            .field("max_message", &self.max_message)
            .finish()
    }
}

const HEADER: usize = std::mem::size_of::<abi::CellHeader>();

// A cell's stamp holds any message length the queue accepts.
const _: () = assert!(MAX_MESSAGE_LIMIT as u64 <= abi::cell::LEN_MASK);

/// One ring's sender position, alone in its cache lines: each sending thread stores
/// its own on every message. Side by side in one line, four sending threads moved
/// fewer messages than one (H100 host, 2026-11-26, 64 B: 25 M msg/s against 39 M
/// with one thread; padded, 131–135 M with four and 255 M with eight).
#[repr(align(128))]
#[derive(Debug, Default)]
struct SenderTail(AtomicU64);

impl QueueShared {
    /// Lays out a queue in fresh memory from `provider` and returns it with the
    /// descriptor entry the kernel reads.
    pub(crate) fn create(
        provider: &Arc<dyn MemoryProvider>,
        descriptor: Arc<dyn SharedMemory>,
        name: &str,
        direction: Direction,
        config: &QueueConfig,
    ) -> Result<(Arc<QueueShared>, abi::Queue), TransportError> {
        let bad = |what: String| TransportError::Config(format!("host queue {name:?}: {what}"));
        if config.max_message == 0 || config.max_message > MAX_MESSAGE_LIMIT {
            return Err(bad(format!(
                "max_message {} is outside 1..={MAX_MESSAGE_LIMIT}",
                config.max_message
            )));
        }
        if config.capacity == 0 || config.capacity > 1 << 24 {
            return Err(bad(format!(
                "capacity {} is outside 1..=16777216 messages per ring",
                config.capacity
            )));
        }
        let rings = config.rings;
        if rings == 0 || rings > MAX_RINGS {
            return Err(bad(format!(
                "{} rings is outside 1..={MAX_RINGS}",
                config.rings
            )));
        }
        // To the device a cell's ready word once said both "full for p" (p + 1) and "free for
        // p + cells" (p + cells): with one cell the two are the same word, and the
        // Sender took its own unread message for a freed cell and overwrote it
        // (loom_model_down.rs). Two cells at least.
        let cells = match direction {
            Direction::ToHost => config.capacity.next_power_of_two(),
            Direction::ToDevice => config.capacity.next_power_of_two().max(2),
        };
        let cell_size = config.cell_bytes();
        let ring_bytes = cells as usize * cell_size as usize;
        let cells_len = ring_bytes
            .checked_mul(rings as usize)
            .filter(|n| *n <= 1 << 34)
            .ok_or_else(|| bad("rings x capacity x cell size is over 16 GiB".into()))?;
        let control_off = cells_len.next_multiple_of(64);
        let control_len = rings as usize * std::mem::size_of::<abi::QueueControl>();
        // A queue to the device: its free words after the control lines, ring
        // after ring.
        let frees_off = control_off + control_len;
        let frees_len = match direction {
            Direction::ToHost => 0,
            Direction::ToDevice => rings as usize * cells as usize * 8,
        };
        let mem: Arc<dyn SharedMemory> = Arc::from(provider.alloc_shared(frees_off + frees_len)?);
        // A queue to the device: each ring's credits in a line, after the rings'
        // states.
        let credits = match direction {
            Direction::ToHost => 0,
            Direction::ToDevice => rings as usize * std::mem::size_of::<abi::QueueCredits>(),
        };
        let local: Arc<dyn LocalMemory> = Arc::from(
            provider
                .alloc_local(rings as usize * std::mem::size_of::<abi::QueueRing>() + credits)?,
        );
        local.write(0, &vec![0u8; local.len()])?;
        let shared = QueueShared {
            name: name.to_owned(),
            direction,
            rings,
            cells,
            cell_size,
            max_message: config.max_message,
            timeout: config.timeout,
            mem: SharedView::new(mem),
            control_off,
            frees_off,
            _local: local.clone(),
            descriptor: SharedView::new(descriptor),
            tails: match direction {
                Direction::ToHost => Box::new([]),
                Direction::ToDevice => (0..rings).map(|_| SenderTail::default()).collect(),
            },
            taken: AtomicBool::new(false),
            violation: Mutex::new(None),
            violated: AtomicBool::new(false),
        };
        if direction == Direction::ToDevice {
            // Lap 0: cell p is free for position p, and no cell holds a message yet.
            for ring in 0..rings {
                for p in 0..u64::from(cells) {
                    shared.free_word(ring, p)?.store(p, Ordering::Relaxed);
                    shared.stamp(ring, p)?.store(0, Ordering::Relaxed);
                }
            }
        }
        let region = shared.mem.region();
        let desc = abi::Queue {
            direction: direction.abi(),
            rings,
            cells,
            cell_size,
            max_message: config.max_message,
            _reserved: 0,
            cells_addr: region.device_addr,
            control: region.device_addr + control_off as u64,
            ring_state: local.device_addr(),
            frees: match direction {
                Direction::ToHost => 0,
                Direction::ToDevice => region.device_addr + frees_off as u64,
            },
            _pad: [0; 1],
        };
        Ok((Arc::new(shared), desc))
    }

    pub(crate) fn take(&self) -> bool {
        !self.taken.swap(true, Ordering::AcqRel)
    }

    /// Byte offset of position `pos`'s cell in ring `ring`. `cells` is a power of
    /// two: a mask, not a division (the Sender's look-ahead computes one offset per
    /// cell, and a 64-bit division each kept its loads of the cells from overlapping:
    /// half of a send's time on a CPU).
    fn cell_off(&self, ring: u32, pos: u64) -> usize {
        debug_assert!(self.cells.is_power_of_two());
        let ring_bytes = self.cells as usize * self.cell_size as usize;
        ring as usize * ring_bytes + self.index(pos) * self.cell_size as usize
    }

    /// Which cell of its ring holds position `pos` (`pos % cells`, by mask).
    fn index(&self, pos: u64) -> usize {
        (pos & u64::from(self.cells - 1)) as usize
    }

    /// The stamp of position `pos`'s cell in ring `ring` ([`abi::cell`]).
    fn stamp(&self, ring: u32, pos: u64) -> Result<&AtomicU64, MemoryError> {
        self.mem.atomic_u64(self.cell_off(ring, pos))
    }

    /// To the device: the free word of position `pos`'s cell in ring `ring`
    /// (`frees[ring × cells + pos % cells]`: `pos` once free for it, `pos + cells`
    /// once a reader took it).
    fn free_word(&self, ring: u32, pos: u64) -> Result<&AtomicU64, MemoryError> {
        let word = ring as usize * self.cells as usize + self.index(pos);
        self.mem.atomic_u64(self.frees_off + word * 8)
    }

    fn payload(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        debug_assert!(out.len() <= self.max_message as usize);
        self.mem.read_bytes(self.cell_off(ring, pos) + HEADER, out)
    }

    /// `out.len() / cell_size` whole cells from `pos` on, within one lap.
    fn copy_cells(&self, ring: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        debug_assert!(
            pos % u64::from(self.cells) + (out.len() / self.cell_size as usize) as u64
                <= u64::from(self.cells)
        );
        self.mem.read_bytes(self.cell_off(ring, pos), out)
    }

    /// Writes `msg`'s bytes into position `pos`'s cell (its stamp, which says how
    /// long it is, is released after them).
    fn write_message(&self, ring: u32, pos: u64, msg: &[u8]) -> Result<(), MemoryError> {
        self.mem.write_bytes(self.cell_off(ring, pos) + HEADER, msg)
    }

    fn control(&self, ring: u32) -> usize {
        self.control_off + ring as usize * std::mem::size_of::<abi::QueueControl>()
    }

    fn head_word(&self, ring: u32) -> Result<&AtomicU64, MemoryError> {
        self.mem
            .atomic_u64(self.control(ring) + std::mem::offset_of!(abi::QueueControl, head))
    }

    fn closed_word(&self, ring: u32) -> Result<&AtomicU32, MemoryError> {
        self.mem
            .atomic_u32(self.control(ring) + std::mem::offset_of!(abi::QueueControl, closed))
    }

    /// To the device: ring `ring`'s Sender's next position (how many messages it
    /// published there).
    fn tail(&self, ring: u32) -> &AtomicU64 {
        &self.tails[ring as usize].0
    }

    /// To the device: messages published on every ring.
    pub(crate) fn sent(&self) -> u64 {
        self.tails.iter().map(|t| t.0.load(Ordering::Acquire)).sum()
    }

    /// Whether the channel is closing (the host's `close()` began).
    pub(crate) fn channel_closing(&self) -> bool {
        self.descriptor
            .atomic_u32(std::mem::offset_of!(abi::Channel, closing))
            .map(|c| c.load(Ordering::Acquire) != 0)
            .unwrap_or(true)
    }

    pub(crate) fn violation(&self) -> Option<String> {
        if !self.violated.load(Ordering::Acquire) {
            return None;
        }
        self.violation.lock().map(|v| v.clone()).unwrap_or(None)
    }

    pub(crate) fn note_violation(&self, what: String) {
        tracing::error!(queue = %self.name, "{what}");
        if let Ok(mut v) = self.violation.lock() {
            v.get_or_insert(what);
        }
        self.violated.store(true, Ordering::Release);
    }

    /// To the host: the messages published beyond ring `ring`'s consumed head,
    /// walking published groups (bounded by the ring's size).
    fn published_beyond_head(&self, ring: u32) -> Result<u64, MemoryError> {
        let mut pos = self.head_word(ring)?.load(Ordering::Acquire);
        let end = pos + u64::from(self.cells);
        let mut n = 0;
        while pos < end {
            let stamp = self.stamp(ring, pos)?.load(Ordering::Acquire);
            let count = abi::cell::count(stamp);
            if !abi::cell::holds(stamp, pos) {
                break;
            }
            if count == 0 || u64::from(count) > end - pos {
                break;
            }
            n += u64::from(count);
            pos += u64::from(count);
        }
        Ok(n)
    }

    /// To the host: messages the Receivers took, over every ring.
    pub(crate) fn taken_to_host(&self) -> u64 {
        (0..self.rings)
            .filter_map(|r| self.head_word(r).ok())
            .map(|h| h.load(Ordering::Acquire))
            .sum()
    }

    /// To the device: messages the Senders published that no kernel took yet (their
    /// cells not freed for the next lap), over every ring.
    fn unclaimed(&self) -> Result<u64, MemoryError> {
        let cells = u64::from(self.cells);
        let mut n = 0;
        for ring in 0..self.rings {
            let tail = self.tail(ring).load(Ordering::Acquire);
            for p in tail.saturating_sub(cells)..tail {
                if self.free_word(ring, p)?.load(Ordering::Acquire) != p + cells {
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// What `close()` reports for this queue.
    pub(crate) fn report(&self) -> QueueReport {
        let in_flight = match self.direction {
            Direction::ToHost => (0..self.rings)
                .map(|r| self.published_beyond_head(r))
                .sum::<Result<u64, _>>(),
            Direction::ToDevice => self.unclaimed(),
        }
        .unwrap_or_else(|e| {
            self.note_violation(format!("cannot read the queue's rings: {e}"));
            0
        });
        let (sent, received) = match self.direction {
            Direction::ToHost => {
                let taken = self.taken_to_host();
                (taken + in_flight, taken)
            }
            Direction::ToDevice => {
                let sent = self.sent();
                (sent, sent.saturating_sub(in_flight))
            }
        };
        QueueReport {
            name: self.name.clone(),
            direction: self.direction,
            sent,
            received,
            in_flight,
            violation: self.violation(),
        }
    }
}

/// Why a queue's [`Receiver`] or [`Sender`] could not be had from a channel.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QueueError {
    #[error("endpoint {0} is not registered on this channel")]
    NoSuchEndpoint(u32),
    #[error("endpoint {index} ({name:?}) is not a host queue")]
    NotAQueue { index: u32, name: String },
    #[error(
        "endpoint {index} ({name:?}) is a queue {direction}: use {}",
        match direction { Direction::ToHost => "Channel::receiver", Direction::ToDevice => "Channel::sender" }
    )]
    WrongDirection {
        index: u32,
        name: String,
        direction: Direction,
    },
    #[error("the {what} of queue {name:?} was already taken; a queue has one")]
    AlreadyTaken { name: String, what: &'static str },
}
