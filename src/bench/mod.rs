//! `gpuio bench`: each transport's figures next to references measured in the same
//! run, on the same machine and file system.
//!
//! Figures (per transport):
//! * NOP round trip, one device thread, sequential — reference: one host thread
//!   submitting the same NOPs through an ordinary io_uring and waiting for each;
//! * NOP throughput, 64 device threads;
//! * `gpuio_pwrite` of the conformance pattern (64 threads, 1 B … 1 MiB) to a file —
//!   reference: one host thread `pwrite`-ing exactly the same ranges to a file in
//!   the same directory;
//! * `gpuio_printf` lines from 64 threads to a file — reference: one host thread
//!   formatting the same lines with `snprintf` and `write`-ing each;
//! * the whole device (`Device::full_shape`: every SM × 1024 threads on a GPU),
//!   each thread a 48-byte `gpuio_pwrite`, a `gpuio_pread` of it back and a
//!   `gpuio_printf`, on a default channel: requests/s, how many threads made the
//!   whole round trip, and the host CPU time per million requests — reference: one
//!   host thread doing the same `pwrite`, `pread` and `write` for every row.
//!
//! Host queues, once per backend: [`queues`].

pub mod queues;

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, TransportKind};
use gpuio_device::kernels::{pattern_byte, writes_of, REGION};
use gpuio_device::Device;

use crate::conformance::{expected_line, stdout_file_config, Opener};

/// How much work each figure does.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub nops: u64,
    pub writes_per_thread: u64,
    pub lines_per_thread: u64,
    pub threads: u32,
}

impl Scale {
    pub const QUICK: Scale = Scale {
        nops: 2_000,
        writes_per_thread: 200,
        lines_per_thread: 100,
        threads: 64,
    };
    pub const FULL: Scale = Scale {
        nops: 20_000,
        writes_per_thread: 1000,
        lines_per_thread: 1000,
        threads: 64,
    };
}

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// What a figure is held against, measured in the same run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Reference {
    pub what: String,
    pub value: f64,
}

/// One measured figure and the reference it is held against.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figure {
    pub what: String,
    pub value: f64,
    pub unit: &'static str,
    pub better: Better,
    pub reference: Option<Reference>,
}

impl Figure {
    fn new(what: String, value: f64, unit: &'static str, better: Better) -> Self {
        Self {
            what,
            value,
            unit,
            better,
            reference: None,
        }
    }

    fn against(mut self, what: &str, value: Option<f64>) -> Self {
        self.reference = value.map(|value| Reference {
            what: what.to_string(),
            value,
        });
        self
    }

    /// value / reference, where there is a reference.
    pub fn ratio(&self) -> Option<f64> {
        self.reference.as_ref().map(|r| self.value / r.value)
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<44} {:>10.2} {:<6}", self.what, self.value, self.unit)?;
        if let (Some(r), Some(ratio)) = (&self.reference, self.ratio()) {
            let better = match self.better {
                Better::Higher => "higher is better",
                Better::Lower => "lower is better",
            };
            write!(
                f,
                "  vs {}: {:.2} {} ({ratio:.2}x, {better})",
                r.what, r.value, self.unit
            )?;
        }
        Ok(())
    }
}

/// A figure with its ratio, for `--json`.
#[derive(serde::Serialize)]
pub struct JsonFigure<'a> {
    #[serde(flatten)]
    pub figure: &'a Figure,
    pub ratio: Option<f64>,
}

const KERNEL_TIMEOUT: Duration = Duration::from_secs(300);

fn launch_wait(
    device: &dyn Device,
    ch: &Channel,
    kernel: &str,
    threads: u32,
    params: &[u64],
) -> Result<(Vec<u64>, Duration), String> {
    let block = threads.min(64);
    let start = Instant::now();
    let run = device
        .launch(kernel, threads.div_ceil(block), block, ch, params)
        .map_err(|e| format!("launch {kernel}: {e}"))?;
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("{kernel}: {e}"))?;
    Ok((p, start.elapsed()))
}

fn fail_check(p: &[u64], at: usize, what: &str) -> Result<(), String> {
    if p[at] != 0 {
        return Err(format!(
            "{what}: {} calls failed, first with {}",
            p[at],
            p[at + 1] as i64
        ));
    }
    Ok(())
}

