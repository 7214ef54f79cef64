//! Endpoints: what a kernel may do I/O on, named by index, never by raw fd.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::abi;
use crate::queue::{Direction, QueueConfig};

/// Where the process's descriptors can be reopened by number.
const PROC_SELF_FD: &str = "/proc/self/fd";

/// The kind [`Endpoint::file`] registers `fd` as: a stream when it cannot seek.
fn file_kind(fd: BorrowedFd<'_>) -> EndpointKind {
    use rustix::fs::{FileType, SeekFrom};
    match rustix::fs::seek(fd, SeekFrom::Current(0)) {
        Err(rustix::io::Errno::SPIPE) => match rustix::fs::fstat(fd) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Socket => {
                EndpointKind::Socket
            }
            _ => EndpointKind::Pipe,
        },
        _ => EndpointKind::File,
    }
}

/// The kind of an endpoint. A kernel sees it in the endpoint table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndpointKind {
    /// A regular file: positioned reads and writes.
    File,
    /// A connected socket.
    Socket,
    /// A pipe, tty or other stream (stdout).
    Pipe,
    /// A host queue: framed messages to or from the host program itself
    /// ([`Endpoint::queue_to_host`], [`Endpoint::queue_to_device`]).
    HostQueue,
}

impl EndpointKind {
    pub fn abi(self) -> u32 {
        match self {
            Self::File => abi::endpoint_kind::FILE,
            Self::Socket => abi::endpoint_kind::SOCKET,
            Self::Pipe => abi::endpoint_kind::PIPE,
            Self::HostQueue => abi::endpoint_kind::HOST_QUEUE,
        }
    }

    /// Whether `op` makes sense on this kind, as the rulebook's rule 6 says
    /// ([`crate::request`]): `Ok`, or the `-errno` it is refused with. Socket ops
    /// need a socket (`-ENOTSOCK`, as `send(2)` on any other descriptor); positioned
    /// ops need a file (`-ESPIPE`); a host queue takes messages, not requests
    /// (`-ESPIPE`); an opcode of no I/O family is `-EINVAL`.
    pub fn check_op(self, op: u32) -> Result<(), i32> {
        match op {
            abi::op::SEND | abi::op::RECV if self != Self::Socket => Err(-libc::ENOTSOCK),
            _ if self == Self::HostQueue => Err(-libc::ESPIPE),
            abi::op::PWRITE | abi::op::PREAD if self != Self::File => Err(-libc::ESPIPE),
            abi::op::PWRITE
            | abi::op::PREAD
            | abi::op::WRITE
            | abi::op::READ
            | abi::op::SEND
            | abi::op::RECV => Ok(()),
            _ => Err(-libc::EINVAL),
        }
    }
}

/// What a kernel may do with an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub read: bool,
    pub write: bool,
}

impl Access {
    pub const READ: Access = Access {
        read: true,
        write: false,
    };
    pub const WRITE: Access = Access {
        read: false,
        write: true,
    };
    pub const READ_WRITE: Access = Access {
        read: true,
        write: true,
    };

    pub fn bits(self) -> u32 {
        (if self.read { abi::access::READ } else { 0 })
            | (if self.write { abi::access::WRITE } else { 0 })
    }

    /// Whether `op` is within this access: the ops that move bytes to the endpoint
    /// (`PWRITE`, `WRITE`, `SEND`) need `write`, those that move bytes from it
    /// (`PREAD`, `READ`, `RECV`) need `read`.
    pub fn allows_op(self, op: u32) -> bool {
        match op {
            abi::op::PWRITE | abi::op::WRITE | abi::op::SEND => self.write,
            abi::op::PREAD | abi::op::READ | abi::op::RECV => self.read,
            _ => false,
        }
    }
}

/// One registered endpoint: the host's fd (the channel's own duplicate) and what a
/// kernel may do with it; or a host queue, which has no fd.
#[derive(Debug)]
pub struct Endpoint {
    pub name: String,
    pub kind: EndpointKind,
    pub access: Access,
    fd: Option<OwnedFd>,
    queue: Option<(Direction, QueueConfig)>,
}

