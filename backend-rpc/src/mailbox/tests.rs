//! The host server against requests written from Rust, playing the device's part of
//! the protocol (the header's own tests run real kernels: tests/mailbox_smoke.rs).

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpuio_core::abi;
use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, EndpointKind, HostMemory};

use super::MailboxBuilder;

/// The device's half of the protocol, on the CPU (HostMemory: device addresses are
/// host addresses).
struct FakeDevice {
    desc: abi::Channel,
}

impl FakeDevice {
    fn new(ch: &Channel) -> Self {
        // SAFETY: the descriptor lives in shared memory the channel keeps alive and
        // was fully written before `open` returned.
        let desc = unsafe { std::ptr::read_volatile(ch.device_ptr() as *const abi::Channel) };
        assert_eq!(desc.transport, abi::TransportKind::Mailbox as u32);
        Self { desc }
    }

    fn port(&self, i: u32) -> *mut abi::MailboxPort {
        assert!(i < self.desc.mailbox.port_count);
        (self.desc.mailbox.ports as *mut abi::MailboxPort).wrapping_add(i as usize)
    }

    fn device_out(&self, i: u32) -> &AtomicU32 {
        // SAFETY: the port is inside the live ports array; the word is only touched
        // atomically.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.port(i)).device_out)) }
    }

    /// The host's answer word: its flip and the result.
    fn host_out(&self, i: u32) -> &AtomicU64 {
        // SAFETY: as in `device_out`; the field is 8-aligned (abi.rs).
        unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*self.port(i)).host_out)) }
    }

    /// Staging chunk `i`'s offset.
    fn chunk(&self, i: u32) -> u64 {
        u64::from(i) * u64::from(self.desc.slot_size)
    }

    fn put_staging(&self, off: u64, bytes: &[u8]) {
        // SAFETY: the test keeps `off + len` inside the staging area, which the channel
        // keeps alive; no server touches these bytes before the request is sent.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (self.desc.staging as *mut u8).add(off as usize),
                bytes.len(),
            )
        }
    }

    fn get_staging(&self, off: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        // SAFETY: as in `put_staging`; the request that filled them is answered.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.desc.staging as *const u8).add(off as usize),
                v.as_mut_ptr(),
                len,
            )
        }
        v
    }

    /// Writes `req` into port `i` (which must be free) and flips `device_out`.
    fn send(&self, i: u32, req: abi::Request) {
        let dev = self.device_out(i).load(Ordering::Relaxed);
        assert_eq!(
            dev,
            abi::mailbox_answer::flip(self.host_out(i).load(Ordering::Acquire)),
            "port {i} busy"
        );
        // SAFETY: the device side owns the port's request while the flags are equal.
        unsafe { std::ptr::write_volatile(std::ptr::addr_of_mut!((*self.port(i)).req), req) };
        self.device_out(i).store(dev ^ 1, Ordering::Release);
    }

    /// Waits (bounded) for port `i`'s answer.
    fn wait(&self, i: u32, timeout: Duration) -> Option<i64> {
        let deadline = Instant::now() + timeout;
        let sent = self.device_out(i).load(Ordering::Relaxed);
        loop {
            let answer = self.host_out(i).load(Ordering::Acquire);
            if abi::mailbox_answer::flip(answer) == sent {
                return Some(i64::from(abi::mailbox_answer::result(answer)));
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::yield_now();
        }
    }

    fn call(&self, i: u32, req: abi::Request) -> i64 {
        self.send(i, req);
        self.wait(i, Duration::from_secs(10))
            .expect("the server answers within 10 s")
    }
}

fn req(op: u32, endpoint: u32, staging_off: u64, len: u32, offset: i64) -> abi::Request {
    abi::Request {
        op,
        endpoint,
        len,
        flags: 0,
        staging_off,
        offset,
    }
}

fn open(builder: &MailboxBuilder, endpoints: Vec<Endpoint>, slots: u32) -> Channel {
    let config = ChannelConfig {
        endpoints,
        slots,
        slot_size: 4096,
        user_staging: 0,
        ..Default::default()
    };
    Channel::open(Arc::new(HostMemory), builder, config).expect("mailbox channel opens")
}