/// One host thread doing `n` io_uring NOPs, each submitted and waited for.
fn host_uring_nop_us(n: u64) -> Result<f64, String> {
    let mut ring = io_uring::IoUring::new(8).map_err(|e| format!("io_uring_setup: {e}"))?;
    let start = Instant::now();
    for i in 0..n {
        let nop = io_uring::opcode::Nop::new().build().user_data(i);
        // SAFETY: a NOP references no memory.
        unsafe { ring.submission().push(&nop) }.map_err(|_| "submission queue full".to_string())?;
        ring.submit_and_wait(1)
            .map_err(|e| format!("io_uring_enter: {e}"))?;
        ring.completion().for_each(drop);
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / n as f64)
}

/// Runs every figure for one transport.
/// Every figure of one transport, and its whole-device measurement (what a
/// calibration keeps; `pair` and `device` are the caller's to fill).
pub fn run_transport(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<(Vec<Figure>, crate::calibration::Measured), String> {
    let mut figures = Vec::new();

    // NOP latency and throughput. One NOP first, untimed: the first launch on a
    // device may compile and load the kernels (NVRTC: up to a minute, cold).
    let ch = open(ChannelConfig::default())?;
    let (p, _) = launch_wait(device, &ch, "nop", 1, &[1, 0, 0])?;
    fail_check(&p, 1, "nop (warm-up)")?;
    let (p, t1) = launch_wait(device, &ch, "nop", 1, &[scale.nops, 0, 0])?;
    fail_check(&p, 1, "nop")?;
    let reference = host_uring_nop_us(scale.nops).ok();
    figures.push(
        Figure::new(
            format!("{transport}: NOP round trip, 1 thread"),
            t1.as_secs_f64() * 1e6 / scale.nops as f64,
            "us/op",
            Better::Lower,
        )
        .against("host thread, io_uring NOP", reference),
    );
    let per = (scale.nops / u64::from(scale.threads)).max(10);
    let (p, tn) = launch_wait(device, &ch, "nop", scale.threads, &[per, 0, 0])?;
    fail_check(&p, 1, "nop")?;
    figures.push(Figure::new(
        format!("{transport}: NOPs, {} threads", scale.threads),
        (per * u64::from(scale.threads)) as f64 / tn.as_secs_f64() / 1e6,
        "Mop/s",
        Better::Higher,
    ));
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    figures.extend(latency(device, transport, open, dir, scale)?);

    // pwrite throughput, against the host writing the same ranges.
    let threads = u64::from(scale.threads);
    let image: Vec<u8> = (0..threads * REGION).map(pattern_byte).collect();
    let path = dir.join(format!("bench-{transport}.bin"));
    let file = create_rw(&path)?;
    let mut cfg = ChannelConfig::default();
    let ep =
        cfg.endpoint(Endpoint::file("bench", &file, Access::WRITE).map_err(|e| e.to_string())?);
    let ch = open(cfg)?;
    let src = device
        .buffer(image.len(), &image)
        .map_err(|e| e.to_string())?;
    let (p, tw) = launch_wait(
        device,
        &ch,
        "pwrite_pattern",
        scale.threads,
        &[
            u64::from(ep),
            src.device_addr(),
            scale.writes_per_thread,
            0,
            0,
            0,
        ],
    )?;
    fail_check(&p, 3, "pwrite")?;
    let bytes = p[5];
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let ref_path = dir.join(format!("bench-{transport}-host.bin"));
    let ref_file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&ref_path)
        .map_err(|e| format!("open {}: {e}", ref_path.display()))?;
    let start = Instant::now();
    for th in 0..threads {
        for (off, n) in writes_of(th, scale.writes_per_thread) {
            let range = off as usize..off as usize + n as usize;
            ref_file
                .write_all_at(&image[range], off)
                .map_err(|e| format!("host pwrite: {e}"))?;
        }
    }
    let th = start.elapsed();
    figures.push(
        Figure::new(
            format!("{transport}: pwrite 1 B..1 MiB, {} threads", scale.threads),
            bytes as f64 / tw.as_secs_f64() / 1e6,
            "MB/s",
            Better::Higher,
        )
        .against(
            "one host thread, pwrite",
            Some(bytes as f64 / th.as_secs_f64() / 1e6),
        ),
    );
    drop((file, ref_file));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&ref_path);

    // printf lines.
    let out_path = dir.join(format!("bench-{transport}-printf.txt"));
    let (_out, cfg) = stdout_file_config(&out_path)?;
    let ch = open(cfg)?;
    let (p, tp) = launch_wait(
        device,
        &ch,
        "printf_lines",
        scale.threads,
        &[scale.lines_per_thread, 0, 0],
    )?;
    fail_check(&p, 1, "printf")?;
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let printed = std::fs::metadata(&out_path)
        .map_err(|e| e.to_string())?
        .len();
    let lines = u64::from(scale.threads) * scale.lines_per_thread;
    let host_rate = host_printf_lines_per_s(dir, scale)?;
    figures.push(
        Figure::new(
            format!("{transport}: printf, {} threads", scale.threads),
            lines as f64 / tp.as_secs_f64() / 1e3,
            "kl/s",
            Better::Higher,
        )
        .against("one host thread, snprintf + write", Some(host_rate / 1e3)),
    );
    figures.push(Figure::new(
        format!("{transport}: printf bytes"),
        printed as f64 / tp.as_secs_f64() / 1e6,
        "MB/s",
        Better::Higher,
    ));
    let _ = std::fs::remove_file(&out_path);

    figures.extend(small_ops(device, transport, open, dir, scale)?);
    let (figure, measured) = whole_device(device, transport, open, dir)?;
    figures.push(figure);
    Ok((figures, measured))
}

