//! Connected sockets as stream endpoints, on the CPU device and every transport: a
//! kernel receives and sends on a real Unix or TCP socket, and prints lines to one
//! through a printf log.

mod probe_support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use gpuio::backends::transport_builder as builder;
use gpuio_core::device::Module;
use gpuio_core::memory::HostMemory;
use gpuio_core::{Channel, ChannelConfig, Endpoint, LogConfig, TransportKind};

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
        }
    )*};
}

on_every_transport! {
    direct: TransportKind::Direct;
    forward: TransportKind::Forward;
    mailbox: TransportKind::Mailbox;
}
