//! Properties of the host's rulebook (`gpuio_core::request`), on arbitrary
//! requests against a small table of real endpoints: every refusal is the errno a
//! plain reference model of the rules gives, and every accepted request lies inside
//! the staging area and is allowed by its endpoint's access and kind, and every
//! stream op on a socket (and only there) is typed as the socket's own.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use gpuio_core::abi::{self, op};
use gpuio_core::request::{validate, Request};
use gpuio_core::{Access, Endpoint, EndpointKind};
use proptest::prelude::*;

/// The table's endpoints and what they are; the descriptors stay open with it.
struct Table {
    endpoints: Vec<Endpoint>,
    _keep: (
        tempfile::TempDir,
        Vec<File>,
        std::io::PipeReader,
        std::io::PipeWriter,
        UnixStream,
        UnixStream,
    ),
}

fn table() -> Table {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let rw = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    let wo = File::options().write(true).open(&path).unwrap();
    let (rx, tx) = std::io::pipe().unwrap();
    let (a, b) = UnixStream::pair().unwrap();
    let endpoints = vec![
        Endpoint::file("read-write", &rw, Access::READ_WRITE).unwrap(),
        Endpoint::file("read-only", &rw, Access::READ).unwrap(),
        Endpoint::file("write-only", &wo, Access::WRITE).unwrap(),
        Endpoint::new("pipe in", EndpointKind::Pipe, Access::WRITE, tx.as_fd()).unwrap(),
        Endpoint::new("pipe out", EndpointKind::Pipe, Access::READ, rx.as_fd()).unwrap(),
        Endpoint::new(
            "socket",
            EndpointKind::Socket,
            Access::READ_WRITE,
            a.as_fd(),
        )
        .unwrap(),
        Endpoint::new(
            "read-only socket",
            EndpointKind::Socket,
            Access::READ,
            a.as_fd(),
        )
        .unwrap(),
        Endpoint::queue_to_host("queue to the host", Default::default()),
    ];
    Table {
        endpoints,
        _keep: (dir, vec![rw, wo], rx, tx, a, b),
    }
}

