//! `gpuio_printf` over a printf log on the CPU device: lines formatted by kernel
//! threads travel through a stream in shared memory and a host thread writes them
//! to a real pipe or file while the kernel runs.

mod probe_support;

use std::collections::HashMap;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpuio::backends::transport_builder as builder;
use gpuio_core::device::Module;
use gpuio_core::memory::HostMemory;
use gpuio_core::{
    Access, Channel, ChannelConfig, Endpoint, EndpointKind, LogConfig, TransportKind,
};

const KERNEL_DEADLINE: Duration = Duration::from_secs(120);
/// `print_lines`' endpoint parameter for `gpuio_printf` (the stdout endpoint).
const STDOUT: u64 = 1 << 40;

fn module() -> Option<Arc<dyn Module>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/printf_log.cu");
    let source = std::fs::read_to_string(&path).expect("the kernel source");
    probe_support::load_on_cpu("printf_log.cu", &source)
}

fn open(kind: TransportKind, config: ChannelConfig) -> Channel {
    Channel::open(Arc::new(HostMemory), builder(kind).as_ref(), config).expect("channel opens")
}

fn pipe_endpoint(name: &str, w: &std::io::PipeWriter) -> Endpoint {
    Endpoint::new(name, EndpointKind::Pipe, Access::WRITE, w.as_fd()).expect("register the pipe")
}

/// Line `i` of thread `t`, as `print_lines` prints it.
fn line(t: u64, i: u64) -> String {
    format!("t={t} i={i} {}\n", ".".repeat(((t + i) % 40) as usize))
}

/// Checks `text` holds whole lines of `print_lines`, each thread's in order from 0;
/// returns how many lines each thread has.
fn check_lines(text: &str) -> HashMap<u64, u64> {
    let mut next: HashMap<u64, u64> = HashMap::new();
    for l in text.split_inclusive('\n') {
        let parse = || -> Option<(u64, u64)> {
            let mut f = l.split(' ');
            let t = f.next()?.strip_prefix("t=")?.parse().ok()?;
            let i = f.next()?.strip_prefix("i=")?.parse().ok()?;
            Some((t, i))
        };
        let (t, i) = parse().unwrap_or_else(|| panic!("a torn or foreign line: {l:?}"));
        assert_eq!(l, line(t, i), "line {i} of thread {t} is torn");
        let want = next.entry(t).or_insert(0);
        assert_eq!(i, *want, "thread {t}'s lines out of order or lost");
        *want += 1;
    }
    next
}

