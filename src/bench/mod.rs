//! `gpuio bench`: each transport's figures next to references measured in the same
//! run, on the same machine and file system. Every figure is measured
//! [`Scale::repeats`] times and [`merge`]d: its value is the median, its samples are
//! kept, and so are each reference's; throughput figures carry the host's CPU time
//! ([`HostCpu`]).
//!
//! References that do not depend on the transport are measured once per repeat
//! before the transports ([`bulk::run_refs`]): the copy ceiling between host and
//! device memory ([`gpuio_device::Device::copy_bandwidth`]), one host thread
//! doing the bulk ranges with `pwrite`/`pread` and with an io_uring, one host
//! thread's io_uring NOPs, and one CPU thread keeping SQPOLL rings full of NOPs
//! (`sqpoll_refs`).
//!
//! Figures (per transport):
//! * NOP round trip, one device thread, sequential — reference: one host thread
//!   submitting the same NOPs through an ordinary io_uring and waiting for each (a
//!   NOP is the transport's round trip alone: `mailbox` and `forward` answer it on
//!   their host threads without a syscall, `direct`'s goes through its io_uring);
//! * NOP throughput, 64 device threads and every thread of the device — reference:
//!   that host thread's NOP rate; every thread's also against the same io_uring work
//!   driven by a CPU thread: NOPs on an SQPOLL ring shaped like `direct`'s (SQ entries
//!   = a default channel's slots, all of them in flight) (`host_sqpoll_nops`); and
//!   every thread's NOPs on a channel of four times the slots, against that ring as
//!   deep (`deep_nops`);
//! * NOP and 64 B `pwrite` latency p50/p99, one thread, timed on the device —
//!   reference: the device↔host ping-pong through shared memory;
//! * `gpuio_pwrite` of the conformance pattern (64 threads, 1 B … 1 MiB) to a file —
//!   reference: one host thread `pwrite`-ing exactly the same ranges to a file in
//!   the same directory;
//! * `gpuio_printf` from 64 threads and from the whole device ([`printf`]) —
//!   references: the device's own `printf` of the same lines from the same threads
//!   (CUDA's on a GPU), and one host thread formatting and `write`-ing them;
//! * 64 B and 4 KiB `pwrite`/`pread` from every thread, 64 B `pwrite` from 1 and 64
//!   threads — reference: one host thread making the same calls;
//! * 1 MiB warp-cooperative `pwrite`/`pread` from every warp into one file and into
//!   one file per SM group ([`bulk`]) — references: one host thread, the same
//!   io_uring work driven by a CPU thread, the copy ceiling;
//! * the whole device (`Device::full_shape`: every SM × 1024 threads on a GPU),
//!   each thread a 48-byte `gpuio_pwrite`, a `gpuio_pread` of it back and a
//!   `gpuio_printf`, on a default channel: requests/s, how many threads made the
//!   whole round trip, and the host CPU time per million requests — reference: one
//!   host thread doing the same `pwrite`, `pread` and `write` for every row.
//!
//! Host queues, once per backend ([`queues`]): messages/s from every thread to the
//! host and from one host thread to every thread, 64 B, 256 B and 4 KiB — references:
//! to the host, the copy-back habit (fill device memory, copy after the kernel) and
//! the naive mapped ring (one ring in shared memory, one slot and one ready word per
//! message, `gpuio_k_queue_naive`); to the device, one upload of the same bytes.
//! `--plot`: [`plot`].

pub mod bulk;
pub mod plot;
pub mod printf;
pub mod queues;
mod threads;

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
    /// Bytes each bulk pass aims at (every unit moves at least one 1 MiB chunk).
    pub bulk_bytes: u64,
    /// Whether every warp of the device (every thread on the CPU device) takes part
    /// in a bulk pass, moving at least one chunk however many bytes that makes; if
    /// not, each block runs only as many warps as [`Scale::bulk_bytes`] needs (at
    /// least one, so that every SM still takes part).
    pub bulk_every_warp: bool,
    /// A bulk pass starts no chunk after this many seconds.
    pub bulk_seconds: f64,
    /// Request slots of 1 MiB of the bulk channel (halved until one opens).
    pub bulk_slots: u32,
    /// Bytes per copy of the copy-ceiling reference.
    pub copy_bytes: usize,
    /// Lines the whole-device printf figures print in all (at least one per thread).
    pub printf_lines: u64,
    /// Times each figure is measured (the median is reported, every sample kept).
    pub repeats: u32,
}

