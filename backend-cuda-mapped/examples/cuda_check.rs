//! GPU checks for the CUDA backend, for a machine with an NVIDIA GPU.
//!
//! `cuda_check main` — probe and print the capabilities; compile this file's test
//! kernels with NVRTC for this GPU (fresh, then from the cache; the built-in kernels
//! as one program took 71 s to over 120 s, so the runtime compiles them in parts);
//! load the built-in kernels as the runtime does; ask the kernel
//! whether io_uring `NO_MMAP` rings may live in (i) mmap + `cuMemHostRegister`
//! memory and (ii) `cuMemHostAlloc` memory; launch kernels on a channel (mapped
//! memory both ways, `gpuio_k_nop`, a kernel that outlives its join timeout); which
//! build (small-block or 1024) launches of five shapes run.
//! `cuda_check trap` — a kernel that traps, then what still works.
//! `cuda_check nvrtc-tree INCLUDE_DIR SOURCE` — NVRTC-compiles SOURCE for this GPU
//! with every file under INCLUDE_DIR as a named header (a checkout's own
//! `device/include`, rather than the copy embedded in this binary).
//!
//! Every line `CHECK <name>: ok|FAIL ...`; exit status 1 if any failed. A watchdog
//! ends the process (status 3) if one step hangs, naming it.
//!
//! Channels here use the forward transport (its host thread makes no CUDA call, so
//! it keeps serving after a kernel traps), with one endpoint: a temporary file.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpuio_backend_cuda_mapped::backend::CudaBackend;
use gpuio_backend_cuda_mapped::device::{small_block_build_enabled, CudaDevice, SMALL_BLOCK};
use gpuio_backend_cuda_mapped::memory::{no_mmap_ring_accepts, HostAlloc, RegisteredMapping};
use gpuio_backend_cuda_mapped::nvrtc::Compiler;
use gpuio_core::backend::Backend;
use gpuio_core::forward::ForwardBuilder;
use gpuio_core::memory::{AnonMapping, SharedMemory};
use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, MemoryProvider};
use gpuio_device::{Device, DeviceError};

const TEST_SOURCE: &str = r#"
#include "gpuio.h"
/* params: [0] unused; out: [1] the descriptor's magic, [2] the u64 the host put at
 * staging[0]; writes ~that at staging[8]. */
GPUIO_KERNEL(gpuio_t_mapped)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  p[1] = ch->magic;
  gpuio_u64 *st = gpuio_ptr<gpuio_u64>(ch->staging);
  gpuio_u64 v = gpuio_ld_acquire_64(&st[0]);
  p[2] = v;
  gpuio_st_release_64(&st[1], ~v);
  gpuio_fence_sc();
}
/* Spins until the channel closes or p[0] ns pass; out: [1] 1 = saw closing, 2 = deadline. */
GPUIO_KERNEL(gpuio_t_spin)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 deadline = gpuio_now_ns() + p[0];
  while (!gpuio_ld_acquire_32(&ch->closing)) {
    if (gpuio_impl_past(deadline)) {
      if (gpuio_global_thread_id() == 0) p[1] = 2;
      return;
    }
    gpuio_pause();
  }
  if (gpuio_global_thread_id() == 0) p[1] = 1;
}
/* Every other thread keeps writing to endpoint 0; thread 0 writes too, waits
 * until requests are surely in flight, then stores through p[0] (a bad address):
 * an illegal-address trap in the middle of I/O. */
GPUIO_KERNEL(gpuio_t_trap)(const gpuio_channel *ch, gpuio_u64 *p) {
  char b[64];
  for (int i = 0; i < 64; i++) b[i] = (char)('a' + i % 26);
  gpuio_u64 t = gpuio_global_thread_id();
  if (t == 0) {
    gpuio_pwrite(ch, 0, b, 64, 0);
    gpuio_u64 until = gpuio_now_ns() + 2000000ull;
    while (gpuio_now_ns() < until) gpuio_pause();
    p[1] = 1;
    *(volatile gpuio_u64 *)(p[0]) = 42;
  } else {
    for (int i = 0; i < 100000; i++) gpuio_pwrite(ch, 0, b, 64, (gpuio_i64)(t * 64));
  }
}
"#;

