//! The CUDA driver and NVRTC, loaded at run time, every call checked.
//!
//! Layering, after cudarc: `cudarc::driver::sys` / `cudarc::nvrtc::sys` are the raw,
//! dynamically loaded FFI; `cudarc::*::result` checks some of it; this module is
//! the one place in this crate that calls either directly, and turns every failure
//! into a [`CudaError`] naming the call and carrying the driver's own name and text
//! for the code. The owners that free in `Drop` live in `memory`, `device` and
//! `nvrtc`, on top of this module and of cudarc's safe types.
//!
//! cudarc panics when a library or a symbol it needs is missing. [`driver`] and
//! [`nvrtc`] therefore look for the library first (`is_culib_present`) and then for
//! every symbol this crate reaches, so a machine without CUDA, or with an older
//! one, gets a reason instead of a panic. Nothing else in the crate may touch
//! cudarc before one of them said yes.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use cudarc::driver::{result as dr, sys as ds, DriverError};
use cudarc::nvrtc::sys as ns;

pub use ds::CUdevice_attribute as Attribute;

/// Why a CUDA library cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LibraryError {
    #[error("{library} not found — {hint}; tried: {}", tried.join(", "))]
    NotFound {
        library: &'static str,
        hint: &'static str,
        tried: Vec<String>,
    },
    #[error("{library} is too old for gpuio: it lacks {}", missing.join(", "))]
    MissingSymbols {
        library: &'static str,
        missing: Vec<&'static str>,
    },
}

/// Every driver entry point this crate reaches, through cudarc's safe and result
/// layers or directly. cudarc resolves each on first use and panics if it is absent.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventDestroy_v2",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuFuncGetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocAsync",
    "cuMemFreeAsync",
    "cuMemsetD8Async",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuStreamSynchronize",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemHostGetDevicePointer_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuCtxSetLimit",
    "cuCtxGetLimit",
    "cuCtxSynchronize",
];

/// Every NVRTC entry point this crate reaches.
const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetErrorString",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
];

/// Ok when `resolves` finds every one of `symbols` in `library`; which are missing
/// otherwise.
fn all_symbols(
    library: &'static str,
    symbols: &[&'static str],
    resolves: impl Fn(&str) -> bool,
) -> Result<(), LibraryError> {
    let missing: Vec<&'static str> = symbols.iter().copied().filter(|s| !resolves(s)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(LibraryError::MissingSymbols { library, missing })
    }
}

/// Ok once libcuda is loaded with every symbol gpuio needs; the reason otherwise.
/// Asks once per process.
pub fn driver() -> Result<(), LibraryError> {
    static ONCE: OnceLock<Result<(), LibraryError>> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: loading libcuda runs its initialisers, as every CUDA program does;
        // the probe loads and immediately drops the handle.
        if !unsafe { ds::is_culib_present() } {
            return Err(LibraryError::NotFound {
                library: "libcuda",
                hint: "install the NVIDIA driver (in a container: run it with the NVIDIA container toolkit, --gpus all)",
                tried: cudarc::get_lib_name_candidates("cuda"),
            });
        }
        // SAFETY: the library is present (checked above), so `culib` returns it
        // instead of panicking.
        let lib = unsafe { ds::culib() };
        // SAFETY: `get` only resolves an address; the pointer is never called.
        all_symbols("libcuda", DRIVER_SYMBOLS, |s| unsafe { lib.get::<*const c_void>(s) }.is_ok())
    })
    .clone()
}

/// Ok once libnvrtc is loaded with every symbol gpuio needs; the reason otherwise.
pub fn nvrtc() -> Result<(), LibraryError> {
    static ONCE: OnceLock<Result<(), LibraryError>> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: as in `driver`: loading runs the library's initialisers only.
        if !unsafe { ns::is_culib_present() } {
            return Err(LibraryError::NotFound {
                library: "libnvrtc",
                hint: "install the CUDA toolkit's NVRTC, or put its lib64 on LD_LIBRARY_PATH",
                tried: cudarc::get_lib_name_candidates("nvrtc"),
            });
        }
        // SAFETY: present (checked above), so `culib` does not panic.
        let lib = unsafe { ns::culib() };
        all_symbols("libnvrtc", NVRTC_SYMBOLS, |s| {
            // SAFETY: `get` only resolves an address; the pointer is never called.
            unsafe { lib.get::<*const c_void>(s) }.is_ok()
        })
    })
    .clone()
}

