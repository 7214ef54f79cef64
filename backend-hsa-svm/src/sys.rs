//! Raw FFI to ROCm, loaded at run time: the HSA runtime (`libhsa-runtime64.so.1`),
//! hiprtc (the HIP run-time compiler) and comgr (the code object manager under it).
//!
//! Only what gpuio calls. Constants are the values of ROCm's `hsa/hsa.h`,
//! `hsa/hsa_ext_amd.h`, `hip/hiprtc.h` and `amd_comgr.h`; each says which enum it
//! belongs to. Each library is opened once per process ([`lib`], [`hiprtc_lib`],
//! [`comgr_lib`]) and never unloaded: the HSA runtime starts threads that must not
//! outlive its code, and hiprtc and comgr keep LLVM's global state. A missing
//! library or symbol is an error value listing what was tried, never a panic.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// `hsa_status_t` (a C enum).
pub type hsa_status_t = u32;
/// `HSA_STATUS_SUCCESS`.
pub const HSA_STATUS_SUCCESS: hsa_status_t = 0x0;
/// `HSA_STATUS_INFO_BREAK`: an iteration callback stopped the walk on purpose.
pub const HSA_STATUS_INFO_BREAK: hsa_status_t = 0x1;
/// `HSA_STATUS_ERROR`: generic error.
pub const HSA_STATUS_ERROR: hsa_status_t = 0x1000;
/// `HSA_STATUS_ERROR_OUT_OF_RESOURCES` (what `hsa_init` answers without a KFD).
pub const HSA_STATUS_ERROR_OUT_OF_RESOURCES: hsa_status_t = 0x1008;
/// `HSA_STATUS_ERROR_NOT_INITIALIZED`.
pub const HSA_STATUS_ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;

/// `hsa_agent_info_t::HSA_AGENT_INFO_NAME`: `char[64]`, NUL-terminated.
pub const HSA_AGENT_INFO_NAME: u32 = 0;
/// `hsa_agent_info_t::HSA_AGENT_INFO_DEVICE`: `hsa_device_type_t`.
pub const HSA_AGENT_INFO_DEVICE: u32 = 17;
/// `hsa_amd_agent_info_t::HSA_AMD_AGENT_INFO_PRODUCT_NAME`: `char[64]`.
pub const HSA_AMD_AGENT_INFO_PRODUCT_NAME: u32 = 0xA009;

/// `hsa_device_type_t::HSA_DEVICE_TYPE_CPU`.
pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
/// `hsa_device_type_t::HSA_DEVICE_TYPE_GPU`.
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;

/// `hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SEGMENT`: `hsa_amd_segment_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_SEGMENT: u32 = 0;
/// `hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS`: `uint32_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: u32 = 1;
/// `hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SIZE`: `size_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_SIZE: u32 = 2;

/// `hsa_amd_segment_t::HSA_AMD_SEGMENT_GLOBAL`.
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;

/// `hsa_amd_memory_pool_global_flag_t::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED`.
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
/// `hsa_amd_memory_pool_global_flag_t::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED`.
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

/// `hsa_agent_t`: an opaque handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hsa_agent_t {
    pub handle: u64,
}

/// `hsa_amd_memory_pool_t`: an opaque handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hsa_amd_memory_pool_t {
    pub handle: u64,
}

