//! The mailbox transport end to end: conformance kernels compiled as host C++ run on
//! the CPU device (one OS thread per emulated GPU thread) against real files in a
//! temporary directory, served by the mailbox's host server with plain syscalls.

mod probe_support;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpuio_backend_rpc::mailbox::MailboxBuilder;
use gpuio_core::{Access, Channel, ChannelConfig, CloseReport, Endpoint, HostMemory};
use gpuio_device::cpu::{CpuDevice, CpuKernel};
use gpuio_device::kernels::{self, pattern_byte, writes_of, REGION};

const JOIN: Duration = Duration::from_secs(300);

fn kernel(name: &str) -> CpuKernel {
    gpuio_device::link();
    kernels::cpu(name).unwrap_or_else(|| panic!("conformance kernel {name} is built"))
}

/// A channel with the given endpoints (default slots and staging).
fn open(builder: &MailboxBuilder, endpoints: Vec<Endpoint>) -> Channel {
    let config = ChannelConfig {
        endpoints,
        ..Default::default()
    };
    Channel::open(Arc::new(HostMemory), builder, config).expect("mailbox channel opens")
}

fn file_in(dir: &tempfile::TempDir, name: &str) -> File {
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join(name))
        .unwrap()
}

/// Host bytes laid out like the file (byte `o` stands for file offset `o`), the
/// ranges `threads × writes` touches filled with the pattern. The rest stays
/// untouched (lazily mapped zero pages).
fn pattern_source(threads: u64, writes: u64) -> Vec<u8> {
    let mut src = vec![0u8; (threads * REGION) as usize];
    for t in 0..threads {
        for (off, len) in writes_of(t, writes) {
            for o in off..off + u64::from(len) {
                src[o as usize] = pattern_byte(o);
            }
        }
    }
    src
}

/// Every range of `threads × writes` holds the pattern in `file`.
fn assert_file_holds_pattern(file: &File, threads: u64, writes: u64) {
    for t in 0..threads {
        let w = writes_of(t, writes);
        let start = w[0].0;
        let (last_off, last_len) = *w.last().unwrap();
        let mut got = vec![0u8; (last_off + u64::from(last_len) - start) as usize];
        file.read_exact_at(&mut got, start)
            .unwrap_or_else(|e| panic!("thread {t}'s range is in the file: {e}"));
        if let Some(i) = (0..got.len()).find(|&i| got[i] != pattern_byte(start + i as u64)) {
            panic!(
                "thread {t}: byte at offset {} is {:#x}, expected {:#x}",
                start + i as u64,
                got[i],
                pattern_byte(start + i as u64)
            );
        }
    }
}

fn assert_clean(report: &CloseReport) {
    assert!(report.is_clean(), "{report}");
    let c = report.counters;
    assert_eq!(c.submitted, c.completed + c.failed, "{report}");
}

/// Runs `gpuio_k_pwrite_pattern` with `threads × writes` and checks the file.
fn pwrite_pattern(builder: &MailboxBuilder, threads: u32, writes: u64) {
    let dir = tempfile::tempdir().unwrap();
    let file = file_in(&dir, "pattern.bin");
    let ch = open(
        builder,
        vec![Endpoint::file("out", &file, Access::WRITE).unwrap()],
    );
    let src = pattern_source(u64::from(threads), writes);
    let params = [0, src.as_ptr() as u64, writes, 0, 0, 0];
    let p = CpuDevice
        .launch(kernel("pwrite_pattern"), 1, threads, &ch, &params)
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[3], 0, "failures (first: {})", p[4] as i64);
    let expected: u64 = (0..u64::from(threads))
        .flat_map(|t| writes_of(t, writes))
        .map(|(_, n)| u64::from(n))
        .sum();
    assert_eq!(p[5], expected, "bytes written");
    let report = ch.close();
    assert_clean(&report);
    assert_eq!(report.counters.failed, 0);
    assert_file_holds_pattern(&file, u64::from(threads), writes);
}