/// A failed driver call: which call, and what the driver said.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name}: {text}")]
pub struct CudaError {
    pub call: &'static str,
    /// The `CUresult` value.
    pub code: u32,
    /// The driver's name for it (`CUDA_ERROR_ILLEGAL_ADDRESS`).
    pub name: String,
    /// The driver's description.
    pub text: String,
}

impl CudaError {
    pub(crate) fn new(call: &'static str, e: DriverError) -> Self {
        let name = e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("CUresult {}", e.0 as u32));
        let text = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "no description".into());
        Self {
            call,
            code: e.0 as u32,
            name,
            text,
        }
    }

    /// The context is lost: a kernel trapped (illegal address, illegal instruction,
    /// assertion, ...), and every later call in this context fails with the same code.
    pub fn is_sticky(&self) -> bool {
        use ds::CUresult as R;
        [
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
            R::CUDA_ERROR_LAUNCH_FAILED,
            R::CUDA_ERROR_HARDWARE_STACK_ERROR,
            R::CUDA_ERROR_ILLEGAL_INSTRUCTION,
            R::CUDA_ERROR_MISALIGNED_ADDRESS,
            R::CUDA_ERROR_INVALID_ADDRESS_SPACE,
            R::CUDA_ERROR_INVALID_PC,
            R::CUDA_ERROR_ASSERT,
            R::CUDA_ERROR_ECC_UNCORRECTABLE,
        ]
        .iter()
        .any(|r| *r as u32 == self.code)
    }

    /// `CUDA_ERROR_NOT_READY`: asynchronous work still running (not a failure).
    pub fn is_not_ready(&self) -> bool {
        self.code == ds::CUresult::CUDA_ERROR_NOT_READY as u32
    }
}

/// Adds the call's name to a cudarc result.
pub(crate) trait Call<T> {
    fn call(self, name: &'static str) -> Result<T, CudaError>;
}

impl<T> Call<T> for Result<T, DriverError> {
    fn call(self, name: &'static str) -> Result<T, CudaError> {
        self.map_err(|e| CudaError::new(name, e))
    }
}

fn check(call: &'static str, r: ds::CUresult) -> Result<(), CudaError> {
    r.result().call(call)
}

// ------------------------------------------------------------------ driver

/// `cuInit(0)`. Call only after [`driver`] said yes.
pub fn init() -> Result<(), CudaError> {
    dr::init().call("cuInit")
}

/// Makes `ctx` current on the calling thread (every raw call below needs one).
/// Unlike cudarc's `bind_to_thread`, this does not first return (and clear) an
/// error some earlier `Drop` recorded in the context.
pub fn bind(ctx: &cudarc::driver::CudaContext) -> Result<(), CudaError> {
    // SAFETY: `ctx` is alive (borrowed), so its handle is a live context.
    unsafe { dr::ctx::set_current(ctx.cu_ctx()) }.call("cuCtxSetCurrent")
}

/// The driver's CUDA version, e.g. 13000 for 13.0.
pub fn driver_version() -> Result<i32, CudaError> {
    let mut v: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    check("cuDriverGetVersion", unsafe {
        ds::cuDriverGetVersion(&mut v)
    })?;
    Ok(v)
}

pub fn device_count() -> Result<i32, CudaError> {
    dr::device::get_count().call("cuDeviceGetCount")
}

pub fn device(ordinal: i32) -> Result<ds::CUdevice, CudaError> {
    dr::device::get(ordinal).call("cuDeviceGet")
}

pub fn device_name(dev: ds::CUdevice) -> Result<String, CudaError> {
    dr::device::get_name(dev).call("cuDeviceGetName")
}

pub fn device_attribute(dev: ds::CUdevice, attr: Attribute) -> Result<i32, CudaError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call writes one int.
    unsafe { dr::device::get_attribute(dev, attr) }.call("cuDeviceGetAttribute")
}

/// Flags for [`mem_host_register`]: visible to every context, mapped into the
/// device's address space.
pub const HOST_REGISTER_MAPPED: c_uint =
    ds::CU_MEMHOSTREGISTER_DEVICEMAP | ds::CU_MEMHOSTREGISTER_PORTABLE;
/// Flags for [`mem_host_alloc`]: as above. Never write-combined: the host polls it.
pub const HOST_ALLOC_MAPPED: c_uint = ds::CU_MEMHOSTALLOC_DEVICEMAP | ds::CU_MEMHOSTALLOC_PORTABLE;
/// Flags for [`mem_host_alloc`]: plain page-locked memory, what `cudaMallocHost`
/// gives and what copies between host and device run fastest from.
pub const HOST_ALLOC_PINNED: c_uint = 0;

