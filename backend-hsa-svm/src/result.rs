//! Checked calls: every HSA call gpuio makes returns `Result<_, HsaError>`.

use std::ffi::{c_void, CStr};

use crate::sys::{self, hsa_agent_t, hsa_amd_memory_pool_t, hsa_status_t, Lib};

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
