//! Kernels compiled at run time with NVRTC, cached on disk.
//!
//! A kernel source includes `gpuio.h`; NVRTC gets every part of the header by name
//! (`gpuio_device::header::HEADERS`), no include path and no system header, with
//! `-std=c++17` and nothing defined that changes the header's behaviour. The target
//! is the GPU's own architecture: `--gpu-architecture=sm_XY` gives a cubin when
//! NVRTC knows that architecture; otherwise it compiles PTX for the highest
//! `compute_XY` it knows below the GPU's, which the driver JIT-compiles at load.
//!
//! Images are cached under `$XDG_CACHE_HOME/gpuio` (else `~/.cache/gpuio`), one file
//! per (source hash, target, NVRTC version), written to a temporary name and then
//! renamed so a reader never sees half a file. The hash covers the header, the
//! source, its name and the options ([`gpuio_device::header::source_hash`]). A cache
//! directory that cannot be created or written means no cache, not an error.

use std::path::{Path, PathBuf};

use crate::sys::{self, LibraryError, NvrtcCallError};

/// A compute capability, e.g. 9.0 for the H100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    pub major: i32,
    pub minor: i32,
}

impl Arch {
    /// As NVRTC lists them: `10 * major + minor`.
    pub fn number(self) -> i32 {
        self.major * 10 + self.minor
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

/// What an image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code for exactly one architecture.
    Cubin,
    /// PTX text (NUL-terminated), compiled by the driver at load.
    Ptx,
}

impl ImageKind {
    fn ext(self) -> &'static str {
        match self {
            Self::Cubin => "cubin",
            Self::Ptx => "ptx",
        }
    }
}

/// What to compile for: `--gpu-architecture=<option>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `sm_90` (cubin) or `compute_89` (PTX).
    pub option: String,
    pub kind: ImageKind,
}

/// A compiled kernel image.
#[derive(Clone, Debug)]
pub struct KernelImage {
    pub bytes: Vec<u8>,
    pub target: Target,
    /// Read from the on-disk cache rather than compiled now.
    pub cached: bool,
    /// Where it is (or would be) cached.
    pub cache_path: Option<PathBuf>,
    /// NVRTC's log (warnings); empty when cached.
    pub log: String,
}

/// Why kernels could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error(transparent)]
    Call(#[from] NvrtcCallError),
    #[error("NVRTC {nvrtc} knows no architecture at or below {arch} (it knows {known:?})")]
    NoTarget {
        arch: Arch,
        nvrtc: String,
        known: Vec<i32>,
    },
    #[error("NVRTC could not compile {name} for {target}:\n{log}")]
    Compile {
        name: String,
        target: String,
        log: String,
    },
}

/// NVRTC, found and asked what it can do.
#[derive(Clone, Debug)]
pub struct Compiler {
    version: (i32, i32),
    archs: Vec<i32>,
    cache: Option<PathBuf>,
}

