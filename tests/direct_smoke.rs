//! The direct transport end to end on the CPU device: conformance kernels write
//! SQEs into a real confined SQPOLL ring, against real files in a tempdir.

mod probe_support;

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpuio_core::direct::DirectBuilder;
use gpuio_core::{
    Access, Channel, ChannelConfig, CloseReport, Endpoint, EndpointKind, HostMemory, MemoryProvider,
};
use gpuio_device::cpu::CpuDevice;
use gpuio_device::kernels::{self, pattern_byte, writes_of, BAD_INPUT_CASES};

const JOIN: Duration = Duration::from_secs(120);

/// `slots` slots of the default size and a small area of the kernel's own. The
/// staging area is pinned as the ring's fixed buffer, which counts against
/// RLIMIT_MEMLOCK for users without CAP_IPC_LOCK (8 MiB is a common default, shared
/// by every ring of the user): these tests stay far below it.
fn config(slots: u32) -> ChannelConfig {
    ChannelConfig {
        slots,
        user_staging: 64 << 10,
        ..Default::default()
    }
}

fn open(config: ChannelConfig) -> Channel {
    open_with(&DirectBuilder::default(), config)
}

fn open_with(builder: &DirectBuilder, config: ChannelConfig) -> Channel {
    gpuio_device::link();
    let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
    Channel::open(provider, builder, config).expect("open a direct channel")
}

fn kernel(name: &str) -> gpuio_device::cpu::CpuKernel {
    kernels::cpu(name).unwrap_or_else(|| panic!("no CPU kernel {name}"))
}

fn assert_clean(report: &CloseReport) {
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.timed_out, 0, "{report}");
}

/// A new, empty file `name`, open for reading and writing, in a temp dir of its own
/// (removed when the returned `TempDir` drops).
fn new_file(name: &str) -> (tempfile::TempDir, std::path::PathBuf, File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .unwrap();
    (dir, path, file)
}

