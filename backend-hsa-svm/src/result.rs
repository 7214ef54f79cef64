//! Checked calls: every HSA call gpuio makes returns `Result<_, HsaError>`, every
//! hiprtc call `Result<_, HiprtcCallError>`, every comgr call `Result<_, ComgrError>`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::sys::{
    self, amd_comgr_status_t, hiprtcProgram, hiprtcResult, hsa_agent_t, hsa_amd_memory_pool_t,
    hsa_status_t, ComgrLib, HiprtcLib, Lib,
};

/// A failed HSA call: the call's name, its status and the runtime's own text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call}: {} ({status:#x}){}", status_name(*.status), text.as_deref().map(|t| format!(": {t}")).unwrap_or_default())]
pub struct HsaError {
    pub call: &'static str,
    pub status: hsa_status_t,
    /// What `hsa_status_string` says, when the runtime could say it.
    pub text: Option<String>,
}

/// The enum name of the statuses gpuio is likely to see.
pub fn status_name(status: hsa_status_t) -> &'static str {
    match status {
        sys::HSA_STATUS_SUCCESS => "HSA_STATUS_SUCCESS",
        sys::HSA_STATUS_INFO_BREAK => "HSA_STATUS_INFO_BREAK",
        sys::HSA_STATUS_ERROR => "HSA_STATUS_ERROR",
        0x1001 => "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        0x1004 => "HSA_STATUS_ERROR_INVALID_AGENT",
        sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES => "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        sys::HSA_STATUS_ERROR_NOT_INITIALIZED => "HSA_STATUS_ERROR_NOT_INITIALIZED",
        0x100C => "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
        0x1026 => "HSA_STATUS_ERROR_FATAL",
        _ => "HSA status",
    }
}

fn check(lib: &Lib, call: &'static str, status: hsa_status_t) -> Result<(), HsaError> {
    if status == sys::HSA_STATUS_SUCCESS {
        return Ok(());
    }
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: `text` is a valid out-pointer; the runtime stores a pointer to a static
    // NUL-terminated string there or leaves it null (before hsa_init it may refuse).
    let ok = unsafe { (lib.hsa_status_string)(status, &mut text) } == sys::HSA_STATUS_SUCCESS;
    let text = (ok && !text.is_null()).then(|| {
        // SAFETY: non-null and NUL-terminated per hsa_status_string's contract; copied
        // out at once.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .trim()
            .to_string()
    });
    Err(HsaError { call, status, text })
}

/// `hsa_init`: one reference on the runtime, dropped by [`shut_down`].
pub fn init(lib: &Lib) -> Result<(), HsaError> {
    // SAFETY: hsa_init takes no arguments and may be called at any time.
    check(lib, "hsa_init", unsafe { (lib.hsa_init)() })
}

/// `hsa_shut_down`: drops one reference taken by [`init`].
pub fn shut_down(lib: &Lib) -> Result<(), HsaError> {
    // SAFETY: called only after a successful `init`, once per init.
    check(lib, "hsa_shut_down", unsafe { (lib.hsa_shut_down)() })
}

/// Every agent, in the runtime's order. Needs an initialised runtime.
pub fn agents(lib: &Lib) -> Result<Vec<hsa_agent_t>, HsaError> {
    unsafe extern "C" fn push(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the `&mut Vec` passed below, alive for the whole walk and
        // touched by nothing else meanwhile (the walk is synchronous).
        let list = unsafe { &mut *data.cast::<Vec<hsa_agent_t>>() };
        list.push(agent);
        sys::HSA_STATUS_SUCCESS
    }
    let mut list: Vec<hsa_agent_t> = Vec::new();
    // SAFETY: `push` matches AgentCallback and never unwinds; `data` points to `list`.
    let status =
        unsafe { (lib.hsa_iterate_agents)(push, (&mut list as *mut Vec<hsa_agent_t>).cast()) };
    check(lib, "hsa_iterate_agents", status)?;
    Ok(list)
}

