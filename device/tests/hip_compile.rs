//! `gpuio.h` compiles for AMD GPUs: the header, the conformance kernels and every
//! `examples/*.cu` kernel, each through a full device compile (front end, LLVM and the
//! AMDGPU back end) with `hipcc` for every target in [`TARGETS`] (the conformance
//! kernels for gfx90a through hiprtc, in `backend-hsa-svm/tests/hiprtc.rs`). Nothing
//! runs: this is what CI knows about AMD, which it has never run on.
//!
//! `hipcc` is `$HIPCC`, else `hipcc` on `PATH`, else `/usr/bin/hipcc` (Debian:
//! `apt-get install hipcc rocm-device-libs libamdhip64-dev`). Without one every test
//! says it is skipped and passes, unless `GPUIO_REQUIRE` lists `hipcc`.
//!
//! The compiles of one test run in parallel threads (one `hipcc` per source and
//! target); the conformance kernels take about 10 s a target on one core.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// gfx90a (MI200, wave64), gfx940 (MI300, wave64), gfx1030 (RDNA2, wave32). The
/// distribution's clang 15 knows no gfx942; gfx940 is the same family.
const TARGETS: [&str; 3] = ["gfx90a", "gfx940", "gfx1030"];
/// The target `backend-hsa-svm/tests/hiprtc.rs` compiles the conformance kernels for.
const HIPRTC_CONFORMANCE_TARGET: &str = "gfx90a";

/// The smallest kernel a user writes.
const TRIVIAL_KERNEL: &str = r#"#include "gpuio.h"
GPUIO_KERNEL(k)(const gpuio_channel *ch, gpuio_u64 *p) { gpuio_printf(ch, "x %d\n", 1); }
"#;

fn device_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `GPUIO_REQUIRE` (comma or space separated) lists `part`.
fn required(part: &str) -> bool {
    std::env::var("GPUIO_REQUIRE")
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .any(|p| p == part)
}

/// The executable `name` in one of `PATH`'s directories.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Where hipcc is, or why there is none.
fn find_hipcc() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("HIPCC").filter(|v| !v.is_empty()) {
        let given = PathBuf::from(given);
        let found = if given.components().count() > 1 {
            given.is_file().then(|| given.clone())
        } else {
            on_path(&given.to_string_lossy())
        };
        return found.ok_or_else(|| format!("HIPCC={} is not an existing file", given.display()));
    }
    on_path("hipcc")
        .or_else(|| Some(PathBuf::from("/usr/bin/hipcc")).filter(|p| p.is_file()))
        .ok_or_else(|| {
            "no hipcc ($HIPCC unset, none on PATH or at /usr/bin/hipcc; Debian: apt-get install \
             hipcc rocm-device-libs libamdhip64-dev)"
                .to_string()
        })
}

/// hipcc, or `None` after saying why the test is skipped (a failure instead where
/// `GPUIO_REQUIRE` lists hipcc).
fn hipcc(test: &str) -> Option<PathBuf> {
    match find_hipcc() {
        Ok(p) => Some(p),
        Err(why) => {
            if required("hipcc") {
                panic!("GPUIO_REQUIRE lists hipcc, but {why}");
            }
            eprintln!("skipped: {test}: {why}");
            None
        }
    }
}

/// One device compile: `source` for `target`, with extra flags.
struct Job {
    source: PathBuf,
    target: &'static str,
    extra: Vec<String>,
}

/// Compiles one job into `dir`; the failure, with its command and compiler output.
fn compile_one(hipcc: &Path, dir: &Path, job: &Job) -> Result<(), String> {
    let stem = job
        .source
        .file_stem()
        .map_or_else(|| "src".into(), |s| s.to_string_lossy().into_owned());
    let mut cmd = Command::new(hipcc);
    cmd.current_dir(dir)
        .args(["-std=c++17", "-x", "hip", "-O3", "--cuda-device-only", "-c"])
        .arg(format!("--offload-arch={}", job.target))
        .args(&job.extra)
        .arg("-I")
        .arg(device_dir().join("include"))
        .arg("-I")
        .arg(device_dir().join("kernels"))
        .arg("-o")
        .arg(dir.join(format!("{stem}-{}.o", job.target)))
        .arg(&job.source);
    let t = Instant::now();
    let out = cmd.output();
    let took = t.elapsed().as_secs_f64();
    let result = match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{cmd:?}\nexited with {} after {took:.1} s; stderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("{cmd:?}\ncould not run: {e}")),
    };
    eprintln!(
        "{} {} for {}: {took:.1} s",
        if result.is_ok() { "compiled" } else { "FAILED" },
        job.source.display(),
        job.target
    );
    result
}

