//! Kernel files loaded at run time on the CPU device: written against `gpuio.h`
//! alone, compiled by the host C++ compiler with the header the binary embeds,
//! cached by a hash of everything the object depends on, launched on real channels
//! (forward transport, io_uring, files in a tempdir).
//!
//! Tests that need a C++ compiler skip, saying so, where none is found; with
//! `GPUIO_REQUIRE=cxx` that is a failure instead.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::cxx;

use gpuio_core::forward::ForwardBuilder;
use gpuio_core::memory::HostMemory;
use gpuio_core::{Access, Channel, ChannelConfig, Endpoint};
use gpuio_device::cpu::{Compiler, CpuDevice, Cxx};
use gpuio_device::{Device, DeviceError, Module};

const JOIN: Duration = Duration::from_secs(120);
const THREADS: usize = 16;

/// Each thread writes one 64-byte line at `t * 64` on endpoint `p[0]`, its id into
/// `p[1 + t]` and what `gpuio_pwrite` returned into `p[1 + n + t]`.
const LINES: &str = r#"#include "gpuio.h"

GPUIO_KERNEL(write_lines)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id(), n = gpuio_thread_count();
  char line[64];
  int len = gpuio_snprintf(line, sizeof line, "thread %d of %d, warp %d, lane %d", (int)t, (int)n,
                           (int)gpuio_warp_id(), (int)gpuio_lane_id());
  for (int i = len; i < 63; i++) line[i] = '.';
  line[63] = '\n';
  p[1 + t] = t;
  p[1 + n + t] = (gpuio_u64)gpuio_pwrite(ch, (gpuio_u32)p[0], line, sizeof line, (gpuio_i64)(t * 64));
}
"#;

/// Counts its threads in `p[0]`, sums their ids into `p[1]` and the thread counts
/// they see into `p[2]`; needs no endpoint.
const COUNT: &str = r#"#include "gpuio.h"

GPUIO_KERNEL(count)(const gpuio_channel *ch, gpuio_u64 *p) {
  (void)ch;
  gpuio_fetch_add_64(&p[0], 1);
  gpuio_fetch_add_64(&p[1], gpuio_global_thread_id());
  gpuio_fetch_add_64(&p[2], gpuio_thread_count());
}
"#;

/// A channel with `file` as write-only endpoint 0.
fn channel(file: &std::fs::File) -> Channel {
    let mut config = ChannelConfig {
        call_timeout: Duration::from_secs(30),
        ..ChannelConfig::default()
    };
    config.endpoint(Endpoint::file("out", file, Access::WRITE).unwrap());
    Channel::open(Arc::new(HostMemory), &ForwardBuilder::default(), config)
        .expect("open forward channel")
}

fn bare_channel() -> Channel {
    Channel::open(
        Arc::new(HostMemory),
        &ForwardBuilder::default(),
        ChannelConfig::default(),
    )
    .expect("open forward channel")
}

fn assert_clean_close(ch: Channel) {
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
}

/// Runs `write_lines` from `module` on 2×8 threads and checks file and params.
fn run_write_lines(module: Arc<dyn Module>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines");
    let file = std::fs::File::create_new(&path).unwrap();
    let ch = channel(&file);
    let mut params = vec![0u64; 1 + 2 * THREADS];
    params[1..].fill(u64::MAX);
    let launch = module.launch("write_lines", 2, 8, &ch, &params).unwrap();
    // The launch, not the caller, keeps the object loaded while threads run.
    drop(module);
    let p = launch.join(JOIN).unwrap();
    assert_clean_close(ch);
    let ids: Vec<u64> = (0..THREADS as u64).collect();
    assert_eq!(&p[1..=THREADS], &ids[..], "every thread wrote its id");
    for t in 0..THREADS {
        assert_eq!(p[1 + THREADS + t] as i64, 64, "thread {t}'s pwrite");
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), THREADS, "{text}");
    for (t, line) in lines.iter().enumerate() {
        let want = format!("thread {t} of {THREADS}, warp 0, lane {t}");
        assert!(line.starts_with(&want), "line {t}: {line:?}");
        assert_eq!(line.len(), 63, "line {t}: {line:?}");
    }
}

#[test]
fn a_kernel_file_written_from_the_header_alone_loads_and_runs_on_16_threads() {
    let Some(cxx) = cxx() else { return };
    let cache = tempfile::tempdir().unwrap();
    let module = Compiler::with_cache(cxx, cache.path())
        .load("lines.cpp", LINES)
        .unwrap();
    assert!(!module.cached());
    assert!(module.path().starts_with(cache.path()));
    run_write_lines(module);
}

#[test]
fn the_cpu_device_loads_kernel_files_through_the_device_trait() {
    if cxx().is_none() {
        return;
    }
    let device: Arc<dyn Device> = Arc::new(CpuDevice);
    run_write_lines(device.load("lines.cpp", LINES).unwrap());
}

/// A compiler that appends a line to `count` each time it builds an object.
fn counting_cxx(real: &Path, dir: &Path) -> (Cxx, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let count = dir.join("count");
    let script = dir.join("counting-c++");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" -shared \"*) echo compile >> '{}' ;; esac\nexec '{}' \"$@\"\n",
            count.display(),
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cxx = Cxx::find(Some(script.as_os_str()), None).unwrap();
    (cxx, count)
}

fn compiles(count: &Path) -> usize {
    std::fs::read_to_string(count).map_or(0, |s| s.lines().count())
}

