//! The CUDA backend: probe the machine, open channels on CUDA memory.
//!
//! [`CudaBackend::probe`] answers data and never panics: it looks for libcuda (and
//! every symbol gpuio uses) before the first driver call, then reports the
//! driver, the GPU and the attributes mapped pinned memory depends on as
//! [`Capability`] entries, and a score or a reason for each transport. GPU pairs
//! score from [`SCORE_GPU`] up (above any CPU pair), mailbox > forward > direct.
//!
//! What the transports need beyond the GPU:
//! * all three: the device maps host memory (`CAN_MAP_HOST_MEMORY`) and the
//!   platform supports `cuMemHostRegister` (`HOST_REGISTER_SUPPORTED`);
//! * forward: a plain io_uring;
//! * direct: an io_uring created with `SQPOLL | NO_MMAP` on CUDA-registered memory
//!   (asked of the running kernel here), plus what the ring's confinement needs
//!   (`R_DISABLED`, restrictions, fixed buffers): that part is general io_uring
//!   knowledge, answered by [`gpuio_core::probe::UringProbe`] asked with the CUDA
//!   memory provider (so fixed buffers are registered from CUDA memory);
//! * mailbox: nothing more.
//!
//! The backend builds no transport: it supplies the memory provider (through its
//! [`CudaDevice`]) and the probe, and the facade opens every channel the same way.

use std::sync::{Arc, OnceLock};

use gpuio_core::backend::{Availability, Backend, BackendProbe, Capability};
use gpuio_core::probe::UringProbe;
use gpuio_core::{MemoryProvider as _, TransportKind};
use gpuio_device::Device;

use crate::device::CudaDevice;
use crate::memory::no_mmap_ring_accepts;
use crate::sys::{self, Attribute, LibraryError};

/// The lowest score of a CUDA pair; CPU pairs score below it.
pub const SCORE_GPU: u32 = 1000;

/// The score of each CUDA transport when no calibration says otherwise: mailbox >
/// forward > direct. Measured on an H100 (2026-11-23, `gpuio bench` at 2e8d180,
/// BENCHMARKS.md): the whole device writing, reading and printing a row per thread
/// at 1,325k / 1,084k / 225k requests/s, 64 threads' printf at 740k / 570k / 61k
/// lines/s; NOP latency p50 11.8 / 10.5 / 22.0 µs.
pub fn score(kind: TransportKind) -> u32 {
    SCORE_GPU
        + match kind {
            TransportKind::Mailbox => 30,
            TransportKind::Forward => 20,
            TransportKind::Direct => 10,
        }
}

/// The CUDA backend: GPU 0 and its memory provider.
#[derive(Default)]
pub struct CudaBackend {
    ordinal: usize,
    device: OnceLock<Result<CudaDevice, String>>,
}

impl CudaBackend {
    /// A backend on GPU 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The GPU this backend runs on, opened on first use. Channels opened on its
    /// memory provider are reachable by kernels launched on it.
    pub fn cuda_device(&self) -> Result<CudaDevice, String> {
        self.device
            .get_or_init(|| {
                sys::driver().map_err(|e| library_reason(&e))?;
                CudaDevice::new(self.ordinal).map_err(|e| e.to_string())
            })
            .clone()
    }
}

fn library_reason(e: &LibraryError) -> String {
    match e {
        LibraryError::NotFound { library, hint, .. } => format!("{library} not found — {hint}"),
        other => other.to_string(),
    }
}

fn yes_no(v: i32) -> &'static str {
    if v != 0 {
        "yes"
    } else {
        "no"
    }
}

/// What probing the GPU found (everything before the per-transport verdicts).
struct Found {
    device: String,
    caps: Vec<Capability>,
    /// Why no transport can run, if none can.
    blocker: Option<String>,
    /// Why the direct transport cannot run, if it cannot.
    direct: Option<String>,
    /// Why the forward transport cannot run, if it cannot.
    forward: Option<String>,
}