impl Scale {
    pub const QUICK: Scale = Scale {
        nops: 2_000,
        writes_per_thread: 200,
        lines_per_thread: 100,
        threads: 64,
        bulk_bytes: 128 << 20,
        // One warp per SM on an H200 (132 MiB a pass): with every warp taking part a
        // pass moves 4.1 GiB, and the host references that replay it took 24 s of
        // `--quick`'s 62 s there (2026-11-28), which is to finish in under a minute.
        bulk_every_warp: false,
        bulk_seconds: 3.0,
        bulk_slots: 256,
        copy_bytes: 64 << 20,
        printf_lines: 1 << 14,
        repeats: 1,
    };
    pub const FULL: Scale = Scale {
        nops: 20_000,
        writes_per_thread: 1000,
        lines_per_thread: 1000,
        threads: 64,
        bulk_bytes: 1 << 30,
        bulk_every_warp: true,
        bulk_seconds: 10.0,
        // 1 GiB of staging: a forward channel of 1024 slots of 1 MiB has 16 rings
        // (`BULK_RINGS`), and 1 MiB reads from every warp moved 27.5–31.1 GB/s
        // against 14.2–16.3 with 256 slots in 4 rings (H100, 2026-11-26, when the
        // forwarders copied every read themselves).
        bulk_slots: 1024,
        copy_bytes: 256 << 20,
        // 16 lines a thread on an H100: with one (2^17 in all) the figure was the
        // launch and the channel's close (a forward channel's close waits 50 ms for
        // quiet), not the lines: 2.4 M lines/s on forward, 5.3 M on mailbox (H100,
        // 2026-11-26), against 22 M for a flood of 2 M lines the day before.
        printf_lines: 1 << 21,
        repeats: 3,
    };
}

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// What a figure is held against, measured in the same run (once per repeat).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Reference {
    pub what: String,
    /// The median of `samples`.
    pub value: f64,
    pub samples: Vec<f64>,
}

impl Reference {
    fn new(what: &str, value: f64) -> Self {
        Self {
            what: what.to_string(),
            value,
            samples: vec![value],
        }
    }
}

/// The process's user + system CPU time a throughput figure cost the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct HostCpu {
    /// CPU seconds per gigabyte moved (where the figure moves bytes).
    pub seconds_per_gb: Option<f64>,
    /// CPU seconds per million operations (requests, lines, messages).
    pub seconds_per_mop: Option<f64>,
    /// Where measured (`threads`): the CPU seconds per gigabyte of the process's
    /// own threads, of the kernel's SQPOLL threads and of its io-wq workers (in one
    /// measurement the three add up to `seconds_per_gb`; merged, each is its own
    /// median), and the cores busy on average.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<CpuSplit>,
}

/// [`HostCpu::split`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuSplit {
    pub own_seconds_per_gb: f64,
    pub sqpoll_seconds_per_gb: f64,
    pub workers_seconds_per_gb: f64,
    pub cores: f64,
    /// io-wq workers that ran.
    pub workers: f64,
    /// The cores the io-wq workers kept busy on average: one file's writes, which
    /// the kernel runs one at a time, leave its worker idle for the rest of the wall.
    pub workers_cores: f64,
    /// Per operation: how many times an io-wq worker was put on a CPU, and how long
    /// the workers waited, runnable, for one (µs); absent where schedstat is not
    /// read. About one run per write, each with a wait, is a worker woken for every
    /// write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers_runs_per_op: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers_wait_us_per_op: Option<f64>,
}

/// Where a figure goes in `--plot`: throughput against message size (MB/s) or
/// against thread count (M ops/s), one line per series and pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotPoint {
    pub panel: Panel,
    pub series: String,
    pub x: f64,
    /// The figure's value in the panel's unit; `reference` likewise.
    pub y: f64,
    pub reference: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Panel {
    /// x: bytes per operation, y: MB/s.
    Size,
    /// x: threads, y: M ops/s.
    Threads,
}

/// One measured figure, the references it is held against, and what it cost the
/// host. Repeated measurements of the same figure are merged by [`merge`]: the
/// value is then the median of the samples.
#[derive(Clone, Debug)]
pub struct Figure {
    pub what: String,
    pub value: f64,
    pub unit: &'static str,
    pub better: Better,
    pub samples: Vec<f64>,
    /// The main reference; `ratio` is against it.
    pub reference: Option<Reference>,
    /// Further references, each with its own ratio.
    pub also: Vec<Reference>,
    pub host_cpu: Option<HostCpu>,
    /// What the value alone does not say (calls that failed, lines lost, ...).
    pub notes: Vec<String>,
    pub plot: Vec<PlotPoint>,
}

impl Figure {
    fn new(what: String, value: f64, unit: &'static str, better: Better) -> Self {
        Self {
            what,
            value,
            unit,
            better,
            samples: vec![value],
            reference: None,
            also: Vec::new(),
            host_cpu: None,
            notes: Vec::new(),
            plot: Vec::new(),
        }
    }

