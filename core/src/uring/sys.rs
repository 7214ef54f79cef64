//! The raw io_uring system calls gpuio makes, and the plain vectored calls a host
//! thread makes beside a ring ([`pwritev`], [`preadv`], for [`crate::runs`]): the
//! only `unsafe` calls into the kernel in this crate, each with the promise it
//! relies on.
//!
//! rustix's `io_uring` module supplies the syscalls and the uapi structs
//! (`io_uring_params`, `io_uring_restriction`, the flag sets); this module only adds
//! the preconditions, so [`super`]'s checked wrappers can be read as plain calls.
//! Numbers and structs are those of `include/uapi/linux/io_uring.h`.

use std::ffi::c_void;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use rustix::io;
use rustix::io_uring as ru;

pub use ru::{
    io_uring_params, io_uring_ptr, io_uring_restriction, io_uring_sync_cancel_reg,
    IoringAsyncCancelFlags, IoringEnterFlags, IoringOp, IoringRegisterOp, IoringRestrictionOp,
    IoringSetupFlags, IoringSqFlags, IoringSqeFlags,
};

/// Size of one SQE (`struct io_uring_sqe`, without `IORING_SETUP_SQE128`).
pub const SQE_SIZE: usize = 64;
/// Size of one CQE (`struct io_uring_cqe`, without `IORING_SETUP_CQE32`).
pub const CQE_SIZE: usize = 16;
/// `IORING_MAX_ENTRIES` (io_uring/io_uring.h): most SQ entries a ring may have.
pub const MAX_SQ_ENTRIES: u32 = 32768;
/// `IORING_MAX_CQ_ENTRIES`: `2 * IORING_MAX_ENTRIES`.
pub const MAX_CQ_ENTRIES: u32 = 2 * MAX_SQ_ENTRIES;
/// Largest single registered buffer (`SZ_1G`, io_uring/rsrc.c `io_buffer_validate`).
pub const MAX_FIXED_BUFFER: usize = 1 << 30;

/// `io_uring_setup(entries, params)`.
///
/// # Safety
///
/// 1. `params.flags` does not contain `IORING_SETUP_ATTACH_WQ` (rustix's own
///    precondition: `wq_fd` is not checked here).
/// 2. With `IORING_SETUP_NO_MMAP`, `params.sq_off.user_addr` and
///    `params.cq_off.user_addr` point at page-aligned, writable memory large enough
///    for the SQE array and the rings, which nothing else owns as Rust data: the
///    kernel pins those pages and reads and writes them for as long as the ring
///    lives.
pub unsafe fn setup(entries: u32, params: &mut io_uring_params) -> io::Result<OwnedFd> {
    debug_assert!(!params.flags.contains(IoringSetupFlags::ATTACH_WQ));
    // SAFETY: ATTACH_WQ is not set (1.); the user memory is the caller's promise (2.).
    unsafe { ru::io_uring_setup(entries, params) }
}

/// `IORING_REGISTER_FILES`: the ring's fixed-file table, in index order.
pub fn register_files(ring: BorrowedFd<'_>, fds: &[RawFd]) -> io::Result<()> {
    let n = u32::try_from(fds.len()).map_err(|_| io::Errno::INVAL)?;
    // SAFETY: the kernel reads `n` ints from `fds`, which lives across the call, and
    // takes its own reference to each file (the caller may close its fds after).
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterFiles,
            fds.as_ptr().cast(),
            n,
        )
    }
    .map(drop)
}

/// `IORING_REGISTER_BUFFERS` with one iovec: fixed buffer 0.
///
/// # Safety
///
/// `ptr..ptr + len` is mapped memory that no Rust reference covers (shared memory
/// reached only through raw copies and atomics): SQEs on this ring may make the
/// kernel read or write any of it at any time until the ring is closed. The kernel
/// pins the pages, so unmapping them early cannot make it touch other memory.
pub unsafe fn register_buffer(ring: BorrowedFd<'_>, ptr: *mut u8, len: usize) -> io::Result<()> {
    let iov = ru::iovec {
        iov_base: ptr.cast::<c_void>(),
        iov_len: len,
    };
    // SAFETY: the kernel reads one iovec from `iov` (live across the call); the
    // memory it describes is the caller's promise above.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterBuffers,
            (&iov as *const ru::iovec).cast(),
            1,
        )
    }
    .map(drop)
}

