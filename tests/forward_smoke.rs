//! The forward transport end to end: conformance kernels on the CPU device, host
//! memory, a real io_uring and real files in a tempdir.

use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

mod probe_support;
use gpuio_core::forward::ForwardBuilder;
use gpuio_core::memory::{HostMemory, MemoryProvider};
use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, EndpointKind};
use gpuio_device::cpu::CpuDevice;
use gpuio_device::kernels::{self, pattern_byte, writes_of, REGION};

const JOIN: Duration = Duration::from_secs(120);

fn provider() -> Arc<dyn MemoryProvider> {
    Arc::new(HostMemory)
}

/// A channel on `file` (endpoint 0, read-write) and, read-only, endpoint 1.
fn channel(file: &std::fs::File, call_timeout: Duration) -> Channel {
    let mut config = ChannelConfig {
        call_timeout,
        ..ChannelConfig::default()
    };
    config.endpoint(Endpoint::file("data", file, Access::READ_WRITE).unwrap());
    config.endpoint(Endpoint::file("data-ro", file, Access::READ).unwrap());
    Channel::open(provider(), &ForwardBuilder::default(), config).expect("open forward channel")
}

fn kernel(name: &str) -> gpuio_device::cpu::CpuKernel {
    gpuio_device::link();
    kernels::cpu(name).unwrap_or_else(|| panic!("no CPU kernel {name}"))
}

/// A buffer laid out like the file (byte `o` at index `o`) with the pattern written
/// wherever `threads × count` conformance writes land; zero elsewhere.
fn pattern_source(threads: u64, count: u64) -> Vec<u8> {
    let mut src = vec![0u8; (threads * REGION) as usize];
    for t in 0..threads {
        for (off, len) in writes_of(t, count) {
            for o in off..off + u64::from(len) {
                src[o as usize] = pattern_byte(o);
            }
        }
    }
    src
}

fn assert_file_has_pattern(file: &std::fs::File, threads: u64, count: u64) {
    for t in 0..threads {
        let (start, _) = writes_of(t, count)[0];
        let (last, last_len) = *writes_of(t, count).last().unwrap();
        let mut got = vec![0u8; (last + u64::from(last_len) - start) as usize];
        file.read_exact_at(&mut got, start).unwrap();
        if let Some(i) = (0..got.len()).find(|&i| got[i] != pattern_byte(start + i as u64)) {
            panic!(
                "thread {t}: file byte {} is {:#x}, expected {:#x}",
                start + i as u64,
                got[i],
                pattern_byte(start + i as u64)
            );
        }
    }
}

fn assert_clean_close(ch: Channel) {
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    let c = report.counters;
    assert_eq!(c.submitted, c.completed + c.failed, "{report}");
}

#[test]
fn nop_from_many_threads_completes_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create_new(dir.path().join("nop")).unwrap();
    let ch = channel(&file, Duration::from_secs(10));
    let p = CpuDevice
        .launch(kernel("nop"), 2, 8, &ch, &[200, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[1], 0, "{} NOPs failed, first with {}", p[1], p[2] as i64);
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, 16 * 200);
    assert_eq!(report.counters.completed, 16 * 200);
}

/// A new, empty file `name` in `dir`, open for reading and writing.
fn new_file(dir: &tempfile::TempDir, name: &str) -> std::fs::File {
    std::fs::File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.path().join(name))
        .unwrap()
}

