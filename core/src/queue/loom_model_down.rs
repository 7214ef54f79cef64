//! Loom models of a queue to the device (`.ci/loom`): the host side is the
//! [`Sender`](super::Sender)'s own code ([`send_next`]: the look-ahead over the free
//! words, writing the cell, releasing its stamp, the published count and the
//! shared `head`; [`close`]: releasing `closed`) over the model's words ([`Outbox`]); the
//! device side mirrors `gpuio/queue.h` step for step (`gpuio_impl_queue_lock_poll`,
//! `_poll`, `_recv_group`, `_take`, `_recv`). Each cell's stamp (which carries `len`)
//! is an atomic and its message bytes a loom `UnsafeCell` (the host writes them with
//! plain copies, the device reads them with plain loads), so loom reports any interleaving in which a
//! reader reads a cell before the host finished writing it or the host rewrites a cell
//! a reader is still reading. Each model checks that every message the host sent is
//! received exactly once and whole (one reader: in order), and that a reader reports
//! the end of the stream only when every position below the final count was claimed.
//!
//! **Found by these models** (both fixed): (1) the poll lock's compare-and-swap orders
//! nothing on CUDA, so two polls were unordered and `cached_head` could go backwards:
//! lane 0 polls (`head` 1) and stores `cached_head = 1`, claims and takes message 0;
//! lane 1, left over, polls alone, its relaxed CAS reading lane 0's release of
//! `polling` without synchronizing, reads `cached_head` 0 and `head` 1 and stores 1,
//! then polls again, sees `closed`, re-reads `head` 2, stores `cached_head = 2` and
//! releases `seen = CLOSED`. Nothing orders lane 0's store of 1 before lane 1's of 2,
//! so it may come last in `cached_head`'s modification order: lane 1 acquires `seen`
//! CLOSED, acquires `cached_head` 1, finds its tail 1 not below it and returns 0 with
//! message 1 never taken. Now the lock word is read again with acquire after the
//! compare-and-swap (`gpuio_impl_queue_lock_poll`). (2) With one cell (capacity 1),
//! a ready word of 1 meant both "message 0 is there" and "free for position 1": the Sender
//! overwrote its own unread message (the first model with `cells = 1` fails at once).
//! `QueueShared::create` now gives a queue to the device two cells at least.
//!
//! **Orderings shown necessary** (each weakened to relaxed, or the step removed, one
//! at a time, a model here fails): the poll's acquire of the host's `head` (a reader
//! reads a cell the host is still writing); the re-read of `closed` with acquire and
//! of `head` after it when `closed` was seen relaxed (without either, a reader ends
//! the stream below the final count); the acquire of the poll lock; the poller's
//! release of `cached_head` (a cell read before it was written) and of `seen` (end of
//! stream below the final count); the claiming lane's acquire of a non-zero `seen`
//! (the same); each lane's own acquire of `cached_head` before it reads its cell (the
//! second lane reads a cell the host is writing); the device's release of the free
//! word when it frees a cell, and the host look-ahead's acquire of the free word it
//! needs and of those beyond it (the host rewrites a cell a reader is still copying);
//! the host's release of `head` and of `closed`. **Not shown:** the host's release of
//! a cell's stamp (every reader reaches a position through `cached_head`, so the
//! release of `head` already orders the cell; `gpuio_impl_queue_recv`'s acquire of
//! the stamp then orders nothing more either); the claiming lane's acquire of
//! `cached_head` when `seen` is set (after the acquire of `seen`, coherence alone gives
//! it the final count); and the acquires of `seen` and `cached_head` in
//! `gpuio_impl_queue_recv`, whose one reader here is also the only poller.
//!
//! Modelled: one ring of two cells; the Sender, retrying a full ring (two to four
//! messages, then `close`); the poll lock and the poll, with its credits; a warp of
//! two lanes as two threads (`_recv_group`: the first lane takes up to two credits
//! and as many positions with a fetch-add of the tail, or, finding no credit with the
//! tail below `cached_head`, looks again; the claim
//! reaches the second lane through a shuffle that orders nothing, each lane waits on
//! its own acquire of `cached_head`, takes and frees its cell; lanes left over go on
//! as a smaller group; the lanes reconverge before each call); two one-lane warps, one
//! waiting and one calling `gpuio_try_recv`; one reader that looks at `len` before it
//! claims (`_recv`: a credit, then its position by compare-and-swap, the credit given
//! back when that fails); a one-lane warp reading two rings, one Sender each
//! (`_recv_group` over `rings`: its own ring first, then the other; the end only when
//! both are closed and at their end; `_poll_rings`). Not modelled: `closing` and `-ESHUTDOWN`, deadlines (a wait is a
//! yield; a lane's bounded wait for `cached_head` never times out here), the pauses'
//! lengths, `-EMSGSIZE` (the reader has room for every message), a
//! warp of two lanes on reused cells and two waiting warps (with three threads
//! spinning, loom's paths outgrow its budget), two `_recv` readers racing for one
//! position, `_recv` over several rings, two host threads sending at once (the model's
//! one host thread sends on ring 0, then on ring 1; the rings share no word).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p gpuio-core --lib --release loom`.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};
use loom::sync::Arc;
use std::sync::atomic::Ordering;