/// `IORING_REGISTER_RESTRICTIONS` (only on a ring created with `R_DISABLED`).
pub fn register_restrictions(
    ring: BorrowedFd<'_>,
    restrictions: &[io_uring_restriction],
) -> io::Result<()> {
    let n = u32::try_from(restrictions.len()).map_err(|_| io::Errno::INVAL)?;
    // SAFETY: the kernel copies `n` restriction structs (16 bytes each, the uapi
    // layout rustix defines) from a slice that lives across the call.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterRestrictions,
            restrictions.as_ptr().cast(),
            n,
        )
    }
    .map(drop)
}

/// `IORING_REGISTER_IOWQ_MAX_WORKERS`: caps the io-wq workers that run the ring's
/// requests off the submitting thread, `[bounded, unbounded]` (regular files and
/// block devices; everything else), 0 leaving a cap as it is. Returns the caps in
/// force before.
pub fn register_iowq_max_workers(ring: BorrowedFd<'_>, caps: [u32; 2]) -> io::Result<[u32; 2]> {
    let mut v = caps;
    // SAFETY: the kernel reads two u32s at `v` and writes the old caps back there;
    // `v` lives across the call.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterIowqMaxWorkers,
            v.as_mut_ptr().cast(),
            2,
        )
    }
    .map(|_| v)
}

/// `struct io_uring_rsrc_update` (uapi), as `IORING_(UN)REGISTER_RING_FDS` read it:
/// `data` holds an fd there, which rustix's struct types as a pointer.
#[repr(C, align(8))]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// `IORING_REGISTER_RING_FDS` with one entry: registers `ring` in the calling
/// thread's own table of rings, at a free index (returned). The kernel first sets up
/// the thread's io_uring context if it has none, and with it the thread's io-wq,
/// which takes `ring`'s hash map (Linux 5.18 and later).
pub fn register_ring_fd(ring: BorrowedFd<'_>) -> io::Result<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX, // any free index
        resv: 0,
        data: ring.as_raw_fd() as u64,
    };
    // SAFETY: the kernel reads one update from `up` and writes the index it chose
    // back into its `offset`; `up` lives across the call.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterRingFds,
            (&mut up as *mut RsrcUpdate).cast(),
            1,
        )
    }?;
    Ok(up.offset)
}

/// `IORING_UNREGISTER_RING_FDS` for an index [`register_ring_fd`] returned.
pub fn unregister_ring_fd(ring: BorrowedFd<'_>, index: u32) -> io::Result<()> {
    let up = RsrcUpdate {
        offset: index,
        resv: 0,
        data: 0,
    };
    // SAFETY: the kernel reads one update from `up`, which lives across the call.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::UnregisterRingFds,
            (&up as *const RsrcUpdate).cast(),
            1,
        )
    }
    .map(drop)
}

/// `IORING_REGISTER_ENABLE_RINGS`: starts a ring created with `R_DISABLED`.
pub fn enable_rings(ring: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: no argument is passed; from here on the kernel's SQPOLL thread reads
    // the SQ ring the memory of which was promised valid at `setup`.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterEnableRings,
            std::ptr::null(),
            0,
        )
    }
    .map(drop)
}