    fn against(mut self, what: &str, value: Option<f64>) -> Self {
        self.reference = value.map(|value| Reference::new(what, value));
        self
    }

    fn also(mut self, what: &str, value: Option<f64>) -> Self {
        if let Some(value) = value {
            self.also.push(Reference::new(what, value));
        }
        self
    }

    /// The host's CPU time `cpu` for `bytes` moved (0: not a byte figure) in `ops`
    /// operations.
    fn host_cpu(mut self, cpu: Duration, bytes: u64, ops: u64) -> Self {
        let s = cpu.as_secs_f64();
        self.host_cpu = Some(HostCpu {
            seconds_per_gb: (bytes > 0).then(|| s / (bytes as f64 / 1e9)),
            seconds_per_mop: (ops > 0).then(|| s / (ops as f64 / 1e6)),
            split: None,
        });
        self
    }

    /// [`Figure::host_cpu`] of `used`, split by kind of thread.
    fn host_cpu_split(self, used: &threads::CpuUse, bytes: u64, ops: u64) -> Self {
        let mut f = self.host_cpu(used.total, bytes, ops);
        if let Some(c) = f.host_cpu.as_mut().filter(|_| bytes > 0) {
            let per_gb = |d: Duration| d.as_secs_f64() / (bytes as f64 / 1e9);
            c.split = Some(CpuSplit {
                own_seconds_per_gb: per_gb(used.own()),
                sqpoll_seconds_per_gb: per_gb(used.sqpoll),
                workers_seconds_per_gb: per_gb(used.workers),
                cores: used.total.as_secs_f64() / used.wall.as_secs_f64().max(1e-9),
                workers: used.workers_seen as f64,
                workers_cores: used.workers.as_secs_f64() / used.wall.as_secs_f64().max(1e-9),
                workers_runs_per_op: used
                    .workers_waits
                    .filter(|_| ops > 0)
                    .map(|(_, n)| n as f64 / ops as f64),
                workers_wait_us_per_op: used
                    .workers_waits
                    .filter(|_| ops > 0)
                    .map(|(d, _)| d.as_secs_f64() * 1e6 / ops as f64),
            });
        }
        f
    }

    fn note(mut self, note: Option<String>) -> Self {
        self.notes.extend(note);
        self
    }

    /// Plots the figure at `x` in `panel`, its value and reference scaled by `scale`
    /// into the panel's unit.
    fn plot(mut self, panel: Panel, series: &str, x: f64, scale: f64) -> Self {
        self.plot.push(PlotPoint {
            panel,
            series: series.to_string(),
            x,
            y: self.value * scale,
            reference: self.reference.as_ref().map(|r| r.value * scale),
        });
        self
    }

    /// value / reference, where there is a reference.
    pub fn ratio(&self) -> Option<f64> {
        self.reference.as_ref().map(|r| self.value / r.value)
    }

    /// Least and greatest sample.
    pub fn spread(&self) -> (f64, f64) {
        self.samples
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    }

    /// Every field, each ratio, and the spread, for `--json`.
    pub fn to_json(&self) -> serde_json::Value {
        let (min, max) = self.spread();
        let also: Vec<_> = self
            .also
            .iter()
            .map(|r| {
                serde_json::json!({
                    "what": r.what, "value": r.value, "samples": r.samples,
                    "ratio": self.value / r.value,
                })
            })
            .collect();
        serde_json::json!({
            "what": self.what,
            "value": self.value,
            "unit": self.unit,
            "better": self.better,
            "samples": self.samples,
            "min": min,
            "max": max,
            "reference": self.reference,
            "ratio": self.ratio(),
            "also": also,
            "host_cpu": self.host_cpu,
            "notes": self.notes,
        })
    }
}

/// `v` with three significant digits (at least none after the point, at most six).
fn sig(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.decimals$}")
}

