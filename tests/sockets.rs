//! Connected sockets as stream endpoints, on the CPU device and every transport: a
//! kernel receives and sends on a real Unix or TCP socket, and prints lines to one
//! through a printf log. A send to a peer that closed is `-EPIPE` and the host
//! process lives on (no `SIGPIPE`, checked in a child process that does not ignore
//! it); a receive after the peer shut down its side is 0; an endpoint declared
//! read-only cannot be sent on; socket requests on a file or pipe are `-ENOTSOCK`.

mod probe_support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use gpuio::backends::transport_builder as builder;
use gpuio_core::device::Module;
use gpuio_core::memory::HostMemory;
use gpuio_core::{
    Access, Channel, ChannelConfig, Endpoint, EndpointKind, LogConfig, TransportKind,
};

const KERNEL_DEADLINE: Duration = Duration::from_secs(120);

fn module() -> Option<Arc<dyn Module>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/sockets.cu");
    let source = std::fs::read_to_string(&path).expect("the kernel source");
    probe_support::load_on_cpu("sockets.cu", &source)
}

fn open(kind: TransportKind, config: ChannelConfig) -> Channel {
    Channel::open(Arc::new(HostMemory), builder(kind).as_ref(), config).expect("channel opens")
}

fn patient() -> ChannelConfig {
    ChannelConfig {
        call_timeout: Duration::from_secs(30),
        ..Default::default()
    }
}

/// 256 KiB written by the host come back byte for byte from a kernel that echoes
/// them with `gpuio_recv` / `gpuio_send` on the socket's other end.
fn echo<S: Read + Write + Send + 'static>(
    kind: TransportKind,
    ours: Endpoint,
    mut peer: S,
    shut: impl Fn(&S) + Send + 'static,
) {
    let Some(m) = module() else { return };
    const LEN: usize = 256 << 10;
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 + i / 4096) as u8).collect();
    let mut cfg = patient();
    let ep = cfg.endpoint(ours);
    let ch = open(kind, cfg);
    let run = m
        .launch("echo", 1, 1, &ch, &[u64::from(ep), 0, 0, 0])
        .unwrap();
    let sent = data.clone();
    let peer_side = std::thread::spawn(move || {
        // Write and read at once: the kernel sends back while the host still writes.
        let mut back = vec![0u8; LEN];
        let mut got = 0;
        let mut off = 0;
        while got < LEN {
            if off < LEN {
                let n = (LEN - off).min(16 << 10);
                peer.write_all(&sent[off..off + n]).unwrap();
                off += n;
                if off == LEN {
                    shut(&peer);
                }
            }
            while got < off.min(LEN) {
                let n = peer.read(&mut back[got..]).unwrap();
                assert!(n > 0, "the socket closed after {got} bytes");
                got += n;
            }
        }
        back
    });
    let back = peer_side.join().unwrap();
    let p = run.join(KERNEL_DEADLINE).unwrap();
    assert_eq!(
        (p[1], p[3]),
        (LEN as u64, 0),
        "first failure -errno {}",
        p[2]
    );
    assert!(back == data, "the echoed bytes differ");
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
}

fn unix_echo(kind: TransportKind) {
    let (ours, peer) = UnixStream::pair().unwrap();
    let ep = Endpoint::socket("peer", &ours).unwrap();
    drop(ours); // the channel holds its own
    peer.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    echo(kind, ep, peer, |s| s.shutdown(Shutdown::Write).unwrap());
}

fn tcp_echo(kind: TransportKind) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().unwrap();
    let ep = Endpoint::socket("tcp peer", &ours).unwrap();
    drop(ours);
    peer.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    echo(kind, ep, peer, |s| s.shutdown(Shutdown::Write).unwrap());
}

