//! The raw system calls this crate makes, in one place.
//!
//! The buffers are staging memory a kernel shares with the host, so they are passed
//! as raw pointers straight to the kernel: no Rust reference ever points at bytes a
//! device may be writing at the same time. `EINTR` is retried; any other failure
//! comes back as its [`Errno`], which the mailbox hands to the device as `-errno`.

use std::os::fd::{AsRawFd, BorrowedFd};

use rustix::io::Errno;

fn check(r: isize) -> Result<usize, Errno> {
    if r >= 0 {
        return Ok(r as usize);
    }
    let raw = std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    Err(Errno::from_raw_os_error(raw))
}

fn retrying(mut call: impl FnMut() -> isize) -> Result<usize, Errno> {
    loop {
        match check(call()) {
            Err(Errno::INTR) => continue,
            r => return r,
        }
    }
}

/// `pwrite(2)`.
///
/// # Safety
/// 1. `buf .. buf + len` is mapped for the whole call (it may be written concurrently;
///    the kernel then copies whatever bytes it finds).
pub(crate) unsafe fn pwrite(
    fd: BorrowedFd<'_>,
    buf: *const u8,
    len: usize,
    offset: i64,
) -> Result<usize, Errno> {
    // SAFETY: the caller keeps the buffer mapped (precondition 1); `fd` is open for the
    // borrow's lifetime.
    retrying(|| unsafe { libc::pwrite(fd.as_raw_fd(), buf.cast(), len, offset) })
}

/// `pread(2)`.
///
/// # Safety
/// 1. `buf .. buf + len` is mapped and writable for the whole call, and no Rust
///    reference points into it.
pub(crate) unsafe fn pread(
    fd: BorrowedFd<'_>,
    buf: *mut u8,
    len: usize,
    offset: i64,
) -> Result<usize, Errno> {
    // SAFETY: precondition 1; `fd` is open for the borrow's lifetime.
    retrying(|| unsafe { libc::pread(fd.as_raw_fd(), buf.cast(), len, offset) })
}

/// `write(2)`: at the fd's own position (streams, `O_APPEND` files).
///
/// # Safety
/// As [`pwrite`].
pub(crate) unsafe fn write(fd: BorrowedFd<'_>, buf: *const u8, len: usize) -> Result<usize, Errno> {
    // SAFETY: as in `pwrite`.
    retrying(|| unsafe { libc::write(fd.as_raw_fd(), buf.cast(), len) })
}

/// `read(2)`: at the fd's own position.
///
/// # Safety
/// As [`pread`].
pub(crate) unsafe fn read(fd: BorrowedFd<'_>, buf: *mut u8, len: usize) -> Result<usize, Errno> {
    // SAFETY: as in `pread`.
    retrying(|| unsafe { libc::read(fd.as_raw_fd(), buf.cast(), len) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn failures_come_back_as_their_errno() {
        let f = tempfile::tempfile().unwrap();
        let mut b = [0u8; 4];
        // SAFETY: `b` is a live local buffer of 4 bytes.
        let r = unsafe { pread(f.as_fd(), b.as_mut_ptr(), 4, -1) };
        assert_eq!(r, Err(Errno::INVAL));
        // SAFETY: as above.
        let w = unsafe { pwrite(f.as_fd(), b.as_ptr(), 4, 8) };
        assert_eq!(w, Ok(4));
        assert_eq!(f.metadata().unwrap().len(), 12);
    }
}
