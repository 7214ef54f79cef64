//! The rulebook: which requests a kernel may make, checked on the host by every
//! transport whose host sees requests (forward, mailbox), and the typed [`Request`]
//! that a raw [`abi::Request`] becomes once it passed.
//!
//! # The rules, in the order they are checked
//!
//! The first rule a request breaks gives its answer; nothing else happens.
//!
//! | # | rule | answer |
//! | - | ---- | ------ |
//! | 1 | reserved fields (`flags`) are zero | `-EINVAL` |
//! | 2 | some handler of the chain knows the opcode | `-EINVAL` |
//! | 3 | a NOP names nothing else: accepted | — |
//! | 4 | the endpoint is registered | `-EBADF` |
//! | 5 | the endpoint's declared access allows the op (`PWRITE`, `WRITE`, `SEND`: `WRITE`; `PREAD`, `READ`, `RECV`: `READ`) | `-EBADF` |
//! | 6a | `SEND`/`RECV` name a socket | `-ENOTSOCK` |
//! | 6b | the endpoint is not a host queue (it takes messages, not requests) | `-ESPIPE` |
//! | 6c | positioned ops (`PWRITE`, `PREAD`) name a file | `-ESPIPE` |
//! | 7 | `0 < len <= staging_len` | `-EINVAL` |
//! | 8 | `staging_off + len <= staging_len` | `-EFAULT` |
//! | 9 | positioned ops: `0 <= offset` and `offset + len <= i64::MAX` | `-EINVAL` |
//!
//! Stream ops (`WRITE`, `READ`, `SEND`, `RECV`) ignore `offset`; a NOP ignores
//! every field but `op` and `flags`.
//!
//! # Sockets
//!
//! A request that passed becomes a typed [`Request`], and on a socket endpoint
//! every stream op becomes a socket op: `SEND` and `WRITE` are [`Request::Send`],
//! `RECV` and `READ` are [`Request::Recv`]. Every transport then does the socket's
//! own call (`IORING_OP_SEND`/`IORING_OP_RECV` on forward, `send(2)`/`recv(2)` on
//! mailbox), always with `MSG_NOSIGNAL`: a peer that closed answers `-EPIPE` and
//! never raises `SIGPIPE` in the host, whichever opcode a kernel picked. (On a
//! socket `write(2)` is `send(2)` without flags and `read(2)` is `recv(2)`, so
//! nothing else changes.) The opcodes are apart from `WRITE`/`READ` so that a
//! kernel can say "a socket" and be refused (`-ENOTSOCK`, rule 6a) where the
//! endpoint is none, as `send(2)` is on a file; `gpuio_send`/`gpuio_recv` use them
//! on socket endpoints and `WRITE`/`READ` on pipes, whose calls are `write(2)` and
//! `read(2)`.
//!
//! Why opcodes checked here rather than a per-transport translation of `WRITE` on
//! a socket: the rulebook is the one place that knows both the op and the
//! endpoint's kind, so it types the request once; the transports only carry out a
//! typed request, with no `match` on the endpoint of their own and so no way to
//! answer differently.
//!
//! # Where the same table is enforced
//!
//! * **forward, mailbox**: here, on the host, before any syscall ([`validate`]).
//! * **direct**: the host never sees a request, so the device enforces it:
//!   `gpuio_impl_check_request` in `gpuio/api.h` is this table in C, checked by
//!   every public call and again by `gpuio_direct_submit` (`gpuio/direct.h`) where
//!   a request becomes an SQE, so even a request that skipped the public calls
//!   gets the answer above. A kernel that writes SQEs itself skips both; the ring's
//!   registration and restrictions then bound it (see `gpuio/direct.h`, "What the
//!   ring itself enforces"): rules 2, 4, 5 and 8 hold in io_uring's own terms
//!   (other errnos), rules 1, 6, 7 and 9 cannot be enforced by the kernel.
//!   The direct ring carries [`Request::Send`] and [`Request::Recv`] as
//!   `WRITE_FIXED`/`READ_FIXED` on the socket's fixed file, not as
//!   `IORING_OP_SEND`/`RECV`: those take a plain buffer address that no restriction
//!   confines to the staging area, so allowing them would let a kernel's own SQE
//!   send any host memory to the socket or receive into it. On a socket the two
//!   calls are the same, and the ring's SQPOLL thread, which issues them, keeps
//!   every signal blocked, so there too a closed peer is `-EPIPE` and no signal.
//!
//! `src/conformance.rs` runs one table of bad requests through all three
//! transports and expects the same answers from each.
//!
//! # Chaining
//!
//! Opcodes carry a family byte ([`abi::op::BASE`]). Each family's rules are a
//! [`Handler`]; a chain asks its handlers in turn, and one that does not know an
//! opcode answers [`Verdict::Unhandled`] so the next may take it, as LLVM libc's
//! RPC server returns "unhandled opcode" for its caller's handlers. An opcode no
//! handler knows gets `-EINVAL`.

