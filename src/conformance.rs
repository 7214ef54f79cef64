//! Conformance cases: the same checks on every device and transport.
//!
//! Each case runs one kernel from `device/kernels/conformance.h` through a channel
//! and checks what reached the real file (or stdout file) against the
//! specification the kernel follows. `cargo test` runs them on the CPU device over
//! every transport (tests/transports.rs); `gpuio selftest` runs them on every
//! available (backend, transport) pair.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use gpuio_core::{
    Access, Channel, ChannelConfig, Endpoint, EndpointKind, LogConfig, QueueConfig, RecvError,
    TransportKind,
};
use gpuio_device::kernels::{
    pattern_byte, queue_message, queue_message_key, writes_of, BAD_INPUT_CASES,
    BEYOND_ACCESS_CASES, NULL_CHANNEL_CALLS, QUEUE_MISUSE_CASES, REGION,
};
use gpuio_device::Device;

/// Opens a channel for a case (a backend's transport, bound to its device).
pub type Opener<'a> = dyn Fn(ChannelConfig) -> Result<Channel, String> + 'a;

/// What a case runs on.
pub struct Target<'a> {
    pub device: &'a dyn Device,
    pub transport: TransportKind,
    pub open: &'a Opener<'a>,
    /// A scratch directory for the case's files.
    pub dir: &'a Path,
}

/// One conformance case.
pub struct Case {
    pub name: &'static str,
    /// The one transport the case is about, and why it does not apply to the
    /// others (they skip it, saying so); `None`: every transport.
    pub only: Option<(TransportKind, &'static str)>,
    pub run: fn(&Target<'_>) -> Result<String, String>,
}

impl Case {
    /// Why the case does not apply to `transport`, or `None` where it runs.
    pub fn skip_reason(&self, transport: TransportKind) -> Option<&'static str> {
        self.only
            .and_then(|(kind, why)| (kind != transport).then_some(why))
    }
}

/// Every case, in the order `selftest` runs them.
pub const CASES: &[Case] = &[
    Case {
        name: "nop_round_trips",
        only: None,
        run: nop_round_trips,
    },
    Case {
        name: "pwrite_pread_64_threads_x_1000",
        only: None,
        run: pwrite_pread_pattern,
    },
    Case {
        name: "printf_lines_arrive_whole_and_in_order",
        only: None,
        run: printf_lines,
    },
    Case {
        name: "bad_input_gives_errno_and_writes_nothing",
        only: None,
        run: bad_input,
    },
    Case {
        name: "close_with_requests_in_flight",
        only: None,
        run: close_in_flight,
    },
    Case {
        name: "full_device_write_read_printf",
        only: None,
        run: full_device,
    },
    Case {
        name: "null_channel_gives_einval_from_every_call",
        only: None,
        run: null_channel,
    },
    Case {
        name: "printf_cuts_long_lines_whole_and_refuses_overflow",
        only: None,
        run: printf_limits,
    },
    Case {
        name: "close_reports_every_timeout_the_kernel_saw",
        only: None,
        run: timeouts_reported,
    },
    Case {
        name: "raw_requests_beyond_declared_access_get_ebadf",
        only: None,
        run: beyond_access,
    },
    Case {
        name: "async_calls_keep_requests_in_flight_byte_exact",
        only: None,
        run: async_pattern,
    },
    Case {
        name: "one_thread_keeps_more_async_calls_than_its_ring_has_slots",
        only: None,
        run: async_many,
    },
    Case {
        name: "warp_calls_write_and_read_back_byte_exact",
        only: None,
        run: warp_pattern,
    },
    Case {
        name: "one_rulebook_the_same_errno_on_every_transport",
        only: None,
        run: rulebook,
    },
    Case {
        name: "queue_to_host_every_message_once_whole_in_thread_order",
        only: None,
        run: queue_to_host,
    },
    Case {
        name: "queue_to_device_every_message_once_and_every_recv_ends_with_0",
        only: None,
        run: queue_to_device,
    },
    Case {
        name: "queue_misuse_gives_the_documented_errno",
        only: None,
        run: queue_misuse,
    },
    Case {
        name: "a_stuck_read_holds_only_its_own_slot",
        only: None,
        run: stuck_read_beside_writers,
    },
    Case {
        name: "a_kernel_moving_the_sq_tail_is_a_violation_seen_while_it_runs",
        only: Some((
            TransportKind::Direct,
            "only the direct transport has an io_uring SQ that a kernel writes; \
             forward and mailbox requests reach io_uring or a syscall through the host",
        )),
        run: hostile_sq_tail,
    },
    Case {
        name: "scribbled_forward_stamps_are_reported_and_wedge_nothing",
        only: Some((
            TransportKind::Forward,
            "only the forward transport has stamped entries",
        )),
        run: hostile_stamps,
    },
    Case {
        name: "a_files_long_writes_take_slots_of_its_ring_group",
        only: Some((
            TransportKind::Forward,
            "only the forward transport splits a channel into groups of rings",
        )),
        run: routed_long_writes,
    },
];

/// Threads and writes per thread of the pattern case (the acceptance figures).
pub const THREADS: u32 = 64;
pub const WRITES_PER_THREAD: u64 = 1000;
/// How long a kernel may run before a case gives up on it.
const KERNEL_TIMEOUT: Duration = Duration::from_secs(120);

fn rw_file(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("open {}: {e}", path.display()))
}

fn endpoint(name: &str, f: &File, access: Access) -> Result<Endpoint, String> {
    Endpoint::file(name, f, access).map_err(|e| format!("register {name}: {e}"))
}

/// Runs `kernel` with `threads` threads and waits for it.
fn run_kernel(
    t: &Target<'_>,
    ch: &Channel,
    kernel: &str,
    threads: u32,
    params: &[u64],
) -> Result<Vec<u64>, String> {
    let block = threads.min(64);
    let grid = threads.div_ceil(block);
    let launch = t
        .device
        .launch(kernel, grid, block, ch, params)
        .map_err(|e| format!("launch {kernel}: {e}"))?;
    launch
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("{kernel}: {e}"))
}

fn check_close(ch: Channel) -> Result<String, String> {
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(report.to_string())
}

fn errno_name(e: i64) -> String {
    if e >= 0 {
        return e.to_string();
    }
    let name = match -e as i32 {
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EINVAL => "EINVAL",
        libc::EACCES => "EACCES",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ESHUTDOWN => "ESHUTDOWN",
        libc::ENOSYS => "ENOSYS",
        libc::ESPIPE => "ESPIPE",
        libc::EPROTO => "EPROTO",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EAGAIN => "EAGAIN",
        libc::ENOTSOCK => "ENOTSOCK",
        libc::EPIPE => "EPIPE",
        _ => return format!("-{}", -e),
    };
    format!("-{name}")
}

fn nop_round_trips(t: &Target<'_>) -> Result<String, String> {
    let ch = (t.open)(ChannelConfig::default())?;
    let p = run_kernel(t, &ch, "nop", THREADS, &[100, 0, 0])?;
    if p[1] != 0 {
        return Err(format!(
            "{} of {} NOPs failed, first with {}",
            p[1],
            THREADS * 100,
            errno_name(p[2] as i64)
        ));
    }
    check_close(ch)
}

/// The file as the pattern kernel must leave it: each thread's writes hold the
/// pattern, everything else is zero.
fn expected_file(threads: u64, writes: u64) -> Vec<u8> {
    let mut want = vec![0u8; (threads * REGION) as usize];
    for th in 0..threads {
        for (off, n) in writes_of(th, writes) {
            for o in off..off + u64::from(n) {
                want[o as usize] = pattern_byte(o);
            }
        }
    }
    want
}

fn first_difference(got: &[u8], want: &[u8]) -> Option<usize> {
    got.iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .or(if got.len() < want.len() {
            Some(got.len())
        } else {
            None
        })
}

/// Warp-cooperative pwrites and preads of the pattern sizes (1 B .. 1 MiB), 64
/// threads (two warps on a GPU, 64 one-lane warps on the CPU device); the kernel
/// checks what it reads back, the host checks each warp's region of the file.
fn warp_pattern(t: &Target<'_>) -> Result<String, String> {
    const WRITES: u64 = 150;
    let threads = u64::from(THREADS);
    let path = t.dir.join("warp.bin");
    let file = rw_file(&path)?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(endpoint("warp", &file, Access::READ_WRITE)?);
    let ch = (t.open)(cfg)?;
    let image: Vec<u8> = (0..threads * REGION).map(pattern_byte).collect();
    let src = t
        .device
        .buffer(image.len(), &image)
        .map_err(|e| format!("source buffer: {e}"))?;
    let dst = t
        .device
        .buffer(image.len(), &[])
        .map_err(|e| format!("destination buffer: {e}"))?;
    let mut params = vec![0u64; 8 + 64];
    params[..4].copy_from_slice(&[u64::from(ep), src.device_addr(), dst.device_addr(), WRITES]);
    let p = run_kernel(t, &ch, "warp_pattern", THREADS, &params)?;
    if p[4] != 0 {
        return Err(format!(
            "{} warp calls failed, first with {}",
            p[4],
            errno_name(p[5] as i64)
        ));
    }
    let units: Vec<u64> = (0..threads).filter(|&u| p[8 + u as usize] == 1).collect();
    let mut want_bytes = 0u64;
    for &u in &units {
        for (off, n) in writes_of(u, WRITES) {
            let mut got = vec![0u8; n as usize];
            std::os::unix::fs::FileExt::read_exact_at(&file, &mut got, off)
                .map_err(|e| format!("read back warp {u}: {e}"))?;
            if let Some(i) = (0..u64::from(n)).find(|&i| got[i as usize] != pattern_byte(off + i)) {
                return Err(format!("warp {u}'s write at {off} differs at byte {i}"));
            }
            want_bytes += u64::from(n);
        }
    }
    if units.is_empty() || p[6] != want_bytes {
        return Err(format!(
            "{} bytes read back intact by {} warps, expected {want_bytes}",
            p[6],
            units.len()
        ));
    }
    let report = check_close(ch)?;
    Ok(format!(
        "{} warps, {} calls each way, {} bytes; {report}",
        units.len(),
        units.len() as u64 * WRITES,
        p[6]
    ))
}

