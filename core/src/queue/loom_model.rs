//! Loom models of a queue to the host (`.ci/loom`): the host side is the
//! [`Receiver`](super::Receiver)'s own ring reading ([`take`], [`publish_head`]: check
//! a cell's stamp, which carries `len` and `count`, copy the message, release `head`)
//! over the model's words ([`Cells`]); the device side mirrors `gpuio/queue.h`
//! (`gpuio_impl_queue_reserve`, `_refresh`, `_fill_group`, `_group_publish`, `_tick`)
//! step for step. Each cell's stamp is an atomic and its message bytes a loom
//! `UnsafeCell` (over shared memory the host reads them with plain copies; the device
//! writes them with plain stores), so loom reports any interleaving in which a sender writes a cell
//! the host has not finished reading and released, two senders write one cell
//! unordered, or the host reads a cell before its group was published.
//!
//! Each ordering of the hand-off is needed: built with the host's acquire of a first
//! stamp or release of `head`, the sender's release of a group's first stamp, the
//! poller's acquire of `head` or release of `cached_head`, or the reserving sender's
//! acquire of `cached_head` made relaxed, a model here fails.
//!
//! Modelled: reserving by compare-and-swap on the device-local `tail` while
//! `tail + k <= cached_head + cells`, one poller at a time refreshing `cached_head`
//! from the host's `head` (on a full ring, and after a publish), waiting and not
//! waiting (`gpuio_try_send`), filling a group's cells, the release of its first
//! stamp. Not modelled: `closing` and `seen`, deadlines, the clock that spaces the
//! refreshes after a publish (here every publish refreshes), several rings (each is
//! its own copy of this one), warps (a group is one thread writing its cells in turn,
//! then releasing the first stamp, as the first lane does after the warp syncs).
//! Two senders that both wait on a full ring beside the host are not modelled either:
//! with three threads spinning, loom's paths outgrow its branch limit; the not-waiting
//! senders of the last model reach the same cross-sender hand-off of `cached_head`.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p gpuio-core --lib --release loom`.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, AtomicU64};
use loom::sync::Arc;
use std::sync::atomic::Ordering;

use super::receiver::{publish_head, take, take_run, Cells};
use super::HEADER;
use crate::abi::cell;
use crate::memory::MemoryError;

/// Longest message of the model (bytes).
const MAX: usize = 3;

/// One ring of a queue to the host: its cells and the host's `head` (shared), and the
/// device-local `QueueRing` words.
struct Ring {
    cells: u32,
    /// `CellHeader::stamp`, per cell.
    stamp: Vec<AtomicU64>,
    /// The message bytes, per cell.
    bytes: Vec<UnsafeCell<[u8; MAX]>>,
    /// `QueueControl::head`.
    head: AtomicU64,
    /// `QueueRing::{tail, cached_head, polling}`.
    tail: AtomicU64,
    cached_head: AtomicU64,
    polling: AtomicU32,
}

impl Cells for Ring {
    type Word = AtomicU64;
    fn cells(&self) -> u32 {
        self.cells
    }
    fn max_message(&self) -> u32 {
        MAX as u32
    }
    fn stamp(&self, _: u32, pos: u64) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.stamp[self.index(pos)])
    }
    fn payload(&self, _: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        // SAFETY: `take` reads the bytes after acquiring the group's first stamp; loom
        // checks that the device's writes happen before and its next ones after.
        let bytes = self.bytes[self.index(pos)].with(|p| unsafe { *p });
        out.copy_from_slice(&bytes[..out.len()]);
        Ok(())
    }
    fn cell_size(&self) -> usize {
        CELL
    }
    fn copy_cells(&self, _: u32, pos: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        // As the shared memory is copied: the stamp as it is now (relaxed), then the
        // bytes (SAFETY: as in `payload`: only cells of a published group).
        for (i, c) in out.chunks_exact_mut(CELL).enumerate() {
            let at = self.index(pos + i as u64);
            c[..HEADER].copy_from_slice(&self.stamp[at].load(Ordering::Relaxed).to_ne_bytes());
            let bytes = self.bytes[at].with(|p| unsafe { *p });
            c[HEADER..HEADER + MAX].copy_from_slice(&bytes);
        }
        Ok(())
    }
    fn head_word(&self, _: u32) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.head)
    }
}