/// The rules, written out plainly and apart from the code under test.
fn model(r: &abi::Request, eps: &[Endpoint], staging_len: u64) -> Result<(), i32> {
    if r.flags != 0 {
        return Err(-libc::EINVAL);
    }
    let (writes, positioned, socket) = match r.op {
        op::NOP => return Ok(()),
        op::PWRITE => (true, true, false),
        op::PREAD => (false, true, false),
        op::WRITE => (true, false, false),
        op::READ => (false, false, false),
        op::SEND => (true, false, true),
        op::RECV => (false, false, true),
        _ => return Err(-libc::EINVAL),
    };
    let ep = eps.get(r.endpoint as usize).ok_or(-libc::EBADF)?;
    if (writes && !ep.access.write) || (!writes && !ep.access.read) {
        return Err(-libc::EBADF);
    }
    if socket && ep.kind != EndpointKind::Socket {
        return Err(-libc::ENOTSOCK);
    }
    if ep.kind == EndpointKind::HostQueue {
        return Err(-libc::ESPIPE);
    }
    if positioned && ep.kind != EndpointKind::File {
        return Err(-libc::ESPIPE);
    }
    let len = u128::from(r.len);
    if len == 0 || len > u128::from(staging_len) {
        return Err(-libc::EINVAL);
    }
    if u128::from(r.staging_off) + len > u128::from(staging_len) {
        return Err(-libc::EFAULT);
    }
    if positioned && (r.offset < 0 || i128::from(r.offset) + len as i128 > i128::from(i64::MAX)) {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// Mostly values near the edges the rules draw, sometimes anything.
fn near(edges: Vec<u64>) -> impl Strategy<Value = u64> {
    let picks: Vec<BoxedStrategy<u64>> = edges
        .into_iter()
        .map(|e| {
            (-2i64..=2)
                .prop_map(move |d| e.wrapping_add_signed(d))
                .boxed()
        })
        .collect();
    prop_oneof![4 => proptest::strategy::Union::new(picks), 1 => any::<u64>()]
}

fn request(staging_len: u64) -> impl Strategy<Value = abi::Request> {
    let ops = prop_oneof![
        6 => prop::sample::select(vec![
            op::NOP, op::PWRITE, op::PREAD, op::WRITE, op::READ, op::SEND, op::RECV,
        ]),
        1 => (0u32..8).prop_map(|n| op::BASE | n),
        1 => any::<u32>(),
    ];
    let endpoint = prop_oneof![8 => 0u32..10, 1 => any::<u32>()];
    let len = near(vec![0, 1, 4096, staging_len, u64::from(u32::MAX)]).prop_map(|v| v as u32);
    let flags = prop_oneof![6 => Just(0u32), 1 => any::<u32>(), 1 => Just(libc::RWF_APPEND as u32)];
    let staging_off = near(vec![0, 4096, staging_len / 2, staging_len, u64::MAX]);
    let offset =
        near(vec![0, u64::MAX, 1 << 40, i64::MAX as u64, i64::MIN as u64]).prop_map(|v| v as i64);
    (ops, endpoint, len, flags, staging_off, offset).prop_map(
        |(op, endpoint, len, flags, staging_off, offset)| abi::Request {
            op,
            endpoint,
            len,
            flags,
            staging_off,
            offset,
        },
    )
}

fn case() -> impl Strategy<Value = (u64, abi::Request)> {
    prop_oneof![
        Just(4096u64),
        Just(1 << 20),
        1u64..(1 << 32),
        Just(u64::MAX)
    ]
    .prop_flat_map(|staging_len| (Just(staging_len), request(staging_len)))
}

/// Requests per property: a few seconds in a debug build.
const CASES: u32 = 6000;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(CASES)
}

#[test]
fn every_answer_is_the_reference_models() {
    let t = table();
    proptest!(config(), |((staging_len, r) in case())| {
        let got = validate(&r, &t.endpoints, staging_len).map(|_| ());
        prop_assert_eq!(got, model(&r, &t.endpoints, staging_len), "{:?}", r);
    });
}

#[test]
fn an_accepted_request_lies_in_staging_and_is_allowed_by_its_endpoint() {
    let t = table();
    let accepted = std::cell::Cell::new(0u32);
    proptest!(config(), |((staging_len, r) in case())| {
        let Ok(checked) = validate(&r, &t.endpoints, staging_len) else { return Ok(()) };
        accepted.set(accepted.get() + 1);
        let (endpoint, staging, offset, writes, socket) = match checked {
            Request::Nop => {
                prop_assert_eq!(r.op, op::NOP);
                return Ok(());
            }
            Request::Pwrite { endpoint, staging, offset } => (endpoint, staging, Some(offset), true, false),
            Request::Pread { endpoint, staging, offset } => (endpoint, staging, Some(offset), false, false),
            Request::Write { endpoint, staging } => (endpoint, staging, None, true, false),
            Request::Read { endpoint, staging } => (endpoint, staging, None, false, false),
            Request::Send { endpoint, staging } => (endpoint, staging, None, true, true),
            Request::Recv { endpoint, staging } => (endpoint, staging, None, false, true),
        };
        // On a socket a stream op of either family is the socket's own.
        let want_ops: &[u32] = match (offset.is_some(), writes, socket) {
            (true, true, _) => &[op::PWRITE],
            (true, false, _) => &[op::PREAD],
            (false, true, false) => &[op::WRITE],
            (false, false, false) => &[op::READ],
            (false, true, true) => &[op::SEND, op::WRITE],
            (false, false, true) => &[op::RECV, op::READ],
        };
        prop_assert!(want_ops.contains(&r.op), "{:?} from op {:#x}", checked, r.op);
        prop_assert_eq!(r.flags, 0);
        prop_assert_eq!(endpoint, r.endpoint);
        let ep = &t.endpoints[endpoint as usize];
        prop_assert_ne!(ep.kind, EndpointKind::HostQueue);
        prop_assert_eq!(socket, ep.kind == EndpointKind::Socket, "{:?} on {}", checked, ep.name);
        let allowed = if writes { ep.access.write } else { ep.access.read };
        prop_assert!(allowed, "{:?} on {}", checked, ep.name);
        prop_assert_eq!(staging.off() as u64, r.staging_off);
        prop_assert_eq!(staging.len() as u64, u64::from(r.len));
        prop_assert!(!staging.is_empty() && staging.end() as u64 <= staging_len);
        if let Some(offset) = offset {
            prop_assert_eq!(ep.kind, EndpointKind::File);
            prop_assert_eq!(offset as i64, r.offset);
            let end = offset.checked_add(staging.len() as u64);
            prop_assert!(end.is_some_and(|end| end <= i64::MAX as u64));
        }
    });
    // The generator reaches the accepting side too, not only refusals.
    let accepted = accepted.get();
    assert!(
        accepted > CASES / 40,
        "only {accepted} of {CASES} requests were accepted"
    );
}