use std::borrow::Borrow;

use crate::abi;
use crate::endpoint::{Endpoint, EndpointKind};

/// `-errno`, the answer a refused request gets.
pub type Errno = i32;

/// A byte range of the staging area that validation checked: not empty, and
/// inside the area. Only the rulebook makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    off: usize,
    len: usize,
}

impl Staging {
    /// A range that did not come through the rulebook, for tests of what uses one.
    #[cfg(test)]
    pub(crate) fn unchecked(off: usize, len: usize) -> Self {
        Self { off, len }
    }

    /// Offset of the first byte in the staging area.
    pub fn off(self) -> usize {
        self.off
    }

    /// Bytes in the range (at least 1, at most `u32::MAX`).
    pub fn len(self) -> usize {
        self.len
    }

    /// Never true: validation refuses empty ranges (`-EINVAL`).
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// One past the last byte.
    pub fn end(self) -> usize {
        self.off + self.len
    }
}

/// A request that passed the rulebook. Endpoint indexes name registered endpoints
/// whose declared access and kind allow the op; staging ranges lie inside the
/// staging area; file offsets are non-negative and `offset + len` fits an `i64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Completes with 0.
    Nop,
    /// `pwrite(endpoint, staging, offset)` on a file.
    Pwrite {
        endpoint: u32,
        staging: Staging,
        offset: u64,
    },
    /// `pread(endpoint, staging, offset)` on a file.
    Pread {
        endpoint: u32,
        staging: Staging,
        offset: u64,
    },
    /// `write(endpoint, staging)`: at the current position (streams, `O_APPEND` files).
    Write { endpoint: u32, staging: Staging },
    /// `read(endpoint, staging)`.
    Read { endpoint: u32, staging: Staging },
    /// `send(endpoint, staging, MSG_NOSIGNAL)` on a connected socket: a `SEND`, or a
    /// `WRITE` on a socket endpoint.
    Send { endpoint: u32, staging: Staging },
    /// `recv(endpoint, staging, 0)` on a connected socket: a `RECV`, or a `READ` on
    /// a socket endpoint.
    Recv { endpoint: u32, staging: Staging },
}

impl Request {
    /// The opcode's name, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Nop => "nop",
            Request::Pwrite { .. } => "pwrite",
            Request::Pread { .. } => "pread",
            Request::Write { .. } => "write",
            Request::Read { .. } => "read",
            Request::Send { .. } => "send",
            Request::Recv { .. } => "recv",
        }
    }
}

/// What the rules check a request against: the channel's endpoint table and the
/// length of its staging area.
pub struct Bounds<'a> {
    endpoints: &'a dyn Fn(u32) -> Option<&'a Endpoint>,
    staging_len: u64,
}

impl<'a> Bounds<'a> {
    /// The endpoint at `index`, if one is registered there.
    pub fn endpoint(&self, index: u32) -> Option<&'a Endpoint> {
        (self.endpoints)(index)
    }

    pub fn staging_len(&self) -> u64 {
        self.staging_len
    }
}

/// What one handler of a chain says about a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The opcode is this handler's and the request keeps its rules.
    Accept(Request),
    /// The opcode is this handler's and the request breaks a rule: `-errno`.
    Refuse(Errno),
    /// Not this handler's opcode: ask the next one.
    Unhandled,
}

/// The rules of one family of opcodes.
pub trait Handler: Sync {
    /// Checks `req`, whose reserved fields are already known to be zero.
    fn check(&self, req: &abi::Request, bounds: &Bounds<'_>) -> Verdict;
}

/// The I/O family: NOP, PWRITE, PREAD, WRITE, READ, SEND, RECV (rules 3 to 9 of
/// the table).
#[derive(Clone, Copy, Debug, Default)]
pub struct IoRules;

/// Which way an I/O opcode moves bytes, and whether it names a file position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Io {
    Pwrite,
    Pread,
    Write,
    Read,
    Send,
    Recv,
}

