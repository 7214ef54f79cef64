//! `gpuio run`: a user's kernel file, compiled and run on one pair or compared
//! across every available pair.
//!
//! Endpoints are registered in the order of the `--file` arguments (kernels name
//! them `0, 1, …`), then the `--queue-out` queues to the host (`gpuio_send`), then
//! standard output, which `gpuio_printf` writes to. A run on one pair prints the
//! kernel's output live on stdout; gpuio's own lines (what runs where, progress, the
//! params, the channel's close report) go to stderr.
//!
//! `--compare` runs the same kernel on every pair. The first pair writes the
//! files named on the command line; every later pair writes copies in a scratch
//! directory (read-write files start from the original contents), and each copy
//! is compared byte for byte with the first pair's. Standard output is captured
//! per pair and compared as a set of lines (threads' lines interleave differently
//! from run to run; each thread's own order is kept by every transport).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpuio_core::device::Module;
use gpuio_core::{
    Access, ChannelConfig, CloseReport, Endpoint, LogConfig, QueueConfig, Receiver, RecvError,
};

use crate::bench::process_cpu_time;
use crate::runtime::ChannelFactory;

/// One `--file NAME=PATH[:r|w|rw]` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileArg {
    pub name: String,
    pub path: PathBuf,
    pub access: Access,
}

impl FromStr for FileArg {
    type Err = String;

    /// `NAME=PATH`, `NAME=PATH:r` (must exist), `NAME=PATH:w` (created, truncated)
    /// or `NAME=PATH:rw` (created if missing, kept otherwise; the default).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not NAME=PATH[:r|w|rw]");
        let (name, rest) = name_and_path(s).ok_or_else(bad)?;
        let (path, access) = match rest.rsplit_once(':') {
            Some((p, "r")) => (p, Access::READ),
            Some((p, "w")) => (p, Access::WRITE),
            Some((p, "rw")) => (p, Access::READ_WRITE),
            _ => (rest, Access::READ_WRITE),
        };
        if path.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            name: name.to_string(),
            path: PathBuf::from(path),
            access,
        })
    }
}

/// One `--queue-out NAME=PATH` argument: a queue to the host whose messages a host
/// thread appends to PATH (created, truncated) as they arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueArg {
    pub name: String,
    pub path: PathBuf,
}

impl FromStr for QueueArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (name, path) = name_and_path(s).ok_or_else(|| format!("{s:?} is not NAME=PATH"))?;
        Ok(Self {
            name: name.to_string(),
            path: PathBuf::from(path),
        })
    }
}

/// `NAME=REST` with neither side empty.
fn name_and_path(s: &str) -> Option<(&str, &str)> {
    s.split_once('=')
        .filter(|(name, rest)| !name.is_empty() && !rest.is_empty())
}

/// What one `--queue-out` queue received (the same order as `RunSpec::queues`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueOutcome {
    pub messages: u64,
    pub bytes: u64,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub source: PathBuf,
    /// The kernel to launch; `None` takes the file's only `GPUIO_KERNEL`.
    pub kernel: Option<String>,
    pub grid: u32,
    pub block: u32,
    pub files: Vec<FileArg>,
    /// Queues to the host, endpoints after the files, in order.
    pub queues: Vec<QueueArg>,
    pub args: Vec<u64>,
    /// Longest the kernel may run.
    pub timeout: Duration,
    /// Request slots of the channel (`None`: the default).
    pub slots: Option<u32>,
    /// Staging bytes per slot (`None`: the default).
    pub slot_size: Option<u32>,
    /// Longest one device call waits (`None`: the default).
    pub call_timeout: Option<Duration>,
    /// Stdout's printf log (the default: [`LogConfig::default`]), or `None`:
    /// `gpuio_printf` then makes one request per line.
    pub printf_log: Option<LogConfig>,
}

/// What one run on one pair gave.
#[derive(Debug)]
pub struct Outcome {
    pub wall: Duration,
    /// From the launch until the channel closed: every printed line written.
    pub closed: Duration,
    /// This process's user + system CPU time while the kernel ran.
    pub host_cpu: Duration,
    pub params: Vec<u64>,
    pub report: CloseReport,
    /// Bytes in the output files and captured stdout after the run.
    pub out_bytes: u64,
    /// What each `--queue-out` queue received, in order.
    pub queues: Vec<QueueOutcome>,
}

