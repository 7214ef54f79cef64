//! The `gpuio` command: `probe`, `bench`, `selftest`, `run`.
//!
//! Logging goes to stderr, filtered by `GPUIO_LOG`, else `RUST_LOG`, else warnings
//! (and the CUDA device's note that it is compiling its built-in kernels).
//! Exit status: 0 success; 1 the backend asked for is unavailable, or another
//! error (printed as one readable line); 2 bad usage.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gpuio::cli;
use gpuio::core::probe::Fakes;
use gpuio::runtime::{Request, Runtime};

#[derive(Parser, Debug)]
#[command(
    name = "gpuio",
    version,
    about = "GPU kernels doing real I/O: probe the machine, pick a backend, run and measure"
)]
struct Args {
    /// Force a backend or pair, `backend[/transport]` (e.g. `cpu/mailbox`); overrides
    /// GPUIO_BACKEND. An unavailable choice stops with the probe's reason.
    #[arg(long, global = true, value_name = "BACKEND[/TRANSPORT]")]
    backend: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show every (backend, transport) pair: available or why not, and which is chosen.
    Probe {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure every transport of the chosen backend against references from the same run.
    Bench {
        /// A short run (seconds), for smoke checks.
        #[arg(long)]
        quick: bool,
        /// Print the results as JSON on stdout (progress goes to stderr): every pair,
        /// figure, unit, which way is better, reference and ratio.
        #[arg(long)]
        json: bool,
        /// Measure only the requests (every transport), only the host queues, or only
        /// one thread's round trips on every transport.
        #[arg(long, value_enum)]
        only: Option<cli::BenchPart>,
        /// Measure every figure N times and report the median and the spread
        /// (default 3; 1 with --quick).
        #[arg(long, value_name = "N")]
        repeats: Option<u32>,
        /// Draw throughput against message size and thread count, per pair, as SVG.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<std::path::PathBuf>,
    },
    /// Run the conformance kernels on every available backend.
    Selftest,
    /// Compile and run a kernel file (C++ including "gpuio.h") on the chosen pair.
    ///
    /// Endpoints are the --file arguments in order (the kernel names them 0, 1, …),
    /// then the --queue-out queues, then standard output, where gpuio_printf writes. The kernel's output is
    /// shown live on stdout; what runs where, progress, the kernel's params and the
    /// channel's close report go to stderr.
    Run {
        /// The kernel file.
        file: std::path::PathBuf,
        /// The kernel to launch (default: the file's only GPUIO_KERNEL).
        #[arg(long)]
        kernel: Option<String>,
        /// Blocks in the grid.
        #[arg(long, default_value_t = 1)]
        grid: u32,
        /// Threads per block.
        #[arg(long, default_value_t = 32)]
        block: u32,
        /// An endpoint, NAME=PATH[:r|w|rw] (r: must exist; w: created, truncated; rw,
        /// the default: created if missing, never truncated, so give an output file
        /// :w). A FIFO given :r or :w waits for its writer or reader, up to
        /// --timeout. Repeat for more: the kernel names them 0, 1, … in this order.
        #[arg(long = "file", value_name = "NAME=PATH[:r|w|rw]")]
        files: Vec<gpuio::run::FileArg>,
        /// A queue to the host the kernel sends on with gpuio_send (messages of up to
        /// 240 bytes; endpoints after the files, in this order): a host thread
        /// appends each message to PATH (created, truncated) as it arrives, each
        /// thread's in the order it sent them. Repeat for more.
        #[arg(
            long = "queue-out",
            value_name = "NAME=PATH",
            conflicts_with = "compare"
        )]
        queues: Vec<gpuio::run::QueueArg>,
        /// A u64 kernel parameter, params[0], params[1], … in order (decimal or 0x…).
        #[arg(long = "arg", value_name = "N", value_parser = parse_u64)]
        args: Vec<u64>,
        /// Length of the params array (default: the number of --arg values); the --arg
        /// values fill it from params[0], the rest are zero. The kernel must not index
        /// past it.
        #[arg(long)]
        params: Option<usize>,
        /// Longest the kernel may run, in seconds.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Request slots of the channel (default 256).
        #[arg(long)]
        slots: Option<u32>,
        /// Staging bytes per slot: the longest single request (default 65536; a
        /// longer call is split into requests of this size).
        #[arg(long)]
        slot_size: Option<u32>,
        /// Longest one device call waits before -ETIMEDOUT, in seconds (default 5).
        #[arg(long)]
        call_timeout: Option<f64>,
        /// gpuio_printf makes one write request per line through the transport
        /// instead of appending to stdout's printf log (a stream a host thread writes
        /// out while the kernel runs): to compare the two.
        #[arg(long)]
        no_log: bool,
        /// Rings of stdout's printf log (default 32): a printing warp uses ring
        /// `warp % rings`, so more rings mean fewer warps reserving on each.
        #[arg(long, value_name = "N", conflicts_with = "no_log")]
        log_rings: Option<u32>,
        /// Host threads writing stdout's printf log out (default: half the cores, 1 to
        /// 8; a socket gets one,
        /// as a socket may split a write and interleave it with another thread's).
        #[arg(long, value_name = "N", conflicts_with = "no_log")]
        log_threads: Option<u32>,
        /// Run on every available pair (or every pair of --backend's backend) and
        /// print one table: wall time of the kernel, requests submitted, bytes in the
        /// output files and stdout, whether the channel closed clean, and whether
        /// each pair's output files are byte-identical to the first pair's (stdout is
        /// compared as a set of lines: threads interleave differently every run).
        #[arg(long)]
        compare: bool,
    },
}