pub type AgentCallback =
    unsafe extern "C" fn(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t;
pub type PoolCallback =
    unsafe extern "C" fn(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t;

/// Names tried, in order, when no path is given in `GPUIO_HSA_LIB`.
pub const LIB_NAMES: &[&str] = &[
    "libhsa-runtime64.so.1",
    "libhsa-runtime64.so",
    "/opt/rocm/lib/libhsa-runtime64.so.1",
];

/// Environment variable naming the HSA runtime library to load instead.
pub const LIB_ENV: &str = "GPUIO_HSA_LIB";

/// Why a library could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate could be opened; each name with the loader's message, or, for a
    /// library that loaded but was passed over, the symbol it lacks.
    #[error("{what} was not found (tried {})", tried_list(.tried))]
    NotFound {
        /// What was looked for, in words ("the HSA runtime library").
        what: &'static str,
        tried: Vec<(String, String)>,
    },
    /// The library opened but lacks a function gpuio needs.
    #[error("{library} has no symbol {symbol} ({message}): it is not {what}, or too old")]
    MissingSymbol {
        what: &'static str,
        library: String,
        symbol: &'static str,
        message: String,
    },
}

/// Resolves `$sym` from `$library` (opened as `$name`) into the field it is
/// assigned to, or returns [`LoadError::MissingSymbol`].
macro_rules! load_sym {
    ($library:expr, $name:expr, $what:expr, $sym:literal) => {{
        // SAFETY: the symbol has the C signature of the field it is stored in
        // (declared from the library's header in this file); the library stays
        // loaded as long as the table that holds the pointer.
        let s = unsafe { $library.get(concat!($sym, "\0").as_bytes()) }.map_err(|e| {
            LoadError::MissingSymbol {
                what: $what,
                library: $name.to_string(),
                symbol: $sym,
                message: e.to_string(),
            }
        })?;
        *s
    }};
}

fn tried_list(tried: &[(String, String)]) -> String {
    tried
        .iter()
        .map(|(name, why)| format!("{name}: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The functions gpuio calls, resolved from one opened library.
pub struct Lib {
    /// Which name or path opened.
    pub name: String,
    pub hsa_init: unsafe extern "C" fn() -> hsa_status_t,
    pub hsa_shut_down: unsafe extern "C" fn() -> hsa_status_t,
    pub hsa_status_string:
        unsafe extern "C" fn(status: hsa_status_t, text: *mut *const c_char) -> hsa_status_t,
    pub hsa_iterate_agents:
        unsafe extern "C" fn(callback: AgentCallback, data: *mut c_void) -> hsa_status_t,
    pub hsa_agent_get_info: unsafe extern "C" fn(
        agent: hsa_agent_t,
        attribute: u32,
        value: *mut c_void,
    ) -> hsa_status_t,
    pub hsa_amd_agent_iterate_memory_pools: unsafe extern "C" fn(
        agent: hsa_agent_t,
        callback: PoolCallback,
        data: *mut c_void,
    ) -> hsa_status_t,
    pub hsa_amd_memory_pool_get_info: unsafe extern "C" fn(
        pool: hsa_amd_memory_pool_t,
        attribute: u32,
        value: *mut c_void,
    ) -> hsa_status_t,
    /// Keeps the code above mapped; never dropped when held by [`lib`].
    _library: libloading::Library,
}

impl std::fmt::Debug for Lib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lib").field("name", &self.name).finish()
    }
}

impl Lib {
    /// What [`LoadError`]s call it.
    pub const WHAT: &'static str = "the HSA runtime library";

    /// Opens the first of `names` that loads; it must resolve every symbol.
    pub fn open(names: &[&str]) -> Result<Lib, LoadError> {
        let mut tried = Vec::new();
        for &name in names {
            // SAFETY: loading the HSA runtime runs its ELF initialisers, which only set
            // up the runtime's own state; nothing else in this process depends on them.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => return Self::resolve(name, library),
                Err(e) => tried.push((name.to_string(), loader_message(name, &e))),
            }
        }
        Err(LoadError::NotFound {
            what: Self::WHAT,
            tried,
        })
    }

    fn resolve(name: &str, library: libloading::Library) -> Result<Lib, LoadError> {
        macro_rules! sym {
            ($sym:literal) => {
                load_sym!(library, name, Self::WHAT, $sym)
            };
        }
        Ok(Lib {
            name: name.to_string(),
            hsa_init: sym!("hsa_init"),
            hsa_shut_down: sym!("hsa_shut_down"),
            hsa_status_string: sym!("hsa_status_string"),
            hsa_iterate_agents: sym!("hsa_iterate_agents"),
            hsa_agent_get_info: sym!("hsa_agent_get_info"),
            hsa_amd_agent_iterate_memory_pools: sym!("hsa_amd_agent_iterate_memory_pools"),
            hsa_amd_memory_pool_get_info: sym!("hsa_amd_memory_pool_get_info"),
            _library: library,
        })
    }
}

/// Why a library that loaded was passed over, short (its name is already listed).
fn passed_over(e: &LoadError) -> String {
    match e {
        LoadError::MissingSymbol { symbol, .. } => format!("loads, but has no {symbol}"),
        LoadError::NotFound { .. } => e.to_string(),
    }
}

/// The loader's message without the library name it repeats (`dlerror` starts with it).
pub fn loader_message(name: &str, e: &libloading::Error) -> String {
    let text = e.to_string();
    text.strip_prefix(name)
        .and_then(|t| t.strip_prefix(": "))
        .map_or_else(|| text.clone(), str::to_string)
}

/// The names [`lib`] tries: `GPUIO_HSA_LIB` alone when set, else [`LIB_NAMES`].
pub fn lib_names() -> Vec<String> {
    names_from_env(LIB_ENV, LIB_NAMES)
}

/// The value of `env` alone when it is set and not empty, else `defaults`.
fn names_from_env(env: &str, defaults: &[&str]) -> Vec<String> {
    match std::env::var(env) {
        Ok(path) if !path.is_empty() => vec![path],
        _ => defaults.iter().map(|s| s.to_string()).collect(),
    }
}

/// The HSA runtime, opened on first use and kept for the life of the process.
pub fn lib() -> Result<&'static Lib, LoadError> {
    static LIB: OnceLock<Result<Lib, LoadError>> = OnceLock::new();
    LIB.get_or_init(|| {
        let names = lib_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Lib::open(&names)
    })
    .as_ref()
    .map_err(Clone::clone)
}

