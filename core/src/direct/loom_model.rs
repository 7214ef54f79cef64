//! Loom models of the direct transport's rings (`.ci/loom`). The device side mirrors
//! `gpuio/direct.h` step for step (`gpuio_direct_acquire` through the turns of
//! [`crate::turns_model`], `_fill`, `_publish`, `_reap`, `_complete`, `_poll`, the
//! abandon at a deadline and `_release`); the kernel's SQPOLL thread is a model of
//! `io_submit_sqes` (below); the host's part is the waker's own look at the SQ words
//! ([`SqWords::look`] and [`SqWords::violation`], `waker.rs`). The SQEs, the
//! `sq_array` entries, the CQEs, each slot's `res` and each slot's staging chunk are
//! loom `UnsafeCell`s (the device writes them with plain or relaxed stores, the kernel
//! reads them with `READ_ONCE`), so loom reports any interleaving in which an SQ entry
//! or a staging chunk is rewritten while the kernel may still read it, the kernel
//! reads an SQE before it was published, a CQE is read before it was posted or
//! rewritten before it was reaped, or a waiter reads its result before it was stored.
//! Each model checks that every request is answered exactly once, with its own result.
//!
//! **The kernel's SQPOLL thread** (`io_sqring_entries`, `io_get_sqe`,
//! `io_submit_state_end`, `io_commit_sqring` in `io_uring/io_uring.c`): it acquires
//! the SQ tail, reads at most `sq_entries` entries beyond its own cached head
//! (`sq_array`, then the SQE), runs each, posts the completions (each CQE written, then
//! the CQ tail released) and only then releases the SQ head. That is the order of a
//! request that completes inline (a NOP, a read from the page cache): its CQE is
//! posted by `io_submit_state_end`, before `io_commit_sqring`. A request that goes
//! asynchronous is the other order, the SQ head released before its CQE
//! ([`Kernel::Async`]). Before it writes a CQE the kernel checks the room left from
//! the CQ head with `READ_ONCE`, whose control dependency orders its CQE stores after
//! it; loom has no control dependencies, so here that read is an acquire. A full CQ is
//! a failure of the model: the CQ holds twice the slots so that an honest device
//! never fills it (`host.rs`).
//!
//! Each ordering below is needed: built with it weakened to relaxed (a fence: left
//! out), a model here fails (checked one at a time): the submitter's release of
//! `sq_ready` and the publisher's acquire fence after its loads of the stamps, the
//! publisher's release of the SQ tail, the reaper's acquire of the CQ tail, the
//! reaper's release of `done` and the waiter's acquire of it, the fence after the
//! publish lock's unlock (without it a submitter's stamp is left unpublished when the
//! lock holder leaves, and the kernel spins past loom's branch limit), and the waker's
//! acquire of the SQ tail (else the published count it reads after may be older than
//! the tail). Not shown: the release of the CQ head, which the kernel needs before it
//! reuses a CQE; no model here posts more completions than the CQ holds (that needs a
//! third request, past loom's budget).
//!
//! Modelled: slots taken by turns (and an abandoned slot taken over once its answer
//! was reaped), SQ positions taken at submit, the SQE and `sq_array` entry written and
//! `sq_ready` stamped, the publish lock (test, try, unlock, fence, look again), the
//! reap lock and a reaper handing each CQE's `res` to its slot, waiters that reap, a
//! waiter that abandons its slot after one look, the kernel's SQPOLL thread in both
//! orders, the waker's look, a marked write's gate (taken before the fill, given back
//! by the reaper with the completion; uncontended here: a second submitter spinning
//! on it while the kernel and a reaper run is past what loom finishes). Not
//! modelled: `closing` and the `-ESHUTDOWN` NOP, deadlines and passing over a stuck
//! slot (clock-driven), requests the rulebook refuses (a NOP like any other here),
//! warps, the SQPOLL thread's sleep and wake-up,
//! the counters but `submitted` (the published count the waker reads) and `completed`.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p gpuio-core --lib --release loom`.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use loom::sync::Arc;