/// 64 threads × 1,000 lines to a pipe whose reader is slow (it sleeps between
/// small reads), through a log small enough that printing threads must wait for
/// it: every line arrives whole and in its thread's order, and the reader sees the
/// first line while the kernel is still running.
fn slow_reader(kind: TransportKind) {
    let Some(m) = module() else { return };
    const THREADS: u64 = 64;
    const EACH: u64 = 1000;
    let (mut rx, tx) = std::io::pipe().unwrap();
    let mut cfg = ChannelConfig {
        call_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let out = cfg.stdout(pipe_endpoint("stdout pipe", &tx));
    cfg.log(
        out,
        LogConfig {
            capacity: 64,
            rings: 2,
            ..LogConfig::default()
        },
    );
    drop(tx); // the channel holds its own descriptor
    let ch = open(kind, cfg);
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut first = None;
        let mut buf = [0u8; 4096];
        loop {
            match rx.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    first.get_or_insert_with(Instant::now);
                    text.extend_from_slice(&buf[..n]);
                    std::thread::sleep(Duration::from_micros(300));
                }
                Err(e) => panic!("read the pipe: {e}"),
            }
        }
        (text, first)
    });
    let p = m
        .launch("print_lines", 2, 32, &ch, &[STDOUT, EACH, 0, 0, 0, 0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    let kernel_done = Instant::now();
    assert_eq!(
        (p[2], p[3], p[4]),
        (THREADS * EACH, 0, 0),
        "printf failed: first -errno {}",
        p[5]
    );
    let report = ch.close(); // closes the channel's end of the pipe
    let (text, first) = reader.join().unwrap();
    let text = String::from_utf8(text).expect("text");
    let counts = check_lines(&text);
    assert_eq!(counts.len(), THREADS as usize);
    assert!(counts.values().all(|&n| n == EACH), "lines lost");
    let first = first.expect("a line arrived");
    assert!(
        first < kernel_done,
        "the first line reached the reader only after the kernel ended"
    );
    assert!(report.is_clean(), "{report}");
    let log = &report.logs[0];
    assert_eq!((log.lines, log.lost), (THREADS * EACH, 0), "{report}");
    assert_eq!(log.bytes, text.len() as u64, "{report}");
}

/// A reader that never reads: once the pipe and the log are full, printing threads
/// get -ETIMEDOUT at their deadline (counted by the channel), nothing already in
/// the pipe is overwritten or torn, and `close()` gives up writing within its bound
/// and reports the lines it could not write instead of a clean close.
fn stopped_reader(kind: TransportKind) {
    let Some(m) = module() else { return };
    const THREADS: u64 = 4;
    // About 13 KB: more than the pipe (shrunk to a page) and the log (16 lines)
    // hold, so a few hundred calls wait out their deadline.
    const EACH: u64 = 100;
    let (mut rx, tx) = std::io::pipe().unwrap();
    // SAFETY: F_SETPIPE_SZ on a pipe descriptor this function owns; no memory is
    // passed.
    let size = unsafe { libc::fcntl(tx.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(
        size >= 4096,
        "F_SETPIPE_SZ: {}",
        std::io::Error::last_os_error()
    );
    let mut cfg = ChannelConfig {
        call_timeout: Duration::from_millis(50),
        close_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let out = cfg.stdout(pipe_endpoint("stdout pipe", &tx));
    cfg.log(
        out,
        LogConfig {
            capacity: 16,
            rings: 1,
            ..LogConfig::default()
        },
    );
    drop(tx);
    let ch = open(kind, cfg);
    let p = m
        .launch(
            "print_lines",
            1,
            THREADS as u32,
            &ch,
            &[STDOUT, EACH, 0, 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!(p[4], 0, "a failure other than -ETIMEDOUT: -errno {}", p[5]);
    assert!(p[3] > 0, "no printf timed out: {} printed", p[2]);
    assert_eq!(p[2] + p[3], THREADS * EACH);
    let report = ch.close();
    assert_eq!(report.timed_out, p[3], "{report}");
    assert!(
        !report.is_clean(),
        "lines were lost but close says clean: {report}"
    );
    let log = &report.logs[0];
    assert!(log.lost > 0, "{report}");
    assert_eq!(log.lines + log.lost, p[2], "{report}");
    assert!(report.elapsed < Duration::from_secs(5), "{report}");
    // What reached the pipe is whole lines, in each thread's order.
    let mut text = String::new();
    rx.read_to_string(&mut text).unwrap();
    assert_eq!(text.len() as u64, log.bytes, "{report}");
    let counts = check_lines(&text);
    assert_eq!(counts.values().sum::<u64>(), log.lines);
}

/// `gpuio_fprintf` to a file endpoint the host gave a log: every line written.
fn file_log(kind: TransportKind) {
    let Some(m) = module() else { return };
    const THREADS: u64 = 64;
    const EACH: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.txt");
    let file = std::fs::File::create(&path).unwrap();
    let mut cfg = ChannelConfig {
        call_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let ep = cfg.endpoint(Endpoint::file("log", &file, Access::WRITE).unwrap());
    cfg.log(ep, LogConfig::default());
    let ch = open(kind, cfg);
    let p = m
        .launch(
            "print_lines",
            2,
            32,
            &ch,
            &[u64::from(ep), EACH, 0, 0, 0, 0],
        )
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_eq!((p[2], p[4]), (THREADS * EACH, 0), "-errno {}", p[5]);
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(
        report.counters.submitted, 0,
        "lines went as requests: {report}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let counts = check_lines(&text);
    assert!(counts.len() == THREADS as usize && counts.values().all(|&n| n == EACH));
}

/// A kernel that writes over a log's ring (after one line): the host stops reading that ring and
/// `close()` reports a protocol violation, never a clean close.
fn scribbled_log(kind: TransportKind) {
    let Some(m) = module() else { return };
    let (_rx, tx) = std::io::pipe().unwrap();
    let mut cfg = ChannelConfig::default();
    let out = cfg.stdout(pipe_endpoint("stdout pipe", &tx));
    cfg.log(
        out,
        LogConfig {
            rings: 1,
            ..LogConfig::default()
        },
    );
    let ch = open(kind, cfg);
    let p = m
        .launch("scribble_log", 1, 1, &ch, &[0])
        .unwrap()
        .join(KERNEL_DEADLINE)
        .unwrap();
    assert_ne!(p[0], u64::MAX, "the stdout endpoint has no log");
    assert_eq!(p[0], 20, "the line before the scribble");
    let report = ch.close();
    assert!(!report.is_clean(), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("protocol violation")),
        "{report}"
    );
}

#[test]
fn a_log_only_goes_on_an_endpoint_the_kernel_may_write() {
    let (rx, _tx) = std::io::pipe().unwrap();
    let mut cfg = ChannelConfig::default();
    let ep =
        cfg.endpoint(Endpoint::new("input", EndpointKind::Pipe, Access::READ, rx.as_fd()).unwrap());
    cfg.log(ep, LogConfig::default());
    let err = Channel::open(
        Arc::new(HostMemory),
        builder(TransportKind::Mailbox).as_ref(),
        cfg,
    )
    .expect_err("a log on a read-only endpoint");
    assert!(err.to_string().contains("printf log"), "{err}");
}

macro_rules! on_every_transport {
    ($($name:ident: $kind:expr;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn printf_to_a_slow_pipe_reader_arrives_whole_in_each_threads_order_while_the_kernel_runs() {
                slow_reader($kind);
            }
            #[test]
            fn a_reader_that_stops_makes_printf_time_out_and_close_report_the_lost_lines() {
                stopped_reader($kind);
            }
            #[test]
            fn fprintf_to_a_file_with_a_log_writes_every_line_without_a_request() {
                file_log($kind);
            }
            #[test]
            fn a_kernel_scribbling_over_its_log_is_reported_as_a_protocol_violation() {
                scribbled_log($kind);
            }
        }
    )*};
}

on_every_transport! {
    direct: TransportKind::Direct;
    forward: TransportKind::Forward;
    mailbox: TransportKind::Mailbox;
}