#[test]
fn a_second_load_of_the_same_source_comes_from_the_cache_without_running_the_compiler() {
    let Some(real) = cxx() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (cxx, count) = counting_cxx(real.program(), dir.path());
    let cache = dir.path().join("cache");

    let start = Instant::now();
    let first = Compiler::with_cache(cxx.clone(), &cache)
        .load("count.cpp", COUNT)
        .unwrap();
    let cold = start.elapsed();
    assert!(!first.cached());
    assert_eq!(compiles(&count), 1);

    // A new compiler on the same cache: as another process would see it.
    let start = Instant::now();
    let second = Compiler::with_cache(cxx.clone(), &cache)
        .load("count.cpp", COUNT)
        .unwrap();
    let warm = start.elapsed();
    assert!(second.cached());
    assert_eq!(second.path(), first.path());
    assert_eq!(compiles(&count), 1, "the compiler ran again");
    eprintln!("cold load {cold:?}, cached load {warm:?}");

    let ch = bare_channel();
    let p = second
        .launch("count", 2, 8, &ch, &[0, 0, 0])
        .unwrap()
        .join(JOIN)
        .unwrap();
    assert_eq!(p, [16, (0..16).sum(), 16 * 16]);
    assert_clean_close(ch);

    // Any change to the source is another object.
    let third = Compiler::with_cache(cxx, &cache)
        .load("count.cpp", &format!("{COUNT}\n// changed\n"))
        .unwrap();
    assert!(!third.cached());
    assert_eq!(compiles(&count), 2);
}

#[test]
fn built_in_and_loaded_kernels_run_side_by_side_each_through_its_own_runtime() {
    let Some(cxx) = cxx() else { return };
    let cache = tempfile::tempdir().unwrap();
    let module = Compiler::with_cache(cxx, cache.path())
        .load("count.cpp", COUNT)
        .unwrap();
    gpuio_device::link();
    let ch = bare_channel();
    let device: &dyn Device = &CpuDevice;
    let built_in = device.launch("nop", 2, 8, &ch, &[200, 0, 0]).unwrap();
    let loaded = module.launch("count", 4, 8, &ch, &[0, 0, 0]).unwrap();
    let nop = built_in.join(JOIN).unwrap();
    assert_eq!(
        nop[1], 0,
        "{} NOPs failed, first with {}",
        nop[1], nop[2] as i64
    );
    // Ids and counts as the loaded object's own `gpuio_cpu_self` told them.
    let count = loaded.join(JOIN).unwrap();
    assert_eq!(count, [32, (0..32).sum(), 32 * 32]);
    let report = ch.close();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.counters.completed, 16 * 200);
}

#[test]
fn a_syntax_error_is_a_compile_error_whose_log_names_the_file_and_line() {
    let Some(cxx) = cxx() else { return };
    let cache = tempfile::tempdir().unwrap();
    let source = "#include \"gpuio.h\"\n\
                  GPUIO_KERNEL(broken)(const gpuio_channel *ch, gpuio_u64 *p) {\n\
                  \x20 p[0] = 1\n\
                  }\n";
    let e = Compiler::with_cache(cxx, cache.path())
        .load("broken.cpp", source)
        .unwrap_err();
    let DeviceError::Compile { name, log } = &e else {
        panic!("unexpected: {e}")
    };
    assert_eq!(name, "broken.cpp");
    assert!(log.contains("broken.cpp:3:"), "{log}");
    assert!(log.contains("error"), "{log}");
    // Nothing half-made is left to be taken for a cached object.
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("include-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_cxx_that_cannot_be_run_is_named_in_the_error_with_the_os_reason() {
    let e = Cxx::find(Some("/nonexistent".as_ref()), None).unwrap_err();
    let DeviceError::NoCompiler(msg) = &e else {
        panic!("unexpected: {e}")
    };
    assert!(msg.contains("/nonexistent"), "{msg}");
    assert!(msg.contains("CXX"), "{msg}");
    assert!(msg.contains("No such file or directory"), "{msg}");
}

#[test]
fn a_cxx_that_is_no_compiler_is_named_in_the_error() {
    let e = Cxx::find(Some("/bin/false".as_ref()), None).unwrap_err();
    assert!(
        matches!(&e, DeviceError::NoCompiler(m) if m.contains("/bin/false")),
        "{e}"
    );
}

#[test]
fn launching_a_name_the_file_does_not_define_is_no_such_kernel() {
    let Some(cxx) = cxx() else { return };
    let cache = tempfile::tempdir().unwrap();
    let module = Compiler::with_cache(cxx, cache.path())
        .load("count.cpp", COUNT)
        .unwrap();
    let ch = bare_channel();
    // Neither an unknown name, nor a function of a library the object uses, nor
    // the object's runtime entry point is a kernel.
    for name in ["nope", "printf", "gpuio_cpu_module_run_thread", "count\0x"] {
        match module.launch(name, 1, 1, &ch, &[0]) {
            Err(DeviceError::NoSuchKernel(n)) => assert_eq!(n, name),
            Err(e) => panic!("{name}: unexpected error {e}"),
            Ok(_) => panic!("{name} launched"),
        }
    }
    assert_clean_close(ch);
}

#[test]
fn the_include_dir_holds_the_header_the_binary_embeds() {
    let dir = gpuio_device::header::include_dir();
    for (name, text) in gpuio_device::header::HEADERS {
        let on_disk = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(&on_disk, text, "{name}");
    }
}