// ------------------------------------------------------------------ hiprtc

/// `hiprtcResult` (a C enum, `hip/hiprtc.h`).
pub type hiprtcResult = u32;
/// `HIPRTC_SUCCESS`.
pub const HIPRTC_SUCCESS: hiprtcResult = 0;
/// `HIPRTC_ERROR_INVALID_INPUT`.
pub const HIPRTC_ERROR_INVALID_INPUT: hiprtcResult = 3;
/// `HIPRTC_ERROR_COMPILATION`: the source did not compile; the program log says why.
pub const HIPRTC_ERROR_COMPILATION: hiprtcResult = 6;

/// `hiprtcProgram`: an opaque pointer (`struct _hiprtcProgram*`).
pub type hiprtcProgram = *mut c_void;

/// Names tried, in order, when no path is given in `GPUIO_HIPRTC_LIB`. ROCm 6 and
/// later ship hiprtc as `libhiprtc.so.N`; ROCm 5 has it inside the HIP runtime
/// `libamdhip64.so.5` (Debian's 5.2 only there). A library that opens but lacks the
/// hiprtc symbols (`libamdhip64.so.6`) is passed over.
pub const HIPRTC_LIB_NAMES: &[&str] = &[
    "libhiprtc.so.7",
    "libhiprtc.so.6",
    "libhiprtc.so.5",
    "libhiprtc.so",
    "libamdhip64.so.5",
    "libamdhip64.so",
    "/opt/rocm/lib/libhiprtc.so",
    "/opt/rocm/lib/libamdhip64.so",
];

/// Environment variable naming the library holding hiprtc to load instead.
pub const HIPRTC_LIB_ENV: &str = "GPUIO_HIPRTC_LIB";

/// The hiprtc functions gpuio calls, resolved from one opened library.
#[allow(non_snake_case)]
pub struct HiprtcLib {
    /// Which name or path opened.
    pub name: String,
    /// The file it was loaded from, symbolic links resolved, when the loader says.
    pub path: Option<PathBuf>,
    pub hiprtcVersion: unsafe extern "C" fn(major: *mut c_int, minor: *mut c_int) -> hiprtcResult,
    pub hiprtcGetErrorString: unsafe extern "C" fn(result: hiprtcResult) -> *const c_char,
    pub hiprtcCreateProgram: unsafe extern "C" fn(
        prog: *mut hiprtcProgram,
        src: *const c_char,
        name: *const c_char,
        num_headers: c_int,
        headers: *const *const c_char,
        include_names: *const *const c_char,
    ) -> hiprtcResult,
    pub hiprtcCompileProgram: unsafe extern "C" fn(
        prog: hiprtcProgram,
        num_options: c_int,
        options: *const *const c_char,
    ) -> hiprtcResult,
    pub hiprtcGetProgramLogSize:
        unsafe extern "C" fn(prog: hiprtcProgram, size: *mut usize) -> hiprtcResult,
    pub hiprtcGetProgramLog:
        unsafe extern "C" fn(prog: hiprtcProgram, log: *mut c_char) -> hiprtcResult,
    pub hiprtcGetCodeSize:
        unsafe extern "C" fn(prog: hiprtcProgram, size: *mut usize) -> hiprtcResult,
    pub hiprtcGetCode: unsafe extern "C" fn(prog: hiprtcProgram, code: *mut c_char) -> hiprtcResult,
    pub hiprtcDestroyProgram: unsafe extern "C" fn(prog: *mut hiprtcProgram) -> hiprtcResult,
    /// Never closed (see the module doc).
    _library: ManuallyDrop<libloading::Library>,
}