fn better_words(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<52} {:>10} {:<6}",
            self.what,
            sig(self.value),
            self.unit
        )?;
        if self.samples.len() > 1 {
            let (lo, hi) = self.spread();
            write!(
                f,
                " (median of {}: {}..{})",
                self.samples.len(),
                sig(lo),
                sig(hi)
            )?;
        }
        if let (Some(r), Some(ratio)) = (&self.reference, self.ratio()) {
            write!(
                f,
                "  vs {}: {} {} ({}x, {})",
                r.what,
                sig(r.value),
                self.unit,
                sig(ratio),
                better_words(self.better)
            )?;
        } else {
            write!(f, "  ({})", better_words(self.better))?;
        }
        for r in &self.also {
            write!(
                f,
                "\n      also vs {}: {} {} ({}x)",
                r.what,
                sig(r.value),
                self.unit,
                sig(self.value / r.value)
            )?;
        }
        if let Some(c) = &self.host_cpu {
            let mut parts = Vec::new();
            if let Some(v) = c.seconds_per_gb {
                parts.push(format!("{v:.3} s per GB"));
            }
            if let Some(v) = c.seconds_per_mop {
                parts.push(format!("{v:.3} s per million ops"));
            }
            write!(f, "\n      host CPU (user + system): {}", parts.join(", "))?;
            if let Some(x) = &c.split {
                write!(
                    f,
                    "; {:.3} the process's own threads, {:.3} SQPOLL, {:.3} io-wq workers \
                     ({} of them, {:.2} cores busy",
                    x.own_seconds_per_gb,
                    x.sqpoll_seconds_per_gb,
                    x.workers_seconds_per_gb,
                    x.workers,
                    x.workers_cores
                )?;
                if let (Some(runs), Some(wait)) = (x.workers_runs_per_op, x.workers_wait_us_per_op)
                {
                    write!(
                        f,
                        ", {runs:.2} runs and {wait:.1} us waiting for a CPU per request"
                    )?;
                }
                write!(f, "; {:.1} cores busy in all)", x.cores)?;
            }
        }
        for n in &self.notes {
            write!(f, "\n      {n}")?;
        }
        Ok(())
    }
}

/// The median of `v` (the mean of the middle two for an even count); NaN if empty.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median of what `get` finds in `items`, those that have it; `None` where none
/// does.
fn median_of<T>(items: &[T], get: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = items.iter().filter_map(get).collect();
    (!v.is_empty()).then(|| median(&v))
}