type Allocated = Result<Box<dyn SharedMemory>, String>;

static FAILED: AtomicBool = AtomicBool::new(false);
static STEP: Mutex<Option<(String, Instant, Duration)>> = Mutex::new(None);

fn step(name: &str, limit: Duration) {
    println!("--- {name}");
    *STEP.lock().unwrap() = Some((name.to_string(), Instant::now(), limit));
}

fn report(name: &str, ok: bool, detail: impl std::fmt::Display) {
    println!("CHECK {name}: {} {detail}", if ok { "ok" } else { "FAIL" });
    if !ok {
        FAILED.store(true, Ordering::SeqCst);
    }
}

fn watchdog() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(200));
        if let Some((name, at, limit)) = &*STEP.lock().unwrap() {
            if at.elapsed() > *limit {
                println!("CHECK {name}: FAIL stuck for {:?} (watchdog)", at.elapsed());
                std::process::exit(3);
            }
        }
    });
}

fn channel(dev: &CudaDevice) -> Channel {
    let provider: Arc<dyn MemoryProvider> = dev.memory();
    let file = tempfile::tempfile().expect("a temporary file");
    let mut cfg = ChannelConfig::default();
    cfg.endpoint(Endpoint::file("scratch", &file, Access::READ_WRITE).expect("register it"));
    Channel::open(provider, &ForwardBuilder::default(), cfg).expect("open a channel")
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    watchdog();
    let mode = std::env::args().nth(1).unwrap_or_else(|| "main".into());
    match mode.as_str() {
        "main" => main_checks(),
        "trap" => trap_checks(),
        "nvrtc-tree" => tree_checks(),
        other => {
            eprintln!("usage: cuda_check [main|trap|nvrtc-tree INCLUDE_DIR SOURCE] (not {other})");
            std::process::exit(2);
        }
    }
    let failed = FAILED.load(Ordering::SeqCst);
    println!(
        "cuda_check {mode}: {}",
        if failed { "FAILED" } else { "all ok" }
    );
    std::process::exit(i32::from(failed));
}