/// 64 threads, each with 4 asynchronous 512-byte pwrites in flight for 10 rounds,
/// then the same reads; the kernel checks what it reads, the host checks the file.
fn async_pattern(t: &Target<'_>) -> Result<String, String> {
    const IN_FLIGHT: u64 = 4;
    const ROUNDS: u64 = 10;
    const CHUNK: u64 = 512;
    let threads = u64::from(THREADS);
    let path = t.dir.join("async.bin");
    let file = rw_file(&path)?;
    // Every thread's tickets at once fit in the channel's slots (see gpuio.h).
    let mut cfg = ChannelConfig {
        slots: 512,
        ..ChannelConfig::default()
    };
    let ep = cfg.endpoint(endpoint("async", &file, Access::READ_WRITE)?);
    let ch = (t.open)(cfg)?;
    let p = run_kernel(
        t,
        &ch,
        "async_pattern",
        THREADS,
        &[u64::from(ep), IN_FLIGHT, ROUNDS, 0, 0, 0, 0],
    )?;
    if p[3] != 0 {
        return Err(format!(
            "{} async calls failed, first with {}",
            p[3],
            errno_name(p[4] as i64)
        ));
    }
    let per_thread = IN_FLIGHT * ROUNDS * CHUNK;
    if p[5] != threads * per_thread {
        return Err(format!(
            "{} bytes read back intact, expected {}",
            p[5],
            threads * per_thread
        ));
    }
    for th in 0..threads {
        let mut got = vec![0u8; per_thread as usize];
        let off = th * REGION;
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut got, off)
            .map_err(|e| format!("read back thread {th}: {e}"))?;
        if let Some(i) = (0..per_thread).find(|&i| got[i as usize] != pattern_byte(off + i)) {
            return Err(format!("thread {th}'s region differs at byte {i}"));
        }
    }
    let report = check_close(ch)?;
    Ok(format!(
        "{} requests, {IN_FLIGHT} in flight per thread, {} gpuio_test calls saw one still in flight; {report}",
        2 * threads * IN_FLIGHT * ROUNDS,
        p[6]
    ))
}

/// One thread starts 96 asynchronous writes before it waits for any, then as many
/// reads: more than a forward ring's share of the channel's 128 slots (two rings of
/// 64), fewer than the channel has. Each call must find a slot within its 2 s
/// deadline: a thread kept to its own ring's 64 slots cannot, and did not finish.
fn async_many(t: &Target<'_>) -> Result<String, String> {
    const TICKETS: u64 = 96;
    const BYTES: u64 = 16;
    let path = t.dir.join("async-many.bin");
    let file = rw_file(&path)?;
    let mut cfg = ChannelConfig {
        slots: 128,
        call_timeout: Duration::from_secs(2),
        ..ChannelConfig::default()
    };
    let ep = cfg.endpoint(endpoint("async-many", &file, Access::READ_WRITE)?);
    let ch = (t.open)(cfg)?;
    let p = run_kernel(t, &ch, "async_many", 1, &[u64::from(ep), TICKETS, 0, 0, 0])?;
    if p[2] != 0 {
        return Err(format!(
            "{} of {} async calls failed, first with {}",
            p[2],
            2 * TICKETS,
            errno_name(p[3] as i64)
        ));
    }
    if p[4] != TICKETS * BYTES {
        return Err(format!(
            "{} bytes read back intact, expected {}",
            p[4],
            TICKETS * BYTES
        ));
    }
    let mut got = vec![0u8; (TICKETS * BYTES) as usize];
    std::os::unix::fs::FileExt::read_exact_at(&file, &mut got, 0)
        .map_err(|e| format!("read back: {e}"))?;
    if let Some(i) = (0..TICKETS * BYTES).find(|&i| got[i as usize] != pattern_byte(i)) {
        return Err(format!("the file differs at byte {i}"));
    }
    let report = check_close(ch)?;
    Ok(format!(
        "{TICKETS} writes, then {TICKETS} reads, in flight at once on a 128-slot channel; {report}"
    ))
}

fn pwrite_pread_pattern(t: &Target<'_>) -> Result<String, String> {
    let threads = u64::from(THREADS);
    let path = t.dir.join("pattern.bin");
    let file = rw_file(&path)?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(endpoint("pattern", &file, Access::READ_WRITE)?);
    let ch = (t.open)(cfg)?;
    let want = expected_file(threads, WRITES_PER_THREAD);
    let src = t
        .device
        .buffer(want.len(), &want)
        .map_err(|e| format!("source buffer: {e}"))?;
    let start = Instant::now();
    let p = run_kernel(
        t,
        &ch,
        "pwrite_pattern",
        THREADS,
        &[u64::from(ep), src.device_addr(), WRITES_PER_THREAD, 0, 0, 0],
    )?;
    let write_time = start.elapsed();
    if p[3] != 0 {
        return Err(format!(
            "{} pwrites failed, first with {}",
            p[3],
            errno_name(p[4] as i64)
        ));
    }
    let mut got = Vec::new();
    File::open(&path)
        .and_then(|mut f| f.read_to_end(&mut got))
        .map_err(|e| format!("read back: {e}"))?;
    // The file ends at the last byte written; the expected image runs to the end of
    // the last thread's region.
    let end = want.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if got.len() > want.len() || got.len() < end {
        return Err(format!(
            "file is {} bytes, expected {end}..={}",
            got.len(),
            want.len()
        ));
    }
    if let Some(i) = first_difference(&got, &want[..got.len()]) {
        return Err(format!(
            "file differs at byte {i}: {} != {}",
            got[i], want[i]
        ));
    }
    let dst = t
        .device
        .buffer(want.len(), &[])
        .map_err(|e| format!("destination buffer: {e}"))?;
    let p = run_kernel(
        t,
        &ch,
        "pread_pattern",
        THREADS,
        &[u64::from(ep), dst.device_addr(), WRITES_PER_THREAD, 0, 0, 0],
    )?;
    if p[3] != 0 {
        return Err(format!(
            "{} preads failed, first with {}",
            p[3],
            errno_name(p[4] as i64)
        ));
    }
    let mut read = vec![0u8; want.len()];
    dst.download(&mut read)
        .map_err(|e| format!("download: {e}"))?;
    if let Some(i) = first_difference(&read, &want) {
        return Err(format!(
            "pread returned {} at byte {i}, expected {}",
            read[i], want[i]
        ));
    }
    let bytes = p[5];
    let closed = check_close(ch)?;
    Ok(format!(
        "{} pwrites + {} preads, {} MB each way, writes took {write_time:.2?}; {closed}",
        threads * WRITES_PER_THREAD,
        threads * WRITES_PER_THREAD,
        bytes / 1_000_000
    ))
}

/// Line `i` of thread `t` as the host's own `snprintf` formats it.
pub fn expected_line(t: i32, i: i32) -> Result<String, String> {
    let mut buf = [0u8; 256];
    let fmt = c"t=%d i=%d x=%#x s=%-6s f=%.3f e=%e %c%%\n";
    // SAFETY: the format's conversions match the argument types one by one (int,
    // int, unsigned via int, char*, double, double, int), and buf's length is passed.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            fmt.as_ptr(),
            t,
            i,
            t * 1000 + i,
            c"ok".as_ptr(),
            f64::from(i) * 0.25,
            f64::from(t) * 1e10,
            i32::from(b'A') + (i % 26),
        )
    };
    let n = usize::try_from(n).map_err(|_| "snprintf failed".to_string())?;
    String::from_utf8(buf[..n.min(buf.len())].to_vec()).map_err(|e| e.to_string())
}

/// A file opened `O_APPEND` at `path`, registered as a stream endpoint (for
/// `gpuio_printf`: stream writes, so every line lands whole at the end).
pub fn stdout_file_endpoint(path: &Path) -> Result<(File, Endpoint), String> {
    let out = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .custom_flags(libc::O_APPEND)
        .open(path)
        .map_err(|e| format!("open {}: {e}", path.display()))?;
    let ep = Endpoint::new(
        "stdout",
        EndpointKind::Pipe,
        Access::WRITE,
        std::os::fd::AsFd::as_fd(&out),
    )
    .map_err(|e| format!("register stdout: {e}"))?;
    Ok((out, ep))
}

/// A channel config whose `gpuio_printf` endpoint is [`stdout_file_endpoint`].
pub fn stdout_file_config(path: &Path) -> Result<(File, ChannelConfig), String> {
    let (out, ep) = stdout_file_endpoint(path)?;
    let mut cfg = ChannelConfig::default();
    cfg.stdout(ep);
    Ok((out, cfg))
}

fn printf_lines(t: &Target<'_>) -> Result<String, String> {
    const LINES: i32 = 100;
    let path = t.dir.join("stdout.txt");
    let (_out, cfg) = stdout_file_config(&path)?;
    let ch = (t.open)(cfg)?;
    let p = run_kernel(t, &ch, "printf_lines", THREADS, &[LINES as u64, 0, 0])?;
    if p[1] != 0 {
        return Err(format!(
            "{} printf calls failed, first with {}",
            p[1],
            errno_name(p[2] as i64)
        ));
    }
    let closed = check_close(ch)?;
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let mut next = vec![0i32; THREADS as usize];
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let th = line
            .strip_prefix("t=")
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&th| th < THREADS as usize)
            .ok_or_else(|| format!("line {n} is torn or foreign: {line:?}"))?;
        let want = expected_line(th as i32, next[th])?;
        if line != want {
            return Err(format!(
                "line {n}: got {line:?}, expected {want:?} (thread {th}, line {})",
                next[th]
            ));
        }
        next[th] += 1;
    }
    if let Some((th, &got)) = next.iter().enumerate().find(|(_, &c)| c != LINES) {
        return Err(format!("thread {th}: {got} of {LINES} lines arrived"));
    }
    Ok(format!(
        "{} lines, every one whole and in per-thread order; {closed}",
        THREADS as i32 * LINES
    ))
}