use super::waker::SqWords;
use crate::abi::{slot_state, turn_word};
use crate::turns_model::Turns;

/// `GPUIO_DIRECT_SEQ_SHIFT`, `GPUIO_DIRECT_SEQ_POS`.
const SEQ_SHIFT: u32 = super::REFUSED_SHIFT;
const SEQ_POS: u64 = (1 << SEQ_SHIFT) - 1;
/// `GPUIO_DIRECT_COMPLETE_BATCH`: CQEs a reaper completes with one fence (two, so that
/// a round of two CQEs is one batch and a round of three two).
const COMPLETE_BATCH: usize = 2;
/// `GPUIO_DIRECT_PUBLISH_BATCH`: stamps a lone publishing lane loads before it looks
/// at any (two, so that two requests' stamps are one batch).
const PUBLISH_BATCH: u64 = 2;

/// The fields of an SQE the model reads back: `user_data`, the staging chunk it
/// names (`addr`) and what the submitter staged there (`len`, here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sqe {
    user_data: u64,
    chunk: u32,
    staged: u64,
}

/// A CQE: `user_data` and `res`.
#[derive(Clone, Copy, Debug, Default)]
struct Cqe {
    user_data: u64,
    res: i32,
}

/// When the kernel posts a request's completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// Inline: the CQEs of a batch before its SQ head (`io_submit_state_end`, then
    /// `io_commit_sqring`).
    Inline,
    /// Asynchronous: the SQ head first, then the request runs and its CQE is posted.
    Async,
}

/// One direct channel: its ring (shared with the kernel), the device-local
/// `DirectState` and `DirectSlot[slots]`, and the staging chunks.
struct Ring {
    slots: u64,
    // The ring: sq_entries == slots, cq_entries == 2 × slots.
    sq_head: AtomicU32,
    sq_tail: AtomicU32,
    sq_array: Vec<UnsafeCell<u32>>,
    sqes: Vec<UnsafeCell<Sqe>>,
    cq_head: AtomicU32,
    cq_tail: AtomicU32,
    cqes: Vec<UnsafeCell<Cqe>>,
    /// `Channel::stats.submitted` (the waker's [`PublishedWord`](super::PublishedWord))
    /// and `.completed`.
    submitted: AtomicU64,
    completed: AtomicU64,
    // DirectState (`reserve` is in `turns`).
    turns: Turns,
    sq_reserve: AtomicU64,
    published: AtomicU64,
    publish_lock: AtomicU32,
    reap_lock: AtomicU32,
    reaped: AtomicU64,
    st_completed: AtomicU64,
    /// One of `write_gates` (the one file the gated requests here write).
    gate: AtomicU32,
    // DirectSlot[slots] (`turn` is in `turns`).
    done: Vec<AtomicU64>,
    sq_ready: Vec<AtomicU64>,
    res: Vec<UnsafeCell<i32>>,
    /// `DirectSlot::gate`: written by the submitter before its stamp, read by the
    /// reaper that completes the request.
    slot_gate: Vec<UnsafeCell<u32>>,
    /// Each slot's staging chunk.
    staging: Vec<UnsafeCell<u64>>,
}

