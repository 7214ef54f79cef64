//! Host-side tests of the forwarder: Rust plays the device (the same stamps the
//! header writes) against a real io_uring and real files and pipes.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::abi::{self, op, stamp};
use crate::memory::{HostMemory, MemoryProvider};
use crate::{Access, Channel, ChannelConfig, Endpoint, EndpointKind, KeepAlive};

use super::queue::{stamp_of, Entry, Words};
use super::{ForwardBuilder, DEFAULT_WATCH};

/// Plays the device on a channel opened with HostMemory (host == device addresses).
/// Holds the channel's memory alive, like a launched kernel.
struct FakeDevice {
    _keep: KeepAlive,
    entries: *mut u8,
    staging: *mut u8,
    staging_len: usize,
    slots: u64,
}

impl FakeDevice {
    fn new(ch: &Channel) -> Self {
        // SAFETY: HostMemory: the descriptor's device address is its host address,
        // and the channel keeps it alive and unchanged while `ch` is borrowed.
        let desc = unsafe { &*(ch.device_ptr() as *const abi::Channel) };
        Self {
            _keep: ch.keepalive(),
            entries: desc.forward.entries as *mut u8,
            staging: ch.staging().host_ptr.as_ptr(),
            staging_len: desc.staging_len as usize,
            slots: u64::from(desc.slots),
        }
    }

    fn entry(&self, pos: u64) -> Entry<'_> {
        let len = self.slots as usize * std::mem::size_of::<abi::ForwardEntry>();
        // SAFETY: 1. the forward builder allocated `slots` entries there (64-aligned),
        // and `_keep` holds that memory alive while `self` is borrowed; 2. the
        // forwarder and this fake device touch the entries only through atomics.
        let words = unsafe { Words::over(self.entries, len) };
        Entry::nth(words, (pos % self.slots) as usize)
    }

    fn is_free_for(&self, pos: u64) -> bool {
        self.entry(pos).stamp() == stamp_of(pos, stamp::FREE)
    }

    fn publish(&self, pos: u64, req: abi::Request) {
        assert!(self.is_free_for(pos), "entry for {pos} is not free");
        self.entry(pos).publish(pos, &req);
    }

    fn done(&self, pos: u64) -> Option<i64> {
        self.entry(pos).answered(pos).map(i64::from)
    }

    fn wait(&self, pos: u64) -> i64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(r) = self.done(pos) {
                return r;
            }
            assert!(Instant::now() < deadline, "position {pos} never answered");
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn release(&self, pos: u64) {
        self.entry(pos)
            .set_stamp(stamp_of(pos + self.slots, stamp::FREE));
    }

    /// Publish, wait, release.
    fn run(&self, pos: u64, req: abi::Request) -> i64 {
        self.publish(pos, req);
        let r = self.wait(pos);
        self.release(pos);
        r
    }

    fn staging_write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.staging_len);
        // SAFETY: inside the staging area, which no request in flight uses now.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.staging.add(off), bytes.len()) }
    }

    fn staging_read(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.staging_len);
        let mut v = vec![0; len];
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(self.staging.add(off), v.as_mut_ptr(), len) }
        v
    }
}

fn req(op: u32, endpoint: u32, len: u32, staging_off: u64, offset: i64) -> abi::Request {
    abi::Request {
        op,
        endpoint,
        len,
        flags: 0,
        staging_off,
        offset,
    }
}

fn open(builder: &ForwardBuilder, endpoints: Vec<Endpoint>) -> Channel {
    let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
    let config = ChannelConfig {
        endpoints,
        slots: 4,
        slot_size: 4096,
        user_staging: 4096,
        close_timeout: Duration::from_secs(5),
        ..ChannelConfig::default()
    };
    Channel::open(provider, builder, config).expect("open a forward channel")
}