impl Compiler {
    /// Finds NVRTC (no panic when it is absent) and the cache directory.
    pub fn new() -> Result<Self, CompileError> {
        sys::nvrtc()?;
        let version = sys::nvrtc_version()?;
        let archs = sys::nvrtc_supported_archs()?;
        let cache = cache_dir(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
            .filter(|d| std::fs::create_dir_all(d).is_ok());
        Ok(Self {
            version,
            archs,
            cache,
        })
    }

    /// Without a disk cache.
    pub fn without_cache(mut self) -> Self {
        self.cache = None;
        self
    }

    /// `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The cache directory in use, if any.
    pub fn cache(&self) -> Option<&Path> {
        self.cache.as_deref()
    }

    /// A cubin for `arch` if NVRTC knows it; else PTX for the highest lower one.
    pub fn target_for(&self, arch: Arch) -> Result<Target, CompileError> {
        pick_target(&self.archs, arch).ok_or_else(|| CompileError::NoTarget {
            arch,
            nvrtc: format!("{}.{}", self.version.0, self.version.1),
            known: self.archs.clone(),
        })
    }

    /// Compiles `source` (which may `#include "gpuio.h"`) for `arch`, or reads it from
    /// the cache.
    pub fn compile(
        &self,
        name: &str,
        source: &str,
        arch: Arch,
    ) -> Result<KernelImage, CompileError> {
        self.compile_with(name, source, gpuio_device::header::HEADERS, arch)
    }

    /// As [`Compiler::compile`], with other in-memory headers (`(include name,
    /// text)`) in place of the embedded `gpuio.h`, e.g. a header tree on disk.
    pub fn compile_with(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        arch: Arch,
    ) -> Result<KernelImage, CompileError> {
        let target = self.target_for(arch)?;
        let options = options(&target);
        let cache_path = self.cache_path(name, source, headers, &target, &options);
        if let Some(p) = &cache_path {
            if let Ok(bytes) = std::fs::read(p) {
                if !bytes.is_empty() {
                    tracing::debug!(path = %p.display(), "kernel image from cache");
                    return Ok(KernelImage {
                        bytes,
                        target,
                        cached: true,
                        cache_path,
                        log: String::new(),
                    });
                }
            }
        }
        let span = tracing::info_span!("nvrtc.compile", name, target = %target.option);
        let _enter = span.enter();
        let out = sys::nvrtc_compile(
            name,
            source,
            headers,
            &options,
            target.kind == ImageKind::Cubin,
        );
        let bytes = match out.result {
            Ok(b) => b,
            Err(e) if e.call == "nvrtcCompileProgram" => {
                return Err(CompileError::Compile {
                    name: name.to_string(),
                    target: target.option,
                    log: if out.log.is_empty() { e.text } else { out.log },
                })
            }
            Err(e) => return Err(e.into()),
        };
        if !out.log.is_empty() {
            tracing::info!(log = %out.log, "NVRTC said");
        }
        if let Some(p) = &cache_path {
            store(p, &bytes);
        }
        Ok(KernelImage {
            bytes,
            target,
            cached: false,
            cache_path,
            log: out.log,
        })
    }
}

impl Compiler {
    /// Whether [`Compiler::compile`] of `source` for `arch` would read its image from
    /// the on-disk cache (false without a cache or a target).
    pub fn is_cached(&self, name: &str, source: &str, arch: Arch) -> bool {
        let Ok(target) = self.target_for(arch) else {
            return false;
        };
        let options = options(&target);
        self.cache_path(
            name,
            source,
            gpuio_device::header::HEADERS,
            &target,
            &options,
        )
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.len() > 0)
    }

    /// Where the image of `source` compiled with `headers` and `options` for
    /// `target` is cached, if there is a cache.
    fn cache_path(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        target: &Target,
        options: &[String],
    ) -> Option<PathBuf> {
        let key = if std::ptr::eq(headers, gpuio_device::header::HEADERS) {
            cache_key(name, source, options)
        } else {
            let mut all = String::new();
            for (n, t) in headers {
                all.push_str(n);
                all.push('\0');
                all.push_str(t);
                all.push('\0');
            }
            cache_key(name, &(all + source), options)
        };
        let file = cache_file_name(key, target, self.version);
        self.cache.as_ref().map(|d| d.join(file))
    }
}

/// Forgets a cached image (one the driver refused to load).
pub fn evict(image: &KernelImage) {
    if let Some(p) = &image.cache_path {
        if let Err(e) = std::fs::remove_file(p) {
            tracing::debug!(path = %p.display(), error = %e, "cannot evict a cached image");
        }
    }
}

fn store(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let stored = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = stored {
        tracing::debug!(path = %path.display(), error = %e, "kernel cache not written");
        let _ = std::fs::remove_file(&tmp);
    }
}

fn options(target: &Target) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", target.option),
        "-std=c++17".to_string(),
    ]
}

