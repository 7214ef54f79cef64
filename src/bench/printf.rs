//! `printf` figures (`gpuio bench`): lines printed with `gpuio_printf` to a file,
//! next to the same lines printed by the same threads with the device's own
//! `printf` (CUDA's on an NVIDIA GPU, the C library's on the CPU device), measured
//! to a file too: the process's fd 1 is pointed at a file around the launch and
//! the synchronisation that flushes the device's printf buffer, both timed.
//! Lines are counted in the files, so a line that was lost shows.
//! * 64 threads (`Scale::threads`), `Scale::lines_per_thread` lines each; also
//!   against one host thread formatting and `write`-ing the same lines;
//! * the whole device (`Device::full_shape`, every SM × 1024 threads on a GPU),
//!   `Scale::printf_lines` lines in all (2^21, 2^14 with `--quick`): 16 lines per
//!   thread on an H100 (132 × 1024 threads), more per thread where the device has
//!   fewer threads (the CPU device), at least one each.

use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::path::Path;
use std::time::{Duration, Instant};

use gpuio_core::TransportKind;
use gpuio_device::Device;

use super::{
    fail_check, host_printf_lines_per_s, launch_channel, launch_wait_shape, process_cpu_time,
    Better, Figure, Scale,
};
use crate::conformance::{stdout_file_config, Opener};

/// What one printing run left in its file.
struct Printed {
    took: Duration,
    /// The process's CPU time while it ran.
    cpu: Duration,
    lines: u64,
    bytes: u64,
}

impl Printed {
    fn lines_per_s(&self) -> f64 {
        self.lines as f64 / self.took.as_secs_f64()
    }
    fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / self.took.as_secs_f64() / 1e6
    }
}

/// Lines (newlines) and bytes in the file at `path`.
fn count(path: &Path) -> Result<(u64, u64), String> {
    let text = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let lines = text.iter().filter(|&&b| b == b'\n').count() as u64;
    Ok((lines, text.len() as u64))
}

/// `gpuio_printf`: `lines` lines from each of `grid × block` threads, to a file.
fn gpuio_lines(
    device: &dyn Device,
    open: &Opener<'_>,
    path: &Path,
    (grid, block): (u32, u32),
    lines: u64,
) -> Result<Printed, String> {
    let (_out, cfg) = stdout_file_config(path)?;
    let ch = open(cfg)?;
    let cpu0 = process_cpu_time();
    let start = Instant::now();
    let (p, _) = launch_wait_shape(device, &ch, "printf_lines", (grid, block), &[lines, 0, 0])?;
    // Until every line is in the file: the kernel, then the close's drain of the
    // log (part of the time); not the transport's own close after it (a forward
    // channel waits 50 ms for quiet), which the device's printf has no part of.
    let closing = start.elapsed();
    let report = ch.close();
    let took = (closing + report.logs_elapsed).max(Duration::from_nanos(1));
    let cpu = process_cpu_time().saturating_sub(cpu0);
    fail_check(&p, 1, "printf")?;
    if !report.is_clean() {
        return Err(format!("close: {report}"));
    }
    let (lines, bytes) = count(path)?;
    let _ = std::fs::remove_file(path);
    Ok(Printed {
        took,
        cpu,
        lines,
        bytes,
    })
}