/// The kernels a source defines, in order (`GPUIO_KERNEL(name)`).
pub fn kernels_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(i) = rest.find("GPUIO_KERNEL") {
        rest = &rest[i + "GPUIO_KERNEL".len()..];
        let after = rest.trim_start();
        let Some(inner) = after.strip_prefix('(') else {
            continue;
        };
        let name: String = inner
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let closes = inner.trim_start()[name.len()..]
            .trim_start()
            .starts_with(')');
        if !name.is_empty() && closes && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The kernel to launch: the one asked for, else the file's only one.
pub fn pick_kernel(source: &str, asked: Option<&str>, file: &Path) -> Result<String, String> {
    if let Some(k) = asked {
        return Ok(k.to_string());
    }
    match kernels_in(source).as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "found no GPUIO_KERNEL(name)(const gpuio_channel *ch, gpuio_u64 *params) in {}: \
             define one (or, if a macro of yours defines it, name it with --kernel)",
            file.display()
        )),
        many => Err(format!(
            "{} defines several kernels ({}); pick one with --kernel",
            file.display(),
            many.join(", ")
        )),
    }
}

fn open_plain(path: &Path, access: Access) -> Result<File, String> {
    let mut o = OpenOptions::new();
    match (access.read, access.write) {
        (true, false) => o.read(true),
        (false, true) => o.write(true).create(true).truncate(true),
        _ => o.read(true).write(true).create(true),
    };
    o.open(path)
        .map_err(|e| format!("opening {}: {e}", path.display()))
}

/// Opens `path` for a `--file` endpoint. A FIFO opened for reading alone or for
/// writing alone waits in open(2) for its other end (a writer, a reader), as it does
/// for any program; gpuio lets it wait at most `wait` (the run's `--timeout`), says
/// on stderr after a second what it waits for, and at the deadline opens the other
/// end itself for an instant, which ends the wait, and reports the timeout. (`:rw`
/// opens a FIFO at once.)
fn open_endpoint_file(path: &Path, access: Access, wait: Duration) -> Result<File, String> {
    use std::os::unix::fs::FileTypeExt;
    use std::sync::mpsc::{self, RecvTimeoutError};
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    if !fifo || (access.read && access.write) {
        return open_plain(path, access);
    }
    let (tx, rx) = mpsc::channel();
    let (at, how) = (path.to_path_buf(), access);
    std::thread::spawn(move || {
        let _ = tx.send(open_plain(&at, how));
    });
    let other = if access.write { "reader" } else { "writer" };
    let deadline = Instant::now() + wait;
    let mut said = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let step = if said {
            left
        } else {
            left.min(Duration::from_secs(1))
        };
        match rx.recv_timeout(step) {
            Ok(opened) => return opened,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(format!(
                    "opening {}: the opening thread quit",
                    path.display()
                ))
            }
            Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => break,
            Err(RecvTimeoutError::Timeout) => {
                eprintln!(
                    "gpuio run: {} is a FIFO: waiting for a {other} to open it (at most {:.1} s \
                     in all, --timeout)",
                    path.display(),
                    wait.as_secs_f64()
                );
                said = true;
            }
        }
    }
    // The other end, for an instant and never blocking: a FIFO's read end always
    // opens so, and its write end too while a reader (ours, in open) waits.
    use rustix::fs::{Mode, OFlags};
    let end = if access.write {
        OFlags::RDONLY
    } else {
        OFlags::WRONLY
    };
    let flags = end | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    if let Ok(ours) = rustix::fs::open(path, flags, Mode::empty()) {
        // The waiting open returns now; what it opened is dropped with ours.
        let _ = rx.recv_timeout(Duration::from_secs(1));
        drop(ours);
    }
    Err(format!(
        "opening {}: it is a FIFO and no {other} opened it within {:.1} s (--timeout); \
         start the {other} first, or give a longer --timeout",
        path.display(),
        wait.as_secs_f64()
    ))
}