#[test]
fn nop_kernel_completes_every_nop_and_close_balances_the_counts() {
    let ch = open(config(16));
    let p = CpuDevice
        .launch(kernel("nop"), 2, 8, &ch, &[100, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[1], 0, "{} NOPs failed, first with {}", p[1], p[2] as i64);
    let report = ch.close();
    assert_clean(&report);
    assert_eq!(report.counters.submitted, 1600, "{report}");
    assert_eq!(report.counters.completed, 1600, "{report}");
}

/// Runs `gpuio_k_pwrite_pattern` with `threads` threads of `writes` writes each,
/// checks every byte each thread wrote, then reads them back with
/// `gpuio_k_pread_pattern` and checks those too.
fn pwrite_pattern(threads: u32, writes: u64, slots: u32) {
    pwrite_pattern_with(&DirectBuilder::default(), threads, writes, slots);
}

fn pwrite_pattern_with(builder: &DirectBuilder, threads: u32, writes: u64, slots: u32) {
    let (_dir, path, file) = new_file("pattern.bin");
    let mut config = config(slots);
    let ep = config.endpoint(Endpoint::file("pattern", &file, Access::READ_WRITE).unwrap());
    let ch = open_with(builder, config);

    let plan: Vec<Vec<(u64, u32)>> = (0..u64::from(threads))
        .map(|t| writes_of(t, writes))
        .collect();
    let end = plan
        .iter()
        .flatten()
        .map(|&(o, n)| o + u64::from(n))
        .max()
        .unwrap_or(0);
    // Laid out like the file; only the written ranges are touched (and so paged in).
    let mut src = vec![0u8; end as usize];
    for &(o, n) in plan.iter().flatten() {
        for (i, b) in src[o as usize..(o + u64::from(n)) as usize]
            .iter_mut()
            .enumerate()
        {
            *b = pattern_byte(o + i as u64);
        }
    }
    let p = CpuDevice
        .launch(
            kernel("pwrite_pattern"),
            1,
            threads,
            &ch,
            &[u64::from(ep), src.as_ptr() as u64, writes, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    let expected_bytes: u64 = plan.iter().flatten().map(|&(_, n)| u64::from(n)).sum();
    assert_eq!(
        p[3], 0,
        "{} writes failed, first with {}",
        p[3], p[4] as i64
    );
    assert_eq!(p[5], expected_bytes);
    let check = |got: &[u8], what: &str| {
        for (t, w) in plan.iter().enumerate() {
            for &(o, n) in w {
                let range = o as usize..(o + u64::from(n)) as usize;
                assert!(
                    got[range.clone()] == src[range],
                    "{what}, thread {t}: bytes at {o}+{n} differ from the pattern"
                );
            }
        }
    };
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got.len() as u64, end);
    check(&got, "file");

    // Read the same ranges back through the channel.
    let mut dst = vec![0u8; end as usize];
    let p = CpuDevice
        .launch(
            kernel("pread_pattern"),
            1,
            threads,
            &ch,
            &[u64::from(ep), dst.as_mut_ptr() as u64, writes, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[3], 0, "{} reads failed, first with {}", p[3], p[4] as i64);
    assert_eq!(p[5], expected_bytes);
    check(&dst, "pread");

    let report = ch.close();
    assert_clean(&report);
    let slot_size = u64::from(ChannelConfig::default().slot_size);
    let requests: u64 = plan
        .iter()
        .flatten()
        .map(|&(_, n)| u64::from(n).div_ceil(slot_size))
        .sum();
    assert_eq!(report.counters.submitted, 2 * requests, "{report}");
    assert_eq!(report.counters.completed, 2 * requests, "{report}");
}

#[test]
fn pwrite_pattern_from_8_threads_lands_byte_exact_and_preads_back_the_same() {
    pwrite_pattern(8, 200, 16);
}

/// A slot's 64 KiB transfers are marked for the kernel's io-wq workers; whatever
/// the ring caps them at — one worker, or only the kernel's own limit — every byte
/// lands and reads back.
#[test]
fn large_transfers_land_byte_exact_on_one_io_worker_and_on_the_kernels_own_cap() {
    for workers in [1, 0] {
        pwrite_pattern_with(&DirectBuilder::default().io_workers(workers), 8, 250, 16);
    }
}

#[test]
fn pattern_from_64_threads_on_16_slots_lands_byte_exact_run_after_run() {
    // Four threads per slot: positions queue on every slot, publishers and reapers
    // hand over constantly.
    for _ in 0..3 {
        pwrite_pattern(64, 130, 16);
    }
}

#[test]
fn bad_input_gets_each_errno_writes_nothing_and_leaves_the_channel_usable() {
    let (_dir, path, file) = new_file("bad.bin");
    let read_only = File::open(&path).unwrap();
    let mut config = config(16);
    let ep = config.endpoint(Endpoint::file("rw", &file, Access::READ_WRITE).unwrap());
    let ro = config.endpoint(Endpoint::file("ro", &read_only, Access::READ).unwrap());
    let ch = open(config);
    let mut params = vec![0u64; 3 + BAD_INPUT_CASES.len()];
    params[0] = u64::from(ep);
    params[1] = u64::from(ro);
    params[2] = file.as_raw_fd() as u64;
    let p = CpuDevice
        .launch(kernel("bad_input"), 1, 1, &ch, &params)
        .unwrap()
        .join(JOIN)
        .unwrap();
    let got: Vec<i64> = p[3..].iter().map(|&v| v as i64).collect();
    let expect: [&[i32]; 11] = [
        &[libc::EBADF],
        &[libc::EFAULT],
        &[libc::EINVAL],
        &[libc::EINVAL],
        &[libc::EBADF],
        &[libc::EBADF],
        &[libc::EFAULT],
        &[libc::EINVAL, libc::EFAULT],
        &[libc::EACCES],
        &[libc::EACCES, libc::EINVAL],
        &[],
    ];
    for (i, (case, ok)) in BAD_INPUT_CASES.iter().zip(expect).enumerate() {
        if ok.is_empty() {
            assert_eq!(got[i], 5, "case {i} ({case})");
        } else {
            assert!(
                ok.iter().any(|&e| got[i] == -i64::from(e)),
                "case {i} ({case}): got {}, expected one of -{ok:?}",
                got[i]
            );
        }
    }
    let report = ch.close();
    assert_clean(&report);
    // Five raw requests reached the ring and were refused there; the good write ran.
    assert_eq!(report.counters.submitted, 6, "{report}");
    assert_eq!(report.counters.failed, 5, "{report}");
    assert_eq!(report.counters.completed, 1, "{report}");
    let mut expected = vec![0u8; 4096];
    expected.extend_from_slice(b"alive");
    assert_eq!(std::fs::read(&path).unwrap(), expected);
}

#[test]
fn close_while_writes_are_in_flight_drains_everything_accepted() {
    let (_dir, _, file) = new_file("closing.bin");
    let mut config = config(16);
    let ep = config.endpoint(Endpoint::file("out", &file, Access::READ_WRITE).unwrap());
    let mut ch = open(config);
    let threads = 32u32;
    let src = vec![0x5au8; threads as usize * kernels::REGION as usize];
    let launch = CpuDevice
        .launch(
            kernel("until_closed"),
            1,
            threads,
            &ch,
            &[
                u64::from(ep),
                src.as_ptr() as u64,
                1 << 20,
                4096,
                0,
                0,
                0,
                0,
                0,
            ],
        )
        .unwrap();
    // Wait until writes are flowing, then close under them.
    let start = Instant::now();
    while ch.counters().completed < 200 {
        assert!(start.elapsed() < JOIN, "no writes completed");
        std::thread::sleep(Duration::from_millis(1));
    }
    let bound = Duration::from_secs(10);
    let report = ch.close_within(bound);
    assert!(report.elapsed <= bound + Duration::from_secs(1), "{report}");
    let p = launch.join(JOIN).unwrap();
    assert_clean(&report);
    assert_eq!(
        p[6], 0,
        "{} writes failed, first with {}",
        p[6], p[7] as i64
    );
    assert_eq!(p[8], 0, "calls timed out");
    assert_eq!(p[5], u64::from(threads), "every thread saw -ESHUTDOWN");
    // Every write a thread saw succeed was counted; the rest are -ESHUTDOWN NOPs of
    // calls that arrived while closing.
    assert!(
        report.counters.completed >= p[4],
        "{report} vs {} writes",
        p[4]
    );
    drop(src);
}

/// A FIFO in `dir`, opened read-write (never blocks on open, never sees EOF).
fn fifo(dir: &std::path::Path) -> File {
    let path = dir.join("fifo");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    File::options().read(true).write(true).open(&path).unwrap()
}

#[test]
fn a_stuck_read_and_the_calls_queued_behind_it_time_out_and_the_channel_recovers_when_it_completes()
{
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut pipe = fifo(dir.path());
    // One slot: everything queues behind the first request. The FIFO is declared a
    // file so the header lets positioned reads through; the first one blocks.
    let mut config = ChannelConfig {
        call_timeout: Duration::from_millis(200),
        ..config(1)
    };
    let ep = config.endpoint(
        Endpoint::new("fifo", EndpointKind::File, Access::READ_WRITE, pipe.as_fd()).unwrap(),
    );
    let ch = open(config);
    let mut dst = vec![0u8; 1 << 20];
    let p = CpuDevice
        .launch(
            kernel("pread_pattern"),
            1,
            1,
            &ch,
            &[u64::from(ep), dst.as_mut_ptr() as u64, 3, 0, 0, 0],
        )
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[3], 3, "the read and the two queued behind it give up");
    assert_eq!(p[4] as i64, -i64::from(libc::ETIMEDOUT));
    assert_eq!(
        ch.counters().submitted,
        1,
        "only the first read reached the ring"
    );

    // The stuck read completes now; the next call reaps it and takes its slot over.
    pipe.write_all(&[7u8; 64]).unwrap();
    let p = CpuDevice
        .launch(kernel("nop"), 1, 1, &ch, &[2, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(
        p[1], 0,
        "NOPs after recovery failed, first with {}",
        p[2] as i64
    );
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.timed_out, 3, "{report}");
    // The read and two NOPs: the calls that gave up waiting for the slot submitted
    // nothing.
    assert_eq!(report.counters.submitted, 3, "{report}");
    assert_eq!(report.counters.completed, 3, "{report}");
    drop(dst);
}

#[test]
fn a_socket_declared_with_less_than_its_own_access_is_refused_at_open_with_the_reason() {
    gpuio_device::link();
    use gpuio_core::EndpointKind;
    use std::os::fd::AsFd;
    let (sock, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
    let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
    // A socket cannot be reopened read-only, and io_uring would let a kernel's raw
    // WRITE_FIXED through a read-write one: direct refuses rather than register it.
    let mut cfg = config(16);
    cfg.endpoint(Endpoint::new("peer", EndpointKind::Socket, Access::READ, sock.as_fd()).unwrap());
    let e = Channel::open(provider.clone(), &DirectBuilder::default(), cfg)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"peer\"") && e.contains("a socket") && e.contains("read-only"),
        "{e}"
    );
    // Declared with the socket's own access, it opens.
    let mut cfg = config(16);
    cfg.endpoint(
        Endpoint::new(
            "peer",
            EndpointKind::Socket,
            Access::READ_WRITE,
            sock.as_fd(),
        )
        .unwrap(),
    );
    let ch = Channel::open(provider, &DirectBuilder::default(), cfg).unwrap();
    assert_clean(&ch.close());
}

#[test]
fn a_kernel_that_inflates_the_completion_count_gets_a_protocol_violation_and_counts_showing_the_excess(
) {
    // A hostile kernel: one honest NOP, then it writes the shared descriptor's
    // counters (host memory it can reach through `ch->shared` but does not own) as
    // if 1000 more had finished.
    const HOSTILE: &str = r#"
#include "gpuio.h"
GPUIO_KERNEL(inflate)(const gpuio_channel *ch, gpuio_u64 *p) {
  p[0] = (gpuio_u64)gpuio_nop(ch);
  gpuio_channel *shared = (gpuio_channel *)ch->shared;
  gpuio_u64 *completed = (gpuio_u64 *)&shared->stats.completed;
  gpuio_st_release_64(completed, gpuio_ld_acquire_64(completed) + 1000u);
}
"#;
    let Some(module) = probe_support::load_on_cpu("inflate.cu", HOSTILE) else {
        return;
    };
    let ch = open(config(4));
    let p = module
        .launch("inflate", 1, 1, &ch, &[u64::MAX])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[0], 0, "the honest NOP");
    let report = ch.close();
    assert!(!report.is_clean(), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.starts_with("protocol violation") && p.contains("1001 completed")),
        "{report}"
    );
    // The counts say it too: 1000 finished beyond the one submitted, not a false
    // "submitted 1 = completed 1001".
    assert_eq!(report.counters.excess(), 1000, "{report}");
    assert_eq!(report.counters.unfinished(), 0, "{report}");
    assert!(
        report
            .to_string()
            .contains("submitted 1 + excess 1000 (finished but never submitted) = completed 1001"),
        "{report}"
    );
}