/// 64 threads × 200 lines through a printf log to a socket: every line arrives
/// whole and in its thread's order.
fn printf_to_socket(kind: TransportKind) {
    let Some(m) = module() else { return };
    const THREADS: u64 = 64;
    const EACH: u64 = 200;
    let (ours, mut peer) = UnixStream::pair().unwrap();
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::socket("peer", &ours).unwrap());
    cfg.log(ep, LogConfig::default());
    drop(ours);
    let ch = open(kind, cfg);
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        peer.read_to_string(&mut text).unwrap(); // until the channel closes its end
        text
    });
    let p = m
        .launch("print_to", 2, 32, &ch, &[u64::from(ep), EACH, 0, 0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(p[3], 0, "first failure -errno {}", p[2]);
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    let text = reader.join().unwrap();
    let mut next: HashMap<u64, u64> = HashMap::new();
    for l in text.split_inclusive('\n') {
        let (t, i) = l
            .strip_prefix("t=")
            .and_then(|r| r.strip_suffix('\n'))
            .and_then(|r| r.split_once(" i="))
            .and_then(|(t, i)| Some((t.parse::<u64>().ok()?, i.parse::<u64>().ok()?)))
            .unwrap_or_else(|| panic!("a torn line: {l:?}"));
        let want = next.entry(t).or_insert(0);
        assert_eq!(i, *want, "thread {t}'s lines out of order or lost");
        *want += 1;
    }
    assert!(next.len() == THREADS as usize && next.values().all(|&n| n == EACH));
}

/// A connected pair: ours (to register) and the peer the host keeps, Unix or TCP.
fn unix_pair() -> (UnixStream, UnixStream) {
    UnixStream::pair().unwrap()
}

fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().unwrap();
    (ours, peer)
}

/// A send to a peer that closed ends in `-EPIPE` for `gpuio_send` and
/// `gpuio_write` alike, and (run where `SIGPIPE` has its default action) the process
/// is still here to say so. Over TCP the first sends may succeed and one may say
/// `-ECONNRESET` (the reset that answered them); the loop ends at the first other
/// error.
fn send_to_closed_peer(kind: TransportKind, ours: impl AsFd, peer: impl Sized) {
    let Some(m) = module() else { return };
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::socket("closed peer", &ours).unwrap());
    drop(ours);
    drop(peer);
    let ch = open(kind, cfg);
    let p = m
        .launch(
            "send_to_closed",
            1,
            1,
            &ch,
            &[u64::from(ep), 0, 0, 0, libc::ECONNRESET as u64],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let epipe = libc::EPIPE as u64;
    assert_eq!(
        p[2], epipe,
        "the sends ended with errno {} after {} succeeded",
        p[2], p[1]
    );
    assert_eq!(p[3] as i64, -(libc::EPIPE as i64), "gpuio_write after them");
    let report = ch.close();
    assert!(report.problems.is_empty(), "{report}");
}

/// Lines printed through a printf log to a socket whose peer closed: the log's
/// thread gets `EPIPE` (reported, every line counted lost) and no `SIGPIPE`.
fn printf_to_closed_peer(kind: TransportKind) {
    let Some(m) = module() else { return };
    const LINES: u64 = 5;
    let (ours, peer) = unix_pair();
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::socket("closed peer", &ours).unwrap());
    cfg.log(ep, LogConfig::default());
    drop(ours);
    drop(peer);
    let ch = open(kind, cfg);
    let p = m
        .launch("print_to", 1, 1, &ch, &[u64::from(ep), LINES, 0, 0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(p[3], 0, "the kernel's lines were taken (-errno {})", p[2]);
    let report = ch.close();
    let log = &report.logs[0];
    assert_eq!((log.lines, log.lost), (0, LINES), "{log}");
    let error = log.error.as_deref().unwrap_or_default();
    assert!(error.contains("os error 32"), "EPIPE, not {error:?}");
}

/// Marks the child process that runs `send_to_closed_peer` with `SIGPIPE` at its
/// default action (terminate), which the test harness otherwise ignores.
const SIGPIPE_CHILD: &str = "GPUIO_SOCKETS_TEST_SIGPIPE_CHILD";

/// Runs the ignored test `name` (`transport::test`) of this binary in a child
/// process with `SIGPIPE_CHILD` set; fails naming the signal if one ended it.
fn in_child_with_default_sigpipe(name: &str) {
    use std::os::unix::process::ExitStatusExt;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SIGPIPE_CHILD, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "SIGPIPE ended the host process:\n{text}"
    );
    assert!(
        out.status.success(),
        "child failed ({}):\n{text}",
        out.status
    );
    assert!(text.contains("1 passed"), "the child ran its test:\n{text}");
}