impl Handler for IoRules {
    fn check(&self, req: &abi::Request, bounds: &Bounds<'_>) -> Verdict {
        let io = match req.op {
            abi::op::NOP => return Verdict::Accept(Request::Nop),
            abi::op::PWRITE => Io::Pwrite,
            abi::op::PREAD => Io::Pread,
            abi::op::WRITE => Io::Write,
            abi::op::READ => Io::Read,
            abi::op::SEND => Io::Send,
            abi::op::RECV => Io::Recv,
            _ => return Verdict::Unhandled,
        };
        match io_rules(io, req, bounds) {
            Ok(r) => Verdict::Accept(r),
            Err(e) => Verdict::Refuse(e),
        }
    }
}

fn io_rules(io: Io, req: &abi::Request, bounds: &Bounds<'_>) -> Result<Request, Errno> {
    let ep = bounds.endpoint(req.endpoint).ok_or(-libc::EBADF)?;
    if !ep.access.allows_op(req.op) {
        return Err(-libc::EBADF);
    }
    ep.kind.check_op(req.op)?;
    let staging_len = bounds.staging_len();
    if req.len == 0 || u64::from(req.len) > staging_len {
        return Err(-libc::EINVAL);
    }
    let end = req
        .staging_off
        .checked_add(u64::from(req.len))
        .ok_or(-libc::EFAULT)?;
    if end > staging_len {
        return Err(-libc::EFAULT);
    }
    // Inside an area this process mapped, so both fit a usize.
    let staging = Staging {
        off: usize::try_from(req.staging_off).map_err(|_| -libc::EFAULT)?,
        len: req.len as usize,
    };
    let endpoint = req.endpoint;
    let socket = ep.kind == EndpointKind::Socket;
    let position = || -> Result<u64, Errno> {
        if req.offset < 0 || req.offset > i64::MAX - i64::from(req.len) {
            return Err(-libc::EINVAL);
        }
        Ok(req.offset as u64)
    };
    Ok(match io {
        Io::Pwrite => Request::Pwrite {
            endpoint,
            staging,
            offset: position()?,
        },
        Io::Pread => Request::Pread {
            endpoint,
            staging,
            offset: position()?,
        },
        // On a socket every stream op is the socket's own (module doc, "Sockets").
        Io::Send | Io::Write if socket => Request::Send { endpoint, staging },
        Io::Recv | Io::Read if socket => Request::Recv { endpoint, staging },
        Io::Write => Request::Write { endpoint, staging },
        Io::Read => Request::Read { endpoint, staging },
        // Rule 6a let these through on sockets alone.
        Io::Send | Io::Recv => return Err(-libc::ENOTSOCK),
    })
}

/// A chain of handlers, asked in order.
#[derive(Clone, Copy)]
pub struct Rulebook<'h> {
    handlers: &'h [&'h dyn Handler],
}

impl<'h> Rulebook<'h> {
    /// gpuio's own rules: the I/O family alone.
    pub const GPUIO: Rulebook<'static> = Rulebook {
        handlers: &[&IoRules],
    };

    /// A chain of `handlers`, asked in order.
    pub const fn new(handlers: &'h [&'h dyn Handler]) -> Self {
        Self { handlers }
    }

    /// Rule 1, then each handler until one knows the opcode; `-EINVAL` if none does.
    /// `endpoints` is the channel's table as the transport holds it (`Endpoint` or
    /// `Arc<Endpoint>`).
    pub fn check<E: Borrow<Endpoint>>(
        &self,
        req: &abi::Request,
        endpoints: &[E],
        staging_len: u64,
    ) -> Result<Request, Errno> {
        if req.flags != 0 {
            return Err(-libc::EINVAL);
        }
        let lookup = |i: u32| endpoints.get(i as usize).map(Borrow::borrow);
        let bounds = Bounds {
            endpoints: &lookup,
            staging_len,
        };
        for h in self.handlers {
            match h.check(req, &bounds) {
                Verdict::Accept(r) => return Ok(r),
                Verdict::Refuse(e) => return Err(e),
                Verdict::Unhandled => {}
            }
        }
        Err(-libc::EINVAL)
    }
}

