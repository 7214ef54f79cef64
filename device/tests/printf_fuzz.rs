//! Differential fuzz of `gpuio_snprintf` against the host C library's `snprintf`:
//! `printf_fuzz.cpp` (beside this file) compiles `gpuio/printf.h` as host C++ with
//! a driver that generates a format and its arguments from each seed and compares
//! both formatters' bytes and return values (see its header for what it covers and
//! what it leaves out on purpose).
//!
//! `cargo test` runs a fixed range of seeds (a second or two). For longer runs:
//! `GPUIO_PRINTF_FUZZ_SEEDS=N` runs N seeds, `GPUIO_PRINTF_FUZZ_FIRST=S` starts at
//! seed S, and `GPUIO_PRINTF_FUZZ_SECS=T` stops after T seconds, e.g.
//! `GPUIO_PRINTF_FUZZ_SEEDS=1000000000 GPUIO_PRINTF_FUZZ_SECS=600 cargo test -p
//! gpuio-device --test printf_fuzz -- --nocapture`. A failure prints the seed,
//! which reproduces the case.

use std::process::Command;

mod support;

/// Seeds `cargo test` runs by default, from seed 0.
const DEFAULT_SEEDS: u64 = 200_000;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|e| panic!("{name}={v:?} is not a number: {e}")),
    )
}

#[test]
fn gpuio_snprintf_prints_what_the_host_snprintf_prints_on_generated_formats() {
    let dir = tempfile::tempdir().unwrap();
    let exe = support::build_driver("printf_fuzz.cpp", &[], dir.path());
    let first = env_u64("GPUIO_PRINTF_FUZZ_FIRST").unwrap_or(0);
    let seeds = env_u64("GPUIO_PRINTF_FUZZ_SEEDS").unwrap_or(DEFAULT_SEEDS);
    let mut run = Command::new(&exe);
    run.arg(first.to_string()).arg(seeds.to_string());
    if let Some(secs) = env_u64("GPUIO_PRINTF_FUZZ_SECS") {
        run.arg(secs.to_string());
    }
    let out = run.output().expect("run the fuzz driver");
    let text = support::driver_passed(
        &out,
        &format!("gpuio_snprintf differs from the host snprintf (seeds {first}..)"),
    );
    println!("{text}");
}
