//! The CUDA device: runs kernels that include `gpuio.h` on an NVIDIA GPU.
//!
//! A [`CudaDevice`] holds the device's primary context, its memory provider and the
//! conformance module (compiled by [`crate::nvrtc`] on first use, loaded once).
//! A launch gets its own non-blocking stream; its kernel receives
//! `(const gpuio_channel *desc, u64 *params)`, the descriptor's device address and
//! a params array in device memory (the kernels count with device atomics on it).
//! [`CudaLaunch::join`] polls an event recorded after the kernel (`cuEventQuery`)
//! with a backoff, so the host never blocks in the driver.
//!
//! **A kernel that outlives `join`'s timeout** is reported as
//! [`DeviceError::Timeout`] (a GPU cannot tell how many of its threads finished:
//! `finished` is 0). The kernel keeps running: its launch (stream, params, the
//! channel's keep-alive) moves to the device's list of detached launches and is
//! freed only once its event says it ended, so it never touches freed memory. The
//! context stays usable, minus the SMs the kernel holds; a kernel written against
//! `gpuio.h` ends once its channel is closed (every call then returns
//! `-ESHUTDOWN`, every wait has a deadline). One that never ends holds its memory
//! until the process exits: dropping the device then leaks it rather than free
//! memory under a running kernel.
//!
//! Some driver calls wait until no kernel runs on the device. Measured on the
//! H100 while a kernel spun (`docs/validation.md`): `cuMemHostUnregister`,
//! `cuMemFreeHost` and `cuModuleLoadData` waited for it; `cuMemHostRegister`,
//! `cuMemHostAlloc`, pool allocation and free on a stream, stream creation and
//! launching another kernel did not. So the paths a running program takes avoid
//! the waiting ones: launches, `join`, device buffers and opening or closing
//! channels (registered memory is pooled, see [`crate::memory`]) never wait for
//! another kernel. What still waits: loading a module ([`CudaDevice::compile`],
//! and the conformance module on the first [`Device::launch`]) while any kernel
//! runs, and dropping the device (its registered chunks are unregistered then).
//!
//! **A kernel that traps** (illegal address, illegal instruction, `__trap()`) is
//! reported as [`DeviceError::Kernel`] with the driver's name and text for it. The
//! CUDA context is then lost for good: the driver answers every later call in it
//! with the same error (a "sticky" error). The device remembers that and refuses
//! later launches with the original error; frees fail (logged, memory leaked until
//! the process ends). The channel does not depend on the GPU to close: its shared
//! memory is host memory, its transport's host threads make no CUDA call, so
//! `Channel::close()` still drains what the kernel had submitted before it died and
//! reports `submitted = completed + failed` for it; requests the kernel never
//! submitted are simply absent. A new `CudaDevice` after every user of the old
//! context is gone gets a fresh context.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use gpuio_core::memory::LocalMemory;
use gpuio_core::transport::Backoff;
use gpuio_core::{Channel, KeepAlive, MemoryProvider};
use gpuio_device::{CopyBandwidth, Device, DeviceBuffer, DeviceError, Module, RunningKernel};

use crate::memory::{CudaMemory, DeviceAlloc, PinnedBuffer};
use crate::nvrtc::{self, Arch, Compiler, ImageKind, KernelImage};
use crate::sys::{self, Attribute, Call, CudaError};

fn dev_err(e: CudaError) -> DeviceError {
    DeviceError::Driver {
        call: e.call,
        message: format!("{}: {}", e.name, e.text),
    }
}

/// Opens the primary context of GPU `ordinal` (after checking libcuda is there).
pub fn open_context(ordinal: usize) -> Result<Arc<CudaContext>, CudaError> {
    if let Err(e) = sys::driver() {
        return Err(CudaError {
            call: "dlopen",
            code: 0,
            name: "library".into(),
            text: e.to_string(),
        });
    }
    let ctx = CudaContext::new(ordinal).call("cuDevicePrimaryCtxRetain")?;
    // SAFETY: gpuio creates no CudaSlice in this context (its memory owners are its
    // own), so there is nothing for cudarc's per-slice event tracking to track; with
    // it off, creating a stream never synchronises the context (which would wait
    // for a kernel that hangs).
    unsafe { ctx.disable_event_tracking() };
    Ok(ctx)
}

/// Bytes of CUDA's device-side printf buffer reserved per line printed by
/// [`Device::native_printf`] (a record holds the format's address and every
/// argument, 8-byte aligned, and a header; the bench's lines take about 100).
pub const PRINTF_RECORD: u64 = 256;
/// The least the printf buffer is made (CUDA's default is 1 MiB).
pub const PRINTF_FIFO_MIN: usize = 128 << 20;

/// A module of kernels loaded in the device's context: one loaded module per program
/// compiled (the built-in kernels come in parts), a kernel looked up in each, and
/// beside them the small-block build of the same programs (see [`SMALL_BLOCK`]).
#[derive(Debug)]
pub struct KernelModule {
    /// Built for blocks of up to 1024 threads (or the file's own `GPUIO_MAX_BLOCK`).
    modules: Vec<Arc<CudaModule>>,
    /// Built with `GPUIO_MAX_BLOCK` = [`SMALL_BLOCK`], for launches of blocks that
    /// small ([`CudaDevice::launch_build`]). Empty where the file bounds its blocks
    /// itself, where [`SMALL_BLOCK_ENV`] turns the build off, or where it failed (a
    /// warning).
    small: Vec<Arc<CudaModule>>,
    /// `sm_90`, or `compute_89` for PTX the driver compiled.
    pub target: String,
    pub kind: ImageKind,
    /// Came from the on-disk cache.
    pub cached: bool,
}