/// Page-locks `len` bytes at `ptr` and maps them for the device.
///
/// # Safety
/// 1. A context is current on this thread.
/// 2. `ptr .. ptr + len` is a live mapping owned by the caller that outlives the
///    registration (undo it with [`mem_host_unregister`] before unmapping).
pub unsafe fn mem_host_register(ptr: *mut u8, len: usize, flags: c_uint) -> Result<(), CudaError> {
    // SAFETY: preconditions 1 and 2 are the driver's.
    check("cuMemHostRegister", unsafe {
        ds::cuMemHostRegister_v2(ptr.cast(), len, flags)
    })
}

/// Undoes [`mem_host_register`].
///
/// # Safety
/// 1. A context is current on this thread.
/// 2. `ptr` was registered by [`mem_host_register`] and no kernel still uses it.
pub unsafe fn mem_host_unregister(ptr: *mut u8) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    check("cuMemHostUnregister", unsafe {
        ds::cuMemHostUnregister(ptr.cast())
    })
}

/// The device address of mapped host memory.
///
/// # Safety
/// 1. A context is current on this thread.
/// 2. `ptr` lies in memory registered with, or allocated by, the driver as mapped.
pub unsafe fn mem_host_device_pointer(ptr: *mut u8) -> Result<u64, CudaError> {
    let mut d: ds::CUdeviceptr = 0;
    // SAFETY: the caller's preconditions; the call writes one device pointer.
    check("cuMemHostGetDevicePointer", unsafe {
        ds::cuMemHostGetDevicePointer_v2(&mut d, ptr.cast(), 0)
    })?;
    Ok(d)
}

/// Page-locked host memory allocated by the driver.
///
/// # Safety
/// 1. A context is current on this thread.
/// 2. The result is freed with [`mem_free_host`] only.
pub unsafe fn mem_host_alloc(len: usize, flags: c_uint) -> Result<*mut u8, CudaError> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: the call writes one pointer.
    check("cuMemHostAlloc", unsafe {
        ds::cuMemHostAlloc(&mut p, len, flags)
    })?;
    Ok(p.cast())
}

/// # Safety
/// 1. A context is current on this thread.
/// 2. `ptr` came from [`mem_host_alloc`], is freed once, and no kernel still uses it.
pub unsafe fn mem_free_host(ptr: *mut u8) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    check("cuMemFreeHost", unsafe { ds::cuMemFreeHost(ptr.cast()) })
}

/// `len` bytes of device memory (not zeroed), `cuMemAlloc`.
///
/// # Safety
/// A context is current on this thread; free the result with [`mem_free`].
pub unsafe fn mem_alloc(len: usize) -> Result<u64, CudaError> {
    // SAFETY: the caller's precondition.
    unsafe { dr::malloc_sync(len) }.call("cuMemAlloc")
}

/// # Safety
/// A context is current on this thread; `dptr` came from [`mem_alloc`], is freed
/// once, and no kernel still uses it.
pub unsafe fn mem_free(dptr: u64) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::free_sync(dptr) }.call("cuMemFree")
}

/// `len` bytes of device memory from the device's default pool, ordered on
/// `stream` (`cuMemAllocAsync`). Unlike `cuMemFree`, its free never waits for
/// kernels on other streams.
///
/// # Safety
/// A context is current on this thread; `stream` is a live stream of it; free the
/// result with [`mem_free_async`]; other streams use it only after `stream` has
/// reached the allocation (e.g. after [`stream_synchronize`]).
pub unsafe fn mem_alloc_async(len: usize, stream: ds::CUstream) -> Result<u64, CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::malloc_async(stream, len) }.call("cuMemAllocAsync")
}

/// # Safety
/// A context is current on this thread; `dptr` came from [`mem_alloc_async`], is
/// freed once, and no kernel still uses it.
pub unsafe fn mem_free_async(dptr: u64, stream: ds::CUstream) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::free_async(dptr, stream) }.call("cuMemFreeAsync")
}

/// # Safety
/// A context is current on this thread; `dptr .. dptr + len` is device memory the
/// caller owns; `stream` is a live stream of the context.
pub unsafe fn memset_d8_async(
    dptr: u64,
    value: u8,
    len: usize,
    stream: ds::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::memset_d8_async(dptr, value, len, stream) }.call("cuMemsetD8Async")
}

/// Copies `src` to device address `dst`, ordered on `stream`.
///
/// # Safety
/// A context is current on this thread; `dst .. dst + src.len()` is device memory
/// the caller owns; `src` stays untouched until `stream` is synchronised.
pub unsafe fn memcpy_htod_async(
    dst: u64,
    src: &[u8],
    stream: ds::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::memcpy_htod_async(dst, src, stream) }.call("cuMemcpyHtoDAsync")
}