#[test]
fn nop_kernel_round_trips_every_call_through_the_server() {
    let ch = open(&MailboxBuilder::new(), Vec::new());
    let p = CpuDevice
        .launch(kernel("nop"), 2, 32, &ch, &[100, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[1], 0, "failures (first: {})", p[2] as i64);
    let report = ch.close();
    assert_clean(&report);
    assert_eq!(report.counters.submitted, 64 * 100);
    assert_eq!(report.counters.completed, 64 * 100);
}

#[test]
fn pwrite_pattern_from_64_threads_on_their_own_ports_is_byte_exact() {
    pwrite_pattern(&MailboxBuilder::new(), 64, 200);
}

#[test]
fn pwrite_pattern_with_32_threads_sharing_each_port_is_byte_exact_every_time() {
    // Two ports for 64 threads: every port's lock is fought over by 32 threads.
    for _ in 0..3 {
        pwrite_pattern(&MailboxBuilder::new().max_ports(2), 64, 200);
    }
}

#[test]
fn pwrite_pattern_with_ports_split_among_three_server_threads_is_byte_exact() {
    for _ in 0..2 {
        pwrite_pattern(
            &MailboxBuilder::new().max_ports(7).server_threads(3),
            64,
            200,
        );
    }
}

#[test]
fn pread_pattern_returns_the_files_bytes_to_every_thread() {
    let (threads, reads) = (64u64, 200u64);
    let dir = tempfile::tempdir().unwrap();
    let file = file_in(&dir, "pattern.bin");
    for t in 0..threads {
        for (off, len) in writes_of(t, reads) {
            let bytes: Vec<u8> = (off..off + u64::from(len)).map(pattern_byte).collect();
            file.write_all_at(&bytes, off).unwrap();
        }
    }
    let ch = open(
        &MailboxBuilder::new().max_ports(16),
        vec![Endpoint::file("in", &file, Access::READ).unwrap()],
    );
    let mut dst = vec![0u8; (threads * REGION) as usize];
    let params = [0, dst.as_mut_ptr() as u64, reads, 0, 0, 0];
    let p = CpuDevice
        .launch(kernel("pread_pattern"), 2, 32, &ch, &params)
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[3], 0, "failures (first: {})", p[4] as i64);
    let report = ch.close();
    assert_clean(&report);
    for t in 0..threads {
        for (off, len) in writes_of(t, reads) {
            for o in off..off + u64::from(len) {
                assert_eq!(dst[o as usize], pattern_byte(o), "thread {t}, offset {o}");
            }
        }
    }
}

#[test]
fn close_mid_flight_loses_nothing_the_kernel_saw_succeed() {
    for round in 0..3 {
        close_mid_flight(round);
    }
}

fn close_mid_flight(round: u32) {
    let (threads, size, max_writes) = (32u64, 256u64, 4096u64);
    let dir = tempfile::tempdir().unwrap();
    let file = file_in(&dir, "until_closed.bin");
    let mut ch = open(
        &MailboxBuilder::new().max_ports(8),
        vec![Endpoint::file("out", &file, Access::WRITE).unwrap()],
    );
    let mut src = vec![0u8; (threads * REGION) as usize];
    for t in 0..threads {
        for o in t * REGION..t * REGION + size * max_writes {
            src[o as usize] = pattern_byte(o);
        }
    }
    let params = [0, src.as_ptr() as u64, max_writes, size, 0, 0, 0, 0, 0];
    let launch = CpuDevice
        .launch(kernel("until_closed"), 1, threads as u32, &ch, &params)
        .unwrap();
    // Close once the kernel is well under way.
    let started = Instant::now();
    while ch.counters().completed < 500 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let report = ch.close_within(Duration::from_secs(10));
    let p = launch.join(JOIN).unwrap();
    let (ok, shutdown, other, timeouts) = (p[4], p[5], p[6], p[8]);
    eprintln!("round {round}: {report}; kernel: {ok} ok, {shutdown} threads saw -ESHUTDOWN, {timeouts} timed out");
    assert_clean(&report);
    assert_eq!(
        other, 0,
        "round {round}: other failures (first: {})",
        p[7] as i64
    );
    assert!(
        shutdown > 0,
        "round {round}: the kernel was still writing at close"
    );
    // A write the kernel gave up on (timeout) may still have been done; nothing else.
    let done = report.counters.completed;
    assert!(
        ok <= done && done <= ok + timeouts,
        "round {round}: kernel saw {ok} succeed ({timeouts} timed out), server did {done}"
    );
    // Per thread, its writes are consecutive chunks from the start of its region:
    // each chunk is all pattern (written) or all zero (not), never torn, and the
    // written ones come first.
    let mut in_file = 0;
    for t in 0..threads {
        let mut region = vec![0u8; (size * max_writes) as usize];
        let n = file.read_at(&mut region, t * REGION).unwrap_or(0);
        region.truncate(n);
        let mut written = 0;
        for (k, chunk) in region.chunks(size as usize).enumerate() {
            let base = t * REGION + k as u64 * size;
            let full = chunk.len() as u64 == size
                && chunk
                    .iter()
                    .enumerate()
                    .all(|(i, &b)| b == pattern_byte(base + i as u64));
            let empty = chunk.iter().all(|&b| b == 0);
            assert!(full || empty, "round {round}: thread {t} chunk {k} is torn");
            if full {
                assert_eq!(
                    written, k as u64,
                    "round {round}: thread {t} chunk {k} after a gap"
                );
                written += 1;
            }
        }
        in_file += written;
    }
    assert!(
        ok <= in_file && in_file <= ok + timeouts,
        "round {round}: kernel saw {ok} writes succeed, file holds {in_file}"
    );
}