impl Endpoint {
    /// Registers `fd` (duplicated: the caller keeps its own).
    ///
    /// Refused, with the reason, when `access` asks for more than the descriptor was
    /// opened for (`Access::WRITE` on a file opened read-only, `Access::READ` on
    /// one opened write-only): otherwise every kernel call would fail with `-EBADF`.
    pub fn new(
        name: impl Into<String>,
        kind: EndpointKind,
        access: Access,
        fd: BorrowedFd<'_>,
    ) -> std::io::Result<Self> {
        let name = name.into();
        if kind == EndpointKind::HostQueue {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "endpoint {name:?}: a host queue has no descriptor; make it with \
                     Endpoint::queue_to_host or Endpoint::queue_to_device"
                ),
            ));
        }
        check_open_mode(&name, access, fd)?;
        Ok(Self {
            name,
            kind,
            access,
            fd: Some(fd.try_clone_to_owned()?),
            queue: None,
        })
    }

    /// A host queue the kernel sends on (`gpuio_send`) and the host program
    /// receives from ([`Channel::receiver`](crate::Channel::receiver)).
    pub fn queue_to_host(name: impl Into<String>, config: QueueConfig) -> Self {
        Self::queue(name.into(), Direction::ToHost, Access::WRITE, config)
    }

    /// A host queue the host program sends on
    /// ([`Channel::sender`](crate::Channel::sender)) and the kernel receives from
    /// (`gpuio_recv`).
    pub fn queue_to_device(name: impl Into<String>, config: QueueConfig) -> Self {
        Self::queue(name.into(), Direction::ToDevice, Access::READ, config)
    }

    fn queue(name: String, direction: Direction, access: Access, config: QueueConfig) -> Self {
        Self {
            name,
            kind: EndpointKind::HostQueue,
            access,
            fd: None,
            queue: Some((direction, config)),
        }
    }

    /// For a host queue: which way it carries messages and how it is sized.
    pub fn queue_config(&self) -> Option<(Direction, &QueueConfig)> {
        self.queue.as_ref().map(|(d, c)| (*d, c))
    }

    /// A second registration of the same descriptor (duplicated again) with the
    /// same name, kind and access, or of the same host queue's configuration: what
    /// opening a channel a second time needs.
    pub fn try_clone(&self) -> Result<Self, CloneError> {
        let fd = match &self.fd {
            Some(fd) => Some(fd.try_clone().map_err(|source| CloneError {
                name: self.name.clone(),
                source,
            })?),
            None => None,
        };
        Ok(Self {
            name: self.name.clone(),
            kind: self.kind,
            access: self.access,
            fd,
            queue: self.queue.clone(),
        })
    }

    /// A file: a regular file, or anything else a positioned call works on (a
    /// block device, `/dev/null`), is an [`EndpointKind::File`]. A descriptor that
    /// cannot seek (`lseek` fails with `ESPIPE`: a FIFO, a tty, a socket opened as a
    /// file) is registered as the stream it is, [`EndpointKind::Pipe`] or
    /// [`EndpointKind::Socket`], so that a positioned call on it is `-ESPIPE` on
    /// every transport, by the rulebook, instead of each transport's system call
    /// answering its own way (`pwrite(2)` refuses it; io_uring's write did not, on
    /// Linux 6.18).
    ///
    /// ```
    /// use gpuio_core::{Access, Endpoint, EndpointKind};
    /// let (_rx, tx) = std::io::pipe()?;
    /// let tx = std::fs::File::from(std::os::fd::OwnedFd::from(tx));
    /// assert_eq!(Endpoint::file("out", &tx, Access::WRITE)?.kind, EndpointKind::Pipe);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn file(
        name: impl Into<String>,
        file: &std::fs::File,
        access: Access,
    ) -> std::io::Result<Self> {
        let fd = file.as_fd();
        Self::new(name, file_kind(fd), access, fd)
    }

    /// A connected stream socket (TCP, Unix), read and written by the kernel with
    /// `gpuio_recv`/`gpuio_read` and `gpuio_send`/`gpuio_write`: on every transport
    /// these are `recv(2)` and `send(2)` with `MSG_NOSIGNAL` (a receive returns what
    /// one `recv(2)` gave, 0 once the peer shut down its side; a send may be short,
    /// and one to a peer that closed is `-EPIPE`, never `SIGPIPE` to this process).
    /// Registered for reading and writing: a socket cannot be reopened with less
    /// access, so [`Endpoint::new`] with less works only on transports that check
    /// every request on the host (forward, mailbox).
    ///
    /// ```
    /// let (ours, _peer) = std::os::unix::net::UnixStream::pair()?;
    /// let ep = gpuio_core::Endpoint::socket("peer", &ours)?;
    /// assert_eq!(ep.kind, gpuio_core::EndpointKind::Socket);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn socket(name: impl Into<String>, socket: &impl AsFd) -> std::io::Result<Self> {
        Self::new(
            name,
            EndpointKind::Socket,
            Access::READ_WRITE,
            socket.as_fd(),
        )
    }

    /// The process's standard output, as a write-only stream.
    pub fn stdout() -> std::io::Result<Self> {
        Self::new(
            "stdout",
            EndpointKind::Pipe,
            Access::WRITE,
            std::io::stdout().as_fd(),
        )
    }

    /// The channel's duplicate of the caller's descriptor: it may allow more than
    /// `access` (a file opened read-write and declared read-only). Transports that
    /// check every request on the host use it; one that lets a kernel name it
    /// directly uses [`Endpoint::fd_with_declared_access`].
    /// `None` for a host queue.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(|fd| fd.as_fd())
    }

    /// Whether the descriptor is a regular file (`fstat`; false without one). The
    /// transports join positioned requests into vectored calls only there: a
    /// regular file's short read is its end, and its writes never wait for a
    /// reader.
    ///
    /// ```
    /// use gpuio_core::{Access, Endpoint, EndpointKind};
    /// let path = std::env::temp_dir().join(format!("gpuio-doc-{}", std::process::id()));
    /// let file = std::fs::File::create(&path)?;
    /// assert!(Endpoint::file("out", &file, Access::WRITE)?.is_regular_file());
    /// let (rx, _tx) = std::io::pipe()?;
    /// use std::os::fd::AsFd;
    /// let pipe = Endpoint::new("in", EndpointKind::Pipe, Access::READ, rx.as_fd())?;
    /// assert!(!pipe.is_regular_file());
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn is_regular_file(&self) -> bool {
        self.fd()
            .and_then(|fd| rustix::fs::fstat(fd).ok())
            .is_some_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
            })
    }

    /// A descriptor for the same file that can do exactly what `access` declares,
    /// for a transport whose kernel-written requests reach the fd unchecked (the
    /// direct ring's fixed-file table): `None` for an endpoint declared with no
    /// access at all.
    ///
    /// When the descriptor was opened for exactly the declared access it is
    /// duplicated. Otherwise (a file opened read-write, declared read-only or
    /// write-only) the file is reopened through `/proc/self/fd/N` with `O_RDONLY`
    /// or `O_WRONLY`, keeping `O_APPEND`, `O_NONBLOCK`, `O_DIRECT`, `O_SYNC`,
    /// `O_DSYNC` and `O_NOATIME` as the original has them and, for a regular file
    /// or block device, its current position (afterwards the two positions move
    /// independently). That works for regular files, FIFOs and pipes, ttys and
    /// other devices. Refused, with the reason, where it cannot be done: a socket
    /// or an anonymous inode (eventfd, …) cannot be reopened, and without `/proc`
    /// nothing can; the caller must then declare the descriptor's own access or use
    /// a transport that checks access on the host.
    pub fn fd_with_declared_access(&self) -> Result<Option<OwnedFd>, ConfineError> {
        self.fd_with_declared_access_via(Path::new(PROC_SELF_FD))
    }

    fn fd_with_declared_access_via(&self, proc_fd: &Path) -> Result<Option<OwnedFd>, ConfineError> {
        use rustix::fs::{FileType, OFlags};
        let (read, write) = (self.access.read, self.access.write);
        let Some(fd) = self.fd.as_ref() else {
            return Ok(None);
        };
        if !read && !write {
            return Ok(None);
        }
        let os = |call: &'static str| {
            let name = self.name.clone();
            move |e: rustix::io::Errno| ConfineError::Os {
                name,
                call,
                source: e.into(),
            }
        };
        let flags = rustix::fs::fcntl_getfl(fd).map_err(os("fcntl(F_GETFL)"))?;
        let mode = OpenMode::of(flags);
        if (mode.read, mode.write) == (read, write) {
            let dup = fd.try_clone().map_err(|source| ConfineError::Os {
                name: self.name.clone(),
                call: "fcntl(F_DUPFD_CLOEXEC)",
                source,
            })?;
            return Ok(Some(dup));
        }
        let declared = OpenMode::describe(read, write);
        let st = rustix::fs::fstat(fd).map_err(os("fstat"))?;
        let file_type = FileType::from_raw_mode(st.st_mode);
        let cannot = |what: &'static str| ConfineError::CannotNarrow {
            name: self.name.clone(),
            declared,
            mode: mode.name,
            what,
        };
        match file_type {
            FileType::Socket => return Err(cannot("a socket")),
            FileType::Unknown => {
                return Err(cannot(
                    "a file with no path to reopen (an eventfd, timerfd or other anonymous inode)",
                ))
            }
            _ => {}
        }
        let keep = OFlags::APPEND
            | OFlags::NONBLOCK
            | OFlags::DIRECT
            | OFlags::SYNC
            | OFlags::DSYNC
            | OFlags::NOATIME
            | OFlags::LARGEFILE;
        let access = match (read, write) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        // O_NONBLOCK while opening: a FIFO opened for writing alone would otherwise
        // block until a reader appears (it fails with ENXIO instead); set as the
        // original has it right after.
        let open_flags =
            access | (flags & keep) | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let path = proc_fd.join(fd.as_raw_fd().to_string());
        let reopened =
            rustix::fs::open(&path, open_flags, rustix::fs::Mode::empty()).map_err(|e| {
                ConfineError::Reopen {
                    name: self.name.clone(),
                    declared,
                    mode: mode.name,
                    path: path.clone(),
                    source: e.into(),
                }
            })?;
        let new_st = rustix::fs::fstat(&reopened).map_err(os("fstat"))?;
        if (new_st.st_dev, new_st.st_ino) != (st.st_dev, st.st_ino) {
            return Err(ConfineError::NotTheSameFile {
                name: self.name.clone(),
                path,
            });
        }
        let status = rustix::fs::fcntl_getfl(&reopened).map_err(os("fcntl(F_GETFL)"))?;
        let status = (status - OFlags::NONBLOCK) | (flags & OFlags::NONBLOCK);
        rustix::fs::fcntl_setfl(&reopened, status).map_err(os("fcntl(F_SETFL)"))?;
        if matches!(file_type, FileType::RegularFile | FileType::BlockDevice) {
            use rustix::fs::SeekFrom;
            let pos = rustix::fs::seek(fd, SeekFrom::Current(0)).map_err(os("lseek(SEEK_CUR)"))?;
            rustix::fs::seek(&reopened, SeekFrom::Start(pos)).map_err(os("lseek(SEEK_SET)"))?;
        }
        let got = OpenMode::of(rustix::fs::fcntl_getfl(&reopened).map_err(os("fcntl(F_GETFL)"))?);
        if (got.read, got.write) != (read, write) {
            return Err(ConfineError::NotTheSameFile {
                name: self.name.clone(),
                path,
            });
        }
        tracing::debug!(
            endpoint = %self.name,
            declared,
            was = mode.name,
            "reopened with only the declared access"
        );
        Ok(Some(reopened))
    }

    pub fn to_abi(&self) -> abi::Endpoint {
        abi::Endpoint {
            kind: self.kind.abi(),
            access: self.access.bits(),
            queue: 0,
            log: 0,
        }
    }
}