/// One thread's NOPs and 64-byte pwrites, each timed on the device: p50 and p99,
/// against the ping-pong floor measured just before.
fn latency(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let floor = pingpong_us(device, scale.nops.min(10_000))?;
    let calls = scale.nops.min(10_000);
    let path = dir.join(format!("bench-{transport}-latency.bin"));
    let file = create_rw(&path)?;
    let mut cfg = ChannelConfig::default();
    let ep =
        cfg.endpoint(Endpoint::file("latency", &file, Access::WRITE).map_err(|e| e.to_string())?);
    let ch = open(cfg)?;
    let durations = device
        .provider()
        .alloc_shared(calls as usize * 4)
        .map_err(|e| format!("shared memory for the durations: {e}"))?;
    let mut figures = Vec::new();
    for (op, name) in [(0u64, "NOP"), (1, "64 B pwrite")] {
        let (p, _) = launch_wait(
            device,
            &ch,
            "latency",
            1,
            &[
                calls,
                op,
                u64::from(ep),
                durations.region().device_addr,
                0,
                0,
            ],
        )?;
        fail_check(&p, 4, "latency")?;
        let mut ns = read_u32s(&*durations, calls as usize);
        ns.sort_unstable();
        let at = |q: f64| f64::from(ns[((ns.len() - 1) as f64 * q).round() as usize]) / 1e3;
        for (q, label) in [(0.5, "p50"), (0.99, "p99")] {
            figures.push(
                Figure::new(
                    format!("{transport}: {name} latency {label}, 1 thread"),
                    at(q),
                    "us",
                    Better::Lower,
                )
                .against("device-host ping-pong through shared memory", Some(floor)),
            );
        }
    }
    let report = ch.close();
    drop(file);
    let _ = std::fs::remove_file(&path);
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(figures)
}

/// `n` u32s from the start of shared memory the kernel has finished writing.
fn read_u32s(mem: &dyn gpuio_core::memory::SharedMemory, n: usize) -> Vec<u32> {
    let r = mem.region();
    let n = n.min(r.len / 4);
    (0..n)
        .map(|i| {
            // SAFETY: inside the region (n <= len / 4), 4-aligned (page-aligned
            // start); the kernel that wrote it has ended (join), and the region
            // lives as long as `mem`.
            unsafe { std::ptr::read_volatile(r.host_ptr.as_ptr().cast::<u32>().add(i)) }
        })
        .collect()
}

/// The latency floor of any round trip between device and host: the device stores
/// a counter in shared memory, a host thread answers it in another word, `rounds`
/// times (`gpuio_k_pingpong`); microseconds per round trip, timed on the host.
/// A default mailbox channel for a kernel that does no I/O through it (every launch
/// takes one).
fn launch_channel(device: &dyn Device, what: &str) -> Result<Channel, String> {
    Channel::open(
        device.provider(),
        &gpuio_backend_rpc::mailbox::MailboxBuilder::new(),
        ChannelConfig::default(),
    )
    .map_err(|e| format!("a channel for {what}: {e}"))
}

