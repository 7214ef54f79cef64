//! The host's part of a direct channel: it creates and confines the ring, lays out
//! the device-local state, fills `desc.direct`, and later reads what the device
//! recorded.

use std::mem::{offset_of, size_of};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use crate::abi::{self, DirectSlot, DirectState};
use crate::channel::ChannelConfig;
use crate::memory::{LocalMemory, SharedMemory};
use crate::probe::Memlock;
use crate::transport::{OpenContext, TransportError};
use crate::uring::{
    is_transient, retry_transient, sys, Completion, DisabledRing, Restrictions, RingSpec,
    SqpollRing,
};

use super::DirectBuilder;

/// The ring and the device-local state of one direct channel.
#[derive(Debug)]
pub(crate) struct RingOwner {
    pub ring: Arc<SqpollRing>,
    /// Device-local `DirectState`.
    pub state: Arc<dyn LocalMemory>,
    /// The descriptor (its `stats` are the device's counters).
    pub descriptor: Arc<dyn SharedMemory>,
}

/// Everything the host can see of a direct channel at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub stats: abi::Stats,
    /// SQ positions taken by device submitters (`DirectState::sq_reserve`).
    pub reserved: u64,
    /// Positions published to the SQ tail (`DirectState::published`).
    pub published: u64,
    pub sq_head: u32,
    pub sq_tail: u32,
    pub cq_head: u32,
    pub cq_tail: u32,
}

impl Snapshot {
    /// Published requests whose completion no device thread has reaped yet.
    pub fn unreaped(&self) -> u64 {
        let s = &self.stats;
        s.submitted.saturating_sub(s.completed + s.failed)
    }

    /// Completions posted to the CQ and not reaped.
    pub fn cq_pending(&self) -> u64 {
        u64::from(self.cq_tail.wrapping_sub(self.cq_head))
    }

    /// What is left is only in the kernel's hands: every SQ position taken is
    /// published and consumed, and some published request has no completion yet.
    pub fn only_in_kernel(&self) -> bool {
        self.reserved == self.published
            && self.sq_head == self.sq_tail
            && self.unreaped() > self.cq_pending()
    }

    /// Nothing left for the ring to do: every SQ position taken is published, the
    /// kernel consumed every SQE, and every published request has its completion,
    /// reaped or sitting in the CQ.
    pub fn settled(&self) -> bool {
        self.reserved == self.published
            && self.sq_head == self.sq_tail
            && self.unreaped() == self.cq_pending()
    }
}

