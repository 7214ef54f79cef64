//! The warp-wide code of `gpuio.h` with the lanes of a whole warp: `warp_lanes.cpp`
//! (beside this file) runs up to 32 lanes as fibers that meet at every warp call, as a
//! GPU's lanes do, and checks what they write (see its header). The CPU device runs
//! warps of one lane, so this is where the lanes' hand-offs run without a GPU.
//!
//! `cargo test` runs the fixed cases and 300 generated ones (a few seconds);
//! `GPUIO_WARP_LANES_CASES=N` runs N generated ones.

use std::process::Command;

mod support;

#[test]
fn the_lanes_of_a_sending_group_reserve_write_and_publish_cells_as_the_host_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let exe = support::build_driver("warp_lanes.cpp", &["-Wno-unused-function"], dir.path());
    let cases = std::env::var("GPUIO_WARP_LANES_CASES").unwrap_or_else(|_| "300".into());
    let out = Command::new(&exe)
        .arg(&cases)
        .output()
        .expect("run warp_lanes");
    support::driver_passed(&out, "the lanes wrote cells the host would misread");
}