#[test]
fn pwrite_and_pread_move_staging_bytes_and_positions_wrap_around_the_queue() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &ForwardBuilder::default(),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
    );
    let dev = FakeDevice::new(&ch);
    dev.staging_write(0, b"hello forward");
    assert_eq!(dev.run(0, req(op::PWRITE, 0, 13, 0, 100)), 13);
    let mut buf = [0u8; 13];
    file.read_exact_at(&mut buf, 100).unwrap();
    assert_eq!(&buf, b"hello forward");
    assert_eq!(dev.run(1, req(op::PREAD, 0, 13, 4096, 100)), 13);
    assert_eq!(dev.staging_read(4096, 13), b"hello forward");
    // Three times round a 4-entry queue.
    for pos in 2..14 {
        assert_eq!(dev.run(pos, req(op::NOP, 0, 0, 0, 0)), 0, "nop at {pos}");
    }
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 14);
    assert_eq!(report.counters.completed, 14);
}

#[test]
fn a_ready_request_is_taken_only_once_every_word_is_there_and_its_answer_clears_them() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &ForwardBuilder::default(),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
    );
    let dev = FakeDevice::new(&ch);
    dev.staging_write(0, b"late");
    // READY with one word still on its way: a NOP's words cross PCIe in any order
    // around its READY. (A write here, so that a request taken too early would show
    // in the file; the host's rule is the same for every op.)
    let r = req(op::PWRITE, 0, 4, 0, 7);
    let e = dev.entry(0);
    e.set_request(&r);
    let late = e.word_for_tests(6);
    late.store(0, std::sync::atomic::Ordering::Relaxed);
    e.set_stamp(stamp_of(0, stamp::READY));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(dev.done(0), None, "taken with a word missing");
    assert_eq!(
        file.metadata().unwrap().len(),
        0,
        "written with a word missing"
    );
    late.store(
        abi::forward_words::encode(&r)[6],
        std::sync::atomic::Ordering::Relaxed,
    );
    assert_eq!(dev.wait(0), 4);
    assert_eq!(e.request(), None, "the answer left the words zeroed");
    let mut buf = [0u8; 4];
    file.read_exact_at(&mut buf, 7).unwrap();
    assert_eq!(&buf, b"late");
}

#[test]
fn refused_requests_get_their_errno_and_no_syscall() {
    let file = tempfile::tempfile().unwrap();
    file.write_all_at(b"untouched", 0).unwrap();
    let ch = open(
        &ForwardBuilder::default(),
        vec![
            Endpoint::file("rw", &file, Access::READ_WRITE).unwrap(),
            Endpoint::file("ro", &file, Access::READ).unwrap(),
        ],
    );
    let dev = FakeDevice::new(&ch);
    let len = dev.staging_len as u64;
    let cases = [
        (
            req(op::PWRITE, 7, 8, 0, 0),
            -libc::EBADF,
            "unregistered endpoint",
        ),
        (
            req(op::PWRITE, 1, 8, 0, 0),
            -libc::EBADF,
            "read-only endpoint",
        ),
        (
            req(op::PWRITE, 0, 64, len + 4096, 0),
            -libc::EFAULT,
            "outside staging",
        ),
        (
            req(op::PWRITE, 0, 64, len - 8, 0),
            -libc::EFAULT,
            "runs past staging",
        ),
        (
            req(op::PWRITE, 0, (len + 1) as u32, 0, 0),
            -libc::EINVAL,
            "longer than staging",
        ),
        (req(op::PWRITE, 0, 0, 0, 0), -libc::EINVAL, "length 0"),
        (
            req(op::PWRITE, 0, 8, 0, -5),
            -libc::EINVAL,
            "negative offset",
        ),
        (req(op::BASE | 99, 0, 8, 0, 0), -libc::EINVAL, "unknown op"),
    ];
    for (pos, (r, errno, what)) in cases.iter().enumerate() {
        assert_eq!(dev.run(pos as u64, *r), i64::from(*errno), "{what}");
    }
    let mut buf = Vec::new();
    let mut f = &file;
    std::io::Seek::rewind(&mut f).unwrap();
    f.read_to_end(&mut buf).unwrap();
    assert_eq!(buf, b"untouched", "refused requests wrote nothing");
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, cases.len() as u64);
    assert_eq!(report.counters.failed, cases.len() as u64);
}

