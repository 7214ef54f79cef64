//! Loom models of the forward queue's hand-off (`.ci/loom`): the host side is the
//! forwarder's own code (`queue::Entry`, `queue::untaken`, `queue::classify`), the device
//! side mirrors `gpuio/forward.h` and the turns of `gpuio/api.h`
//! ([`crate::turns_model`]). Each slot's staging chunk is a loom `UnsafeCell`, so loom
//! reports any interleaving in which the device and the host (io_uring, for the
//! request it was given) touch the same chunk unordered.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p gpuio-core --lib --release loom`.

use loom::cell::UnsafeCell;
use loom::sync::Arc;

use crate::abi::{self, op, stamp};
use crate::sync::AtomicU64;
use crate::turns_model::Turns;

use super::queue::{classify, stamp_of, untaken, Entry, Stamp, Words};

/// What the device and the host share, and the device's own turns.
struct Queue {
    /// The bytes of `ForwardEntry[slots]`, as the words `queue::Words` reads.
    u64s: Vec<AtomicU64>,
    slots: usize,
    staging: Vec<UnsafeCell<u64>>,
    turns: Turns,
}

impl Queue {
    fn new(slots: usize) -> Arc<Self> {
        let bytes = slots * std::mem::size_of::<abi::ForwardEntry>();
        let q = Arc::new(Self {
            u64s: (0..bytes / 8).map(|_| AtomicU64::new(0)).collect(),
            slots,
            staging: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            turns: Turns::new(slots),
        });
        // QueueView::init: entry i free for position i.
        for i in 0..slots {
            q.entry_at(i).set_stamp(stamp_of(i as u64, stamp::FREE));
        }
        q
    }

    fn slots(&self) -> u64 {
        self.slots as u64
    }

    fn entry_at(&self, i: usize) -> Entry<'_> {
        Entry::nth(Words::new(&self.u64s), i)
    }

    fn entry(&self, pos: u64) -> Entry<'_> {
        self.entry_at((pos % self.slots()) as usize)
    }

    /// `gpuio_forward_reclaim`: the abandoned request of lap `holder` was answered.
    fn reclaim(&self, index: usize, holder: u64) -> bool {
        let pos = holder * self.slots() + index as u64;
        self.entry_at(index).answered(pos).is_some()
    }

    /// `gpuio_forward_acquire`, then the caller's bytes into the slot's staging chunk
    /// and `gpuio_forward_submit`: the request's words (relaxed), then READY,
    /// released (`Entry::publish`).
    fn submit(&self, value: u64) -> u64 {
        let pos = self.turns.acquire(|i, holder| self.reclaim(i, holder));
        self.staging[(pos % self.slots()) as usize].with_mut(|p| {
            // SAFETY: the slot is ours from `acquire` until release or abandon; loom
            // checks that nobody else touches the chunk meanwhile.
            unsafe { *p = value }
        });
        self.entry(pos).publish(
            pos,
            &abi::Request {
                op: op::PREAD,
                len: 8,
                staging_off: pos % self.slots(),
                offset: pos as i64,
                ..Default::default()
            },
        );
        pos
    }

    /// `gpuio_forward_acquire`, then `gpuio_forward_submit` of a NOP: its words and
    /// READY, all relaxed (`offset` names the position, so that the host can tell
    /// whose words it took).
    fn submit_nop(&self) -> u64 {
        let pos = self.turns.acquire(|i, holder| self.reclaim(i, holder));
        self.entry(pos).publish(
            pos,
            &abi::Request {
                op: op::NOP,
                offset: pos as i64,
                ..Default::default()
            },
        );
        pos
    }

    /// `gpuio_forward_wait` that never gives up: polls for the answer (acquire; the
    /// result is in the same word), then reads the staging chunk the host filled.
    fn wait(&self, pos: u64) -> (i64, u64) {
        let e = self.entry(pos);
        let result = loop {
            if let Some(r) = e.answered(pos) {
                break r;
            }
            loom::thread::yield_now();
        };
        let filled = self.staging[(pos % self.slots()) as usize].with(|p| {
            // SAFETY: the answer was acquired: the host is finished with the chunk.
            unsafe { *p }
        });
        (i64::from(result), filled)
    }

    /// The forwarder's loop, less io_uring: scan every entry, take what is READY and
    /// belongs, "execute" it (a pread: read the staged word, fill the chunk, as the
    /// kernel does between SQE and CQE), answer DONE. Until `n` were answered.
    fn serve(&self, n: usize) {
        let slots = self.slots;
        let mut taken: Vec<Option<u64>> = vec![None; slots];
        let mut open = vec![false; slots];
        let mut answered = 0;
        while answered < n {
            for i in 0..slots {
                let e = self.entry_at(i);
                let Some(pos) = untaken(e.stamp(), taken[i], open[i]) else {
                    continue;
                };
                assert_eq!(
                    classify(i, slots, pos, taken[i], open[i]),
                    Stamp::Request,
                    "a READY stamp out of turn"
                );
                // Taken once every word is there (the forwarder's `take_ready`).
                let Some(req) = e.request() else {
                    continue;
                };
                assert_eq!(req.offset, pos as i64, "the words of READY's own request");
                taken[i] = Some(pos);
                open[i] = true;
                if req.op == op::NOP {
                    // Answered without touching the chunk, as the forwarder does.
                    e.answer(pos, 0);
                    open[i] = false;
                    answered += 1;
                    continue;
                }
                assert_eq!(req.staging_off, pos % self.slots(), "the request's chunk");
                let chunk = &self.staging[req.staging_off as usize];
                // SAFETY: READY was acquired: the device handed the chunk over and
                // touches it again only after DONE (or after reclaiming it, which waits
                // for DONE too).
                let staged = chunk.with(|p| unsafe { *p });
                // SAFETY: as above.
                chunk.with_mut(|p| unsafe { *p = staged + 1000 });
                e.answer(pos, i32::try_from(staged).expect("a small test value"));
                open[i] = false;
                answered += 1;
            }
            loom::thread::yield_now();
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

// Each model has two threads: loom's cost grows steeply with threads that spin, so the
// device's two positions on one slot run one after the other on one thread where the
// host is the other party, and the device-only turn hand-off has a model of its own.

#[test]
fn a_request_is_answered_in_place_and_its_slot_reused_for_the_next_lap() {
    model(|| {
        let q = Queue::new(1);
        let device = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for v in [7u64, 9] {
                    let pos = q.submit(v);
                    let (result, filled) = q.wait(pos);
                    q.turns.release(pos);
                    assert_eq!(result, v as i64, "the answer to its own request");
                    assert_eq!(filled, v + 1000, "the bytes the host read in");
                }
            })
        };
        q.serve(2);
        device.join().unwrap();
    });
}