#[test]
fn a_storm_of_timeouts_leaves_every_port_ready_for_the_next_caller() {
    // 1 ms per call with 32 threads queueing on each of 2 ports: calls give up,
    // waiting for their turn or waiting for the host (abandoned requests).
    let config = ChannelConfig {
        call_timeout: Duration::from_millis(1),
        ..Default::default()
    };
    let builder = MailboxBuilder::new().max_ports(2);
    let ch = Channel::open(Arc::new(HostMemory), &builder, config).unwrap();
    let calls = 64 * 200;
    let p = CpuDevice
        .launch(kernel("nop"), 2, 32, &ch, &[200, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    let failed = p[1];
    if failed > 0 {
        assert_eq!(p[2] as i64, -i64::from(libc::ETIMEDOUT), "the only failure");
    }
    eprintln!("{failed} of {calls} calls timed out");
    // White box (gpuio/mailbox.h): no port is left held; each is free or abandoned
    // (its late answer then lets the next caller take it over).
    // SAFETY: the descriptor lives in memory the channel keeps; the kernel has ended.
    let desc =
        unsafe { std::ptr::read_volatile(ch.device_ptr() as *const gpuio_core::abi::Channel) };
    let words = gpuio_backend_rpc::mailbox::LOCK_WORDS_PER_PORT;
    for port in 0..desc.mailbox.port_count as usize {
        let base = desc.mailbox.locks as *const gpuio_core::abi::Turn;
        // SAFETY: (port_count + 1) entries of LOCK_WORDS_PER_PORT device-local u32s,
        // each starting with a Turn (host memory on the CPU device); no thread
        // touches them any more.
        let turn = unsafe { std::ptr::read_volatile(base.cast::<u32>().add(port * words).cast()) };
        let gpuio_core::abi::Turn { word, .. } = turn;
        let state = gpuio_core::abi::turn_word::state(word);
        assert!(
            state == gpuio_core::abi::slot_state::FREE
                || state == gpuio_core::abi::slot_state::ABANDONED,
            "port {port} is not held: state {state}"
        );
    }
    let report = ch.close();
    assert_clean(&report);
    let ok = calls - failed;
    assert!(
        report.counters.completed >= ok && report.counters.completed <= calls,
        "{report}; kernel saw {ok} succeed"
    );
}

/// Marks the child process of `mailbox_needs_no_io_uring`.
const SECCOMP_CHILD: &str = "GPUIO_MAILBOX_TEST_SECCOMP_CHILD";

#[test]
fn mailbox_works_where_io_uring_is_forbidden_by_seccomp() {
    // In a child process (a seccomp filter cannot be taken back): forbid the three
    // io_uring syscalls, then run kernels over the mailbox there.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "seccomp_child_runs_kernels_with_io_uring_forbidden",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SECCOMP_CHILD, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran its test:\n{text}");
    assert!(text.contains("io_uring_setup refused with EPERM"), "{text}");
}

#[test]
#[ignore = "run by mailbox_works_where_io_uring_is_forbidden_by_seccomp in a child process"]
fn seccomp_child_runs_kernels_with_io_uring_forbidden() {
    if std::env::var_os(SECCOMP_CHILD).is_none() {
        eprintln!("skipped: runs only in the child process of its parent test");
        return;
    }
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter};
    let rules = [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ]
    .into_iter()
    .map(|nr| (nr, Vec::new()))
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap();
    let program: BpfProgram = filter.try_into().unwrap();
    seccompiler::apply_filter_all_threads(&program).unwrap();

    let mut params = [0u8; 120]; // struct io_uring_params
                                 // SAFETY: io_uring_setup(entries, params) with a zeroed params struct of the
                                 // kernel's size; the filter answers before the kernel reads it.
    let r = unsafe { libc::syscall(libc::SYS_io_uring_setup, 8u32, params.as_mut_ptr()) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!(
        (r, errno),
        (-1, Some(libc::EPERM)),
        "the filter is in force"
    );
    println!("io_uring_setup refused with EPERM");

    pwrite_pattern(&MailboxBuilder::new().max_ports(4), 16, 100);
    let ch = open(&MailboxBuilder::new(), Vec::new());
    let p = CpuDevice
        .launch(kernel("nop"), 1, 8, &ch, &[50, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[1], 0, "failures (first: {})", p[2] as i64);
    assert_clean(&ch.close());
}

#[test]
fn a_read_of_an_empty_pipe_does_not_stall_the_other_threads_writes() {
    // 8 ports, one server thread: the read's port comes round again and again.
    let Some((p, report)) =
        probe_support::stuck_read_beside_busy_writers(&MailboxBuilder::default(), 8)
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
        report.elapsed < Duration::from_secs(15),
        "close is bounded: {report}"
    );
    assert!(
        !report.problems.iter().any(|p| p.contains("detached")),
        "no server thread is left stuck in read(2): {report}"
    );
}
