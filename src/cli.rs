//! What the `gpuio` commands do; `main.rs` only parses arguments and prints errors.
//!
//! Every command first resolves the backend (`--backend`, else `GPUIO_BACKEND`, else
//! the best available pair), so a forced pair that is unavailable stops every
//! command with the probe's reason.
//!
//! `gpuio probe` ends by opening (and at once closing) one channel of the default
//! configuration on the chosen pair, as a program's first `open` would: what it
//! reports is what opens, and where the chosen pair could not open for a reason of
//! resources, the report shows the fallback and its reason.

use std::fmt::Write as _;
use std::process::ExitCode;

use gpuio_core::backend::Availability;
use serde::Serialize;

use crate::runtime::{ChannelFactory, Fallback, Request, Runtime, SelectError};

/// Exit status when the backend asked for is unavailable or the request is malformed.
pub const EXIT_UNAVAILABLE: u8 = 1;

/// One row of `gpuio probe`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PairRow {
    pub backend: &'static str,
    pub transport: &'static str,
    pub gpu: bool,
    pub available: bool,
    pub score: Option<u32>,
    /// Why not, when unavailable.
    pub reason: Option<String>,
    pub chosen: bool,
}

/// What one backend's probe found.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BackendRow {
    pub name: &'static str,
    pub device: String,
    pub capabilities: Vec<CapabilityRow>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CapabilityRow {
    pub name: String,
    pub value: String,
}

/// One fallback of `open` (see [`crate::runtime::Fallback`]).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FallbackRow {
    pub from: String,
    pub to: String,
    pub reason: String,
}

impl From<&Fallback> for FallbackRow {
    fn from(f: &Fallback) -> Self {
        Self {
            from: f.from.to_string(),
            to: f.to.to_string(),
            reason: f.reason.clone(),
        }
    }
}

/// Everything `gpuio probe` shows; `--json` prints it as is.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ProbeReport {
    /// The chosen pair (`cpu/direct`), or none when the request could not be met.
    pub chosen: Option<String>,
    /// The pair a channel of the default configuration opened on (the chosen one,
    /// or where `open` fell back to); none before [`ProbeReport::check_open`] or
    /// when no channel opened.
    pub opened: Option<String>,
    /// How that channel's transport served it on the host (its rings and threads,
    /// [`gpuio_core::Channel::transport_shape`]); none where it chose nothing.
    pub opened_shape: Option<String>,
    /// The fallbacks that open took, each with its reason.
    pub fallbacks: Vec<FallbackRow>,
    /// What `--backend` / `GPUIO_BACKEND` asked for.
    pub requested: Option<String>,
    /// Why the request could not be met.
    pub error: Option<String>,
    /// Every pair, best first.
    pub pairs: Vec<PairRow>,
    pub backends: Vec<BackendRow>,
}

impl ProbeReport {
    /// The report of `runtime`'s probes and what `request` selects.
    pub fn new(runtime: &Runtime, request: Option<&Request>) -> Self {
        let choice = runtime.choose(request);
        let chosen = choice.as_ref().ok().map(ChannelFactory::pair);
        let pairs = runtime
            .ranked()
            .into_iter()
            .map(|s| PairRow {
                backend: s.pair.backend,
                transport: s.pair.transport.name(),
                gpu: s.gpu,
                available: s.availability.is_available(),
                score: s.availability.score(),
                reason: match s.availability {
                    Availability::Available { .. } => None,
                    Availability::Unavailable { reason } => Some(reason),
                },
                chosen: Some(s.pair) == chosen,
            })
            .collect();
        let backends = runtime
            .probes()
            .map(|p| BackendRow {
                name: p.backend,
                device: p.device.clone(),
                capabilities: p
                    .capabilities
                    .iter()
                    .map(|c| CapabilityRow {
                        name: c.name.clone(),
                        value: c.value.clone(),
                    })
                    .collect(),
            })
            .collect();
        Self {
            chosen: chosen.map(|p| p.to_string()),
            opened: None,
            opened_shape: None,
            fallbacks: Vec::new(),
            requested: request.map(ToString::to_string),
            error: choice.err().map(|e| e.to_string()),
            pairs,
            backends,
        }
    }

