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

use std::path::Path;
use std::process::Command;

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
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("printf_fuzz");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut words = cxx.split_whitespace();
    let out = Command::new(words.next().expect("CXX names a compiler"))
        .args(words)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(here.join("include"))
        .arg(here.join("tests/printf_fuzz.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "printf_fuzz.cpp does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = env_u64("GPUIO_PRINTF_FUZZ_FIRST").unwrap_or(0);
    let seeds = env_u64("GPUIO_PRINTF_FUZZ_SEEDS").unwrap_or(DEFAULT_SEEDS);
    let mut run = Command::new(&exe);
    run.arg(first.to_string()).arg(seeds.to_string());
    if let Some(secs) = env_u64("GPUIO_PRINTF_FUZZ_SECS") {
        run.arg(secs.to_string());
    }
    let out = run.output().expect("run the fuzz driver");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    let last = text.lines().last().unwrap_or_default();
    let passed: u64 = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        out.status.success(),
        "gpuio_snprintf differs from the host snprintf (seeds {first}..):\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        passed > 0 && last.ends_with(" 0 failed"),
        "the driver compared nothing: {last:?}"
    );
}
