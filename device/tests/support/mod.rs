//! What the device crate's integration tests share.

use gpuio_device::cpu::Cxx;

/// The compiler from `CXX`/`PATH`, or a skip naming what is missing (a failure where
/// `GPUIO_REQUIRE` lists `cxx`).
#[allow(dead_code)] // each test crate uses part of this module
pub fn cxx() -> Option<Cxx> {
    match Cxx::from_env() {
        Ok(c) => Some(c),
        Err(e) => {
            let required = std::env::var("GPUIO_REQUIRE").unwrap_or_default();
            if required.split(',').any(|p| p.trim() == "cxx") {
                panic!("GPUIO_REQUIRE lists cxx, but {e}");
            }
            eprintln!("skipped: Unsupported: cxx — {e}");
            None
        }
    }
}

/// Compiles `tests/<file>`, a C++17 test driver built on `include/`'s headers, into
/// `dir` with warnings as errors (and `extra` flags): the executable's path. The
/// compiler is `CXX` (words: a command and its flags) or `c++`.
#[allow(dead_code)] // each test crate uses part of this module
pub fn build_driver(file: &str, extra: &[&str], dir: &std::path::Path) -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join(file.trim_end_matches(".cpp"));
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut words = cxx.split_whitespace();
    let out = std::process::Command::new(words.next().expect("CXX names a compiler"))
        .args(words)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg("-I")
        .arg(here.join("include"))
        .arg(here.join("tests").join(file))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "{file} does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Checks a driver's run: it exited 0 and its last line of output reads "N passed,
/// 0 failed" (or "N ... 0 failed") with N > 0. Returns its standard output.
#[allow(dead_code)] // each test crate uses part of this module
pub fn driver_passed(out: &std::process::Output, what: &str) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let last = text.lines().last().unwrap_or_default();
    assert!(
        out.status.success(),
        "{what}:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passed: u64 = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        passed > 0 && last.ends_with(" 0 failed"),
        "the driver checked nothing: {last:?}"
    );
    text
}