/// The log filter without `GPUIO_LOG` or `RUST_LOG`: warnings, and the CUDA device's
/// news of a long first compile of the built-in kernels.
const DEFAULT_LOG: &str = "warn,gpuio_backend_cuda_mapped::device=info";

fn init_logging() {
    let spec = std::env::var("GPUIO_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| DEFAULT_LOG.to_string());
    let filter = tracing_subscriber::EnvFilter::try_new(&spec).unwrap_or_else(|e| {
        eprintln!("gpuio: ignoring log filter {spec:?}: {e}");
        tracing_subscriber::EnvFilter::new("warn")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let args = Args::parse();
    init_logging();

    // A malformed testing seam must not pass silently as "no fakes".
    if let Err(e) = Fakes::from_env() {
        eprintln!("error: {e}");
        return ExitCode::from(cli::EXIT_UNAVAILABLE);
    }
    let request = match Request::from_flag_or_env(args.backend.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(cli::EXIT_UNAVAILABLE);
        }
    };
    let runtime = Runtime::probe();
    if let Command::Probe { json } = args.command {
        return cli::probe(&runtime, request.as_ref(), json);
    }
    let factory = match cli::resolve(&runtime, request.as_ref()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(cli::EXIT_UNAVAILABLE);
        }
    };
    match args.command {
        Command::Probe { .. } => ExitCode::SUCCESS,
        Command::Bench {
            quick,
            json,
            only,
            repeats,
            plot,
        } => cli::bench(
            &runtime,
            request.as_ref(),
            &factory,
            cli::BenchOptions {
                quick,
                json,
                only,
                repeats,
                plot,
            },
        ),
        Command::Selftest => cli::selftest(&runtime, request.as_ref(), &factory),
        Command::Run {
            file,
            kernel,
            grid,
            block,
            files,
            queues,
            mut args,
            params,
            timeout,
            slots,
            slot_size,
            call_timeout,
            no_log,
            log_rings,
            log_threads,
            compare,
        } => {
            if let Some(n) = params {
                if n < args.len() {
                    eprintln!(
                        "error: --params {n} is fewer than the {} --arg values",
                        args.len()
                    );
                    return std::process::ExitCode::from(2);
                }
                args.resize(n, 0);
            }
            let spec = gpuio::run::RunSpec {
                source: file,
                kernel,
                grid,
                block,
                files,
                queues,
                args,
                timeout: std::time::Duration::from_secs_f64(timeout.max(0.0)),
                slots,
                slot_size,
                call_timeout: call_timeout.map(|t| std::time::Duration::from_secs_f64(t.max(0.0))),
                printf_log: (!no_log).then(|| {
                    let d = gpuio_core::LogConfig::default();
                    gpuio_core::LogConfig {
                        rings: log_rings.unwrap_or(d.rings).max(1),
                        threads: log_threads.unwrap_or(d.threads).max(1),
                        ..d
                    }
                }),
            };
            cli::run(&runtime, request.as_ref(), &factory, &spec, compare)
        }
    }
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| format!("{s:?} is not a u64: {e}"))
}
