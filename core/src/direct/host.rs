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
///
/// Read in this order: `cq_head`, `sq_head`, `cq_tail`, the device's positions
/// (`reserved`, `published`), then the rest. Each check in [`Snapshot::violations`]
/// compares a word read earlier with one that, on an honest channel, can only have
/// grown since - so it holds while the device still runs, and a failed check is a
/// kernel writing ring words it does not own, never a torn read.
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
    /// SQ entries the kernel dropped for an index out of range.
    pub sq_dropped: u32,
    /// Completions the kernel could not post (`cq_overflow`), and whether it holds
    /// some back for a full CQ (`IORING_SQ_CQ_OVERFLOW`).
    pub cq_overflow: u32,
    pub cq_overflow_pending: bool,
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

    /// Protocol violations this snapshot proves, in words: ring words or indexes
    /// written by something other than gpuio's device code (the kernel on the device,
    /// which may scribble over its own channel). Empty on an honest channel.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let published = self.published as u32;
        // The kernel consumes up to the SQ tail; gpuio's publisher only ever moves the
        // tail to `published`. `sq_head` was read before `published`.
        if (published.wrapping_sub(self.sq_head) as i32) < 0 {
            v.push(format!(
                "protocol violation: the kernel consumed SQ entries up to {} but the device \
                 published only {published}: the SQ tail was moved past what was written \
                 (stale SQEs replayed)",
                self.sq_head
            ));
        }
        // One completion per published entry at most (`cq_tail` read before
        // `published`).
        if (published.wrapping_sub(self.cq_tail) as i32) < 0 {
            v.push(format!(
                "protocol violation: {} completions were posted for {published} published \
                 requests",
                self.cq_tail
            ));
        }
        // The device's reaper only moves the CQ head up to the tail it read
        // (`cq_head` read before `cq_tail`).
        if (self.cq_tail.wrapping_sub(self.cq_head) as i32) < 0 {
            v.push(format!(
                "protocol violation: the CQ head ({}) is past the CQ tail ({}): the kernel \
                 scribbled the CQ head",
                self.cq_head, self.cq_tail
            ));
        }
        if self.sq_dropped > 0 {
            v.push(format!(
                "protocol violation: the kernel dropped {} SQ entries whose sq_array index \
                 was out of range; their requests never complete",
                self.sq_dropped
            ));
        }
        // The CQ holds twice the slots: an honest device never fills it.
        if self.cq_overflow > 0 || self.cq_overflow_pending {
            v.push(format!(
                "protocol violation: the CQ overflowed ({} completions lost{}): its head \
                 was scribbled or its completions were not the device's",
                self.cq_overflow,
                if self.cq_overflow_pending {
                    ", some held back"
                } else {
                    ""
                }
            ));
        }
        v
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
        if b.io_workers > 0 {
            ring.limit_io_workers(b.io_workers)?;
        }
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
        // The order matters (see `Snapshot`).
        let cq_head = self.ring.cq_head();
        let sq_head = self.ring.sq_head();
        let cq_tail = self.ring.cq_tail();
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
        let stats = self.stats();
        Snapshot {
            stats,
            reserved,
            published,
            sq_head,
            sq_tail: self.ring.sq_tail(),
            cq_head,
            cq_tail,
            sq_dropped: self.ring.sq_dropped(),
            cq_overflow: self.ring.cq_overflow(),
            cq_overflow_pending: self
                .ring
                .sq_flags()
                .contains(sys::IoringSqFlags::CQ_OVERFLOW),
        }
    }

    /// The completions that were in the CQ, unreaped, when `snap` was taken.
    pub fn unreaped_completions(&self, snap: &Snapshot) -> Vec<Completion> {
        self.ring.completions_between(snap.cq_head, snap.cq_tail)
    }
}

const _: () =
    assert!(offset_of!(DirectState, published) == offset_of!(DirectState, sq_reserve) + 8);
