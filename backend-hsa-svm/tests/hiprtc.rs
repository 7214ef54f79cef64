//! hiprtc compiles gpuio kernels for AMD GPUs: the embedded `gpuio.h`, for gfx90a
//! (CDNA2), gfx940 (CDNA3) and gfx1030 (RDNA2), and the conformance kernels for
//! gfx90a; `device/tests/hip_compile.rs` compiles them with hipcc (the same LLVM) for
//! the other targets, so that each target's compile of them, ~2 minutes of one core,
//! is made once in CI.
//! Nothing here runs a kernel: there is no AMD GPU, and no HSA device runner yet.
//!
//! Where no hiprtc loads, each test says it is skipped and what is missing; where
//! `GPUIO_REQUIRE` lists `hiprtc`, that is a failure instead.

use gpuio_backend_hsa_svm::hiprtc::{CodeObject, Compiler, HiprtcError};
use gpuio_backend_hsa_svm::sys::LoadError;

/// Calls `gpuio_printf` and `gpuio_pwrite` through the embedded header.
const HELLO: &str = r#"#include "gpuio.h"

GPUIO_KERNEL(gpuio_test_hello)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  gpuio_printf(ch, "hello from thread %llu of %llu\n", t, gpuio_thread_count());
  char line[32];
  for (int i = 0; i < 31; i++) line[i] = (char)('a' + (t + i) % 26);
  line[31] = '\n';
  gpuio_i64 r = gpuio_pwrite(ch, (gpuio_u32)p[0], line, sizeof line, (gpuio_i64)(t * sizeof line));
  if (r != (gpuio_i64)sizeof line) gpuio_fetch_add_64(&p[1], 1);
}
"#;

/// No gpuio.h: checks the compiler alone, whatever state the header is in.
const TINY: &str = r#"extern "C" __global__ void gpuio_test_tiny(int *p) {
  p[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}
"#;

/// The compiler, or `None` after saying what is missing (a panic where
/// `GPUIO_REQUIRE` lists hiprtc).
fn compiler() -> Option<Compiler> {
    match Compiler::new() {
        Ok(c) => Some(c.without_cache()),
        Err(e @ HiprtcError::Library(_)) => {
            let required = std::env::var("GPUIO_REQUIRE").unwrap_or_default();
            if required
                .split(|c: char| c == ',' || c.is_whitespace())
                .any(|p| p == "hiprtc")
            {
                panic!("GPUIO_REQUIRE lists hiprtc, but {e}");
            }
            eprintln!("skipped: Unsupported: hiprtc — {e}");
            None
        }
        Err(e) => panic!("hiprtc loads but cannot be asked its version: {e}"),
    }
}

/// Compiles `source` for `arch` and checks it is an AMDGPU ELF for that GPU holding
/// `kernels`; where comgr does not know `arch`, checks it is refused (not a crash).
fn compiles_for(c: &Compiler, name: &str, source: &str, arch: &str, kernels: &[&str]) {
    let started = std::time::Instant::now();
    let result = c.compile(name, source, arch);
    if c.knows(arch) == Some(false) {
        let e = result.expect_err("an unknown target is refused");
        assert!(
            matches!(&e, HiprtcError::UnknownArch { arch: a, known, .. } if a == arch && !known.is_empty()),
            "{e}"
        );
        eprintln!("not compiled for {arch}: {} ({e})", c.info().library);
        return;
    }
    let object = match result {
        Ok(o) => o,
        Err(e) => panic!("{name} for {arch}: {e}"),
    };
    eprintln!(
        "{name} for {arch}: {} bytes in {:.1?}{}",
        object.bytes.len(),
        started.elapsed(),
        if object.log.is_empty() {
            String::new()
        } else {
            format!(", log:\n{}", object.log)
        }
    );
    is_a_code_object_for(&object, arch, kernels);
}

fn is_a_code_object_for(object: &CodeObject, arch: &str, kernels: &[&str]) {
    assert!(!object.cached);
    assert!(
        object.is_amdgpu_elf(),
        "not an AMDGPU ELF: {:02x?}",
        &object.bytes[..object.bytes.len().min(64)]
    );
    assert_eq!(object.processor(), Some(arch), "e_flags name another GPU");
    for k in kernels {
        assert!(object.mentions(k), "{k} is not in the code object");
        assert!(
            object.mentions(&format!("{k}.kd")),
            "{k} has no kernel descriptor"
        );
    }
}

#[test]
fn a_kernel_without_gpuio_h_compiles_for_gfx90a_to_an_amdgpu_elf() {
    let Some(c) = compiler() else { return };
    compiles_for(&c, "tiny.hip", TINY, "gfx90a", &["gpuio_test_tiny"]);
}

#[test]
fn a_kernel_calling_gpuio_printf_and_gpuio_pwrite_compiles_for_gfx90a() {
    let Some(c) = compiler() else { return };
    compiles_for(&c, "hello.hip", HELLO, "gfx90a", &["gpuio_test_hello"]);
}

#[test]
fn a_kernel_calling_gpuio_printf_and_gpuio_pwrite_compiles_for_gfx1030() {
    let Some(c) = compiler() else { return };
    compiles_for(&c, "hello.hip", HELLO, "gfx1030", &["gpuio_test_hello"]);
}