/// Bytes per cell as [`Cells::copy_cells`] lays them out: the 8-byte header, then
/// the message, padded to whole words.
const CELL: usize = HEADER + MAX.next_multiple_of(8);

/// Message `seq` of sender `sender`: `seq % MAX + 1` bytes, each naming both.
fn message(sender: u8, seq: u8) -> Vec<u8> {
    let len = usize::from(seq) % MAX + 1;
    (0..len as u8).map(|i| sender << 6 | seq << 2 | i).collect()
}

impl Ring {
    fn new(cells: u32) -> Arc<Self> {
        let n = cells as usize;
        Arc::new(Self {
            cells,
            stamp: (0..n).map(|_| AtomicU64::new(0)).collect(),
            bytes: (0..n).map(|_| UnsafeCell::new([0; MAX])).collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            cached_head: AtomicU64::new(0),
            polling: AtomicU32::new(0),
        })
    }

    fn index(&self, pos: u64) -> usize {
        (pos % u64::from(self.cells)) as usize
    }

    /// `gpuio_impl_queue_lock_poll`: the poll lock taken by a compare-and-swap that
    /// orders nothing (`gpuio_cas_32`: CUDA's `atomicCAS`), then the word it wrote read
    /// again with acquire (it continues the last poller's release sequence).
    fn lock_poll(&self) -> bool {
        if self
            .polling
            .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.polling.load(Ordering::Acquire);
        true
    }

    /// `gpuio_impl_queue_refresh`, less `closing` and `polled_at`: one sender at a time
    /// ([`Ring::lock_poll`]) acquires the host's `head` and
    /// releases it into `cached_head` if it is newer.
    fn refresh(&self) {
        if !self.lock_poll() {
            return;
        }
        let fresh = self.head.load(Ordering::Acquire);
        if fresh > self.cached_head.load(Ordering::Relaxed) {
            self.cached_head.store(fresh, Ordering::Release);
        }
        self.polling.store(0, Ordering::Release);
    }

    /// `gpuio_impl_queue_reserve` without a deadline: `k` positions by compare-and-swap
    /// on `tail` (`gpuio_cas_64`: CUDA's `atomicCAS`, no ordering) while
    /// `tail + k <= head + cells`, `head` a relaxed read of `cached_head` made before
    /// the attempts and made again only when it leaves no room; then an acquire of
    /// `cached_head`. A ring that still looks full is refreshed, then waited on
    /// (`wait`) or given up (`gpuio_try_send`'s `-EAGAIN`: `None`). Returns the first
    /// position.
    fn reserve(&self, k: u64, wait: bool) -> Option<u64> {
        let cells = u64::from(self.cells);
        let mut t = self.tail.load(Ordering::Relaxed);
        let mut head = self.cached_head.load(Ordering::Relaxed);
        loop {
            if t + k <= head + cells {
                match self
                    .tail
                    .compare_exchange(t, t + k, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => {
                        self.cached_head.load(Ordering::Acquire);
                        return Some(t);
                    }
                    Err(seen) => {
                        t = seen;
                        continue;
                    }
                }
            }
            let fresh = self.cached_head.load(Ordering::Relaxed);
            if fresh > head {
                head = fresh;
                continue;
            }
            self.refresh();
            head = self.cached_head.load(Ordering::Relaxed);
            if head > fresh {
                continue;
            }
            if !wait {
                return None;
            }
            loom::thread::yield_now();
            t = self.tail.load(Ordering::Relaxed);
        }
    }

