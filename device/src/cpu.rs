//! The CPU device: runs kernels written against `gpuio.h` on OS threads.
//!
//! A launch of `grid × block` threads starts one OS thread per emulated thread; each
//! learns its global id through the header's host target (`gpuio_cpu_self`), so
//! warps are ids `32·w .. 32·w + 31`, as on a GPU. Kernel parameters are an array
//! of `u64` in shared memory both sides read and write.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpuio_core::abi;
use gpuio_core::memory::{HostMemory, SharedMemory};
use gpuio_core::{Channel, KeepAlive, MemoryProvider as _};

use crate::{Device, DeviceBuffer, DeviceError, Module, RunningKernel};

/// A kernel entry point compiled for the host: `GPUIO_KERNEL(name)(const
/// gpuio_channel *ch, gpuio_u64 *params)`.
pub type KernelFn = unsafe extern "C" fn(*const abi::Channel, *mut u64);

extern "C" {
    fn gpuio_cpu_run_thread(
        kernel: KernelFn,
        ch: *const abi::Channel,
        params: *mut u64,
        global_id: u64,
        count: u64,
    );
}

/// A kernel the CPU device can run.
#[derive(Clone, Copy, Debug)]
pub struct CpuKernel {
    pub name: &'static str,
    pub entry: KernelFn,
}

/// Why a CPU launch failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("kernel {kernel}: {finished} of {threads} threads finished within {waited:?}")]
    Timeout {
        kernel: &'static str,
        threads: usize,
        finished: usize,
        waited: Duration,
    },
    #[error("kernel {kernel}: a thread panicked")]
    Panicked { kernel: &'static str },
    #[error("kernel {kernel}: cannot start thread {index}: {source}")]
    Spawn {
        kernel: &'static str,
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

/// A running CPU kernel. Holds the channel's memory alive until every thread ends.
pub struct CpuLaunch {
    kernel: &'static str,
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
        let mut threads = Vec::with_capacity(count as usize);
        for id in 0..count {
            let keep: KeepAlive = channel.keepalive();
            let p = params.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("gpuio-cpu-{}-{id}", kernel.name))
                .stack_size(256 << 10)
                .spawn(move || {
                    let _keep = keep;
                    let params_ptr = p.mem.region().host_ptr.as_ptr().cast::<u64>();
                    // SAFETY: `desc` is the descriptor of a channel whose memory `_keep`
                    // holds alive; `params_ptr` points at `p.len` u64s that `p` holds
                    // alive; the kernel was compiled against the same ABI (abi_layout
                    // test) and touches shared memory only through the header's atomics.
                    unsafe {
                        gpuio_cpu_run_thread(
                            kernel.entry,
                            desc as *const abi::Channel,
                            params_ptr,
                            id,
                            count,
                        )
                    };
                });
            match spawned {
                Ok(h) => threads.push(h),
                Err(source) => {
                    return Err(LaunchError::Spawn {
                        kernel: kernel.name,
                        index: id as usize,
                        source,
                    })
                }
            }
        }
        Ok(CpuLaunch {
            kernel: kernel.name,
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

impl From<LaunchError> for DeviceError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Timeout {
                kernel,
                threads,
                finished,
                waited,
            } => DeviceError::Timeout {
                kernel: kernel.to_string(),
                threads,
                finished,
                waited,
            },
            LaunchError::Memory(m) => DeviceError::Memory(m),
            other => DeviceError::Kernel {
                kernel: String::new(),
                message: other.to_string(),
            },
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
    fn buffer(&self, len: usize, bytes: &[u8]) -> Result<Box<dyn DeviceBuffer>, DeviceError> {
        let mem = HostMemory.alloc_shared(len.max(bytes.len()))?;
        mem.write_bytes(0, bytes)?;
        Ok(Box::new(HostBuffer(mem, len.max(bytes.len()))))
    }
    fn load(&self, name: &str, _source: &str) -> Result<Arc<dyn Module>, DeviceError> {
        Err(DeviceError::Kernel {
            kernel: name.to_string(),
            message: "the CPU device cannot load kernel sources at run time yet".into(),
        })
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
