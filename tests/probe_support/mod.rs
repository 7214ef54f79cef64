//! Helpers shared by the `probe*` test files: the `gpuio` binary with a clean
//! environment, its JSON report, and skips that name what is missing.

#![allow(dead_code)]

use std::process::{Command, Output};

/// `gpuio` with none of the variables that steer probing or selection.
pub fn gpuio(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpuio"));
    cmd.args(args);
    for var in [
        "GPUIO_BACKEND",
        "GPUIO_PROBE_FAKE",
        "GPUIO_LOG",
        "RUST_LOG",
        "GPUIO_HSA_LIB",
    ] {
        cmd.env_remove(var);
    }
    // A calibration stored by an earlier `gpuio bench` on this machine would change
    // the ranking these tests check.
    cmd.env("GPUIO_CALIBRATION", "off");
    cmd
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the gpuio binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `gpuio probe --json`'s report, parsed.
pub fn report(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "probe --json printed no JSON ({e}):\nstdout: {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

/// The report's row for `backend/transport`.
pub fn row<'a>(
    report: &'a serde_json::Value,
    backend: &str,
    transport: &str,
) -> &'a serde_json::Value {
    report["pairs"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["backend"] == backend && r["transport"] == transport)
        })
        .unwrap_or_else(|| panic!("no row {backend}/{transport} in {report:#}"))
}

/// The text table's line for `backend transport`.
pub fn line<'a>(text: &'a str, backend: &str, transport: &str) -> &'a str {
    text.lines()
        .find(|l| {
            let mut words = l.trim_start_matches(['*', ' ']).split_whitespace();
            words.next() == Some(backend) && words.next() == Some(transport)
        })
        .unwrap_or_else(|| panic!("no line for {backend} {transport} in:\n{text}"))
}

/// Whether the NVIDIA driver library loads here.
pub fn libcuda_present() -> bool {
    ["libcuda.so.1", "libcuda.so"].iter().any(|name| {
        // SAFETY: only opens and closes the library; nothing from it is called.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

/// Says the test is skipped because `part` is missing (or present, as `why` says);
/// where `GPUIO_REQUIRE` lists `part`, that is a failure instead.
pub fn skip(part: &str, why: &str) {
    let required = std::env::var("GPUIO_REQUIRE").unwrap_or_default();
    if required.split(',').any(|p| p.trim() == part) {
        panic!("GPUIO_REQUIRE lists {part}, but {why}");
    }
    eprintln!("skipped: Unsupported: {part} — {why}");
}

/// `source` loaded on the CPU device, or `None` (with a skip line) where no C++
/// compiler can be run; where `GPUIO_REQUIRE` lists `cxx`, that is a failure.
pub fn load_on_cpu(
    name: &str,
    source: &str,
) -> Option<std::sync::Arc<dyn gpuio_core::device::Module>> {
    use gpuio_core::device::{Device as _, DeviceError};
    match gpuio_device::cpu::CpuDevice.load(name, source) {
        Ok(m) => Some(m),
        Err(DeviceError::NoCompiler(why)) => {
            skip("cxx", &why);
            None
        }
        Err(e) => panic!("loading {name}: {e}"),
    }
}

/// Runs `tests/kernels/stuck_and_busy.cu` on the CPU device through `builder` with
/// `slots` request slots and a 2 s call deadline: thread 0 reads a pipe nobody
/// writes while 16 threads write 20 rows each. Returns the kernel's params and the
/// close report, or `None` where no C++ compiler lets the kernel load (a skip).
pub fn stuck_read_beside_busy_writers(
    builder: &dyn gpuio_core::TransportBuilder,
    slots: u32,
) -> Option<(Vec<u64>, gpuio_core::CloseReport)> {
    use gpuio_core::memory::HostMemory;
    use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, EndpointKind};
    use std::os::fd::AsFd;
    use std::time::Duration;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/stuck_and_busy.cu");
    let source = std::fs::read_to_string(&path).expect("the kernel source");
    let module = load_on_cpu("stuck_and_busy.cu", &source)?;
    let rows = tempfile::tempfile().unwrap();
    let (reader, writer) = rustix::pipe::pipe().unwrap();
    let config = ChannelConfig {
        endpoints: vec![
            Endpoint::file("rows", &rows, Access::WRITE).unwrap(),
            Endpoint::new("pipe", EndpointKind::Pipe, Access::READ, reader.as_fd()).unwrap(),
        ],
        slots,
        call_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let ch = Channel::open(std::sync::Arc::new(HostMemory), builder, config).unwrap();
    let p = module
        .launch("stuck_and_busy", 1, 17, &ch, &[0, 0])
        .unwrap()
        .join(Duration::from_secs(60))
        .unwrap();
    let report = ch.close();
    drop(writer);
    Some((p, report))
}
