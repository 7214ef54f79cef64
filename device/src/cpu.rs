//! The CPU device: runs kernels written against `gpuio.h` on OS threads.
//!
//! A launch of `grid × block` threads starts one OS thread per emulated thread; each
//! learns its global id through the header's host target (`gpuio_cpu_self`), so
//! warps are ids `32·w .. 32·w + 31`, as on a GPU. Kernel parameters are an array
//! of `u64` in shared memory both sides read and write.
//!
//! Kernels live in one of two images, each with its own copy of the runtime
//! (`cpu/runtime_body.h`: `gpuio_cpu_self` and the runner that sets it before
//! calling the kernel): the conformance kernels are compiled at build time and
//! linked into the executable; a user's kernel file is compiled at run time
//! ([`Compiler`], `compile.rs`) into a shared object and loaded ([`CpuModule`],
//! `module.rs`). A [`CpuKernel`] knows its image, so one launch path serves both
//! and a launch holds a loaded image open until its last thread ends.

mod compile;
mod module;

pub use compile::{cache_dir, Compiled, Compiler, Cxx, FLAGS};
pub use module::CpuModule;

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpuio_core::abi;
use gpuio_core::memory::{HostMemory, SharedMemory};
use gpuio_core::{Channel, KeepAlive, MemoryProvider as _};

use crate::{CopyBandwidth, Device, DeviceBuffer, DeviceError, Module, RunningKernel};

/// A kernel entry point compiled for the host: `GPUIO_KERNEL(name)(const
/// gpuio_channel *ch, gpuio_u64 *params)`.
pub type KernelFn = unsafe extern "C" fn(*const abi::Channel, *mut u64);

/// An image's runner, `GPUIO_CPU_RUNNER` in `cpu/runtime_body.h`: runs `kernel` as
/// emulated thread `global_id` of `count` on the calling OS thread.
type RunnerFn = unsafe extern "C" fn(
    kernel: KernelFn,
    ch: *const abi::Channel,
    params: *mut u64,
    global_id: u64,
    count: u64,
);

extern "C" {
    /// The runner of the image linked into the executable (`cpu/runtime.cpp`).
    fn gpuio_cpu_run_thread(
        kernel: KernelFn,
        ch: *const abi::Channel,
        params: *mut u64,
        global_id: u64,
        count: u64,
    );
}

/// A kernel the CPU device can run: its entry point and the image it lives in.
/// Made by [`crate::kernels::cpu`] (built in) or [`CpuModule::kernel`] (loaded).
#[derive(Clone, Debug)]
pub struct CpuKernel {
    name: Cow<'static, str>,
    entry: KernelFn,
    image: Image,
}

/// Where a kernel's code lives. Each image has its own `gpuio_cpu_self`, which only
/// its own runner sets, so a kernel must be run through the runner of its image.
#[derive(Clone, Debug)]
enum Image {
    /// Compiled at build time and linked into the executable.
    Linked,
    /// A shared object loaded at run time; every launched thread holds it open.
    Loaded(Arc<module::Loaded>),
}

impl CpuKernel {
    /// A kernel of the executable's own image. `entry` must be a kernel compiled
    /// into this crate's static library (it reads that image's `gpuio_cpu_self`).
    pub(crate) const fn linked(name: &'static str, entry: KernelFn) -> Self {
        Self {
            name: Cow::Borrowed(name),
            entry,
            image: Image::Linked,
        }
    }

    /// The entry-point symbol, e.g. `gpuio_k_nop`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The runner of the kernel's image.
    fn runner(&self) -> RunnerFn {
        match &self.image {
            Image::Linked => gpuio_cpu_run_thread,
            Image::Loaded(image) => image.runner(),
        }
    }
}

/// Why a CPU launch failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("kernel {kernel}: {finished} of {threads} threads finished within {waited:?}")]
    Timeout {
        kernel: String,
        threads: usize,
        finished: usize,
        waited: Duration,
    },
    #[error("kernel {kernel}: a thread panicked")]
    Panicked { kernel: String },
    #[error("kernel {kernel}: cannot start thread {index}: {source}")]
    Spawn {
        kernel: String,
        index: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("kernel parameters: {0}")]
    Memory(#[from] gpuio_core::MemoryError),
}

