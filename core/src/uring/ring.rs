//! Owners of a gpuio ring: [`DisabledRing`] while it is being confined, then
//! [`SqpollRing`] once enabled. Dropping either closes the ring fd before the ring
//! memory it holds is released (field order), and the kernel keeps its own pins on
//! every page it uses, so nothing it does can reach freed memory.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use super::sys::{self, IoringOp, IoringRestrictionOp, IoringSetupFlags, IoringSqFlags};
use super::{RingLayout, RingSpec, UringError};
use crate::memory::{SharedMemory, SharedRegion};

/// What SQEs a ring accepts once enabled (`IORING_REGISTER_RESTRICTIONS`), and which
/// registration opcodes the host may still use on it. Only system calls register,
/// and a device cannot make them: whatever is allowed here is the host's alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restrictions {
    /// Opcodes allowed (`IORING_RESTRICTION_SQE_OP`).
    pub sqe_ops: Vec<IoringOp>,
    /// SQE flags that may be set (`IORING_RESTRICTION_SQE_FLAGS_ALLOWED`).
    pub sqe_flags_allowed: sys::IoringSqeFlags,
    /// SQE flags that must be set (`IORING_RESTRICTION_SQE_FLAGS_REQUIRED`).
    pub sqe_flags_required: sys::IoringSqeFlags,
    /// Registration opcodes allowed after enabling (`IORING_RESTRICTION_REGISTER_OP`).
    pub register_ops: Vec<sys::IoringRegisterOp>,
}

impl Restrictions {
    /// What gpuio issues: `NOP`, `READ_FIXED`, `WRITE_FIXED`, always on a fixed file
    /// (`IOSQE_FIXED_FILE` required; `IOSQE_ASYNC` allowed, which hands a request to
    /// the kernel's io-wq workers instead of the SQPOLL thread and reaches nothing
    /// else; no other flag allowed: no links, drains or skipped completions). With the staging area
    /// as the only fixed buffer and the endpoints as the only fixed files, an SQE
    /// can touch nothing else. Not `SEND`/`RECV`: their buffer is a plain address
    /// that nothing binds to the fixed buffer (sockets take `READ_FIXED` and
    /// `WRITE_FIXED`, which on a socket are `recv(2)` and `send(2)`). The host may
    /// cancel requests in flight
    /// (`IORING_REGISTER_SYNC_CANCEL`: [`SqpollRing::cancel_all`], used at close);
    /// nothing may be registered or re-registered.
    pub fn gpuio() -> Self {
        Self {
            sqe_ops: vec![IoringOp::Nop, IoringOp::ReadFixed, IoringOp::WriteFixed],
            sqe_flags_allowed: sys::IoringSqeFlags::FIXED_FILE.union(sys::IoringSqeFlags::ASYNC),
            sqe_flags_required: sys::IoringSqeFlags::FIXED_FILE,
            register_ops: vec![sys::IoringRegisterOp::RegisterSyncCancel],
        }
    }

    fn entries(&self) -> Vec<sys::io_uring_restriction> {
        let mut v: Vec<_> = self
            .sqe_ops
            .iter()
            .map(|&op| sys::allow_sqe_op(op))
            .chain(
                self.register_ops
                    .iter()
                    .map(|&op| sys::allow_register_op(op)),
            )
            .collect();
        v.push(sys::sqe_flags(
            IoringRestrictionOp::SqeFlagsAllowed,
            self.sqe_flags_allowed,
        ));
        v.push(sys::sqe_flags(
            IoringRestrictionOp::SqeFlagsRequired,
            self.sqe_flags_required,
        ));
        v
    }
}

/// One completion as the kernel wrote it (`struct io_uring_cqe`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub user_data: u64,
    /// `>= 0` or `-errno`.
    pub res: i32,
    pub flags: u32,
}

const _: () = assert!(std::mem::size_of::<Completion>() == sys::CQE_SIZE);
const _: () = assert!(std::mem::size_of::<io_uring::squeue::Entry>() == sys::SQE_SIZE);

struct Inner {
    /// Declared first: closed before the memory below is released. `None` once
    /// [`SqpollRing::stop`] closed it early; the lock keeps it open while a system
    /// call uses it.
    fd: RwLock<Option<OwnedFd>>,
    rings: Arc<dyn SharedMemory>,
    sqes: Arc<dyn SharedMemory>,
    layout: RingLayout,
    files: u32,
    fixed_buffer: Option<SharedRegion>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field(
                "fd",
                &self
                    .fd
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .as_ref()
                    .map(|fd| fd.as_raw_fd()),
            )
            .field("rings", &self.rings.region())
            .field("sqes", &self.sqes.region())
            .field("layout", &self.layout)
            .field("files", &self.files)
            .field("fixed_buffer", &self.fixed_buffer)
            .finish()
    }
}