/// Merges the figures of several repeats of the same measurements: figures (and
/// their references) of the same name pool their samples and take the median;
/// host CPU costs take the median too; notes are kept once each. Order: as first
/// seen.
pub fn merge(runs: Vec<Vec<Figure>>) -> Vec<Figure> {
    let mut out: Vec<(Figure, Vec<HostCpu>)> = Vec::new();
    for fig in runs.into_iter().flatten() {
        let Some((have, cpus)) = out.iter_mut().find(|(f, _)| f.what == fig.what) else {
            let cpus = fig.host_cpu.into_iter().collect();
            out.push((fig, cpus));
            continue;
        };
        have.samples.extend(&fig.samples);
        if let (Some(a), Some(b)) = (&mut have.reference, &fig.reference) {
            a.samples.extend(&b.samples);
        }
        for b in &fig.also {
            match have.also.iter_mut().find(|a| a.what == b.what) {
                Some(a) => a.samples.extend(&b.samples),
                None => have.also.push(b.clone()),
            }
        }
        cpus.extend(fig.host_cpu);
        for n in fig.notes {
            if !have.notes.contains(&n) {
                have.notes.push(n);
            }
        }
    }
    out.into_iter()
        .map(|(mut f, cpus)| {
            // Each point's scale into its panel's unit, from the first sample.
            let scales: Vec<(f64, Option<f64>)> = f
                .plot
                .iter()
                .map(|p| {
                    let r = f
                        .reference
                        .as_ref()
                        .zip(p.reference)
                        .map(|(r, y)| y / r.value);
                    (p.y / f.value, r)
                })
                .collect();
            f.value = median(&f.samples);
            for r in f.reference.iter_mut().chain(f.also.iter_mut()) {
                r.value = median(&r.samples);
            }
            if !cpus.is_empty() {
                let splits: Vec<CpuSplit> = cpus.iter().filter_map(|c| c.split).collect();
                let mid =
                    |get: fn(&CpuSplit) -> f64| median(&splits.iter().map(get).collect::<Vec<_>>());
                f.host_cpu = Some(HostCpu {
                    seconds_per_gb: median_of(&cpus, |c| c.seconds_per_gb),
                    seconds_per_mop: median_of(&cpus, |c| c.seconds_per_mop),
                    split: (!splits.is_empty()).then(|| CpuSplit {
                        own_seconds_per_gb: mid(|x| x.own_seconds_per_gb),
                        sqpoll_seconds_per_gb: mid(|x| x.sqpoll_seconds_per_gb),
                        workers_seconds_per_gb: mid(|x| x.workers_seconds_per_gb),
                        cores: mid(|x| x.cores),
                        workers: mid(|x| x.workers),
                        workers_cores: mid(|x| x.workers_cores),
                        workers_runs_per_op: median_of(&splits, |x| x.workers_runs_per_op),
                        workers_wait_us_per_op: median_of(&splits, |x| x.workers_wait_us_per_op),
                    }),
                });
            }
            let (value, reference) = (f.value, f.reference.as_ref().map(|r| r.value));
            for (p, (k, kr)) in f.plot.iter_mut().zip(scales) {
                if k.is_finite() {
                    p.y = value * k;
                }
                if let (Some(k), Some(r)) = (kr.filter(|k| k.is_finite()), reference) {
                    p.reference = Some(r * k);
                }
            }
            f
        })
        .collect()
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

/// One host thread driving an SQPOLL ring of `depth` SQ entries (a CQ of twice that,
/// as `direct`'s) with `depth` NOPs in flight until `n` completed: M NOPs/s. What a
/// `direct` channel's device side does with the same ring, driven by a CPU thread
/// instead: it writes SQEs and the tail, the kernel's SQPOLL thread consumes them,
/// the CPU thread polls the CQ. Each wait for a completion has a 10 s deadline.
fn host_sqpoll_nops(n: u64, depth: u32) -> Result<f64, String> {
    let mut ring: io_uring::IoUring = io_uring::IoUring::builder()
        .setup_sqpoll(1000)
        .setup_cqsize(2 * depth)
        .build(depth)
        .map_err(|e| format!("io_uring_setup (SQPOLL): {e}"))?;
    let (mut submitted, mut done) = (0u64, 0u64);
    let start = Instant::now();
    let mut last = start;
    while done < n {
        let room = (u64::from(depth) - (submitted - done)).min(n - submitted);
        {
            let mut sq = ring.submission();
            for i in 0..room {
                let nop = io_uring::opcode::Nop::new()
                    .build()
                    .user_data(submitted + i);
                // SAFETY: a NOP references no memory.
                if unsafe { sq.push(&nop) }.is_err() {
                    break;
                }
                submitted += 1;
            }
        }
        // Enters the kernel only to wake a sleeping SQPOLL thread.
        ring.submit().map_err(|e| format!("io_uring_enter: {e}"))?;
        let mut got = 0u64;
        for c in ring.completion() {
            if c.result() < 0 {
                return Err(format!("io_uring NOP: result {}", c.result()));
            }
            got += 1;
        }
        done += got;
        let now = Instant::now();
        if got > 0 {
            last = now;
        } else if now - last > Duration::from_secs(10) {
            return Err(format!(
                "SQPOLL ring: {done} of {submitted} NOPs after {:?}",
                start.elapsed()
            ));
        } else {
            std::hint::spin_loop();
        }
    }
    Ok(n as f64 / start.elapsed().as_secs_f64() / 1e6)
}

/// NOPs a thread of the whole-device NOP figures makes: 16 at full scale (with 4 the
/// H100's run lasted ~55 ms and forward's figure ranged 6.5-12.7 M/s across the
/// calls of one night, 6.5-10.2 within one, 2026-11-27: a longer run leaves less to
/// the launch and to host threads waking from their idle sleeps), one in a quick run.
fn whole_device_nops_per_thread(scale: Scale) -> u64 {
    if scale.nops < Scale::FULL.nops {
        1
    } else {
        16
    }
}

/// The SQPOLL references of this repeat, measured once for every transport: one
/// CPU thread keeping as many NOPs in flight as a default channel has slots, and as
/// [`DEEP_SLOTS`], each on an SQPOLL ring of as many entries, for as many NOPs as the
/// whole-device figures make (at least 200,000: a quick run's few hundred would time
/// the SQPOLL thread's first wake-up, not its rate). A depth whose ring does not
/// open (SQPOLL refused) or does not finish is left out, with a warning that says why.
pub(crate) fn sqpoll_refs(device: &dyn Device, scale: Scale) -> Vec<(u32, f64)> {
    let (grid, block) = device.full_shape();
    let n = (u64::from(grid) * u64::from(block) * whole_device_nops_per_thread(scale)).max(200_000);
    [ChannelConfig::default().slots, DEEP_SLOTS]
        .into_iter()
        .filter_map(|depth| match host_sqpoll_nops(n, depth) {
            Ok(rate) => Some((depth, rate)),
            Err(e) => {
                tracing::warn!(depth, error = %e, "no SQPOLL reference at this depth");
                None
            }
        })
        .collect()
}

/// What an SQPOLL reference of `entries` is called, as a reference and as a figure.
pub(crate) fn sqpoll_what(entries: u32) -> String {
    format!(
        "the same io_uring work driven by one CPU thread (an SQPOLL ring of {entries}, {entries} NOPs in flight)"
    )
}

/// Requests in flight of [`deep_nops`]'s channel and ring.
const DEEP_SLOTS: u32 = 1024;

/// Whole-device NOPs on a channel of [`DEEP_SLOTS`] slots (of 4 KiB: a NOP stages
/// nothing), against one CPU thread keeping as many NOPs in flight on an SQPOLL ring
/// of as many entries: how a transport and the ring it is held against do with four
/// times a default channel's requests in flight. A transport whose round trip is long
/// needs more of them to keep its ring busy (`direct`: 11.9 M NOPs/s at 256 slots,
/// 24.7 at 1024 on an H200, 2026-11-29).
fn deep_nops(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    shape: (u32, u32),
    per: u64,
    refs: &bulk::RunRefs,
) -> Result<Figure, String> {
    let ch = open(ChannelConfig {
        slots: DEEP_SLOTS,
        slot_size: 4096,
        ..ChannelConfig::default()
    })?;
    let what = format!(
        "{transport}: NOPs, whole device {}x{}, {DEEP_SLOTS} slots",
        shape.0, shape.1
    );
    let figure = whole_device_nops(device, &ch, shape, per, what)?;
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close ({DEEP_SLOTS} slots): {report}"));
    }
    Ok(figure.against(&sqpoll_what(DEEP_SLOTS), refs.sqpoll_rate(DEEP_SLOTS)))
}