#[test]
fn pwrite_pread_and_nop_go_through_a_port_to_the_file() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &MailboxBuilder::new(),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        8,
    );
    let dev = FakeDevice::new(&ch);
    assert_eq!(dev.desc.mailbox.port_count, 8);
    assert_eq!(dev.call(3, req(abi::op::NOP, 77, 0, 0, 0)), 0);
    dev.put_staging(dev.chunk(5), b"hello mailbox");
    assert_eq!(
        dev.call(5, req(abi::op::PWRITE, 0, dev.chunk(5), 13, 100)),
        13
    );
    let mut on_disk = [0u8; 13];
    file.read_exact_at(&mut on_disk, 100).unwrap();
    assert_eq!(&on_disk, b"hello mailbox");
    assert_eq!(dev.call(2, req(abi::op::PREAD, 0, dev.chunk(2), 5, 106)), 5);
    assert_eq!(dev.get_staging(dev.chunk(2), 5), b"mailb");
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 3);
    assert_eq!(report.counters.completed, 3);
    assert_eq!(report.counters.failed, 0);
}

#[test]
fn ports_are_answered_in_any_order_with_or_without_a_watch() {
    // An idle server watches the port after the last it answered (port 0 at
    // first), for a while far longer than the test with the last builder: requests
    // that come elsewhere are answered once the watch ends.
    for watch in [
        Duration::ZERO,
        gpuio_core::transport::DEFAULT_WATCH,
        Duration::from_millis(20),
    ] {
        let file = tempfile::tempfile().unwrap();
        let ch = open(
            &MailboxBuilder::new().server_threads(1).watch(watch),
            vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
            8,
        );
        let dev = FakeDevice::new(&ch);
        assert_eq!(dev.call(5, req(abi::op::NOP, 0, 0, 0, 0)), 0, "{watch:?}");
        dev.send(2, req(abi::op::NOP, 0, 0, 0, 0));
        dev.send(7, req(abi::op::NOP, 0, 0, 0, 0));
        dev.send(6, req(abi::op::NOP, 0, 0, 0, 0));
        for port in [2, 7, 6] {
            let answer = dev.wait(port, Duration::from_secs(10));
            assert_eq!(answer, Some(0), "port {port}, {watch:?}");
        }
        let report = ch.close();
        assert!(report.is_clean(), "{report}");
        assert_eq!(report.counters.completed, 4);
    }
}

#[test]
fn refused_requests_get_their_errno_and_make_no_syscall() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &MailboxBuilder::new(),
        vec![
            Endpoint::file("rw", &file, Access::READ_WRITE).unwrap(),
            Endpoint::file("ro", &file, Access::READ).unwrap(),
        ],
        4,
    );
    let dev = FakeDevice::new(&ch);
    let staging_len = dev.desc.staging_len;
    dev.put_staging(0, &[b'X'; 64]);
    let cases = [
        (req(0x4700_00ff, 0, 0, 8, 0), -libc::EINVAL, "unknown op"),
        (
            req(abi::op::PWRITE, 2, 0, 8, 0),
            -libc::EBADF,
            "unregistered",
        ),
        (req(abi::op::PWRITE, 1, 0, 8, 0), -libc::EBADF, "read-only"),
        (req(abi::op::PWRITE, 0, 0, 0, 0), -libc::EINVAL, "length 0"),
        (
            req(abi::op::PWRITE, 0, staging_len - 4, 8, 0),
            -libc::EFAULT,
            "past the staging area",
        ),
        (
            req(abi::op::PWRITE, 0, u64::MAX - 2, 8, 0),
            -libc::EFAULT,
            "offset overflows",
        ),
        (
            req(abi::op::PWRITE, 0, 0, (staging_len + 1) as u32, 0),
            -libc::EINVAL,
            "longer than staging",
        ),
        (
            req(abi::op::PWRITE, 0, 0, 8, -1),
            -libc::EINVAL,
            "negative offset",
        ),
    ];
    for (r, errno, what) in cases {
        assert_eq!(dev.call(1, r), i64::from(errno), "{what}");
    }
    assert_eq!(file.metadata().unwrap().len(), 0, "nothing was written");
    assert_eq!(
        dev.call(1, req(abi::op::PWRITE, 0, 0, 8, 0)),
        8,
        "still usable"
    );
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.failed, cases.len() as u64);
    assert_eq!(report.counters.completed, 1);
}