impl Inner {
    /// Runs `f` on the ring fd, held open meanwhile; [`UringError::Stopped`] once
    /// [`SqpollRing::stop`] closed it.
    fn with_fd<T>(&self, f: impl FnOnce(BorrowedFd<'_>) -> T) -> Result<T, UringError> {
        let fd = self.fd.read().unwrap_or_else(PoisonError::into_inner);
        fd.as_ref()
            .map(|fd| f(fd.as_fd()))
            .ok_or(UringError::Stopped)
    }

    /// The ring word at `off` in the rings region.
    fn word(&self, off: u32) -> &AtomicU32 {
        // SAFETY: every offset passed here comes from `self.layout`, which
        // `RingLayout::check` proved 4-aligned and inside the rings region (page-
        // aligned, held alive by `self.rings`); the word is shared with the kernel,
        // which is what an atomic is for.
        unsafe { &*(self.rings.region().host_ptr.as_ptr().add(off as usize) as *const AtomicU32) }
    }

    /// `sq_array[i]`.
    fn sq_array(&self, i: u32) -> &AtomicU32 {
        self.word(self.layout.sq_array + 4 * (i & self.layout.sq_mask))
    }
}

/// A ring created with `IORING_SETUP_R_DISABLED`: the SQPOLL thread does not run yet,
/// and files, the fixed buffer and restrictions can be registered.
#[derive(Debug)]
pub struct DisabledRing {
    inner: Inner,
}

impl DisabledRing {
    /// Creates an SQPOLL ring whose rings live in `rings` and whose SQE array lives
    /// in `sqes` (`IORING_SETUP_SQPOLL | NO_MMAP | R_DISABLED | CQSIZE | SUBMIT_ALL`).
    /// The SQ index array is filled with the identity, so SQE `i` is SQ slot `i`.
    pub fn create(
        spec: &RingSpec,
        rings: Arc<dyn SharedMemory>,
        sqes: Arc<dyn SharedMemory>,
    ) -> Result<Self, UringError> {
        spec.check()?;
        let page = rustix::param::page_size();
        for (name, mem, need) in [
            ("rings", &rings, spec.rings_bytes()),
            ("sqes", &sqes, spec.sqes_bytes()),
        ] {
            let r = mem.region();
            if r.len < need || !(r.host_ptr.as_ptr() as usize).is_multiple_of(page) {
                return Err(UringError::Layout(format!(
                    "{name} memory must be page-aligned and hold {need} bytes: got {r:?}"
                )));
            }
        }
        let mut p = sys::io_uring_params::default();
        p.flags = IoringSetupFlags::SQPOLL
            | IoringSetupFlags::NO_MMAP
            | IoringSetupFlags::R_DISABLED
            | IoringSetupFlags::CQSIZE
            | IoringSetupFlags::SUBMIT_ALL;
        p.cq_entries = spec.cq_entries;
        p.sq_thread_idle = u32::try_from(spec.sq_thread_idle.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        p.sq_off.user_addr = sys::io_uring_ptr::new(sqes.region().host_ptr.as_ptr().cast());
        p.cq_off.user_addr = sys::io_uring_ptr::new(rings.region().host_ptr.as_ptr().cast());
        // SAFETY: ATTACH_WQ is not among the flags (1.); both regions are shared
        // memory (reached only through atomics and raw copies, never Rust
        // references), page-aligned and at least as large as the kernel's
        // rings_size() / SQE array for these entry counts (checked above) (2.).
        let fd = unsafe { sys::setup(spec.sq_entries, &mut p) }.map_err(|e| UringError::Sys {
            call: "io_uring_setup(SQPOLL|NO_MMAP|R_DISABLED)",
            errno: e,
            hint: match e {
                rustix::io::Errno::PERM => {
                    " (io_uring disabled by kernel.io_uring_disabled or a seccomp filter?)"
                }
                rustix::io::Errno::NOSYS => " (kernel built without io_uring?)",
                rustix::io::Errno::INVAL => {
                    " (kernel older than 6.5, without IORING_SETUP_NO_MMAP?)"
                }
                _ => "",
            },
        })?;
        let layout = RingLayout::from_params(&p);
        layout.check(rings.region().len)?;
        if layout.sq_entries != spec.sq_entries || layout.cq_entries != spec.cq_entries {
            return Err(UringError::Layout(format!(
                "asked for {} SQ / {} CQ entries, the kernel gave {} / {}",
                spec.sq_entries, spec.cq_entries, layout.sq_entries, layout.cq_entries
            )));
        }
        if (layout.sq_entries as usize) * sys::SQE_SIZE > sqes.region().len {
            return Err(UringError::Layout("SQE array does not fit".into()));
        }
        let inner = Inner {
            fd: RwLock::new(Some(fd)),
            rings,
            sqes,
            layout,
            files: 0,
            fixed_buffer: None,
        };
        for i in 0..layout.sq_entries {
            inner.sq_array(i).store(i, Ordering::Relaxed);
        }
        Ok(Self { inner })
    }

    pub fn layout(&self) -> &RingLayout {
        &self.inner.layout
    }

    /// Registers `fds` as the fixed-file table, index `i` being `fds[i]`; a `None`
    /// leaves index `i` empty (a sparse entry: an SQE naming it fails with
    /// `-EBADF`). Nothing to do for an empty table: every fixed-file SQE then fails
    /// with `-EBADF`.
    pub fn register_files(&mut self, fds: &[Option<BorrowedFd<'_>>]) -> Result<(), UringError> {
        if fds.is_empty() {
            return Ok(());
        }
        let raw: Vec<RawFd> = fds
            .iter()
            .map(|f| f.map_or(-1, |f| f.as_raw_fd()))
            .collect();
        self.inner
            .with_fd(|fd| sys::register_files(fd, &raw))?
            .map_err(|e| UringError::sys("io_uring_register(IORING_REGISTER_FILES)", e))?;
        self.inner.files = raw.len() as u32;
        Ok(())
    }

    /// Registers `region` as fixed buffer 0.
    ///
    /// # Safety
    ///
    /// `region` is shared memory: no Rust reference covers any of its bytes (the
    /// kernel may read or write them whenever an SQE names them, until the ring is
    /// closed), as for every [`SharedMemory`] allocation.
    pub unsafe fn register_buffer(&mut self, region: SharedRegion) -> Result<(), UringError> {
        if region.len == 0 || region.len > sys::MAX_FIXED_BUFFER {
            return Err(UringError::Layout(format!(
                "a fixed buffer holds 1 byte to {} bytes, not {}",
                sys::MAX_FIXED_BUFFER,
                region.len
            )));
        }
        self.inner
            .with_fd(|fd| {
                // SAFETY: the caller's promise: shared memory, no Rust references
                // into it.
                unsafe { sys::register_buffer(fd, region.host_ptr.as_ptr(), region.len) }
            })?
            .map_err(|e| UringError::Sys {
                call: "io_uring_register(IORING_REGISTER_BUFFERS)",
                errno: e,
                hint: if e == rustix::io::Errno::NOMEM {
                    " (pinned memory counts against RLIMIT_MEMLOCK: raise `ulimit -l` or use a smaller staging area)"
                } else {
                    ""
                },
            })?;
        self.inner.fixed_buffer = Some(region);
        Ok(())
    }

    /// Registers what SQEs the ring will accept.
    /// Caps the kernel's io-wq workers for this ring's requests at `unbounded` for
    /// io-wq's unbounded kind (0: as the kernel sets it), leaving the bounded kind's
    /// cap as it is. The unbounded kind runs sockets' and pipes' requests, and every
    /// request marked `IOSQE_ASYNC` on a fixed file, regular files' included (the
    /// kernel looks the file up only when a worker runs it); the bounded kind runs a
    /// regular file's requests the kernel hands over itself. Returns the cap before.
    /// Before [`Self::restrict`]: the restrictions allow no registration but
    /// cancelling.
    pub fn limit_io_workers(&mut self, unbounded: u32) -> Result<u32, UringError> {
        self.inner
            .with_fd(|fd| sys::register_iowq_max_workers(fd, [0, unbounded]))?
            .map(|before| before[1])
            .map_err(|e| UringError::sys("io_uring_register(IORING_REGISTER_IOWQ_MAX_WORKERS)", e))
    }

    pub fn restrict(&mut self, restrictions: &Restrictions) -> Result<(), UringError> {
        self.inner
            .with_fd(|fd| sys::register_restrictions(fd, &restrictions.entries()))?
            .map_err(|e| UringError::sys("io_uring_register(IORING_REGISTER_RESTRICTIONS)", e))
    }

    /// Starts the ring (`IORING_REGISTER_ENABLE_RINGS`): the SQPOLL thread runs.
    pub fn enable(self) -> Result<SqpollRing, UringError> {
        self.inner
            .with_fd(sys::enable_rings)?
            .map_err(|e| UringError::sys("io_uring_register(IORING_REGISTER_ENABLE_RINGS)", e))?;
        Ok(SqpollRing { inner: self.inner })
    }
}

/// An enabled SQPOLL ring. Its producer is normally a device (see `crate::direct`);
/// the host side reads the ring words, wakes the SQPOLL thread, and — in tests or
/// when no device produces — may push and pop entries itself.
#[derive(Debug)]
pub struct SqpollRing {
    inner: Inner,
}

impl SqpollRing {
    /// Runs `f` on the ring fd, held open meanwhile; [`UringError::Stopped`] once
    /// [`SqpollRing::stop`] closed it.
    pub fn with_fd<T>(&self, f: impl FnOnce(BorrowedFd<'_>) -> T) -> Result<T, UringError> {
        self.inner.with_fd(f)
    }

    /// Closes the ring fd now, while others may still hold the ring (the waker, on
    /// a protocol violation): the kernel stops taking SQEs from it (a ring whose
    /// SQ tail a kernel moved would otherwise keep its SQPOLL thread replaying
    /// stale entries for as long as it lives) and cancels what is in flight. The
    /// ring words and entries stay readable, being this ring's own memory; calls
    /// that need the fd fail with [`UringError::Stopped`]. Waits for a system call
    /// using the fd to return (bounded: wakes return at once, a cancel waits at
    /// most its own timeout). Returns whether this call closed it.
    pub fn stop(&self) -> bool {
        let mut fd = self
            .inner
            .fd
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        fd.take().is_some()
    }

    /// Whether [`SqpollRing::stop`] closed the ring.
    pub fn is_stopped(&self) -> bool {
        self.inner
            .fd
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    pub fn layout(&self) -> &RingLayout {
        &self.inner.layout
    }

    /// The rings region (SQ and CQ ring words, CQEs, SQ index array).
    pub fn rings(&self) -> SharedRegion {
        self.inner.rings.region()
    }

    /// The SQE array region.
    pub fn sqes(&self) -> SharedRegion {
        self.inner.sqes.region()
    }

    /// Fixed buffer 0, if one was registered.
    pub fn fixed_buffer(&self) -> Option<SharedRegion> {
        self.inner.fixed_buffer
    }

    /// Entries in the fixed-file table.
    pub fn files(&self) -> u32 {
        self.inner.files
    }

    /// The kernel's SQ head: entries below it are consumed.
    pub fn sq_head(&self) -> u32 {
        self.inner
            .word(self.inner.layout.sq_head)
            .load(Ordering::Acquire)
    }

    /// The producer's SQ tail: entries below it are published.
    pub fn sq_tail(&self) -> u32 {
        self.inner
            .word(self.inner.layout.sq_tail)
            .load(Ordering::Acquire)
    }

    /// Published SQEs the kernel has not consumed yet.
    pub fn sq_pending(&self) -> u32 {
        let head = self.sq_head();
        self.sq_tail().wrapping_sub(head)
    }

    /// The SQ flags (`IORING_SQ_NEED_WAKEUP`, `IORING_SQ_CQ_OVERFLOW`, ...).
    pub fn sq_flags(&self) -> IoringSqFlags {
        IoringSqFlags::from_bits_retain(
            self.inner
                .word(self.inner.layout.sq_flags)
                .load(Ordering::Acquire),
        )
    }

    /// Whether the SQPOLL thread sleeps and needs [`SqpollRing::wake`] to see new
    /// entries.
    pub fn needs_wakeup(&self) -> bool {
        self.sq_flags().contains(IoringSqFlags::NEED_WAKEUP)
    }

    /// SQEs the kernel dropped as invalid (an SQ index out of range).
    pub fn sq_dropped(&self) -> u32 {
        self.inner
            .word(self.inner.layout.sq_dropped)
            .load(Ordering::Acquire)
    }

    /// The consumer's CQ head: CQEs below it are reaped.
    pub fn cq_head(&self) -> u32 {
        self.inner
            .word(self.inner.layout.cq_head)
            .load(Ordering::Acquire)
    }

    /// The kernel's CQ tail: CQEs below it are written.
    pub fn cq_tail(&self) -> u32 {
        self.inner
            .word(self.inner.layout.cq_tail)
            .load(Ordering::Acquire)
    }

    /// Puts the CQ tail word back to `to` if it still holds `from`; whether it did.
    /// The word is the kernel's: it stores its own count of posted completions there
    /// and never reads it back, so this changes only what the ring's consumers see.
    /// For one use ([`crate::direct::waker`]): putting back a tail the kernel itself
    /// stored before, after the word was seen going back.
    pub fn restore_cq_tail(&self, from: u32, to: u32) -> bool {
        self.inner
            .word(self.inner.layout.cq_tail)
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The kernel's own count of completions posted (`CachedCqTail` in the ring's
    /// `/proc/self/fdinfo`): what it stores in the CQ tail word at each commit.
    /// `None` where the kernel does not show it or the ring is closed.
    pub fn kernel_cq_tail(&self) -> Option<u32> {
        self.with_fd(|fd| {
            // Read while the fd is held open, so it names this ring.
            let text =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
            text.lines()
                .find_map(|l| l.strip_prefix("CachedCqTail:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .ok()
        .flatten()
    }

    /// Completions the kernel could not post because the CQ was full.
    pub fn cq_overflow(&self) -> u32 {
        self.inner
            .word(self.inner.layout.cq_overflow)
            .load(Ordering::Acquire)
    }

    /// Wakes the SQPOLL thread (`io_uring_enter(IORING_ENTER_SQ_WAKEUP)`).
    pub fn wake(&self) -> Result<(), UringError> {
        self.with_fd(sys::wake_sqpoll)?
            .map_err(|e| UringError::sys("io_uring_enter(IORING_ENTER_SQ_WAKEUP)", e))
    }

    /// Cancels every request in flight (`IORING_REGISTER_SYNC_CANCEL`, any request),
    /// waiting at most `timeout` for those that cannot be cancelled at once; each is
    /// answered `-ECANCELED` in the CQ. Nothing in flight is not an error.
    pub fn cancel_all(&self, timeout: std::time::Duration) -> Result<(), UringError> {
        match self.with_fd(|fd| sys::sync_cancel_any(fd, timeout))? {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(UringError::sys(
                "io_uring_register(IORING_REGISTER_SYNC_CANCEL)",
                e,
            )),
        }
    }

    /// The CQE at ring position `pos` (one the kernel has written: below the tail).
    fn cqe_at(&self, pos: u32) -> Completion {
        let off = self.inner.layout.cqes as usize
            + (pos & self.inner.layout.cq_mask) as usize * sys::CQE_SIZE;
        // SAFETY: `RingLayout::check` proved the CQE array (cq_entries × 16 bytes,
        // 8-aligned) inside the rings region, which `self` keeps alive; an entry
        // below a tail loaded with Acquire is fully written; a racing rewrite by the
        // kernel could only make the copied values stale, never invalid (plain data
        // with the kernel's layout, read volatile).
        unsafe {
            std::ptr::read_volatile(
                self.inner.rings.region().host_ptr.as_ptr().add(off) as *const Completion
            )
        }
    }

    /// Completions posted but not reaped, without reaping them.
    pub fn peek_completions(&self) -> Vec<Completion> {
        self.completions_between(self.cq_head(), self.cq_tail())
    }

    /// The CQEs at ring positions `head..tail`, as head and tail were read earlier,
    /// without reaping them. The kernel rewrites an entry only once the head has
    /// passed it and `cq_entries` newer completions arrived, so entries read soon
    /// after the positions were are the ones those positions named.
    pub fn completions_between(&self, head: u32, tail: u32) -> Vec<Completion> {
        let n = tail.wrapping_sub(head).min(self.inner.layout.cq_entries);
        (0..n).map(|i| self.cqe_at(head.wrapping_add(i))).collect()
    }

    /// Reaps one completion, if any. The ring must have no other consumer (no
    /// device reaping it).
    pub fn pop(&self) -> Option<Completion> {
        let head = self
            .inner
            .word(self.inner.layout.cq_head)
            .load(Ordering::Relaxed);
        if head == self.cq_tail() {
            return None;
        }
        let c = self.cqe_at(head);
        self.inner
            .word(self.inner.layout.cq_head)
            .store(head.wrapping_add(1), Ordering::Release);
        Some(c)
    }

    /// Pushes one SQE and publishes it to the SQ tail; returns its SQ position.
    /// The SQPOLL thread picks it up (wake it if [`SqpollRing::needs_wakeup`]).
    ///
    /// # Safety
    ///
    /// 1. The ring has no other producer (no device submitting on it) while this runs.
    /// 2. Whatever memory and files `sqe` names stay valid until its completion is
    ///    reaped (the ring's restrictions confine it to the fixed buffer and fixed
    ///    files, but a plain SQE on a ring built with other restrictions may not be).
    pub unsafe fn push(&self, sqe: &io_uring::squeue::Entry) -> Result<u32, UringError> {
        let l = &self.inner.layout;
        let tail = self.inner.word(l.sq_tail).load(Ordering::Relaxed);
        if tail.wrapping_sub(self.sq_head()) >= l.sq_entries {
            return Err(UringError::SqFull);
        }
        let idx = tail & l.sq_mask;
        // SAFETY: the SQE array holds sq_entries × 64 bytes (checked at create) in
        // memory `self` keeps alive, page-aligned; entry `idx` is not in the kernel's
        // hands (it is at or past the tail and the queue is not full), and there is
        // no other producer (1.). `squeue::Entry` is `repr(C)` over the uapi SQE.
        unsafe {
            std::ptr::write_volatile(
                (self.inner.sqes.region().host_ptr.as_ptr() as *mut io_uring::squeue::Entry)
                    .add(idx as usize),
                sqe.clone(),
            )
        };
        self.inner.sq_array(idx).store(idx, Ordering::Relaxed);
        self.inner
            .word(l.sq_tail)
            .store(tail.wrapping_add(1), Ordering::Release);
        Ok(tail)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::memory::{HostMemory, MemoryProvider};
    use io_uring::{opcode, types};
    use std::io::Read;
    use std::time::{Duration, Instant};

    /// A confined ring over `files`, with a fresh 64 KiB staging area as fixed buffer 0.
    pub(crate) fn confined_ring(
        files: &[&std::fs::File],
        idle: Duration,
    ) -> (SqpollRing, Arc<dyn SharedMemory>) {
        let fds: Vec<_> = files.iter().map(|f| Some(f.as_fd())).collect();
        confined_ring_of(&fds, idle)
    }

    /// `confined_ring` over a fixed-file table that may have empty entries.
    fn confined_ring_of(
        fds: &[Option<BorrowedFd<'_>>],
        idle: Duration,
    ) -> (SqpollRing, Arc<dyn SharedMemory>) {
        let (mut ring, staging) = registered_ring(fds, idle);
        ring.restrict(&Restrictions::gpuio()).unwrap();
        (ring.enable().unwrap(), staging)
    }

    /// A disabled ring with `fds` as its fixed files and 64 KiB of fresh shared
    /// memory (returned) as fixed buffer 0, not yet restricted.
    fn registered_ring(
        fds: &[Option<BorrowedFd<'_>>],
        idle: Duration,
    ) -> (DisabledRing, Arc<dyn SharedMemory>) {
        let spec = RingSpec::new(16, idle);
        let rings: Arc<dyn SharedMemory> =
            HostMemory.alloc_shared(spec.rings_bytes()).unwrap().into();
        let sqes: Arc<dyn SharedMemory> =
            HostMemory.alloc_shared(spec.sqes_bytes()).unwrap().into();
        let staging: Arc<dyn SharedMemory> = HostMemory.alloc_shared(64 << 10).unwrap().into();
        let mut ring = DisabledRing::create(&spec, rings, sqes).unwrap();
        ring.register_files(fds).unwrap();
        // SAFETY: `staging` is fresh shared memory, touched by the tests only through
        // `write_bytes`, and outlives the ring in every test.
        unsafe { ring.register_buffer(staging.region()) }.unwrap();
        (ring, staging)
    }

    /// Pushes `sqe`, waking the SQPOLL thread as needed, and waits for its completion.
    pub(crate) fn run(ring: &SqpollRing, sqe: io_uring::squeue::Entry) -> i32 {
        // SAFETY: the test is the ring's only producer; the SQE names the fixed
        // buffer and fixed files the test keeps alive, or nothing at all.
        unsafe { ring.push(&sqe) }.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(c) = ring.pop() {
                return c.res;
            }
            if ring.needs_wakeup() {
                ring.wake().unwrap();
            }
            assert!(Instant::now() < deadline, "no completion within 10 s");
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn len(f: &std::fs::File) -> u64 {
        f.metadata().unwrap().len()
    }

    #[test]
    fn restrictions_refuse_a_plain_write_on_a_raw_fd_and_leave_the_file_untouched() {
        let out = tempfile::tempfile().unwrap();
        let secret = tempfile::tempfile().unwrap();
        let (ring, staging) = confined_ring(&[&out], Duration::from_millis(50));
        let buf = staging.region().host_ptr.as_ptr();
        let plain = opcode::Write::new(types::Fd(secret.as_raw_fd()), buf, 64).build();
        assert_eq!(run(&ring, plain), -libc::EACCES);
        let no_fixed_flag =
            opcode::WriteFixed::new(types::Fd(secret.as_raw_fd()), buf, 64, 0).build();
        assert_eq!(run(&ring, no_fixed_flag), -libc::EACCES);
        let openat = opcode::OpenAt::new(types::Fd(libc::AT_FDCWD), c"/tmp".as_ptr())
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE);
        assert_eq!(run(&ring, openat), -libc::EACCES, "opcode not allowed");
        assert_eq!(len(&secret), 0);
        assert_eq!(len(&out), 0);
    }

    /// `IOSQE_ASYNC` only moves a request to the kernel's io-wq workers, so the ring
    /// lets it through on a fixed transfer; links, drains, buffer selection and
    /// skipped completions stay refused.
    #[test]
    fn restrictions_let_a_fixed_transfer_go_to_the_workers_and_refuse_every_other_flag() {
        use io_uring::squeue::Flags;
        let out = tempfile::tempfile().unwrap();
        let (ring, staging) = confined_ring(&[&out], Duration::from_millis(50));
        let buf = staging.region().host_ptr.as_ptr();
        let write = |off| {
            opcode::WriteFixed::new(types::Fixed(0), buf, 64, 0)
                .offset(off)
                .build()
        };
        assert_eq!(
            run(&ring, write(0).flags(Flags::FIXED_FILE | Flags::ASYNC)),
            64
        );
        assert_eq!(len(&out), 64);
        // (WRITE_FIXED takes no selected buffer: the kernel refuses that flag on it
        // before the restrictions look.)
        for (flag, name, errno) in [
            (Flags::IO_LINK, "IO_LINK", libc::EACCES),
            (Flags::IO_HARDLINK, "IO_HARDLINK", libc::EACCES),
            (Flags::IO_DRAIN, "IO_DRAIN", libc::EACCES),
            (Flags::BUFFER_SELECT, "BUFFER_SELECT", libc::EOPNOTSUPP),
            (Flags::SKIP_SUCCESS, "CQE_SKIP_SUCCESS", libc::EACCES),
        ] {
            let sqe = write(64).flags(Flags::FIXED_FILE | flag);
            assert_eq!(run(&ring, sqe), -errno, "{name} is not allowed");
        }
        assert_eq!(len(&out), 64);
    }

    #[test]
    fn a_disabled_ring_takes_a_cap_on_its_io_workers_and_then_runs() {
        let out = tempfile::tempfile().unwrap();
        let (mut ring, staging) = registered_ring(&[Some(out.as_fd())], Duration::from_millis(50));
        ring.limit_io_workers(4).unwrap();
        ring.restrict(&Restrictions::gpuio()).unwrap();
        let ring = ring.enable().unwrap();
        let buf = staging.region().host_ptr.as_ptr();
        let sqe = opcode::WriteFixed::new(types::Fixed(0), buf, 4096, 0)
            .offset(0)
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE | io_uring::squeue::Flags::ASYNC);
        assert_eq!(run(&ring, sqe), 4096);
        assert_eq!(len(&out), 4096);
    }

    /// SEND and RECV take a plain buffer address, which nothing binds to the fixed
    /// buffer: the ring refuses them even on a socket fixed file, and a socket is
    /// sent to and received from with WRITE_FIXED / READ_FIXED instead.
    #[test]
    fn restrictions_refuse_send_and_recv_and_a_socket_takes_write_fixed_and_read_fixed() {
        use std::io::Write;
        use std::os::unix::net::UnixStream;
        let (ours, mut peer) = UnixStream::pair().unwrap();
        let (ring, staging) = confined_ring_of(&[Some(ours.as_fd())], Duration::from_millis(50));
        let secret = [0x5au8; 64];
        let send = opcode::Send::new(types::Fixed(0), secret.as_ptr(), 64)
            .flags(libc::MSG_NOSIGNAL)
            .build();
        assert_eq!(run(&ring, send), -libc::EACCES, "SEND is not allowed");
        let mut landing = [0u8; 64];
        peer.write_all(b"ping").unwrap();
        let recv = opcode::Recv::new(types::Fixed(0), landing.as_mut_ptr(), 64).build();
        assert_eq!(run(&ring, recv), -libc::EACCES, "RECV is not allowed");
        assert_eq!(landing, [0u8; 64]);
        let buf = staging.region().host_ptr.as_ptr();
        let r = opcode::ReadFixed::new(types::Fixed(0), buf, 64, 0)
            .offset(u64::MAX)
            .build();
        assert_eq!(run(&ring, r), 4, "the socket's bytes, read into staging");
        staging.write_bytes(0, b"pong").unwrap();
        let w = opcode::WriteFixed::new(types::Fixed(0), buf, 4, 0)
            .offset(u64::MAX)
            .build();
        assert_eq!(run(&ring, w), 4);
        peer.set_nonblocking(true).unwrap();
        let mut got = [0u8; 8];
        assert_eq!(
            peer.read(&mut got).unwrap(),
            4,
            "only the WRITE_FIXED arrived"
        );
        assert_eq!(&got[..4], b"pong");
    }

    #[test]
    fn write_fixed_on_fixed_file_zero_writes_from_the_staging_buffer() {
        let mut out = tempfile::tempfile().unwrap();
        let (ring, staging) = confined_ring(&[&out], Duration::from_millis(50));
        staging.write_bytes(128, b"hello, ring").unwrap();
        let buf = staging.region().host_ptr.as_ptr();
        // SAFETY: 128 bytes into a 64 KiB allocation.
        let src = unsafe { buf.add(128) };
        let w = opcode::WriteFixed::new(types::Fixed(0), src, 11, 0)
            .offset(5)
            .build();
        assert_eq!(run(&ring, w), 11);
        let mut got = Vec::new();
        out.read_to_end(&mut got).unwrap();
        assert_eq!(&got[5..], b"hello, ring");
        assert_eq!(ring.fixed_buffer(), Some(staging.region()));
    }

    #[test]
    fn fixed_buffer_bounds_and_fixed_file_table_are_enforced() {
        let out = tempfile::tempfile().unwrap();
        let (ring, staging) = confined_ring(&[&out], Duration::from_millis(50));
        let r = staging.region();
        // SAFETY: pointer arithmetic only; the kernel checks the range.
        let past_end = unsafe { r.host_ptr.as_ptr().add(r.len - 8) };
        let w = opcode::WriteFixed::new(types::Fixed(0), past_end, 64, 0).build();
        assert_eq!(run(&ring, w), -libc::EFAULT, "range past the fixed buffer");
        let w = opcode::WriteFixed::new(types::Fixed(1), r.host_ptr.as_ptr(), 64, 0).build();
        assert_eq!(
            run(&ring, w),
            -libc::EBADF,
            "fixed file 1 is not registered"
        );
        let nop = opcode::Nop::new()
            .build()
            .flags(io_uring::squeue::Flags::FIXED_FILE);
        assert_eq!(run(&ring, nop), 0);
        assert_eq!(len(&out), 0);
    }

    #[test]
    fn an_empty_fixed_file_entry_fails_every_sqe_naming_it_with_ebadf() {
        let out = tempfile::tempfile().unwrap();
        let (ring, staging) =
            confined_ring_of(&[None, Some(out.as_fd())], Duration::from_millis(50));
        let buf = staging.region().host_ptr.as_ptr();
        let w = opcode::WriteFixed::new(types::Fixed(0), buf, 64, 0).build();
        assert_eq!(run(&ring, w), -libc::EBADF, "entry 0 is empty");
        let r = opcode::ReadFixed::new(types::Fixed(0), buf, 64, 0).build();
        assert_eq!(run(&ring, r), -libc::EBADF, "entry 0 is empty");
        let w = opcode::WriteFixed::new(types::Fixed(1), buf, 64, 0).build();
        assert_eq!(run(&ring, w), 64, "entry 1 is the file");
        assert_eq!(len(&out), 64);
    }

    #[test]
    fn an_enabled_ring_refuses_further_registration() {
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(50));
        let other = tempfile::tempfile().unwrap();
        let e = ring
            .with_fd(|fd| sys::register_files(fd, &[other.as_raw_fd()]))
            .unwrap()
            .unwrap_err();
        assert!(
            e == rustix::io::Errno::ACCESS || e == rustix::io::Errno::BUSY,
            "got {e:?}"
        );
    }

    #[test]
    fn the_host_cancels_a_read_of_an_empty_pipe_from_another_thread_and_it_answers_ecanceled() {
        let (reader, _writer) = rustix::pipe::pipe().unwrap();
        let (ring, staging) = confined_ring_of(&[Some(reader.as_fd())], Duration::from_millis(50));
        let ring = Arc::new(ring);
        let read =
            opcode::ReadFixed::new(types::Fixed(0), staging.region().host_ptr.as_ptr(), 16, 0)
                .offset(u64::MAX)
                .build()
                .flags(io_uring::squeue::Flags::FIXED_FILE)
                .user_data(9);
        // SAFETY: the test is the only producer; the read lands in the fixed buffer,
        // which outlives the ring.
        unsafe { ring.push(&read) }.unwrap();
        // The kernel must have taken the read before it is cancelled: on a busy host
        // SQPOLL may not have looked yet (or sleeps), and a cancel before that finds
        // nothing, after which the read waits for ever.
        let taken_by = Instant::now() + Duration::from_secs(5);
        while ring.sq_pending() > 0 {
            assert!(Instant::now() < taken_by, "SQPOLL never took the read");
            if ring.needs_wakeup() {
                ring.wake().unwrap();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            ring.peek_completions().is_empty(),
            "the read waits for data"
        );
        // Not the thread that created the ring.
        let r = ring.clone();
        std::thread::spawn(move || r.cancel_all(Duration::from_millis(500)))
            .join()
            .unwrap()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let c = loop {
            if let Some(c) = ring.pop() {
                break c;
            }
            assert!(Instant::now() < deadline, "no completion after the cancel");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!((c.user_data, c.res), (9, -libc::ECANCELED));
        ring.cancel_all(Duration::ZERO).unwrap();
    }

    #[test]
    fn ring_words_and_cqes_lie_inside_the_callers_memory() {
        let out = tempfile::tempfile().unwrap();
        let (ring, _staging) = confined_ring(&[&out], Duration::from_millis(50));
        let l = *ring.layout();
        assert_eq!((l.sq_entries, l.cq_entries), (16, 32));
        assert!(l.cqes as usize + 32 * 16 <= ring.rings().len);
        assert_eq!(ring.files(), 1);
        assert_eq!(ring.sq_pending(), 0);
        assert!(ring.peek_completions().is_empty());
    }

    #[test]
    fn spec_refuses_entry_counts_the_kernel_would_round() {
        assert!(RingSpec::new(24, Duration::from_millis(1)).check().is_err());
        assert!(RingSpec::new(65536, Duration::from_millis(1))
            .check()
            .is_err());
        assert!(RingSpec::new(256, Duration::from_millis(1)).check().is_ok());
    }
}