/// Where the kernel's standard output goes.
enum Stdout<'a> {
    /// This process's stdout, live.
    Live,
    /// A file (compare mode), appended line by line.
    File(&'a Path),
}

/// Runs `kernel` of `module` once on `factory`'s pair, with the files at `paths`
/// (one per `spec.files`, in order).
fn run_once(
    factory: &ChannelFactory,
    module: &dyn Module,
    kernel: &str,
    spec: &RunSpec,
    paths: &[PathBuf],
    stdout: Stdout<'_>,
) -> Result<Outcome, String> {
    let mut cfg = ChannelConfig::default();
    if let Some(n) = spec.slots {
        cfg.slots = n;
    }
    if let Some(n) = spec.slot_size {
        cfg.slot_size = n;
    }
    if let Some(t) = spec.call_timeout {
        cfg.call_timeout = t;
    }
    let mut open_files = Vec::new();
    for (f, path) in spec.files.iter().zip(paths) {
        let file = open_endpoint_file(path, f.access, spec.timeout)?;
        cfg.endpoint(
            Endpoint::file(&f.name, &file, f.access)
                .map_err(|e| format!("registering {}: {e}", f.name))?,
        );
        open_files.push(file);
    }
    let queue_eps: Vec<u32> = spec
        .queues
        .iter()
        .map(|q| cfg.endpoint(Endpoint::queue_to_host(&q.name, QueueConfig::default())))
        .collect();
    let _captured = match stdout {
        Stdout::Live => {
            cfg.stdout(Endpoint::stdout().map_err(|e| format!("registering stdout: {e}"))?);
            None
        }
        Stdout::File(path) => {
            let (out, ep) = crate::conformance::stdout_file_endpoint(path)?;
            cfg.stdout(ep);
            Some(out)
        }
    };
    if let Some(i) = cfg.stdout_endpoint {
        match &spec.printf_log {
            Some(log) => cfg.log(i, log.clone()),
            None => cfg.no_log(i),
        }
    }
    let (cfg_slots, cfg_slot_size) = (cfg.effective_slots(), cfg.effective_slot_size());
    let before = factory.fallbacks().len();
    let opened = factory.open(cfg);
    for f in factory.fallbacks().iter().skip(before) {
        eprintln!("gpuio run: {f}");
    }
    let channel = opened.map_err(|e| format!("opening a channel: {e}"))?;
    let pair = crate::runtime::Pair {
        backend: factory.pair().backend,
        transport: channel.transport(),
    };
    if pair != factory.pair() {
        eprintln!("gpuio run: running on {pair} instead of {}", factory.pair());
    }
    let shape = channel.transport_shape();
    if !shape.is_empty() {
        eprintln!(
            "gpuio run: channel of {} slots of {} bytes; {}: {shape}",
            cfg_slots, cfg_slot_size, pair.transport
        );
    }
    // Each queue's writer thread drains until the kernel ended and its queue is empty.
    let kernel_done = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for (q, &ep) in spec.queues.iter().zip(&queue_eps) {
        let rx = channel
            .receiver(ep)
            .map_err(|e| format!("queue {}: {e}", q.name))?;
        let out =
            File::create(&q.path).map_err(|e| format!("creating {}: {e}", q.path.display()))?;
        let done = kernel_done.clone();
        writers.push(
            std::thread::Builder::new()
                .name(format!("gpuio-run-queue-{}", q.name))
                .spawn(move || write_queue(rx, out, &done))
                .map_err(|e| format!("starting a thread: {e}"))?,
        );
    }
    let start = Instant::now();
    let cpu_start = process_cpu_time();
    let running = module
        .launch(kernel, spec.grid, spec.block, &channel, &spec.args)
        .map_err(|e| match e {
            gpuio_core::device::DeviceError::NoSuchKernel(k) => {
                let defined =
                    kernels_in(&std::fs::read_to_string(&spec.source).unwrap_or_default());
                format!(
                    "{} defines no kernel named {k} (it defines: {})",
                    spec.source.display(),
                    if defined.is_empty() {
                        "none".to_string()
                    } else {
                        defined.join(", ")
                    }
                )
            }
            other => other.to_string(),
        })?;
    if let Some(how) = running.describe() {
        eprintln!("gpuio run: {kernel} runs {how}");
    }
    let timeout = spec.timeout;
    let joiner = std::thread::Builder::new()
        .name("gpuio-run-join".into())
        .spawn(move || running.join(timeout))
        .map_err(|e| format!("starting a thread: {e}"))?;
    let mut next_note = Duration::from_secs(2);
    while !joiner.is_finished() {
        std::thread::sleep(Duration::from_millis(20));
        if start.elapsed() >= next_note {
            let c = channel.counters();
            eprintln!(
                "gpuio run: {pair}: {:.0?} running, {} requests submitted, {} completed, {} failed",
                start.elapsed(),
                c.submitted,
                c.completed,
                c.failed
            );
            next_note += Duration::from_secs(2);
        }
    }
    let joined = joiner
        .join()
        .map_err(|_| "the joining thread panicked".to_string())?;
    kernel_done.store(true, Ordering::Release);
    let mut queues = Vec::new();
    for w in writers {
        queues.push(
            w.join()
                .map_err(|_| "a queue writer thread panicked".to_string())??,
        );
    }
    let wall = start.elapsed();
    let host_cpu = process_cpu_time().saturating_sub(cpu_start);
    let report = channel.close();
    let closed = start.elapsed();
    let params = joined.map_err(|e| format!("{e}; channel: {report}"))?;
    let mut out_bytes = 0;
    let stdout_path = match stdout {
        Stdout::File(p) => Some(p),
        Stdout::Live => None,
    };
    for (f, path) in spec.files.iter().zip(paths) {
        if f.access.write {
            out_bytes += std::fs::metadata(path).map_or(0, |m| m.len());
        }
    }
    if let Some(p) = stdout_path {
        out_bytes += std::fs::metadata(p).map_or(0, |m| m.len());
    }
    out_bytes += queues.iter().map(|q| q.bytes).sum::<u64>();
    Ok(Outcome {
        wall,
        closed,
        host_cpu,
        params,
        report,
        out_bytes,
        queues,
    })
}