#[test]
fn stream_ops_use_the_fds_own_position() {
    let file = tempfile::tempfile().unwrap();
    let append = {
        let mut f = file.try_clone().unwrap();
        f.write_all(b"head:").unwrap();
        f
    };
    let ch = open(
        &MailboxBuilder::new(),
        vec![
            Endpoint::new("log", EndpointKind::Pipe, Access::READ_WRITE, {
                use std::os::fd::AsFd;
                append.as_fd()
            })
            .unwrap(),
        ],
        4,
    );
    let dev = FakeDevice::new(&ch);
    dev.put_staging(0, b"one,");
    dev.put_staging(4096, b"two");
    assert_eq!(dev.call(0, req(abi::op::WRITE, 0, 0, 4, -1)), 4);
    assert_eq!(dev.call(1, req(abi::op::WRITE, 0, 4096, 3, -1)), 3);
    let mut all = String::new();
    let mut r = file.try_clone().unwrap();
    std::io::Seek::rewind(&mut r).unwrap();
    r.read_to_string(&mut all).unwrap();
    assert_eq!(all, "head:one,two");
    assert!(ch.close().is_clean());
}

#[test]
fn rows_written_end_to_end_in_one_round_land_whole_beside_other_requests() {
    // Each "thread" writes its 48-byte row at port * 48, as a kernel's rows do, while
    // other ports hold NOPs and a read of a row already written: the server makes the
    // rows it takes in a round as one pwritev (runs) and answers everything.
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &MailboxBuilder::new().server_threads(1),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        64,
    );
    let dev = FakeDevice::new(&ch);
    let row = |r: u32| format!("{:<47}\n", format!("row {r:04} of a kernel's output"));
    for lap in 0..3u32 {
        let rows: Vec<u32> = (0..60).map(|k| (k * 37) % 60).collect();
        for &i in &rows {
            let r = lap * 60 + i;
            dev.put_staging(dev.chunk(i), row(r).as_bytes());
            let at = i64::from(r) * 48;
            dev.send(i, req(abi::op::PWRITE, 0, dev.chunk(i), 48, at));
        }
        dev.send(60, req(abi::op::NOP, 0, 0, 0, 0));
        if lap > 0 {
            let at = i64::from(lap - 1) * 60 * 48;
            dev.send(61, req(abi::op::PREAD, 0, dev.chunk(61), 48, at));
        }
        for &i in &rows {
            let wait = dev.wait(i, Duration::from_secs(10));
            assert_eq!(wait, Some(48), "row {}", lap * 60 + i);
        }
        assert_eq!(dev.wait(60, Duration::from_secs(10)), Some(0));
        if lap > 0 {
            assert_eq!(dev.wait(61, Duration::from_secs(10)), Some(48));
            let back = dev.get_staging(dev.chunk(61), 48);
            assert_eq!(back, row((lap - 1) * 60).as_bytes());
        }
    }
    let mut got = String::new();
    (&file).read_to_string(&mut got).unwrap();
    assert_eq!(got, (0..180).map(row).collect::<String>());
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 185);
    assert_eq!(report.counters.completed, 185);
}

#[test]
fn rows_read_back_end_to_end_each_get_their_own_and_those_past_the_end_read_0() {
    // Each "thread" reads its 48-byte row back at port * 48, as a kernel's rows do:
    // the server makes the rows it takes in a round as one preadv (runs). The file
    // ends half-way through row 59; the second lap reads past its end.
    let file = tempfile::tempfile().unwrap();
    let row = |r: u32| format!("{:<47}\n", format!("row {r:04} read back"));
    let text: String = (0..60).map(row).collect();
    file.write_all_at(&text.as_bytes()[..59 * 48 + 24], 0)
        .unwrap();
    let ch = open(
        &MailboxBuilder::new().server_threads(1),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        64,
    );
    let dev = FakeDevice::new(&ch);
    for lap in 0..2u32 {
        let ports: Vec<u32> = (0..60).map(|k| (k * 37) % 60).collect();
        for &i in &ports {
            dev.put_staging(dev.chunk(i), &[0xee; 48]);
            let at = i64::from(lap * 60 + i) * 48;
            dev.send(i, req(abi::op::PREAD, 0, dev.chunk(i), 48, at));
        }
        for &i in &ports {
            let r = lap * 60 + i;
            let got = dev.wait(i, Duration::from_secs(10));
            let back = dev.get_staging(dev.chunk(i), 48);
            match r {
                0..59 => {
                    assert_eq!(got, Some(48), "row {r}");
                    assert_eq!(back, row(r).as_bytes(), "row {r}");
                }
                59 => {
                    assert_eq!(got, Some(24), "the row the file ends in");
                    assert_eq!(&back[..24], &row(59).as_bytes()[..24]);
                    assert_eq!(&back[24..], &[0xee; 24], "nothing past the end");
                }
                _ => {
                    assert_eq!(got, Some(0), "row {r} lies past the end");
                    assert_eq!(back, [0xee; 48], "row {r}: nothing read");
                }
            }
        }
    }
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 120);
    assert_eq!(report.counters.completed, 120);
}

