//! One thread, shared by every queue in the process, that wakes async tasks waiting
//! on a queue: the device cannot signal the host, so someone has to look. It polls
//! only while a task waits (every 20 µs, backing off to 1 ms while nothing
//! changes) and sleeps on a condition variable otherwise, so an idle channel costs
//! no CPU.

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::Waker;
use std::time::Duration;

use super::QueueShared;

/// What a task waits for: the check says whether it may now make progress.
#[derive(Clone, Copy)]
pub(crate) enum WaitFor {
    Message(fn(&QueueShared) -> bool),
    /// Room on one ring of a queue to the device.
    Space(fn(&QueueShared, u32) -> bool, u32),
}

impl WaitFor {
    fn ready(self, q: &QueueShared) -> bool {
        match self {
            Self::Message(f) => f(q),
            Self::Space(f, ring) => f(q, ring),
        }
    }

    fn same(self, other: Self) -> bool {
        match (self, other) {
            (Self::Message(_), Self::Message(_)) => true,
            (Self::Space(_, a), Self::Space(_, b)) => a == b,
            _ => false,
        }
    }
}

struct Waiter {
    q: Arc<QueueShared>,
    what: WaitFor,
    waker: Waker,
}

struct Poller {
    waiters: Mutex<Vec<Waiter>>,
    wake: Condvar,
}

static POLLER: OnceLock<Result<&'static Poller, String>> = OnceLock::new();

fn poller() -> Result<&'static Poller, String> {
    POLLER
        .get_or_init(|| {
            let p: &'static Poller = Box::leak(Box::new(Poller {
                waiters: Mutex::new(Vec::new()),
                wake: Condvar::new(),
            }));
            std::thread::Builder::new()
                .name("gpuio-queue-poll".into())
                .spawn(move || run(p))
                .map(|_| p)
                .map_err(|e| format!("cannot start the queue poller thread: {e}"))
        })
        .clone()
}

/// Wakes `waker` once `what` may make progress on `q` (or at once if the poller
/// cannot run, so the task polls again instead of hanging).
pub(crate) fn wait(q: Arc<QueueShared>, what: WaitFor, waker: Waker) {
    let p = match poller() {
        Ok(p) => p,
        Err(e) => {
            tracing::error!("{e}; async waits on host queues will spin");
            waker.wake();
            return;
        }
    };
    let Ok(mut waiters) = p.waiters.lock() else {
        waker.wake();
        return;
    };
    match waiters
        .iter_mut()
        .find(|w| Arc::ptr_eq(&w.q, &q) && w.what.same(what))
    {
        Some(w) => w.waker.clone_from(&waker),
        None => waiters.push(Waiter { q, what, waker }),
    }
    p.wake.notify_one();
}

fn run(p: &'static Poller) {
    let mut pause = Duration::from_micros(20);
    loop {
        let batch = {
            let Ok(mut waiters) = p.waiters.lock() else {
                return;
            };
            while waiters.is_empty() {
                waiters = match p.wake.wait(waiters) {
                    Ok(w) => w,
                    Err(_) => return,
                };
                pause = Duration::from_micros(20);
            }
            std::mem::take(&mut *waiters)
        };
        let mut still = Vec::with_capacity(batch.len());
        let mut woke = false;
        for w in batch {
            if w.what.ready(&w.q) {
                w.waker.wake();
                woke = true;
            } else {
                still.push(w);
            }
        }
        if let Ok(mut waiters) = p.waiters.lock() {
            // Keep a waker registered meanwhile for the same wait (it is newer).
            for w in still {
                if !waiters
                    .iter()
                    .any(|n| Arc::ptr_eq(&n.q, &w.q) && n.what.same(w.what))
                {
                    waiters.push(w);
                }
            }
        }
        pause = if woke {
            Duration::from_micros(20)
        } else {
            (pause * 2).min(Duration::from_millis(1))
        };
        std::thread::sleep(pause);
    }
}