/// Appends every message `rx` receives to `out` until `kernel_done` is set and the
/// queue is empty (the kernel published every message before it ended).
fn write_queue(
    mut rx: Receiver,
    out: File,
    kernel_done: &AtomicBool,
) -> Result<QueueOutcome, String> {
    let name = rx.name().to_string();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    let (mut messages, mut bytes) = (0u64, 0u64);
    let mut failed = None;
    loop {
        // Read before the drain: a drain that finds nothing after the kernel ended
        // has taken everything.
        let ended = kernel_done.load(Ordering::Acquire);
        let got = rx.drain(usize::MAX, |m| {
            if failed.is_none() {
                if let Err(e) = out.write_all(m) {
                    failed = Some(e);
                }
            }
            bytes += m.len() as u64;
        });
        match got {
            Ok(0) if ended => break,
            Ok(0) => std::thread::sleep(Duration::from_micros(50)),
            Ok(n) => messages += n as u64,
            Err(RecvError::Closed) => break,
            Err(e) => return Err(format!("queue {name}: {e}")),
        }
    }
    if let Some(e) = failed {
        return Err(format!("queue {name}: writing its messages: {e}"));
    }
    out.flush()
        .map_err(|e| format!("queue {name}: writing its messages: {e}"))?;
    Ok(QueueOutcome { messages, bytes })
}

fn read_source(spec: &RunSpec) -> Result<(String, String), String> {
    let source = std::fs::read_to_string(&spec.source)
        .map_err(|e| format!("reading {}: {e}", spec.source.display()))?;
    let kernel = pick_kernel(&source, spec.kernel.as_deref(), &spec.source)?;
    Ok((source, kernel))
}

fn load(factory: &ChannelFactory, spec: &RunSpec, source: &str) -> Result<Arc<dyn Module>, String> {
    factory
        .load(&spec.source.display().to_string(), source)
        .map_err(|e| e.to_string())
}