/// Blocks of at most this many threads launch from a second build of the kernel
/// file, compiled with `GPUIO_MAX_BLOCK` defined to it: up to 255 registers a thread
/// rather than the 64 that a kernel able to run 1024-thread blocks is held to, which
/// shortens every call (`gpuio/arch.h` has the figures) — where the whole grid is
/// resident with it at once, so that the extra registers cost the launch no
/// concurrency ([`CudaDevice::launch_build`]). Made for every file that does not name
/// `GPUIO_MAX_BLOCK` itself; NVRTC compiles both builds at once.
pub const SMALL_BLOCK: u32 = 256;

/// `GPUIO_SMALL_BLOCK_BUILD=0` (or `off`): no small-block build; every launch runs
/// the one build for blocks of up to 1024 threads.
pub const SMALL_BLOCK_ENV: &str = "GPUIO_SMALL_BLOCK_BUILD";

/// Whether [`SMALL_BLOCK_ENV`] leaves the small-block build on (`value` is its value).
fn small_block_build_on(value: Option<&str>) -> bool {
    !matches!(value.map(str::trim), Some("0" | "off"))
}

/// Whether kernels compiled now get a small-block build ([`SMALL_BLOCK_ENV`]).
pub fn small_block_build_enabled() -> bool {
    small_block_build_on(std::env::var(SMALL_BLOCK_ENV).ok().as_deref())
}

/// The small-block build's source of `source`: `GPUIO_MAX_BLOCK` defined to
/// [`SMALL_BLOCK`] ahead of the file (its line numbers kept), or None where the file
/// names `GPUIO_MAX_BLOCK` itself, as a file that sets its own bound does.
fn small_block_source(source: &str) -> Option<String> {
    (!source.contains("GPUIO_MAX_BLOCK"))
        .then(|| format!("#define GPUIO_MAX_BLOCK {SMALL_BLOCK}\n#line 1\n{source}"))
}

/// A program to compile: its NVRTC name, its source, and whether it is a
/// small-block build.
struct Program {
    name: String,
    source: String,
    small: bool,
}

/// The programs that build `sources` (`(name, source)`): each file as it is, and
/// unless `small_on` is false its small-block build after it (so a file that does
/// not compile reports its own error, not the build's).
fn programs(sources: Vec<(String, String)>, small_on: bool) -> Vec<Program> {
    let mut out = Vec::with_capacity(sources.len() * 2);
    for (name, source) in sources {
        let small = small_on.then(|| small_block_source(&source)).flatten();
        let small_name = format!("{name} [GPUIO_MAX_BLOCK {SMALL_BLOCK}]");
        out.push(Program {
            name,
            source,
            small: false,
        });
        if let Some(source) = small {
            out.push(Program {
                name: small_name,
                source,
                small: true,
            });
        }
    }
    out
}

/// Programs the built-in kernels are compiled in (`kernels/conformance.h`, "Which
/// kernels this compile defines"), at once: NVRTC compiles a program on one core.
const CONFORMANCE_PARTS: u32 = 8;

/// Part `part` of `parts` of the built-in kernels' `source`: the defines that pick
/// its kernels (`kernels/conformance.h`), then the file.
fn part_source(source: &str, part: u32, parts: u32) -> String {
    format!("#define GPUIO_CONF_PARTS {parts}\n#define GPUIO_CONF_PART {part}\n{source}")
}

impl KernelModule {
    /// Kernel `name` from the first of `modules` that has it; None if none does.
    fn find(
        modules: &[Arc<CudaModule>],
        name: &str,
    ) -> Result<Option<CudaFunction>, cudarc::driver::DriverError> {
        for m in modules {
            match m.load_function(name) {
                Ok(f) => return Ok(Some(f)),
                Err(e) if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }
}

/// Which build of a kernel a launch runs, as the driver describes its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBuild {
    /// Launched from the small-block build ([`SMALL_BLOCK`]).
    pub small: bool,
    /// The most threads its blocks may have (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_block: u32,
    /// Registers a thread (`CU_FUNC_ATTRIBUTE_NUM_REGS`).
    pub registers: u32,
}

impl std::fmt::Display for LaunchBuild {
    /// "the small-block build (blocks of up to 256 threads), 126 registers a thread".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = if self.small {
            "the small-block build"
        } else {
            "the build"
        };
        write!(
            f,
            "{which} (blocks of up to {} threads), {} registers a thread",
            self.max_block, self.registers
        )
    }
}

/// A program loaded: its module and what it was compiled for.
struct Loaded {
    module: Arc<CudaModule>,
    target: String,
    kind: ImageKind,
    cached: bool,
}

/// A launch's resources, alive until its kernel is seen to end.
struct InFlight {
    name: String,
    event: cudarc::driver::CudaEvent,
    _stream: Arc<CudaStream>,
    _func: CudaFunction,
    params: DeviceAlloc,
    param_count: usize,
    _keep: KeepAlive,
}