/// Compiles every job (in parallel, at least one thread per target) in `dir` and
/// panics with each failure's command and compiler output.
fn compile_all(hipcc: &Path, dir: &Path, jobs: &[Job]) {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cores.max(TARGETS.len()).min(jobs.len());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(f) = compile_one(hipcc, dir, job) {
                        failures.lock().unwrap_or_else(|e| e.into_inner()).push(f);
                    }
                }
            });
        }
    });
    eprintln!(
        "{} compiles in {:.1} s ({workers} threads)",
        jobs.len(),
        start.elapsed().as_secs_f64()
    );
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    assert!(
        failures.is_empty(),
        "{} of {} AMD device compiles failed:\n\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

/// Every target for each source, with the same flags.
fn jobs_for(sources: &[PathBuf], extra: &[&str]) -> Vec<Job> {
    sources
        .iter()
        .flat_map(|source| {
            TARGETS.iter().map(move |&target| Job {
                source: source.clone(),
                target,
                extra: extra.iter().map(|s| s.to_string()).collect(),
            })
        })
        .collect()
}

/// Writes `text` to `name` in `dir`.
fn write_source(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the test source into the temp dir");
    path
}

#[test]
fn header_compiles_for_every_amd_target() {
    let Some(hipcc) = hipcc("header_compiles_for_every_amd_target") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let src = write_source(dir.path(), "trivial.hip", TRIVIAL_KERNEL);
    compile_all(&hipcc, dir.path(), &jobs_for(&[src], &[]));
}

/// hiprtc compiles with no system header; `-nogpuinc -nostdinc` takes away clang's HIP
/// wrapper, the HIP headers and every standard include directory, so the header must
/// bring everything it uses itself.
#[test]
fn header_compiles_without_any_system_header_for_every_amd_target() {
    let Some(hipcc) = hipcc("header_compiles_without_any_system_header_for_every_amd_target")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let src = write_source(dir.path(), "bare.hip", TRIVIAL_KERNEL);
    compile_all(
        &hipcc,
        dir.path(),
        &jobs_for(&[src], &["-nogpuinc", "-nostdinc"]),
    );
}

/// A kernel that calls every engine, with the engines out of line (`GPUIO_OUT_OF_LINE`:
/// functions of their own instead of copies in each call site).
const OUT_OF_LINE_KERNEL: &str = r#"#define GPUIO_OUT_OF_LINE 1
#include "gpuio.h"
GPUIO_KERNEL(k)(const gpuio_channel *ch, gpuio_u64 *p) {
  char b[64] = {0};
  gpuio_ticket t;
  p[0] = (gpuio_u64)gpuio_nop(ch);
  p[1] = (gpuio_u64)gpuio_pwrite(ch, 0, b, sizeof b, 0);
  p[2] = (gpuio_u64)gpuio_pread_warp(ch, 0, b, sizeof b, 0);
  p[3] = (gpuio_u64)gpuio_pwrite_async(ch, 0, b, sizeof b, 0, &t);
  p[4] = (gpuio_u64)gpuio_wait(ch, &t);
  p[5] = (gpuio_u64)gpuio_send(ch, 1, b, 8);
  p[6] = (gpuio_u64)gpuio_recv(ch, 2, b, sizeof b);
  p[7] = (gpuio_u64)gpuio_printf(ch, "x %d\n", 1);
}
"#;

#[test]
fn engines_out_of_line_compile_for_every_amd_target() {
    let Some(hipcc) = hipcc("engines_out_of_line_compile_for_every_amd_target") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let src = write_source(dir.path(), "out_of_line.hip", OUT_OF_LINE_KERNEL);
    compile_all(&hipcc, dir.path(), &jobs_for(&[src], &[]));
}

/// Every target but [`HIPRTC_CONFORMANCE_TARGET`], for which
/// `backend-hsa-svm/tests/hiprtc.rs` compiles the same kernels through hiprtc (the
/// same LLVM): the conformance kernels take ~2 minutes of one core a target, the
/// longest compile of the test job.
#[test]
fn conformance_kernels_compile_for_every_amd_target_hiprtc_does_not() {
    let Some(hipcc) = hipcc("conformance_kernels_compile_for_every_amd_target_hiprtc_does_not")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let src = write_source(
        dir.path(),
        "conformance.hip",
        "#include \"conformance.h\"\n",
    );
    let jobs: Vec<Job> = jobs_for(&[src], &[])
        .into_iter()
        .filter(|j| j.target != HIPRTC_CONFORMANCE_TARGET)
        .collect();
    compile_all(&hipcc, dir.path(), &jobs);
}

/// Every `examples/*.cu` at the repository root, compiled as HIP.
#[test]
fn examples_compile_for_every_amd_target() {
    let Some(hipcc) = hipcc("examples_compile_for_every_amd_target") else {
        return;
    };
    let root = device_dir();
    let examples = root.parent().unwrap_or(&root).join("examples");
    let mut sources: Vec<PathBuf> = match std::fs::read_dir(&examples) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("cannot list {}: {e}", examples.display()),
    };
    sources.sort();
    if sources.is_empty() {
        eprintln!(
            "examples_compile_for_every_amd_target: no examples/*.cu in {}, nothing to compile",
            examples.display()
        );
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    compile_all(&hipcc, dir.path(), &jobs_for(&sources, &[]));
}