/// The CPU device.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuDevice;

/// Parameters a kernel reads and writes.
struct Params {
    mem: Box<dyn SharedMemory>,
    len: usize,
}

/// A running CPU kernel. Its threads hold the channel's memory, and the image the
/// kernel lives in, alive until each ends.
pub struct CpuLaunch {
    kernel: String,
    threads: Vec<JoinHandle<()>>,
    params: Arc<Params>,
}

impl CpuDevice {
    /// Starts `grid × block` threads running `kernel` on `channel` with `params`.
    pub fn launch(
        &self,
        kernel: CpuKernel,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<CpuLaunch, LaunchError> {
        let mem = HostMemory.alloc_shared(params.len().max(1) * 8)?;
        let bytes: Vec<u8> = params.iter().flat_map(|p| p.to_ne_bytes()).collect();
        mem.write_bytes(0, &bytes)?;
        let params = Arc::new(Params {
            mem,
            len: params.len(),
        });
        let count = u64::from(grid) * u64::from(block);
        let desc = channel.device_ptr();
        let (entry, runner) = (kernel.entry, kernel.runner());
        let mut threads = Vec::with_capacity(count as usize);
        for id in 0..count {
            let keep: KeepAlive = channel.keepalive();
            let image = kernel.image.clone();
            let p = params.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("gpuio-cpu-{}-{id}", kernel.name))
                .stack_size(256 << 10)
                .spawn(move || {
                    let (_keep, _image) = (keep, image);
                    let params_ptr = p.mem.region().host_ptr.as_ptr().cast::<u64>();
                    // SAFETY: `desc` is the descriptor of a channel whose memory `_keep`
                    // holds alive; `params_ptr` points at `p.len` u64s that `p` holds
                    // alive; `entry` and `runner` are of the same image (a CpuKernel
                    // pairs them), which `_image` holds loaded; the kernel was compiled
                    // against the same ABI (abi_layout test) and touches shared memory
                    // only through the header's atomics.
                    unsafe { runner(entry, desc as *const abi::Channel, params_ptr, id, count) };
                });
            match spawned {
                Ok(h) => threads.push(h),
                Err(source) => {
                    return Err(LaunchError::Spawn {
                        kernel: kernel.name.into_owned(),
                        index: id as usize,
                        source,
                    })
                }
            }
        }
        Ok(CpuLaunch {
            kernel: kernel.name.into_owned(),
            threads,
            params,
        })
    }
}

impl CpuLaunch {
    /// Waits up to `timeout` for every thread, then returns the parameters as the
    /// kernel left them. On timeout the threads keep running detached (they hold the
    /// memory they use), and the error says how many finished.
    pub fn join(self, timeout: Duration) -> Result<Vec<u64>, LaunchError> {
        let start = Instant::now();
        let total = self.threads.len();
        loop {
            let finished = self.threads.iter().filter(|t| t.is_finished()).count();
            if finished == total {
                break;
            }
            if start.elapsed() >= timeout {
                return Err(LaunchError::Timeout {
                    kernel: self.kernel,
                    threads: total,
                    finished,
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut panicked = false;
        for t in self.threads {
            panicked |= t.join().is_err();
        }
        if panicked {
            return Err(LaunchError::Panicked {
                kernel: self.kernel,
            });
        }
        let mut bytes = vec![0u8; self.params.len * 8];
        self.params.mem.read_bytes(0, &mut bytes)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
}

pub(crate) fn runtime_linked() {
    std::hint::black_box(gpuio_cpu_run_thread as *const ());
}

/// The compiler `CpuDevice::load` uses, found on first success (a failure is not
/// kept: installing a compiler or fixing `CXX` helps without a restart).
fn default_compiler() -> Result<&'static Compiler, DeviceError> {
    static COMPILER: OnceLock<Compiler> = OnceLock::new();
    if let Some(c) = COMPILER.get() {
        return Ok(c);
    }
    let found = Compiler::new()?;
    Ok(COMPILER.get_or_init(|| found))
}

impl From<LaunchError> for DeviceError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Timeout {
                kernel,
                threads,
                finished,
                waited,
            } => DeviceError::Timeout {
                kernel,
                threads,
                finished,
                waited,
            },
            LaunchError::Memory(m) => DeviceError::Memory(m),
            LaunchError::Panicked { ref kernel } | LaunchError::Spawn { ref kernel, .. } => {
                DeviceError::Kernel {
                    kernel: kernel.clone(),
                    message: e.to_string(),
                }
            }
        }
    }
}

/// Host memory as a device buffer (the CPU device reads it directly).
struct HostBuffer(Box<dyn SharedMemory>, usize);

impl DeviceBuffer for HostBuffer {
    fn device_addr(&self) -> u64 {
        self.0.region().device_addr
    }
    fn len(&self) -> usize {
        self.1
    }
    fn download(&self, out: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.0.read_bytes(0, out)?)
    }
}

