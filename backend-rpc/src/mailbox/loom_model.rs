//! Loom models of the mailbox port hand-off (`.ci/loom`): the host side is the
//! server's own [`take`] and [`reply`]; the device side mirrors `gpuio/mailbox.h`
//! (submit, poll, the reclaim rule) and the turns of `gpuio/api.h`
//! ([`gpuio_core::turns_model`]).
//! The request and the port's staging chunk are loom `UnsafeCell`s (the result rides
//! in the host's answer word, `host_out`), so
//! loom reports any interleaving in which both sides touch one of them unordered.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p gpuio-backend-rpc --lib --release loom`.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU32, AtomicU64};
use loom::sync::Arc;
use std::sync::atomic::Ordering;

use gpuio_core::abi::{self, op};
use gpuio_core::turns_model::Turns;

use super::server::{reply, take, AnswerWord, Flag, PortView};

impl Flag for AtomicU32 {
    fn load(&self, order: Ordering) -> u32 {
        AtomicU32::load(self, order)
    }
}

impl AnswerWord for AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order)
    }
}

/// One port (`MailboxPort`), its staging chunk and its turn.
struct Port {
    device_out: AtomicU32,
    host_out: AtomicU64,
    req: UnsafeCell<abi::Request>,
    staging: UnsafeCell<u64>,
    turns: Turns,
}

impl PortView for Port {
    type Flag = AtomicU32;
    type Answer = AtomicU64;
    fn device_out(&self, _: u32) -> &AtomicU32 {
        &self.device_out
    }
    fn host_out(&self, _: u32) -> &AtomicU64 {
        &self.host_out
    }
    fn request(&self, _: u32) -> abi::Request {
        // SAFETY: `take` reads it after acquiring the flip; loom checks the order.
        self.req.with(|p| unsafe { *p })
    }
}

impl Port {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            device_out: AtomicU32::new(0),
            host_out: AtomicU64::new(0),
            req: UnsafeCell::new(abi::Request::default()),
            staging: UnsafeCell::new(0),
            turns: Turns::new(1),
        })
    }

    /// `gpuio_mailbox_reclaim`: `host_out`'s flip (acquire) equals `device_out`
    /// (relaxed).
    fn reclaim(&self) -> bool {
        abi::mailbox_answer::flip(self.host_out.load(Ordering::Acquire))
            == self.device_out.load(Ordering::Relaxed)
    }

    /// `gpuio_mailbox_acquire`, the caller's bytes into the staging chunk, then
    /// `gpuio_mailbox_submit`: `port->req = *r`, flip `device_out` (release). Returns
    /// the flag value sent (`s->pos` in the header) and the position.
    fn submit(&self, value: u64) -> (u32, u64) {
        let pos = self.turns.acquire(|_, _| self.reclaim());
        // SAFETY: the port is ours from `acquire`; loom checks nobody else is in it.
        self.staging.with_mut(|p| unsafe { *p = value });
        // SAFETY: as above.
        self.req.with_mut(|p| unsafe {
            *p = abi::Request {
                op: op::PREAD,
                len: 8,
                ..Default::default()
            }
        });
        let flipped = self.device_out.load(Ordering::Relaxed) ^ 1;
        self.device_out.store(flipped, Ordering::Release);
        (flipped, pos)
    }

    /// `gpuio_mailbox_wait` that never gives up: `host_out`'s flip (acquire) == what
    /// was sent, the result from the same word, then the staging bytes the host
    /// filled.
    fn wait(&self, sent: u32) -> (i64, u64) {
        let answer = loop {
            let word = self.host_out.load(Ordering::Acquire);
            if abi::mailbox_answer::flip(word) == sent {
                break word;
            }
            loom::thread::yield_now();
        };
        // SAFETY: the answer was acquired: the host is done with the port.
        let filled = self.staging.with(|p| unsafe { *p });
        (i64::from(abi::mailbox_answer::result(answer)), filled)
    }

    /// The server's loop on this one port: `take` and `reply` around a "pread" that
    /// reads the staged word and fills the chunk (what `sys::pread` does), until `n`
    /// answered.
    fn serve(&self, n: usize) {
        let mut answered = 0;
        while answered < n {
            let Some((sent, req)) = take(self, 0) else {
                loom::thread::yield_now();
                continue;
            };
            assert_eq!(req.op, op::PREAD, "the request published with the flip");
            // SAFETY: the flip was acquired: the device handed the chunk over.
            let staged = self.staging.with(|p| unsafe { *p });
            // SAFETY: as above.
            self.staging.with_mut(|p| unsafe { *p = staged + 1000 });
            reply(self, 0, sent, staged as i64);
            answered += 1;
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

#[test]
fn a_port_is_answered_in_place_and_handed_to_the_next_turn() {
    model(|| {
        let port = Port::new();
        let device = {
            let port = port.clone();
            loom::thread::spawn(move || {
                for v in [7u64, 9] {
                    let (sent, pos) = port.submit(v);
                    assert_eq!(port.wait(sent), (v as i64, v + 1000));
                    port.turns.release(pos);
                }
            })
        };
        port.serve(2);
        device.join().unwrap();
    });
}

#[test]
fn an_abandoned_port_is_taken_over_only_once_the_host_answered_it() {
    model(|| {
        let port = Port::new();
        let device = {
            let port = port.clone();
            loom::thread::spawn(move || {
                // The first call times out at once after sending: the port is left
                // ABANDONED, and the host still reads and fills its chunk later.
                let (_, first) = port.submit(5);
                port.turns.abandon(first);
                // The next turn owner takes the port over once host_out == device_out.
                let (sent, pos) = port.submit(8);
                let answer = port.wait(sent);
                port.turns.release(pos);
                answer
            })
        };
        port.serve(2);
        assert_eq!(device.join().unwrap(), (8, 1008));
    });
}