    /// Opens one channel of the default configuration on `factory` (the chosen
    /// pair) and closes it: `opened` and `fallbacks` say what happened; a channel
    /// that opens nowhere is the report's `error`.
    pub fn check_open(&mut self, factory: &ChannelFactory) {
        let before = factory.fallbacks().len();
        match factory.open(gpuio_core::ChannelConfig::default()) {
            Ok(channel) => {
                self.opened = Some(
                    crate::runtime::Pair {
                        backend: factory.pair().backend,
                        transport: channel.transport(),
                    }
                    .to_string(),
                );
                let shape = channel.transport_shape();
                self.opened_shape = (!shape.is_empty()).then_some(shape);
                let report = channel.close();
                if !report.is_clean() {
                    tracing::warn!(%report, "the probe's channel did not close cleanly");
                }
            }
            Err(e) => {
                self.error = Some(format!(
                    "{} was chosen, but a channel of the default configuration does not open: {e}",
                    factory.pair()
                ));
            }
        }
        self.fallbacks = factory.fallbacks()[before..]
            .iter()
            .map(FallbackRow::from)
            .collect();
    }

    /// The table a person reads.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let w_backend = self
            .pairs
            .iter()
            .map(|p| p.backend.len())
            .max()
            .unwrap_or(0)
            .max("backend".len());
        let _ = writeln!(
            out,
            "  {:<w_backend$}  {:<9}  {:<11}  {:>5}  reason",
            "backend", "transport", "status", "score"
        );
        for p in &self.pairs {
            let _ = writeln!(
                out,
                "{} {:<w_backend$}  {:<9}  {:<11}  {:>5}  {}",
                if p.chosen { "*" } else { " " },
                p.backend,
                p.transport,
                if p.available {
                    "available"
                } else {
                    "unavailable"
                },
                p.score.map_or_else(|| "-".to_string(), |s| s.to_string()),
                p.reason.as_deref().unwrap_or(""),
            );
        }
        let _ = writeln!(out);
        for b in &self.backends {
            let _ = writeln!(out, "{}: {}", b.name, b.device);
            for c in &b.capabilities {
                let _ = writeln!(out, "    {}: {}", c.name, c.value);
            }
        }
        let _ = writeln!(out);
        match (&self.chosen, &self.requested) {
            (Some(c), Some(r)) => {
                let _ = writeln!(out, "chosen: {c} (asked for by {r})");
            }
            (Some(c), None) => {
                let _ = writeln!(out, "chosen: {c}");
            }
            (None, _) => {
                let _ = writeln!(out, "chosen: none");
            }
        }
        for f in &self.fallbacks {
            let _ = writeln!(
                out,
                "fell back: {} could not open a channel, so {} was tried: {}",
                f.from, f.to, f.reason
            );
        }
        if let (Some(opened), false) = (&self.opened, self.fallbacks.is_empty()) {
            let _ = writeln!(out, "opened: {opened}");
        }
        if let (Some(opened), Some(shape)) = (&self.opened, &self.opened_shape) {
            let _ = writeln!(out, "a default channel on {opened}: {shape}");
        }
        out
    }
}

/// `gpuio probe`: the table (or JSON) of every pair; fails when the pair asked
/// for is unavailable, after printing the table.
pub fn probe(runtime: &Runtime, request: Option<&Request>, json: bool) -> ExitCode {
    let mut report = ProbeReport::new(runtime, request);
    if let Ok(factory) = runtime.choose(request) {
        report.check_open(&factory);
    }
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => print_stdout(&format!("{text}\n")),
            Err(e) => {
                eprintln!("gpuio probe: could not write JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print_stdout(&report.to_text());
    }
    match &report.error {
        Some(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_UNAVAILABLE)
        }
        None => ExitCode::SUCCESS,
    }
}

/// Writes to stdout; a closed pipe (`gpuio probe | head`) is not an error worth a panic.
fn print_stdout(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("gpuio: writing to stdout: {e}");
        }
    }
}

/// Resolves the pair a command runs on, or says why it cannot.
pub fn resolve(
    runtime: &Runtime,
    request: Option<&Request>,
) -> Result<ChannelFactory, SelectError> {
    let factory = runtime.choose(request)?;
    tracing::info!(pair = %factory.pair(), device = %factory.probe().device, "backend chosen");
    Ok(factory)
}

/// The pairs a measuring command runs on: the one asked for, else every available
/// pair of the chosen backend.
fn pairs_for(
    runtime: &Runtime,
    request: Option<&Request>,
    chosen: &ChannelFactory,
) -> Vec<ChannelFactory> {
    if request.is_some_and(|r| r.transport.is_some()) {
        return vec![chosen.clone()];
    }
    runtime
        .available()
        .into_iter()
        .filter(|f| f.pair().backend == chosen.pair().backend)
        .collect()
}

fn scratch_dir() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("gpuio-")
        .tempdir()
        .map_err(|e| format!("creating a scratch directory: {e}"))
}

