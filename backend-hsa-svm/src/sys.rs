//! Raw FFI to the HSA runtime (`libhsa-runtime64.so.1`), loaded at run time.
//!
//! Only what the probe needs. Constants are the values of ROCm's `hsa/hsa.h` and
//! `hsa/hsa_ext_amd.h`; each says which enum it belongs to. The library is opened
//! once per process ([`lib`]) and never unloaded: the runtime starts threads that
//! must not outlive its code. A missing library or symbol is an error value listing
//! what was tried, never a panic.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

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