/// Every thread of `shape` making `per` NOPs on `ch`: the figure `what` in M/s, with
/// the host's CPU and a note of the NOPs that gave up under the load (not counted);
/// the caller holds it against its references.
fn whole_device_nops(
    device: &dyn Device,
    ch: &Channel,
    shape: (u32, u32),
    per: u64,
    what: String,
) -> Result<Figure, String> {
    let whole = u64::from(shape.0) * u64::from(shape.1);
    let cpu0 = process_cpu_time();
    let (p, tn) = launch_wait_shape(device, ch, "nop", shape, &[per, 0, 0])?;
    let cpu = process_cpu_time().saturating_sub(cpu0);
    let (ops, failed) = counted(&p, 1, whole * per, "NOPs", "nop")?;
    Ok(Figure::new(
        what,
        ops as f64 / tn.as_secs_f64() / 1e6,
        "Mop/s",
        Better::Higher,
    )
    .host_cpu(cpu, 0, ops)
    .note(failed))
}

/// One thread's round trips on one transport, measured once (`gpuio bench --only
/// latency`): NOP and 64 B pwrite p50/p99 against the ping-pong floor, with the NOP's
/// steps printed.
pub fn run_latency(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let report = warm_channel(device, open)?.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    latency(device, transport, open, dir, scale)
}

/// A default channel on which one NOP went through, untimed: the first launch on a
/// device may compile and load the kernels (NVRTC: up to a minute, cold).
fn warm_channel(device: &dyn Device, open: &Opener<'_>) -> Result<Channel, String> {
    let ch = open(ChannelConfig::default())?;
    let (p, _) = launch_wait(device, &ch, "nop", 1, &[1, 0, 0])?;
    fail_check(&p, 1, "nop (warm-up)")?;
    Ok(ch)
}

/// Every figure of one transport, measured once (the caller repeats and
/// [`merge`]s), and its whole-device measurement (what a calibration keeps; `pair`
/// and `device` are the caller's to fill). `refs` are this repeat's references
/// that do not depend on the transport.
pub fn run_transport(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
    refs: &bulk::RunRefs,
) -> Result<(Vec<Figure>, crate::calibration::Measured), String> {
    let mut figures = Vec::new();

    // NOP latency and throughput, after one untimed NOP.
    let ch = warm_channel(device, open)?;
    let (p, t1) = launch_wait(device, &ch, "nop", 1, &[scale.nops, 0, 0])?;
    fail_check(&p, 1, "nop")?;
    let reference = refs.host_nop_us;
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
    let cpu0 = process_cpu_time();
    let (p, tn) = launch_wait(device, &ch, "nop", scale.threads, &[per, 0, 0])?;
    let cpu = process_cpu_time().saturating_sub(cpu0);
    fail_check(&p, 1, "nop")?;
    let ops = per * u64::from(scale.threads);
    figures.push(
        Figure::new(
            format!("{transport}: NOPs, {} threads", scale.threads),
            ops as f64 / tn.as_secs_f64() / 1e6,
            "Mop/s",
            Better::Higher,
        )
        .against("host thread, io_uring NOP", reference.map(|us| 1.0 / us))
        .host_cpu(cpu, 0, ops),
    );
    // NOPs from every thread of the device: the small-op rate without the cost of
    // any I/O, against the same host thread and the SQPOLL ring.
    let (grid, block) = device.full_shape();
    let per = whole_device_nops_per_thread(scale);
    let depth = ChannelConfig::default().slots;
    let what = format!("{transport}: NOPs, whole device {grid}x{block}");
    figures.push(
        whole_device_nops(device, &ch, (grid, block), per, what)?
            .against("host thread, io_uring NOP", reference.map(|us| 1.0 / us))
            .also(&sqpoll_what(depth), refs.sqpoll_rate(depth)),
    );
    let report = ch.close();
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    figures.push(deep_nops(
        device,
        transport,
        open,
        (grid, block),
        per,
        refs,
    )?);
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
    let cpu0 = process_cpu_time();
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
    let cpu = process_cpu_time().saturating_sub(cpu0);
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
        )
        .host_cpu(cpu, bytes, threads * scale.writes_per_thread),
    );
    drop((file, ref_file));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&ref_path);

    figures.extend(printf::figures(device, transport, open, dir, scale)?);
    figures.extend(small_ops(device, transport, open, dir, scale)?);
    figures.extend(bulk::figures(device, transport, open, dir, refs, scale)?);
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
        let mut ns = read_u32s(&*durations, calls as usize)?;
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
    nop_anatomy(device, transport, &ch, calls)?;
    let report = ch.close();
    drop(file);
    let _ = std::fs::remove_file(&path);
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    Ok(figures)
}