fn pingpong_us(device: &dyn Device, rounds: u64) -> Result<f64, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let mem = device
        .provider()
        .alloc_shared(4096)
        .map_err(|e| format!("shared memory for the ping-pong: {e}"))?;
    let r = mem.region();
    // SAFETY: the region is page-aligned, at least 4096 bytes, zeroed, and outlives
    // this function's uses; the device touches these two words only with atomic
    // (system-scope) loads and stores, so viewing them as atomics is sound.
    let (ping, pong) = unsafe {
        (
            &*r.host_ptr.as_ptr().cast::<AtomicU64>(),
            &*r.host_ptr.as_ptr().add(64).cast::<AtomicU64>(),
        )
    };
    let ch = launch_channel(device, "the ping-pong kernel")?;
    let run = device
        .launch("pingpong", 1, 1, &ch, &[r.device_addr, rounds, 0])
        .map_err(|e| format!("launch pingpong: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut start = None;
    let mut i = 1;
    while i <= rounds && Instant::now() < deadline {
        if ping.load(Ordering::Acquire) == i {
            if i == 1 {
                start = Some(Instant::now());
            }
            pong.store(i, Ordering::Release);
            i += 1;
        } else {
            std::hint::spin_loop();
        }
    }
    let took = start.map(|s| s.elapsed());
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("pingpong: {e}"))?;
    let _ = ch.close();
    match took {
        Some(t) if p[2] == 0 && i > rounds && rounds > 1 => {
            Ok(t.as_secs_f64() * 1e6 / (rounds - 1) as f64)
        }
        _ => Err(format!(
            "pingpong: {} of {rounds} rounds before a side gave up",
            i - 1
        )),
    }
}

/// Every thread of the device (`Device::full_shape`) making 64-byte and 4 KiB
/// pwrites, then preads of them: operations per second, against one host thread
/// making the same calls on a file in the same directory.
fn small_ops(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let (grid, block) = device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let calls: u64 = if scale.nops < Scale::FULL.nops { 1 } else { 2 };
    let path = dir.join(format!("bench-{transport}-small.bin"));
    let ref_path = dir.join(format!("bench-{transport}-small-host.bin"));
    let file = create_rw(&path)?;
    let ref_file = create_rw(&ref_path)?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg
        .endpoint(Endpoint::file("small", &file, Access::READ_WRITE).map_err(|e| e.to_string())?);
    let ch = open(cfg)?;
    let mut figures = Vec::new();
    for size in [64u64, 4096] {
        for (op, name) in [(0u64, "pwrite"), (1, "pread")] {
            let cpu0 = process_cpu_time();
            let (p, took) = launch_wait_shape(
                device,
                &ch,
                "small_ops",
                (grid, block),
                &[u64::from(ep), size, op, calls, 0, 0],
            )?;
            let cpu = process_cpu_time().saturating_sub(cpu0);
            fail_check(&p, 4, "small_ops")?;
            let ops = threads * calls;
            // The reference: one host thread, the same calls on its own file.
            let mut buf = vec![b'a'; size as usize];
            let start = Instant::now();
            for _ in 0..calls {
                for t in 0..threads {
                    let off = t * size;
                    let r = if op == 0 {
                        ref_file.write_all_at(&buf, off)
                    } else {
                        ref_file.read_exact_at(&mut buf, off)
                    };
                    r.map_err(|e| format!("host {name}: {e}"))?;
                }
            }
            let host = ops as f64 / start.elapsed().as_secs_f64();
            figures.push(
                Figure::new(
                    format!(
                        "{transport}: {size} B {name}, whole device {grid}x{block} (host CPU {:.2} s/M ops)",
                        cpu.as_secs_f64() * 1e6 / ops as f64
                    ),
                    ops as f64 / took.as_secs_f64() / 1e6,
                    "Mop/s",
                    Better::Higher,
                )
                .against(&format!("one host thread, {name}"), Some(host / 1e6)),
            );
        }
    }
    let report = ch.close();
    drop((file, ref_file));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&ref_path);
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(figures)
}

/// A file for reading and writing, created empty.
fn create_rw(path: &Path) -> Result<std::fs::File, String> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("open {}: {e}", path.display()))
}

/// Like `launch_wait`, with the launch shape given.
fn launch_wait_shape(
    device: &dyn Device,
    ch: &Channel,
    kernel: &str,
    (grid, block): (u32, u32),
    params: &[u64],
) -> Result<(Vec<u64>, Duration), String> {
    let start = Instant::now();
    let run = device
        .launch(kernel, grid, block, ch, params)
        .map_err(|e| format!("launch {kernel}: {e}"))?;
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("{kernel}: {e}"))?;
    Ok((p, start.elapsed()))
}