/// Checks `req` with gpuio's rulebook ([`Rulebook::GPUIO`]): the typed request, or
/// `-errno` of the first rule it breaks (see the table in the module doc).
pub fn validate<E: Borrow<Endpoint>>(
    req: &abi::Request,
    endpoints: &[E],
    staging_len: u64,
) -> Result<Request, Errno> {
    Rulebook::GPUIO.check(req, endpoints, staging_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Access, Endpoint};

    fn table() -> (tempfile::NamedTempFile, Vec<Endpoint>) {
        let f = tempfile::NamedTempFile::new().unwrap();
        let eps = vec![
            Endpoint::file("rw", f.as_file(), Access::READ_WRITE).unwrap(),
            Endpoint::file("ro", f.as_file(), Access::READ).unwrap(),
        ];
        (f, eps)
    }

    fn req(op: u32, endpoint: u32, staging_off: u64, len: u32) -> abi::Request {
        abi::Request {
            op,
            endpoint,
            len,
            flags: 0,
            staging_off,
            offset: 0,
        }
    }

    #[test]
    fn each_bad_field_gives_its_errno() {
        let (_f, eps) = table();
        let v = |r| validate(&r, &eps, 4096);
        assert!(v(req(abi::op::PWRITE, 0, 0, 16)).is_ok());
        assert_eq!(v(req(0x1234, 0, 0, 16)), Err(-libc::EINVAL), "unknown op");
        assert_eq!(
            v(req(abi::op::PWRITE, 2, 0, 16)),
            Err(-libc::EBADF),
            "unregistered"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 1, 0, 16)),
            Err(-libc::EBADF),
            "read-only"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 0, 0)),
            Err(-libc::EINVAL),
            "len 0"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 0, 4097)),
            Err(-libc::EINVAL),
            "len > staging"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 4090, 16)),
            Err(-libc::EFAULT),
            "outside staging"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, u64::MAX, 16)),
            Err(-libc::EFAULT),
            "overflow"
        );
        assert_eq!(
            v(abi::Request {
                offset: -1,
                ..req(abi::op::PWRITE, 0, 0, 16)
            }),
            Err(-libc::EINVAL),
            "offset -1 (the file position) on a positioned op"
        );
        assert_eq!(
            v(abi::Request {
                offset: i64::MAX - 15,
                ..req(abi::op::PREAD, 0, 0, 16)
            }),
            Err(-libc::EINVAL),
            "offset + len past i64::MAX"
        );
        assert_eq!(
            v(abi::Request {
                flags: libc::RWF_APPEND as u32,
                ..req(abi::op::PWRITE, 0, 0, 16)
            }),
            Err(-libc::EINVAL),
            "reserved flags"
        );
        assert_eq!(
            v(abi::Request {
                flags: 1,
                ..req(abi::op::NOP, 0, 0, 0)
            }),
            Err(-libc::EINVAL),
            "reserved flags on a nop"
        );
        assert_eq!(
            v(req(abi::op::NOP, 99, 0, 0)),
            Ok(Request::Nop),
            "nop names no endpoint"
        );
    }

    #[test]
    fn an_accepted_request_is_typed_with_its_checked_range_and_offset() {
        let (_f, eps) = table();
        let r = abi::Request {
            offset: 7,
            ..req(abi::op::PREAD, 1, 100, 16)
        };
        let Ok(Request::Pread {
            endpoint,
            staging,
            offset,
        }) = validate(&r, &eps, 4096)
        else {
            panic!("a pread within the rules is accepted as a pread");
        };
        assert_eq!(
            (endpoint, staging.off(), staging.end(), offset),
            (1, 100, 116, 7)
        );
        let w = abi::Request {
            offset: -1,
            ..req(abi::op::WRITE, 0, 0, 8)
        };
        assert!(
            matches!(
                validate(&w, &eps, 4096),
                Ok(Request::Write { endpoint: 0, .. })
            ),
            "a stream op ignores its offset"
        );
    }

    #[test]
    fn send_and_recv_need_a_socket_and_on_a_socket_every_stream_op_is_a_socket_op() {
        use std::os::fd::AsFd;
        let (_f, mut eps) = table();
        let (sock, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let (_rx, tx) = std::io::pipe().unwrap();
        let (file, ro_file, socket, pipe, ro_socket, queue) = (0, 1, 2, 3, 4, 5);
        eps.push(Endpoint::socket("socket", &sock).unwrap());
        eps.push(Endpoint::new("pipe", EndpointKind::Pipe, Access::WRITE, tx.as_fd()).unwrap());
        eps.push(
            Endpoint::new(
                "ro socket",
                EndpointKind::Socket,
                Access::READ,
                sock.as_fd(),
            )
            .unwrap(),
        );
        eps.push(Endpoint::queue_to_host("queue", Default::default()));
        let v = |op, endpoint| validate(&req(op, endpoint, 0, 8), &eps, 4096);
        let staging = Staging { off: 0, len: 8 };
        let send = Ok(Request::Send {
            endpoint: socket,
            staging,
        });
        let recv = Ok(Request::Recv {
            endpoint: socket,
            staging,
        });
        assert_eq!(v(abi::op::SEND, socket), send);
        assert_eq!(
            v(abi::op::WRITE, socket),
            send,
            "write(2) on a socket is a send"
        );
        assert_eq!(v(abi::op::RECV, socket), recv);
        assert_eq!(
            v(abi::op::READ, socket),
            recv,
            "read(2) on a socket is a recv"
        );
        let enotsock = Err(-libc::ENOTSOCK);
        assert_eq!(v(abi::op::SEND, file), enotsock, "send on a file");
        assert_eq!(v(abi::op::RECV, file), enotsock, "recv on a file");
        assert_eq!(v(abi::op::SEND, pipe), enotsock, "send on a pipe");
        assert_eq!(v(abi::op::SEND, queue), enotsock, "send on a host queue");
        assert_eq!(
            v(abi::op::WRITE, pipe),
            Ok(Request::Write {
                endpoint: pipe,
                staging
            }),
            "a pipe keeps write(2)"
        );
        assert_eq!(
            v(abi::op::WRITE, queue),
            Err(-libc::ESPIPE),
            "a host queue takes no request"
        );
        let ebadf = Err(-libc::EBADF);
        assert_eq!(
            v(abi::op::SEND, ro_socket),
            ebadf,
            "send on a read-only socket"
        );
        assert_eq!(
            v(abi::op::WRITE, ro_socket),
            ebadf,
            "write on a read-only socket"
        );
        assert_eq!(v(abi::op::SEND, ro_file), ebadf, "access before kind");
        assert_eq!(v(abi::op::RECV, pipe), ebadf, "access before kind");
        assert_eq!(v(abi::op::RECV, ro_file), enotsock);
        assert_eq!(
            v(abi::op::PWRITE, socket),
            Err(-libc::ESPIPE),
            "pwrite on a socket"
        );
        assert_eq!(
            validate(&req(abi::op::SEND, socket, 0, 0), &eps, 4096),
            Err(-libc::EINVAL),
            "len 0"
        );
        assert_eq!(
            validate(&req(abi::op::RECV, socket, 4090, 8), &eps, 4096),
            Err(-libc::EFAULT),
            "outside staging"
        );
        assert_eq!(
            validate(
                &abi::Request {
                    flags: libc::MSG_DONTWAIT as u32,
                    ..req(abi::op::SEND, socket, 0, 8)
                },
                &eps,
                4096
            ),
            Err(-libc::EINVAL),
            "the host picks a send's flags; the request's are reserved"
        );
    }

    /// Answers opcodes of another family ('T'): `T|1` is accepted as a NOP.
    struct TestFamily;
    impl Handler for TestFamily {
        fn check(&self, req: &abi::Request, _: &Bounds<'_>) -> Verdict {
            match req.op {
                op if op == u32::from(b'T') << 24 | 1 => Verdict::Accept(Request::Nop),
                op if op >> 24 == u32::from(b'T') => Verdict::Refuse(-libc::ENOSYS),
                _ => Verdict::Unhandled,
            }
        }
    }

    #[test]
    fn an_opcode_a_handler_does_not_know_passes_to_the_next_and_none_left_is_einval() {
        let (_f, eps) = table();
        let chain = Rulebook::new(&[&IoRules, &TestFamily]);
        let t = |n: u32| req(u32::from(b'T') << 24 | n, 0, 0, 0);
        assert_eq!(chain.check(&t(1), &eps, 4096), Ok(Request::Nop));
        assert_eq!(chain.check(&t(2), &eps, 4096), Err(-libc::ENOSYS));
        assert!(chain
            .check(&req(abi::op::PWRITE, 0, 0, 4), &eps, 4096)
            .is_ok());
        assert_eq!(
            Rulebook::GPUIO.check(&t(1), &eps, 4096),
            Err(-libc::EINVAL),
            "without the handler, its opcodes are unknown"
        );
        assert_eq!(
            chain.check(&abi::Request { flags: 2, ..t(1) }, &eps, 4096),
            Err(-libc::EINVAL),
            "reserved fields are checked before any handler"
        );
    }
}