/// Where one thread's NOP spends its time, step by step (`gpuio_k_nop_anatomy`):
/// the median of each step over `calls` NOPs, and how often the first read of the
/// answer (after the first-poll pause) found it, printed with the progress (a
/// diagnosis of the latency figure, not a figure of its own: a first read that
/// comes back empty costs a whole read more).
fn nop_anatomy(
    device: &dyn Device,
    transport: TransportKind,
    ch: &Channel,
    calls: u64,
) -> Result<(), String> {
    const STEPS: [&str; 5] = ["check", "take a slot", "submit", "wait", "give back"];
    let n = calls as usize;
    let steps = device
        .provider()
        .alloc_shared(n * STEPS.len() * 4)
        .map_err(|e| format!("shared memory for the NOP anatomy: {e}"))?;
    let (p, _) = launch_wait(
        device,
        ch,
        "nop_anatomy",
        1,
        &[calls, steps.region().device_addr, 0, 0, 0],
    )?;
    fail_check(&p, 2, "nop_anatomy")?;
    let ns = read_u32s(&*steps, n * STEPS.len())?;
    let parts: Vec<String> = STEPS
        .iter()
        .zip(ns.chunks_exact(n))
        .map(|(name, step)| {
            let mut step = step.to_vec();
            step.sort_unstable();
            format!("{name} {:.2}", f64::from(step[n / 2]) / 1e3)
        })
        .collect();
    eprintln!(
        "gpuio bench:   {transport}: one NOP, median of each step (us): {}; the first read found the answer in {:.0} % of calls",
        parts.join(", "),
        first_read_share(p[4], calls)
    );
    Ok(())
}

/// The share of `calls` (in percent) whose first read of the answer found it,
/// as the anatomy kernel counted them (`hits`, clamped: the count is the
/// kernel's).
fn first_read_share(hits: u64, calls: u64) -> f64 {
    if calls == 0 {
        return 0.0;
    }
    100.0 * hits.min(calls) as f64 / calls as f64
}