use super::sender::{close, send_next, Flag, Outbox, SendError};
use crate::abi::{cell, queue_seen};
use crate::memory::MemoryError;

/// Longest message of the model (bytes).
const MAX: usize = 2;

impl Flag for AtomicU32 {
    fn store(&self, value: u32, order: Ordering) {
        AtomicU32::store(self, value, order)
    }
}

/// A queue to the device: its one ring's cells, the host's `QueueControl` and the
/// Sender's count (shared or host-private), and the device-local `QueueRing` and
/// `QueueCredits`.
struct Queue {
    cells: u32,
    /// Messages the host sends (a constant of the model, for its checks).
    total: u64,
    /// `CellHeader::stamp`, per cell.
    stamp: Vec<AtomicU64>,
    /// `Queue::frees`, per cell.
    frees: Vec<AtomicU64>,
    /// The message bytes, per cell.
    bytes: Vec<UnsafeCell<[u8; MAX]>>,
    /// `QueueControl::{head, closed}`.
    head: AtomicU64,
    closed: AtomicU32,
    /// `QueueShared::tail`: the Sender's next position.
    sent: AtomicU64,
    /// `QueueRing::{tail, cached_head, polling, seen}`.
    tail: AtomicU64,
    cached_head: AtomicU64,
    polling: AtomicU32,
    seen: AtomicU32,
    /// `QueueCredits::available`.
    credits: AtomicI64,
}

impl Outbox for Queue {
    type Word = AtomicU64;
    type Flag = AtomicU32;
    fn cells(&self) -> u32 {
        self.cells
    }
    fn name(&self) -> &str {
        "model"
    }
    fn stamp(&self, pos: u64) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.stamp[self.index(pos)])
    }
    fn free_word(&self, pos: u64) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.frees[self.index(pos)])
    }
    fn write_message(&self, pos: u64, msg: &[u8]) -> Result<(), MemoryError> {
        let i = self.index(pos);
        let mut bytes = [0; MAX];
        bytes[..msg.len()].copy_from_slice(msg);
        // SAFETY: the Sender writes a cell only once it acquired the device's free of
        // it (or it was never used); loom checks that every device read of the cell
        // happens before.
        self.bytes[i].with_mut(|p| unsafe { *p = bytes });
        Ok(())
    }
    fn head_word(&self) -> Result<&AtomicU64, MemoryError> {
        Ok(&self.head)
    }
    fn closed_word(&self) -> Result<&AtomicU32, MemoryError> {
        Ok(&self.closed)
    }
    fn sent_word(&self) -> &AtomicU64 {
        &self.sent
    }
    fn note_violation(&self, what: String) {
        panic!("the host saw a violation: {what}");
    }
}

/// Message `seq`: `seq % MAX + 1` bytes, each naming it.
fn message(seq: u8) -> Vec<u8> {
    let len = usize::from(seq) % MAX + 1;
    (0..len as u8).map(|i| seq << 4 | i).collect()
}