/// The `grid × block` threads write their conformance pattern (`writes` pwrites
/// each) through `ch` into `file` (endpoint 0), then read it all back: every call
/// answered, every byte written and read, the file and the bytes read back exact.
fn write_then_read_back_pattern(
    ch: &Channel,
    file: &std::fs::File,
    grid: u32,
    block: u32,
    writes: u64,
    what: &str,
) {
    let threads = u64::from(grid) * u64::from(block);
    let src = pattern_source(threads, writes);
    let expected_bytes: u64 = (0..threads)
        .flat_map(|t| writes_of(t, writes))
        .map(|(_, n)| u64::from(n))
        .sum();
    let p = CpuDevice
        .launch(
            kernel("pwrite_pattern"),
            grid,
            block,
            ch,
            &[0, src.as_ptr() as u64, writes, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(
        p[3], 0,
        "{what}: {} writes failed, first with {}",
        p[3], p[4] as i64
    );
    assert_eq!(p[5], expected_bytes, "{what}: bytes written");
    assert_file_has_pattern(file, threads, writes);

    let mut dst = vec![0u8; (threads * REGION) as usize];
    let p = CpuDevice
        .launch(
            kernel("pread_pattern"),
            grid,
            block,
            ch,
            &[0, dst.as_mut_ptr() as u64, writes, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(
        p[3], 0,
        "{what}: {} reads failed, first with {}",
        p[3], p[4] as i64
    );
    assert_eq!(p[5], expected_bytes, "{what}: bytes read");
    for t in 0..threads {
        for (off, len) in writes_of(t, writes) {
            let r = off as usize..(off + u64::from(len)) as usize;
            assert!(
                dst[r.clone()] == src[r],
                "{what}: pread of {off}+{len} differs from the file"
            );
        }
    }
}

#[test]
fn pwrite_then_pread_pattern_from_16_threads_is_byte_exact_every_round() {
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let file = new_file(&dir, "pattern");
        let ch = channel(&file, Duration::from_secs(30));
        write_then_read_back_pattern(&ch, &file, 2, 8, 300, &format!("round {round}"));
        assert_clean_close(ch);
    }
}

#[test]
fn warps_on_every_ring_write_and_read_back_byte_exact_each_ring_served_by_its_own_thread() {
    // Four rings of 16 slots, four warps (a CPU-device warp is 32 threads): warp w
    // takes positions, slots and a forwarder of ring w only, so a ring whose
    // forwarder did not serve it would leave its warp's calls to time out.
    warps_on_four_rings_write_and_read_back(0, "4 rings");
}

#[test]
fn warps_on_every_ring_write_and_read_back_byte_exact_two_rings_to_a_forwarder_thread() {
    // The same four rings served by two forwarders, each passing over two rings'
    // entries with one io_uring.
    warps_on_four_rings_write_and_read_back(2, "4 rings, 2 forwarders");
}

fn warps_on_four_rings_write_and_read_back(forwarders: u32, what: &str) {
    const THREADS: u64 = 128;
    const WRITES: u64 = 20;
    let dir = tempfile::tempdir().unwrap();
    let file = new_file(&dir, "rings");
    let mut config = ChannelConfig {
        slots: 64,
        call_timeout: Duration::from_secs(30),
        ..ChannelConfig::default()
    };
    config.endpoint(Endpoint::file("data", &file, Access::READ_WRITE).unwrap());
    let builder = ForwardBuilder {
        rings: 4,
        min_ring_slots: 16,
        forwarders,
        ..ForwardBuilder::default()
    };
    let ch = Channel::open(provider(), &builder, config).expect("open forward channel");
    write_then_read_back_pattern(&ch, &file, 4, 32, WRITES, what);
    let report = ch.close();
    assert!(report.is_clean(), "{what}: {report}");
    assert_eq!(
        report.counters.completed,
        2 * THREADS * WRITES,
        "{what}: every write and read answered once: {report}"
    );
}

#[test]
fn close_mid_flight_accounts_for_every_request_and_loses_no_acknowledged_write() {
    const THREADS: u64 = 8;
    const MAX_WRITES: u64 = 1024;
    const SIZE: u64 = 4096;
    const _: () = assert!(MAX_WRITES * SIZE <= REGION, "writes never wrap");
    let src: Vec<u8> = (0..THREADS * REGION).map(pattern_byte).collect();
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let file = new_file(&dir, "until-closed");
        let ch = channel(&file, Duration::from_secs(2));
        // [16 + t]: how many writes thread t saw succeed (its first ones).
        let mut params = vec![0u64; 16 + THREADS as usize];
        params[..4].copy_from_slice(&[0, src.as_ptr() as u64, MAX_WRITES, SIZE]);
        let launch = CpuDevice
            .launch(kernel("until_closed"), 1, THREADS as u32, &ch, &params)
            .unwrap();
        std::thread::sleep(Duration::from_millis(30 + 20 * round));
        let report = ch.close();
        let p = launch.join(JOIN).unwrap();
        let (ok, shutdown, other, timeouts) = (p[4], p[5], p[6], p[8]);
        eprintln!(
            "round {round}: {report}; kernel: {ok} ok, {shutdown} shut down, {timeouts} timed out"
        );
        let c = report.counters;
        assert_eq!(c.submitted, c.completed + c.failed, "{report}");
        assert!(report.problems.is_empty(), "{report}");
        assert_eq!(other, 0, "other failures, first {}", p[7] as i64);
        assert!(
            c.completed >= ok,
            "every acknowledged write was completed by the host"
        );
        // Thread t saw its first ok_t writes succeed and stopped at the next one:
        // all ok_t are in the file; the one after only if its waiter timed out
        // (it may have completed late), never if it was refused at shutdown.
        let mut acknowledged = 0;
        for t in 0..THREADS {
            let ok_t = p[16 + t as usize];
            acknowledged += ok_t;
            let mut buf = vec![0u8; SIZE as usize];
            let mut in_file = 0;
            for i in 0..MAX_WRITES {
                let off = t * REGION + i * SIZE;
                let n = file.read_at(&mut buf, off).unwrap();
                let whole = n == SIZE as usize
                    && (0..SIZE).all(|k| buf[k as usize] == pattern_byte(off + k));
                if !whole {
                    break;
                }
                in_file += 1;
            }
            assert!(
                in_file >= ok_t && in_file <= ok_t + timeouts,
                "round {round}, thread {t}: {in_file} writes in the file, {ok_t} acknowledged"
            );
        }
        assert_eq!(acknowledged, ok, "per-thread counts add up");
    }
}

#[test]
fn printf_lines_from_many_threads_arrive_whole_and_in_order_per_thread() {
    const THREADS: usize = 16;
    const LINES: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stdout");
    let out = std::fs::File::options()
        .append(true)
        .create_new(true)
        .open(&path)
        .unwrap();
    let mut config = ChannelConfig::default();
    config.stdout(
        Endpoint::new(
            "stdout",
            gpuio_core::EndpointKind::Pipe,
            Access::WRITE,
            std::os::fd::AsFd::as_fd(&out),
        )
        .unwrap(),
    );
    let ch = Channel::open(provider(), &ForwardBuilder::default(), config).unwrap();
    let p = CpuDevice
        .launch(kernel("printf_lines"), 2, 8, &ch, &[LINES as u64, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(
        p[1], 0,
        "{} printf calls failed, first {}",
        p[1], p[2] as i64
    );
    assert_clean_close(ch);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'), "the last line is whole");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), THREADS * LINES, "every line arrived, once");
    // Whole lines: each is one write(2) on an O_APPEND file.
    for line in &lines {
        assert!(
            line.starts_with("t=") && line.ends_with('%'),
            "torn: {line:?}"
        );
        assert_eq!(line.matches("t=").count(), 1, "interleaved: {line:?}");
    }
    // Per-thread order.
    let mut next = [0usize; THREADS];
    for line in &lines {
        let mut f = line.split(' ');
        let mut num = |key: &str| -> usize {
            f.next()
                .and_then(|s| s.strip_prefix(key)?.parse().ok())
                .unwrap_or_else(|| panic!("no {key}<number> in {line:?}"))
        };
        let (t, i) = (num("t="), num("i="));
        assert_eq!(i, next[t], "thread {t}: line {i} out of order: {line:?}");
        next[t] += 1;
    }
    assert_eq!(next, [LINES; THREADS]);
}

#[test]
fn a_timed_out_wait_is_abandoned_and_its_entry_reclaimed_after_the_late_completion() {
    // A pipe declared a file (Endpoint::new: Endpoint::file would register it as the
    // pipe it is): io_uring ignores the offset, and once the pipe is full the next
    // write stays in the ring until we read.
    let (mut rx, tx) = std::io::pipe().unwrap();
    let tx = std::fs::File::from(std::os::fd::OwnedFd::from(tx));
    let mut config = ChannelConfig {
        slots: 8,
        call_timeout: Duration::from_millis(200),
        ..ChannelConfig::default()
    };
    config.endpoint(Endpoint::new("pipe", EndpointKind::File, Access::WRITE, tx.as_fd()).unwrap());
    let ch = Channel::open(provider(), &ForwardBuilder::default(), config).unwrap();
    const SIZE: u64 = 4096;
    const MAX_WRITES: u64 = 1024; // far more than a pipe holds
    let src: Vec<u8> = (0..REGION).map(pattern_byte).collect();
    let p = CpuDevice
        .launch(
            kernel("until_closed"),
            1,
            1,
            &ch,
            &[
                0,
                src.as_ptr() as u64,
                MAX_WRITES,
                SIZE,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            ],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    // Writes succeed while the pipe has room; the next one times out.
    let fits = p[4];
    assert_eq!(p[16], fits, "thread 0's own count");
    assert!(fits > 0 && fits < MAX_WRITES, "{fits} writes fit");
    assert_eq!(
        p[8], 1,
        "the write that does not fit times out and the thread stops"
    );
    assert_eq!(p[6], 0, "no other failure, first {}", p[7] as i64);
    // The abandoned write is still in flight; reading lets it complete.
    let mut got = vec![0u8; ((fits + 1) * SIZE) as usize];
    std::io::Read::read_exact(&mut rx, &mut got).unwrap();
    let want: Vec<u8> = (0..(fits + 1) * SIZE).map(pattern_byte).collect();
    assert!(
        got == want,
        "the pipe carries every write, the late one included"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ch.counters().completed < fits + 1 {
        assert!(std::time::Instant::now() < deadline, "{:?}", ch.counters());
        std::thread::sleep(Duration::from_millis(1));
    }
    // More requests than slots: one of them lands on the abandoned entry and must
    // take it over, or it would wait forever.
    let p = CpuDevice
        .launch(kernel("nop"), 1, 4, &ch, &[20, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[1], 0, "{} NOPs failed, first {}", p[1], p[2] as i64);
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.submitted, fits + 1 + 80);
    assert_eq!(report.counters.completed, fits + 1 + 80);
}

#[test]
fn with_deadlines_shorter_than_the_io_timeouts_never_corrupt_data_or_lose_count() {
    // Waits this short time out all the time: entries are abandoned and reclaimed
    // while their writes may still be in the ring. A staging chunk reused too early
    // would put another offset's bytes in the file.
    const THREADS: u64 = 16;
    const WRITES: u64 = 200;
    let src = pattern_source(THREADS, WRITES);
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let file = new_file(&dir, "short-deadlines");
        let mut config = ChannelConfig {
            slots: 16,
            call_timeout: Duration::from_micros(50),
            ..ChannelConfig::default()
        };
        config.endpoint(Endpoint::file("data", &file, Access::READ_WRITE).unwrap());
        let ch = Channel::open(provider(), &ForwardBuilder::default(), config).unwrap();
        let p = CpuDevice
            .launch(
                kernel("pwrite_pattern"),
                2,
                8,
                &ch,
                &[0, src.as_ptr() as u64, WRITES, 0, 0, 0],
            )
            .unwrap()
            .join(JOIN)
            .unwrap();
        let failed = p[3];
        let report = ch.close();
        eprintln!("round {round}: {failed} device calls failed; {report}");
        assert!(report.is_clean(), "{report}");
        for t in 0..THREADS {
            let (start, _) = writes_of(t, WRITES)[0];
            let (last, last_len) = *writes_of(t, WRITES).last().unwrap();
            let mut got = vec![0u8; (last + u64::from(last_len) - start) as usize];
            let n = file.read_at(&mut got, start).unwrap();
            if let Some(i) =
                (0..n).find(|&i| got[i] != 0 && got[i] != pattern_byte(start + i as u64))
            {
                panic!(
                    "round {round}: file byte {} is {:#x}: another request's bytes",
                    start + i as u64,
                    got[i]
                );
            }
        }
    }
}

#[test]
fn a_read_of_an_empty_pipe_does_not_stall_the_other_threads_writes() {
    // 8 slots, so the read's slot comes round again and again.
    let Some((p, report)) =
        probe_support::stuck_read_beside_busy_writers(&ForwardBuilder::default(), 8)
    else {
        return;
    };
    assert_eq!(
        p[0] as i64,
        -i64::from(libc::ETIMEDOUT),
        "the read gives up"
    );
    assert_eq!(
        p[1],
        16 * 20,
        "every write went through beside the stuck read"
    );
    assert!(
        report.is_clean(),
        "the read is cancelled at close: {report}"
    );
    assert_eq!(report.counters.failed, 1, "{report}");
    assert_eq!(report.timed_out, 1, "{report}");
}

#[test]
fn scribbled_forward_stamps_are_ignored_reported_and_never_wedge_the_channel() {
    // Thread 1 reads a pipe (its request stays in flight until the host writes);
    // thread 0 scribbles stamps meanwhile (`gpuio_k_hostile_stamps`): on the read's
    // own entry READY for the entry's next lap (a position it does not hold, the
    // read still unanswered), on the next entry READY for a position that entry
    // cannot hold, on the one after READY for a NOP a thousand laps ahead, and on
    // the next DONE for a wrong position. Then ordinary writes from 16 threads pass
    // over every entry again and again.
    let dir = tempfile::tempdir().unwrap();
    let file = new_file(&dir, "pattern");
    let (reader, writer) = std::io::pipe().unwrap();
    let mut config = ChannelConfig {
        slots: 8,
        call_timeout: Duration::from_secs(3),
        ..ChannelConfig::default()
    };
    config.endpoint(Endpoint::file("data", &file, Access::READ_WRITE).unwrap());
    let pipe = config.endpoint(
        Endpoint::new(
            "pipe",
            gpuio_core::EndpointKind::Pipe,
            Access::READ,
            std::os::fd::AsFd::as_fd(&reader),
        )
        .unwrap(),
    );
    let ch = Channel::open(provider(), &ForwardBuilder::default(), config).unwrap();
    let running = CpuDevice
        .launch(
            kernel("hostile_stamps"),
            2,
            1,
            &ch,
            &[u64::from(pipe), 0, 0],
        )
        .unwrap();
    gpuio::conformance::wait_for_the_scribbles(&ch);
    // The kernel still runs (its read waits for the pipe): the host has said so
    // already, without waiting for close.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let seen = loop {
        if let Some(v) = ch.violation() {
            break v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no violation seen while the kernel runs"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(
        seen.starts_with("protocol violation") && seen.contains("forward entry"),
        "{seen}"
    );
    // Enough for two reads, so that a phantom second read cannot starve the first.
    std::io::Write::write_all(&mut &writer, &[7u8; 16]).unwrap();
    let p = running.join(JOIN).unwrap();
    assert_ne!(p[2] as i64, -1, "the scribbler found the read in flight");
    assert_eq!(p[1], 8, "the read answered despite the stamp on its entry");

    const THREADS: u64 = 16;
    const WRITES: u64 = 40;
    let src = pattern_source(THREADS, WRITES);
    let p = CpuDevice
        .launch(
            kernel("pwrite_pattern"),
            2,
            8,
            &ch,
            &[0, src.as_ptr() as u64, WRITES, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(
        p[3], 0,
        "every ordinary write goes through after the scribbles: {} failed, first with {}",
        p[3], p[4] as i64
    );
    assert_file_has_pattern(&file, THREADS, WRITES);
    assert_eq!(
        ch.violation(),
        Some(seen),
        "the first violation stays the one reported"
    );
    let report = ch.close();
    eprintln!("{report}");
    assert!(!report.is_clean(), "{report}");
    assert!(
        report.elapsed < Duration::from_secs(3),
        "close within its bound: {report}"
    );
    let violations: Vec<&String> = report
        .problems
        .iter()
        .filter(|p| p.starts_with("protocol violation"))
        .collect();
    assert!(
        violations.iter().any(|p| p.contains("still unanswered")),
        "the READY on an entry whose request was in flight: {report}"
    );
    assert!(
        violations.iter().any(|p| p.contains("cannot hold")),
        "the READY for a position the entry cannot hold: {report}"
    );
    assert!(
        violations.iter().any(|p| p.contains("after a later one")),
        "the ordinary request that came after the position a thousand laps ahead: {report}"
    );
    drop(writer);
}