impl std::fmt::Debug for HiprtcLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HiprtcLib")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

impl HiprtcLib {
    /// What [`LoadError`]s call it.
    pub const WHAT: &'static str = "hiprtc (the HIP run-time compiler)";

    /// Opens the first of `names` that loads and resolves every symbol; libraries
    /// that load without them are tried past, and named with the missing symbol in
    /// [`LoadError::NotFound`].
    pub fn open(names: &[&str]) -> Result<HiprtcLib, LoadError> {
        let mut tried = Vec::new();
        for &name in names {
            // SAFETY: loading the HIP runtime or libhiprtc runs their ELF initialisers,
            // which set up only their own state (no thread, no device access until a
            // HIP call is made); nothing else in this process depends on them.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => match Self::resolve(name, library) {
                    Ok(lib) => return Ok(lib),
                    Err(e) => tried.push((name.to_string(), passed_over(&e))),
                },
                Err(e) => tried.push((name.to_string(), loader_message(name, &e))),
            }
        }
        Err(LoadError::NotFound {
            what: Self::WHAT,
            tried,
        })
    }

    fn resolve(name: &str, library: libloading::Library) -> Result<HiprtcLib, LoadError> {
        macro_rules! sym {
            ($sym:literal) => {
                load_sym!(library, name, Self::WHAT, $sym)
            };
        }
        let version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> hiprtcResult =
            sym!("hiprtcVersion");
        Ok(HiprtcLib {
            name: name.to_string(),
            path: loaded_from(version as *const c_void),
            hiprtcVersion: version,
            hiprtcGetErrorString: sym!("hiprtcGetErrorString"),
            hiprtcCreateProgram: sym!("hiprtcCreateProgram"),
            hiprtcCompileProgram: sym!("hiprtcCompileProgram"),
            hiprtcGetProgramLogSize: sym!("hiprtcGetProgramLogSize"),
            hiprtcGetProgramLog: sym!("hiprtcGetProgramLog"),
            hiprtcGetCodeSize: sym!("hiprtcGetCodeSize"),
            hiprtcGetCode: sym!("hiprtcGetCode"),
            hiprtcDestroyProgram: sym!("hiprtcDestroyProgram"),
            _library: ManuallyDrop::new(library),
        })
    }
}

/// The names [`hiprtc_lib`] tries: `GPUIO_HIPRTC_LIB` alone when set, else
/// [`HIPRTC_LIB_NAMES`].
pub fn hiprtc_lib_names() -> Vec<String> {
    names_from_env(HIPRTC_LIB_ENV, HIPRTC_LIB_NAMES)
}

/// hiprtc, opened on first use and kept for the life of the process.
pub fn hiprtc_lib() -> Result<Arc<HiprtcLib>, LoadError> {
    static LIB: OnceLock<Result<Arc<HiprtcLib>, LoadError>> = OnceLock::new();
    LIB.get_or_init(|| {
        let names = hiprtc_lib_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        HiprtcLib::open(&names).map(Arc::new)
    })
    .clone()
}

// ------------------------------------------------------------------- comgr

/// `amd_comgr_status_t` (a C enum, `amd_comgr.h`).
pub type amd_comgr_status_t = u32;
/// `AMD_COMGR_STATUS_SUCCESS`.
pub const AMD_COMGR_STATUS_SUCCESS: amd_comgr_status_t = 0;