fn main_checks() {
    step("probe", Duration::from_secs(30));
    let backend = CudaBackend::new();
    let t = Instant::now();
    let probe = backend.probe();
    println!("device: {}", probe.device);
    for c in &probe.capabilities {
        println!("  {:<52} {}", c.name, c.value);
    }
    for (k, a) in &probe.transports {
        println!("  transport {k:<8} {a:?}");
    }
    report(
        "probe",
        probe.transports.iter().any(|(_, a)| a.is_available()),
        format!("in {:?}", t.elapsed()),
    );

    let dev = match backend.cuda_device() {
        Ok(d) => d,
        Err(e) => {
            report("device", false, e);
            return;
        }
    };
    report("device", true, dev.name());

    step("nvrtc", Duration::from_secs(120));
    match Compiler::new() {
        Err(e) => report("nvrtc", false, e),
        Ok(c) => {
            println!(
                "nvrtc {:?}, cache {:?}, target {:?}",
                c.version(),
                c.cache(),
                c.target_for(dev.arch())
            );
            let fresh = c.clone().without_cache();
            let t = Instant::now();
            match fresh.compile("gpuio_check.cu", TEST_SOURCE, dev.arch()) {
                Ok(img) => report(
                    "nvrtc compile, no cache",
                    true,
                    format!(
                        "{} {:?}, {} bytes, {:?}, log: {:?}",
                        img.target.option,
                        img.target.kind,
                        img.bytes.len(),
                        t.elapsed(),
                        img.log
                    ),
                ),
                Err(e) => report("nvrtc compile, no cache", false, e),
            }
            for round in 0..2 {
                let t = Instant::now();
                match c.compile("gpuio_check.cu", TEST_SOURCE, dev.arch()) {
                    Ok(img) => report(
                        &format!("nvrtc cache round {round}"),
                        round == 0 || img.cached || c.cache().is_none(),
                        format!(
                            "cached={} path={:?} {:?}",
                            img.cached,
                            img.cache_path,
                            t.elapsed()
                        ),
                    ),
                    Err(e) => report(&format!("nvrtc cache round {round}"), false, e),
                }
            }
            let bad = c.clone().without_cache().compile(
                "bad.cu",
                "#include \"gpuio.h\"\nGPUIO_KERNEL(k)(const gpuio_channel *ch, gpuio_u64 *p) { undefined_thing(); }\n",
                dev.arch(),
            );
            match bad {
                Err(e) => report(
                    "nvrtc error carries the log",
                    e.to_string().contains("undefined_thing"),
                    e,
                ),
                Ok(_) => report("nvrtc error carries the log", false, "compiled?"),
            }
        }
    }

    step("no_mmap", Duration::from_secs(30));
    let ctx = dev.context().clone();
    let kinds: Vec<(&str, Allocated)> = vec![
        (
            "anonymous mmap (not registered)",
            AnonMapping::new(64 << 10)
                .map(|m| Box::new(m) as Box<dyn SharedMemory>)
                .map_err(|e| e.to_string()),
        ),
        (
            "mmap + cuMemHostRegister(DEVICEMAP|PORTABLE)",
            RegisteredMapping::new(&ctx, 64 << 10)
                .map(|m| Box::new(m) as Box<dyn SharedMemory>)
                .map_err(|e| e.to_string()),
        ),
        (
            "cuMemHostAlloc(DEVICEMAP|PORTABLE)",
            HostAlloc::new(&ctx, 64 << 10)
                .map(|m| Box::new(m) as Box<dyn SharedMemory>)
                .map_err(|e| e.to_string()),
        ),
    ];
    for (what, mem) in &kinds {
        match mem {
            Err(e) => report(&format!("alloc {what}"), false, e),
            Ok(m) => {
                let r = m.region();
                println!(
                    "{what}: host {:p} device {:#x} len {}",
                    r.host_ptr, r.device_addr, r.len
                );
                for (entries, sqpoll) in [(8, false), (256, false), (256, true)] {
                    let v = no_mmap_ring_accepts(m.as_ref(), entries, sqpoll);
                    println!(
                        "NO_MMAP{} ring of {entries} in {what}: {}",
                        if sqpoll { "|SQPOLL" } else { "" },
                        match &v {
                            Ok(()) => "accepted".to_string(),
                            Err(e) => format!("refused: {e}"),
                        }
                    );
                }
            }
        }
    }
    if let Some((_, Ok(m))) = kinds.get(1) {
        report(
            "NO_MMAP|SQPOLL ring in registered memory",
            no_mmap_ring_accepts(m.as_ref(), 256, true).is_ok(),
            "",
        );
    }
    drop(kinds);

    step("module", Duration::from_secs(120));
    let conf = match dev.conformance() {
        Ok(m) => {
            report(
                "load conformance",
                true,
                format!("{} {:?} cached={}", m.target, m.kind, m.cached),
            );
            m
        }
        Err(e) => {
            report("load conformance", false, e);
            return;
        }
    };
    let tests = match dev.compile("gpuio_check.cu", TEST_SOURCE) {
        Ok(m) => m,
        Err(e) => {
            report("load test kernels", false, e);
            return;
        }
    };

    step("small-block build", Duration::from_secs(20));
    // Blocks of up to SMALL_BLOCK threads run the file's small-block build (up to
    // 255 registers a thread) when the whole grid is resident with it, unless the
    // variable turns it off; other launches the build for 1024.
    let small_on = small_block_build_enabled();
    let sms = Device::full_shape(&dev).0;
    // (grid, block, whether it may run the small-block build)
    let shapes = [
        (1, 1, true),
        (sms, SMALL_BLOCK, true),
        (1, SMALL_BLOCK + 1, false),
        (sms, 1024, false),
        (sms * 64, SMALL_BLOCK, false),
    ];
    for (module, kernel) in [(&conf, "gpuio_k_nop"), (&tests, "gpuio_t_mapped")] {
        let mut ok = true;
        let mut seen = Vec::new();
        for &(grid, block, small) in &shapes {
            let want_small = small_on && small;
            match dev.launch_build(module, kernel, grid, block) {
                Ok(b) => {
                    let want_bound = if want_small { SMALL_BLOCK } else { 1024 };
                    ok &= b.small == want_small && b.max_block == want_bound;
                    seen.push(format!("{grid}x{block}: {b}"));
                }
                Err(e) => {
                    ok = false;
                    seen.push(format!("{grid}x{block}: {e}"));
                }
            }
        }
        report(
            &format!("{kernel}: a launch runs the build its shape calls for"),
            ok,
            seen.join("; "),
        );
    }

    step("mapped", Duration::from_secs(20));
    let ch = channel(&dev);
    let staging = ch.staging();
    let value: u64 = 0x0123_4567_89ab_cdef;
    // SAFETY: the staging area is at least 16 bytes of live shared memory, and no
    // kernel runs on this channel yet.
    unsafe { std::ptr::write_volatile(staging.host_ptr.as_ptr().cast::<u64>(), value) };
    match dev
        .launch_in(&tests, "gpuio_t_mapped", 1, 32, &ch, &[0, 0, 0])
        .and_then(|l| l.join(Duration::from_secs(10)))
    {
        Ok(p) => {
            // SAFETY: as above; the kernel has ended.
            let back =
                unsafe { std::ptr::read_volatile(staging.host_ptr.as_ptr().cast::<u64>().add(1)) };
            report(
                "mapped memory both ways",
                p[1] == u64::from(gpuio_core::abi::MAGIC) && p[2] == value && back == !value,
                format!("magic {:#x}, read {:#x}, host sees {:#x}", p[1], p[2], back),
            );
        }
        Err(e) => report("mapped memory both ways", false, e),
    }

    step("nop", Duration::from_secs(20));
    let t = Instant::now();
    match dev
        .launch("gpuio_k_nop", 2, 64, &ch, &[1, 0, 0])
        .and_then(|l| l.join(Duration::from_secs(10)))
    {
        Ok(p) => report(
            "gpuio_k_nop on a forward channel",
            p[1] == 0,
            format!("params {p:?} (no failures expected) in {:?}", t.elapsed()),
        ),
        Err(e) => report("gpuio_k_nop on a forward channel", false, e),
    }
    match dev.launch("no_such_kernel", 1, 1, &ch, &[0]) {
        Err(DeviceError::NoSuchKernel(n)) => report("unknown kernel name", true, n),
        Err(e) => report("unknown kernel name", false, e),
        Ok(_) => report("unknown kernel name", false, "launched?"),
    }
    drop(conf);

    step("hang", Duration::from_secs(60));
    let spin = channel(&dev);
    let launch = dev.launch_in(&tests, "gpuio_t_spin", 4, 128, &spin, &[20_000_000_000, 0]);
    match launch.map(|l| l.join(Duration::from_millis(300))) {
        Ok(Err(DeviceError::Timeout { kernel, waited, .. })) => report(
            "join times out on a spinning kernel",
            true,
            format!("{kernel} after {waited:?}"),
        ),
        Ok(other) => report(
            "join times out on a spinning kernel",
            false,
            format!("{other:?}"),
        ),
        Err(e) => report("join times out on a spinning kernel", false, e),
    }
    println!("detached kernels: {}", dev.detached());
    let t = Instant::now();
    match dev
        .launch("gpuio_k_nop", 1, 32, &ch, &[1, 0, 0])
        .and_then(|l| l.join(Duration::from_secs(10)))
    {
        Ok(p) => report(
            "another kernel runs while one spins",
            p[1] == 0,
            format!("{p:?} in {:?}", t.elapsed()),
        ),
        Err(e) => report("another kernel runs while one spins", false, e),
    }
    let t = Instant::now();
    let rep = spin.close();
    println!("close of the spinning kernel's channel: {rep}");
    while dev.detached() > 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    report(
        "closing the channel ends the spinning kernel",
        dev.detached() == 0,
        format!("{:?}", t.elapsed()),
    );

    step("while a kernel spins", Duration::from_secs(90));
    println!(
        "registered host memory: {} bytes",
        dev.memory().registered_bytes()
    );
    let mut kept: Vec<Box<dyn std::any::Any>> = Vec::new();
    during_spin(&dev, &tests, "cuMemHostRegister 1 MiB", || {
        let m = RegisteredMapping::new(&ctx, 1 << 20);
        let d = format!("{:?}", m.as_ref().err());
        kept.push(Box::new(m));
        d
    });
    kept.clear();
    let pre = RegisteredMapping::new(&ctx, 1 << 20);
    during_spin(&dev, &tests, "cuMemHostUnregister 1 MiB", move || {
        drop(pre);
        String::new()
    });
    during_spin(&dev, &tests, "cuMemHostAlloc 1 MiB", || {
        let m = HostAlloc::new(&ctx, 1 << 20);
        let d = format!("{:?}", m.as_ref().err());
        kept.push(Box::new(m));
        d
    });
    kept.clear();
    let pre = HostAlloc::new(&ctx, 1 << 20);
    during_spin(&dev, &tests, "cuMemFreeHost 1 MiB", move || {
        drop(pre);
        String::new()
    });
    let waited = during_spin(
        &dev,
        &tests,
        "device buffer alloc + upload + free (pool, copy stream)",
        || format!("{:?}", dev.buffer(1 << 20, &[7u8; 4096]).err()),
    );
    report(
        "device memory does not wait for a spinning kernel",
        !waited,
        "",
    );
    during_spin(&dev, &tests, "cuModuleLoadData (cached image)", || {
        format!("{:?}", dev.compile("gpuio_check.cu", TEST_SOURCE).err())
    });
    let waited = during_spin(
        &dev,
        &tests,
        "open + close a channel (arena pieces)",
        || {
            let c = channel(&dev);
            format!("{}", c.close())
        },
    );
    report(
        "opening and closing a channel does not wait for a spinning kernel",
        !waited,
        "",
    );
    println!(
        "registered host memory: {} bytes",
        dev.memory().registered_bytes()
    );

    let rep = ch.close();
    report("close", rep.is_clean(), rep);
}

