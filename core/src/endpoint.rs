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
    pub fn new(
        name: impl Into<String>,
        kind: EndpointKind,
        access: Access,
        fd: BorrowedFd<'_>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            name: name.into(),
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