#[test]
fn pwrites_published_together_end_to_end_land_whole_and_each_is_answered_its_length() {
    // Through the ring alone: each run a WRITEV.
    rows_published_together_land_whole(ForwardBuilder {
        rings: 1,
        inline_writes: 0,
        ..ForwardBuilder::default()
    });
}

#[test]
fn small_runs_of_pwrites_are_written_by_the_forwarder_itself_whole_and_each_answered_its_length() {
    // The default: a pass's rows (3 KiB) are written by the forwarder thread.
    rows_published_together_land_whole(ForwardBuilder {
        rings: 1,
        ..ForwardBuilder::default()
    });
}

#[test]
fn runs_past_the_forwarders_own_allowance_go_through_the_ring_and_land_whole() {
    // Runs of up to two rows (96 B) are written here, at most 400 B a pass; longer
    // runs, and the rest of a pass, go to the ring.
    rows_published_together_land_whole(ForwardBuilder {
        rings: 1,
        inline_writes: 100,
        ..ForwardBuilder::default()
    });
}

#[test]
fn forwarders_whose_workers_share_a_hash_map_two_by_two_land_one_files_rows_whole() {
    // Four rings, their forwarders' io-wqs sharing a hash map in pairs (io_wq.rs),
    // every run through the rings.
    rows_published_together_land_whole(ForwardBuilder {
        rings: 4,
        min_ring_slots: 0,
        inline_writes: 0,
        wq_share: 2,
        ..ForwardBuilder::default()
    });
}

#[test]
fn two_forwarders_serving_two_rings_each_land_one_files_rows_whole() {
    // Four rings served by two forwarders, their io-wqs sharing nothing (a pair of
    // rings is one forwarder's own), every run through the rings.
    rows_published_together_land_whole(ForwardBuilder {
        rings: 4,
        forwarders: 2,
        min_ring_slots: 0,
        inline_writes: 0,
        wq_share: 2,
        ..ForwardBuilder::default()
    });
}

#[test]
fn one_forwarder_serving_four_rings_reads_each_row_back() {
    rows_read_back(ForwardBuilder {
        rings: 4,
        forwarders: 1,
        min_ring_slots: 0,
        ..ForwardBuilder::default()
    });
}

#[test]
fn a_thread_enters_an_io_wq_anchor_by_registering_and_unregistering_it() {
    let anchor = Arc::new(super::io_wq::Anchor::new().expect("an io_uring of two entries"));
    // Fresh threads, as forwarders are: their first io_uring call, two at once.
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let anchor = anchor.clone();
            std::thread::spawn(move || anchor.enter())
        })
        .collect();
    for t in threads {
        t.join()
            .expect("the thread")
            .expect("register and unregister the anchor");
    }
}

#[test]
fn wq_share_comes_from_a_count_up_to_64_and_anything_else_keeps_the_default() {
    use super::{wq_share_from, DEFAULT_WQ_SHARE};
    assert_eq!(wq_share_from(None), DEFAULT_WQ_SHARE);
    assert_eq!(wq_share_from(Some("0")), 0, "0: each forwarder its own");
    assert_eq!(wq_share_from(Some(" 16 ")), 16);
    assert_eq!(wq_share_from(Some("64")), 64);
    for bad in ["", "65", "-1", "all"] {
        assert_eq!(wq_share_from(Some(bad)), DEFAULT_WQ_SHARE, "{bad:?}");
    }
}

/// A channel of 64 slots of 4 KiB on `file` (endpoint 0), for rows a test's
/// "threads" write or read together.
fn open_rows(builder: &ForwardBuilder, file: &std::fs::File) -> Channel {
    let config = ChannelConfig {
        endpoints: vec![Endpoint::file("f", file, Access::READ_WRITE).unwrap()],
        slots: 64,
        slot_size: 4096,
        close_timeout: Duration::from_secs(5),
        ..ChannelConfig::default()
    };
    Channel::open(Arc::new(HostMemory), builder, config).expect("open")
}