/// `gpuio run FILE` on one pair: the kernel's output live on stdout, then its
/// params and the channel's report on stderr.
pub fn run(factory: &ChannelFactory, spec: &RunSpec) -> Result<Outcome, String> {
    let (source, kernel) = read_source(spec)?;
    eprintln!(
        "gpuio run: {kernel} from {} on {} ({}), {} × {} threads",
        spec.source.display(),
        factory.pair(),
        factory.probe().device,
        spec.grid,
        spec.block
    );
    let module = load(factory, spec, &source)?;
    let paths: Vec<PathBuf> = spec.files.iter().map(|f| f.path.clone()).collect();
    let outcome = run_once(
        factory,
        module.as_ref(),
        &kernel,
        spec,
        &paths,
        Stdout::Live,
    )?;
    eprintln!(
        "gpuio run: finished in {:.3?} ({} requests, {:.0} requests/s; host CPU {:.3?})",
        outcome.wall,
        outcome.report.counters.submitted,
        outcome.report.counters.submitted as f64 / outcome.wall.as_secs_f64().max(1e-9),
        outcome.host_cpu
    );
    for log in &outcome.report.logs {
        let secs = outcome.closed.as_secs_f64().max(1e-9);
        eprintln!(
            "gpuio run: printf to {:?}: {} lines, {} bytes written within {:.3?} of the launch \
             ({:.2} M lines/s, {:.1} MB/s)",
            log.endpoint,
            log.lines,
            log.bytes,
            outcome.closed,
            log.lines as f64 / secs / 1e6,
            log.bytes as f64 / secs / 1e6
        );
    }
    for (q, arg) in outcome.queues.iter().zip(&spec.queues) {
        eprintln!(
            "gpuio run: queue {:?}: {} messages, {} bytes written to {}",
            arg.name,
            q.messages,
            q.bytes,
            arg.path.display()
        );
    }
    eprintln!("params: {:?}", outcome.params);
    eprintln!("channel: {}", outcome.report);
    Ok(outcome)
}

/// One row of `gpuio run --compare`.
#[derive(Debug)]
pub struct CompareRow {
    pub pair: String,
    /// The run's outcome, or why it failed.
    pub outcome: Result<Outcome, String>,
    /// Whether every output file (and stdout's lines) matches the first pair's;
    /// `None` for the first pair and for failed runs. `Err` names what differs.
    pub same: Option<Result<(), String>>,
}

fn sorted_lines(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    lines.sort();
    Ok(lines)
}

fn same_file(a: &Path, b: &Path) -> Result<bool, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    Ok(read(a)? == read(b)?)
}