/// The target for `arch` among NVRTC's `known` architectures.
pub fn pick_target(known: &[i32], arch: Arch) -> Option<Target> {
    let n = arch.number();
    if known.contains(&n) {
        return Some(Target {
            option: format!("sm_{n}"),
            kind: ImageKind::Cubin,
        });
    }
    known
        .iter()
        .copied()
        .filter(|&a| a < n)
        .max()
        .map(|a| Target {
            option: format!("compute_{a}"),
            kind: ImageKind::Ptx,
        })
}

/// The cache directory: `$XDG_CACHE_HOME/gpuio` when set and absolute, else
/// `$HOME/.cache/gpuio`.
pub fn cache_dir(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    gpuio_device::header::cache_root(xdg_cache_home, home)
}

/// A stable hash of the header, `source`, its name and the compile options.
pub fn cache_key(name: &str, source: &str, options: &[String]) -> u64 {
    gpuio_device::header::source_hash(&format!("{name}\n{}\n{source}", options.join(" ")))
}

/// The cache file for an image.
pub fn cache_file_name(key: u64, target: &Target, nvrtc: (i32, i32)) -> String {
    format!(
        "kernels-{key:016x}-{}-nvrtc{}.{}.{}",
        target.option,
        nvrtc.0,
        nvrtc.1,
        target.kind.ext()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: Arch = Arch { major: 9, minor: 0 };

    #[test]
    fn a_known_architecture_gets_a_cubin() {
        let t = pick_target(&[75, 80, 86, 89, 90, 100, 120], H100).unwrap();
        assert_eq!(t.option, "sm_90");
        assert_eq!(t.kind, ImageKind::Cubin);
    }

    #[test]
    fn an_unknown_newer_architecture_gets_ptx_for_the_highest_lower_one() {
        let t = pick_target(&[75, 80, 86, 89], H100).unwrap();
        assert_eq!(t.option, "compute_89");
        assert_eq!(t.kind, ImageKind::Ptx);
        assert!(pick_target(&[100, 120], H100).is_none());
    }

    #[test]
    fn cache_file_names_are_stable_and_name_every_part_of_the_key() {
        let sm90 = pick_target(&[90], H100).unwrap();
        assert_eq!(
            cache_file_name(0x0123_4567_89ab_cdef, &sm90, (13, 0)),
            "kernels-0123456789abcdef-sm_90-nvrtc13.0.cubin"
        );
        let ptx = pick_target(&[89], H100).unwrap();
        assert_eq!(
            cache_file_name(1, &ptx, (12, 8)),
            "kernels-0000000000000001-compute_89-nvrtc12.8.ptx"
        );
    }

    #[test]
    fn cache_key_is_deterministic_and_covers_source_name_and_options() {
        let src = gpuio_device::header::KERNELS_SOURCE;
        let o90 = options(&pick_target(&[90], H100).unwrap());
        let o89 = options(&pick_target(&[89], H100).unwrap());
        let k = cache_key("conformance.cu", src, &o90);
        assert_eq!(k, cache_key("conformance.cu", src, &o90));
        assert_ne!(k, cache_key("conformance.cu", src, &o89));
        assert_ne!(k, cache_key("other.cu", src, &o90));
        assert_ne!(
            k,
            cache_key(
                "conformance.cu",
                "extern \"C\" __global__ void k() {}",
                &o90
            )
        );
    }

    #[test]
    fn cache_dir_prefers_xdg_cache_home_then_home() {
        assert_eq!(
            cache_dir(Some("/x/cache".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/cache/gpuio"))
        );
        assert_eq!(
            cache_dir(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.cache/gpuio"))
        );
        assert_eq!(cache_dir(None, None), None);
    }

    #[test]
    fn compiler_without_nvrtc_says_what_to_install() {
        // On a machine with NVRTC this only checks that finding it works.
        match Compiler::new() {
            Ok(c) => assert!(c.version().0 >= 11),
            Err(CompileError::Library(LibraryError::NotFound {
                library,
                hint,
                tried,
            })) => {
                assert_eq!(library, "libnvrtc");
                assert!(hint.contains("NVRTC"));
                assert!(!tried.is_empty());
            }
            Err(e) => panic!("unexpected: {e}"),
        }
    }
}