/// Every thread of a launch that fills the device writes its row, reads it back and
/// prints it, on a channel with the default settings: the file must hold every row
/// and stdout every line, once.
fn full_device(t: &Target<'_>) -> Result<String, String> {
    use gpuio_device::kernels::{full_device_row, FULL_DEVICE_ROW};
    let (grid, block) = t.device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let rows_path = t.dir.join("rows.txt");
    let out_path = t.dir.join("stdout.txt");
    let rows = rw_file(&rows_path)?;
    let (_out, mut cfg) = stdout_file_config(&out_path)?;
    let ep = cfg.endpoint(endpoint("rows", &rows, Access::READ_WRITE)?);
    let ch = (t.open)(cfg)?;
    let start = std::time::Instant::now();
    let launch = t
        .device
        .launch("full_device", grid, block, &ch, &[u64::from(ep), 0, 0, 0])
        .map_err(|e| format!("launch full_device ({grid} x {block}): {e}"))?;
    let p = launch.join(KERNEL_TIMEOUT).map_err(|e| {
        format!(
            "full_device ({grid} x {block}): {e}; {}",
            ch.counters().submitted
        )
    })?;
    let took = start.elapsed();
    let closed = ch.close();
    if p[1] != 0 || p[3] != threads {
        return Err(format!(
            "{grid} x {block}: {} of {threads} threads made the round trip, {} failed, first with {}; {closed}",
            p[3],
            p[1],
            errno_name(p[2] as i64)
        ));
    }
    if !closed.is_clean() {
        return Err(format!("close: {closed}"));
    }
    let file = std::fs::read(&rows_path).map_err(|e| format!("read rows: {e}"))?;
    if file.len() as u64 != threads * FULL_DEVICE_ROW as u64 {
        return Err(format!(
            "rows file is {} bytes, expected {}",
            file.len(),
            threads * FULL_DEVICE_ROW as u64
        ));
    }
    for (i, row) in file.chunks(FULL_DEVICE_ROW).enumerate() {
        if row != full_device_row(i as u64, threads).as_bytes() {
            return Err(format!("row {i} is {:?}", String::from_utf8_lossy(row)));
        }
    }
    let text = std::fs::read_to_string(&out_path).map_err(|e| format!("read stdout: {e}"))?;
    let mut seen = vec![false; threads as usize];
    for line in text.split_inclusive('\n') {
        let i = line
            .strip_prefix("t=")
            .and_then(|r| r.get(..10))
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&i| i < seen.len() && line == full_device_row(i as u64, threads))
            .ok_or_else(|| format!("stdout line {line:?} is torn or foreign"))?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(format!("stdout has thread {i}'s line twice"));
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("stdout lacks thread {i}'s line"));
    }
    Ok(format!(
        "{grid} x {block} = {threads} threads, each a write, a read and a printf, in {took:.2?}: \
         every row and every line; {closed}"
    ))
}