#[test]
fn a_large_write_whose_files_gate_is_never_free_goes_without_its_turn_and_lands() {
    // The kernel holds its file's write gate (as a write in flight would) and never
    // gives it back, then writes 64 KiB from the user staging area: a transfer that
    // large is marked for the kernel's workers and waits for its file's gate. It
    // waits half its timeout, then goes without its turn: the gate is for speed, and
    // a write must not fail for want of it.
    const HOLDER: &str = r#"
#include "gpuio.h"
GPUIO_KERNEL(gate_held)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u32 ep = (gpuio_u32)p[0];
  const gpuio_u32 gate = ep % GPUIO_DIRECT_WRITE_GATES;
  for (gpuio_u32 i = 0; i < GPUIO_DIRECT_WRITE_DEPTH; ++i)
    if (gpuio_direct_gate_take(ch, gate, gpuio_impl_deadline(ch)) != 1) return;
  gpuio_u64 off = 0, len = 0;
  char *staging = gpuio_user_staging(ch, &off, &len);
  if (!staging || len < p[1]) return;
  for (gpuio_u64 i = 0; i < p[1]; ++i) staging[i] = (char)(i * 7u + 3u);
  p[2] = (gpuio_u64)gpuio_pwrite_staged(ch, ep, off, p[1], 0);
}
"#;
    let Some(module) = probe_support::load_on_cpu("gate_held.cu", HOLDER) else {
        return;
    };
    let (_dir, path, file) = new_file("gated.bin");
    let mut config = ChannelConfig {
        call_timeout: Duration::from_millis(400),
        ..config(4)
    };
    let ep = config.endpoint(Endpoint::file("gated", &file, Access::READ_WRITE).unwrap());
    let ch = open(config);
    let bytes = 64u64 << 10;
    let p = module
        .launch("gate_held", 1, 1, &ch, &[u64::from(ep), bytes, u64::MAX])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p[2] as i64, bytes as i64, "the write's answer");
    let got = std::fs::read(&path).unwrap();
    let want: Vec<u8> = (0..bytes).map(|i| (i * 7 + 3) as u8).collect();
    assert!(got == want, "the file holds the 64 KiB written");
    assert_clean(&ch.close());
}