/// Each "thread" writes its 48-byte row at pos * 48, as a kernel's rows do: the
/// forwarder may make the rows it takes in one pass as one vectored write
/// (runs.rs), from its ring or itself.
fn rows_published_together_land_whole(builder: ForwardBuilder) {
    let file = tempfile::tempfile().unwrap();
    let ch = open_rows(&builder, &file);
    let dev = FakeDevice::new(&ch);
    let row = |pos: u64| format!("{:<47}\n", format!("row {pos:04} of a kernel's output"));
    assert_eq!(row(7).len(), 48);
    for lap in 0..3u64 {
        // Published out of order, and with every entry of the ring at once; in the
        // last lap with gaps, so that runs of several lengths are taken together.
        let positions: Vec<u64> = (0..64)
            .map(|k| lap * 64 + (k * 37) % 64)
            .filter(|pos| lap < 2 || pos % 5 != 0)
            .collect();
        for &pos in &positions {
            let chunk = (pos % 64) * 4096;
            dev.staging_write(chunk as usize, row(pos).as_bytes());
            dev.publish(pos, req(op::PWRITE, 0, 48, chunk, pos as i64 * 48));
        }
        for &pos in &positions {
            assert_eq!(dev.wait(pos), 48, "row {pos}");
            dev.release(pos);
        }
    }
    let mut got = String::new();
    let mut f = &file;
    std::io::Seek::rewind(&mut f).unwrap();
    f.read_to_string(&mut got).unwrap();
    let blank = "\0".repeat(48);
    let want: String = (0..192)
        .map(|pos| {
            if pos >= 128 && pos % 5 == 0 {
                blank.clone()
            } else {
                row(pos)
            }
        })
        .collect();
    assert_eq!(got, want);
    let written = 128 + (128..192).filter(|pos| pos % 5 != 0).count() as u64;
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, written);
    assert_eq!(report.counters.completed, written);
}

#[test]
fn inline_writes_come_from_a_byte_count_and_anything_else_keeps_the_default() {
    use super::{inline_writes_from, DEFAULT_INLINE_WRITES, MOST_INLINE_WRITES};
    assert_eq!(inline_writes_from(None), DEFAULT_INLINE_WRITES);
    assert_eq!(
        inline_writes_from(Some("0")),
        0,
        "0: every pwrite through the ring"
    );
    assert_eq!(inline_writes_from(Some(" 4096 ")), 4096);
    let most = MOST_INLINE_WRITES.to_string();
    assert_eq!(inline_writes_from(Some(&most)), MOST_INLINE_WRITES);
    for bad in ["", "64k", "-1", "1048577", "lots"] {
        assert_eq!(
            inline_writes_from(Some(bad)),
            DEFAULT_INLINE_WRITES,
            "{bad:?}"
        );
    }
}

#[test]
fn inline_reads_come_from_any_byte_count_and_anything_else_keeps_the_default() {
    use super::{inline_reads_from, DEFAULT_INLINE_READS};
    assert_eq!(inline_reads_from(None), DEFAULT_INLINE_READS);
    assert_eq!(
        inline_reads_from(Some("0")),
        0,
        "0: every long read to a worker"
    );
    assert_eq!(inline_reads_from(Some(" 262144 ")), 262_144);
    let all = usize::MAX.to_string();
    assert_eq!(inline_reads_from(Some(&all)), usize::MAX, "every read here");
    for bad in ["", "-1", "64k", "x"] {
        assert_eq!(
            inline_reads_from(Some(bad)),
            DEFAULT_INLINE_READS,
            "{bad:?}"
        );
    }
}

#[test]
fn preads_published_together_each_get_their_own_row_and_those_past_the_end_read_0() {
    // The default: runs of these rows (at most 3 KiB) are read by the forwarder.
    rows_read_back(ForwardBuilder {
        rings: 1,
        ..ForwardBuilder::default()
    });
}

#[test]
fn preads_handed_to_io_wq_workers_each_get_their_own_row_and_those_past_the_end_read_0() {
    // Every run and lone read of the file goes to a worker (IOSQE_ASYNC).
    rows_read_back(ForwardBuilder {
        rings: 1,
        inline_reads: 0,
        ..ForwardBuilder::default()
    });
}