/// What a device reader got.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Got {
    Message(Vec<u8>),
    /// 0: the end of the stream.
    End,
    /// `-EPROTO` (a cell that is not the message it must be).
    Proto,
    /// `-EMSGSIZE` (the next message is longer than the reader's buffer).
    TooLong,
    /// `-EAGAIN` (`gpuio_try_recv`: nothing there now).
    Again,
}

impl Queue {
    fn new(cells: u32, total: u8) -> Arc<Self> {
        let n = cells as usize;
        Arc::new(Self {
            cells,
            total: u64::from(total),
            stamp: (0..n).map(|_| AtomicU64::new(0)).collect(),
            // Lap 0: cell p is free for position p.
            frees: (0..n).map(|p| AtomicU64::new(p as u64)).collect(),
            bytes: (0..n).map(|_| UnsafeCell::new([0; MAX])).collect(),
            head: AtomicU64::new(0),
            closed: AtomicU32::new(0),
            sent: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            cached_head: AtomicU64::new(0),
            polling: AtomicU32::new(0),
            seen: AtomicU32::new(0),
            credits: AtomicI64::new(0),
        })
    }

    fn index(&self, pos: u64) -> usize {
        (pos % u64::from(self.cells)) as usize
    }

    // ---------------------------------------------------------------- host

    /// The host program: a [`Sender`](super::Sender) sending messages `0..total` with
    /// its own code ([`send_next`]; a full queue is tried again, as `send` does),
    /// then closing.
    fn host(&self) {
        let mut free_upto = 0;
        for seq in 0..self.total as u8 {
            loop {
                match send_next(self, &mut free_upto, &message(seq)) {
                    Ok(()) => break,
                    Err(SendError::Full) => loom::thread::yield_now(),
                    Err(e) => panic!("the host's send: {e}"),
                }
            }
        }
        close(self);
    }

    // ---------------------------------------------------------------- device

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

    /// `gpuio_impl_queue_poll`, less `closing`: one reader at a time
    /// ([`Queue::lock_poll`]) reads `closed` (relaxed), the host's `head`
    /// (acquire), `closed` again with acquire if it was set and then `head` again,
    /// releases `cached_head` if it is larger and then adds the difference to the
    /// credits (a relaxed fetch-add: CUDA's `atomicAdd`), and releases `seen` if the
    /// queue closed.
    fn poll(&self) -> bool {
        if !self.lock_poll() {
            return false;
        }
        let maybe_closed = self.closed.load(Ordering::Relaxed) != 0;
        let mut head = self.head.load(Ordering::Acquire);
        let closed = maybe_closed && self.closed.load(Ordering::Acquire) != 0;
        if closed {
            head = self.head.load(Ordering::Acquire);
        }
        let had = self.cached_head.load(Ordering::Relaxed);
        if head > had {
            self.cached_head.store(head, Ordering::Release);
            self.credits
                .fetch_add((head - had) as i64, Ordering::Relaxed);
        }
        if closed {
            self.seen.store(queue_seen::CLOSED, Ordering::Release);
        }
        self.polling.store(0, Ordering::Release);
        true
    }

    /// `gpuio_impl_queue_take_credits`: up to `k` credits, after a look; one
    /// relaxed fetch-add of `-k`, what was not there given back.
    fn take_credits(&self, k: u64) -> u64 {
        let looked = self.credits.load(Ordering::Relaxed);
        if looked <= 0 {
            return 0;
        }
        let k = k.min(looked as u64);
        let old = self.credits.fetch_sub(k as i64, Ordering::Relaxed);
        let kept = old.clamp(0, k as i64) as u64;
        if kept < k {
            self.credits.fetch_add((k - kept) as i64, Ordering::Relaxed);
        }
        kept
    }

    /// `gpuio_impl_queue_take`: the stamp and the payload loaded with plain loads
    /// (the stamp as a relaxed one: the host stores it atomically), then checked.
    fn take(&self, pos: u64) -> Got {
        let i = self.index(pos);
        let stamp = self.stamp[i].load(Ordering::Relaxed);
        let len = cell::len(stamp);
        // SAFETY: the reader claimed `pos` below a `cached_head` it acquired; loom
        // checks that the host's writes of the cell happen before.
        let bytes = self.bytes[i].with(|p| unsafe { *p });
        if !cell::holds(stamp, pos) || len as usize > MAX {
            return Got::Proto;
        }
        Got::Message(bytes[..len as usize].to_vec())
    }