/// Runs `op` while a kernel spins on another channel (for at most 3 s); says
/// whether `op` waited for the kernel.
fn during_spin(
    dev: &CudaDevice,
    tests: &gpuio_backend_cuda_mapped::device::KernelModule,
    what: &str,
    op: impl FnOnce() -> String,
) -> bool {
    let spin = channel(dev);
    let timed_out = matches!(
        dev.launch_in(tests, "gpuio_t_spin", 2, 64, &spin, &[3_000_000_000, 0])
            .map(|l| l.join(Duration::from_millis(150))),
        Ok(Err(DeviceError::Timeout { .. }))
    );
    let t = Instant::now();
    let detail = op();
    let took = t.elapsed();
    let waited = took > Duration::from_secs(1);
    println!(
        "WHILE A KERNEL SPINS: {what}: {took:?}, {} (spinning: {timed_out}) {detail}",
        if waited {
            "WAITED for the kernel"
        } else {
            "did not wait"
        }
    );
    let _ = spin.close();
    let t = Instant::now();
    while dev.detached() > 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
    waited
}

fn trap_checks() {
    step("trap", Duration::from_secs(60));
    let backend = CudaBackend::new();
    let dev = match backend.cuda_device() {
        Ok(d) => d,
        Err(e) => {
            report("device", false, e);
            return;
        }
    };
    let tests = match dev.compile("gpuio_check.cu", TEST_SOURCE) {
        Ok(m) => m,
        Err(e) => {
            report("load test kernels", false, e);
            return;
        }
    };
    let ch = channel(&dev);
    let other = channel(&dev);
    let t = Instant::now();
    match dev
        .launch_in(&tests, "gpuio_t_trap", 1, 32, &ch, &[0x10, 0])
        .and_then(|l| l.join(Duration::from_secs(10)))
    {
        Err(DeviceError::Kernel { kernel, message }) => report(
            "a trap is reported with the driver's text",
            message.contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
            format!("{kernel}: {message} ({:?})", t.elapsed()),
        ),
        other => report(
            "a trap is reported with the driver's text",
            false,
            format!("{other:?}"),
        ),
    }
    println!("lost: {:?}", dev.lost());
    let rep = ch.close();
    report(
        "close after a trap mid-I/O drains what was accepted",
        rep.counters.submitted > 0 && rep.counters.balanced(),
        &rep,
    );
    match dev.launch("gpuio_k_nop", 1, 32, &other, &[1, 0, 0]) {
        Err(e) => report(
            "later launches are refused with the first error",
            e.to_string().contains("ILLEGAL_ADDRESS"),
            e,
        ),
        Ok(l) => report(
            "later launches are refused with the first error",
            false,
            format!("{:?}", l.join(Duration::from_secs(2)).err()),
        ),
    }
    match dev.buffer(4096, &[1; 16]) {
        Err(e) => println!("buffer after the trap: {e}"),
        Ok(_) => println!("buffer after the trap: allocated"),
    }
    let rep = other.close();
    report("another channel closes after a trap", true, &rep);
    let probe = backend.probe();
    println!("probe after the trap: {:?}", probe.transports);
    drop(dev);
    drop(backend);
    report(
        "the process is still usable after a trap",
        true,
        "dropped everything",
    );
}