/// Copies `dst.len()` bytes from device address `src`, ordered on `stream`.
///
/// # Safety
/// A context is current on this thread; `src .. src + dst.len()` is device memory
/// the caller owns; `dst` is not read until `stream` is synchronised.
pub unsafe fn memcpy_dtoh_async(
    dst: &mut [u8],
    src: u64,
    stream: ds::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::memcpy_dtoh_async(dst, src, stream) }.call("cuMemcpyDtoHAsync")
}

/// Waits for everything queued on `stream` (only: kernels on other non-blocking
/// streams are not waited for).
///
/// # Safety
/// A context is current on this thread; `stream` is a live stream of it.
pub unsafe fn stream_synchronize(stream: ds::CUstream) -> Result<(), CudaError> {
    // SAFETY: the caller's preconditions.
    unsafe { dr::stream::synchronize(stream) }.call("cuStreamSynchronize")
}

/// Makes the device-side `printf` buffer of the current context `bytes` long
/// (`cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE)`); lines that do not fit before the
/// next synchronisation are dropped by CUDA. The driver refuses a change once a
/// kernel that calls `printf` has run in the context.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn ctx_set_printf_fifo(bytes: usize) -> Result<(), CudaError> {
    dr::ctx::set_limit(ds::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE, bytes).call("cuCtxSetLimit")
}

/// The device-side `printf` buffer's size in the current context.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn ctx_printf_fifo() -> Result<usize, CudaError> {
    dr::ctx::get_limit(ds::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE).call("cuCtxGetLimit")
}

/// Waits for everything in the current context, and so flushes its device-side
/// `printf` buffer to the process's `stdout` stream (`cuCtxSynchronize`). Waits for
/// every running kernel: not for paths a running program takes.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn ctx_synchronize() -> Result<(), CudaError> {
    dr::ctx::synchronize().call("cuCtxSynchronize")
}

// ------------------------------------------------------------------- NVRTC

/// A failed NVRTC call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {text}")]
pub struct NvrtcCallError {
    pub call: &'static str,
    pub text: String,
}