impl InFlight {
    /// Ok(true) once the kernel ended, Ok(false) while it runs, Err if it failed.
    fn done(&self) -> Result<bool, CudaError> {
        sys::bind(self.event.context())?;
        self.event.try_is_complete().call("cuEventQuery")
    }
}

struct Inner {
    ctx: Arc<CudaContext>,
    memory: Arc<CudaMemory>,
    name: String,
    arch: Arch,
    /// Streaming multiprocessors.
    sms: u32,
    conformance: Mutex<Option<Arc<KernelModule>>>,
    detached: Mutex<Vec<InFlight>>,
    /// The device-side printf buffer's size, once [`Device::native_printf`] set it.
    printf_fifo: Mutex<Option<usize>>,
    /// The sticky error that lost the context, once seen.
    lost: Mutex<Option<CudaError>>,
}

impl Inner {
    fn check_lost(&self) -> Result<(), DeviceError> {
        match &*self.lost.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(DeviceError::Driver {
                call: e.call,
                message: format!(
                    "the CUDA context was lost earlier ({}: {}); close this device's channels and open a new device",
                    e.name, e.text
                ),
            }),
            None => Ok(()),
        }
    }

    fn note(&self, e: &CudaError) {
        if e.is_sticky() {
            let mut lost = self.lost.lock().unwrap_or_else(|p| p.into_inner());
            if lost.is_none() {
                tracing::error!(error = %e, "CUDA context lost");
                *lost = Some(e.clone());
            }
        }
    }

    /// Frees detached launches whose kernels have ended (or failed).
    fn reap(&self) {
        let mut d = self.detached.lock().unwrap_or_else(|e| e.into_inner());
        d.retain(|f| match f.done() {
            Ok(false) => true,
            Ok(true) => {
                tracing::info!(kernel = %f.name, "a timed-out kernel has ended");
                false
            }
            Err(e) => {
                self.note(&e);
                tracing::error!(kernel = %f.name, error = %e, "a timed-out kernel failed");
                false
            }
        });
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.reap();
        let d = std::mem::take(self.detached.get_mut().unwrap_or_else(|e| e.into_inner()));
        if !d.is_empty() {
            tracing::warn!(
                kernels = d.len(),
                "kernels still running at device drop: leaking their memory and channels until exit"
            );
            std::mem::forget(d);
        }
    }
}

/// An NVIDIA GPU running gpuio kernels.
#[derive(Clone)]
pub struct CudaDevice {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("name", &self.inner.name)
            .field("arch", &self.inner.arch)
            .finish()
    }
}