#[test]
fn a_read_of_an_empty_pipe_does_not_stall_the_other_threads_writes() {
    // 8 slots, so the read's slot comes round again and again; the SQ has 8 entries,
    // so every write passes the read's SQ position many times over.
    let Some((p, report)) =
        probe_support::stuck_read_beside_busy_writers(&DirectBuilder::default(), 8)
    else {
        return;
    };
    assert_eq!(
        p[0] as i64,
        -i64::from(libc::ETIMEDOUT),
        "the read gives up: {report}"
    );
    assert_eq!(
        p[1],
        16 * 20,
        "every write went through beside the stuck read: {report}"
    );
    assert_eq!(report.timed_out, 1, "only the read timed out: {report}");
}
#[test]
fn closing_with_a_read_that_never_completes_cancels_it_promptly_and_counts_it_failed() {
    let Some((_, report)) =
        probe_support::stuck_read_beside_busy_writers(&DirectBuilder::default(), 8)
    else {
        return;
    };
    // The default close bound is 10 s; a cancelled read settles the ring at once.
    assert!(
        report.elapsed < Duration::from_secs(3),
        "close cancels instead of waiting out its bound: {report}"
    );
    assert!(
        report.is_clean(),
        "the read is answered (cancelled), not lost: {report}"
    );
    assert_eq!(report.counters.failed, 1, "the cancelled read: {report}");
}