#[test]
fn a_nop_is_taken_only_with_all_its_words_though_nothing_orders_them() {
    model(|| {
        let q = Queue::new(1);
        let device = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for _ in 0..2 {
                    let pos = q.submit_nop();
                    let (result, _) = q.wait(pos);
                    q.turns.release(pos);
                    assert_eq!(result, 0, "a NOP's answer");
                }
            })
        };
        q.serve(2);
        device.join().unwrap();
    });
}

#[test]
fn an_abandoned_slot_is_taken_over_only_once_the_host_answered_it() {
    model(|| {
        let q = Queue::new(1);
        let device = {
            let q = q.clone();
            loom::thread::spawn(move || {
                // Position 0 times out at once after submitting: the slot is left
                // ABANDONED and the host still reads and fills its chunk later.
                let first = q.submit(5);
                q.turns.abandon(first);
                // Position 1's turn owner takes the slot over (reclaim: DONE for 0).
                let pos = q.submit(8);
                let answer = q.wait(pos);
                q.turns.release(pos);
                answer
            })
        };
        q.serve(2);
        assert_eq!(device.join().unwrap(), (8, 1008));
    });
}

#[test]
fn the_turn_word_hands_a_slot_to_one_position_at_a_time() {
    model(|| {
        let q = Queue::new(1);
        let lanes: Vec<_> = (0..2u64)
            .map(|v| {
                let q = q.clone();
                loom::thread::spawn(move || {
                    let pos = q.turns.acquire(|_, _| false);
                    let chunk = &q.staging[0];
                    // SAFETY: the slot is held; loom checks no other holder overlaps.
                    chunk.with_mut(|p| unsafe { *p = v });
                    // SAFETY: as above.
                    assert_eq!(chunk.with(|p| unsafe { *p }), v);
                    q.turns.release(pos);
                    pos
                })
            })
            .collect();
        let mut got: Vec<u64> = lanes.into_iter().map(|l| l.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, [0, 1], "each lane its own position");
    });
}