/// Why no descriptor with exactly an endpoint's declared access could be made
/// ([`Endpoint::fd_with_declared_access`]).
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error(
        "endpoint {name:?} is declared {declared} but its descriptor is open {mode}, and \
         {what} cannot be reopened with less access, so the direct transport would let a \
         kernel do more than declared: declare the endpoint {mode}, or use the forward or \
         mailbox transport (they check every request's access on the host)"
    )]
    CannotNarrow {
        name: String,
        declared: &'static str,
        mode: &'static str,
        what: &'static str,
    },
    #[error(
        "endpoint {name:?} is declared {declared} but its descriptor is open {mode}; \
         reopening it as {} with only the declared access failed: open: {source}",
        path.display()
    )]
    Reopen {
        name: String,
        declared: &'static str,
        mode: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "endpoint {name:?}: {} did not reopen its file with the declared access \
         (is /proc this process's procfs?)",
        path.display()
    )]
    NotTheSameFile { name: String, path: PathBuf },
    #[error("endpoint {name:?}: {call} failed: {source}")]
    Os {
        name: String,
        call: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// An endpoint's descriptor could not be duplicated (`fcntl(F_DUPFD_CLOEXEC)`;
/// usually `EMFILE`, the process is out of descriptors).
#[derive(Debug, thiserror::Error)]
#[error("endpoint {name:?}: duplicating its descriptor (fcntl(F_DUPFD_CLOEXEC)) failed: {source}")]
pub struct CloneError {
    pub name: String,
    #[source]
    pub source: std::io::Error,
}

/// What a descriptor was opened for (`fcntl(F_GETFL)`'s access mode).
#[derive(Clone, Copy, Debug)]
struct OpenMode {
    read: bool,
    write: bool,
    name: &'static str,
}

impl OpenMode {
    fn of(flags: rustix::fs::OFlags) -> Self {
        use rustix::fs::OFlags;
        let (read, write, name) = if flags.contains(OFlags::RDWR) {
            (true, true, "read-write")
        } else if flags.contains(OFlags::WRONLY) {
            (false, true, "write-only (O_WRONLY)")
        } else if flags.contains(OFlags::PATH) {
            (false, false, "for its path only (O_PATH)")
        } else {
            (true, false, "read-only (O_RDONLY)")
        };
        Self { read, write, name }
    }

    fn describe(read: bool, write: bool) -> &'static str {
        match (read, write) {
            (true, true) => "read-write",
            (true, false) => "read-only",
            (false, true) => "write-only",
            (false, false) => "with no access",
        }
    }
}