/// Runs the hostile kernel `name` from `source` (one thread, params `p` of 4 words)
/// on a 4-slot direct channel with a 200 ms call deadline; returns its params and
/// the close report, or `None` where no C++ compiler can load it (a skip).
fn hostile(name: &str, source: &str) -> Option<(Vec<u64>, CloseReport)> {
    let module = probe_support::load_on_cpu(&format!("{name}.cu"), source)?;
    let ch = open(ChannelConfig {
        call_timeout: Duration::from_millis(200),
        ..config(4)
    });
    let p = module
        .launch(name, 1, 1, &ch, &[u64::MAX; 4])
        .unwrap()
        .join(JOIN)
        .unwrap();
    Some((p, ch.close()))
}

/// The report names a protocol violation containing `what`, is not clean, and
/// close stopped the ring well within its 10 s bound instead of waiting on it.
fn assert_violation(report: &CloseReport, what: &str) {
    assert!(!report.is_clean(), "{report}");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.starts_with("protocol violation") && p.contains(what)),
        "a protocol violation naming {what:?}: {report}"
    );
    assert!(
        report.elapsed < Duration::from_secs(3),
        "close stops a scribbled ring at once: {report}"
    );
}

#[test]
fn a_kernel_that_moves_the_sq_tail_a_lap_ahead_gets_a_protocol_violation_and_close_stops_the_replay(
) {
    // One honest NOP, then the SQ tail moved by sq_entries: SQPOLL consumes a lap of
    // stale SQEs, and once the honest publisher stores its (now lower) tail, replays
    // them until the ring is closed.
    const HOSTILE: &str = r#"
#include "gpuio.h"
/* Waits (bounded) until SQPOLL consumed the stale lap, so the next publish lands
 * behind the kernel's head. */
GPUIO_KERNEL(replay)(const gpuio_channel *ch, gpuio_u64 *p) {
  p[0] = (gpuio_u64)gpuio_nop(ch);
  gpuio_u32 *tail = gpuio_ptr<gpuio_u32>(ch->direct.sq_tail);
  const gpuio_u32 *head = gpuio_ptr<const gpuio_u32>(ch->direct.sq_head);
  const gpuio_u32 lap = gpuio_ld_acquire_32(tail) + ch->direct.sq_entries;
  gpuio_st_release_32(tail, lap);
  const gpuio_u64 until = gpuio_now_ns() + 1000000000ull;
  while (gpuio_ld_acquire_32(head) != lap && gpuio_now_ns() < until) gpuio_sleep_ns(100000u);
  p[1] = (gpuio_u64)gpuio_nop(ch);
}
"#;
    let Some((p, report)) = hostile("replay", HOSTILE) else {
        return;
    };
    assert_eq!(p[0], 0, "the honest NOP");
    assert_violation(&report, "SQ tail");
}

