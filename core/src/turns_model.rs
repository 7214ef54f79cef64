//! The device side of the slot turns, step for step as `gpuio/api.h` writes them
//! ("turns": `gpuio_impl_turn_step`, `gpuio_impl_turn_hold`, and the release and
//! abandon stores of `gpuio/forward.h` and `gpuio/mailbox.h`), on loom's atomics.
//! The header is C++ and runs on the device, so the loom models of the host's
//! hand-offs (forward, mailbox) drive it through this mirror; keep the two in step.
//!
//! Modelled: waiting for the turn, taking a FREE slot (by stores), taking over an ABANDONED one
//! once the transport's `reclaim` says its answer is there, handing the turn on,
//! abandoning and releasing. Not modelled: deadlines and passing over a stuck slot
//! (they depend on the clock; a pass-over only hands the turn on without touching the
//! slot), warps (the CPU device runs one lane per warp).

use loom::sync::atomic::{fence, AtomicU64, Ordering};

use crate::abi::{slot_state, turn_word};

/// `gpuio_turn`: whose turn it is on a slot and the slot's state (one word), and who
/// holds it.
#[derive(Debug, Default)]
pub struct Turn {
    pub word: AtomicU64,
    pub holder: AtomicU64,
}

impl Turn {
    /// api.h `gpuio_impl_turn_set`: the holder sets the state, leaving the turn as
    /// turn owners made it (a compare-and-swap loop, relaxed).
    fn set(&self, state: u32) {
        let mut w = self.word.load(Ordering::Relaxed);
        while let Err(seen) = self.word.compare_exchange(
            w,
            (w & !turn_word::STATE) | u64::from(state),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            w = seen;
        }
    }
}

/// The device-local half of a queue: the position counter and one turn per slot.
#[derive(Debug)]
pub struct Turns {
    /// `ForwardState::reserve` / the mailbox's position counter.
    pub reserve: AtomicU64,
    pub turns: Vec<Turn>,
}

impl Turns {
    pub fn new(slots: usize) -> Self {
        Self {
            reserve: AtomicU64::new(0),
            turns: (0..slots).map(|_| Turn::default()).collect(),
        }
    }

    fn slots(&self) -> u64 {
        self.turns.len() as u64
    }

    /// `gpuio_impl_turn_acquire` for one lane: takes a position (`gpuio_fetch_add_64`,
    /// acq_rel; a lone lane's predicted look first) and waits for its turn on slot
    /// `pos % slots`, then holds the slot.
    /// `reclaim(index, holder)` is the transport's rule for taking over an abandoned
    /// slot. Returns the position.
    pub fn acquire(&self, reclaim: impl Fn(usize, u64) -> bool) -> u64 {
        self.acquire_nudging(reclaim, || {})
    }

    /// [`Turns::acquire`] with the transport's `nudge` (`Reclaim::nudge` in api.h:
    /// direct reaps), called where `gpuio_impl_turn_step` calls it: while next in
    /// line for the turn, on an abandoned slot whose answer is not there yet (then
    /// `reclaim` is asked again), and on a slot still held.
    pub fn acquire_nudging(&self, reclaim: impl Fn(usize, u64) -> bool, nudge: impl Fn()) -> u64 {
        // A lone lane predicts its position (the counter's value, loaded relaxed
        // before the fetch-add) and looks at that slot's turn before it knows: the
        // look counts only where the prediction was right and the word is (our lap,
        // FREE), which nobody but our lap's owner moves.
        let guess = self.reserve.load(Ordering::Relaxed);
        let pos = self.reserve.fetch_add(1, Ordering::AcqRel);
        let predicted = &self.turns[(guess % self.slots()) as usize];
        let w = predicted.word.load(Ordering::Acquire);
        if pos == guess && w == turn_word::word(guess / self.slots(), slot_state::FREE) {
            self.take(predicted, guess / self.slots());
            return pos;
        }
        let lap = pos / self.slots();
        let index = (pos % self.slots()) as usize;
        let t = &self.turns[index];
        let free_now = turn_word::word(lap, slot_state::FREE);
        let taken = turn_word::word(lap, slot_state::IN_FLIGHT);
        loop {
            // Every look loads with acquire (`gpuio_ld_acquire_dev_64`); (our turn,
            // FREE) is taken by stores alone (`gpuio_impl_turn_take`).
            let w = t.word.load(Ordering::Acquire);
            if w == free_now {
                self.take(t, lap);
                return pos;
            }
            let turn = turn_word::lap(w);
            if turn != lap {
                if turn + 1 == lap {
                    nudge();
                }
                loom::thread::yield_now();
                continue;
            }
            let state = turn_word::state(w);
            if state != slot_state::ABANDONED {
                nudge();
                loom::thread::yield_now();
                continue;
            }
            let mut may_take = reclaim(index, t.holder.load(Ordering::Relaxed));
            if !may_take {
                nudge();
                may_take = reclaim(index, t.holder.load(Ordering::Relaxed));
            }
            // api.h: `gpuio_cas_acquire_dev_64(&t->word, w, taken)` with w (lap, ABANDONED)
            // (`gpuio_cas_acquire_dev_64` acquires, and on CUDA does no more: it is
            // the weakest of the three targets).
            if may_take
                && t.word
                    .compare_exchange(w, taken, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                self.hold(t, lap);
                return pos;
            }
            loom::thread::yield_now();
        }
    }

    /// api.h `gpuio_impl_turn_take`, on a word its owner loaded with acquire as
    /// (lap, FREE): `holder`, then one store that takes the slot and hands the turn
    /// on, both relaxed (nobody else writes such a word: api.h says why).
    fn take(&self, t: &Turn, lap: u64) {
        t.holder.store(lap, Ordering::Relaxed);
        t.word.store(
            turn_word::word(lap + 1, slot_state::IN_FLIGHT),
            Ordering::Relaxed,
        );
    }

    /// api.h `gpuio_impl_turn_hold`: `holder`, then the turn handed on by an atomic
    /// add, both relaxed and with no fence (the compare-and-swap that took the slot
    /// over acquired it).
    fn hold(&self, t: &Turn, lap: u64) {
        t.holder.store(lap, Ordering::Relaxed);
        t.word.fetch_add(1 << turn_word::SHIFT, Ordering::Relaxed);
    }

    /// `gpuio_impl_wait_answer` at its deadline, abandoning the slot:
    /// `gpuio_fence_sc(); gpuio_impl_turn_set(t, ABANDONED)`.
    pub fn abandon(&self, pos: u64) {
        fence(Ordering::SeqCst);
        self.turns[(pos % self.slots()) as usize].set(slot_state::ABANDONED);
    }

    /// `gpuio_impl_release`: the state bits cleared to FREE (an atomic and, release).
    pub fn release(&self, pos: u64) {
        self.turns[(pos % self.slots()) as usize]
            .word
            .fetch_and(!turn_word::STATE, Ordering::Release);
    }
}
