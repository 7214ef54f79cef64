//! The warp-wide code of `gpuio.h` with the lanes of a whole warp: `warp_lanes.cpp`
//! (beside this file) runs up to 32 lanes as fibers that meet at every warp call, as a
//! GPU's lanes do, and checks what they write (see its header). The CPU device runs
//! warps of one lane, so this is where the lanes' hand-offs run without a GPU.
//!
//! `cargo test` runs the fixed cases and 300 generated ones (a few seconds);
//! `GPUIO_WARP_LANES_CASES=N` runs N generated ones.

use std::path::Path;
use std::process::Command;

#[test]
fn the_lanes_of_a_sending_group_write_every_cell_as_the_host_reads_it() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("warp_lanes");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut words = cxx.split_whitespace();
    let out = Command::new(words.next().expect("CXX names a compiler"))
        .args(words)
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-unused-function",
            "-I",
        ])
        .arg(here.join("include"))
        .arg(here.join("tests/warp_lanes.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "warp_lanes.cpp does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases = std::env::var("GPUIO_WARP_LANES_CASES").unwrap_or_else(|_| "300".into());
    let out = Command::new(&exe)
        .arg(&cases)
        .output()
        .expect("run warp_lanes");
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default().to_string();
    assert!(
        out.status.success(),
        "{last}\n{}",
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
}