#[test]
fn several_server_threads_answer_every_port() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &MailboxBuilder::new().server_threads(3),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        16,
    );
    let dev = FakeDevice::new(&ch);
    for round in 0..20u8 {
        for i in 0..16u32 {
            dev.put_staging(dev.chunk(i), &[round; 16]);
            dev.send(
                i,
                req(abi::op::PWRITE, 0, dev.chunk(i), 16, i64::from(i) * 16),
            );
        }
        for i in 0..16u32 {
            assert_eq!(dev.wait(i, Duration::from_secs(10)), Some(16), "port {i}");
        }
    }
    let mut all = vec![0u8; 256];
    file.read_exact_at(&mut all, 0).unwrap();
    assert!(all.iter().all(|&b| b == 19));
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 320);
}

#[test]
fn a_quiet_channel_keeps_one_server_thread_and_a_busy_one_wakes_more() {
    let nop = || req(abi::op::NOP, 0, 0, 0, 0);
    // One request at a time on one port: a round answers a port once, so never more
    // than one request a round. (On ports taken in turn, a server slowed down - under
    // ThreadSanitizer in CI - found the next port filled while its round went on and
    // answered four in one round, waking a second thread.)
    let quiet = MailboxBuilder::new().server_threads(4);
    let ch = open(&quiet, Vec::new(), 64);
    let dev = FakeDevice::new(&ch);
    for _ in 0..200u32 {
        assert_eq!(dev.call(0, nop()), 0);
    }
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(
        quiet.peak_threads(),
        1,
        "a quiet channel woke a second thread"
    );

    // Every port kept busy by four device threads of 16 ports each.
    let busy = MailboxBuilder::new().server_threads(4);
    let ch = open(&busy, Vec::new(), 64);
    let dev = FakeDevice::new(&ch);
    // Joined explicitly: a scoped thread's handle dropped while the thread runs is
    // a race ThreadSanitizer reports inside std (.ci/tsan).
    std::thread::scope(|s| {
        let devices: Vec<_> = (0..4u32)
            .map(|t| {
                let dev = &dev;
                s.spawn(move || {
                    for _ in 0..300 {
                        for i in 16 * t..16 * t + 16 {
                            dev.send(i, nop());
                        }
                        for i in 16 * t..16 * t + 16 {
                            assert_eq!(dev.wait(i, Duration::from_secs(10)), Some(0), "port {i}");
                        }
                    }
                })
            })
            .collect();
        for d in devices {
            d.join().unwrap();
        }
    });
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 4 * 300 * 16);
    assert_eq!(report.counters.completed, 4 * 300 * 16);
    assert!(
        busy.peak_threads() > 1,
        "a busy channel was served by one thread only"
    );
}

#[test]
fn port_count_is_capped_by_the_slots_and_by_max_ports() {
    let b = MailboxBuilder::new();
    assert_eq!(b.port_count(64), 64);
    assert_eq!(b.port_count(1024), 256);
    assert_eq!(b.clone().max_ports(5).port_count(64), 5);
    let ch = open(&b.max_ports(5), Vec::new(), 64);
    assert_eq!(FakeDevice::new(&ch).desc.mailbox.port_count, 5);
}

#[test]
fn zero_ports_or_zero_server_threads_is_a_configuration_error() {
    for b in [
        MailboxBuilder::new().max_ports(0),
        MailboxBuilder::new().server_threads(0),
    ] {
        let config = ChannelConfig::default();
        let err = Channel::open(Arc::new(HostMemory), &b, config).unwrap_err();
        assert!(
            err.to_string().contains("invalid channel configuration"),
            "{err}"
        );
    }
}