    /// `gpuio_impl_queue_group_reserve`, `_fill_group` and `_group_publish` for a group
    /// of `seqs.len()` messages of `sender`, waiting while the ring is full: every cell
    /// written whole with plain stores (its stamp too, but the first cell's), then the
    /// first cell's stamp released.
    fn send_group(&self, sender: u8, seqs: &[u8]) {
        let k = seqs.len() as u64;
        let base = self.reserve(k, true).expect("a waiting reservation");
        self.fill_and_publish(base, sender, seqs);
    }

    /// `gpuio_try_send` of one message, then `gpuio_impl_queue_tick` as if its time
    /// had come: this sender refreshes `cached_head` for the others. Whether it sent.
    fn try_send_then_poll(&self, sender: u8, seq: u8) -> bool {
        let Some(pos) = self.reserve(1, false) else {
            return false;
        };
        self.fill_and_publish(pos, sender, &[seq]);
        self.refresh();
        true
    }

    /// `_fill_group` and `_group_publish` for the group reserved at `base`.
    fn fill_and_publish(&self, base: u64, sender: u8, seqs: &[u8]) {
        let k = seqs.len() as u64;
        for (j, &seq) in seqs.iter().enumerate() {
            let pos = base + j as u64;
            let i = self.index(pos);
            let msg = message(sender, seq);
            let mut bytes = [0; MAX];
            bytes[..msg.len()].copy_from_slice(&msg);
            // SAFETY: the position is reserved: the host released the cell's previous
            // lap; loom checks that its reads of it happen before.
            self.bytes[i].with_mut(|p| unsafe { *p = bytes });
            if j > 0 {
                // A plain store of the cell's first word in `_fill_group`.
                self.stamp[i].store(
                    cell::stamp(pos, msg.len() as u32, k as u32),
                    Ordering::Relaxed,
                );
            }
        }
        let first = message(sender, seqs[0]).len() as u32;
        self.stamp[self.index(base)].store(cell::stamp(base, first, k as u32), Ordering::Release);
    }
}

/// The host's side: the Receiver's [`take`] until `n` messages came, its head released
/// after each message (`try_recv`) or, with `batched`, its [`take_run`] (a group's
/// first message, then the rest in one copy of their cells), the head released once
/// for all it found published (`take_available`). Then one more look finds nothing.
fn receive(ring: &Ring, n: usize, batched: bool) -> Vec<Vec<u8>> {
    let (mut head, mut group_left, mut released) = (0, 0, 0);
    let mut got = Vec::new();
    let mut scratch = Vec::new();
    while got.len() < n {
        let mut buf = Vec::new();
        let took = if batched {
            let want = n - got.len();
            let k = take_run(
                ring,
                0,
                &mut head,
                &mut group_left,
                &mut scratch,
                &mut |m: &[u8]| got.push(m.to_vec()),
                want,
            )
            .unwrap_or_else(|e| panic!("the host saw a broken ring: {e}"));
            k > 0
        } else {
            let took = take(ring, 0, &mut head, &mut group_left, &mut buf)
                .unwrap_or_else(|e| panic!("the host saw a broken ring: {e}"));
            if took {
                got.push(buf);
            }
            took
        };
        if head != released && (!batched || !took || got.len() == n) {
            publish_head(ring, 0, head).unwrap_or_else(|e| panic!("{e}"));
            released = head;
        }
        if !took {
            loom::thread::yield_now();
        }
    }
    let mut extra = Vec::new();
    assert_eq!(
        take(ring, 0, &mut head, &mut group_left, &mut extra),
        Ok(false),
        "a message beyond those sent"
    );
    got
}