    /// `gpuio_impl_queue_free`: frees the cell of `pos` for the host,
    /// `frees[pos % cells] = pos + cells` (release).
    fn free(&self, pos: u64) {
        self.frees[self.index(pos)].store(pos + u64::from(self.cells), Ordering::Release);
    }

    /// End of the stream, as the reader that decides it saw it: no position below the
    /// final count is left unclaimed.
    fn check_end(&self, h: u64, head: u64) {
        assert!(
            h >= self.total && head == self.total,
            "end of stream at position {h} (cached head {head}) of {}",
            self.total
        );
    }

    /// `gpuio_impl_queue_recv_group` with `wait` (no deadline) for lane `lane` of the
    /// group `g` (a mask of the warp's lanes calling together).
    /// `shuffles`: the lane's count of shuffles so far ([`Warp::broadcast`]).
    fn recv_group(
        &self,
        warp: &Warp,
        lane: u32,
        shuffles: &mut u64,
        mut g: u32,
        wait: bool,
    ) -> Got {
        let mut polled = false;
        loop {
            let lead = g.trailing_zeros();
            let rank = (g & ((1 << lane) - 1)).count_ones();
            let count = u64::from(g.count_ones());
            let (mut base, mut got, mut seen, mut busy) = (0, 0, 0, false);
            if rank == 0 {
                seen = self.seen.load(Ordering::Relaxed);
                if seen != 0 {
                    seen = self.seen.load(Ordering::Acquire);
                }
                got = self.take_credits(count);
                if got != 0 {
                    base = self.tail.fetch_add(got, Ordering::Relaxed);
                } else {
                    let head = self.cached_head.load(if seen != 0 {
                        Ordering::Acquire
                    } else {
                        Ordering::Relaxed
                    });
                    let h = self.tail.load(Ordering::Relaxed);
                    busy = h < head;
                    if !busy && seen & queue_seen::CLOSED != 0 {
                        self.check_end(h, head);
                    }
                }
            }
            // The shuffles of `busy`, `got`, then `base` or `seen`, as one.
            let v = warp.broadcast(
                (lane, shuffles),
                g,
                lead,
                got | base << 8 | u64::from(seen) << 16 | u64::from(busy) << 24,
            );
            (got, base, seen) = (v & 0xff, (v >> 8) & 0xff, (v >> 16) as u32 & 0xff);
            if v >> 24 != 0 {
                // Published positions but no credit (another reader holds them for
                // an instant): the group looks again.
                loom::thread::yield_now();
                continue;
            }
            if got != 0 {
                // The ballot of the lanes left over.
                let left = lanes(g)
                    .filter(|&l| u64::from((g & ((1 << l) - 1)).count_ones()) >= got)
                    .fold(0, |m, l| m | 1 << l);
                if u64::from(rank) < got {
                    let pos = base + u64::from(rank);
                    // Each lane's own acquire of a `cached_head` beyond its position.
                    while self.cached_head.load(Ordering::Acquire) <= pos {
                        loom::thread::yield_now();
                    }
                    let r = self.take(pos);
                    self.free(pos);
                    return r;
                }
                g = left;
                polled = false;
                continue;
            }
            if seen & queue_seen::CLOSED != 0 {
                return Got::End;
            }
            let polled_now = rank == 0 && (!polled || wait) && self.poll();
            if !polled {
                polled = true;
                continue;
            }
            if !wait {
                return Got::Again;
            }
            // The wait: the lanes' pause (what `polled_now` decides is only how long).
            let _ = polled_now;
            loom::thread::yield_now();
        }
    }
}