/// In the child: `SIGPIPE` back to its default action, then both sockets.
fn sigpipe_child(kind: TransportKind) {
    if std::env::var_os(SIGPIPE_CHILD).is_none() {
        eprintln!("skipped: runs only in the child process of its parent test");
        return;
    }
    // SAFETY: sets the disposition of SIGPIPE to its default, with no handler; the
    // test harness set it to SIG_IGN and nothing here relies on that.
    let old = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(old, libc::SIG_ERR, "signal(SIGPIPE, SIG_DFL)");
    let (ours, peer) = unix_pair();
    send_to_closed_peer(kind, ours, peer);
    let (ours, peer) = tcp_pair();
    send_to_closed_peer(kind, ours, peer);
    printf_to_closed_peer(kind);
}

/// After the peer shut down its write side a receive is 0, every time, and the
/// kernel's own side still sends.
fn recv_after_peer_shutdown<S: Read + AsFd>(kind: TransportKind, ours: S, mut peer: S)
where
    for<'a> &'a S: Write,
{
    let Some(m) = module() else { return };
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::socket("half-closed peer", &ours).unwrap());
    drop(ours);
    let shutdown = |s: &S| {
        rustix::net::shutdown(s, rustix::net::Shutdown::Write).unwrap();
    };
    shutdown(&peer);
    let ch = open(kind, cfg);
    let p = m
        .launch(
            "recv_after_shutdown",
            1,
            1,
            &ch,
            &[u64::from(ep), 0, 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let got: Vec<i64> = p[1..5].iter().map(|&v| v as i64).collect();
    assert_eq!(got, [0, 0, 10, 0], "recv, recv, send, read");
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    let mut text = String::new();
    peer.read_to_string(&mut text).unwrap(); // the channel closed its end
    assert_eq!(text, "still open");
}

/// Forward and mailbox: a socket declared read-only takes no send from a kernel,
/// whichever call or raw request it tries (`-EBADF`, nothing reaches the peer),
/// and still receives. Direct cannot confine a socket's fixed file to reading (a
/// socket cannot be reopened with less access), so it refuses to open, saying so.
fn send_on_read_only_socket(kind: TransportKind) {
    let Some(m) = module() else { return };
    let (ours, mut peer) = unix_pair();
    let mut cfg = patient();
    let ep = cfg.endpoint(
        Endpoint::new(
            "read-only peer",
            EndpointKind::Socket,
            Access::READ,
            ours.as_fd(),
        )
        .unwrap(),
    );
    drop(ours);
    peer.write_all(b"ping").unwrap();
    if kind == TransportKind::Direct {
        let Err(e) = Channel::open(Arc::new(HostMemory), builder(kind).as_ref(), cfg) else {
            panic!("direct opened a channel with a socket it cannot confine to reading");
        };
        let msg = e.to_string();
        assert!(
            msg.contains("read-only peer")
                && msg.contains("a socket")
                && msg.contains("forward or"),
            "{msg}"
        );
        return;
    }
    let ch = open(kind, cfg);
    let p = m
        .launch(
            "send_on_read_only",
            1,
            1,
            &ch,
            &[u64::from(ep), 0, 0, 0, 0, 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let ebadf = -i64::from(libc::EBADF);
    let got: Vec<i64> = p[1..7].iter().map(|&v| v as i64).collect();
    assert_eq!(
        got,
        [ebadf, ebadf, ebadf, ebadf, ebadf, 4],
        "gpuio_send, gpuio_write, gpuio_send_warp, raw SEND, raw WRITE, gpuio_recv"
    );
    assert_eq!(&p[7].to_le_bytes()[..4], b"ping");
    let report = ch.close();
    assert!(report.problems.is_empty(), "{report}");
    // The two raw requests reached the host and were refused there.
    assert_eq!(
        (report.counters.completed, report.counters.failed),
        (1, 2),
        "{report}"
    );
    let mut text = String::new();
    peer.read_to_string(&mut text).unwrap();
    assert_eq!(text, "", "nothing reached the peer");
}

/// SEND and RECV on a file or a pipe: `-ENOTSOCK`, as `send(2)` on them, from
/// every transport; the file and the pipe are untouched.
fn socket_ops_on_a_file_or_pipe(kind: TransportKind) {
    let Some(m) = module() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file");
    std::fs::write(&path, b"file").unwrap();
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let (mut rx, mut tx) = std::io::pipe().unwrap();
    tx.write_all(b"pipe").unwrap();
    let mut cfg = patient();
    let eps = [
        cfg.endpoint(Endpoint::file("file", &file, Access::READ_WRITE).unwrap()),
        cfg.endpoint(
            Endpoint::new("pipe in", EndpointKind::Pipe, Access::WRITE, tx.as_fd()).unwrap(),
        ),
        cfg.endpoint(
            Endpoint::new("pipe out", EndpointKind::Pipe, Access::READ, rx.as_fd()).unwrap(),
        ),
    ];
    let ch = open(kind, cfg);
    let mut params: Vec<u64> = eps.iter().map(|&e| u64::from(e)).collect();
    params.resize(7, 0);
    let p = m
        .launch("socket_ops_elsewhere", 1, 1, &ch, &params)
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let got: Vec<i64> = p[3..7].iter().map(|&v| v as i64).collect();
    let enotsock = -i64::from(libc::ENOTSOCK);
    assert_eq!(
        got, [enotsock; 4],
        "SEND and RECV on the file, SEND on the pipe's write end, RECV on its read end"
    );
    let report = ch.close();
    assert!(report.problems.is_empty(), "{report}");
    assert_eq!(
        (report.counters.completed, report.counters.failed),
        (0, 4),
        "{report}"
    );
    drop(tx);
    let mut piped = String::new();
    rx.read_to_string(&mut piped).unwrap();
    assert_eq!(
        piped, "pipe",
        "the pipe holds what the host wrote, all of it"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"file");
}

macro_rules! on_every_transport {
    ($($name:ident: $kind:expr;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn a_kernel_echoes_every_byte_over_a_unix_socket() {
                unix_echo($kind);
            }
            #[test]
            fn a_kernel_echoes_every_byte_over_a_tcp_socket() {
                tcp_echo($kind);
            }
            #[test]
            fn printf_to_a_socket_arrives_whole_and_in_each_threads_order() {
                printf_to_socket($kind);
            }
            #[test]
            fn a_send_to_a_closed_peer_is_epipe_and_the_host_process_lives_on() {
                in_child_with_default_sigpipe(concat!(
                    stringify!($name),
                    "::sigpipe_child_sends_to_closed_peers"
                ));
            }
            #[test]
            #[ignore = "run in a child process by a_send_to_a_closed_peer_is_epipe_and_the_host_process_lives_on"]
            fn sigpipe_child_sends_to_closed_peers() {
                sigpipe_child($kind);
            }
            #[test]
            fn a_recv_after_the_peer_shut_down_its_side_is_zero_over_unix() {
                let (ours, peer) = unix_pair();
                recv_after_peer_shutdown($kind, ours, peer);
            }
            #[test]
            fn a_recv_after_the_peer_shut_down_its_side_is_zero_over_tcp() {
                let (ours, peer) = tcp_pair();
                recv_after_peer_shutdown($kind, ours, peer);
            }
            #[test]
            fn a_socket_declared_read_only_takes_no_send() {
                send_on_read_only_socket($kind);
            }
            #[test]
            fn send_and_recv_on_a_file_or_pipe_are_enotsock() {
                socket_ops_on_a_file_or_pipe($kind);
            }
        }
    )*};
}

on_every_transport! {
    direct: TransportKind::Direct;
    forward: TransportKind::Forward;
    mailbox: TransportKind::Mailbox;
}