/// What `gpuio bench --only` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchPart {
    /// Requests, on every transport.
    Requests,
    /// Host queues (once per backend: they do not depend on the transport).
    Queues,
    /// One thread's round trips on every transport: NOP and 64 B pwrite p50/p99
    /// against the ping-pong floor, and where a NOP's time goes (seconds, not
    /// minutes: no references, no whole-device figures, no calibration).
    Latency,
    /// 1 MiB reads and writes from every warp on every transport, with their
    /// references and the host's CPU by kind of thread (no calibration).
    Bulk,
}

/// What `gpuio bench` was asked for.
#[derive(Clone, Debug, Default)]
pub struct BenchOptions {
    pub quick: bool,
    pub json: bool,
    pub only: Option<BenchPart>,
    /// Measurements of each figure (default: the scale's).
    pub repeats: Option<u32>,
    /// Where to draw the SVG plot.
    pub plot: Option<std::path::PathBuf>,
}

/// Figures as JSON, each with its ratios and spread.
fn figures_json(figures: &[crate::bench::Figure]) -> Vec<serde_json::Value> {
    figures.iter().map(crate::bench::Figure::to_json).collect()
}

/// `gpuio bench`: the same-run references, then every transport of the chosen
/// backend (or the pair asked for), each figure next to its references; then the
/// host queues. Every figure is measured `repeats` times; the median is reported.
pub fn bench(
    runtime: &Runtime,
    request: Option<&Request>,
    chosen: &ChannelFactory,
    opts: BenchOptions,
) -> ExitCode {
    use crate::bench::{bulk, merge, Figure};
    let BenchOptions {
        quick, json, only, ..
    } = opts;
    let mut scale = if quick {
        crate::bench::Scale::QUICK
    } else {
        crate::bench::Scale::FULL
    };
    scale.repeats = opts.repeats.unwrap_or(scale.repeats).max(1);
    let repeats = scale.repeats;
    let device = match chosen.device() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}: {e}", chosen.pair());
            return ExitCode::FAILURE;
        }
    };
    let dir = match scratch_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let heading = format!(
        "gpuio bench{} on {} — {}\nfiles in {} (the references write there too); \
         every figure measured {repeats} time{} (median{})\n",
        if quick { " --quick" } else { "" },
        chosen.pair().backend,
        device.name(),
        dir.path().display(),
        if repeats == 1 { "" } else { "s" },
        if repeats == 1 {
            ""
        } else {
            ", with the least and greatest"
        },
    );
    // With --json, stdout carries only the JSON; the words go to stderr.
    let say = |text: &str| {
        if json {
            eprint!("{text}");
        } else {
            print_stdout(text);
        }
    };
    say(&heading);
    let mut failed = false;
    let mut measured = Vec::new();
    let mut pairs = Vec::new();
    let mut plotted = Vec::new();
    let latency_only = only == Some(BenchPart::Latency);
    let measure_requests = only != Some(BenchPart::Queues);

    // References that do not depend on the transport, once per repeat (none for
    // the latency figures: their floor is measured beside them).
    let mut refs = Vec::new();
    let mut references = serde_json::Value::Null;
    if latency_only {
        refs.resize_with(repeats as usize, bulk::RunRefs::default);
    } else if measure_requests {
        let start = std::time::Instant::now();
        let mut runs = Vec::new();
        for r in 1..=repeats {
            eprintln!("gpuio bench: measuring the references (copy ceiling, host bulk I/O and NOPs, SQPOLL NOPs), {r} of {repeats} ...");
            match bulk::run_refs(device.as_ref(), dir.path(), scale) {
                Ok(x) => {
                    runs.push(bulk::reference_figures(&x));
                    refs.push(x);
                }
                Err(e) => {
                    failed = true;
                    eprintln!("error: references: {e}");
                    refs.push(bulk::RunRefs::default());
                }
            }
        }
        let figures = merge(runs);
        let mut out = String::from("references (same run, every transport held against them):\n");
        for fig in &figures {
            let _ = writeln!(out, "  {fig}");
        }
        let _ = writeln!(out, "  (measured in {:.1?})", start.elapsed());
        say(&out);
        references = serde_json::json!({
            "seconds": start.elapsed().as_secs_f64(),
            "figures": figures_json(&figures),
        });
    }

    for f in pairs_for(runtime, request, chosen)
        .into_iter()
        .filter(|_| measure_requests)
    {
        let open = |cfg| f.open(cfg).map_err(|e| e.to_string());
        let start = std::time::Instant::now();
        let mut runs = Vec::new();
        let mut ms = Vec::new();
        let mut error = None;
        for (r, refs) in refs.iter().enumerate() {
            eprintln!(
                "gpuio bench: measuring {}, {} of {repeats} ...",
                f.pair(),
                r + 1
            );
            let measured = if latency_only {
                crate::bench::run_latency(
                    device.as_ref(),
                    f.pair().transport,
                    &open,
                    dir.path(),
                    scale,
                )
                .map(|figures| (figures, None))
            } else if only == Some(BenchPart::Bulk) {
                crate::bench::bulk::figures(
                    device.as_ref(),
                    f.pair().transport,
                    &open,
                    dir.path(),
                    refs,
                    scale,
                )
                .map(|figures| (figures, None))
            } else {
                crate::bench::run_transport(
                    device.as_ref(),
                    f.pair().transport,
                    &open,
                    dir.path(),
                    scale,
                    refs,
                )
                .map(|(figures, m)| (figures, Some(m)))
            };
            match measured {
                Ok((figures, m)) => {
                    runs.push(figures);
                    ms.extend(m);
                }
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = &error {
            failed = true;
            eprintln!(
                "error: {}: {e} (in repeat {} of {repeats}; the figures below are the {} before it)",
                f.pair(),
                runs.len() + 1,
                runs.len()
            );
            if runs.is_empty() {
                pairs.push(serde_json::json!({
                    "pair": f.pair().to_string(),
                    "error": e,
                }));
                continue;
            }
        }
        // The calibration keeps the repeat with the median whole-device rate.
        ms.sort_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s));
        if let Some(mut m) = ms.get(ms.len() / 2).cloned() {
            m.pair = f.pair().to_string();
            m.device = f.probe().device.clone();
            measured.push(m);
        }
        let repeats_done = runs.len();
        let figures: Vec<Figure> = merge(runs);
        let mut out = String::new();
        for fig in &figures {
            let _ = writeln!(out, "  {fig}");
        }
        let _ = writeln!(out, "  ({} measured in {:.1?})", f.pair(), start.elapsed());
        say(&out);
        let mut entry = serde_json::json!({
            "pair": f.pair().to_string(),
            "seconds": start.elapsed().as_secs_f64(),
            "repeats": repeats_done,
            "figures": figures_json(&figures),
        });
        if let Some(e) = error {
            entry["error"] = e.into();
        }
        pairs.push(entry);
        plotted.push((f.pair().to_string(), figures));
    }
    if let Some(saved) = save_calibration(measured) {
        say(&saved);
    }
    let mut queues = serde_json::Value::Null;
    if matches!(only, None | Some(BenchPart::Queues)) {
        let open = |cfg| chosen.open(cfg).map_err(|e| e.to_string());
        let start = std::time::Instant::now();
        let mut runs = Vec::new();
        let mut error = None;
        for r in 1..=repeats {
            eprintln!(
                "gpuio bench: measuring host queues on {}, {r} of {repeats} ...",
                chosen.pair().backend
            );
            match crate::bench::queues::figures(device.as_ref(), &open, scale) {
                Ok(figures) => runs.push(figures),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        match error {
            None => {
                let figures = merge(runs);
                let mut out = format!("host queues ({}):\n", chosen.pair().backend);
                for fig in &figures {
                    let _ = writeln!(out, "  {fig}");
                }
                let _ = writeln!(out, "  (measured in {:.1?})", start.elapsed());
                say(&out);
                queues = serde_json::json!({
                    "seconds": start.elapsed().as_secs_f64(),
                    "figures": figures_json(&figures),
                });
            }
            Some(e) => {
                failed = true;
                eprintln!("error: host queues: {e}");
                queues = serde_json::json!({ "error": e });
            }
        }
    }
    if let Some(path) = &opts.plot {
        let title = format!(
            "gpuio bench{} — {} — median of {repeats}",
            if quick { " --quick" } else { "" },
            device.name()
        );
        match std::fs::write(path, crate::bench::plot::svg(&title, &plotted)) {
            Ok(()) => say(&format!("plot written to {}\n", path.display())),
            Err(e) => {
                failed = true;
                eprintln!("error: writing the plot to {}: {e}", path.display());
            }
        }
    }
    if json {
        let doc = serde_json::json!({
            "device": device.name(),
            "backend": chosen.pair().backend,
            "quick": quick,
            "repeats": repeats,
            "references": references,
            "pairs": pairs,
            "queues": queues,
        });
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => print_stdout(&format!("{text}\n")),
            Err(e) => {
                eprintln!("error: writing the JSON: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Stores the whole-device figures `gpuio bench` measured, for selection; says
/// where, in words for the user.
fn save_calibration(measured: Vec<crate::calibration::Measured>) -> Option<String> {
    use crate::calibration::Calibration;
    let path = Calibration::path()?;
    if measured.is_empty() {
        return None;
    }
    let mut cal = match Calibration::load(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gpuio bench: replacing an unreadable calibration: {e}");
            Calibration::default()
        }
    };
    cal.record(measured);
    match cal.save(&path) {
        Ok(()) => Some(format!(
            "calibration saved to {} (Runtime::auto ranks each backend's transports by it; \
             GPUIO_CALIBRATION=off ignores it)\n",
            path.display()
        )),
        Err(e) => {
            eprintln!("gpuio bench: could not save the calibration: {e}");
            None
        }
    }
}

/// `gpuio selftest`: every conformance case on every available pair (or only the
/// pair asked for), one line per case, skipped pairs and cases (a case about one
/// transport on another) with their reasons, and a last line `N passed, N failed`;
/// non-zero exit on any failure.
pub fn selftest(runtime: &Runtime, request: Option<&Request>, chosen: &ChannelFactory) -> ExitCode {
    let factories = match request {
        Some(_) => pairs_for(runtime, request, chosen),
        None => runtime.available(),
    };
    for s in runtime.ranked() {
        if let Availability::Unavailable { reason } = &s.availability {
            print_stdout(&format!("skip {}: {reason}\n", s.pair));
        }
    }
    let (mut passed, mut failed) = (0u32, 0u32);
    for f in factories {
        let device = match f.device() {
            Ok(d) => d,
            Err(e) => {
                print_stdout(&format!("FAIL {} (no device): {e}\n", f.pair()));
                failed += crate::conformance::CASES
                    .iter()
                    .filter(|c| c.skip_reason(f.pair().transport).is_none())
                    .count() as u32;
                continue;
            }
        };
        for case in crate::conformance::CASES {
            if let Some(why) = case.skip_reason(f.pair().transport) {
                print_stdout(&format!("skip {} {}: {why}\n", f.pair(), case.name));
                continue;
            }
            let dir = match scratch_dir() {
                Ok(d) => d,
                Err(e) => {
                    print_stdout(&format!("FAIL {} {}: {e}\n", f.pair(), case.name));
                    failed += 1;
                    continue;
                }
            };
            let open = |cfg| f.open(cfg).map_err(|e| e.to_string());
            let target = crate::conformance::Target {
                device: device.as_ref(),
                transport: f.pair().transport,
                open: &open,
                dir: dir.path(),
            };
            let start = std::time::Instant::now();
            match (case.run)(&target) {
                Ok(detail) => {
                    passed += 1;
                    print_stdout(&format!(
                        "ok   {} {} ({:.2?}): {detail}\n",
                        f.pair(),
                        case.name,
                        start.elapsed()
                    ));
                }
                Err(e) => {
                    failed += 1;
                    print_stdout(&format!(
                        "FAIL {} {} ({:.2?}): {e}\n",
                        f.pair(),
                        case.name,
                        start.elapsed()
                    ));
                }
            }
        }
    }
    print_stdout(&format!("{passed} passed, {failed} failed\n"));
    if failed == 0 && passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `gpuio run`: the kernel file on the chosen pair, or with `--compare` on every
/// available pair (of the backend asked for, if one was), with one table.
pub fn run(
    runtime: &Runtime,
    request: Option<&Request>,
    chosen: &ChannelFactory,
    spec: &crate::run::RunSpec,
    compare: bool,
) -> ExitCode {
    if !compare {
        return match crate::run::run(chosen, spec) {
            Ok(o) if o.report.is_clean() => ExitCode::SUCCESS,
            Ok(_) => {
                eprintln!("error: the channel did not close cleanly (see its report above)");
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("error: {}: {e}", chosen.pair());
                ExitCode::FAILURE
            }
        };
    }
    let factories = match request {
        Some(_) => pairs_for(runtime, request, chosen),
        None => runtime.available(),
    };
    let dir = match scratch_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match crate::run::compare(&factories, spec, dir.path()) {
        Ok(rows) => {
            print_stdout(&crate::run::compare_table(&rows));
            if crate::run::compare_ok(&rows) {
                ExitCode::SUCCESS
            } else {
                // Keep the outputs that differ for inspection.
                let kept = dir.keep();
                eprintln!(
                    "error: not every pair ran cleanly with the same output; their files are in {}",
                    kept.display()
                );
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