/// Each "thread" reads back its 48-byte row at pos * 48, as a kernel's rows do:
/// the forwarder may make the rows it takes in one pass as one READV (runs.rs).
/// The file ends half-way through row 63.
fn rows_read_back(builder: ForwardBuilder) {
    let file = tempfile::tempfile().unwrap();
    let row = |pos: u64| format!("{:<47}\n", format!("row {pos:04} read back"));
    let text: String = (0..64).map(row).collect();
    file.write_all_at(&text.as_bytes()[..63 * 48 + 24], 0)
        .unwrap();
    let ch = open_rows(&builder, &file);
    let dev = FakeDevice::new(&ch);
    for lap in 0..2u64 {
        // Published out of order, every entry of the ring at once; the second lap
        // reads rows 64..128, all past the end.
        let positions: Vec<u64> = (0..64).map(|k| lap * 64 + (k * 37) % 64).collect();
        for &pos in &positions {
            let chunk = (pos % 64) * 4096;
            dev.staging_write(chunk as usize, &[0xee; 48]);
            dev.publish(pos, req(op::PREAD, 0, 48, chunk, pos as i64 * 48));
        }
        for &pos in &positions {
            let got = dev.wait(pos);
            let chunk = dev.staging_read(((pos % 64) * 4096) as usize, 48);
            match pos {
                0..63 => {
                    assert_eq!(got, 48, "row {pos}");
                    assert_eq!(chunk, row(pos).as_bytes(), "row {pos}");
                }
                63 => {
                    assert_eq!(got, 24, "the row the file ends in");
                    assert_eq!(&chunk[..24], &row(63).as_bytes()[..24]);
                    assert_eq!(&chunk[24..], &[0xee; 24], "nothing past the end");
                }
                _ => {
                    assert_eq!(got, 0, "row {pos} lies past the end");
                    assert_eq!(chunk, [0xee; 48], "row {pos}: nothing read");
                }
            }
            dev.release(pos);
        }
    }
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 128);
    assert_eq!(report.counters.completed, 128);
}

#[test]
fn entries_are_taken_in_any_order() {
    // Without a watch, with the default one, and with one far longer than the
    // test: an idle forwarder watches the entry after the last it took, and a
    // request that comes elsewhere is taken once the watch ends.
    for watch in [Duration::ZERO, DEFAULT_WATCH, Duration::from_millis(20)] {
        let file = tempfile::tempfile().unwrap();
        let ch = open(
            &ForwardBuilder {
                watch,
                ..ForwardBuilder::default()
            },
            vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
        );
        let dev = FakeDevice::new(&ch);
        // Position 0 never comes (its caller gave up, say): 1 is served anyway,
        // and so are 3 and 2, published the wrong way round.
        assert_eq!(dev.run(1, req(op::NOP, 0, 0, 0, 0)), 0, "{watch:?}");
        assert_eq!(dev.done(0), None);
        dev.publish(3, req(op::NOP, 0, 0, 0, 0));
        dev.publish(2, req(op::NOP, 0, 0, 0, 0));
        assert_eq!(dev.wait(3), 0, "{watch:?}");
        assert_eq!(dev.wait(2), 0, "{watch:?}");
        assert!(ch.close().is_clean());
    }
}

#[test]
fn watch_comes_from_nanoseconds_up_to_100_us_and_anything_else_keeps_the_default() {
    use super::{watch_from, MOST_WATCH};
    assert_eq!(watch_from(None), DEFAULT_WATCH);
    assert_eq!(watch_from(Some("0")), Duration::ZERO, "0: no watch");
    assert_eq!(watch_from(Some(" 1500 ")), Duration::from_nanos(1500));
    let most = MOST_WATCH.as_nanos().to_string();
    assert_eq!(watch_from(Some(&most)), MOST_WATCH);
    for bad in ["", "2us", "-1", "100001", "lots"] {
        assert_eq!(watch_from(Some(bad)), DEFAULT_WATCH, "{bad:?}");
    }
}

