//! Host queues on the CPU device: framed messages between kernels and the host
//! program, on every transport, through real shared memory and real kernel threads.

mod probe_support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gpuio::backends::transport_builder as builder;
use gpuio_core::device::Module;
use gpuio_core::memory::HostMemory;
use gpuio_core::{
    Access, Channel, ChannelConfig, Endpoint, QueueConfig, QueueError, RecvError, SendError,
    TransportKind,
};

const KERNEL_DEADLINE: Duration = Duration::from_secs(120);

fn module() -> Option<Arc<dyn Module>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/queues.cu");
    let source = std::fs::read_to_string(&path).expect("the kernel source");
    probe_support::load_on_cpu("queues.cu", &source)
}

fn open(kind: TransportKind, config: ChannelConfig) -> Channel {
    Channel::open(Arc::new(HostMemory), builder(kind).as_ref(), config).expect("channel opens")
}

// The same message the kernels make (tests/kernels/queues.cu: msg_len, msg_fill).
fn msg_len(t: u64, i: u64, max: u32) -> u32 {
    let mut h = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    8 + (h % u64::from(max - 7)) as u32
}

fn msg(t: u64, i: u64, max: u32) -> Vec<u8> {
    let len = msg_len(t, i, max);
    let mut m = vec![0u8; len as usize];
    m[..4].copy_from_slice(&(t as u32).to_le_bytes());
    m[4..8].copy_from_slice(&(i as u32).to_le_bytes());
    for k in 8..len {
        m[k as usize] = (t * 31 + i * 7 + u64::from(k)) as u8;
    }
    m
}

/// The (thread, index) a well-formed message names, or why it is not well formed.
fn check(m: &[u8], max: u32) -> Result<(u64, u64), String> {
    if m.len() < 8 {
        return Err(format!("{} bytes", m.len()));
    }
    let t = u64::from(u32::from_le_bytes(m[..4].try_into().unwrap()));
    let i = u64::from(u32::from_le_bytes(m[4..8].try_into().unwrap()));
    if m != msg(t, i, max) {
        return Err(format!("message {i} of thread {t} is torn or wrong"));
    }
    Ok((t, i))
}

fn queue(max_message: u32, capacity: u32, rings: u32) -> QueueConfig {
    QueueConfig {
        max_message,
        capacity,
        rings,
        timeout: Duration::from_secs(60),
    }
}

/// A channel whose device calls wait up to a minute: the CPU device runs 64 kernel
/// threads on whatever cores CI has, and a starved host thread must not turn into a
/// failed send (these tests check what arrives, not how fast).
fn patient() -> ChannelConfig {
    ChannelConfig {
        call_timeout: Duration::from_secs(60),
        ..Default::default()
    }
}