fn nvrtc_check(call: &'static str, r: ns::nvrtcResult) -> Result<(), NvrtcCallError> {
    if r == ns::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: nvrtcGetErrorString returns a static string for any result value.
    let p = unsafe { ns::nvrtcGetErrorString(r) };
    let text = if p.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: non-null, NUL-terminated, static (NVRTC's own table).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    Err(NvrtcCallError { call, text })
}

/// NVRTC's version, `(major, minor)`. Call only after [`nvrtc`] said yes.
pub fn nvrtc_version() -> Result<(i32, i32), NvrtcCallError> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: writes two ints through valid pointers.
    nvrtc_check("nvrtcVersion", unsafe {
        ns::nvrtcVersion(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// The `sm_XY` architectures NVRTC can produce code for, as `10 * X + Y`.
pub fn nvrtc_supported_archs() -> Result<Vec<i32>, NvrtcCallError> {
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    nvrtc_check("nvrtcGetNumSupportedArchs", unsafe {
        ns::nvrtcGetNumSupportedArchs(&mut n)
    })?;
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    // SAFETY: `archs` holds exactly the count NVRTC just reported.
    nvrtc_check("nvrtcGetSupportedArchs", unsafe {
        ns::nvrtcGetSupportedArchs(archs.as_mut_ptr())
    })?;
    Ok(archs)
}

/// What one NVRTC compilation produced.
pub struct NvrtcOutput {
    /// Ok: the image (cubin, or PTX with its NUL); Err: what failed.
    pub result: Result<Vec<u8>, NvrtcCallError>,
    /// The compiler's log (warnings, or the errors).
    pub log: String,
}

/// Compiles `source` (named `name`) with in-memory `headers` (`(include name,
/// text)`) and `options`; returns the cubin when `cubin` is set, else PTX.
pub fn nvrtc_compile(
    name: &str,
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
    cubin: bool,
) -> NvrtcOutput {
    let fail = |call: &'static str, text: String| NvrtcOutput {
        result: Err(NvrtcCallError { call, text }),
        log: String::new(),
    };
    let cstr = |s: &str| CString::new(s).map_err(|_| format!("{s:.40}… contains a NUL byte"));
    let (src, pname) = match (cstr(source), cstr(name)) {
        (Ok(s), Ok(n)) => (s, n),
        (Err(e), _) | (_, Err(e)) => return fail("nvrtcCreateProgram", e),
    };
    let mut hdr_src = Vec::with_capacity(headers.len());
    let mut hdr_names = Vec::with_capacity(headers.len());
    for (n, s) in headers {
        match (cstr(s), cstr(n)) {
            (Ok(s), Ok(n)) => {
                hdr_src.push(s);
                hdr_names.push(n);
            }
            (Err(e), _) | (_, Err(e)) => return fail("nvrtcCreateProgram", e),
        }
    }
    let opts: Vec<CString> = match options.iter().map(|o| cstr(o)).collect() {
        Ok(o) => o,
        Err(e) => return fail("nvrtcCompileProgram", e),
    };
    let hdr_src_p: Vec<*const c_char> = hdr_src.iter().map(|s| s.as_ptr()).collect();
    let hdr_names_p: Vec<*const c_char> = hdr_names.iter().map(|s| s.as_ptr()).collect();
    let opts_p: Vec<*const c_char> = opts.iter().map(|s| s.as_ptr()).collect();

    let mut prog = MaybeUninit::<ns::nvrtcProgram>::uninit();
    // SAFETY: every pointer is a NUL-terminated string owned by a CString above that
    // outlives the program; the header arrays have `headers.len()` entries each.
    let created = nvrtc_check("nvrtcCreateProgram", unsafe {
        ns::nvrtcCreateProgram(
            prog.as_mut_ptr(),
            src.as_ptr(),
            pname.as_ptr(),
            hdr_src_p.len() as c_int,
            hdr_src_p.as_ptr(),
            hdr_names_p.as_ptr(),
        )
    });
    if let Err(e) = created {
        return NvrtcOutput {
            result: Err(e),
            log: String::new(),
        };
    }
    // SAFETY: nvrtcCreateProgram succeeded, so it wrote the handle.
    let mut prog = unsafe { prog.assume_init() };

    // SAFETY: `prog` is live; the option pointers outlive the call.
    let compiled = nvrtc_check("nvrtcCompileProgram", unsafe {
        ns::nvrtcCompileProgram(prog, opts_p.len() as c_int, opts_p.as_ptr())
    });
    // SAFETY: `prog` is live until destroyed below.
    let log = unsafe { program_log(prog) };
    let result = compiled.and_then(|()| {
        // SAFETY: `prog` is live and compiled.
        unsafe {
            if cubin {
                image(
                    prog,
                    ("nvrtcGetCUBINSize", ns::nvrtcGetCUBINSize),
                    ("nvrtcGetCUBIN", ns::nvrtcGetCUBIN),
                )
            } else {
                image(
                    prog,
                    ("nvrtcGetPTXSize", ns::nvrtcGetPTXSize),
                    ("nvrtcGetPTX", ns::nvrtcGetPTX),
                )
            }
        }
    });
    // SAFETY: `prog` was created above and is destroyed once.
    if let Err(e) = nvrtc_check("nvrtcDestroyProgram", unsafe {
        ns::nvrtcDestroyProgram(&mut prog)
    }) {
        tracing::warn!(error = %e, "leaking an NVRTC program");
    }
    NvrtcOutput { result, log }
}

type SizeFn = unsafe fn(ns::nvrtcProgram, *mut usize) -> ns::nvrtcResult;
type GetFn = unsafe fn(ns::nvrtcProgram, *mut c_char) -> ns::nvrtcResult;

/// # Safety
/// `prog` is a live, compiled program.
unsafe fn image(
    prog: ns::nvrtcProgram,
    size: (&'static str, SizeFn),
    get: (&'static str, GetFn),
) -> Result<Vec<u8>, NvrtcCallError> {
    let mut n = 0usize;
    // SAFETY: `prog` is live (caller); writes one size.
    nvrtc_check(size.0, unsafe { (size.1)(prog, &mut n) })?;
    let mut buf = vec![0u8; n];
    // SAFETY: `buf` holds the size NVRTC just reported.
    nvrtc_check(get.0, unsafe { (get.1)(prog, buf.as_mut_ptr().cast()) })?;
    Ok(buf)
}

/// # Safety
/// `prog` is a live program.
unsafe fn program_log(prog: ns::nvrtcProgram) -> String {
    let mut n = 0usize;
    // SAFETY: `prog` is live (caller); writes one size.
    if unsafe { ns::nvrtcGetProgramLogSize(prog, &mut n) } != ns::nvrtcResult::NVRTC_SUCCESS {
        return String::new();
    }
    let mut buf = vec![0u8; n];
    // SAFETY: `buf` holds the size NVRTC just reported.
    if unsafe { ns::nvrtcGetProgramLog(prog, buf.as_mut_ptr().cast()) }
        != ns::nvrtcResult::NVRTC_SUCCESS
    {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
}
