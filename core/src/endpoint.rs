//! Endpoints: what a kernel may do I/O on, named by index, never by raw fd.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::abi;

/// The kind of an endpoint. A kernel sees it in the endpoint table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndpointKind {
    /// A regular file: positioned reads and writes.
    File,
    /// A connected socket.
    Socket,
    /// A pipe, tty or other stream (stdout).
    Pipe,
}

impl EndpointKind {
    pub fn abi(self) -> u32 {
        match self {
            Self::File => abi::endpoint_kind::FILE,
            Self::Socket => abi::endpoint_kind::SOCKET,
            Self::Pipe => abi::endpoint_kind::PIPE,
        }
    }

    /// Whether `op` makes sense on this kind (positioned ops need a file).
    pub fn allows_op(self, op: u32) -> bool {
        match op {
            abi::op::PWRITE | abi::op::PREAD => self == Self::File,
            abi::op::WRITE | abi::op::READ => true,
            _ => false,
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

    /// Whether `op` is within this access.
    pub fn allows_op(self, op: u32) -> bool {
        match op {
            abi::op::PWRITE | abi::op::WRITE => self.write,
            abi::op::PREAD | abi::op::READ => self.read,
            _ => false,
        }
    }
}

/// One registered endpoint: the host's fd (the channel's own duplicate) and what a
/// kernel may do with it.
#[derive(Debug)]
pub struct Endpoint {
    pub name: String,
    pub kind: EndpointKind,
    pub access: Access,
    fd: OwnedFd,
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
        check_open_mode(&name, access, fd)?;
        Ok(Self {
            name,
            kind,
            access,
            fd: fd.try_clone_to_owned()?,
        })
    }

    /// A regular file.
    pub fn file(
        name: impl Into<String>,
        file: &std::fs::File,
        access: Access,
    ) -> std::io::Result<Self> {
        Self::new(name, EndpointKind::File, access, file.as_fd())
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

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn to_abi(&self) -> abi::Endpoint {
        abi::Endpoint {
            kind: self.kind.abi(),
            access: self.access.bits(),
            _reserved: [0; 2],
        }
    }
}

/// Whether `fd` was opened for what `access` declares.
fn check_open_mode(name: &str, access: Access, fd: BorrowedFd<'_>) -> std::io::Result<()> {
    use rustix::fs::OFlags;
    let flags = rustix::fs::fcntl_getfl(fd).map_err(|e| {
        std::io::Error::new(
            std::io::Error::from(e).kind(),
            format!("endpoint {name:?}: fcntl(F_GETFL) failed: {e}"),
        )
    })?;
    let (readable, writable, mode) = if flags.contains(OFlags::RDWR) {
        (true, true, "read-write")
    } else if flags.contains(OFlags::WRONLY) {
        (false, true, "write-only (O_WRONLY)")
    } else if flags.contains(OFlags::PATH) {
        (false, false, "for its path only (O_PATH)")
    } else {
        (true, false, "read-only (O_RDONLY)")
    };
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