#[test]
fn a_kernel_calling_gpuio_printf_and_gpuio_pwrite_compiles_for_gfx940_where_comgr_knows_it() {
    let Some(c) = compiler() else { return };
    compiles_for(&c, "hello.hip", HELLO, "gfx940", &["gpuio_test_hello"]);
}

/// Every `GPUIO_KERNEL` of the conformance source.
fn conformance_kernels() -> Vec<&'static str> {
    let src = gpuio_device::header::KERNELS_SOURCE;
    let names: Vec<&str> = src
        .match_indices("GPUIO_KERNEL(")
        .filter_map(|(i, m)| {
            let rest = &src[i + m.len()..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect();
    assert!(
        !names.is_empty(),
        "no GPUIO_KERNEL in the conformance source"
    );
    names
}

/// The only compile of the conformance kernels for gfx90a (`hip_compile.rs` leaves
/// that target to this test).
#[test]
fn the_conformance_kernels_compile_for_gfx90a() {
    let Some(c) = compiler() else { return };
    let src = gpuio_device::header::KERNELS_SOURCE;
    compiles_for(&c, "conformance.hip", src, "gfx90a", &conformance_kernels());
}

#[test]
fn a_syntax_error_is_a_compile_error_whose_log_names_the_file_and_line() {
    let Some(c) = compiler() else { return };
    let bad = "#include \"gpuio.h\"\n\nGPUIO_KERNEL(broken)(const gpuio_channel *ch) { int x = }\n";
    let e = c
        .compile("broken.hip", bad, "gfx90a")
        .expect_err("a syntax error does not compile");
    let HiprtcError::Compile { name, arch, log } = &e else {
        panic!("not a compile error: {e:?}");
    };
    eprintln!("{log}");
    assert_eq!((name.as_str(), arch.as_str()), ("broken.hip", "gfx90a"));
    assert!(
        log.contains("broken.hip:3:"),
        "the log names no line 3:\n{log}"
    );
    assert!(log.contains("error"), "{log}");
    assert!(
        !log.contains("/comgr-"),
        "comgr's temporary path left in:\n{log}"
    );
    assert!(e.to_string().contains(log.as_str()));
}

#[test]
fn a_target_comgr_does_not_know_is_refused_before_hiprtc_could_abort() {
    let Some(c) = compiler() else { return };
    if c.knows("gfx90a").is_none() {
        eprintln!("skipped: Unsupported: comgr — targets cannot be checked");
        return;
    }
    let e = c
        .compile("tiny.hip", TINY, "gfx9999")
        .expect_err("no gfx9999");
    let HiprtcError::UnknownArch { arch, known, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(arch, "gfx9999");
    assert!(known.iter().any(|k| k == "gfx90a"), "{known:?}");
    assert!(e.to_string().contains("gfx90a"), "{e}");
}

#[test]
fn a_target_name_that_is_not_one_is_refused_without_calling_hiprtc() {
    let Some(c) = compiler() else { return };
    let e = c
        .compile("tiny.hip", TINY, "gfx90a -DGPUIO_X=1")
        .expect_err("not a target name");
    assert!(matches!(e, HiprtcError::BadArch { .. }), "{e:?}");
}

#[test]
fn a_second_compile_of_the_same_source_comes_from_the_cache() {
    let Some(c) = compiler() else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let c = c.with_cache_dir(dir.path().join("hip"));
    let first = c.compile("tiny.hip", TINY, "gfx1030").expect("compiles");
    assert!(!first.cached);
    let path = first.cache_path.clone().expect("a cache path");
    assert!(path.starts_with(dir.path()), "{}", path.display());
    assert!(path.exists(), "{} not written", path.display());
    let second = c.compile("tiny.hip", TINY, "gfx1030").expect("from cache");
    assert!(second.cached);
    assert_eq!(second.bytes, first.bytes);
    let other = c.compile("tiny.hip", TINY, "gfx90a").expect("compiles");
    assert!(!other.cached, "another target is another cache entry");
}

#[test]
fn a_missing_library_is_an_error_listing_every_name_tried_not_a_panic() {
    let e = Compiler::open(&["libgpuio-no-such-hiprtc.so.1", "/nowhere/libhiprtc.so"])
        .expect_err("no such library");
    let HiprtcError::Library(LoadError::NotFound { tried, .. }) = &e else {
        panic!("{e:?}");
    };
    assert_eq!(tried.len(), 2);
    let text = e.to_string();
    assert!(text.contains("libgpuio-no-such-hiprtc.so.1"), "{text}");
    assert!(text.contains("/nowhere/libhiprtc.so"), "{text}");
    assert!(text.contains("GPUIO_HIPRTC_LIB"), "{text}");
}

#[test]
fn a_library_without_hiprtc_is_passed_over_naming_the_missing_symbol() {
    // libc loads everywhere and has no hiprtcVersion.
    let e = Compiler::open(&["libc.so.6"]).expect_err("libc has no hiprtc");
    let HiprtcError::Library(LoadError::NotFound { tried, .. }) = &e else {
        panic!("{e:?}");
    };
    assert_eq!(tried[0].0, "libc.so.6");
    assert!(tried[0].1.contains("hiprtcVersion"), "{tried:?}");
}