impl CudaDevice {
    /// Opens GPU `ordinal` (its primary context).
    pub fn new(ordinal: usize) -> Result<Self, DeviceError> {
        let ctx = open_context(ordinal).map_err(dev_err)?;
        let dev = ctx.cu_device();
        let name = sys::device_name(dev).map_err(dev_err)?;
        let arch = Arch {
            major: sys::device_attribute(
                dev,
                Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            )
            .map_err(dev_err)?,
            minor: sys::device_attribute(
                dev,
                Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
            .map_err(dev_err)?,
        };
        let sms = sys::device_attribute(dev, Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(dev_err)?;
        let memory = Arc::new(CudaMemory::new(ctx.clone()).map_err(dev_err)?);
        Ok(Self {
            inner: Arc::new(Inner {
                ctx,
                memory,
                name,
                arch,
                sms: u32::try_from(sms).unwrap_or(1).max(1),
                conformance: Mutex::new(None),
                detached: Mutex::new(Vec::new()),
                printf_fifo: Mutex::new(None),
                lost: Mutex::new(None),
            }),
        })
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    pub fn arch(&self) -> Arch {
        self.inner.arch
    }

    pub fn memory(&self) -> Arc<CudaMemory> {
        self.inner.memory.clone()
    }

    /// Kernels that timed out and are still running.
    pub fn detached(&self) -> usize {
        self.inner.reap();
        self.inner.detached.lock().map_or(0, |d| d.len())
    }

    /// The context's sticky error, if a kernel trapped.
    pub fn lost(&self) -> Option<CudaError> {
        self.inner.lost.lock().ok().and_then(|l| l.clone())
    }

    /// Compiles `source` (which may `#include "gpuio.h"`) for this GPU and loads it,
    /// with its small-block build beside it ([`SMALL_BLOCK`]).
    pub fn compile(&self, name: &str, source: &str) -> Result<Arc<KernelModule>, DeviceError> {
        self.build(name, vec![(name.to_string(), source.to_string())], false)
            .map(Arc::new)
    }

    /// Compiles `sources` (`(name, source)`), each with its small-block build, each
    /// program on a thread of its own (NVRTC compiles a program on one core), and
    /// loads them as one module. `announce`: say so at `info` where any is not cached.
    fn build(
        &self,
        name: &str,
        sources: Vec<(String, String)>,
        announce: bool,
    ) -> Result<KernelModule, DeviceError> {
        self.inner.check_lost()?;
        let programs = programs(sources, small_block_build_enabled());
        if announce {
            if let Ok(compiler) = Compiler::new() {
                let to_compile = programs
                    .iter()
                    .filter(|p| !compiler.is_cached(&p.name, &p.source, self.inner.arch))
                    .count();
                if to_compile > 0 {
                    tracing::info!(
                        "compiling gpuio's built-in kernels for this GPU: {to_compile} NVRTC \
                         programs at once (cached after, until the header changes)"
                    );
                }
            }
        }
        let loaded = std::thread::scope(|scope| {
            let compiles: Vec<_> = programs
                .iter()
                .map(|p| scope.spawn(move || self.compile_program(&p.name, &p.source)))
                .collect();
            compiles
                .into_iter()
                .map(|c| {
                    c.join().unwrap_or_else(|_| {
                        Err(DeviceError::Kernel {
                            kernel: name.to_string(),
                            message: "the compiling thread panicked".to_string(),
                        })
                    })
                })
                .collect::<Vec<_>>()
        });
        let (mut modules, mut small, mut cached) = (Vec::new(), Vec::new(), true);
        let mut target = None;
        for (program, result) in programs.iter().zip(loaded) {
            match result {
                Ok(l) => {
                    cached &= l.cached;
                    if program.small {
                        small.push(l.module);
                    } else {
                        target.get_or_insert((l.target, l.kind));
                        modules.push(l.module);
                    }
                }
                Err(e) if program.small => tracing::warn!(
                    program = %program.name,
                    error = %e,
                    "the small-block build failed; blocks of up to {SMALL_BLOCK} threads run \
                     the build for 1024"
                ),
                Err(e) => return Err(e),
            }
        }
        let (target, kind) = target.ok_or_else(|| DeviceError::Kernel {
            kernel: name.to_string(),
            message: "no programs to compile".to_string(),
        })?;
        Ok(KernelModule {
            modules,
            small,
            target,
            kind,
            cached,
        })
    }

    /// One program compiled for this GPU (or read from the cache) and loaded.
    fn compile_program(&self, name: &str, source: &str) -> Result<Loaded, DeviceError> {
        let compiler = Compiler::new().map_err(|e| DeviceError::Driver {
            call: "nvrtc",
            message: e.to_string(),
        })?;
        let compile = || {
            compiler
                .compile(name, source, self.inner.arch)
                .map_err(|e| DeviceError::Kernel {
                    kernel: name.to_string(),
                    message: e.to_string(),
                })
        };
        let image = compile()?;
        match self.load(&image) {
            Ok(m) => Ok(m),
            Err(e) if image.cached => {
                // A stale or damaged cache file: compile afresh once.
                tracing::warn!(error = %e, "cached kernel image refused; recompiling");
                nvrtc::evict(&image);
                self.load(&compile()?).map_err(dev_err)
            }
            Err(e) => Err(dev_err(e)),
        }
    }

    fn load(&self, image: &KernelImage) -> Result<Loaded, CudaError> {
        let mut bytes = image.bytes.clone();
        if image.target.kind == ImageKind::Ptx && bytes.last() != Some(&0) {
            bytes.push(0);
        }
        sys::bind(&self.inner.ctx)?;
        let module = self
            .inner
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .call("cuModuleLoadData")?;
        Ok(Loaded {
            module,
            target: image.target.option.clone(),
            kind: image.target.kind,
            cached: image.cached,
        })
    }

    /// Sizes CUDA's printf buffer for `lines` lines (about [`PRINTF_RECORD`] bytes
    /// each, at least [`PRINTF_FIFO_MIN`]) unless it was sized already: the bytes
    /// needed and the buffer's size. CUDA fixes the size at the first kernel that
    /// prints, so only the first call sizes it.
    fn size_printf_fifo(&self, lines: u64) -> Result<(usize, usize), DeviceError> {
        let need = lines
            .saturating_mul(PRINTF_RECORD)
            .try_into()
            .unwrap_or(usize::MAX);
        let mut fifo = self
            .inner
            .printf_fifo
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        sys::bind(&self.inner.ctx).map_err(dev_err)?;
        let have = match *fifo {
            Some(have) => have,
            None => {
                // SAFETY: the context is current (bound above).
                if let Err(e) = unsafe { sys::ctx_set_printf_fifo(need.max(PRINTF_FIFO_MIN)) } {
                    tracing::warn!(error = %e, "the printf buffer keeps its size; lines may be dropped");
                }
                // SAFETY: as above.
                let have = unsafe { sys::ctx_printf_fifo() }.map_err(dev_err)?;
                *fifo = Some(have);
                have
            }
        };
        Ok((need, have))
    }

    /// The conformance kernels (`kernels/conformance.h`), compiled and loaded once.
    pub fn conformance(&self) -> Result<Arc<KernelModule>, DeviceError> {
        let mut slot = self
            .inner
            .conformance
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(m) = &*slot {
            return Ok(m.clone());
        }
        let m = Arc::new(self.compile_parts(
            "gpuio_conformance",
            gpuio_device::header::KERNELS_SOURCE,
            CONFORMANCE_PARTS,
        )?);
        *slot = Some(m.clone());
        Ok(m)
    }

    /// Compiles `source` as `parts` programs (and their small-block builds) at once,
    /// program i with `GPUIO_CONF_PARTS` = `parts` and `GPUIO_CONF_PART` = i defined
    /// ahead of it (the file defines in each the kernels of that part), and loads
    /// them as one module.
    fn compile_parts(
        &self,
        name: &str,
        source: &str,
        parts: u32,
    ) -> Result<KernelModule, DeviceError> {
        let sources: Vec<(String, String)> = (0..parts)
            .map(|i| {
                (
                    format!("{name}_{i}_of_{parts}.cu"),
                    part_source(source, i, parts),
                )
            })
            .collect();
        self.build(name, sources, true)
    }

    /// The build of kernel `name` that a launch of `grid` blocks of `block` threads
    /// runs: the small-block build ([`SMALL_BLOCK`]) where the blocks are that small
    /// and the whole grid is resident with it at once (so its extra registers cost
    /// the launch no concurrency), else the build for 1024 (or the file's bound).
    pub fn launch_build(
        &self,
        module: &KernelModule,
        name: &str,
        grid: u32,
        block: u32,
    ) -> Result<LaunchBuild, DeviceError> {
        self.inner.check_lost()?;
        self.launch_function(module, name, grid, block)
            .map(|(_, build)| build)
    }

    /// Kernel `name` as a launch of `grid` × `block` runs it (see
    /// [`CudaDevice::launch_build`]).
    fn launch_function(
        &self,
        module: &KernelModule,
        name: &str,
        grid: u32,
        block: u32,
    ) -> Result<(CudaFunction, LaunchBuild), DeviceError> {
        if name.contains('\0') {
            return Err(DeviceError::NoSuchKernel(name.to_string()));
        }
        let note = |e: CudaError| {
            self.inner.note(&e);
            dev_err(e)
        };
        sys::bind(&self.inner.ctx).map_err(note)?;
        let find = |modules: &[Arc<CudaModule>]| {
            KernelModule::find(modules, name)
                .map_err(|e| note(CudaError::new("cuModuleGetFunction", e)))
        };
        let (grid, block) = (grid.max(1), block.max(1));
        let mut small = None;
        if block <= SMALL_BLOCK {
            if let Some(f) = find(&module.small)? {
                let per_sm = f
                    .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
                    .call("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags")
                    .map_err(note)?;
                if u64::from(grid) <= u64::from(self.inner.sms) * u64::from(per_sm) {
                    small = Some(f);
                }
            }
        }
        let is_small = small.is_some();
        let func = match small {
            Some(f) => f,
            None => {
                find(&module.modules)?.ok_or_else(|| DeviceError::NoSuchKernel(name.to_string()))?
            }
        };
        // A kernel file may bound its blocks below 1024 threads (GPUIO_MAX_BLOCK in
        // gpuio/arch.h) for more registers a thread, as the small-block build does.
        let max_block = func
            .get_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )
            .call("cuFuncGetAttribute")
            .map_err(note)?;
        let registers = func.num_regs().call("cuFuncGetAttribute").map_err(note)?;
        let build = LaunchBuild {
            small: is_small,
            max_block: u32::try_from(max_block).unwrap_or(0),
            registers: u32::try_from(registers).unwrap_or(0),
        };
        Ok((func, build))
    }

    /// Starts `grid × block` threads of kernel `name` from `module` on `channel`.
    pub fn launch_in(
        &self,
        module: &KernelModule,
        name: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<CudaLaunch, DeviceError> {
        self.inner.check_lost()?;
        self.inner.reap();
        // Binds the context, which the calls below need.
        let (func, build) = self.launch_function(module, name, grid, block)?;
        let max_block = build.max_block;
        let note = |e: CudaError| {
            self.inner.note(&e);
            dev_err(e)
        };
        if block.max(1) > max_block {
            return Err(DeviceError::Kernel {
                kernel: name.to_string(),
                message: format!(
                    "blocks of {block} threads asked for, but this kernel takes at most \
                     {max_block} (GPUIO_MAX_BLOCK where its file defines one, else the \
                     registers it needs)"
                ),
            });
        }
        let param_count = params.len().max(1);
        let p = DeviceAlloc::zeroed(self.inner.memory.copy_stream(), param_count * 8)?;
        let bytes: Vec<u8> = params.iter().flat_map(|v| v.to_ne_bytes()).collect();
        p.write(0, &bytes)?;
        let stream = self
            .inner
            .ctx
            .new_stream()
            .call("cuStreamCreate")
            .map_err(note)?;
        let desc = channel.device_ptr();
        let params_ptr = p.device_addr();
        let cfg = LaunchConfig {
            grid_dim: (grid.max(1), 1, 1),
            block_dim: (block.max(1), 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&func);
        b.arg(&desc).arg(&params_ptr);
        // SAFETY: every gpuio kernel has the signature `(const gpuio_channel *,
        // gpuio_u64 *)`: two 8-byte arguments, passed here as u64 device addresses.
        // The descriptor's memory is kept alive by the channel's keep-alive and the
        // params by `p`, both held in the returned launch until the kernel is seen
        // to end (or, on timeout, in the device's detached list).
        unsafe { b.launch(cfg) }
            .call("cuLaunchKernel")
            .map_err(note)?;
        let event = stream
            .record_event(None)
            .call("cuEventRecord")
            .map_err(note)?;
        tracing::debug!(
            kernel = name,
            grid,
            block,
            small_block_build = build.small,
            "launched"
        );
        Ok(CudaLaunch {
            inner: self.inner.clone(),
            build,
            threads: grid.max(1) as usize * block.max(1) as usize,
            started: Instant::now(),
            flight: Some(InFlight {
                name: name.to_string(),
                event,
                _stream: stream,
                _func: func,
                params: p,
                param_count: params.len(),
                _keep: channel.keepalive(),
            }),
        })
    }
}

/// A kernel in flight on a [`CudaDevice`].
pub struct CudaLaunch {
    inner: Arc<Inner>,
    build: LaunchBuild,
    threads: usize,
    started: Instant,
    flight: Option<InFlight>,
}

impl CudaLaunch {
    /// Waits up to `timeout` for the kernel; returns the params as it left them.
    pub fn join(mut self, timeout: Duration) -> Result<Vec<u64>, DeviceError> {
        let Some(f) = self.flight.take() else {
            return Err(DeviceError::Kernel {
                kernel: String::new(),
                message: "already joined".into(),
            });
        };
        let start = Instant::now();
        let mut backoff = Backoff::new(Duration::from_millis(1));
        loop {
            match f.done() {
                Ok(true) => break,
                Ok(false) if start.elapsed() >= timeout => {
                    let kernel = f.name.clone();
                    self.inner
                        .detached
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(f);
                    return Err(DeviceError::Timeout {
                        kernel,
                        threads: self.threads,
                        finished: 0,
                        waited: start.elapsed(),
                    });
                }
                Ok(false) => {
                    backoff.idle();
                }
                Err(e) => {
                    self.inner.note(&e);
                    let lost = if e.is_sticky() {
                        "; the CUDA context is lost: later calls on this device fail, channels still close"
                    } else {
                        ""
                    };
                    return Err(DeviceError::Kernel {
                        kernel: f.name.clone(),
                        message: format!(
                            "{}: {} (after {:?}){lost}",
                            e.name,
                            e.text,
                            self.started.elapsed()
                        ),
                    });
                }
            }
        }
        let mut bytes = vec![0u8; f.param_count * 8];
        f.params.read(0, &mut bytes)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    }
}

impl Drop for CudaLaunch {
    fn drop(&mut self) {
        // Dropped without join: never free what a running kernel may touch.
        if let Some(f) = self.flight.take() {
            if matches!(f.done(), Ok(false)) {
                self.inner
                    .detached
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(f);
            }
        }
    }
}

impl RunningKernel for CudaLaunch {
    fn join(self: Box<Self>, timeout: Duration) -> Result<Vec<u64>, DeviceError> {
        CudaLaunch::join(*self, timeout)
    }
    fn describe(&self) -> Option<String> {
        Some(self.build.to_string())
    }
}

/// Device memory as a kernel buffer.
struct CudaBuffer(DeviceAlloc);

impl DeviceBuffer for CudaBuffer {
    fn device_addr(&self) -> u64 {
        self.0.device_addr()
    }
    fn len(&self) -> usize {
        LocalMemory::len(&self.0)
    }
    fn download(&self, out: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.0.read(0, out)?)
    }
}

/// A module loaded on a [`CudaDevice`], as the device role hands it out.
struct LoadedModule {
    device: CudaDevice,
    module: Arc<KernelModule>,
}

impl Module for LoadedModule {
    fn launch(
        &self,
        kernel: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError> {
        Ok(Box::new(self.device.launch_in(
            &self.module,
            kernel,
            grid,
            block,
            channel,
            params,
        )?))
    }
}

impl Device for CudaDevice {
    fn name(&self) -> String {
        format!("{} ({})", self.inner.name, self.inner.arch)
    }
    fn provider(&self) -> Arc<dyn MemoryProvider> {
        self.inner.memory.clone()
    }
    fn full_shape(&self) -> (u32, u32) {
        (self.inner.sms, 1024)
    }
    fn buffer(&self, len: usize, bytes: &[u8]) -> Result<Box<dyn DeviceBuffer>, DeviceError> {
        self.inner.check_lost()?;
        let a = DeviceAlloc::zeroed(self.inner.memory.copy_stream(), len.max(bytes.len()))?;
        if !bytes.is_empty() {
            a.write(0, bytes)?;
        }
        Ok(Box::new(CudaBuffer(a)))
    }
    /// `cuMemcpyDtoH` / `cuMemcpyHtoD` (asynchronous copy, then a synchronisation
    /// of its stream, timed together) between device memory and pinned host memory.
    fn copy_bandwidth(&self, bytes: usize, tries: u32) -> Result<CopyBandwidth, DeviceError> {
        self.inner.check_lost()?;
        let dev = DeviceAlloc::zeroed(self.inner.memory.copy_stream(), bytes)?;
        let mut host = PinnedBuffer::new(&self.inner.ctx, bytes, 0x5a)?;
        dev.write(0, host.as_slice())?; // untimed: the first copies set up mappings
        dev.read(0, host.as_mut_slice())?;
        let mut best = [f64::MAX; 2];
        for _ in 0..tries.max(1) {
            let start = Instant::now();
            dev.read(0, host.as_mut_slice())?;
            best[0] = best[0].min(start.elapsed().as_secs_f64());
            let start = Instant::now();
            dev.write(0, host.as_slice())?;
            best[1] = best[1].min(start.elapsed().as_secs_f64());
        }
        Ok(CopyBandwidth {
            how: "pinned cuMemcpyDtoH / cuMemcpyHtoD",
            bytes: dev.len(),
            device_to_host: dev.len() as f64 / best[0].max(1e-9),
            host_to_device: dev.len() as f64 / best[1].max(1e-9),
        })
    }
    fn native_printf_name(&self) -> &'static str {
        "CUDA device printf"
    }
    /// Sizes CUDA's printf buffer for `lines` lines (about [`PRINTF_RECORD`] bytes
    /// each, at least [`PRINTF_FIFO_MIN`]) if no printing kernel ran yet; CUDA fixes
    /// its size from then on.
    fn reserve_native_printf(&self, lines: u64) -> Result<(), DeviceError> {
        self.inner.check_lost()?;
        self.size_printf_fifo(lines).map(drop)
    }
    /// CUDA's `printf` keeps lines in a device buffer until a synchronisation; lines
    /// that do not fit are dropped. Before the first such kernel the buffer is made
    /// room for every line (about [`PRINTF_RECORD`] bytes each, at least
    /// [`PRINTF_FIFO_MIN`]); CUDA fixes its size from then on. The kernel is
    /// joined and the context synchronised, which writes the lines to `stdout`.
    fn native_printf(
        &self,
        grid: u32,
        block: u32,
        lines: u64,
        channel: &Channel,
    ) -> Result<(), DeviceError> {
        self.inner.check_lost()?;
        let (need, have) = self.size_printf_fifo(u64::from(grid) * u64::from(block) * lines)?;
        if have < need {
            tracing::warn!(
                need,
                have,
                "the printf buffer is smaller than the lines; some may be dropped"
            );
        }
        let m = self.conformance()?;
        let run = self.launch_in(
            &m,
            "gpuio_k_native_printf",
            grid,
            block,
            channel,
            &[lines, 0, 0],
        )?;
        run.join(Duration::from_secs(300))?;
        sys::bind(&self.inner.ctx).map_err(dev_err)?;
        // SAFETY: the context is current (bound above).
        unsafe { sys::ctx_synchronize() }.map_err(|e| {
            self.inner.note(&e);
            dev_err(e)
        })
    }
    fn load(&self, name: &str, source: &str) -> Result<Arc<dyn Module>, DeviceError> {
        Ok(Arc::new(LoadedModule {
            device: self.clone(),
            module: self.compile(name, source)?,
        }))
    }
    fn launch(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError> {
        let m = self.conformance()?;
        let entry = gpuio_device::kernels::entry_name(name);
        Ok(Box::new(
            self.launch_in(&m, &entry, grid, block, channel, params)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{
        part_source, programs, small_block_build_on, small_block_source, LaunchBuild,
        CONFORMANCE_PARTS, SMALL_BLOCK,
    };
    use std::io::Write as _;
    use std::process::Stdio;

    /// The built-in kernels' file as part `part` of [`CONFORMANCE_PARTS`], as the
    /// host's C++ compiler preprocesses the source NVRTC is given.
    fn preprocessed_part(cxx: &gpuio_device::cpu::Cxx, part: u32) -> String {
        let source = part_source(
            gpuio_device::header::KERNELS_SOURCE,
            part,
            CONFORMANCE_PARTS,
        );
        preprocessed(cxx, &source)
    }

    /// `source` as the host's C++ compiler preprocesses it against `gpuio.h`.
    fn preprocessed(cxx: &gpuio_device::cpu::Cxx, source: &str) -> String {
        let mut child = cxx
            .command()
            .args(["-E", "-P", "-std=c++17", "-x", "c++", "-I"])
            .arg(gpuio_device::header::include_dir())
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run the C++ compiler");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(source.as_bytes())
            .expect("write the source");
        let out = child.wait_with_output().expect("preprocess");
        assert!(out.status.success(), "preprocessing failed");
        String::from_utf8(out.stdout).expect("UTF-8")
    }

    /// The host's C++ compiler; `None` (the test skips) without one, unless
    /// `GPUIO_REQUIRE` lists `cxx`.
    fn cxx() -> Option<gpuio_device::cpu::Cxx> {
        match gpuio_device::cpu::Cxx::from_env() {
            Ok(c) => Some(c),
            Err(e) => {
                let required = std::env::var("GPUIO_REQUIRE").unwrap_or_default();
                assert!(
                    !required.split(',').any(|p| p.trim() == "cxx"),
                    "GPUIO_REQUIRE lists cxx, but {e}"
                );
                eprintln!("skipped: Unsupported: cxx — {e}");
                None
            }
        }
    }

    /// Every part, preprocessed; `None` (the test skips) without a C++ compiler.
    fn preprocessed_parts() -> Option<Vec<String>> {
        let cxx = cxx()?;
        Some(
            (0..CONFORMANCE_PARTS)
                .map(|p| preprocessed_part(&cxx, p))
                .collect(),
        )
    }

    /// The part of `parts` that defines `kernel`, which must be exactly one.
    fn holder(parts: &[String], kernel: &str) -> usize {
        // A kernel's definition: its name, then its parameter list.
        let defined = format!("{kernel}(const gpuio_channel");
        let holders: Vec<usize> = parts
            .iter()
            .enumerate()
            .filter(|(_, text)| text.contains(&defined))
            .map(|(p, _)| p)
            .collect();
        assert_eq!(holders.len(), 1, "{kernel} is defined in parts {holders:?}");
        holders[0]
    }

    #[test]
    fn every_built_in_kernel_is_compiled_in_exactly_one_part() {
        let Some(parts) = preprocessed_parts() else {
            return;
        };
        let mut per_part = vec![0; parts.len()];
        for kernel in gpuio_device::kernels::ALL {
            per_part[holder(&parts, kernel.name())] += 1;
        }
        assert!(
            per_part.iter().all(|&n| n > 0),
            "a part without kernels (kernels per part: {per_part:?})"
        );
    }

    #[test]
    fn the_kernels_that_test_many_calls_compile_the_engines_out_of_line_and_the_rest_inline() {
        let Some(parts) = preprocessed_parts() else {
            return;
        };
        // Out of line, an engine is a function of its own (GPUIO_NOINLINE).
        let out_of_line: Vec<bool> = parts
            .iter()
            .map(|text| text.contains("noinline)) gpuio_i64 gpuio_impl_transfer("))
            .collect();
        let many_calls = [
            "gpuio_k_bad_input",
            "gpuio_k_beyond_access",
            "gpuio_k_null_channel",
            "gpuio_k_printf_limits",
            "gpuio_k_queue_misuse",
            "gpuio_k_rulebook",
        ];
        for kernel in gpuio_device::kernels::ALL {
            let name = kernel.name();
            assert_eq!(
                out_of_line[holder(&parts, name)],
                many_calls.contains(&name),
                "{name}: engines out of line in its part {out_of_line:?}"
            );
        }
    }

    #[test]
    fn the_small_block_build_bounds_every_kernel_to_its_blocks_and_the_file_as_it_is_to_1024() {
        let Some(cxx) = cxx() else {
            return;
        };
        // As NVRTC sees it: the header's CUDA side.
        let part = format!(
            "#define __CUDACC_RTC__ 1\n{}",
            part_source(gpuio_device::header::KERNELS_SOURCE, 0, CONFORMANCE_PARTS)
        );
        let small = small_block_source(&part).expect("the built-in kernels set no bound");
        let count =
            |text: &str, bound: u32| text.matches(&format!("__launch_bounds__({bound})")).count();
        let (wide, small) = (preprocessed(&cxx, &part), preprocessed(&cxx, &small));
        let kernels = wide.matches("(const gpuio_channel").count();
        assert!(kernels > 0, "part 0 defines no kernel");
        assert_eq!(count(&wide, 1024), count(&small, SMALL_BLOCK));
        assert!(count(&wide, 1024) > 0 && count(&wide, SMALL_BLOCK) == 0);
        assert_eq!(count(&small, 1024), 0);
    }

    #[test]
    fn a_file_that_names_its_own_bound_gets_no_small_block_build() {
        let own = "#define GPUIO_MAX_BLOCK 512\n#include \"gpuio.h\"\n";
        assert_eq!(small_block_source(own), None);
        let built = programs(vec![("own.cu".into(), own.into())], true);
        assert_eq!(built.len(), 1);
        assert!(!built[0].small);
    }

    #[test]
    fn each_file_compiles_before_its_small_block_build_which_keeps_its_line_numbers() {
        let file =
            "#include \"gpuio.h\"\nGPUIO_KERNEL(k)(const gpuio_channel *c, gpuio_u64 *p) {}\n";
        let built = programs(
            vec![("a.cu".into(), file.into()), ("b.cu".into(), file.into())],
            true,
        );
        let names: Vec<(&str, bool)> = built.iter().map(|p| (p.name.as_str(), p.small)).collect();
        assert_eq!(
            names,
            [
                ("a.cu", false),
                ("a.cu [GPUIO_MAX_BLOCK 256]", true),
                ("b.cu", false),
                ("b.cu [GPUIO_MAX_BLOCK 256]", true)
            ]
        );
        assert_eq!(built[0].source, file);
        assert_eq!(
            built[1].source,
            format!("#define GPUIO_MAX_BLOCK {SMALL_BLOCK}\n#line 1\n{file}")
        );
        let off = programs(vec![("a.cu".into(), file.into())], false);
        assert_eq!(off.len(), 1);
    }

    #[test]
    fn the_small_block_build_is_on_unless_its_variable_says_0_or_off() {
        assert!(small_block_build_on(None));
        assert!(small_block_build_on(Some("1")));
        assert!(!small_block_build_on(Some("0")));
        assert!(!small_block_build_on(Some(" off")));
    }

    #[test]
    fn a_launch_says_which_build_it_runs_and_its_registers_a_thread() {
        let small = LaunchBuild {
            small: true,
            max_block: SMALL_BLOCK,
            registers: 126,
        };
        assert_eq!(
            small.to_string(),
            "the small-block build (blocks of up to 256 threads), 126 registers a thread"
        );
        let wide = LaunchBuild {
            small: false,
            max_block: 1024,
            registers: 64,
        };
        assert_eq!(
            wide.to_string(),
            "the build (blocks of up to 1024 threads), 64 registers a thread"
        );
    }
}