fn bad_input(t: &Target<'_>) -> Result<String, String> {
    let path = t.dir.join("bad.bin");
    let file = rw_file(&path)?;
    let ro_file = File::open(&path).map_err(|e| format!("open read-only: {e}"))?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(endpoint("target", &file, Access::READ_WRITE)?);
    let ro = cfg.endpoint(endpoint("read-only", &ro_file, Access::READ)?);
    let ch = (t.open)(cfg)?;
    let raw_fd = std::os::fd::AsRawFd::as_raw_fd(&file) as u64;
    let mut params = vec![u64::from(ep), u64::from(ro), raw_fd];
    params.extend([0u64; 11]);
    let p = run_kernel(t, &ch, "bad_input", 1, &params)?;
    let got: Vec<i64> = p[3..14].iter().map(|&v| v as i64).collect();
    let (einval, efault, ebadf, eacces) = (
        -i64::from(libc::EINVAL),
        -i64::from(libc::EFAULT),
        -i64::from(libc::EBADF),
        -i64::from(libc::EACCES),
    );
    let direct = t.transport == TransportKind::Direct;
    let expect: [&[i64]; 11] = [
        &[ebadf],
        &[efault],
        &[einval],
        &[einval],
        &[ebadf],
        &[ebadf],
        &[efault],
        &[einval],
        if direct { &[eacces] } else { &[1] },
        if direct { &[eacces, einval] } else { &[1] },
        &[5],
    ];
    let mut wrong = Vec::new();
    for (i, (g, want)) in got.iter().zip(expect).enumerate() {
        if !want.contains(g) {
            let want: Vec<String> = want.iter().map(|&w| errno_name(w)).collect();
            wrong.push(format!(
                "{}: got {}, expected {}",
                BAD_INPUT_CASES[i],
                errno_name(*g),
                want.join(" or ")
            ));
        }
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    let mut content = Vec::new();
    File::open(&path)
        .and_then(|mut f| f.read_to_end(&mut content))
        .map_err(|e| format!("read back: {e}"))?;
    let mut want = vec![0u8; 4096];
    want.extend_from_slice(b"alive");
    if content != want {
        return Err(format!(
            "the file must hold only the final write: {} bytes, first non-zero at {:?}",
            content.len(),
            content.iter().position(|&b| b != 0)
        ));
    }
    // The checked calls are refused by the header and never reach the transport;
    // the raw ones (3, plus the direct ring's 2 raw SQEs) are refused by the host or
    // the ring and counted as failed; the final write completes.
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let refused = if direct { 5 } else { 3 };
    let c = report.counters;
    if (c.submitted, c.completed, c.failed) != (refused + 1, 1, refused) {
        return Err(format!(
            "expected submitted {} = completed 1 + failed {refused}: {report}",
            refused + 1
        ));
    }
    Ok(format!(
        "10 bad requests refused, nothing written, channel still usable; {report}"
    ))
}

fn close_in_flight(t: &Target<'_>) -> Result<String, String> {
    const SIZE: u64 = 4096;
    let threads = u64::from(THREADS);
    let path = t.dir.join("inflight.bin");
    let file = rw_file(&path)?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(endpoint("inflight", &file, Access::READ_WRITE)?);
    let bound = Duration::from_secs(10);
    cfg.close_timeout = bound;
    let mut ch = (t.open)(cfg)?;
    let image: Vec<u8> = (0..threads * REGION).map(pattern_byte).collect();
    let src = t
        .device
        .buffer(image.len(), &image)
        .map_err(|e| format!("source buffer: {e}"))?;
    let mut params = vec![u64::from(ep), src.device_addr(), 1_000_000, SIZE];
    params.resize(16 + THREADS as usize, 0);
    let block = THREADS.min(64);
    let launch = t
        .device
        .launch("until_closed", THREADS.div_ceil(block), block, &ch, &params)
        .map_err(|e| format!("launch: {e}"))?;
    // Let requests pile up, then close under them.
    std::thread::sleep(Duration::from_millis(200));
    let report = ch.close_within(bound);
    let p = launch
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("until_closed: {e}"))?;
    drop(ch);
    if report.elapsed > bound + Duration::from_secs(1) {
        return Err(format!("close took {:?}, bound {bound:?}", report.elapsed));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let c = report.counters;
    if c.submitted != c.completed + c.failed {
        return Err(format!(
            "submitted {} != completed {} + failed {}",
            c.submitted, c.completed, c.failed
        ));
    }
    if p[6] != 0 {
        return Err(format!(
            "{} writes failed with {}",
            p[6],
            errno_name(p[7] as i64)
        ));
    }
    if p[4] > c.completed {
        return Err(format!(
            "the kernel saw {} writes succeed, the channel counted {}",
            p[4], c.completed
        ));
    }
    let blocks = REGION / SIZE;
    let mut buf = vec![0u8; SIZE as usize];
    for th in 0..threads {
        let ok = p[16 + th as usize].min(blocks);
        for b in 0..ok {
            let off = th * REGION + b * SIZE;
            file.read_exact_at(&mut buf, off)
                .map_err(|e| format!("read back at {off}: {e}"))?;
            if buf
                .iter()
                .enumerate()
                .any(|(i, &v)| v != pattern_byte(off + i as u64))
            {
                return Err(format!(
                    "thread {th}'s write {b} (at {off}) was reported done but is not in the file"
                ));
            }
        }
    }
    Ok(format!(
        "kernel: {} writes ok, {} threads saw -ESHUTDOWN, {} timed out; {report}",
        p[4], p[5], p[8]
    ))
}

/// Every public call with `ch == nullptr` returns `-EINVAL` (and
/// `gpuio_user_staging` NULL with 0 bytes) instead of reading through it; and so
/// does every call with a copy of the kernel's descriptor 8 bytes past a 64-byte
/// boundary, a descriptor in every word but its alignment.
fn null_channel(t: &Target<'_>) -> Result<String, String> {
    let ch = (t.open)(ChannelConfig::default())?;
    let einval = -i64::from(libc::EINVAL);
    let mut wrong = Vec::new();
    for (which, pointer) in [("null", 0u64), ("misaligned", 1u64)] {
        let mut params = vec![0u64; 14];
        params[0] = pointer;
        params[12] = u64::MAX;
        params[13] = u64::MAX;
        let p = run_kernel(t, &ch, "null_channel", 1, &params)?;
        wrong.extend(
            NULL_CHANNEL_CALLS
                .iter()
                .zip(&p[1..11])
                .filter(|(_, &got)| got as i64 != einval)
                .map(|(call, &got)| {
                    format!(
                        "{call} with a {which} channel: got {}, expected -EINVAL",
                        errno_name(got as i64)
                    )
                }),
        );
        if (p[11], p[12], p[13]) != (0, 0, 0) {
            wrong.push(format!(
                "gpuio_user_staging with a {which} channel: got pointer {:#x}, offset {}, length {}; expected NULL, 0, 0",
                p[11], p[12], p[13]
            ));
        }
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    let closed = check_close(ch)?;
    Ok(format!(
        "{} calls with a null channel and with a misaligned one returned -EINVAL, gpuio_user_staging NULL; {closed}",
        NULL_CHANNEL_CALLS.len()
    ))
}

/// `gpuio_printf` of a line longer than a line may be writes it cut, still ending
/// in its newline, and says so (`-EMSGSIZE`); output over `INT_MAX` bytes writes
/// nothing (`-EOVERFLOW`); the lines around them arrive whole, none glued to
/// another. Both ways a line travels: over the stdout printf log (lines of at most
/// `max_line` bytes; the longest lines are formatted straight into the log, past
/// the device's local buffer) and, without a log, as one request (at most
/// `slot_size - 1` bytes).
fn printf_limits(t: &Target<'_>) -> Result<String, String> {
    const SLOT: usize = 4096;
    let mut done = Vec::new();
    for log in [true, false] {
        let path = t.dir.join(format!("limits-{log}.txt"));
        let (_out, mut cfg) = stdout_file_config(&path)?;
        cfg.slot_size = SLOT as u32;
        let stdout = cfg.stdout_endpoint.unwrap_or(0);
        if log {
            // The log's lines as long as a slot's: the same cuts either way.
            cfg.log(
                stdout,
                LogConfig {
                    max_line: SLOT as u32 - 1,
                    ..LogConfig::default()
                },
            );
        } else {
            cfg.no_log(stdout);
        }
        let how = if log { "over the log" } else { "as requests" };
        done.push(printf_limits_on(t, cfg, &path).map_err(|e| format!("{how}: {e}"))?);
    }
    Ok(format!(
        "a {}-byte line cut to {} bytes with its newline (-EMSGSIZE), an INT_MAX overflow \
         refused (-EOVERFLOW), the lines around them whole, over the printf log and as \
         requests; {}",
        SLOT + 100,
        SLOT - 1,
        done.join("; ")
    ))
}

fn printf_limits_on(t: &Target<'_>, cfg: ChannelConfig, path: &Path) -> Result<String, String> {
    const SLOT: usize = 4096;
    let ch = (t.open)(cfg)?;
    let mut long = vec![b'x'; SLOT + 100];
    long.push(0);
    let src = t
        .device
        .buffer(long.len(), &long)
        .map_err(|e| format!("string buffer: {e}"))?;
    let mut params = vec![0u64; 9];
    params[0] = src.device_addr();
    let p = run_kernel(t, &ch, "printf_limits", 1, &params)?;
    let (emsgsize, eoverflow) = (-i64::from(libc::EMSGSIZE), -i64::from(libc::EOVERFLOW));
    let calls: [(&str, i64); 8] = [
        ("a line of slot_size + 100 bytes and its newline", emsgsize),
        ("the next line", 5),
        ("slot_size + 100 bytes without a newline", emsgsize),
        ("the line after it", 5),
        ("a line over INT_MAX bytes", eoverflow),
        ("the line after that", 6),
        ("an empty format", 0),
        ("a line of exactly slot_size - 1 bytes", SLOT as i64 - 1),
    ];
    let wrong: Vec<String> = calls
        .iter()
        .zip(&p[1..9])
        .filter(|((_, want), &got)| got as i64 != *want)
        .map(|((what, want), &got)| {
            format!(
                "{what}: got {}, expected {}",
                errno_name(got as i64),
                errno_name(*want)
            )
        })
        .collect();
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    let closed = check_close(ch)?;
    let text = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let x = |n: usize| "x".repeat(n);
    let want = format!(
        "{}\nnext\n{}|end\nafter\n{}\n",
        x(SLOT - 2),
        x(SLOT - 1),
        x(SLOT - 2)
    );
    if text != want.as_bytes() {
        let got = String::from_utf8_lossy(&text);
        let lines: Vec<String> = got
            .split_inclusive('\n')
            .map(|l| {
                format!(
                    "{} bytes ending {:?}",
                    l.len(),
                    &l[l.len().saturating_sub(8)..]
                )
            })
            .collect();
        return Err(format!(
            "the output is {} bytes, expected {}: lines {lines:?}",
            text.len(),
            want.len()
        ));
    }
    Ok(closed)
}

/// Reads on a pipe nobody writes to, with a short deadline: every one times out,
/// and `close()`'s report counts exactly the `-ETIMEDOUT`s the kernel saw.
fn timeouts_reported(t: &Target<'_>) -> Result<String, String> {
    const THREADS: u32 = 8;
    const READS: u64 = 3;
    let (rx, tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let mut cfg = ChannelConfig {
        call_timeout: Duration::from_millis(30),
        ..ChannelConfig::default()
    };
    let ep = cfg.endpoint(
        Endpoint::new(
            "empty pipe",
            EndpointKind::Pipe,
            Access::READ,
            std::os::fd::AsFd::as_fd(&rx),
        )
        .map_err(|e| format!("register the pipe: {e}"))?,
    );
    drop(rx); // the channel has its own
    let ch = (t.open)(cfg)?;
    let p = run_kernel(
        t,
        &ch,
        "read_timeouts",
        THREADS,
        &[u64::from(ep), READS, 0, 0, 0],
    )?;
    // The reads still in flight end (at end of file) once nobody can write.
    drop(tx);
    let report = ch.close();
    if p[3] != 0 {
        return Err(format!(
            "{} reads did not time out, the first returned {}",
            p[3],
            errno_name(p[4] as i64)
        ));
    }
    let seen = p[2];
    if seen != u64::from(THREADS) * READS {
        return Err(format!(
            "{seen} of {} reads timed out",
            u64::from(THREADS) * READS
        ));
    }
    if report.timed_out != seen {
        return Err(format!(
            "the kernel saw {seen} calls time out, close() reports {}: {report}",
            report.timed_out
        ));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(format!("the kernel saw {seen} -ETIMEDOUT; {report}"))
}

/// A read that never completes (a pipe nobody writes) holds only its own slot: on a
/// channel of 64 slots, 16 threads' 320 writes beside it all go through (5 laps of
/// the slots, each meeting the stuck one), the read gives up at its deadline
/// (`-ETIMEDOUT`), and close counts that one timeout. (At least a warp's width of
/// slots: with fewer, the lanes of one warp calling together wait for slots their
/// own warp holds - measured on an H100 with 8 slots, 8-12 of 320 writes timed out
/// with the reader in another warp, `docs/validation/h100-2026-11-25/stuck_warp.log`.)
fn stuck_read_beside_writers(t: &Target<'_>) -> Result<String, String> {
    const WRITERS: u64 = 16;
    let path = t.dir.join("stuck-rows.bin");
    let rows = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let (rx, tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let mut cfg = ChannelConfig {
        slots: 64,
        call_timeout: Duration::from_secs(2),
        ..ChannelConfig::default()
    };
    let file = cfg
        .endpoint(Endpoint::file("rows", &rows, Access::WRITE).map_err(|e| format!("rows: {e}"))?);
    let pipe = cfg.endpoint(
        Endpoint::new(
            "silent pipe",
            EndpointKind::Pipe,
            Access::READ,
            std::os::fd::AsFd::as_fd(&rx),
        )
        .map_err(|e| format!("register the pipe: {e}"))?,
    );
    drop(rx);
    let ch = (t.open)(cfg)?;
    let p = run_kernel(
        t,
        &ch,
        "stuck_and_busy",
        WRITERS as u32 + 1,
        &[u64::from(file), u64::from(pipe), 0, 0],
    )?;
    // The read the device gave up on ends (at end of file) once nobody can write.
    drop(tx);
    let report = ch.close();
    if p[2] as i64 != -i64::from(libc::ETIMEDOUT) {
        return Err(format!(
            "the stuck read returned {}, not -ETIMEDOUT; {report}",
            errno_name(p[2] as i64)
        ));
    }
    if p[3] != WRITERS * 20 {
        return Err(format!(
            "{} of {} writes went through beside the stuck read; {report}",
            p[3],
            WRITERS * 20
        ));
    }
    let mut bytes = Vec::new();
    (&rows)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("read {}: {e}", path.display()))?;
    for w in 1..=WRITERS {
        for i in 0..20u64 {
            let at = ((w * 20 + i) * 8) as usize;
            let want = [
                b'r',
                b'o',
                b'w',
                b'a' + (w % 26) as u8,
                b'a' + i as u8,
                b' ',
                b' ',
                b'\n',
            ];
            if bytes.get(at..at + 8) != Some(&want[..]) {
                return Err(format!("row {i} of thread {w} is missing or wrong"));
            }
        }
    }
    if report.timed_out != 1 || !report.is_clean() {
        return Err(format!("close should count the one timeout: {report}"));
    }
    Ok(format!(
        "{} writes beside a read that never completed (64 slots); {report}",
        WRITERS * 20
    ))
}

/// Files opened read-write but declared read-only or write-only: raw requests (and
/// on direct raw SQEs, which reach io_uring unchecked) beyond the declared access
/// fail with `-EBADF` and change nothing; the declared access still works, and an
/// `O_APPEND` file still appends.
fn beyond_access(t: &Target<'_>) -> Result<String, String> {
    let prefilled = |name: &str, bytes: &[u8], append: bool| -> Result<File, String> {
        let path = t.dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("write {}: {e}", path.display()))?;
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(if append { libc::O_APPEND } else { 0 })
            .open(&path)
            .map_err(|e| format!("open {}: {e}", path.display()))
    };
    let ro = prefilled("declared-read-only", b"read-only file\n", false)?;
    let wo = prefilled("declared-write-only", b"BBBBBBBBBBBBBBBB", false)?;
    let ap = prefilled("declared-append", b"head\n", true)?;
    let mut cfg = ChannelConfig::default();
    let ro_ep = cfg.endpoint(endpoint("read-only", &ro, Access::READ)?);
    let wo_ep = cfg.endpoint(endpoint("write-only", &wo, Access::WRITE)?);
    let ap_ep = cfg.endpoint(endpoint("append", &ap, Access::WRITE)?);
    let ch = (t.open)(cfg)?;
    let mut params = vec![u64::from(ro_ep), u64::from(wo_ep), u64::from(ap_ep)];
    params.resize(14, 0);
    let p = run_kernel(t, &ch, "beyond_access", 1, &params)?;
    let ebadf = -i64::from(libc::EBADF);
    let direct = t.transport == TransportKind::Direct;
    let raw_sqe = if direct { ebadf } else { 1 };
    let expect: [i64; 10] = [ebadf, ebadf, ebadf, ebadf, ebadf, raw_sqe, raw_sqe, 4, 5, 5];
    let mut wrong: Vec<String> = BEYOND_ACCESS_CASES
        .iter()
        .zip(expect)
        .zip(&p[3..13])
        .filter(|((_, want), &got)| got as i64 != *want)
        .map(|((case, want), &got)| {
            format!(
                "{case}: got {}, expected {}",
                errno_name(got as i64),
                errno_name(want)
            )
        })
        .collect();
    if p[13].to_le_bytes()[..4] != *b"read" {
        wrong.push(format!(
            "the pread gave {:?}, expected \"read\"",
            String::from_utf8_lossy(&p[13].to_le_bytes()[..4])
        ));
    }
    let report = ch.close();
    let contents = |f: &File| -> Result<Vec<u8>, String> {
        let mut v = Vec::new();
        f.try_clone()
            .and_then(|mut f| {
                std::io::Seek::rewind(&mut f)?;
                f.read_to_end(&mut v)
            })
            .map_err(|e| format!("read back: {e}"))?;
        Ok(v)
    };
    for (what, f, want) in [
        ("the read-only file", &ro, &b"read-only file\n"[..]),
        ("the write-only file", &wo, &b"wroteBBBBBBBBBBB"[..]),
        ("the O_APPEND file", &ap, &b"head\ntail\n"[..]),
    ] {
        let got = contents(f)?;
        if got != want {
            wrong.push(format!(
                "{what} holds {:?}, expected {:?}",
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(want)
            ));
        }
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    // Every refused request reached the host or the ring and failed there; the
    // three within the declared access completed.
    let refused = if direct { 7 } else { 5 };
    let c = report.counters;
    if (c.completed, c.failed) != (3, refused) {
        return Err(format!("expected completed 3 + failed {refused}: {report}"));
    }
    Ok(format!(
        "{refused} requests beyond the declared access refused with -EBADF, nothing \
         changed, the declared access works; {report}"
    ))
}

/// How a row of the rulebook's table is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    /// Raw, past the public calls' checks: the transport alone answers (the host
    /// on forward and mailbox, `gpuio_direct_submit` on direct).
    Raw,
    /// Through the public call for its opcode (`gpuio_pwrite_staged`, `gpuio_write`,
    /// ...), whose checks answer first.
    Call,
}

/// One row: a request, how it is made, and the answer the rulebook gives it
/// (`core/src/request.rs`), the same on every transport.
struct Row {
    what: &'static str,
    via: Via,
    req: gpuio_core::abi::Request,
    expect: i64,
}

/// Endpoints of the rulebook's channel, in registration order.
const RB_FILE: u32 = 0;
const RB_READ_ONLY: u32 = 1;
const RB_PIPE: u32 = 2;
const RB_SOCKET: u32 = 3;
const RB_ENDPOINTS: u32 = 4;

/// What the host writes to the rulebook's socket before the kernel starts: the
/// table's good receives take it, 3 bytes each.
const RB_SOCKET_IN: &[u8] = b"PQRSTUVWX";
/// What the table's good sends put on the socket, in order: a raw SEND of staging
/// bytes 9..13, a raw WRITE of 13..15 (a send, on a socket), `gpuio_send` of 0..3.
const RB_SOCKET_OUT: &[u8] = b"jklmnoabc";

/// The table: bad requests of every kind (the reproductions of transports that
/// answered differently among them), then good ones that prove the channel still
/// works. `user` is the kernel's own staging offset, `staging` the area's length.
fn rulebook_rows(user: u64, staging: u64) -> Vec<Row> {
    use gpuio_core::abi::{op, Request};
    let (einval, ebadf, efault, espipe, enotsock) = (
        -i64::from(libc::EINVAL),
        -i64::from(libc::EBADF),
        -i64::from(libc::EFAULT),
        -i64::from(libc::ESPIPE),
        -i64::from(libc::ENOTSOCK),
    );
    let r = |op: u32, endpoint: u32, len: u32, offset: i64| Request {
        op,
        endpoint,
        len,
        flags: 0,
        staging_off: user,
        offset,
    };
    let at = |staging_off: u64, req: Request| Request { staging_off, ..req };
    let flags = |flags: u32, req: Request| Request { flags, ..req };
    let row = |what, via, req, expect| Row {
        what,
        via,
        req,
        expect,
    };
    use Via::{Call, Raw};
    let (f, ro, pipe, sock) = (RB_FILE, RB_READ_ONLY, RB_PIPE, RB_SOCKET);
    vec![
        row(
            "pwrite at offset -1 (the file position)",
            Raw,
            r(op::PWRITE, f, 8, -1),
            einval,
        ),
        row("pread at offset -1", Raw, r(op::PREAD, f, 8, -1), einval),
        row(
            "pwrite at offset i64::MIN",
            Raw,
            r(op::PWRITE, f, 8, i64::MIN),
            einval,
        ),
        row(
            "pwrite whose offset + len passes i64::MAX",
            Raw,
            r(op::PWRITE, f, 8, i64::MAX - 3),
            einval,
        ),
        row("pwrite of length 0", Raw, r(op::PWRITE, f, 0, 0), einval),
        row(
            "write of length 0 to a pipe",
            Raw,
            r(op::WRITE, pipe, 0, -1),
            einval,
        ),
        row("pwrite on a pipe", Raw, r(op::PWRITE, pipe, 8, 0), espipe),
        row(
            "pread on a write-only pipe (access before kind)",
            Raw,
            r(op::PREAD, pipe, 8, 0),
            ebadf,
        ),
        row(
            "pwrite with RWF_APPEND in the reserved flags",
            Raw,
            flags(libc::RWF_APPEND as u32, r(op::PWRITE, f, 8, 0)),
            einval,
        ),
        row(
            "write with the top bit of the reserved flags",
            Raw,
            flags(1 << 31, r(op::WRITE, pipe, 4, -1)),
            einval,
        ),
        row(
            "nop with reserved flags",
            Raw,
            flags(1, r(op::NOP, 0, 0, 0)),
            einval,
        ),
        row(
            "an unknown opcode of gpuio's family",
            Raw,
            r(op::BASE | 99, f, 8, 0),
            einval,
        ),
        row(
            "an opcode of another family",
            Raw,
            r(u32::from(b'T') << 24 | 1, f, 8, 0),
            einval,
        ),
        row("opcode 0", Raw, r(0, f, 8, 0), einval),
        row(
            "pwrite on an unregistered endpoint",
            Raw,
            r(op::PWRITE, RB_ENDPOINTS, 8, 0),
            ebadf,
        ),
        row(
            "pwrite on endpoint u32::MAX",
            Raw,
            r(op::PWRITE, u32::MAX, 8, 0),
            ebadf,
        ),
        row(
            "pwrite on a read-only endpoint",
            Raw,
            r(op::PWRITE, ro, 8, 0),
            ebadf,
        ),
        row(
            "write on a read-only endpoint",
            Raw,
            r(op::WRITE, ro, 8, -1),
            ebadf,
        ),
        row(
            "pwrite longer than the staging area",
            Raw,
            at(0, r(op::PWRITE, f, (staging + 1) as u32, 0)),
            einval,
        ),
        row(
            "pwrite running past the staging area",
            Raw,
            at(staging - 4, r(op::PWRITE, f, 8, 0)),
            efault,
        ),
        row(
            "pwrite whose staging range wraps around",
            Raw,
            at(u64::MAX - 2, r(op::PWRITE, f, 8, 0)),
            efault,
        ),
        row(
            "pread starting at the staging area's end",
            Raw,
            at(staging, r(op::PREAD, f, 1, 0)),
            efault,
        ),
        row(
            "gpuio_pwrite_staged at offset -1",
            Call,
            r(op::PWRITE, f, 8, -1),
            einval,
        ),
        row(
            "gpuio_pread_staged at offset -1",
            Call,
            r(op::PREAD, f, 8, -1),
            einval,
        ),
        row(
            "gpuio_pwrite_staged of length 0",
            Call,
            r(op::PWRITE, f, 0, 0),
            einval,
        ),
        row(
            "gpuio_pwrite_staged on a pipe",
            Call,
            r(op::PWRITE, pipe, 8, 0),
            espipe,
        ),
        row(
            "gpuio_write of length 0 to a pipe",
            Call,
            r(op::WRITE, pipe, 0, -1),
            einval,
        ),
        row(
            "gpuio_write of length 0 to an unregistered endpoint",
            Call,
            r(op::WRITE, RB_ENDPOINTS, 0, -1),
            ebadf,
        ),
        row(
            "gpuio_pwrite_staged on a read-only endpoint",
            Call,
            r(op::PWRITE, ro, 8, 0),
            ebadf,
        ),
        row(
            "gpuio_pwrite_staged running past the staging area",
            Call,
            at(staging - 4, r(op::PWRITE, f, 8, 0)),
            efault,
        ),
        row(
            "the checked path with RWF_APPEND in the flags",
            Call,
            flags(libc::RWF_APPEND as u32, r(op::PWRITE, f, 8, 0)),
            einval,
        ),
        row("send on a file", Raw, r(op::SEND, f, 8, -1), enotsock),
        row("recv on a file", Raw, r(op::RECV, f, 8, -1), enotsock),
        row("send on a pipe", Raw, r(op::SEND, pipe, 4, -1), enotsock),
        row(
            "recv on a write-only pipe (access before kind)",
            Raw,
            r(op::RECV, pipe, 4, -1),
            ebadf,
        ),
        row(
            "send on a read-only file (access before kind)",
            Raw,
            r(op::SEND, ro, 8, -1),
            ebadf,
        ),
        row(
            "send on an unregistered endpoint",
            Raw,
            r(op::SEND, RB_ENDPOINTS, 8, -1),
            ebadf,
        ),
        row("pwrite on a socket", Raw, r(op::PWRITE, sock, 8, 0), espipe),
        row("send of length 0", Raw, r(op::SEND, sock, 0, -1), einval),
        row(
            "send with MSG_DONTWAIT in the reserved flags",
            Raw,
            flags(libc::MSG_DONTWAIT as u32, r(op::SEND, sock, 4, -1)),
            einval,
        ),
        row(
            "recv running past the staging area",
            Raw,
            at(staging - 4, r(op::RECV, sock, 8, -1)),
            efault,
        ),
        row(
            "gpuio_send of length 0 to the socket",
            Call,
            r(op::SEND, sock, 0, -1),
            einval,
        ),
        row(
            "gpuio_recv of length 0 from the socket",
            Call,
            r(op::RECV, sock, 0, -1),
            einval,
        ),
        row(
            "gpuio_send on a read-only file",
            Call,
            r(op::SEND, ro, 4, -1),
            ebadf,
        ),
        row(
            "a good raw pwrite of 5 bytes at offset 0",
            Raw,
            r(op::PWRITE, f, 5, 0),
            5,
        ),
        row(
            "a good raw write of 4 bytes to the pipe",
            Raw,
            at(user + 5, r(op::WRITE, pipe, 4, -1)),
            4,
        ),
        row("a good gpuio_nop", Call, r(op::NOP, 0, 0, 0), 0),
        row(
            "a good raw send of 4 bytes to the socket",
            Raw,
            at(user + 9, r(op::SEND, sock, 4, -1)),
            4,
        ),
        row(
            "a good raw write of 2 bytes to the socket",
            Raw,
            at(user + 13, r(op::WRITE, sock, 2, -1)),
            2,
        ),
        row(
            "a good gpuio_send of 3 bytes to the socket",
            Call,
            r(op::SEND, sock, 3, -1),
            3,
        ),
        row(
            "a good raw recv of 3 bytes from the socket",
            Raw,
            at(user + 32, r(op::RECV, sock, 3, -1)),
            3,
        ),
        row(
            "a good raw read of 3 bytes from the socket",
            Raw,
            at(user + 40, r(op::READ, sock, 3, -1)),
            3,
        ),
        row(
            "a good gpuio_recv of the socket's last 3 bytes",
            Call,
            r(op::RECV, sock, 8, -1),
            3,
        ),
    ]
}

/// `Request`s as the header lays them out (`gpuio_request`, 32 bytes each).
fn request_bytes(rows: &[Row]) -> Vec<u8> {
    let mut v = Vec::with_capacity(rows.len() * 32);
    for Row { req, .. } in rows {
        v.extend(req.op.to_le_bytes());
        v.extend(req.endpoint.to_le_bytes());
        v.extend(req.len.to_le_bytes());
        v.extend(req.flags.to_le_bytes());
        v.extend(req.staging_off.to_le_bytes());
        v.extend(req.offset.to_le_bytes());
    }
    v
}

/// One table of bad requests, the same on every transport: each row, raw or
/// through its public call, gets the rulebook's answer, nothing reaches the file
/// or the pipe, and the channel counts the same on every transport (raw requests
/// reach the transport and fail there, refused calls never leave the device).
fn rulebook(t: &Target<'_>) -> Result<String, String> {
    const _: () = assert!(std::mem::size_of::<gpuio_core::abi::Request>() == 32);
    let path = t.dir.join("rulebook.bin");
    std::fs::write(&path, b"0123456789").map_err(|e| format!("write {}: {e}", path.display()))?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("open {}: {e}", path.display()))?;
    let (mut rx, tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let (ours, mut peer) =
        std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    std::io::Write::write_all(&mut peer, RB_SOCKET_IN)
        .map_err(|e| format!("write to the socket: {e}"))?;
    let mut cfg = ChannelConfig::default();
    let eps = [
        cfg.endpoint(endpoint("file", &file, Access::READ_WRITE)?),
        cfg.endpoint(endpoint("read-only", &file, Access::READ)?),
        cfg.endpoint(
            Endpoint::new(
                "pipe",
                EndpointKind::Pipe,
                Access::WRITE,
                std::os::fd::AsFd::as_fd(&tx),
            )
            .map_err(|e| format!("register the pipe: {e}"))?,
        ),
        cfg.endpoint(
            Endpoint::socket("socket", &ours).map_err(|e| format!("register the socket: {e}"))?,
        ),
    ];
    drop(ours); // the channel holds its own
    if eps != [RB_FILE, RB_READ_ONLY, RB_PIPE, RB_SOCKET] {
        return Err(format!("endpoints registered as {eps:?}"));
    }
    let ch = (t.open)(cfg)?;
    let (user, room) = ch.user_staging();
    if room < 64 {
        return Err(format!(
            "the kernel's own staging area is {room} bytes, 64 needed"
        ));
    }
    let rows = rulebook_rows(user, ch.staging().len as u64);
    let bytes = request_bytes(&rows);
    let table = t
        .device
        .buffer(bytes.len(), &bytes)
        .map_err(|e| format!("request table: {e}"))?;
    let mut params = vec![table.device_addr(), rows.len() as u64];
    params.extend(rows.iter().map(|r| u64::from(r.via == Via::Call)));
    let p = run_kernel(t, &ch, "rulebook", 1, &params)?;
    let mut wrong: Vec<String> = rows
        .iter()
        .zip(&p[2..])
        .filter(|(row, &got)| got as i64 != row.expect)
        .map(|(row, &got)| {
            format!(
                "{} ({:?}): got {}, expected {}",
                row.what,
                row.via,
                errno_name(got as i64),
                errno_name(row.expect)
            )
        })
        .collect();
    let report = ch.close();
    // The pipe holds the good write alone: anything a bad request wrote would come
    // before it, and nothing comes after the host's own end mark.
    std::io::Write::write_all(&mut &tx, b"END").map_err(|e| format!("write the end mark: {e}"))?;
    let mut piped = [0u8; 7];
    rx.read_exact(&mut piped)
        .map_err(|e| format!("read the pipe: {e}"))?;
    if &piped != b"fghiEND" {
        wrong.push(format!(
            "the pipe holds {:?}, expected \"fghiEND\"",
            String::from_utf8_lossy(&piped)
        ));
    }
    // The socket holds the good sends alone, and the good receives took every byte
    // the host wrote (the kernel has ended: what it sent is there).
    peer.set_nonblocking(true)
        .map_err(|e| format!("socket: {e}"))?;
    let mut sent = Vec::new();
    let mut chunk = [0u8; 64];
    loop {
        match std::io::Read::read(&mut peer, &mut chunk) {
            Ok(0) => break,
            Ok(n) => sent.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(format!("read the socket: {e}")),
        }
    }
    if sent != RB_SOCKET_OUT {
        wrong.push(format!(
            "the socket's peer got {:?}, expected {:?}",
            String::from_utf8_lossy(&sent),
            String::from_utf8_lossy(RB_SOCKET_OUT)
        ));
    }
    let content = std::fs::read(&path).map_err(|e| format!("read back: {e}"))?;
    if content != b"abcde56789" {
        wrong.push(format!(
            "the file holds {:?}, expected \"abcde56789\"",
            String::from_utf8_lossy(&content)
        ));
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let reached = rows
        .iter()
        .filter(|r| r.via == Via::Raw || r.expect >= 0)
        .count() as u64;
    let good = rows.iter().filter(|r| r.expect >= 0).count() as u64;
    let c = report.counters;
    if (c.submitted, c.completed, c.failed) != (reached, good, reached - good) {
        return Err(format!(
            "expected submitted {reached} = completed {good} + failed {}: {report}",
            reached - good
        ));
    }
    Ok(format!(
        "{} bad requests answered as the rulebook says ({} raw, refused by the transport), \
         nothing written; {report}",
        rows.len() as u64 - good,
        reached - good
    ))
}

/// A channel for the queue cases: device calls (a full or empty queue waited on)
/// may wait a minute, so that a starved machine slows a case down and never fails
/// it; the cases check what arrives, not how fast.
fn patient() -> ChannelConfig {
    ChannelConfig {
        call_timeout: Duration::from_secs(60),
        ..ChannelConfig::default()
    }
}

fn queue_config(max_message: u32, capacity: u32, rings: u32) -> QueueConfig {
    QueueConfig {
        max_message,
        capacity,
        rings,
        timeout: Duration::from_secs(60),
    }
}

/// Every thread of a launch filling the device sends numbered messages of 8 to
/// 200 bytes to one queue to the host while a host thread receives them: each
/// arrives once and whole, each thread's in the order it sent them, and close
/// reports `sent = received + 0 in flight`. At least 16 messages per thread and
/// 16,384 in all, so that every ring of 256 cells wraps on any device.
fn queue_to_host(t: &Target<'_>) -> Result<String, String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    const MAX: u32 = 200;
    const RINGS: u32 = 16;
    let (grid, block) = t.device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let each = 16u64.max(16_384u64.div_ceil(threads));
    let total = threads * each;
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::queue_to_host(
        "numbered",
        queue_config(MAX, 256, RINGS),
    ));
    let ch = (t.open)(cfg)?;
    let mut rx = ch.receiver(ep).map_err(|e| format!("receiver: {e}"))?;
    let done = Arc::new(AtomicBool::new(false));
    // Receives until it has every message, or the kernel ended and the queue is
    // empty; checks each as it comes. Returns how many it took and the first fault.
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || -> (u64, Option<String>) {
            let mut next = vec![0u64; threads as usize];
            let mut n = 0u64;
            let mut buf = Vec::new();
            while n < total {
                match rx.recv_into(&mut buf, Duration::from_millis(100)) {
                    Ok(()) => {}
                    Err(RecvError::Timeout(_)) if !done.load(Ordering::Acquire) => continue,
                    Err(RecvError::Timeout(_)) => break,
                    Err(e) => return (n, Some(format!("after {n} messages: {e}"))),
                }
                let Some(key) = queue_message_key(&buf, MAX) else {
                    return (
                        n,
                        Some(format!("message {n} ({} bytes) is torn", buf.len())),
                    );
                };
                let (th, i) = (key >> 32, key & 0xffff_ffff);
                match next.get_mut(th as usize) {
                    Some(want) if *want == i => *want += 1,
                    Some(want) => {
                        return (
                            n,
                            Some(format!(
                                "thread {th}'s message {i} came when {want} was next"
                            )),
                        )
                    }
                    None => return (n, Some(format!("a message from thread {th} of {threads}"))),
                }
                n += 1;
            }
            (n, None)
        })
    };
    let start = Instant::now();
    let ran = t
        .device
        .launch(
            "queue_numbered",
            grid,
            block,
            &ch,
            &[u64::from(ep), each, u64::from(MAX), 0, 0, 0],
        )
        .map_err(|e| format!("launch queue_numbered ({grid} x {block}): {e}"))
        .and_then(|k| {
            k.join(KERNEL_TIMEOUT)
                .map_err(|e| format!("queue_numbered ({grid} x {block}): {e}"))
        });
    done.store(true, Ordering::Release);
    let (received, fault) = reader
        .join()
        .map_err(|_| "the receiving thread panicked".to_string())?;
    let took = start.elapsed();
    let report = ch.close();
    let p = ran?;
    if let Some(fault) = fault {
        return Err(format!("{fault}; {report}"));
    }
    if p[4] != 0 || p[3] != total {
        return Err(format!(
            "{} of {total} messages sent, {} failed, first with {}; {report}",
            p[3],
            p[4],
            errno_name(p[5] as i64)
        ));
    }
    if received != total {
        return Err(format!("{received} of {total} messages received; {report}"));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let q = report
        .queues
        .first()
        .ok_or_else(|| format!("close reports no queue: {report}"))?;
    if (q.sent, q.received, q.in_flight) != (total, total, 0) {
        return Err(format!(
            "close must report sent {total} = received {total} + in flight 0: {report}"
        ));
    }
    Ok(format!(
        "{grid} x {block} threads x {each} messages of 8..={MAX} bytes over {RINGS} rings in \
         {took:.2?}: each once, whole, in its thread's order; {report}"
    ))
}

/// A host thread sends messages of 8 to 200 bytes through a queue to the device
/// to every thread of a launch (every SM or core, up to 128 threads each: 135,168
/// readers of one host cell measure contention, not correctness), then closes its
/// end: the kernel receives each message once and whole (count and sum of keys),
/// and every thread's `gpuio_recv` ends with 0.
fn queue_to_device(t: &Target<'_>) -> Result<String, String> {
    const MAX: u32 = 200;
    let (grid, full_block) = t.device.full_shape();
    let block = full_block.min(128);
    let threads = u64::from(grid) * u64::from(block);
    let total = (4 * threads).max(4096);
    let mut cfg = patient();
    let ep = cfg.endpoint(Endpoint::queue_to_device("work", queue_config(MAX, 256, 1)));
    let ch = (t.open)(cfg)?;
    let mut tx = ch.sender(ep).map_err(|e| format!("sender: {e}"))?;
    let start = Instant::now();
    let running = t
        .device
        .launch(
            "queue_take",
            grid,
            block,
            &ch,
            &[u64::from(ep), u64::from(MAX), 0, 0, 0, 0, 0, 0],
        )
        .map_err(|e| format!("launch queue_take ({grid} x {block}): {e}"))?;
    let mut sent = 0u64;
    let mut send_error = None;
    for key in 0..total {
        if let Err(e) = tx.send(&queue_message(key, MAX)) {
            send_error = Some(format!("message {key}: {e}"));
            break;
        }
        sent += 1;
    }
    tx.close();
    let ran = running
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("queue_take ({grid} x {block}): {e}"));
    let took = start.elapsed();
    let report = ch.close();
    let p = ran?;
    if let Some(e) = send_error {
        return Err(format!("the host's send failed at {e}; {report}"));
    }
    if p[6] != 0 {
        return Err(format!(
            "{} receives failed, first with {}; {report}",
            p[6],
            errno_name(p[7] as i64)
        ));
    }
    let sum = total * (total + 1) / 2;
    if (p[2], p[3], p[4]) != (total, sum, 0) {
        return Err(format!(
            "the kernel received {} whole messages (key sum {}) and {} torn ones; expected \
             {total} (key sum {sum}); {report}",
            p[2], p[3], p[4]
        ));
    }
    if p[5] != threads {
        return Err(format!(
            "{} of {threads} threads saw gpuio_recv return 0 at the end; {report}",
            p[5]
        ));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let q = report
        .queues
        .first()
        .ok_or_else(|| format!("close reports no queue: {report}"))?;
    if (q.sent, q.received, q.in_flight) != (sent, sent, 0) {
        return Err(format!(
            "close must report sent {sent} = received {sent} + in flight 0: {report}"
        ));
    }
    Ok(format!(
        "{total} messages of 8..={MAX} bytes to {grid} x {block} threads in {took:.2?}: each \
         once and whole, every thread's gpuio_recv ended with 0; {report}"
    ))
}

/// Queues used the wrong way from a kernel get the errno `gpuio.h` documents and
/// change nothing: receiving on a queue to the host or sending on one to the
/// device is -EBADF, a message over the maximum -EMSGSIZE (too long for the
/// receiver's buffer: -EMSGSIZE and it stays queued), a try on an empty or full
/// queue -EAGAIN; once the host closed, gpuio_recv returns 0.
fn queue_misuse(t: &Target<'_>) -> Result<String, String> {
    let mut cfg = ChannelConfig::default();
    let to_host = cfg.endpoint(Endpoint::queue_to_host("out", queue_config(64, 4, 1)));
    let empty = cfg.endpoint(Endpoint::queue_to_device("empty", queue_config(64, 4, 1)));
    let closed = cfg.endpoint(Endpoint::queue_to_device("closed", queue_config(128, 4, 1)));
    let ch = (t.open)(cfg)?;
    let mut rx = ch.receiver(to_host).map_err(|e| format!("receiver: {e}"))?;
    let _open = ch.sender(empty).map_err(|e| format!("sender: {e}"))?;
    let mut tx = ch.sender(closed).map_err(|e| format!("sender: {e}"))?;
    let one = queue_message(7, 128);
    tx.try_send(&one)
        .map_err(|e| format!("the host's one message: {e}"))?;
    tx.close();
    let mut params = vec![u64::from(to_host), u64::from(empty), u64::from(closed), 0];
    params.resize(4 + QUEUE_MISUSE_CASES.len(), 0);
    let p = run_kernel(t, &ch, "queue_misuse", 1, &params)?;
    let e = |errno: i32| -i64::from(errno);
    let expect: [i64; 12] = [
        e(libc::EBADF),
        e(libc::EBADF),
        e(libc::EMSGSIZE),
        e(libc::EBADF),
        e(libc::EAGAIN),
        4,
        e(libc::EAGAIN),
        e(libc::EMSGSIZE),
        one.len() as i64,
        7,
        0,
        0,
    ];
    let mut wrong: Vec<String> = QUEUE_MISUSE_CASES
        .iter()
        .zip(expect)
        .zip(&p[4..])
        .filter(|((_, want), &got)| got as i64 != *want)
        .map(|((case, want), &got)| {
            format!(
                "{case}: got {}, expected {}",
                errno_name(got as i64),
                errno_name(want)
            )
        })
        .collect();
    // The queue to the host holds the four messages that fitted, whole, and no more.
    for key in 0..4u64 {
        match rx.try_recv() {
            Ok(m) if queue_message_key(&m, 64) == Some(key) => {}
            Ok(m) => wrong.push(format!(
                "message {key} to the host is torn or foreign ({} bytes)",
                m.len()
            )),
            Err(e) => wrong.push(format!("message {key} to the host: {e}")),
        }
    }
    if let Ok(m) = rx.try_recv() {
        wrong.push(format!(
            "the queue to the host holds a fifth message ({} bytes)",
            m.len()
        ));
    }
    let report = ch.close();
    let counts: Vec<(u64, u64, u64)> = report
        .queues
        .iter()
        .map(|q| (q.sent, q.received, q.in_flight))
        .collect();
    if counts != [(4, 4, 0), (0, 0, 0), (1, 1, 0)] {
        wrong.push(format!(
            "close must report out 4 = 4 + 0, empty 0 = 0 + 0, closed 1 = 1 + 0: {report}"
        ));
    }
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(format!(
        "{} misuses answered as documented; the four messages that fitted arrived whole; {report}",
        QUEUE_MISUSE_CASES.len()
    ))
}

/// A kernel that moves the direct ring's SQ tail a lap ahead of what gpuio's
/// publisher released (SQPOLL would replay stale SQEs for as long as the ring
/// lives): the host sees the protocol violation while the kernel still runs
/// ([`Channel::violation`]), stops the ring, and close is bounded and not clean.
fn hostile_sq_tail(t: &Target<'_>) -> Result<String, String> {
    /// How long the kernel runs on after the scribble.
    const RUNS_ON: Duration = Duration::from_secs(3);
    let ch = (t.open)(ChannelConfig {
        call_timeout: Duration::from_millis(500),
        ..ChannelConfig::default()
    })?;
    let launched = Instant::now();
    let running = t
        .device
        .launch(
            "hostile_sq_tail",
            1,
            1,
            &ch,
            &[RUNS_ON.as_nanos() as u64, u64::MAX, u64::MAX],
        )
        .map_err(|e| format!("launch hostile_sq_tail: {e}"))?;
    // Looked for while the kernel certainly runs on.
    let seen = loop {
        if let Some(v) = ch.violation() {
            break Some((v, launched.elapsed()));
        }
        if launched.elapsed() >= RUNS_ON - Duration::from_millis(500) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let p = running
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("hostile_sq_tail: {e}"))?;
    let report = ch.close();
    if p[1] != 0 {
        return Err(format!(
            "the NOP before the scribble returned {}; {report}",
            errno_name(p[1] as i64)
        ));
    }
    let Some((violation, after)) = seen else {
        return Err(format!(
            "no protocol violation seen while the kernel ran; {report}"
        ));
    };
    if !violation.starts_with("protocol violation") || !violation.contains("SQ tail") {
        return Err(format!(
            "the violation does not name the SQ tail: {violation}"
        ));
    }
    if report.is_clean()
        || !report
            .problems
            .iter()
            .any(|p| p.starts_with("protocol violation"))
    {
        return Err(format!("close must report the violation: {report}"));
    }
    if report.elapsed > Duration::from_secs(5) {
        return Err(format!("close took {:?}: {report}", report.elapsed));
    }
    Ok(format!(
        "violation seen {after:.2?} after the launch, the kernel still running; the NOP \
         after it: {}; {report}",
        errno_name(p[2] as i64)
    ))
}

/// A kernel that scribbles forward stamps beside an honest read: READY for the next
/// lap on the read's own entry while the read is unanswered, READY for a position an
/// entry cannot hold, READY for a NOP a thousand laps ahead, DONE for a wrong
/// position. The read is answered, 320 NOPs from 64 threads afterwards all go
/// through (every entry five times over); the host reports the first violation
/// while the kernel runs ([`Channel::violation`]), and close reports each kind of
/// violation within its bound, never clean.
fn hostile_stamps(t: &Target<'_>) -> Result<String, String> {
    let (rx, tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let mut cfg = ChannelConfig {
        slots: 64,
        call_timeout: Duration::from_secs(3),
        ..ChannelConfig::default()
    };
    let pipe = cfg.endpoint(
        Endpoint::new(
            "pipe",
            EndpointKind::Pipe,
            Access::READ,
            std::os::fd::AsFd::as_fd(&rx),
        )
        .map_err(|e| format!("register the pipe: {e}"))?,
    );
    let ch = (t.open)(cfg)?;
    // Two threads in different blocks: the scribbler never waits on the reader's warp.
    let running = t
        .device
        .launch("hostile_stamps", 2, 1, &ch, &[u64::from(pipe), 0, 0])
        .map_err(|e| format!("launch hostile_stamps: {e}"))?;
    wait_for_the_scribbles(&ch);
    // Seen while the kernel runs (its read waits for the pipe), not only at close.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = ch.violation();
    while seen.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
        seen = ch.violation();
    }
    // Enough for two reads: a phantom second read cannot take the first one's bytes.
    std::io::Write::write_all(&mut &tx, &[7u8; 16]).map_err(|e| format!("write the pipe: {e}"))?;
    let p = running
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("hostile_stamps: {e}"))?;
    let nops = run_kernel(t, &ch, "nop", 64, &[5, 0, 0]);
    drop(tx);
    let report = ch.close();
    if p[2] as i64 == -1 {
        return Err(format!("the read's entry was never seen READY; {report}"));
    }
    if p[1] != 8 {
        return Err(format!(
            "the read beside the scribbles returned {}, not 8; {report}",
            errno_name(p[1] as i64)
        ));
    }
    if !seen.is_some_and(|v| v.starts_with("protocol violation")) {
        return Err(format!(
            "no protocol violation seen while the kernel ran; {report}"
        ));
    }
    let nops = nops?;
    if nops[1] != 0 {
        return Err(format!(
            "{} of 320 NOPs after the scribbles failed, first with {}; {report}",
            nops[1],
            errno_name(nops[2] as i64)
        ));
    }
    if report.is_clean() || report.elapsed > Duration::from_secs(5) {
        return Err(format!(
            "close must be bounded and report the scribbles: {report}"
        ));
    }
    for (what, words) in [
        (
            "the READY on the unanswered read's entry",
            "still unanswered",
        ),
        (
            "the READY for a position the entry cannot hold",
            "cannot hold",
        ),
        (
            "the requests after the position a thousand laps ahead",
            "after a later one",
        ),
    ] {
        if !report
            .problems
            .iter()
            .any(|p| p.starts_with("protocol violation") && p.contains(words))
        {
            return Err(format!("no violation for {what}: {report}"));
        }
    }
    Ok(report.to_string())
}

/// Waits (5 s at most) until `gpuio_k_hostile_stamps` has scribbled: the NOP it
/// stamps a thousand laps ahead, after its other stamps, is answered (the read
/// cannot be: the pipe is empty until the caller writes it); then 100 ms more, in
/// which the forwarder looks at every entry many times over. Writing the pipe
/// sooner could let the read be answered first, and the scribble on its entry then
/// overwrite the answer its own waiter was about to see.
pub fn wait_for_the_scribbles(ch: &Channel) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while ch.counters().completed == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(100));
}

