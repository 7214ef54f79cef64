//! The `gpuio` command: `probe`, `bench`, `selftest`, `run`.
//!
//! Logging goes to stderr, filtered by `GPUIO_LOG`, else `RUST_LOG`, else `warn`.
//! Exit status: 0 success; 1 the backend asked for is unavailable, or another
//! error (printed as one readable line); 2 a command not built yet, or bad usage.

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
    },
    /// Run the conformance kernels on every available backend.
    Selftest,
    /// Run a kernel on the chosen pair.
    Run {
        /// Arguments for the kernel run.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn init_logging() {
    let spec = std::env::var("GPUIO_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".to_string());
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
        Command::Bench { quick } => cli::bench(&runtime, request.as_ref(), &factory, quick),
        Command::Selftest => cli::selftest(&runtime, request.as_ref(), &factory),
        Command::Run { args } => cli::run(&factory, &args),
    }
}