/// Whether `fd` was opened for what `access` declares.
fn check_open_mode(name: &str, access: Access, fd: BorrowedFd<'_>) -> std::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd).map_err(|e| {
        std::io::Error::new(
            std::io::Error::from(e).kind(),
            format!("endpoint {name:?}: fcntl(F_GETFL) failed: {e}"),
        )
    })?;
    let OpenMode {
        read: readable,
        write: writable,
        name: mode,
    } = OpenMode::of(flags);
    let missing = match (access.read && !readable, access.write && !writable) {
        (true, true) => "read and write",
        (true, false) => "read",
        (false, true) => "write",
        (false, false) => return Ok(()),
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "endpoint {name:?} is registered with {missing} access, but its file was opened \
             {mode}: open it with {missing} access, or register less"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        (dir, path)
    }

    #[test]
    fn write_access_on_a_read_only_file_is_refused_with_the_reason() {
        let (_d, path) = temp_file();
        let f = std::fs::File::open(&path).unwrap();
        let e = Endpoint::file("in", &f, Access::WRITE).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        let msg = e.to_string();
        assert!(
            msg.contains("\"in\"") && msg.contains("write access"),
            "{msg}"
        );
        assert!(msg.contains("read-only"), "{msg}");
        assert!(Endpoint::file("in", &f, Access::READ_WRITE).is_err());
        assert!(Endpoint::file("in", &f, Access::READ).is_ok());
    }

    #[test]
    fn read_access_on_a_write_only_file_is_refused_with_the_reason() {
        let (_d, path) = temp_file();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        let e = Endpoint::file("out", &f, Access::READ).unwrap_err();
        assert!(e.to_string().contains("write-only"), "{e}");
        assert!(Endpoint::file("out", &f, Access::WRITE).is_ok());
    }

    fn access_mode(fd: &OwnedFd) -> rustix::fs::OFlags {
        rustix::fs::fcntl_getfl(fd).unwrap() & rustix::fs::OFlags::RWMODE
    }

    /// A FIFO named `fifo` in `dir`.
    fn make_fifo(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        path
    }

    fn rw(path: &std::path::Path) -> std::fs::File {
        std::fs::File::options()
            .read(true)
            .write(true)
            .open(path)
            .unwrap()
    }

    #[test]
    fn a_read_write_file_declared_read_only_is_reopened_read_only_at_its_position() {
        use rustix::fs::{OFlags, SeekFrom};
        let (_d, path) = temp_file();
        std::fs::write(&path, b"0123456789").unwrap();
        let f = rw(&path);
        rustix::fs::seek(&f, SeekFrom::Start(3)).unwrap();
        let ep = Endpoint::file("in", &f, Access::READ).unwrap();
        let fd = ep.fd_with_declared_access().unwrap().unwrap();
        assert_eq!(access_mode(&fd), OFlags::RDONLY);
        assert_eq!(
            rustix::io::write(&fd, b"x").unwrap_err(),
            rustix::io::Errno::BADF
        );
        let mut buf = [0u8; 2];
        assert_eq!(rustix::io::read(&fd, &mut buf).unwrap(), 2);
        assert_eq!(&buf, b"34", "starts at the original's position");
        // Its own position from now on: the caller's has not moved.
        assert_eq!(rustix::fs::seek(&f, SeekFrom::Current(0)).unwrap(), 3);
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");
    }

    #[test]
    fn a_read_write_file_declared_write_only_is_reopened_write_only_keeping_o_append() {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let (_d, path) = temp_file();
        std::fs::write(&path, b"head\n").unwrap();
        let f = std::fs::File::options()
            .read(true)
            .write(true)
            .custom_flags(libc::O_APPEND)
            .open(&path)
            .unwrap();
        let ep = Endpoint::file("log", &f, Access::WRITE).unwrap();
        let fd = ep.fd_with_declared_access().unwrap().unwrap();
        let flags = rustix::fs::fcntl_getfl(&fd).unwrap();
        assert_eq!(flags & OFlags::RWMODE, OFlags::WRONLY);
        assert!(flags.contains(OFlags::APPEND), "{flags:?}");
        assert!(!flags.contains(OFlags::NONBLOCK), "{flags:?}");
        let mut buf = [0u8; 4];
        assert_eq!(
            rustix::io::read(&fd, &mut buf).unwrap_err(),
            rustix::io::Errno::BADF
        );
        assert_eq!(rustix::io::pwrite(&fd, b"tail\n", 0).unwrap(), 5);
        assert_eq!(std::fs::read(&path).unwrap(), b"head\ntail\n");
    }

    #[test]
    fn exactly_the_declared_access_is_a_duplicate_sharing_the_file_position() {
        use rustix::fs::SeekFrom;
        let (_d, path) = temp_file();
        let f = rw(&path);
        let ep = Endpoint::file("rw", &f, Access::READ_WRITE).unwrap();
        let fd = ep.fd_with_declared_access().unwrap().unwrap();
        assert_eq!(access_mode(&fd), rustix::fs::OFlags::RDWR);
        rustix::fs::seek(&fd, SeekFrom::Start(1)).unwrap();
        assert_eq!(rustix::fs::seek(&f, SeekFrom::Current(0)).unwrap(), 1);
        let ro = std::fs::File::open(&path).unwrap();
        let ep = Endpoint::file("ro", &ro, Access::READ).unwrap();
        let fd = ep.fd_with_declared_access().unwrap().unwrap();
        assert_eq!(access_mode(&fd), rustix::fs::OFlags::RDONLY);
    }

    #[test]
    fn a_file_endpoint_that_cannot_seek_is_registered_as_the_stream_it_is_and_refuses_positioned_calls(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let fifo = make_fifo(dir.path());
        let regular = dir.path().join("regular");
        std::fs::write(&regular, b"x").unwrap();
        let (ours, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let socket = std::fs::File::from(OwnedFd::from(ours));
        let cases = [
            ("regular", rw(&regular), EndpointKind::File),
            ("/dev/null", rw(Path::new("/dev/null")), EndpointKind::File),
            ("fifo", rw(&fifo), EndpointKind::Pipe),
            ("socket", socket, EndpointKind::Socket),
        ];
        for (what, file, kind) in cases {
            let ep = Endpoint::file(what, &file, Access::READ_WRITE).unwrap();
            assert_eq!(ep.kind, kind, "{what}");
            let positioned = ep.kind.check_op(abi::op::PWRITE);
            if kind == EndpointKind::File {
                assert_eq!(positioned, Ok(()), "{what}");
            } else {
                assert_eq!(positioned, Err(-libc::ESPIPE), "{what}");
                assert_eq!(ep.kind.check_op(abi::op::WRITE), Ok(()), "{what}");
            }
        }
    }

    #[test]
    fn a_fifo_opened_read_write_is_reopened_for_the_declared_side_only() {
        use rustix::fs::OFlags;
        let dir = tempfile::tempdir().unwrap();
        let path = make_fifo(dir.path());
        let f = rw(&path);
        for (access, want) in [
            (Access::WRITE, OFlags::WRONLY),
            (Access::READ, OFlags::RDONLY),
        ] {
            let ep = Endpoint::new("fifo", EndpointKind::Pipe, access, f.as_fd()).unwrap();
            let fd = ep.fd_with_declared_access().unwrap().unwrap();
            let flags = rustix::fs::fcntl_getfl(&fd).unwrap();
            assert_eq!(flags & OFlags::RWMODE, want, "{access:?}");
            assert!(!flags.contains(OFlags::NONBLOCK), "{access:?}: {flags:?}");
        }
    }

    #[test]
    fn a_socket_that_would_need_less_access_is_refused_with_the_reason() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let ep = Endpoint::new("peer", EndpointKind::Socket, Access::READ, a.as_fd()).unwrap();
        let e = ep.fd_with_declared_access().unwrap_err();
        assert!(matches!(e, ConfineError::CannotNarrow { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("\"peer\"") && msg.contains("a socket") && msg.contains("read-only"),
            "{msg}"
        );
        let ep =
            Endpoint::new("peer", EndpointKind::Socket, Access::READ_WRITE, a.as_fd()).unwrap();
        assert!(ep.fd_with_declared_access().unwrap().is_some());
    }

    #[test]
    fn without_proc_a_file_that_needs_less_access_is_refused_naming_the_path_and_errno() {
        let (_d, path) = temp_file();
        let f = rw(&path);
        let ep = Endpoint::file("in", &f, Access::READ).unwrap();
        let e = ep
            .fd_with_declared_access_via(Path::new("/nonexistent/proc/self/fd"))
            .unwrap_err();
        assert!(matches!(e, ConfineError::Reopen { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("/nonexistent/proc/self/fd/") && msg.contains("os error 2"),
            "{msg}"
        );
    }

    #[test]
    fn an_endpoint_with_no_access_gets_no_descriptor() {
        let (_d, path) = temp_file();
        let f = rw(&path);
        let none = Access {
            read: false,
            write: false,
        };
        let ep = Endpoint::file("none", &f, none).unwrap();
        assert!(ep.fd_with_declared_access().unwrap().is_none());
    }

    #[test]
    fn a_read_write_file_takes_every_access() {
        let (_d, path) = temp_file();
        let f = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        for a in [Access::READ, Access::WRITE, Access::READ_WRITE] {
            assert!(Endpoint::file("rw", &f, a).is_ok(), "{a:?}");
        }
    }
}