/// `n` u32s from the start of shared memory the kernel has finished writing.
fn read_u32s(
    mem: &(dyn gpuio_core::memory::SharedMemory + 'static),
    n: usize,
) -> Result<Vec<u32>, String> {
    let mut bytes = vec![0u8; n * 4];
    mem.read_bytes(0, &mut bytes)
        .map_err(|e| format!("reading the kernel's timings: {e}"))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

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

/// The device's pauses between its store and its first poll that the ping-pong
/// floor tries (ns): where a read issued right behind the store comes back before
/// the host answered, a short pause saves a whole read across PCIe
/// (`gpuio_k_pingpong`).
const PINGPONG_PAUSES_NS: [u64; 5] = [0, 100, 200, 300, 400];

/// The latency floor of any round trip between device and host, the fastest over
/// [`PINGPONG_PAUSES_NS`]: for each, the device stores a counter in shared memory,
/// waits that long, polls for the host thread's answer in another word, `rounds`
/// times (`gpuio_k_pingpong`); microseconds per round trip, timed on the host. One
/// allocation and one channel serve every pause.
fn pingpong_us(device: &dyn Device, rounds: u64) -> Result<f64, String> {
    use std::sync::atomic::Ordering;
    let mem = device
        .provider()
        .alloc_shared(4096)
        .map_err(|e| format!("shared memory for the ping-pong: {e}"))?;
    let r = mem.region();
    let word = |offset| {
        mem.atomic_u64(offset)
            .map_err(|e| format!("the ping-pong's words: {e}"))
    };
    let (ping, pong) = (word(0)?, word(64)?);
    let ch = launch_channel(device, "the ping-pong kernel")?;
    let mut best = f64::INFINITY;
    for pause_ns in PINGPONG_PAUSES_NS {
        // Each launch counts from 1 again.
        ping.store(0, Ordering::Release);
        pong.store(0, Ordering::Release);
        let run = device
            .launch("pingpong", 1, 1, &ch, &[r.device_addr, rounds, 0, pause_ns])
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
        match took {
            Some(t) if p[2] == 0 && i > rounds && rounds > 1 => {
                best = best.min(t.as_secs_f64() * 1e6 / (rounds - 1) as f64);
            }
            _ => {
                return Err(format!(
                    "pingpong: {} of {rounds} rounds before a side gave up",
                    i - 1
                ))
            }
        }
    }
    let _ = ch.close();
    Ok(best)
}

/// Every thread of the device (`Device::full_shape`) making 64-byte and 4 KiB
/// pwrites, then preads of them: operations per second, against one host thread
/// making the same calls on a file in the same directory. Then 64-byte pwrites
/// from 1 and from 64 threads, for throughput against thread count.
fn small_ops(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let (grid, block) = device.full_shape();
    let quick = scale.nops < Scale::FULL.nops;
    let calls: u64 = if quick { 1 } else { 2 };
    let path = dir.join(format!("bench-{transport}-small.bin"));
    let ref_path = dir.join(format!("bench-{transport}-small-host.bin"));
    let file = create_rw(&path)?;
    let ref_file = create_rw(&ref_path)?;
    let mut cfg = ChannelConfig::default();
    let ep = cfg
        .endpoint(Endpoint::file("small", &file, Access::READ_WRITE).map_err(|e| e.to_string())?);
    let ch = open(cfg)?;
    let mut figures = Vec::new();
    let shapes = [
        (grid, block, calls, format!("whole device {grid}x{block}")),
        (1, 1, if quick { 200 } else { 1000 }, "1 thread".to_string()),
        (
            1,
            64,
            if quick { 20 } else { 100 },
            "64 threads".to_string(),
        ),
    ];
    for (grid, block, calls, shape) in shapes {
        let threads = u64::from(grid) * u64::from(block);
        let whole = shape.starts_with("whole");
        for size in [64u64, 4096] {
            for (op, name) in [(0u64, "pwrite"), (1, "pread")] {
                if !whole && (size != 64 || op != 0) {
                    continue;
                }
                let cpu0 = process_cpu_time();
                let (p, took) = launch_wait_shape(
                    device,
                    &ch,
                    "small_ops",
                    (grid, block),
                    &[u64::from(ep), size, op, calls, 0, 0],
                )?;
                let cpu = process_cpu_time().saturating_sub(cpu0);
                // Calls that fail (a deadline passed under the load) are not an
                // error here: only the calls that succeeded count, and a note says
                // how many did not.
                let (ops, failed) = counted(&p, 4, threads * calls, "calls", "small_ops")?;
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
                let mut fig = Figure::new(
                    format!("{transport}: {size} B {name}, {shape}"),
                    ops as f64 / took.as_secs_f64() / 1e6,
                    "Mop/s",
                    Better::Higher,
                )
                .against(&format!("one host thread, {name}"), Some(host / 1e6))
                .host_cpu(cpu, ops * size, ops)
                .note(failed);
                if whole {
                    // Mop/s × bytes = MB/s.
                    fig = fig.plot(Panel::Size, name, size as f64, size as f64);
                }
                if size == 64 && op == 0 {
                    fig = fig.plot(Panel::Threads, "64 B pwrite", threads as f64, 1.0);
                }
                figures.push(fig);
            }
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
/// Of `total` device calls whose failures a kernel counted in `p[at]` (the first
/// failure's errno in `p[at + 1]`): how many succeeded, and a note saying how many
/// did not (calls that fail under the load are not an error, and are not counted),
/// or an error when none succeeded.
fn counted(
    p: &[u64],
    at: usize,
    total: u64,
    calls: &str,
    kernel: &str,
) -> Result<(u64, Option<String>), String> {
    let failed = p[at].min(total);
    let ops = total - failed;
    if ops == 0 {
        fail_check(p, at, kernel)?;
    }
    let note = (failed > 0).then(|| {
        format!(
            "{failed} of {total} {calls} failed (not counted), the first with {}",
            p[at + 1] as i64
        )
    });
    Ok((ops, note))
}

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

/// User + system CPU time of this process so far (`CLOCK_PROCESS_CPUTIME_ID`).
pub(crate) fn process_cpu_time() -> Duration {
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
        format!("{transport}: whole device {grid}x{block}, write+read+printf"),
        rate / 1e3,
        "kreq/s",
        Better::Higher,
    )
    .against("one host thread, same calls", Some(host_rate / 1e3))
    .host_cpu(cpu, 0, requests.max(1))
    .note(Some(format!(
        "{} of {threads} threads made the whole round trip, {} calls timed out",
        p[3], report.timed_out
    )));
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