impl RingOwner {
    /// Creates the ring for `ctx` and fills `ctx.desc.direct`.
    pub fn open(ctx: &mut OpenContext<'_>, b: &DirectBuilder) -> Result<Self, TransportError> {
        let slots = ctx.slots;
        if !slots.is_power_of_two() || slots > sys::MAX_SQ_ENTRIES {
            return Err(TransportError::Config(format!(
                "the direct transport needs a power of two of at most {} slots, not {slots}",
                sys::MAX_SQ_ENTRIES
            )));
        }
        if ctx.staging.len > sys::MAX_FIXED_BUFFER {
            return Err(TransportError::Config(format!(
                "the direct transport registers the staging area as one fixed buffer: at most {} bytes, not {}",
                sys::MAX_FIXED_BUFFER,
                ctx.staging.len
            )));
        }
        // SQ entries == slots, so SQE `pos & sq_mask` is slot `pos % slots`'s own;
        // CQ entries = 2 × slots > the requests a slot-bounded device can have in
        // flight, so the CQ never overflows.
        let spec = RingSpec::new(slots, b.sq_thread_idle);
        // The ring and the fixed buffer are charged to RLIMIT_MEMLOCK (without
        // CAP_IPC_LOCK): where they cannot fit, say so with the numbers before
        // asking the kernel, which would only answer ENOMEM.
        let page = rustix::param::page_size() as u64;
        let need = (ctx.staging.len as u64).div_ceil(page) * page
            + spec.rings_bytes() as u64
            + spec.sqes_bytes() as u64;
        let memlock = Memlock::detect_need(need);
        let shape = ChannelConfig {
            slots,
            slot_size: ctx.slot_size,
            user_staging: (ctx.staging.len as u64)
                .saturating_sub(u64::from(slots) * u64::from(ctx.slot_size))
                as usize,
            ..ChannelConfig::default()
        };
        if let Some(reason) = memlock.shortfall("this direct channel", &shape) {
            return Err(TransportError::Limit {
                limit: "RLIMIT_MEMLOCK",
                need,
                allowed: memlock.limit.unwrap_or(u64::MAX),
                reason,
            });
        }
        let rings = ctx.alloc_shared(spec.rings_bytes())?;
        let sqes = ctx.alloc_shared(spec.sqes_bytes())?;
        // Set-up and registration are retried while the kernel may still be freeing
        // a ring closed just before (the probe's; see `retry_transient`).
        let mut ring = retry_transient(is_transient, || {
            DisabledRing::create(&spec, rings.clone(), sqes.clone())
        })?;
        // A kernel's SQEs reach the fixed files unchecked, so each one carries
        // exactly its endpoint's declared access (a file opened read-write and
        // declared read-only is registered as a read-only reopening of it): a raw
        // WRITE_FIXED on it gets -EBADF from io_uring itself. The kernel keeps its
        // own references; these descriptors close once registered.
        let confined: Vec<Option<OwnedFd>> = ctx
            .endpoints
            .iter()
            .map(|e| e.fd_with_declared_access())
            .collect::<Result<_, _>>()?;
        let fds: Vec<Option<BorrowedFd<'_>>> = confined
            .iter()
            .map(|f| f.as_ref().map(|f| f.as_fd()))
            .collect();
        ring.register_files(&fds)?;
        drop(confined);
        retry_transient(is_transient, || {
            // SAFETY: the staging area is the channel's shared memory: host and
            // device reach it only through raw copies, never Rust references; the
            // channel keeps it alive past this ring.
            unsafe { ring.register_buffer(ctx.staging) }
        })?;
        ring.restrict(&Restrictions::gpuio())?;
        let ring = Arc::new(ring.enable()?);

        let state = ctx.alloc_local(size_of::<DirectState>())?;
        let slot_state = ctx.alloc_local(slots as usize * size_of::<DirectSlot>())?;
        // Zeroed: every slot's turn is lap 0 and free, nothing answered or stamped.
        slot_state.write(0, &vec![0u8; slots as usize * size_of::<DirectSlot>()])?;

        let l = *ring.layout();
        let r = ring.rings().device_addr;
        ctx.desc.direct = abi::DirectRing {
            sq_head: r + u64::from(l.sq_head),
            sq_tail: r + u64::from(l.sq_tail),
            sq_flags: r + u64::from(l.sq_flags),
            sq_array: r + u64::from(l.sq_array),
            sqes: ring.sqes().device_addr,
            cq_head: r + u64::from(l.cq_head),
            cq_tail: r + u64::from(l.cq_tail),
            cqes: r + u64::from(l.cqes),
            sq_mask: l.sq_mask,
            cq_mask: l.cq_mask,
            sq_entries: l.sq_entries,
            cq_entries: l.cq_entries,
            state: state.device_addr(),
            slot_state: slot_state.device_addr(),
            fixed_buffer_host: ctx.staging.host_ptr.as_ptr() as u64,
            _pad: 0,
        };
        tracing::debug!(
            slots,
            files = ring.files(),
            staging = ctx.staging.len,
            "direct ring enabled"
        );
        Ok(Self {
            ring,
            state,
            descriptor: ctx.descriptor.clone(),
        })
    }

    /// The device's counters (`Channel::stats`).
    pub fn stats(&self) -> abi::Stats {
        crate::transport::device_stats(&self.descriptor)
    }

    /// Reads the ring words and counters. Not atomic as a whole: a snapshot taken
    /// while the device works may be inconsistent, so `close()` only trusts one that
    /// stays the same over a quiet period.
    pub fn snapshot(&self) -> Snapshot {
        let cq_head = self.ring.cq_head();
        let sq_head = self.ring.sq_head();
        let stats = self.stats();
        let mut st = [0u8; 16];
        // The device updates these with its own atomics; a copy may be torn only on
        // a target without 8-byte atomic copies, and close() needs it to hold still
        // for a while before it believes it.
        let (reserved, published) = match self
            .state
            .read(offset_of!(DirectState, sq_reserve), &mut st)
        {
            Ok(()) => {
                let (a, b) = st.split_at(8);
                (
                    u64::from_ne_bytes(a.try_into().unwrap_or_default()),
                    u64::from_ne_bytes(b.try_into().unwrap_or_default()),
                )
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the direct ring's device state");
                (0, 0)
            }
        };
        Snapshot {
            stats,
            reserved,
            published,
            sq_head,
            sq_tail: self.ring.sq_tail(),
            cq_head,
            cq_tail: self.ring.cq_tail(),
        }
    }

    /// The completions that were in the CQ, unreaped, when `snap` was taken.
    pub fn unreaped_completions(&self, snap: &Snapshot) -> Vec<Completion> {
        self.ring.completions_between(snap.cq_head, snap.cq_tail)
    }
}

const _: () =
    assert!(offset_of!(DirectState, published) == offset_of!(DirectState, sq_reserve) + 8);