#[test]
fn a_kernel_that_moves_the_cq_head_past_the_tail_gets_a_protocol_violation_not_a_wedged_close() {
    // With the CQ head past its tail the kernel believes the CQ full and holds
    // completions back; the device's reaper stores its own head after each CQE it
    // reaps, so the kernel scribbles again after each call, and last.
    const HOSTILE: &str = r#"
#include "gpuio.h"
GPUIO_KERNEL(cq_head)(const gpuio_channel *ch, gpuio_u64 *p) {
  p[0] = (gpuio_u64)gpuio_nop(ch);
  gpuio_u32 *head = gpuio_ptr<gpuio_u32>(ch->direct.cq_head);
  const gpuio_u32 *tail = gpuio_ptr<const gpuio_u32>(ch->direct.cq_tail);
  p[1] = 0;
  for (int i = 0; i < 8; ++i) {
    gpuio_st_release_32(head, gpuio_ld_acquire_32(tail) + 5u);
    if (gpuio_nop(ch) != 0) ++p[1];
  }
  gpuio_st_release_32(head, gpuio_ld_acquire_32(tail) + 5u);
}
"#;
    let Some((p, report)) = hostile("cq_head", HOSTILE) else {
        return;
    };
    assert_eq!(p[0], 0, "the honest NOP");
    eprintln!("{} of 8 NOPs after a scribble failed; {report}", p[1]);
    assert_violation(&report, "CQ head");
}

#[test]
fn a_kernel_that_drops_its_sq_array_index_gets_a_protocol_violation_and_the_channel_goes_on() {
    // The kernel submits a NOP the way gpuio/direct.h does, but writes an index out
    // of range into sq_array: io_uring drops the entry and the request never
    // completes. Its slot is passed over; the next NOP goes through.
    const HOSTILE: &str = r#"
#include "gpuio.h"
GPUIO_KERNEL(dropped)(const gpuio_channel *ch, gpuio_u64 *p) {
  p[0] = (gpuio_u64)gpuio_nop(ch);
  gpuio_slot s;
  if (gpuio_direct_acquire(ch, &s, gpuio_impl_deadline(ch)) != 0) return;
  const gpuio_u64 q = gpuio_fetch_add_64(&gpuio_direct_st(ch)->sq_reserve, 1u);
  gpuio_sqe e = {};
  e.opcode = GPUIO_IORING_OP_NOP;
  e.flags = GPUIO_IOSQE_FIXED_FILE;
  e.user_data = s.pos;
  gpuio_ptr<gpuio_sqe>(ch->direct.sqes)[s.index] = e;
  gpuio_st_relaxed_32(gpuio_ptr<gpuio_u32>(ch->direct.sq_array) + (q & ch->direct.sq_mask), 0xdeadu);
  gpuio_st_release_64(&gpuio_direct_slot_at(ch, q)->sq_ready, q + 1u);
  gpuio_fence_sc();
  gpuio_direct_publish(ch);
  gpuio_i64 res = 0;
  s.flags = 0;
  p[1] = (gpuio_u64)gpuio_direct_wait(ch, &s, gpuio_impl_deadline(ch), &res);
  p[2] = (gpuio_u64)gpuio_nop(ch);
}
"#;
    let Some((p, report)) = hostile("dropped", HOSTILE) else {
        return;
    };
    assert_eq!(p[0], 0, "the honest NOP");
    assert_eq!(p[1] as i64, -i64::from(libc::ETIMEDOUT), "{report}");
    assert_eq!(p[2], 0, "the channel is not wedged: {report}");
    assert_violation(&report, "dropped 1 SQ entries");
}