#[test]
fn a_read_that_never_completes_does_not_hold_back_later_requests() {
    let (rx, tx) = rustix::pipe::pipe().unwrap();
    let file = tempfile::tempfile().unwrap();
    let mut ch = open(
        &ForwardBuilder::default(),
        vec![
            Endpoint::new("pipe", EndpointKind::Pipe, Access::READ, rx.as_fd()).unwrap(),
            Endpoint::file("f", &file, Access::READ_WRITE).unwrap(),
        ],
    );
    let dev = FakeDevice::new(&ch);
    dev.publish(0, req(op::READ, 0, 16, 0, -1));
    // Positions on the read's slot pass over it, as the device's turn owners do.
    let others = (1..60u64).filter(|p| p % dev.slots != 0).take(39);
    for pos in others.clone() {
        let off = (pos % dev.slots) as usize * 4096;
        dev.staging_write(off, &[pos as u8; 8]);
        let written = dev.run(pos, req(op::PWRITE, 1, 8, off as u64, pos as i64 * 8));
        assert_eq!(written, 8, "write at position {pos}");
    }
    assert_eq!(dev.done(0), None, "the read still waits for data");
    for pos in others {
        let mut got = [0u8; 8];
        file.read_exact_at(&mut got, pos * 8).unwrap();
        assert_eq!(got, [pos as u8; 8], "bytes of position {pos}");
    }
    let report = ch.close_within(Duration::from_secs(2));
    assert_eq!(
        dev.done(0),
        Some(i64::from(-libc::ECANCELED)),
        "close cancels the read instead of leaving it in the ring"
    );
    assert_eq!(report.counters.completed, 39);
    assert_eq!(report.counters.failed, 1);
    assert!(report.is_clean(), "{report}");
    drop(tx);
}

#[test]
fn a_ready_stamp_for_a_position_the_entry_cannot_hold_is_a_protocol_violation() {
    let file = tempfile::tempfile().unwrap();
    let ch = open(
        &ForwardBuilder::default(),
        vec![Endpoint::file("f", &file, Access::READ_WRITE).unwrap()],
    );
    let dev = FakeDevice::new(&ch);
    dev.staging_write(0, b"scribble");
    // Entry 0 can hold positions 0, slots, 2·slots, ...; 5 is not one of them.
    let e = dev.entry(0);
    e.set_request(&req(op::PWRITE, 0, 8, 0, 0));
    e.set_stamp(stamp_of(5, stamp::READY));
    // Reported while the channel is open, not only at close.
    let deadline = Instant::now() + Duration::from_secs(10);
    let first = loop {
        if let Some(v) = ch.violation() {
            break v;
        }
        assert!(Instant::now() < deadline, "no violation seen before close");
        std::thread::sleep(Duration::from_micros(100));
    };
    assert!(
        first.starts_with("protocol violation")
            && first.contains("entry 0 ")
            && first.contains("position 5")
            && first.contains("cannot hold"),
        "{first}"
    );
    // A replay: position 1 again after it was answered.
    assert_eq!(dev.run(1, req(op::NOP, 0, 0, 0, 0)), 0);
    let e1 = dev.entry(1);
    e1.set_stamp(stamp_of(1, stamp::READY));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(dev.done(5), None, "not executed");
    let report = ch.close();
    assert!(!report.is_clean(), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("protocol violation") && p.contains("2 forward entries")),
        "{report}"
    );
    assert_eq!(report.counters.submitted, 1, "{report}");
    assert_eq!(file.metadata().unwrap().len(), 0, "nothing was written");
}

#[test]
fn stream_writes_to_a_pipe_arrive_whole_and_in_order() {
    let (rx, tx) = rustix::pipe::pipe().unwrap();
    let ch = open(
        &ForwardBuilder::default(),
        vec![Endpoint::new("pipe", EndpointKind::Pipe, Access::WRITE, tx.as_fd()).unwrap()],
    );
    drop(tx);
    let dev = FakeDevice::new(&ch);
    dev.staging_write(0, b"one\n");
    dev.staging_write(4096, b"two\n");
    assert_eq!(dev.run(0, req(op::WRITE, 0, 4, 0, -1)), 4);
    assert_eq!(dev.run(1, req(op::WRITE, 0, 4, 4096, -1)), 4);
    assert_eq!(
        dev.run(2, req(op::PWRITE, 0, 4, 0, 0)),
        i64::from(-libc::ESPIPE),
        "a pipe has no positions"
    );
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    let mut out = String::new();
    let mut rx = std::fs::File::from(rx);
    rx.read_to_string(&mut out).unwrap();
    assert_eq!(out, "one\ntwo\n");
}