/// `gpuio run --compare`: the kernel on every pair in `factories`, first pair
/// writing the real files, every other into `scratch`.
pub fn compare(
    factories: &[ChannelFactory],
    spec: &RunSpec,
    scratch: &Path,
) -> Result<Vec<CompareRow>, String> {
    // A FIFO or a socket carries a stream: the first pair would consume its bytes (or
    // send its own on), so no later pair could be given the same input or compared
    // byte for byte - and reading one to keep a copy would wait for its writer.
    for f in &spec.files {
        if let Some(kind) = stream_kind(&f.path) {
            return Err(format!(
                "--compare runs the kernel once on every pair and compares the files each                  wrote, but --file {}={} is a {kind}: the first pair would consume its stream                  and no other could be given or compared the same bytes; run one pair at a                  time with --backend BACKEND/TRANSPORT, or name a regular file",
                f.name,
                f.path.display()
            ));
        }
    }
    let (source, kernel) = read_source(spec)?;
    // Read-write files start from the same contents on every pair.
    let originals: Vec<Option<Vec<u8>>> = spec
        .files
        .iter()
        .map(|f| {
            if f.access.read && f.access.write {
                std::fs::read(&f.path).ok()
            } else {
                None
            }
        })
        .collect();
    let mut rows: Vec<CompareRow> = Vec::new();
    let mut first: Option<(Vec<PathBuf>, PathBuf)> = None;
    for (i, factory) in factories.iter().enumerate() {
        let pair = factory.pair();
        let slug = format!("{}-{}", pair.backend, pair.transport);
        eprintln!(
            "gpuio run --compare: [{}/{}] {kernel} on {pair} ({})",
            i + 1,
            factories.len(),
            factory.probe().device
        );
        let stdout_path = scratch.join(format!("stdout.{slug}"));
        let paths: Vec<PathBuf> = if first.is_none() {
            spec.files.iter().map(|f| f.path.clone()).collect()
        } else {
            spec.files
                .iter()
                .map(|f| {
                    if !f.access.write {
                        return f.path.clone();
                    }
                    let base = f
                        .path
                        .file_name()
                        .map_or_else(|| f.name.clone(), |n| n.to_string_lossy().into_owned());
                    scratch.join(format!("{base}.{slug}"))
                })
                .collect()
        };
        let mut prepared = Ok(());
        if first.is_some() {
            for (path, orig) in paths.iter().zip(&originals) {
                let Some(bytes) = orig else { continue };
                if let Err(e) = std::fs::write(path, bytes) {
                    prepared = Err(format!("preparing {}: {e}", path.display()));
                }
            }
        }
        let outcome = prepared.and_then(|()| {
            let module = load(factory, spec, &source)?;
            run_once(
                factory,
                module.as_ref(),
                &kernel,
                spec,
                &paths,
                Stdout::File(&stdout_path),
            )
        });
        let same = match (&outcome, &first) {
            (Ok(_), Some((first_paths, first_stdout))) => {
                let mut differs = Vec::new();
                for ((f, a), b) in spec.files.iter().zip(first_paths).zip(&paths) {
                    if f.access.write && !same_file(a, b)? {
                        differs.push(format!("{} ({})", f.name, b.display()));
                    }
                }
                if sorted_lines(first_stdout)? != sorted_lines(&stdout_path)? {
                    differs.push(format!("stdout ({})", stdout_path.display()));
                }
                Some(if differs.is_empty() {
                    Ok(())
                } else {
                    Err(differs.join(", "))
                })
            }
            _ => None,
        };
        if outcome.is_ok() && first.is_none() {
            first = Some((paths, stdout_path));
        }
        if let Err(e) = &outcome {
            eprintln!("gpuio run --compare: {pair}: {e}");
        }
        rows.push(CompareRow {
            pair: pair.to_string(),
            outcome,
            same,
        });
    }
    Ok(rows)
}

/// "FIFO" or "socket" when `path` is one (a stream, which `--compare` cannot hand
/// to every pair alike), else `None` (a regular file, a device, or nothing yet).
fn stream_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).ok()?.file_type();
    if t.is_fifo() {
        Some("FIFO")
    } else if t.is_socket() {
        Some("socket")
    } else {
        None
    }
}

/// The table `--compare` prints.
pub fn compare_table(rows: &[CompareRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<14} {:>12} {:>10} {:>12} {:>10}  {:<8}  output vs the first pair",
        "pair", "wall", "requests", "out bytes", "host CPU", "clean"
    );
    for r in rows {
        match &r.outcome {
            Ok(o) => {
                let _ = writeln!(
                    out,
                    "{:<14} {:>12} {:>10} {:>12} {:>10}  {:<8}  {}",
                    r.pair,
                    format!("{:.3?}", o.wall),
                    o.report.counters.submitted,
                    o.out_bytes,
                    format!("{:.3?}", o.host_cpu),
                    if o.report.is_clean() { "yes" } else { "NO" },
                    match &r.same {
                        None => "(reference)".to_string(),
                        Some(Ok(())) => "byte-identical".to_string(),
                        Some(Err(what)) => format!("DIFFERS: {what}"),
                    }
                );
            }
            Err(e) => {
                let _ = writeln!(out, "{:<14} FAILED: {e}", r.pair);
            }
        }
    }
    out
}

