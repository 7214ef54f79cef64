//! Builds the CPU device: every `cpu/*.cpp` (the CPU runtime, the kernels compiled as
//! host C++, test shims) against `include/gpuio.h`, into one static library.

use std::path::{Path, PathBuf};

fn main() {
    let cpu = Path::new("cpu");
    let mut sources: Vec<_> = std::fs::read_dir(cpu)
        .expect("device/cpu exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include("include")
        .include("kernels")
        .opt_level(2)
        .flag_if_supported("-pthread")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-function")
        .flag_if_supported("-Wno-unused-parameter");
    for s in &sources {
        build.file(s);
    }
    build.compile("gpuio_cpu_kernels");
    println!("cargo:rerun-if-changed=cpu");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rustc-link-lib=stdc++");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:include={}", manifest.join("include").display());
}