#[test]
fn a_kernel_that_moves_the_sq_tail_is_caught_while_it_runs_and_the_ring_stops_replaying() {
    // The SQ tail moved a lap ahead; once SQPOLL consumed the stale lap, an honest
    // NOP stores its own (lower) tail, from which SQPOLL would replay stale SQEs for
    // as long as the ring lives. Then the kernel runs on for 2 s while the host
    // looks.
    const HOSTILE: &str = r#"
#include "gpuio.h"
GPUIO_KERNEL(moved_tail)(const gpuio_channel *ch, gpuio_u64 *p) {
  p[0] = (gpuio_u64)gpuio_nop(ch);
  gpuio_u32 *tail = gpuio_ptr<gpuio_u32>(ch->direct.sq_tail);
  const gpuio_u32 *head = gpuio_ptr<const gpuio_u32>(ch->direct.sq_head);
  const gpuio_u32 lap = gpuio_ld_acquire_32(tail) + ch->direct.sq_entries;
  gpuio_st_release_32(tail, lap);
  gpuio_u64 until = gpuio_now_ns() + 500000000ull;
  while (gpuio_ld_acquire_32(head) != lap && gpuio_now_ns() < until) gpuio_sleep_ns(100000u);
  p[1] = (gpuio_u64)gpuio_nop(ch);
  until = gpuio_now_ns() + 2000000000ull;
  while (gpuio_now_ns() < until) gpuio_sleep_ns(1000000u);
}
"#;
    let Some(module) = probe_support::load_on_cpu("moved_tail.cu", HOSTILE) else {
        return;
    };
    let ch = open(ChannelConfig {
        call_timeout: Duration::from_millis(200),
        ..config(4)
    });
    let launched = Instant::now();
    let running = module
        .launch("moved_tail", 1, 1, &ch, &[u64::MAX; 2])
        .unwrap();
    let violation = loop {
        if let Some(v) = ch.violation() {
            break v;
        }
        assert!(
            launched.elapsed() < Duration::from_millis(1500),
            "no violation seen while the kernel ran"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(
        violation.starts_with("protocol violation") && violation.contains("SQ tail"),
        "{violation}"
    );
    // The ring is stopped: SQPOLL consumes nothing more (it would replay a lap
    // after lap of stale SQEs), though the kernel still runs.
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: HostMemory: the descriptor's device address is its host address, and
    // the channel keeps it alive; the ring words are read as atomics.
    let sq_head = unsafe {
        let desc = &*(ch.device_ptr() as *const gpuio_core::abi::Channel);
        &*(desc.direct.sq_head as *const std::sync::atomic::AtomicU32)
    };
    let before = sq_head.load(std::sync::atomic::Ordering::Acquire);
    std::thread::sleep(Duration::from_millis(200));
    let after = sq_head.load(std::sync::atomic::Ordering::Acquire);
    assert_eq!(before, after, "SQPOLL still consuming after the violation");
    assert!(
        launched.elapsed() < Duration::from_millis(2400),
        "the checks ran while the kernel did"
    );
    let p = running.join(JOIN).unwrap();
    assert_eq!(p[0], 0, "the honest NOP");
    let report = ch.close();
    assert_violation(&report, "seen while the kernel ran");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("stopped by the waker")),
        "{report}"
    );
}