impl Ring {
    fn new(slots: usize) -> Arc<Self> {
        let cq = 2 * slots;
        Arc::new(Self {
            slots: slots as u64,
            sq_head: AtomicU32::new(0),
            sq_tail: AtomicU32::new(0),
            sq_array: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            sqes: (0..slots)
                .map(|_| UnsafeCell::new(Sqe::default()))
                .collect(),
            cq_head: AtomicU32::new(0),
            cq_tail: AtomicU32::new(0),
            cqes: (0..cq).map(|_| UnsafeCell::new(Cqe::default())).collect(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            turns: Turns::new(slots),
            sq_reserve: AtomicU64::new(0),
            published: AtomicU64::new(0),
            publish_lock: AtomicU32::new(0),
            reap_lock: AtomicU32::new(0),
            reaped: AtomicU64::new(0),
            st_completed: AtomicU64::new(0),
            gate: AtomicU32::new(0),
            done: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            sq_ready: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            res: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            slot_gate: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            staging: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
        })
    }

    fn sq_entries(&self) -> u32 {
        self.slots as u32
    }

    fn cq_entries(&self) -> u32 {
        2 * self.slots as u32
    }

    /// `gpuio_direct_slot_at`: slot `index % slots`.
    fn at(&self, index: u64) -> usize {
        (index % self.slots) as usize
    }

    // ---------------------------------------------------------------- device

    /// `gpuio_direct_trylock`: a CAS with no ordering (CUDA's `atomicCAS`), then a
    /// sequentially consistent fence.
    fn trylock(lock: &AtomicU32) -> bool {
        if lock
            .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        fence(Ordering::SeqCst);
        true
    }

    /// `gpuio_direct_unlock`.
    fn unlock(lock: &AtomicU32) {
        lock.store(0, Ordering::Release);
    }

    /// The walk of `gpuio_direct_publish_round` by a lone lane (warps are not
    /// modelled): the end of the run of stamped positions from `start`, the stamps
    /// loaded `PUBLISH_BATCH` at a time (relaxed, every load before any is used), then
    /// one acquire fence for all of them.
    fn stamped_from(&self, start: u64, entries: u64) -> u64 {
        let mut p = start;
        loop {
            let seen: Vec<u64> = (p..p + PUBLISH_BATCH)
                .map(|q| {
                    if q - start < entries {
                        self.sq_ready[self.at(q)].load(Ordering::Relaxed)
                    } else {
                        0
                    }
                })
                .collect();
            let n = seen
                .iter()
                .zip(p..)
                .take_while(|&(&stamp, q)| q - start < entries && stamp == q + 1)
                .count() as u64;
            p += n;
            if n < PUBLISH_BATCH {
                break;
            }
        }
        if p != start {
            fence(Ordering::Acquire);
        }
        p
    }

    /// `gpuio_direct_publish` and its round, by a lone lane: whoever holds the
    /// publish lock advances the SQ tail over consecutive stamped positions; the
    /// lock's last holder looks again, after its unlock and a fence, at the first
    /// position it did not publish.
    fn publish(&self) {
        let entries = u64::from(self.sq_entries());
        loop {
            if self.publish_lock.load(Ordering::Relaxed) != 0 {
                return;
            }
            if !Self::trylock(&self.publish_lock) {
                return;
            }
            let start = self.published.load(Ordering::Relaxed);
            let p = self.stamped_from(start, entries);
            if p != start {
                self.published.store(p, Ordering::Relaxed);
                self.submitted.store(p, Ordering::Relaxed);
                self.sq_tail.store(p as u32, Ordering::Release);
            }
            Self::unlock(&self.publish_lock);
            fence(Ordering::SeqCst);
            if self.sq_ready[self.at(p)].load(Ordering::Acquire) != p + 1 {
                return;
            }
        }
    }

    /// `gpuio_direct_fill` for the holder of position `pos`, less `closing`: the
    /// staged bytes (the caller's, into its chunk), SQE `pos % slots` with
    /// `user_data = pos`, the next SQ position `q` (CUDA's `atomicAdd`, no ordering),
    /// `sq_array[q % sq_entries]`, the stamp `sq_ready = q + 1` (release), a fence,
    /// then the publish.
    fn submit(&self, pos: u64, staged: u64) {
        self.submit_gated(pos, staged, false);
    }

    /// `gpuio_direct_submit` of a marked write when `gated`: a place in the gate
    /// first (`gpuio_direct_gate_take`, without a deadline: reap, yield, look again),
    /// then `gpuio_direct_fill` with the slot's `gate` written first.
    fn submit_gated(&self, pos: u64, staged: u64, gated: bool) {
        let index = self.at(pos);
        if gated {
            loop {
                let held = self.gate.load(Ordering::Relaxed);
                if held < 1
                    && self
                        .gate
                        .compare_exchange(held, held + 1, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    break;
                }
                self.reap();
                loom::thread::yield_now();
            }
        }
        // SAFETY: the slot is held; loom checks that the reaper's read of the slot's
        // previous request's gate happens before.
        self.slot_gate[index].with_mut(|p| unsafe { *p = u32::from(gated) });
        self.staging[index].with_mut(|p| {
            // SAFETY: the slot is held from its turn until released or abandoned;
            // loom checks that the kernel's use of the chunk for the slot's previous
            // request happens before.
            unsafe { *p = staged }
        });
        let q = self.sq_reserve.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let sqe = Sqe {
            user_data: pos,
            chunk: index as u32,
            staged,
        };
        // SAFETY: SQE `index` is the slot's own; loom checks that the kernel read the
        // slot's previous SQE before.
        self.sqes[index].with_mut(|p| unsafe { *p = sqe });
        let entry = &self.sq_array[(q % u64::from(self.sq_entries())) as usize];
        // SAFETY: an SQ position is taken only by a slot holder (direct.h, "Why the
        // SQ cannot overflow"); loom checks that the kernel read the entry's previous
        // lap before.
        entry.with_mut(|p| unsafe { *p = index as u32 });
        self.sq_ready[self.at(q)].store(q + 1, Ordering::Release);
        fence(Ordering::SeqCst);
        self.publish();
    }

    /// `gpuio_direct_complete_some`: for each `(pos, res)` whose slot is still held
    /// for that position and not answered (nor named earlier in the batch), the
    /// result into its slot; then one release fence; then `done = pos + 1` (relaxed)
    /// for each.
    fn complete_some(&self, batch: &[(u64, i32)]) {
        let answer: Vec<bool> = batch
            .iter()
            .enumerate()
            .map(|(i, &(pos, _))| {
                let index = self.at(pos);
                let t = &self.turns.turns[index];
                t.holder.load(Ordering::Relaxed) == pos / self.slots
                    && turn_word::state(t.word.load(Ordering::Relaxed)) != slot_state::FREE
                    && self.done[index].load(Ordering::Relaxed) != pos + 1
                    && !batch[..i].iter().any(|&(p, _)| p == pos)
            })
            .collect();
        if !answer.contains(&true) {
            return;
        }
        for (&(pos, res), _) in batch.iter().zip(&answer).filter(|(_, a)| **a) {
            let index = self.at(pos);
            // SAFETY: written by the submitter before its stamp; loom checks that the
            // stamp, the SQ tail and the CQ tail carry it here.
            if self.slot_gate[index].with(|p| unsafe { *p }) != 0 {
                // `gpuio_direct_gate_give` (which floors at zero; here a give of a
                // gate not held is a failure of the model).
                let was = self.gate.fetch_sub(1, Ordering::Relaxed);
                assert_eq!(was, 1, "a write gate given back that was not held");
            }
            // SAFETY: the reap-lock holder alone writes `res`, and its waiter reads it
            // after acquiring `done`; loom checks both.
            self.res[index].with_mut(|p| unsafe { *p = res });
        }
        fence(Ordering::Release);
        for (&(pos, _), _) in batch.iter().zip(&answer).filter(|(_, a)| **a) {
            self.done[self.at(pos)].store(pos + 1, Ordering::Relaxed);
        }
    }

    /// `gpuio_direct_reap`: test and try the reap lock, acquire the CQ tail, hand each
    /// CQE to its slot, count, release the CQ head, unlock. On a GPU the lanes of the
    /// warp that holds the lock share the round, each completing its own CQEs as
    /// `complete_some` does, after a warp barrier behind the leader's acquire and
    /// before its release; the model's one thread does every lane's part in turn.
    fn reap(&self) {
        if self.reap_lock.load(Ordering::Relaxed) != 0 {
            return;
        }
        if !Self::trylock(&self.reap_lock) {
            return;
        }

        let mut reaped = self.reaped.load(Ordering::Relaxed);
        let mut head = reaped as u32;
        let tail = self.cq_tail.load(Ordering::Acquire);
        // Nothing new unless the tail is past the head (a tail read below the head
        // is no lap of new CQEs: gpuio/direct.h).
        if tail.wrapping_sub(head) as i32 <= 0 {
            Self::unlock(&self.reap_lock);
            return;
        }
        let mut ok = 0;
        let mut n = 0;
        let mut batch = Vec::new();
        while head != tail && n < self.cq_entries() {
            let c = &self.cqes[(head % self.cq_entries()) as usize];
            // SAFETY: below the CQ tail acquired: the kernel wrote it before; loom
            // checks that it does not write it again before the CQ head released.
            let cqe = c.with(|p| unsafe { *p });
            let pos = cqe.user_data & SEQ_POS;
            let refused = (cqe.user_data >> SEQ_SHIFT) as i32;
            let res = if refused != 0 { -refused } else { cqe.res };
            if res >= 0 {
                ok += 1;
            }
            batch.push((pos, res));
            if batch.len() == COMPLETE_BATCH {
                self.complete_some(&batch);
                batch.clear();
            }
            head = head.wrapping_add(1);
            reaped += 1;
            n += 1;
        }
        self.complete_some(&batch);
        self.reaped.store(reaped, Ordering::Relaxed);
        let completed = self.st_completed.load(Ordering::Relaxed) + ok;
        self.st_completed.store(completed, Ordering::Relaxed);
        self.completed.store(completed, Ordering::Relaxed);
        self.cq_head.store(head, Ordering::Release);
        Self::unlock(&self.reap_lock);
    }

    /// `gpuio_direct_reclaim`: the abandoned request of lap `holder` was answered.
    fn reclaim(&self, index: usize, holder: u64) -> bool {
        self.done[index].load(Ordering::Acquire) == holder * self.slots + index as u64 + 1
    }

    /// `gpuio_direct_acquire`: a position and its slot, by turns; reaps while next in
    /// line (`nudge`).
    fn acquire(&self) -> u64 {
        self.turns
            .acquire_nudging(|i, holder| self.reclaim(i, holder), || self.reap())
    }

    /// `gpuio_direct_poll`: the result of position `pos` once its `done` is there,
    /// reaping if it is not.
    fn poll(&self, pos: u64) -> Option<i32> {
        let index = self.at(pos);
        if self.done[index].load(Ordering::Acquire) != pos + 1 {
            self.reap();
            if self.done[index].load(Ordering::Acquire) != pos + 1 {
                return None;
            }
        }
        // SAFETY: `done` acquired: the reaper stored `res` before it.
        Some(self.res[index].with(|p| unsafe { *p }))
    }

    /// `gpuio_direct_wait` without a deadline.
    fn wait(&self, pos: u64) -> i32 {
        loop {
            if let Some(res) = self.poll(pos) {
                return res;
            }
            loom::thread::yield_now();
        }
    }

    /// A whole request as `gpuio_direct_raw_sqe` makes it: acquire, stage, submit,
    /// wait, release. Returns its position and result.
    fn request(&self, staged: u64) -> (u64, i32) {
        let pos = self.acquire();
        self.submit(pos, staged);
        let res = self.wait(pos);
        self.turns.release(pos);
        (pos, res)
    }

    /// A request whose waiter looks once and then reaches its deadline: its slot is
    /// left ABANDONED (`gpuio_impl_wait_answer`: fence, then the abandon's release).
    /// Whether it was answered in that one look.
    fn request_abandoned(&self, staged: u64) -> Option<i32> {
        let pos = self.acquire();
        self.submit(pos, staged);
        let res = self.poll(pos);
        match res {
            Some(_) => self.turns.release(pos),
            None => self.turns.abandon(pos),
        }
        res
    }

    // ---------------------------------------------------------------- kernel

    /// The kernel's SQPOLL thread until it has completed `n` requests. A request's
    /// result is what its submitter staged (read from the chunk the SQE names), which
    /// must be what the SQE says was staged.
    fn sqpoll(&self, n: usize, kernel: Kernel) {
        let sq_entries = self.sq_entries();
        let mut cached_head = 0u32; // ctx->cached_sq_head
        let mut cq_tail = 0u32; // ctx->cached_cq_tail
        let mut completed = 0;
        while completed < n {
            // io_sqring_entries: smp_load_acquire of the tail, less the cached head;
            // io_submit_sqes takes at most sq_entries of them.
            let tail = self.sq_tail.load(Ordering::Acquire);
            let pending = tail.wrapping_sub(cached_head);
            assert!(
                pending <= sq_entries,
                "the SQ tail is {pending} entries past the kernel's head in a ring of {sq_entries}"
            );
            if pending == 0 {
                loom::thread::yield_now();
                continue;
            }
            let mut sqes = Vec::new();
            for _ in 0..pending {
                // io_get_sqe: READ_ONCE(sq_array[head & mask]), then the SQE.
                let entry = &self.sq_array[(cached_head % sq_entries) as usize];
                // SAFETY: below the tail acquired; loom checks the device wrote it
                // before and does not write it again before this read.
                let index = entry.with(|p| unsafe { *p });
                cached_head = cached_head.wrapping_add(1);
                // SAFETY: as above, for the SQE the entry names.
                sqes.push(self.sqes[index as usize].with(|p| unsafe { *p }));
            }
            let run_all = |sqes: &[Sqe]| -> Vec<Cqe> {
                sqes.iter()
                    .map(|&sqe| Cqe {
                        user_data: sqe.user_data,
                        res: self.run(sqe),
                    })
                    .collect()
            };
            match kernel {
                Kernel::Inline => {
                    // Run as submitted; io_submit_state_end posts the completions,
                    // then io_commit_sqring releases the head.
                    let cqes = run_all(&sqes);
                    self.post(&mut cq_tail, &cqes);
                    self.sq_head.store(cached_head, Ordering::Release);
                }
                Kernel::Async => {
                    // The head first (the SQEs were read: io_init_req copied them),
                    // then the requests run and complete.
                    self.sq_head.store(cached_head, Ordering::Release);
                    let cqes = run_all(&sqes);
                    self.post(&mut cq_tail, &cqes);
                }
            }
            completed += sqes.len();
        }
    }

    /// Runs a request: reads its staging chunk (as a write to a file does) and answers
    /// with what it found.
    fn run(&self, sqe: Sqe) -> i32 {
        // SAFETY: the chunk belongs to the request until its completion is reaped;
        // loom checks that its submitter's write happened before and that no later
        // holder of the slot writes it before this read.
        let staged = self.staging[sqe.chunk as usize].with(|p| unsafe { *p });
        assert_eq!(staged, sqe.staged, "the chunk holds what its SQE says");
        staged as i32
    }

    /// Posts `cqes`: each written where the cached CQ tail points once the CQ head
    /// (acquired: see the module doc) leaves room, then one release of the CQ tail
    /// (`io_commit_cqring`).
    fn post(&self, cq_tail: &mut u32, cqes: &[Cqe]) {
        for c in cqes {
            let head = self.cq_head.load(Ordering::Acquire);
            assert!(
                cq_tail.wrapping_sub(head) < self.cq_entries(),
                "the CQ is full: an honest device never lets it fill"
            );
            let at = &self.cqes[(*cq_tail % self.cq_entries()) as usize];
            // SAFETY: the reaper released the CQ head past this CQE's previous lap;
            // loom checks that its read of it happened before.
            at.with_mut(|p| unsafe { *p = *c });
            *cq_tail = cq_tail.wrapping_add(1);
        }
        self.cq_tail.store(*cq_tail, Ordering::Release);
    }

    // ---------------------------------------------------------------- host

    /// One look of the waker at the SQ words (`waker::run`): the ring's acquires of
    /// the head and tail, the published count's acquire; the violation it would
    /// report.
    fn waker_look(&self) -> Option<String> {
        let look = SqWords::look(
            || self.sq_head.load(Ordering::Acquire),
            || self.sq_tail.load(Ordering::Acquire),
            || Some(self.submitted.load(Ordering::Acquire)),
            self.sq_entries(),
        );
        look.words.and_then(|w| w.violation())
    }

    /// Once every thread is done: every position taken was published, consumed,
    /// completed and reaped, exactly once each.
    fn check_settled(&self, n: u64) {
        assert_eq!(self.sq_reserve.load(Ordering::Relaxed), n, "SQ positions");
        assert_eq!(self.published.load(Ordering::Relaxed), n, "published");
        assert_eq!(self.sq_tail.load(Ordering::Relaxed), n as u32, "SQ tail");
        assert_eq!(self.sq_head.load(Ordering::Relaxed), n as u32, "SQ head");
        assert_eq!(self.cq_tail.load(Ordering::Relaxed), n as u32, "CQ tail");
        assert_eq!(self.completed.load(Ordering::Relaxed), n, "completed");
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// Two device threads submit one request each on two slots while the kernel consumes:
/// the SQ positions may be taken in either order and stamped out of order, and both
/// submitters race for the publish lock. A stamp left unpublished leaves the kernel
/// spinning, which loom reports as a path past its branch limit. The waits run after,
/// on the kernel's thread: loom cannot finish a model in which two threads spin while
/// a third one holds what they wait for.
fn two_submitters(kernel: Kernel) {
    model(move || {
        let ring = Ring::new(2);
        let submitters: Vec<_> = [10u64, 20]
            .into_iter()
            .map(|v| {
                let ring = ring.clone();
                loom::thread::spawn(move || {
                    let pos = ring.acquire();
                    ring.submit(pos, v);
                    (pos, v)
                })
            })
            .collect();
        ring.sqpoll(2, kernel);
        let mut positions = Vec::new();
        for s in submitters {
            let (pos, v) = s.join().unwrap();
            let res = ring.wait(pos);
            ring.turns.release(pos);
            assert_eq!(res, v as i32, "position {pos} answered with its own result");
            positions.push(pos);
        }
        positions.sort_unstable();
        assert_eq!(positions, [0, 1]);
        ring.check_settled(2);
    });
}

#[test]
fn two_submitters_publish_in_position_order_and_each_gets_its_own_result() {
    two_submitters(Kernel::Inline);
}

#[test]
fn two_submitters_with_completions_after_the_sq_head() {
    two_submitters(Kernel::Async);
}

/// One slot: the second request reuses the slot, its SQE, its staging chunk and the
/// one SQ entry, once the first was answered. With `waker`, the host's waker looks at
/// the SQ words once meanwhile and must not take the honest ring for a scribbled one.
fn one_slot_two_laps(kernel: Kernel, waker: bool) {
    model(move || {
        let ring = Ring::new(1);
        let device = {
            let ring = ring.clone();
            loom::thread::spawn(move || [ring.request(7), ring.request(9)])
        };
        let waker = waker.then(|| {
            let ring = ring.clone();
            loom::thread::spawn(move || ring.waker_look())
        });
        ring.sqpoll(2, kernel);
        assert_eq!(device.join().unwrap(), [(0, 7), (1, 9)]);
        if let Some(v) = waker.and_then(|w| w.join().unwrap()) {
            panic!("the waker took an honest ring for a scribbled one: {v}");
        }
        ring.check_settled(2);
    });
}

#[test]
fn a_slot_is_reused_only_once_its_request_was_answered_and_the_waker_sees_an_honest_ring() {
    // The kernel posts the first completion before it releases the SQ head: the
    // device may reuse the slot and publish position 1 while the head still says 0,
    // so the waker sees two entries pending in a ring of one (waker.rs, `SqWords`).
    one_slot_two_laps(Kernel::Inline, true);
}

#[test]
fn a_slot_is_reused_once_answered_when_completions_follow_the_sq_head() {
    one_slot_two_laps(Kernel::Async, false);
}

#[test]
fn an_abandoned_slot_is_taken_over_only_once_its_answer_was_reaped() {
    // Position 0's waiter looks once and gives up; position 1's turn owner reaps for
    // it (nudge) and takes the slot over only once position 0's answer is in it. The
    // kernel may still read the chunk and the SQE of position 0 meanwhile, and its
    // completion must not be taken for position 1's.
    model(|| {
        let ring = Ring::new(1);
        let device = {
            let ring = ring.clone();
            loom::thread::spawn(move || {
                let first = ring.request_abandoned(5);
                (first, ring.request(8))
            })
        };
        ring.sqpoll(2, Kernel::Async);
        let (first, second) = device.join().unwrap();
        assert!(first.is_none() || first == Some(5), "{first:?}");
        assert_eq!(second, (1, 8), "position 1 answered with its own result");
        ring.check_settled(2);
    });
}

/// One slot, two laps: a gated write, then a request that is not gated. The first's
/// gate is given back once, by its completion, before the slot is taken again; the
/// second's completion gives nothing back (the slot's `gate` was rewritten for it
/// after the reaper read the first's).
#[test]
fn a_write_gate_is_given_back_once_with_its_completion_and_the_slot_forgets_it() {
    model(|| {
        let ring = Ring::new(1);
        let device = {
            let ring = ring.clone();
            loom::thread::spawn(move || {
                let first = ring.acquire();
                ring.submit_gated(first, 6, true);
                let a = ring.wait(first);
                ring.turns.release(first);
                (a, ring.request(11))
            })
        };
        ring.sqpoll(2, Kernel::Async);
        assert_eq!(device.join().unwrap(), (6, (1, 11)));
        assert_eq!(
            ring.gate.load(Ordering::Relaxed),
            0,
            "the gate is free again"
        );
        ring.check_settled(2);
    });
}

#[test]
fn two_reapers_hand_each_completion_to_its_own_slot_once() {
    // Two requests published before the kernel runs; the kernel posts both
    // completions while two waiters each try the reap lock once. Whatever each
    // reaper finds, every CQE is handed to its slot exactly once (the count of
    // completions says so) and each waiter finds its own result; a last reap after
    // them collects what they left.
    model(|| {
        let ring = Ring::new(2);
        let pos: Vec<u64> = [30u64, 40]
            .into_iter()
            .map(|v| {
                let pos = ring.acquire();
                ring.submit(pos, v);
                pos
            })
            .collect();
        assert_eq!(pos, [0, 1]);
        let kernel = {
            let ring = ring.clone();
            loom::thread::spawn(move || ring.sqpoll(2, Kernel::Inline))
        };
        let other = {
            let ring = ring.clone();
            loom::thread::spawn(move || ring.poll(1))
        };
        let mine = ring.poll(0);
        kernel.join().unwrap();
        let other = other.join().unwrap();
        assert!(mine.is_none() || mine == Some(30), "{mine:?}");
        assert!(other.is_none() || other == Some(40), "{other:?}");
        assert_eq!(ring.wait(0), 30, "position 0's own result");
        assert_eq!(ring.wait(1), 40, "position 1's own result");
        ring.check_settled(2);
    });
}