#[test]
fn close_at_the_deadline_refuses_what_never_started_and_reports_what_is_stuck() {
    // A one-entry ring holding a read on an empty pipe: nothing else can start.
    let (rx, tx) = rustix::pipe::pipe().unwrap();
    let file = tempfile::tempfile().unwrap();
    let builder = ForwardBuilder {
        ring_entries: 1,
        ..ForwardBuilder::default()
    };
    let mut ch = open(
        &builder,
        vec![
            Endpoint::new("pipe", EndpointKind::Pipe, Access::READ, rx.as_fd()).unwrap(),
            Endpoint::file("f", &file, Access::READ_WRITE).unwrap(),
        ],
    );
    let dev = FakeDevice::new(&ch);
    dev.publish(0, req(op::READ, 0, 16, 0, -1));
    // The read must be in the ring before the write is published: the forwarder
    // scans entries from a rotating start, so it could otherwise take the write first.
    let deadline = Instant::now() + Duration::from_secs(10);
    while ch.counters().submitted == 0 {
        assert!(Instant::now() < deadline, "the read was never taken");
        std::thread::sleep(Duration::from_micros(100));
    }
    dev.staging_write(4096, b"never");
    dev.publish(1, req(op::PWRITE, 1, 5, 4096, 0));
    std::thread::sleep(Duration::from_millis(20));
    // A deadline shorter than the quiet period after which close cancels ops.
    let report = ch.close_within(builder.quiet / 2);
    assert_eq!(dev.done(0), None, "the stuck read stays unanswered");
    assert_eq!(
        dev.done(1),
        Some(i64::from(-libc::ESHUTDOWN)),
        "the queued write is refused"
    );
    assert_eq!(report.counters.submitted, 2);
    assert_eq!(report.counters.failed, 1);
    assert_eq!(report.counters.unfinished(), 1);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("still in the io_uring")),
        "{report}"
    );
    assert!(
        report.problems.iter().any(|p| p.contains("-ESHUTDOWN")),
        "{report}"
    );
    assert_eq!(
        file.metadata().unwrap().len(),
        0,
        "the refused write wrote nothing"
    );
    drop(tx);
}

/// A ring (and a forwarder thread) per 64 slots, up to 4 (few threads poll the
/// queue), or up to 16 on a channel of slots of 1 MiB or more (long writes of many
/// files want many threads' io-wq workers).
#[test]
fn rings_follow_the_slots_one_per_64_up_to_4_or_16_for_long_slots() {
    let builder = ForwardBuilder {
        rings: 0, // not GPUIO_FORWARD_RINGS
        ..ForwardBuilder::default()
    };
    let cases = [
        (64, 4096, 1),
        (128, 4096, 2),
        (256, 4096, 4),
        (1024, 4096, 4),
        (4096, 4096, 4),
        (256, 1 << 20, 4),
        (1024, 1 << 20, 16),
    ];
    for (slots, slot_size, rings) in cases {
        let (queue, shape) = opened_queue(&builder, slots, slot_size);
        assert_eq!(queue.rings, rings, "{slots} slots of {slot_size} B");
        assert!(shape.starts_with(&format!("{rings} ring")), "{shape}");
    }
}