/// `io_uring_enter(ring, 0, 0, IORING_ENTER_SQ_WAKEUP)`: wakes a sleeping SQPOLL
/// thread; submits nothing itself.
pub fn wake_sqpoll(ring: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: no SQE is submitted and no argument is passed (flags carry neither
    // EXT_ARG nor EXT_ARG_REG); the SQPOLL thread it wakes reads only ring memory
    // promised valid at `setup`.
    unsafe { ru::io_uring_enter(ring, 0, 0, IoringEnterFlags::SQ_WAKEUP) }.map(drop)
}

/// `IORING_REGISTER_SYNC_CANCEL` with `IORING_ASYNC_CANCEL_ANY`: cancels every
/// request in flight on the ring, waiting at most `timeout` for those that cannot be
/// cancelled at once. Their completions (`-ECANCELED`) are posted to the CQ as usual.
/// `ENOENT`: nothing was in flight; `ETIME`: some did not finish in time.
pub fn sync_cancel_any(ring: BorrowedFd<'_>, timeout: std::time::Duration) -> io::Result<()> {
    let mut reg = io_uring_sync_cancel_reg::default();
    reg.flags = IoringAsyncCancelFlags::ANY;
    reg.fd = -1;
    reg.timeout = rustix::time::Timespec {
        tv_sec: timeout.as_secs().try_into().unwrap_or(i64::MAX),
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // SAFETY: the kernel copies one `io_uring_sync_cancel_reg` (the uapi layout
    // rustix defines, reserved fields zero) from `reg`, which lives across the call;
    // the cancelled requests' memory is the ring's, untouched by this call.
    unsafe {
        ru::io_uring_register(
            ring,
            IoringRegisterOp::RegisterSyncCancel,
            (&reg as *const io_uring_sync_cancel_reg).cast(),
            1,
        )
    }
    .map(drop)
}

/// A restriction entry allowing one registration opcode (`IORING_RESTRICTION_REGISTER_OP`).
pub fn allow_register_op(op: IoringRegisterOp) -> io_uring_restriction {
    let mut r = io_uring_restriction::default();
    r.opcode = IoringRestrictionOp::RegisterOp;
    r.register_or_sqe_op_or_sqe_flags.register_op = op;
    r
}

/// A restriction entry (`struct io_uring_restriction`) allowing one SQE opcode.
pub fn allow_sqe_op(op: IoringOp) -> io_uring_restriction {
    let mut r = io_uring_restriction::default();
    r.opcode = IoringRestrictionOp::SqeOp;
    r.register_or_sqe_op_or_sqe_flags.sqe_op = op;
    r
}

/// A restriction entry for `IORING_RESTRICTION_SQE_FLAGS_ALLOWED` or `_REQUIRED`.
pub fn sqe_flags(kind: IoringRestrictionOp, flags: IoringSqeFlags) -> io_uring_restriction {
    let mut r = io_uring_restriction::default();
    r.opcode = kind;
    r.register_or_sqe_op_or_sqe_flags.sqe_flags = flags;
    r
}

const _: () = assert!(std::mem::size_of::<io_uring_restriction>() == 16);
const _: () = assert!(std::mem::size_of::<io_uring_params>() == 120);

/// `pwritev(2)`: the iovecs' bytes, in order, from `offset` on; `EINTR` is retried.
///
/// # Safety
///
/// Every iovec's `iov_base .. iov_base + iov_len` is mapped for the whole call and
/// no Rust reference covers it (shared staging memory: the kernel copies whatever
/// bytes it finds there).
pub unsafe fn pwritev(
    fd: BorrowedFd<'_>,
    iovecs: &[libc::iovec],
    offset: i64,
) -> io::Result<usize> {
    let count = libc::c_int::try_from(iovecs.len()).map_err(|_| io::Errno::INVAL)?;
    retrying(|| {
        // SAFETY: the iovec array is borrowed for the call and the ranges it names
        // stay mapped (the caller's promise); `fd` is open for the borrow's lifetime.
        unsafe { libc::pwritev(fd.as_raw_fd(), iovecs.as_ptr(), count, offset) }
    })
}

/// `preadv(2)`: the file's bytes from `offset` on, into the iovecs in order; `EINTR`
/// is retried.
///
/// # Safety
///
/// Every iovec's `iov_base .. iov_base + iov_len` is mapped and writable for the
/// whole call and no Rust reference covers it (shared staging memory).
pub unsafe fn preadv(fd: BorrowedFd<'_>, iovecs: &[libc::iovec], offset: i64) -> io::Result<usize> {
    let count = libc::c_int::try_from(iovecs.len()).map_err(|_| io::Errno::INVAL)?;
    retrying(|| {
        // SAFETY: the iovec array is borrowed for the call and the ranges it names
        // stay mapped and writable (the caller's promise); `fd` is open for the
        // borrow's lifetime.
        unsafe { libc::preadv(fd.as_raw_fd(), iovecs.as_ptr(), count, offset) }
    })
}

/// Makes `call` (a libc call returning `-1` and `errno` on failure) until it is not
/// interrupted.
fn retrying(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let r = call();
        if r >= 0 {
            return Ok(r as usize);
        }
        let raw = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        let e = io::Errno::from_raw_os_error(raw);
        if e != io::Errno::INTR {
            return Err(e);
        }
    }
}