/// Whether a comparison found every pair ran cleanly with identical output.
pub fn compare_ok(rows: &[CompareRow]) -> bool {
    !rows.is_empty()
        && rows.iter().all(|r| {
            r.outcome.as_ref().is_ok_and(|o| o.report.is_clean()) && !matches!(r.same, Some(Err(_)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO in `dir`, with nobody at either end.
    fn make_fifo(dir: &Path) -> PathBuf {
        let path = dir.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        path
    }

    #[test]
    fn a_fifo_for_one_direction_with_nobody_at_the_other_end_times_out_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = make_fifo(dir.path());
        for (access, other) in [(Access::WRITE, "no reader"), (Access::READ, "no writer")] {
            let start = Instant::now();
            let err = open_endpoint_file(&fifo, access, Duration::from_millis(200)).unwrap_err();
            let took = start.elapsed();
            assert!(err.contains(other) && err.contains("FIFO"), "{err}");
            assert!(
                took >= Duration::from_millis(200) && took < Duration::from_secs(10),
                "{took:?}"
            );
        }
    }

    #[test]
    fn a_fifo_for_writing_opens_once_its_reader_comes_and_carries_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = make_fifo(dir.path());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::read(&fifo).unwrap()
            })
        };
        let mut out = open_endpoint_file(&fifo, Access::WRITE, Duration::from_secs(30)).unwrap();
        out.write_all(b"hello").unwrap();
        drop(out);
        assert_eq!(reader.join().unwrap(), b"hello");
    }

    #[test]
    fn a_fifo_for_reading_opens_once_its_writer_comes() {
        use std::io::Read as _;
        let dir = tempfile::tempdir().unwrap();
        let fifo = make_fifo(dir.path());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::write(&fifo, b"bytes").unwrap()
            })
        };
        let mut input = open_endpoint_file(&fifo, Access::READ, Duration::from_secs(30)).unwrap();
        let mut got = Vec::new();
        input.read_to_end(&mut got).unwrap();
        writer.join().unwrap();
        assert_eq!(got, b"bytes");
    }

    #[test]
    fn compare_refuses_a_fifo_at_once_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = make_fifo(dir.path());
        for access in ["r", "w", "rw"] {
            let spec = RunSpec {
                source: dir.path().join("kernel.cu"),
                kernel: None,
                grid: 1,
                block: 1,
                files: vec![format!("pipe={}:{access}", fifo.display()).parse().unwrap()],
                queues: Vec::new(),
                args: Vec::new(),
                timeout: Duration::from_secs(5),
                slots: None,
                slot_size: None,
                call_timeout: None,
                printf_log: None,
            };
            let start = Instant::now();
            let err = compare(&[], &spec, dir.path()).unwrap_err();
            assert!(
                err.contains("pipe=") && err.contains("is a FIFO") && err.contains("--backend"),
                "{err}"
            );
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "it waited for the FIFO"
            );
        }
    }

    #[test]
    fn file_arguments_take_a_name_a_path_and_an_access_defaulting_to_read_write() {
        let f: FileArg = "in=data/x.bin:r".parse().unwrap();
        assert_eq!(
            (f.name.as_str(), f.path.as_path(), f.access),
            ("in", Path::new("data/x.bin"), Access::READ)
        );
        assert_eq!("o=y:w".parse::<FileArg>().unwrap().access, Access::WRITE);
        assert_eq!(
            "o=y:rw".parse::<FileArg>().unwrap().access,
            Access::READ_WRITE
        );
        let f: FileArg = "o=a:b".parse().unwrap();
        assert_eq!(
            (f.path.as_path(), f.access),
            (Path::new("a:b"), Access::READ_WRITE)
        );
        for bad in ["nopath", "=x", "n=", "n=:r"] {
            assert!(bad.parse::<FileArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_only_kernel_is_picked_and_several_must_be_named() {
        let one =
            "#include \"gpuio.h\"\nGPUIO_KERNEL(hello)(const gpuio_channel *ch, gpuio_u64 *p) {}";
        assert_eq!(pick_kernel(one, None, Path::new("a.cu")).unwrap(), "hello");
        let two = "GPUIO_KERNEL( a )(x) {}\nGPUIO_KERNEL(b)(y) {}\n#define GPUIO_KERNEL_X 1";
        assert_eq!(kernels_in(two), ["a", "b"]);
        let e = pick_kernel(two, None, Path::new("k.cu")).unwrap_err();
        assert!(e.contains("a, b") && e.contains("--kernel"), "{e}");
        assert_eq!(pick_kernel(two, Some("b"), Path::new("k.cu")).unwrap(), "b");
        assert!(pick_kernel("int x;", None, Path::new("k.cu"))
            .unwrap_err()
            .contains("found no GPUIO_KERNEL"));
    }
}