/// Every memory pool of `agent`. Needs an initialised runtime.
pub fn memory_pools(lib: &Lib, agent: hsa_agent_t) -> Result<Vec<hsa_amd_memory_pool_t>, HsaError> {
    unsafe extern "C" fn push(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: as in `agents`.
        let list = unsafe { &mut *data.cast::<Vec<hsa_amd_memory_pool_t>>() };
        list.push(pool);
        sys::HSA_STATUS_SUCCESS
    }
    let mut list: Vec<hsa_amd_memory_pool_t> = Vec::new();
    // SAFETY: `push` matches PoolCallback and never unwinds; `data` points to `list`.
    let status = unsafe {
        (lib.hsa_amd_agent_iterate_memory_pools)(
            agent,
            push,
            (&mut list as *mut Vec<hsa_amd_memory_pool_t>).cast(),
        )
    };
    check(lib, "hsa_amd_agent_iterate_memory_pools", status)?;
    Ok(list)
}

/// A `u32`-sized agent attribute (`HSA_AGENT_INFO_DEVICE`).
pub fn agent_u32(lib: &Lib, agent: hsa_agent_t, attribute: u32) -> Result<u32, HsaError> {
    let mut value: u32 = 0;
    // SAFETY: the attribute's type is a 32-bit enum/integer; `value` is large enough.
    let status =
        unsafe { (lib.hsa_agent_get_info)(agent, attribute, (&mut value as *mut u32).cast()) };
    check(lib, "hsa_agent_get_info", status)?;
    Ok(value)
}

/// A `char[64]` agent attribute (`HSA_AGENT_INFO_NAME`, product name).
pub fn agent_string(lib: &Lib, agent: hsa_agent_t, attribute: u32) -> Result<String, HsaError> {
    // One spare byte past the 64 the header promises, always NUL.
    let mut buf = [0u8; 65];
    // SAFETY: the attribute is a NUL-terminated char[64]; `buf` holds 65 bytes.
    let status = unsafe { (lib.hsa_agent_get_info)(agent, attribute, buf.as_mut_ptr().cast()) };
    check(lib, "hsa_agent_get_info", status)?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(64);
    Ok(String::from_utf8_lossy(&buf[..end]).trim().to_string())
}

/// A `u32`-sized pool attribute (segment, global flags).
pub fn pool_u32(lib: &Lib, pool: hsa_amd_memory_pool_t, attribute: u32) -> Result<u32, HsaError> {
    let mut value: u32 = 0;
    // SAFETY: the attribute's type is a 32-bit enum/bit-field; `value` is large enough.
    let status = unsafe {
        (lib.hsa_amd_memory_pool_get_info)(pool, attribute, (&mut value as *mut u32).cast())
    };
    check(lib, "hsa_amd_memory_pool_get_info", status)?;
    Ok(value)
}

/// A `size_t` pool attribute (size).
pub fn pool_usize(
    lib: &Lib,
    pool: hsa_amd_memory_pool_t,
    attribute: u32,
) -> Result<usize, HsaError> {
    let mut value: usize = 0;
    // SAFETY: the attribute's type is size_t; `value` is a usize.
    let status = unsafe {
        (lib.hsa_amd_memory_pool_get_info)(pool, attribute, (&mut value as *mut usize).cast())
    };
    check(lib, "hsa_amd_memory_pool_get_info", status)?;
    Ok(value)
}

// ------------------------------------------------------------------ hiprtc

/// A failed hiprtc call: the call's name, its result and the runtime's text for it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call}: {text} ({code})")]
pub struct HiprtcCallError {
    pub call: &'static str,
    pub code: hiprtcResult,
    /// What `hiprtcGetErrorString` says (`HIPRTC_ERROR_COMPILATION`), or gpuio's own
    /// words for a failure found before the call.
    pub text: String,
}

fn rtc_check(
    lib: &HiprtcLib,
    call: &'static str,
    code: hiprtcResult,
) -> Result<(), HiprtcCallError> {
    if code == sys::HIPRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: hiprtcGetErrorString takes any value and returns a static
    // NUL-terminated string (or null, checked below).
    let text = unsafe { (lib.hiprtcGetErrorString)(code) };
    let text = if text.is_null() {
        format!("hiprtcResult {code}")
    } else {
        // SAFETY: non-null and NUL-terminated per hiprtc.h; copied out at once.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(HiprtcCallError { call, code, text })
}

/// `hiprtcVersion`. (hiprtc in ROCm 5 answers 9.0 whatever the release; the
/// library's file name tells releases apart.)
pub fn rtc_version(lib: &HiprtcLib) -> Result<(i32, i32), HiprtcCallError> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: both are valid out-pointers; hiprtcVersion needs no program or device.
    let code = unsafe { (lib.hiprtcVersion)(&mut major, &mut minor) };
    rtc_check(lib, "hiprtcVersion", code)?;
    Ok((major, minor))
}