#[test]
fn close_answers_requests_sent_during_its_grace_and_then_stops() {
    let file = tempfile::tempfile().unwrap();
    let mut ch = open(
        &MailboxBuilder::new().close_grace(Duration::from_millis(200)),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        4,
    );
    let dev = FakeDevice::new(&ch);
    dev.put_staging(0, b"late");
    let late = std::thread::scope(|s| {
        let sender = s.spawn(|| {
            // A device thread that passed the `closing` check just before it was set.
            std::thread::sleep(Duration::from_millis(20));
            dev.send(0, req(abi::op::PWRITE, 0, 0, 4, 0));
            dev.wait(0, Duration::from_secs(10))
        });
        let report = ch.close_within(Duration::from_secs(10));
        (report, sender.join().unwrap())
    });
    let (report, answer) = late;
    assert_eq!(answer, Some(4));
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.completed, 1);
    let mut on_disk = [0u8; 4];
    file.read_exact_at(&mut on_disk, 0).unwrap();
    assert_eq!(&on_disk, b"late");
}

/// A channel whose endpoint 0 is the read end of a pipe, and the write end.
fn pipe_channel() -> (Channel, std::io::PipeWriter) {
    let (rx, tx) = std::io::pipe().unwrap();
    let ch = open(
        &MailboxBuilder::new(),
        vec![Endpoint::new("pipe", EndpointKind::Pipe, Access::READ, {
            use std::os::fd::AsFd;
            rx.as_fd()
        })
        .unwrap()],
        4,
    );
    (ch, tx)
}

#[test]
fn a_read_that_would_block_waits_for_data_without_stopping_the_server() {
    let (ch, mut tx) = pipe_channel();
    let dev = FakeDevice::new(&ch);
    // Nobody writes to the pipe yet: the one server thread must not block in
    // read(2), so the NOP on another port is answered meanwhile.
    dev.send(0, req(abi::op::READ, 0, 0, 16, -1));
    assert_eq!(dev.call(1, req(abi::op::NOP, 0, 0, 0, 0)), 0);
    assert_eq!(ch.counters().submitted, 1, "only the NOP ran");
    tx.write_all(b"bytes").unwrap();
    assert_eq!(dev.wait(0, Duration::from_secs(10)), Some(5));
    assert_eq!(dev.get_staging(0, 5), b"bytes");
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 2, "{report}");
}

#[test]
fn close_reports_a_read_still_waiting_for_data_and_returns_by_its_deadline() {
    let (mut ch, _tx) = pipe_channel();
    let dev = FakeDevice::new(&ch);
    dev.send(0, req(abi::op::READ, 0, 0, 16, -1));
    let report = ch.close_within(Duration::from_millis(200));
    assert!(!report.is_clean(), "{report}");
    assert!(report.elapsed < Duration::from_secs(2), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("port 0") && p.contains("never answered")),
        "{report}"
    );
    assert!(
        !report.problems.iter().any(|p| p.contains("detached")),
        "no server thread is left inside read(2): {report}"
    );
}

#[test]
fn a_channel_says_how_many_server_threads_it_may_wake() {
    let ch = open(
        &MailboxBuilder::default().server_threads(3),
        Vec::new(),
        256,
    );
    assert_eq!(
        ch.transport_shape(),
        "up to 3 server threads, woken by load"
    );
    assert!(ch.close().is_clean());
}

/// Unless told otherwise, a mailbox channel may wake 4 server threads (few threads
/// scanning the ports for small calls), or on a channel of slots of 1 MiB or more a
/// server thread per 64 request slots, 4 to 16: the default channel (256 slots) 4, a
/// bulk channel of 1024 slots of 1 MiB 16; `server_threads` overrides it.
#[test]
fn server_threads_are_4_or_for_long_slots_follow_the_slots_from_4_to_16() {
    let long = 1 << 20;
    for (slots, slot_size, threads) in [
        (8, 4096, 4),
        (256, 64 << 10, 4),
        (1024, 64 << 10, 4),
        (4096, 4096, 4),
        (8, long, 4),
        (256, long, 4),
        (512, long, 8),
        (1024, long, 16),
        (4096, 4 * long, 16),
    ] {
        assert_eq!(
            MailboxBuilder::default_threads(slots, slot_size),
            threads,
            "{slots} slots of {slot_size} B"
        );
    }
}