/// Every message came once, whole, and each sender's in the order it sent them.
fn check(got: &[Vec<u8>], sent: &[(u8, &[u8])]) {
    for &(sender, seqs) in sent {
        let from: Vec<&Vec<u8>> = got
            .iter()
            .filter(|m| m.first().is_some_and(|b| b >> 6 == sender))
            .collect();
        let want: Vec<Vec<u8>> = seqs.iter().map(|&s| message(sender, s)).collect();
        assert_eq!(
            from,
            want.iter().collect::<Vec<_>>(),
            "sender {sender}'s messages"
        );
    }
    let total: usize = sent.iter().map(|(_, seqs)| seqs.len()).sum();
    assert_eq!(got.len(), total, "no message more");
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// One sender sends a group of 2, then 1, on a ring of 2 cells: the third message
/// reuses the first cell, once the host released it.
fn group_then_one(batched: bool) {
    model(move || {
        let ring = Ring::new(2);
        let device = {
            let ring = ring.clone();
            loom::thread::spawn(move || {
                ring.send_group(0, &[0, 1]);
                ring.send_group(0, &[2]);
            })
        };
        let got = receive(&ring, 3, batched);
        device.join().unwrap();
        check(&got, &[(0, &[0, 1, 2])]);
    });
}

#[test]
fn a_group_then_a_message_arrive_whole_in_order_and_never_overwrite_an_unread_cell() {
    group_then_one(false);
}

#[test]
fn a_head_released_once_per_batch_frees_the_cells_as_well() {
    group_then_one(true);
}

#[test]
fn two_senders_racing_for_the_tail_are_read_in_position_order() {
    // Two cells, one message each: the position taken second may be published first,
    // and the host must wait for the first rather than skip it.
    model(|| {
        let ring = Ring::new(2);
        let senders: Vec<_> = (0..2u8)
            .map(|s| {
                let ring = ring.clone();
                loom::thread::spawn(move || ring.send_group(s, &[s]))
            })
            .collect();
        let got = receive(&ring, 2, false);
        for s in senders {
            s.join().unwrap();
        }
        check(&got, &[(0, &[0]), (1, &[1])]);
    });
}

#[test]
fn a_sender_reuses_a_cell_on_the_head_another_sender_polled() {
    // One cell, two senders that do not wait (`gpuio_try_send`) and poll the host's
    // head after they publish (the tick): a sender that finds room in `cached_head`
    // another sender refreshed writes the cell the host read, ordered only by the
    // host's release of `head`, the poller's acquire of it and release of
    // `cached_head`, and the reserving sender's acquire of `cached_head`.
    model(|| {
        let ring = Ring::new(1);
        // Model-only: what the senders did, for the host to know when to stop. Each
        // sender updates them after its cell writes, so they order nothing the model
        // checks.
        let sent = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
        let senders: Vec<_> = (0..2u8)
            .map(|s| {
                let (ring, sent) = (ring.clone(), sent.clone());
                loom::thread::spawn(move || {
                    let ok = ring.try_send_then_poll(s, s);
                    sent[usize::from(s)].store(if ok { 2 } else { 1 }, Ordering::SeqCst);
                })
            })
            .collect();
        let (mut head, mut group_left) = (0, 0);
        let mut got = Vec::new();
        loop {
            let done: Vec<u32> = sent.iter().map(|d| d.load(Ordering::SeqCst)).collect();
            let want = done.iter().filter(|&&d| d == 2).count();
            if done.iter().all(|&d| d != 0) && got.len() == want {
                break;
            }
            let mut buf = Vec::new();
            let took = take(&*ring, 0, &mut head, &mut group_left, &mut buf)
                .unwrap_or_else(|e| panic!("the host saw a broken ring: {e}"));
            if took {
                got.push(buf);
                publish_head(&*ring, 0, head).unwrap_or_else(|e| panic!("{e}"));
            } else {
                loom::thread::yield_now();
            }
        }
        for s in senders {
            s.join().unwrap();
        }
        let sent: Vec<(u8, &[u8])> = [(0u8, &[0u8][..]), (1, &[1][..])]
            .into_iter()
            .filter(|&(s, _)| sent[usize::from(s)].load(Ordering::SeqCst) == 2)
            .collect();
        assert!(!sent.is_empty(), "the first to reserve finds the cell free");
        check(&got, &sent);
    });
}