/// `hiprtcCreateProgram`: a program for `source`, named `name`, with `headers` as
/// `(include name, text)` that `#include "name"` finds. Free it with
/// [`rtc_destroy_program`].
pub fn rtc_create_program(
    lib: &HiprtcLib,
    source: &CStr,
    name: &CStr,
    headers: &[(CString, CString)],
) -> Result<hiprtcProgram, HiprtcCallError> {
    let count = c_int::try_from(headers.len()).map_err(|_| HiprtcCallError {
        call: "hiprtcCreateProgram",
        code: sys::HIPRTC_ERROR_INVALID_INPUT,
        text: format!("{} headers are more than hiprtc takes", headers.len()),
    })?;
    let texts: Vec<*const c_char> = headers.iter().map(|(_, t)| t.as_ptr()).collect();
    let names: Vec<*const c_char> = headers.iter().map(|(n, _)| n.as_ptr()).collect();
    let mut prog: hiprtcProgram = std::ptr::null_mut();
    // SAFETY: `prog` is a valid out-pointer; every string is NUL-terminated and owned
    // by the caller for the whole call (hiprtc copies them); both arrays have `count`
    // entries.
    let code = unsafe {
        (lib.hiprtcCreateProgram)(
            &mut prog,
            source.as_ptr(),
            name.as_ptr(),
            count,
            texts.as_ptr(),
            names.as_ptr(),
        )
    };
    rtc_check(lib, "hiprtcCreateProgram", code)?;
    Ok(prog)
}

/// `hiprtcCompileProgram` with `options`.
///
/// # Safety
/// 1. `prog` was returned by [`rtc_create_program`] and not yet destroyed.
/// 2. No other thread uses `prog` meanwhile.
/// 3. `options` name an ISA that comgr knows: hiprtc 5.2 aborts the process on
///    another (it frees an invalid pointer when comgr refuses the ISA name).
pub unsafe fn rtc_compile_program(
    lib: &HiprtcLib,
    prog: hiprtcProgram,
    options: &[CString],
) -> Result<(), HiprtcCallError> {
    let count = c_int::try_from(options.len()).map_err(|_| HiprtcCallError {
        call: "hiprtcCompileProgram",
        code: sys::HIPRTC_ERROR_INVALID_INPUT,
        text: format!("{} options are more than hiprtc takes", options.len()),
    })?;
    let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `prog` is live and unshared (caller, 1 and 2); the ISA is one comgr
    // knows (caller, 3); `ptrs` has `count` NUL-terminated strings alive for the call.
    let code = unsafe { (lib.hiprtcCompileProgram)(prog, count, ptrs.as_ptr()) };
    rtc_check(lib, "hiprtcCompileProgram", code)
}

/// `hiprtcGetProgramLogSize` + `hiprtcGetProgramLog`: the compiler's messages, or
/// an empty string.
///
/// # Safety
/// 1. `prog` was returned by [`rtc_create_program`] and not yet destroyed.
/// 2. No other thread uses `prog` meanwhile.
pub unsafe fn rtc_program_log(
    lib: &HiprtcLib,
    prog: hiprtcProgram,
) -> Result<String, HiprtcCallError> {
    let mut size = 0usize;
    // SAFETY: `prog` is live (caller); `size` is a valid out-pointer.
    let code = unsafe { (lib.hiprtcGetProgramLogSize)(prog, &mut size) };
    rtc_check(lib, "hiprtcGetProgramLogSize", code)?;
    if size == 0 {
        return Ok(String::new());
    }
    // One spare byte: the size may or may not count the NUL.
    let mut buf = vec![0u8; size + 1];
    // SAFETY: `prog` is live (caller); `buf` holds the `size` bytes hiprtc writes.
    let code = unsafe { (lib.hiprtcGetProgramLog)(prog, buf.as_mut_ptr().cast()) };
    rtc_check(lib, "hiprtcGetProgramLog", code)?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(size);
    Ok(String::from_utf8_lossy(&buf[..end]).trim_end().to_string())
}