/// C's `fflush(NULL)`: every `stdio` output stream of the process, so the lines a
/// device's `printf` put in the C library's `stdout` buffer reach fd 1.
fn flush_c_stdio() {
    // SAFETY: fflush(NULL) flushes every open output stream; no pointer of ours is
    // passed and nothing is freed.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// Runs `f` with the process's fd 1 pointing at a new file at `path`, then points
/// fd 1 back where it was (whatever `f` returned). Rust's and C's stdout buffers
/// are flushed first so nothing printed before lands in the file.
fn with_stdout_to<T>(path: &Path, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let _ = std::io::stdout().flush();
    flush_c_stdio();
    let file =
        std::fs::File::create(path).map_err(|e| format!("create {}: {e}", path.display()))?;
    let saved = rustix::io::dup(std::io::stdout().as_fd()).map_err(|e| format!("dup(1): {e}"))?;
    rustix::stdio::dup2_stdout(&file).map_err(|e| format!("dup2 onto fd 1: {e}"))?;
    let out = f();
    flush_c_stdio();
    let back = rustix::stdio::dup2_stdout(&saved).map_err(|e| format!("restoring fd 1: {e}"));
    let out = out?;
    back?;
    Ok(out)
}

/// The device's own `printf`: the same lines from the same threads, to a file.
fn native_lines(
    device: &dyn Device,
    path: &Path,
    (grid, block): (u32, u32),
    lines: u64,
) -> Result<Printed, String> {
    let ch = launch_channel(device, "the native printf kernel")?;
    let (took, cpu) = with_stdout_to(path, || {
        let cpu0 = process_cpu_time();
        let start = Instant::now();
        device
            .native_printf(grid, block, lines, &ch)
            .map_err(|e| format!("{}: {e}", device.native_printf_name()))?;
        flush_c_stdio();
        Ok((start.elapsed(), process_cpu_time().saturating_sub(cpu0)))
    })?;
    let _ = ch.close();
    let (lines, bytes) = count(path)?;
    let _ = std::fs::remove_file(path);
    Ok(Printed {
        took: took.max(Duration::from_nanos(1)),
        cpu,
        lines,
        bytes,
    })
}

/// A note on lines missing from a file, if any.
fn lost(what: &str, p: &Printed, expected: u64) -> Option<String> {
    Some(if p.lines == expected {
        format!("{what}: {expected} of {expected} lines in the file, 0 lost")
    } else {
        format!(
            "{what}: {} of {expected} lines in the file, {} lost",
            p.lines,
            expected.saturating_sub(p.lines)
        )
    })
}

/// Every printf figure of one transport (see the module doc).
pub fn figures(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let native = device.native_printf_name();
    let mut figures = Vec::new();
    // The device's printf buffer is sized once, before its first printing kernel
    // (CUDA's): room for the larger of the two figures' lines, or the whole-device
    // reference drops most of its lines (1.57 M of 2.16 M on an H100, 2026-11-26).
    let (grid, block) = device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let per = scale.printf_lines.div_ceil(threads).max(1);
    device
        .reserve_native_printf(
            (threads * per).max(u64::from(scale.threads) * scale.lines_per_thread),
        )
        .map_err(|e| format!("{native}: {e}"))?;

    // 64 threads.
    let shape = (1, scale.threads);
    let expected = u64::from(scale.threads) * scale.lines_per_thread;
    let ours = gpuio_lines(
        device,
        open,
        &dir.join(format!("bench-{transport}-printf.txt")),
        shape,
        scale.lines_per_thread,
    )?;
    let theirs = native_lines(
        device,
        &dir.join(format!("bench-{transport}-native-printf.txt")),
        shape,
        scale.lines_per_thread,
    )?;
    let host_rate = host_printf_lines_per_s(dir, scale)?;
    let same = format!("{native}, same lines and threads, to a file");
    figures.push(
        Figure::new(
            format!("{transport}: printf, {} threads", scale.threads),
            ours.lines_per_s() / 1e3,
            "kl/s",
            Better::Higher,
        )
        .against("one host thread, snprintf + write", Some(host_rate / 1e3))
        .also(&same, Some(theirs.lines_per_s() / 1e3))
        .host_cpu(ours.cpu, ours.bytes, ours.lines)
        .note(lost("gpuio_printf", &ours, expected))
        .note(lost(native, &theirs, expected)),
    );
    figures.push(
        Figure::new(
            format!("{transport}: printf bytes, {} threads", scale.threads),
            ours.mb_per_s(),
            "MB/s",
            Better::Higher,
        )
        .against(&same, Some(theirs.mb_per_s())),
    );

    // The whole device.
    let expected = threads * per;
    let ours = gpuio_lines(
        device,
        open,
        &dir.join(format!("bench-{transport}-printf-all.txt")),
        (grid, block),
        per,
    )?;
    let theirs = native_lines(
        device,
        &dir.join(format!("bench-{transport}-native-printf-all.txt")),
        (grid, block),
        per,
    )?;
    let same = format!("{native}, same lines and threads, to a file (launch through sync)");
    let what = format!(
        "{transport}: printf, whole device {grid}x{block}, {per} line{} each",
        if per == 1 { "" } else { "s" }
    );
    figures.push(
        Figure::new(
            what.clone(),
            ours.lines_per_s() / 1e3,
            "kl/s",
            Better::Higher,
        )
        .against(&same, Some(theirs.lines_per_s() / 1e3))
        .host_cpu(ours.cpu, ours.bytes, ours.lines)
        .note(lost("gpuio_printf", &ours, expected))
        .note(lost(native, &theirs, expected)),
    );
    figures.push(
        Figure::new(
            format!("{transport}: printf bytes, whole device {grid}x{block}"),
            ours.mb_per_s(),
            "MB/s",
            Better::Higher,
        )
        .against(&same, Some(theirs.mb_per_s())),
    );
    Ok(figures)
}