/// 64 threads × 10,000 messages of random lengths to the host: every one arrives
/// once, whole, and each thread's in the order it sent them.
fn device_to_host(kind: TransportKind) {
    let Some(m) = module() else { return };
    const THREADS: u64 = 64;
    const EACH: u64 = 10_000;
    const MAX: u32 = 200;
    let mut config = patient();
    let ep = config.endpoint(Endpoint::queue_to_host("results", queue(MAX, 256, 4)));
    let ch = open(kind, config);
    let mut rx = ch.receiver(ep).unwrap();
    let reader = std::thread::spawn(move || {
        let mut next: HashMap<u64, u64> = HashMap::new();
        let mut n = 0u64;
        for m in rx.iter() {
            let m = m.expect("a message");
            let (t, i) = check(&m, MAX).unwrap();
            let want = next.entry(t).or_insert(0);
            assert_eq!(i, *want, "thread {t}'s messages out of order or lost");
            *want += 1;
            n += 1;
        }
        (n, next)
    });
    let p = m
        .launch(
            "send_numbered",
            2,
            32,
            &ch,
            &[u64::from(ep), EACH, u64::from(MAX), 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(
        (p[3], p[5]),
        (THREADS * EACH, 0),
        "sends failed: first -errno {}",
        p[4]
    );
    let report = ch.close();
    let (n, next) = reader.join().unwrap();
    assert_eq!(n, THREADS * EACH);
    assert!(next.values().all(|&v| v == EACH) && next.len() == THREADS as usize);
    let q = &report.queues[0];
    assert_eq!((q.sent, q.received, q.in_flight), (n, n, 0), "{report}");
    assert!(report.is_clean(), "{report}");
}

/// 64 device threads take 640,000 messages of random lengths from one host thread:
/// each arrives once and whole, and `gpuio_recv` ends with 0 once the host closed.
fn host_to_device(kind: TransportKind) {
    let Some(m) = module() else { return };
    const TOTAL: u64 = 640_000;
    const MAX: u32 = 200;
    let mut config = patient();
    let ep = config.endpoint(Endpoint::queue_to_device("work", queue(MAX, 512, 1)));
    let ch = open(kind, config);
    let mut tx = ch.sender(ep).unwrap();
    let running = m
        .launch(
            "recv_checked",
            2,
            32,
            &ch,
            &[u64::from(ep), u64::from(MAX), 0, 0, 0, 0, 0],
        )
        .unwrap();
    let mut sum = 0u64;
    for i in 0..TOTAL {
        let (t, j) = (i % 1000, i / 1000);
        tx.send(&msg(t, j, MAX)).unwrap();
        sum = sum.wrapping_add(t << 32 | j);
    }
    tx.close();
    all_received_once(&running.join(KERNEL_DEADLINE).unwrap(), ch, TOTAL, sum);
}

/// What `recv_checked` reported (`p`) and the channel's close say: every one of
/// `total` messages (summing to `sum`) arrived once and whole, and the queue
/// reports each sent and received.
fn all_received_once(p: &[u64], ch: Channel, total: u64, sum: u64) {
    assert_eq!(p[4], 0, "a receive failed with -errno {}", p[4]);
    assert_eq!((p[2], p[3]), (total, 0), "received, torn");
    assert_eq!(p[5], sum, "the messages received are not the ones sent");
    let report = ch.close();
    let q = &report.queues[0];
    assert_eq!(
        (q.sent, q.received, q.in_flight),
        (total, total, 0),
        "{report}"
    );
    assert!(report.is_clean(), "{report}");
}

/// A queue to the device of four rings, a host thread sending on each
/// (`Sender::split`): `threads` device threads (a warp reads its own ring first and
/// the others when it is empty) take every message once and whole, and `gpuio_recv`
/// ends with 0 only once every ring is closed and drained. `cap` is the kernel's
/// buffer (0: room for any message; less than the longest message: it looks at
/// each message before taking it).
fn rings_to_the_device(senders: usize, threads: (u32, u32), cap: u64) -> u64 {
    let m = module().expect("the CPU device compiles the kernels");
    const PER: u64 = 40_000;
    const MAX: u32 = 200;
    let mut config = patient();
    // With a buffer, the queue's longest message is longer than the buffer and
    // every message the test sends fits it.
    let longest = if cap == 0 { MAX } else { 256 };
    let ep = config.endpoint(Endpoint::queue_to_device("work", queue(longest, 256, 4)));
    let ch = open(TransportKind::Forward, config);
    let tx = ch.sender(ep).unwrap();
    let running = m
        .launch(
            "recv_checked",
            threads.0,
            threads.1,
            &ch,
            &[u64::from(ep), u64::from(MAX), 0, 0, 0, 0, cap],
        )
        .unwrap();
    let txs = if senders == 1 { vec![tx] } else { tx.split() };
    assert_eq!(txs.len(), senders);
    let sums: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = txs
            .into_iter()
            .enumerate()
            .map(|(k, mut tx)| {
                s.spawn(move || {
                    let mut sum = 0u64;
                    for j in 0..PER {
                        // Thread numbers 0..1000 split between the senders.
                        let t = (k as u64) * 250 + j % 250;
                        let i = j / 250;
                        tx.send(&msg(t, i, MAX)).unwrap();
                        sum = sum.wrapping_add(t << 32 | i);
                    }
                    sum
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total = PER * senders as u64;
    let sum = sums.iter().fold(0u64, |a, s| a.wrapping_add(*s));
    all_received_once(&running.join(KERNEL_DEADLINE).unwrap(), ch, total, sum);
    total
}

#[test]
fn four_host_threads_send_on_four_rings_and_every_message_arrives_once() {
    assert_eq!(rings_to_the_device(4, (2, 32), 0), 160_000);
}

#[test]
fn readers_that_look_before_they_take_drain_every_ring_and_end_with_zero() {
    // 200-byte buffers on a queue of 256-byte messages: every message sent (8 to
    // 200 bytes) fits, and each is looked at before it is taken.
    assert_eq!(rings_to_the_device(4, (2, 32), 200), 160_000);
}

#[test]
fn an_unsplit_sender_on_four_rings_reaches_readers_of_every_ring() {
    // One warp per ring (warps 0..3 read rings 0..3 first); every message is on
    // ring 0, so three of the four warps take only from a ring not their own.
    assert_eq!(rings_to_the_device(1, (4, 32), 0), 40_000);
}

#[test]
fn a_sender_split_into_rings_closes_each_ring_on_its_own() {
    let mut config = patient();
    let ep = config.endpoint(Endpoint::queue_to_device("work", queue(64, 8, 4)));
    let ch = open(TransportKind::Forward, config);
    let mut txs = ch.sender(ep).unwrap().split();
    assert_eq!(txs.len(), 4);
    for (k, tx) in txs.iter_mut().enumerate() {
        tx.send(&[k as u8; 10]).unwrap();
        assert_eq!(tx.sent(), 1);
    }
    txs[1].close();
    assert_eq!(txs[1].send(b"late"), Err(SendError::Closed));
    txs[2].send(b"still open").unwrap();
    let report = ch.close();
    let q = &report.queues[0];
    assert_eq!((q.sent, q.received, q.in_flight), (5, 0, 5), "{report}");
}

macro_rules! on_every_transport {
    ($($transport:ident: $kind:expr;)*) => {$(
        mod $transport {
            use super::*;
            #[test]
            fn messages_from_64_threads_arrive_once_whole_and_in_each_threads_order() {
                device_to_host($kind);
            }
            #[test]
            fn messages_to_64_device_threads_arrive_once_whole_and_end_with_zero() {
                host_to_device($kind);
            }
        }
    )*};
}

on_every_transport! {
    direct: TransportKind::Direct;
    forward: TransportKind::Forward;
    mailbox: TransportKind::Mailbox;
}

#[test]
fn a_full_queue_times_senders_out_overwrites_nothing_and_everything_sent_arrives_later() {
    let Some(m) = module() else { return };
    const MAX: u32 = 64;
    let mut config = ChannelConfig {
        call_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let ep = config.endpoint(Endpoint::queue_to_host("slow", queue(MAX, 16, 1)));
    let ch = open(TransportKind::Mailbox, config);
    let mut rx = ch.receiver(ep).unwrap();
    // Nobody reads while the kernel runs: 16 messages fit, the rest time out.
    let p = m
        .launch(
            "send_numbered",
            1,
            8,
            &ch,
            &[u64::from(ep), 20, u64::from(MAX), 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(p[3] + p[5], 160);
    assert_eq!(p[3], 16, "exactly the queue's capacity was sent");
    assert_eq!(p[4], libc::ETIMEDOUT as u64, "the rest timed out");
    let mut last: HashMap<u64, u64> = HashMap::new();
    for _ in 0..p[3] {
        let m = rx
            .try_recv()
            .expect("a message sent before the queue filled");
        let (t, i) = check(&m, MAX).unwrap();
        if let Some(&prev) = last.get(&t) {
            assert!(i > prev, "thread {t}: message {i} after {prev}");
        }
        last.insert(t, i);
    }
    assert_eq!(rx.try_recv(), Err(RecvError::Empty));
    // Reading resumed: the kernel can send again.
    let p = m
        .launch(
            "send_numbered",
            1,
            4,
            &ch,
            &[u64::from(ep), 2, u64::from(MAX), 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!((p[3], p[5]), (8, 0));
    let report = ch.close();
    let got: Vec<_> = rx.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(got.len(), 8);
    assert!(report.timed_out >= 144, "{report}");
    assert_eq!(report.queues[0].sent, 24, "{report}");
}

#[test]
fn a_full_queue_to_the_device_refuses_the_host_at_once_or_after_its_wait() {
    let mut config = ChannelConfig::default();
    let ep = config.endpoint(Endpoint::queue_to_device("work", queue(32, 4, 1)));
    let ch = open(TransportKind::Mailbox, config);
    let mut tx = ch.sender(ep).unwrap();
    for i in 0..4u8 {
        tx.try_send(&[i; 8]).unwrap();
    }
    assert_eq!(tx.try_send(b"fifth"), Err(SendError::Full));
    let wait = Duration::from_millis(20);
    assert_eq!(
        tx.send_timeout(b"fifth", wait),
        Err(SendError::Timeout(wait))
    );
    assert_eq!(
        tx.try_send(&[0; 33]),
        Err(SendError::TooLong { len: 33, max: 32 })
    );
    let report = ch.close();
    let q = &report.queues[0];
    assert_eq!((q.sent, q.received, q.in_flight), (4, 0, 4), "{report}");
    assert_eq!(tx.try_send(b"late"), Err(SendError::Closed));
}

#[test]
fn a_queue_to_the_device_of_capacity_one_never_overwrites_an_unread_message() {
    // With one cell, "full for p" and "free for p + 1" were the same `ready` value:
    // the second send took the first, unread, message's cell for free and overwrote
    // it. Such a queue gets two cells.
    let mut config = ChannelConfig::default();
    let ep = config.endpoint(Endpoint::queue_to_device("work", queue(8, 1, 1)));
    let ch = open(TransportKind::Mailbox, config);
    let mut tx = ch.sender(ep).unwrap();
    tx.try_send(b"first").unwrap();
    tx.try_send(b"second").unwrap();
    assert_eq!(tx.try_send(b"third"), Err(SendError::Full));
    let report = ch.close();
    let q = &report.queues[0];
    assert_eq!((q.sent, q.received, q.in_flight), (2, 0, 2), "{report}");
}

#[test]
fn misusing_a_queue_from_the_kernel_gives_errno_and_never_traps() {
    let Some(m) = module() else { return };
    let file = tempfile::tempfile().unwrap();
    let mut config = ChannelConfig::default();
    let to_host = config.endpoint(Endpoint::queue_to_host("out", queue(100, 16, 2)));
    let to_dev = config.endpoint(Endpoint::queue_to_device("in", queue(100, 16, 1)));
    config.endpoint(Endpoint::file("file", &file, Access::READ_WRITE).unwrap());
    let ch = open(TransportKind::Forward, config);
    let mut params = vec![0u64; 20];
    params[0] = u64::from(to_host);
    params[1] = u64::from(to_dev);
    let p = m
        .launch("misuse", 1, 1, &ch, &params)
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let want = [
        ("recv on a queue to the host", libc::EBADF),
        ("send on a queue to the device", libc::EBADF),
        ("a message over the maximum", libc::EMSGSIZE),
        ("an endpoint that does not exist", libc::EBADF),
        ("send with a null channel", libc::EINVAL),
        ("try_recv on an empty queue", libc::EAGAIN),
        ("pwrite on a queue", libc::ESPIPE),
        ("recv with a null channel", libc::EINVAL),
        ("send from a null buffer", libc::EFAULT),
    ];
    for (i, (what, errno)) in want.iter().enumerate() {
        assert_eq!(p[8 + i], *errno as u64, "{what}");
    }
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert!(report.queues.iter().all(|q| q.sent == 0), "{report}");
}

#[test]
fn a_kernel_that_scribbles_over_a_ring_is_reported_and_the_host_reads_nothing_from_it() {
    let Some(m) = module() else { return };
    let mut config = ChannelConfig::default();
    let ep = config.endpoint(Endpoint::queue_to_host("out", queue(64, 16, 1)));
    let ch = open(TransportKind::Mailbox, config);
    let mut rx = ch.receiver(ep).unwrap();
    m.launch("scribble", 1, 1, &ch, &[0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    match rx.try_recv() {
        Err(RecvError::Protocol(what)) => {
            assert!(what.contains("stamped for message 123456788"), "{what}")
        }
        other => panic!("expected a protocol violation, got {other:?}"),
    }
    let report = ch.close();
    assert!(!report.is_clean(), "{report}");
    assert!(
        report.problems.iter().any(|p| p.contains("queue \"out\"")),
        "{report}"
    );
    assert_eq!(rx.try_recv(), Err(RecvError::Closed));
}

#[test]
fn a_warp_sends_one_message_it_copied_together() {
    let Some(m) = module() else { return };
    let mut config = ChannelConfig::default();
    let ep = config.endpoint(Endpoint::queue_to_host("out", queue(512, 64, 2)));
    let ch = open(TransportKind::Mailbox, config);
    let mut rx = ch.receiver(ep).unwrap();
    let p = m
        .launch("send_warp", 1, 16, &ch, &[u64::from(ep), 300, 0, 0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(
        (p[2], p[3]),
        (16, 0),
        "every warp (one thread each here) sent"
    );
    let report = ch.close();
    let got: Vec<Vec<u8>> = rx.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(got.len(), 16);
    for m in &got {
        assert_eq!(m.len(), 300);
        let w = m[0];
        assert!(m
            .iter()
            .enumerate()
            .all(|(k, &b)| b == w.wrapping_add(k as u8)));
    }
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_queue_hands_out_one_receiver_or_sender_of_its_own_direction() {
    let file = tempfile::tempfile().unwrap();
    let mut config = ChannelConfig::default();
    let out = config.endpoint(Endpoint::queue_to_host("out", QueueConfig::default()));
    let work = config.endpoint(Endpoint::queue_to_device("work", QueueConfig::default()));
    let f = config.endpoint(Endpoint::file("f", &file, Access::WRITE).unwrap());
    let ch = open(TransportKind::Forward, config);
    assert!(matches!(
        ch.sender(out),
        Err(QueueError::WrongDirection { .. })
    ));
    assert!(matches!(
        ch.receiver(work),
        Err(QueueError::WrongDirection { .. })
    ));
    assert!(matches!(ch.receiver(f), Err(QueueError::NotAQueue { .. })));
    assert_eq!(ch.receiver(9).unwrap_err(), QueueError::NoSuchEndpoint(9));
    let _rx = ch.receiver(out).unwrap();
    assert!(matches!(
        ch.receiver(out),
        Err(QueueError::AlreadyTaken { .. })
    ));
    let _tx = ch.sender(work).unwrap();
}

#[test]
fn a_persistent_kernel_serves_an_async_host_through_a_stream_and_a_sink() {
    use futures::{SinkExt, StreamExt};
    let Some(m) = module() else { return };
    const N: u64 = 10_000;
    let mut config = patient();
    let work = config.endpoint(Endpoint::queue_to_device("work", queue(8, 256, 1)));
    let results = config.endpoint(Endpoint::queue_to_host("results", queue(16, 256, 2)));
    let ch = open(TransportKind::Mailbox, config);
    let mut tx = ch.sender(work).unwrap();
    let mut rx = ch.receiver(results).unwrap();
    let running = m
        .launch(
            "square_worker",
            1,
            4,
            &ch,
            &[u64::from(work), u64::from(results), 0, 0],
        )
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let seen = rt.block_on(async move {
        let producer = tokio::spawn(async move {
            for x in 0..N {
                SinkExt::send(&mut tx, x.to_le_bytes().to_vec())
                    .await
                    .unwrap();
            }
            SinkExt::close(&mut tx).await.unwrap();
        });
        let mut seen = vec![false; N as usize];
        for _ in 0..N {
            let m = tokio::time::timeout(Duration::from_secs(60), StreamExt::next(&mut rx))
                .await
                .expect("a result within a minute")
                .expect("the stream goes on")
                .expect("a well-formed result");
            let x = u64::from_le_bytes(m[..8].try_into().unwrap());
            let sq = u64::from_le_bytes(m[8..16].try_into().unwrap());
            assert_eq!(sq, x * x);
            assert!(!seen[x as usize], "{x} answered twice");
            seen[x as usize] = true;
        }
        producer.await.unwrap();
        seen
    });
    assert!(seen.iter().all(|&s| s));
    let p = running.join(KERNEL_DEADLINE).unwrap();
    assert_eq!((p[2], p[3]), (N, 0));
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
}
