//! The device header, embedded, so run-time compilers can be handed it by name.
//!
//! A binary carries these texts with it (it may be copied alone to another machine),
//! so run-time compilers take them from here, never from the source tree;
//! [`include_dir`] is for code that runs beside the source tree.

use std::path::Path;

/// `(include name, source)` for `gpuio.h` and every part it includes.
pub const HEADERS: &[(&str, &str)] = &[
    ("gpuio.h", include_str!("../include/gpuio.h")),
    ("gpuio/abi.h", include_str!("../include/gpuio/abi.h")),
    ("gpuio/arch.h", include_str!("../include/gpuio/arch.h")),
    ("gpuio/printf.h", include_str!("../include/gpuio/printf.h")),
    ("gpuio/api.h", include_str!("../include/gpuio/api.h")),
    ("gpuio/direct.h", include_str!("../include/gpuio/direct.h")),
    (
        "gpuio/forward.h",
        include_str!("../include/gpuio/forward.h"),
    ),
    (
        "gpuio/mailbox.h",
        include_str!("../include/gpuio/mailbox.h"),
    ),
    ("gpuio/queue.h", include_str!("../include/gpuio/queue.h")),
    ("gpuio/log.h", include_str!("../include/gpuio/log.h")),
];

/// `device/include` in this crate's source tree, where `gpuio.h` lies: for build
/// scripts and tests in this workspace, with the source tree at hand. (A build script
/// of a crate depending on `gpuio-device` gets it as `DEP_GPUIO_CPU_KERNELS_INCLUDE`.)
/// An installed binary must not rely on it: run-time compilers use [`HEADERS`].
pub fn include_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}

/// The conformance and benchmark kernels' source (includes `gpuio.h`), shared by
/// the CPU device (compiled at build time) and run-time GPU compilers.
pub const KERNELS_SOURCE: &str = include_str!("../kernels/conformance.h");

/// A stable hash of everything a kernel compile depends on (cache key part).
pub fn source_hash(extra: &str) -> u64 {
    // FNV-1a: stable across runs and Rust versions, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (name, src) in HEADERS {
        feed(name.as_bytes());
        feed(src.as_bytes());
    }
    feed(KERNELS_SOURCE.as_bytes());
    feed(extra.as_bytes());
    h
}

/// The root of gpuio's on-disk caches of compiled kernels: `$XDG_CACHE_HOME/gpuio`
/// when set and absolute, else `$HOME/.cache/gpuio`. Each compiler keeps its own
/// directory in it (`cpu/`, `hip/`; NVRTC's cubins sit at the root).
pub fn cache_root(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let xdg = xdg_cache_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        home.map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    })?;
    Some(base.join("gpuio"))
}