/// Names tried, in order, for comgr, after the directory hiprtc was loaded from
/// (see [`comgr_lib`]). hiprtc aborts the process on an ISA comgr does not know
/// (ROCm 5.2 on `gfx940`), so gpuio asks comgr for its ISA list first.
pub const COMGR_LIB_NAMES: &[&str] = &[
    "libamd_comgr.so.3",
    "libamd_comgr.so.2",
    "libamd_comgr.so",
    "/opt/rocm/lib/libamd_comgr.so",
];

/// The comgr functions gpuio calls.
pub struct ComgrLib {
    /// Which name or path opened.
    pub name: String,
    pub amd_comgr_get_version: unsafe extern "C" fn(major: *mut usize, minor: *mut usize),
    pub amd_comgr_status_string: unsafe extern "C" fn(
        status: amd_comgr_status_t,
        text: *mut *const c_char,
    ) -> amd_comgr_status_t,
    pub amd_comgr_get_isa_count: unsafe extern "C" fn(count: *mut usize) -> amd_comgr_status_t,
    pub amd_comgr_get_isa_name:
        unsafe extern "C" fn(index: usize, name: *mut *const c_char) -> amd_comgr_status_t,
    /// Never closed (see the module doc).
    _library: ManuallyDrop<libloading::Library>,
}

impl std::fmt::Debug for ComgrLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComgrLib")
            .field("name", &self.name)
            .finish()
    }
}

impl ComgrLib {
    /// What [`LoadError`]s call it.
    pub const WHAT: &'static str = "comgr (the ROCm code object manager)";

    /// Opens the first of `names` that loads and resolves every symbol, as
    /// [`HiprtcLib::open`] does.
    pub fn open(names: &[&str]) -> Result<ComgrLib, LoadError> {
        let mut tried = Vec::new();
        for &name in names {
            // SAFETY: comgr's ELF initialisers register LLVM's targets and options in
            // its own statics; nothing else in this process depends on them.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => match Self::resolve(name, library) {
                    Ok(lib) => return Ok(lib),
                    Err(e) => tried.push((name.to_string(), passed_over(&e))),
                },
                Err(e) => tried.push((name.to_string(), loader_message(name, &e))),
            }
        }
        Err(LoadError::NotFound {
            what: Self::WHAT,
            tried,
        })
    }

    fn resolve(name: &str, library: libloading::Library) -> Result<ComgrLib, LoadError> {
        macro_rules! sym {
            ($sym:literal) => {
                load_sym!(library, name, Self::WHAT, $sym)
            };
        }
        Ok(ComgrLib {
            name: name.to_string(),
            amd_comgr_get_version: sym!("amd_comgr_get_version"),
            amd_comgr_status_string: sym!("amd_comgr_status_string"),
            amd_comgr_get_isa_count: sym!("amd_comgr_get_isa_count"),
            amd_comgr_get_isa_name: sym!("amd_comgr_get_isa_name"),
            _library: ManuallyDrop::new(library),
        })
    }
}

/// comgr, opened on first use and kept for the life of the process: first from the
/// directory hiprtc was loaded from (the copy hiprtc will use), then
/// [`COMGR_LIB_NAMES`].
pub fn comgr_lib() -> Result<&'static ComgrLib, LoadError> {
    static LIB: OnceLock<Result<ComgrLib, LoadError>> = OnceLock::new();
    LIB.get_or_init(|| {
        let mut names: Vec<String> = Vec::new();
        let hiprtc_path = hiprtc_lib().ok().and_then(|l| l.path.clone());
        if let Some(dir) = hiprtc_path.as_deref().and_then(|p| p.parent()) {
            for n in COMGR_LIB_NAMES.iter().filter(|n| !n.contains('/')) {
                names.push(dir.join(n).to_string_lossy().into_owned());
            }
        }
        names.extend(COMGR_LIB_NAMES.iter().map(|s| s.to_string()));
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        ComgrLib::open(&names)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The file the shared object holding `addr` was loaded from, symbolic links
/// resolved (`libamdhip64.so.5` → `…/libamdhip64.so.5.2.21153`, which names the
/// release).
fn loaded_from(addr: *const c_void) -> Option<PathBuf> {
    // SAFETY: all-zero is a valid Dl_info (null pointers); dladdr only writes it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `addr` is a function in a loaded library; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set dli_fname to the loader's NUL-terminated name of the object,
    // valid while it stays loaded (for ever, here); copied out at once.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let path = PathBuf::from(name);
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}