fn tree_checks() {
    step("nvrtc-tree", Duration::from_secs(120));
    let args: Vec<String> = std::env::args().skip(2).collect();
    let (Some(dir), Some(src)) = (args.first(), args.get(1)) else {
        report("nvrtc-tree", false, "needs INCLUDE_DIR SOURCE");
        return;
    };
    let mut files = Vec::new();
    let mut todo = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let (Ok(rel), Ok(text)) = (p.strip_prefix(dir), std::fs::read_to_string(&p)) {
                files.push((rel.to_string_lossy().into_owned(), text));
            }
        }
    }
    let headers: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    println!(
        "headers: {:?}",
        headers.iter().map(|h| h.0).collect::<Vec<_>>()
    );
    let source = match std::fs::read_to_string(src) {
        Ok(s) => s,
        Err(e) => {
            report("nvrtc-tree", false, format!("{src}: {e}"));
            return;
        }
    };
    let arch = match CudaDevice::new(0) {
        Ok(d) => d.arch(),
        Err(e) => {
            report("nvrtc-tree", false, e);
            return;
        }
    };
    match Compiler::new() {
        Err(e) => report("nvrtc-tree", false, e),
        Ok(c) => {
            let t = Instant::now();
            match c.without_cache().compile_with(src, &source, &headers, arch) {
                Ok(img) => report(
                    "nvrtc-tree",
                    true,
                    format!(
                        "{} {:?}, {} bytes, {:?}, log: {:?}",
                        img.target.option,
                        img.target.kind,
                        img.bytes.len(),
                        t.elapsed(),
                        img.log
                    ),
                ),
                Err(e) => report("nvrtc-tree", false, e),
            }
        }
    }
}