impl Queue {
    /// `gpuio_impl_queue_recv` with `wait` (no deadline) and room for `cap` bytes: a
    /// reader whose buffer may be too small looks at the next message's `len` before
    /// it claims the position.
    fn recv(&self, cap: usize) -> Got {
        let mut polled = false;
        loop {
            let mut seen = self.seen.load(Ordering::Relaxed);
            if seen != 0 {
                seen = self.seen.load(Ordering::Acquire);
            }
            let h = self.tail.load(Ordering::Relaxed);
            let head = self.cached_head.load(Ordering::Acquire);
            if h < head {
                let i = self.index(h);
                let stamp = self.stamp[i].load(Ordering::Acquire);
                if !cell::holds(stamp, h) {
                    if self.tail.load(Ordering::Relaxed) != h {
                        continue;
                    }
                    loom::thread::yield_now();
                    continue;
                }
                // The stamp for `h` was acquired: its length is `h`'s unless another
                // reader took `h` meanwhile (the tail, read after it, says).
                let len = cell::len(stamp);
                if self.tail.load(Ordering::Relaxed) != h {
                    continue; // taken meanwhile: the length may be the next lap's
                }
                if len as usize > MAX {
                    return Got::Proto;
                }
                if len as usize > cap {
                    return Got::TooLong;
                }
                // A credit, then the position itself.
                if self.take_credits(1) == 0 {
                    loom::thread::yield_now();
                    continue;
                }
                if self
                    .tail
                    .compare_exchange(h, h + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
                {
                    self.credits.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                // SAFETY: as above, and the position is this reader's.
                let bytes = self.bytes[i].with(|p| unsafe { *p });
                self.free(h);
                return Got::Message(bytes[..len as usize].to_vec());
            }
            if seen & queue_seen::CLOSED != 0 {
                self.check_end(h, head);
                return Got::End;
            }
            let _polled_now = self.poll();
            if !polled {
                polled = true;
                continue;
            }
            loom::thread::yield_now();
        }
    }
}

/// The lanes of mask `g`, lowest first.
fn lanes(g: u32) -> impl Iterator<Item = u32> {
    (0..32).filter(move |l| g & 1 << l != 0)
}

/// A warp's shuffles between its two lanes of the model, which order nothing: the
/// leader's value reaches the other lane through a relaxed word (tagged with the
/// shuffle's number), and the other lane's relaxed acknowledgement lets the leader
/// reuse the word.
struct Warp {
    value: AtomicU64,
    ack: AtomicU64,
}

impl Warp {
    fn new() -> Self {
        Self {
            value: AtomicU64::new(0),
            ack: AtomicU64::new(0),
        }
    }

    /// `gpuio_warp_broadcast_64(g, v, lead)` from lane `lane` (`v` below 2^32);
    /// `shuffles` counts this lane's shuffles (the lanes make the same ones).
    fn broadcast(&self, (lane, shuffles): (u32, &mut u64), g: u32, lead: u32, v: u64) -> u64 {
        if g.count_ones() == 1 {
            return v;
        }
        *shuffles += 1;
        let n = *shuffles;
        if lane == lead {
            while self.ack.load(Ordering::Relaxed) != n - 1 {
                loom::thread::yield_now();
            }
            self.value.store(n << 32 | v, Ordering::Relaxed);
            v
        } else {
            loop {
                let w = self.value.load(Ordering::Relaxed);
                if w >> 32 == n {
                    self.ack.store(n, Ordering::Relaxed);
                    return w & 0xffff_ffff;
                }
                loom::thread::yield_now();
            }
        }
    }

    /// The lanes of `g` meet (the kernel's `__syncwarp(g)`, here ordering nothing):
    /// a shuffle, and the leader waits for the other lane's acknowledgement.
    fn sync(&self, (lane, shuffles): (u32, &mut u64), g: u32) {
        let lead = g.trailing_zeros();
        self.broadcast((lane, shuffles), g, lead, 0);
        if g.count_ones() > 1 && lane == lead {
            while self.ack.load(Ordering::Relaxed) != *shuffles {
                loom::thread::yield_now();
            }
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    // Two preemptions at most, whatever `.ci/loom` asks of the other models: at three
    // the warp models take minutes; every failure recorded above shows at two.
    b.preemption_bound = Some(b.preemption_bound.map_or(2, |p| p.min(2)));
    // Three threads that spin (the host on a full ring, the readers on an empty one)
    // take more steps than loom's default allows one execution.
    if std::env::var_os("LOOM_MAX_BRANCHES").is_none() {
        b.max_branches = 20_000;
    }
    b.check(f);
}

/// Every message came exactly once, whole.
fn check(got: Vec<Vec<u8>>, total: u8) {
    let mut got = got;
    got.sort();
    let mut want: Vec<Vec<u8>> = (0..total).map(message).collect();
    want.sort();
    assert_eq!(got, want, "the messages received");
}

/// The messages of a reader's calls, and that it ended with the end of the stream.
fn messages(results: Vec<Got>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let last = results.len() - 1;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Got::Message(m) if i < last => out.push(m),
            Got::End if i == last => {}
            r => panic!("call {i} of {}: {r:?}", last + 1),
        }
    }
    out
}

/// One warp of two lanes calling `gpuio_recv` together `calls` times (`calls[lane]`:
/// each call's mask), beside the host sending `total` messages on `cells` cells.
fn warp_of_two(cells: u32, total: u8, calls: [&'static [u32]; 2]) {
    model(move || {
        let q = Queue::new(cells, total);
        let warp = Arc::new(Warp::new());
        let lanes: Vec<_> = (0..2u32)
            .map(|lane| {
                let (q, warp) = (q.clone(), warp.clone());
                loom::thread::spawn(move || {
                    let mut shuffles = 0;
                    calls[lane as usize]
                        .iter()
                        .map(|&g| {
                            // The lanes of a call reconverge first.
                            warp.sync((lane, &mut shuffles), g);
                            q.recv_group(&warp, lane, &mut shuffles, g, true)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        q.host();
        let mut got = Vec::new();
        for l in lanes {
            got.extend(messages(l.join().unwrap()));
        }
        check(got, total);
    });
}

#[test]
fn two_lanes_of_a_warp_take_the_messages_one_claim_gave_them() {
    // Two cells, two messages: the first lane may claim both positions at once, and
    // the second lane reads its cell on its own acquire of `cached_head`. Then both
    // lanes see the end of the stream together.
    warp_of_two(2, 2, [&[0b11, 0b11], &[0b11, 0b11]]);
}

/// `readers` threads of their own warps (one lane each), each receiving until the
/// end of the stream (`cap`: with `gpuio_impl_queue_recv` and this much room, else
/// with `gpuio_impl_queue_recv_group`), beside the host sending `total` messages on
/// `cells` cells.
fn readers(cells: u32, total: u8, readers: usize, cap: Option<usize>) {
    model(move || {
        let q = Queue::new(cells, total);
        let threads: Vec<_> = (0..readers)
            .map(|_| {
                let q = q.clone();
                loom::thread::spawn(move || {
                    let warp = Warp::new();
                    let mut got = Vec::new();
                    loop {
                        let r = match cap {
                            Some(cap) => q.recv(cap),
                            None => q.recv_group(&warp, 0, &mut 0, 0b1, true),
                        };
                        let end = r == Got::End;
                        got.push(r);
                        if end {
                            return got;
                        }
                    }
                })
            })
            .collect();
        q.host();
        let mut got = Vec::new();
        for t in threads {
            got.extend(messages(t.join().unwrap()));
        }
        if readers == 1 {
            let want: Vec<Vec<u8>> = (0..total).map(message).collect();
            assert_eq!(got, want, "one reader takes the messages in order");
        }
        check(got, total);
    });
}

#[test]
fn two_warps_polling_in_turn_take_every_message_once() {
    // One warp (one lane) receives until the end of the stream; another calls
    // `gpuio_try_recv` twice (waiting readers beside the host outgrow loom's
    // budget). Their polls take turns on the poll lock.
    model(|| {
        let q = Queue::new(2, 2);
        let waiting = {
            let q = q.clone();
            loom::thread::spawn(move || {
                let warp = Warp::new();
                let mut got = Vec::new();
                loop {
                    let r = q.recv_group(&warp, 0, &mut 0, 0b1, true);
                    if r == Got::End {
                        return got;
                    }
                    got.push(r);
                }
            })
        };
        let trying = {
            let q = q.clone();
            loom::thread::spawn(move || {
                let warp = Warp::new();
                (0..2)
                    .map(|_| q.recv_group(&warp, 0, &mut 0, 0b1, false))
                    .collect::<Vec<_>>()
            })
        };
        q.host();
        let mut got = Vec::new();
        for r in waiting
            .join()
            .unwrap()
            .into_iter()
            .chain(trying.join().unwrap())
        {
            match r {
                Got::Message(m) => got.push(m),
                Got::Again | Got::End => {}
                r => panic!("a reader got {r:?}"),
            }
        }
        check(got, 2);
    });
}

#[test]
fn a_reader_that_looks_before_it_claims_takes_reused_cells_in_order() {
    // Four messages on two cells: the host's look-ahead finds the second cell freed
    // while it writes the third message, and writes the fourth there without
    // looking again.
    readers(2, 4, 1, Some(MAX));
}

/// `gpuio_impl_queue_recv_group` on a queue of several rings, for a one-lane warp
/// whose own ring is `first` (`warp % rings`): it takes a credit from the first ring
/// that has one, its own first; finding none while some ring's tail is below its
/// cached head, it looks again; it reports the end of the stream only when every
/// ring is closed (`seen`, acquired) and at its end; otherwise it polls
/// (`gpuio_impl_queue_poll_rings`: every ring not seen closed on its first poll, then
/// its own and one other in turn).
fn recv_rings(rings: &[Arc<Queue>], first: usize) -> Got {
    let n = rings.len();
    let (mut polled, mut swept, mut turn) = (false, false, 0usize);
    loop {
        let (mut busy, mut all_closed) = (false, true);
        let mut ends = Vec::with_capacity(n);
        for i in 0..n {
            let q = &rings[(first + i) % n];
            let mut seen = q.seen.load(Ordering::Relaxed);
            if seen != 0 {
                seen = q.seen.load(Ordering::Acquire);
            }
            if q.take_credits(1) != 0 {
                let pos = q.tail.fetch_add(1, Ordering::Relaxed);
                while q.cached_head.load(Ordering::Acquire) <= pos {
                    loom::thread::yield_now();
                }
                let r = q.take(pos);
                q.free(pos);
                return r;
            }
            let head = q.cached_head.load(if seen != 0 {
                Ordering::Acquire
            } else {
                Ordering::Relaxed
            });
            let h = q.tail.load(Ordering::Relaxed);
            busy |= h < head;
            all_closed &= seen & queue_seen::CLOSED != 0;
            ends.push((i, h, head));
        }
        if busy {
            loom::thread::yield_now();
            continue;
        }
        if all_closed {
            for (i, h, head) in ends {
                rings[(first + i) % n].check_end(h, head);
            }
            return Got::End;
        }
        // `gpuio_impl_queue_poll_rings`.
        let other = if n > 1 { 1 + turn % (n - 1) } else { 0 };
        turn += 1;
        for i in 0..n {
            if swept && i != 0 && i != other {
                continue;
            }
            let q = &rings[(first + i) % n];
            if q.seen.load(Ordering::Relaxed) & queue_seen::CLOSED != 0 {
                continue;
            }
            q.poll();
        }
        swept = true;
        if !polled {
            polled = true;
            continue;
        }
        loom::thread::yield_now();
    }
}

#[test]
fn a_reader_of_two_rings_takes_both_and_ends_only_when_both_ended() {
    // Two rings of two cells, one Sender each, run one after the other by one host
    // thread (ring 1 sends its two messages while the reader may already have found
    // ring 0 closed and drained); the reader's own ring is 1, so it takes ring 0's
    // message by looking at a ring not its own.
    model(|| {
        let rings = [Queue::new(2, 1), Queue::new(2, 2)];
        let reader = {
            let rings = rings.clone();
            loom::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let r = recv_rings(&rings, 1);
                    let end = r == Got::End;
                    got.push(r);
                    if end {
                        return got;
                    }
                }
            })
        };
        rings[0].host();
        rings[1].host();
        let mut got = messages(reader.join().unwrap());
        got.sort();
        let mut want = vec![message(0), message(0), message(1)];
        want.sort();
        assert_eq!(got, want, "the messages of both rings");
    });
}