/// Forwarders serve runs of consecutive rings: as many as asked, rounded down to a
/// power of two, at most one per ring; the device's rings and groups stay as they
/// are, and the channel's shape says how they are served.
#[test]
fn forwarders_serve_runs_of_rings_and_the_shape_says_how_many() {
    let cases = [
        // (forwarders asked, rings, the shape's words)
        (0, 16, "16 rings, each its own forwarder thread"),
        (4, 16, "16 rings, 4 forwarder threads (4 rings each)"),
        (3, 16, "16 rings, 2 forwarder threads (8 rings each)"),
        (1, 16, "16 rings, 1 forwarder thread (16 rings each)"),
        (64, 16, "16 rings, each its own forwarder thread"),
        (2, 4, "4 rings, 2 forwarder threads (2 rings each)"),
    ];
    for (forwarders, rings, words) in cases {
        let builder = ForwardBuilder {
            rings,
            forwarders,
            min_ring_slots: 64,
            ..ForwardBuilder::default()
        };
        let (queue, shape) = opened_queue(&builder, 1024, 4096);
        assert_eq!(queue.rings, rings, "{forwarders} forwarders asked");
        assert!(
            shape.starts_with(words),
            "{forwarders} forwarders asked: {shape}"
        );
        assert_eq!(queue.write_group, if rings > 4 { 4 } else { 0 }, "{shape}");
    }
}

/// What a forward channel of `slots` slots of `slot_size` bytes opened by `builder`
/// told the device of its queue, and its shape in words; closed cleanly.
fn opened_queue(
    builder: &ForwardBuilder,
    slots: u32,
    slot_size: u32,
) -> (abi::ForwardQueue, String) {
    let config = ChannelConfig {
        slots,
        slot_size,
        close_timeout: Duration::from_secs(5),
        ..ChannelConfig::default()
    };
    let ch = Channel::open(Arc::new(HostMemory), builder, config).expect("open");
    // SAFETY: HostMemory: the descriptor's device address is its host address,
    // alive and unchanged while `ch` is.
    let queue = unsafe { (*(ch.device_ptr() as *const abi::Channel)).forward };
    let shape = ch.transport_shape();
    assert!(ch.close().is_clean());
    (queue, shape)
}

/// A file's long writes go to one group of `wq_share` rings where a channel has
/// several such groups (by default a channel of 1024 slots of 1 MiB: 16 rings in
/// groups of 4); one group, groups that do not divide the rings, or routing turned
/// off: none.
#[test]
fn long_writes_are_routed_to_groups_of_rings_only_where_there_are_several() {
    let cases = [
        // (slots, slot size, wq_share, route_writes, rings, write_group)
        (256, 4096, 4, true, 4, 0),
        (1024, 1 << 20, 4, true, 16, 4),
        (1024, 1 << 20, 8, true, 16, 8),
        (1024, 1 << 20, 16, true, 16, 0),
        (1024, 1 << 20, 1, true, 16, 0),
        (1024, 1 << 20, 3, true, 16, 0),
        (1024, 1 << 20, 4, false, 16, 0),
    ];
    for (slots, slot_size, wq_share, route_writes, rings, group) in cases {
        let builder = ForwardBuilder {
            rings: 0,
            wq_share,
            route_writes,
            ..ForwardBuilder::default()
        };
        let (queue, shape) = opened_queue(&builder, slots, slot_size);
        let what = format!("{slots} slots of {slot_size} B, wq_share {wq_share}, {route_writes}");
        assert_eq!(queue.rings, rings, "{what}");
        assert_eq!(queue.write_group, group, "{what}");
        assert_eq!(shape.contains("long writes"), group > 0, "{what}: {shape}");
    }
}

#[test]
fn an_answer_carries_its_result_and_is_told_from_ready_stamps_and_other_positions() {
    let slots = 256u64;
    for pos in [0, 7, slots + 7, (1 << 30) + 3, u64::MAX >> 2] {
        for result in [
            0,
            1,
            64,
            i32::MAX,
            -libc::EAGAIN,
            -libc::ESHUTDOWN,
            i32::MIN,
        ] {
            let answer = stamp::answer(pos, result);
            assert_eq!(answer & 3, stamp::DONE);
            assert_eq!(stamp::answered(answer, pos), Some(result), "{pos} {result}");
            // The same entry's neighbours in time: its READY stamp, the lap before,
            // the lap after.
            assert_eq!(stamp::answered(stamp_of(pos, stamp::READY), pos), None);
            assert_eq!(stamp::answered(answer, pos.wrapping_add(slots)), None);
            assert_eq!(stamp::answered(answer, pos.wrapping_sub(slots)), None);
        }
    }
}