impl CudaBackend {
    fn find(&self) -> Found {
        let mut caps = Vec::new();
        let found = |device: String, caps: Vec<Capability>, blocker: String| Found {
            device,
            caps,
            blocker: Some(blocker),
            direct: None,
            forward: None,
        };
        if let Err(e) = sys::driver() {
            caps.push(Capability::new("libcuda", format!("unusable: {e}")));
            return found("none".into(), caps, library_reason(&e));
        }
        caps.push(Capability::new("libcuda", "loaded"));
        if let Err(e) = sys::init() {
            return found("none".into(), caps, format!("no usable NVIDIA GPU: {e}"));
        }
        match sys::driver_version() {
            Ok(v) => caps.push(Capability::new(
                "driver CUDA version",
                format!("{}.{}", v / 1000, (v % 1000) / 10),
            )),
            Err(e) => caps.push(Capability::new("driver CUDA version", e)),
        }
        let count = match sys::device_count() {
            Ok(0) => {
                return found(
                    "none".into(),
                    caps,
                    "no NVIDIA GPU visible (cuDeviceGetCount = 0)".into(),
                )
            }
            Ok(n) => n,
            Err(e) => return found("none".into(), caps, format!("no usable NVIDIA GPU: {e}")),
        };
        caps.push(Capability::new("devices", count));
        let dev = match sys::device(self.ordinal as i32) {
            Ok(d) => d,
            Err(e) => return found("none".into(), caps, e.to_string()),
        };
        let name = sys::device_name(dev).unwrap_or_else(|e| format!("GPU {} ({e})", self.ordinal));
        let attr = |a: Attribute| sys::device_attribute(dev, a);
        let (major, minor) = match (
            attr(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attr(Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return found(name, caps, e.to_string()),
        };
        let device = format!("{name}, sm_{major}{minor}");
        caps.push(Capability::new(
            "compute capability",
            format!("{major}.{minor}"),
        ));
        let mut blocker = None;
        if major < 7 {
            blocker = Some(format!(
                "{name} is sm_{major}{minor}; gpuio.h needs sm_70 or newer (system-scope acquire/release, __nanosleep)"
            ));
        }
        let needs: [(&str, Attribute, Option<&str>); 6] = [
            (
                "CAN_MAP_HOST_MEMORY",
                Attribute::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
                Some("the GPU cannot map host memory"),
            ),
            (
                "HOST_REGISTER_SUPPORTED",
                Attribute::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED,
                Some("cuMemHostRegister is not supported on this platform"),
            ),
            (
                "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
                Attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
                None,
            ),
            (
                "HOST_NATIVE_ATOMIC_SUPPORTED",
                Attribute::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
                None,
            ),
            (
                "UNIFIED_ADDRESSING",
                Attribute::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
                None,
            ),
            (
                "MEMORY_POOLS_SUPPORTED",
                Attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                None,
            ),
        ];
        for (label, a, required) in needs {
            match attr(a) {
                Ok(v) => {
                    caps.push(Capability::new(label, yes_no(v)));
                    if let (0, Some(why)) = (v, required) {
                        blocker.get_or_insert_with(|| why.to_string());
                    }
                }
                Err(e) => caps.push(Capability::new(label, e)),
            }
        }
        if let Ok(n) = attr(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) {
            caps.push(Capability::new("multiprocessors", n));
        }
        caps.push(Capability::new(
            "nvrtc",
            nvrtc_summary(crate::nvrtc::Arch { major, minor }),
        ));
        let uring = plain_ring()
            .err()
            .map(|e| format!("io_uring_setup failed: {e}"));
        caps.push(Capability::new(
            "io_uring",
            uring.as_deref().unwrap_or("available"),
        ));
        if let Some(b) = blocker {
            return found(device, caps, b);
        }
        // Memory: the context, a registration, and the kernel's view of it.
        let d = match self.cuda_device() {
            Err(e) => return found(device, caps, e),
            Ok(d) => d,
        };
        if let Some(e) = d.lost() {
            return found(
                device,
                caps,
                format!("the CUDA context was lost to a kernel trap ({e}); restart the process"),
            );
        }
        // From the provider's registered chunks: a registration of its own would be
        // undone at once, and unregistering waits for every running kernel.
        let m = match d.memory().alloc_shared(64 << 10) {
            Err(e) => return found(device, caps, format!("mapped pinned memory: {e}")),
            Ok(m) => m,
        };
        let r = m.region();
        caps.push(Capability::new(
            "mapped memory device address",
            if r.device_addr == r.host_ptr.as_ptr() as u64 {
                "equals the host address"
            } else {
                "differs from the host address"
            },
        ));
        let no_mmap = no_mmap_ring_accepts(m.as_ref(), 256, true);
        caps.push(Capability::new(
            "io_uring SQPOLL|NO_MMAP ring in cuda-mapped memory",
            match &no_mmap {
                Ok(()) => "accepted".to_string(),
                Err(e) => format!("refused: {e}"),
            },
        ));
        drop(m);
        let mut forward = uring.clone();
        let mut direct = uring.or_else(|| {
            no_mmap.err().map(|e| {
                format!(
                    "the kernel refuses CUDA-registered memory as an io_uring NO_MMAP ring: {e}"
                )
            })
        });
        let u = UringProbe::detect(d.memory().as_ref());
        let verdict = |a: Availability| match a {
            Availability::Available { .. } => None,
            Availability::Unavailable { reason } => Some(reason),
        };
        let (ud, uf) = (verdict(u.direct(0)), verdict(u.forward(0)));
        caps.push(Capability::new(
            "io_uring facts (core probe)",
            format!(
                "direct: {}; forward: {}",
                ud.as_deref().unwrap_or("ok"),
                uf.as_deref().unwrap_or("ok")
            ),
        ));
        direct = direct.or(ud);
        forward = forward.or(uf);
        Found {
            device,
            caps,
            blocker: None,
            direct,
            forward,
        }
    }
}

fn nvrtc_summary(arch: crate::nvrtc::Arch) -> String {
    match crate::nvrtc::Compiler::new() {
        Ok(c) => {
            let (a, b) = c.version();
            match c.target_for(arch) {
                Ok(t) => format!("{a}.{b}, kernels as {} ({:?})", t.option, t.kind),
                Err(e) => format!("{a}.{b}: {e}"),
            }
        }
        Err(e) => format!("unusable: {e} (kernels cannot be compiled at run time)"),
    }
}

/// Whether a plain io_uring can be created here.
fn plain_ring() -> Result<(), std::io::Error> {
    let mut p = rustix::io_uring::io_uring_params::default();
    // SAFETY: default params (no ATTACH_WQ, so no fd must be valid); the ring's fd
    // is closed when the OwnedFd drops at once.
    let fd = unsafe { rustix::io_uring::io_uring_setup(8, &mut p) }?;
    drop(fd);
    Ok(())
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn is_gpu(&self) -> bool {
        true
    }

    fn probe(&self) -> BackendProbe {
        let f = self.find();
        let transports = TransportKind::ALL
            .iter()
            .map(|&kind| {
                let why = f.blocker.clone().or_else(|| match kind {
                    TransportKind::Mailbox => None,
                    TransportKind::Forward => f.forward.clone(),
                    TransportKind::Direct => f.direct.clone(),
                });
                let a = match why {
                    None => Availability::Available { score: score(kind) },
                    Some(reason) => Availability::Unavailable { reason },
                };
                (kind, a)
            })
            .collect();
        BackendProbe {
            backend: self.name(),
            device: f.device,
            capabilities: f.caps,
            transports,
        }
    }

    fn device(&self) -> Result<Arc<dyn Device>, String> {
        let device = self.cuda_device()?;
        if let Some(e) = device.lost() {
            return Err(format!(
                "the CUDA context was lost to a kernel trap ({e}); restart the process"
            ));
        }
        Ok(Arc::new(device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_pairs_score_above_cpu_pairs_mailbox_over_forward_over_direct() {
        let [d, f, m] = [
            TransportKind::Direct,
            TransportKind::Forward,
            TransportKind::Mailbox,
        ]
        .map(score);
        assert!(m > f && f > d && d >= SCORE_GPU, "{d} {f} {m}");
    }

    #[test]
    fn probe_without_libcuda_says_to_install_the_driver() {
        let probe = CudaBackend::new().probe();
        assert_eq!(probe.backend, "cuda");
        assert_eq!(probe.transports.len(), 3);
        if sys::driver().is_ok() {
            // A machine with the driver: the probe found something to describe.
            assert!(!probe.capabilities.is_empty());
            return;
        }
        assert_eq!(probe.device, "none");
        for (kind, a) in &probe.transports {
            match a {
                Availability::Unavailable { reason } => assert!(
                    reason.starts_with("libcuda not found — install the NVIDIA driver"),
                    "{kind}: {reason}"
                ),
                other => panic!("{kind} is {other:?} without libcuda"),
            }
        }
        let lib = probe
            .capabilities
            .iter()
            .find(|c| c.name == "libcuda")
            .unwrap();
        assert!(
            lib.value.contains("libcuda.so.1"),
            "names tried: {}",
            lib.value
        );
    }

    #[test]
    fn no_device_without_libcuda_and_the_reason_says_so_not_a_panic() {
        if sys::driver().is_ok() {
            return;
        }
        let b = CudaBackend::new();
        match b.device() {
            Err(reason) => assert!(reason.contains("libcuda not found"), "{reason}"),
            Ok(d) => panic!("a device without libcuda: {}", d.name()),
        }
    }
}