/// On a channel of long slots in several groups of rings (forward: 1024 slots of
/// 1 MiB make 16 rings, in groups of 4 whose forwarders' workers take turns at a
/// file), a pwrite of more than 64 KiB takes a slot in the group of its endpoint
/// (endpoint % groups), at its warp's place there (warp % group), while any other
/// request takes its warp's ring (warp % rings); lanes of a warp that take slots
/// together go to the group only if every one of them asks for it; and every
/// file's bytes land exact. Checked from the slots the kernel's warps and lanes
/// took (`gpuio_k_route_rings`).
fn routed_long_writes(t: &Target<'_>) -> Result<String, String> {
    const FILES: u64 = 4;
    const CHUNK: u64 = 128 << 10;
    const UNITS: u32 = 256;
    const RECORDED: u64 = 64;
    /// Units whose lanes record the slots they took together, and the widest warp.
    const LANE_UNITS: u64 = 8;
    const MAX_LANES: u64 = 64;
    let files: Vec<(File, std::path::PathBuf)> = (0..FILES)
        .map(|f| {
            let path = t.dir.join(format!("routed-{f}.bin"));
            rw_file(&path).map(|file| (file, path))
        })
        .collect::<Result<_, _>>()?;
    let mut cfg = ChannelConfig {
        slots: 1024,
        slot_size: 1 << 20,
        ..ChannelConfig::default()
    };
    let mut first = None;
    for (f, (file, _)) in files.iter().enumerate() {
        let ep = cfg.endpoint(endpoint(&format!("routed {f}"), file, Access::WRITE)?);
        first.get_or_insert(ep);
    }
    let first = u64::from(first.unwrap_or(0));
    let ch = (t.open)(cfg)?;
    let image: Vec<u8> = (0..u64::from(UNITS) * CHUNK).map(pattern_byte).collect();
    let src = t
        .device
        .buffer(image.len(), &image)
        .map_err(|e| format!("source buffer: {e}"))?;
    let lanes_base = 16 + 3 * RECORDED as usize;
    let mut params = vec![0u64; lanes_base + 3 * (LANE_UNITS * MAX_LANES) as usize];
    params[..5].copy_from_slice(&[first, FILES, RECORDED, CHUNK, src.device_addr()]);
    params[10] = LANE_UNITS;
    let p = run_kernel(t, &ch, "route_rings", UNITS, &params)?;
    if p[5] != 0 {
        return Err(format!(
            "{} of the kernel's slots or writes failed, first with {}",
            p[5],
            errno_name(p[6] as i64)
        ));
    }
    let (units, rings, group) = (p[7], p[8], p[9]);
    if rings != 16 || group != 4 {
        return Err(format!(
            "the channel has {rings} rings in groups of {group}, not 16 in groups of 4 \
             (is GPUIO_FORWARD_RINGS, GPUIO_FORWARD_WQ_SHARE or GPUIO_FORWARD_ROUTE_WRITES set?)"
        ));
    }
    let per = 1024 / rings;
    // The ring of slot index + 1 as the kernel recorded it (0: none taken).
    let ring_of = |what: &str, slot: u64| match slot {
        0 => Err(format!("{what} recorded no slot")),
        s => Ok((s - 1) / per),
    };
    // The documented rule (gpuio_forward_route): endpoint ep's group, at the warp's
    // place within a group.
    let routed_ring = |ep: u64, warp: u64| (ep % (rings / group)) * group + warp % group;
    let lanes = u64::from(UNITS) / units.max(1);
    if lanes == 0 || lanes > MAX_LANES {
        return Err(format!(
            "{units} units of {UNITS} threads: {lanes} lanes a unit"
        ));
    }
    for u in 0..units.min(RECORDED) {
        let at = 16 + 3 * u as usize;
        let warp = p[at];
        let by_warp = ring_of(&format!("unit {u}"), p[at + 1])?;
        let routed = ring_of(&format!("unit {u}"), p[at + 2])?;
        let ep = first + u % FILES;
        let want = routed_ring(ep, warp);
        if by_warp != warp % rings || routed != want {
            return Err(format!(
                "unit {u} (warp {warp}, endpoint {ep}) took ring {by_warp} by warp and {routed} \
                 for its long write, not {} and {want}",
                warp % rings
            ));
        }
        if u >= LANE_UNITS {
            continue;
        }
        // Every lane at once: the route holds only where every calling lane asks
        // for the same one (a warp of one lane always does).
        let alone = lanes == 1;
        let wants = [
            ("every lane asking for its endpoint's group", want),
            (
                "each lane asking for another endpoint's group",
                if alone { want } else { warp % rings },
            ),
            ("half the lanes asking for no group", warp % rings),
        ];
        for rank in 0..lanes {
            let at = lanes_base + 3 * (u * lanes + rank) as usize;
            for (k, (how, want)) in wants.iter().enumerate() {
                let took = ring_of(&format!("unit {u}, lane {rank}"), p[at + k])?;
                if took != *want {
                    return Err(format!(
                        "unit {u} (warp {warp}, endpoint {ep}), lane {rank} of {lanes}, with \
                         {how}: took ring {took}, not {want}"
                    ));
                }
            }
        }
    }
    for (f, (file, path)) in files.iter().enumerate() {
        let mut got = Vec::new();
        (&*file)
            .read_to_end(&mut got)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut want = Vec::new();
        for u in (f as u64..units).step_by(FILES as usize) {
            want.extend_from_slice(&image[(u * CHUNK) as usize..((u + 1) * CHUNK) as usize]);
        }
        if got != want {
            return Err(format!(
                "{} holds {} bytes, not the {} its units wrote",
                path.display(),
                got.len(),
                want.len()
            ));
        }
    }
    let detail = check_close(ch)?;
    Ok(format!(
        "{units} units: long writes in their file's ring group, {FILES} files exact; {detail}"
    ))
}