/// `hiprtcGetCodeSize` + `hiprtcGetCode`: the compiled code object.
///
/// # Safety
/// 1. `prog` was returned by [`rtc_create_program`], compiled successfully by
///    [`rtc_compile_program`], and not yet destroyed.
/// 2. No other thread uses `prog` meanwhile.
pub unsafe fn rtc_code(lib: &HiprtcLib, prog: hiprtcProgram) -> Result<Vec<u8>, HiprtcCallError> {
    let mut size = 0usize;
    // SAFETY: `prog` is live (caller); `size` is a valid out-pointer.
    let code = unsafe { (lib.hiprtcGetCodeSize)(prog, &mut size) };
    rtc_check(lib, "hiprtcGetCodeSize", code)?;
    let mut bytes = vec![0u8; size];
    if size > 0 {
        // SAFETY: `prog` is live and compiled (caller); `bytes` holds the `size`
        // bytes hiprtc writes.
        let code = unsafe { (lib.hiprtcGetCode)(prog, bytes.as_mut_ptr().cast()) };
        rtc_check(lib, "hiprtcGetCode", code)?;
    }
    Ok(bytes)
}

/// `hiprtcDestroyProgram`; sets `*prog` to null.
///
/// # Safety
/// 1. `*prog` was returned by [`rtc_create_program`] and not yet destroyed.
/// 2. No other thread uses it meanwhile, and nothing uses it afterwards.
pub unsafe fn rtc_destroy_program(
    lib: &HiprtcLib,
    prog: &mut hiprtcProgram,
) -> Result<(), HiprtcCallError> {
    // SAFETY: `*prog` is live and owned by the caller, who gives it up (1, 2).
    let code = unsafe { (lib.hiprtcDestroyProgram)(prog) };
    rtc_check(lib, "hiprtcDestroyProgram", code)
}

// ------------------------------------------------------------------- comgr

/// A failed comgr call: the call's name, its status and comgr's text for it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call}: {} ({status:#x})", text.as_deref().unwrap_or("comgr status"))]
pub struct ComgrError {
    pub call: &'static str,
    pub status: amd_comgr_status_t,
    /// What `amd_comgr_status_string` says.
    pub text: Option<String>,
}

fn comgr_check(
    lib: &ComgrLib,
    call: &'static str,
    status: amd_comgr_status_t,
) -> Result<(), ComgrError> {
    if status == sys::AMD_COMGR_STATUS_SUCCESS {
        return Ok(());
    }
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a valid out-pointer; comgr stores a static NUL-terminated
    // string there or fails.
    let ok = unsafe { (lib.amd_comgr_status_string)(status, &mut text) }
        == sys::AMD_COMGR_STATUS_SUCCESS;
    let text = (ok && !text.is_null()).then(|| {
        // SAFETY: non-null and NUL-terminated per amd_comgr.h; copied out at once.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    });
    Err(ComgrError { call, status, text })
}

/// `amd_comgr_get_version`: `(major, minor)`.
pub fn comgr_version(lib: &ComgrLib) -> (usize, usize) {
    let (mut major, mut minor) = (0usize, 0usize);
    // SAFETY: both are valid out-pointers; the call cannot fail.
    unsafe { (lib.amd_comgr_get_version)(&mut major, &mut minor) };
    (major, minor)
}

/// Every ISA comgr can compile for, as it names them
/// (`amdgcn-amd-amdhsa--gfx90a`, in newer releases also with features such as
/// `amdgcn-amd-amdhsa--gfx90a:xnack+`).
pub fn comgr_isa_names(lib: &ComgrLib) -> Result<Vec<String>, ComgrError> {
    let mut count = 0usize;
    // SAFETY: `count` is a valid out-pointer.
    let status = unsafe { (lib.amd_comgr_get_isa_count)(&mut count) };
    comgr_check(lib, "amd_comgr_get_isa_count", status)?;
    let mut names = Vec::with_capacity(count);
    for index in 0..count {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: `index` < count; `name` is a valid out-pointer.
        let status = unsafe { (lib.amd_comgr_get_isa_name)(index, &mut name) };
        comgr_check(lib, "amd_comgr_get_isa_name", status)?;
        if !name.is_null() {
            // SAFETY: non-null and NUL-terminated (a string of comgr's static ISA
            // table); copied out at once.
            names.push(
                unsafe { CStr::from_ptr(name) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    Ok(names)
}