/// User + system CPU time of this process so far.
fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The whole device at once (see the module doc). Calls that fail (a deadline
/// passed under the load) are not an error here: the figure says how many
/// threads made the round trip.
fn whole_device(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
) -> Result<(Figure, crate::calibration::Measured), String> {
    use gpuio_device::kernels::{full_device_row, FULL_DEVICE_ROW};
    let (grid, block) = device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let rows_path = dir.join(format!("bench-{transport}-rows.bin"));
    let out_path = dir.join(format!("bench-{transport}-rows.txt"));
    let rows = create_rw(&rows_path)?;
    let (_out, mut cfg) = stdout_file_config(&out_path)?;
    let ep =
        cfg.endpoint(Endpoint::file("rows", &rows, Access::READ_WRITE).map_err(|e| e.to_string())?);
    let ch = open(cfg)?;
    let cpu0 = process_cpu_time();
    let start = Instant::now();
    let run = device
        .launch("full_device", grid, block, &ch, &[u64::from(ep), 0, 0, 0])
        .map_err(|e| format!("launch full_device: {e}"))?;
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("full_device: {e}"))?;
    let took = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu0);
    let report = ch.close();
    let requests = report.counters.submitted;

    // The reference: one host thread, the same three calls for every row.
    let ref_path = dir.join(format!("bench-{transport}-rows-host.bin"));
    let ref_file = create_rw(&ref_path)?;
    let sink = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_APPEND)
        .open(dir.join("bench-host-rows.txt"))
        .map_err(|e| format!("open host rows: {e}"))?;
    let host_start = Instant::now();
    let mut back = [0u8; FULL_DEVICE_ROW];
    for t in 0..threads {
        let row = full_device_row(t, threads);
        let off = t * FULL_DEVICE_ROW as u64;
        ref_file
            .write_all_at(row.as_bytes(), off)
            .and_then(|()| ref_file.read_exact_at(&mut back, off))
            .and_then(|()| std::io::Write::write_all(&mut &sink, row.as_bytes()))
            .map_err(|e| format!("host rows: {e}"))?;
    }
    let host_rate = (3 * threads) as f64 / host_start.elapsed().as_secs_f64();
    drop((rows, ref_file, sink));
    for f in [
        &rows_path,
        &out_path,
        &ref_path,
        &dir.join("bench-host-rows.txt"),
    ] {
        let _ = std::fs::remove_file(f);
    }
    let rate = requests as f64 / took.as_secs_f64();
    let measured = crate::calibration::Measured {
        pair: String::new(),
        device: String::new(),
        requests_per_s: rate,
        threads_done: p[3],
        threads,
        measured_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let figure = Figure::new(
        format!(
            "{transport}: whole device {grid}x{block}, write+read+printf ({} of {threads} threads done, {} timed out, host CPU {:.2} s/M req)",
            p[3],
            report.timed_out,
            cpu.as_secs_f64() * 1e6 / (requests.max(1)) as f64
        ),
        rate / 1e3,
        "kreq/s",
        Better::Higher,
    )
    .against("one host thread, same calls", Some(host_rate / 1e3));
    Ok((figure, measured))
}

/// Lines per second one host thread formats (`snprintf`) and writes (`write`, one
/// call per line, like the device does) to an `O_APPEND` file.
fn host_printf_lines_per_s(dir: &Path, scale: Scale) -> Result<f64, String> {
    let path = dir.join("bench-host-printf.txt");
    let out = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_APPEND)
        .open(&path)
        .map_err(|e| format!("open {}: {e}", path.display()))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&out);
    let lines = u64::from(scale.threads) * scale.lines_per_thread;
    let start = Instant::now();
    for n in 0..lines {
        let (t, i) = (
            (n % u64::from(scale.threads)) as i32,
            (n / u64::from(scale.threads)) as i32,
        );
        let line = expected_line(t, i)?;
        // SAFETY: writes the line's initialised bytes to an open fd.
        if unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) } < 0 {
            return Err(format!("write: {}", std::io::Error::last_os_error()));
        }
    }
    let rate = lines as f64 / start.elapsed().as_secs_f64();
    drop(out);
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}
