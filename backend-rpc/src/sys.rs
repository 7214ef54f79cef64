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

/// `send(2)` with `MSG_NOSIGNAL`: on a socket whose peer closed, `EPIPE` and no
/// `SIGPIPE` (whose default action would end the host process).
///
/// # Safety
/// As [`pwrite`].
pub(crate) unsafe fn send(fd: BorrowedFd<'_>, buf: *const u8, len: usize) -> Result<usize, Errno> {
    // SAFETY: as in `pwrite`.
    retrying(|| unsafe { libc::send(fd.as_raw_fd(), buf.cast(), len, libc::MSG_NOSIGNAL) })
}

/// `recv(2)` with no flags.
///
/// # Safety
/// As [`pread`].
pub(crate) unsafe fn recv(fd: BorrowedFd<'_>, buf: *mut u8, len: usize) -> Result<usize, Errno> {
    // SAFETY: as in `pread`.
    retrying(|| unsafe { libc::recv(fd.as_raw_fd(), buf.cast(), len, 0) })
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

    #[test]
    fn send_to_a_closed_peer_is_epipe_and_recv_after_its_shutdown_is_zero() {
        // (That no SIGPIPE comes with the EPIPE is shown where SIGPIPE is not ignored,
        // as it is in this harness: tests/sockets.rs runs the mailbox in a child with
        // the default action.)
        let (ours, peer) = std::os::unix::net::UnixStream::pair().unwrap();
        peer.shutdown(std::net::Shutdown::Write).unwrap();
        let mut b = [0u8; 4];
        // SAFETY: `b` is a live local buffer of 4 bytes.
        assert_eq!(unsafe { recv(ours.as_fd(), b.as_mut_ptr(), 4) }, Ok(0));
        drop(peer);
        // SAFETY: as above.
        let r = unsafe { send(ours.as_fd(), b.as_ptr(), 4) };
        assert_eq!(r, Err(Errno::PIPE));
        let f = tempfile::tempfile().unwrap();
        // SAFETY: as above.
        let r = unsafe { send(f.as_fd(), b.as_ptr(), 4) };
        assert_eq!(r, Err(Errno::NOTSOCK), "send(2) on a file");
    }
}