impl RunningKernel for CpuLaunch {
    fn join(self: Box<Self>, timeout: Duration) -> Result<Vec<u64>, DeviceError> {
        Ok(CpuLaunch::join(*self, timeout)?)
    }
}

impl Device for CpuDevice {
    fn name(&self) -> String {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!("CPU ({cores} cores, one OS thread per emulated thread)")
    }
    fn provider(&self) -> Arc<dyn gpuio_core::MemoryProvider> {
        Arc::new(HostMemory)
    }
    fn full_shape(&self) -> (u32, u32) {
        // One OS thread per emulated thread: 64 per core keeps every core busy
        // without making the host thrash.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (u32::try_from(cores).unwrap_or(1), 64)
    }
    fn buffer(&self, len: usize, bytes: &[u8]) -> Result<Box<dyn DeviceBuffer>, DeviceError> {
        let mem = HostMemory.alloc_shared(len.max(bytes.len()))?;
        mem.write_bytes(0, bytes)?;
        Ok(Box::new(HostBuffer(mem, len.max(bytes.len()))))
    }
    /// Compiles `source` with the host C++ compiler (`CXX`, else `c++`, `g++` or
    /// `clang++` on `PATH`; found once per process) into the cache ([`cache_dir`]),
    /// and loads it. See [`Compiler::load`].
    fn load(&self, name: &str, source: &str) -> Result<Arc<dyn Module>, DeviceError> {
        Ok(default_compiler()?.load(name, source)?)
    }
    /// Host memory is the device's memory here, so the ceiling is `memcpy` of
    /// `bytes` from one buffer to another (both directions are the same copy).
    fn copy_bandwidth(&self, bytes: usize, tries: u32) -> Result<CopyBandwidth, DeviceError> {
        let bytes = bytes.max(1);
        let mut a = vec![0x5au8; bytes];
        let mut b = vec![0u8; bytes];
        b.copy_from_slice(&a); // untimed: faults the pages in
        let mut best = [f64::MAX; 2];
        for _ in 0..tries.max(1) {
            for (i, best) in best.iter_mut().enumerate() {
                let (dst, src) = if i == 0 { (&mut b, &a) } else { (&mut a, &b) };
                let start = Instant::now();
                dst.copy_from_slice(std::hint::black_box(src));
                std::hint::black_box(&dst);
                *best = best.min(start.elapsed().as_secs_f64());
            }
        }
        Ok(CopyBandwidth {
            how: "memcpy between two host buffers",
            bytes,
            device_to_host: bytes as f64 / best[0].max(1e-9),
            host_to_device: bytes as f64 / best[1].max(1e-9),
        })
    }
    fn native_printf_name(&self) -> &'static str {
        "C library printf"
    }
    fn launch(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError> {
        let k =
            crate::kernels::cpu(name).ok_or_else(|| DeviceError::NoSuchKernel(name.to_string()))?;
        Ok(Box::new(CpuDevice::launch(
            self, k, grid, block, channel, params,
        )?))
    }
}
