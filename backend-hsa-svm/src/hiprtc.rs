//! Kernels for AMD GPUs compiled at run time with hiprtc, cached on disk.
//!
//! The AMD side of `backend-cuda-mapped/src/nvrtc.rs`: a kernel source includes
//! `gpuio.h`; hiprtc gets every part of the header by name
//! (`gpuio_device::header::HEADERS`), no include path and no system header, with
//! `--offload-arch=<gfx…>` and `-std=c++17` and nothing defined that changes the
//! header's behaviour. It returns a code object: an AMDGPU ELF (`EM_AMDGPU`, HSA OS
//! ABI) for exactly that GPU, not a clang offload bundle.
//!
//! Nothing here runs a kernel: gpuio has no HSA device runner yet, and no AMD GPU
//! has run these code objects. What is checked is that one header and one kernel
//! source compile for AMD too.
//!
//! Three things hiprtc does not do, done here:
//! - **Refuse an ISA comgr does not know.** hiprtc 5.2 aborts the whole process
//!   (`munmap_chunk(): invalid pointer` in `amd_comgr_destroy_action_info`) when
//!   comgr refuses the ISA name, e.g. `gfx940` on ROCm 5.2. The compiler asks comgr
//!   for its ISA list first and answers [`HiprtcError::UnknownArch`] (or
//!   [`HiprtcError::NoComgr`], compiling nothing, when comgr cannot be asked).
//! - **Serialize.** Neither hiprtc nor comgr documents thread safety; compiles in one
//!   process take turns.
//! - **Name the source in the log.** comgr reports `/tmp/comgr-XXXXXX/input/CompileSource:3:1`
//!   and `/tmp/comgr-XXXXXX/include/gpuio/api.h`; the log names the program and the
//!   header instead (`bad.hip:3:1`, `gpuio/api.h`).
//!
//! Code objects are cached under `$XDG_CACHE_HOME/gpuio/hip` (else
//! `~/.cache/gpuio/hip`), one file per (source hash, target, hiprtc library), written
//! to a temporary name and then renamed so a reader never sees half a file. The hash
//! covers the header, the source, its name, the options and the file hiprtc was
//! loaded from (hiprtc in ROCm 5 calls itself 9.0 in every release; the library's
//! file name, `libamdhip64.so.5.2.21153`, tells releases apart). A cache directory
//! that cannot be created or written means no cache, not an error.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::result::{self, HiprtcCallError};
use crate::sys::{self, hiprtcProgram, HiprtcLib, LoadError};

/// What gpuio says wherever AMD kernels come up.
pub const NEVER_RUN: &str = "gpuio's AMD kernels are compiled (hiprtc), never run on AMD hardware";

/// The GPU the probe names when it says what hiprtc can compile for.
pub const PROBE_ARCH: &str = "gfx90a";

/// A compiled code object.
#[derive(Clone, Debug)]
pub struct CodeObject {
    pub bytes: Vec<u8>,
    /// The target it was compiled for (`gfx90a`, or with features `gfx90a:xnack-`).
    pub arch: String,
    /// Read from the on-disk cache rather than compiled now.
    pub cached: bool,
    /// Where it is (or would be) cached.
    pub cache_path: Option<PathBuf>,
    /// hiprtc's log (warnings), paths named as in the source; empty when cached.
    pub log: String,
}

/// `e_machine` of AMD GPU code (`EM_AMDGPU`).
pub const EM_AMDGPU: u16 = 224;
/// `e_ident[EI_OSABI]` of code for the HSA runtime (`ELFOSABI_AMDGPU_HSA`).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// The processor bits of `e_flags` (`EF_AMDGPU_MACH`).
pub const EF_AMDGPU_MACH: u32 = 0xff;

/// `EF_AMDGPU_MACH_AMDGCN_*` values, from LLVM's `BinaryFormat/ELF.h`; every one was
/// checked against a code object hiprtc 5.2 compiled for that processor.
const MACHS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x042, "gfx1013"),
    (0x045, "gfx1036"),
];

impl CodeObject {
    /// Whether the bytes are a 64-bit little-endian ELF for AMD GPUs and the HSA
    /// runtime (what HSA's code object reader loads).
    pub fn is_amdgpu_elf(&self) -> bool {
        let b = &self.bytes;
        b.len() >= 64
            && b.starts_with(b"\x7fELF")
            && b[4] == 2 // ELFCLASS64
            && b[5] == 1 // ELFDATA2LSB
            && b[7] == ELFOSABI_AMDGPU_HSA
            && u16::from_le_bytes([b[18], b[19]]) == EM_AMDGPU
    }

    /// The processor the ELF header names (`e_flags & EF_AMDGPU_MACH`), when it is
    /// an AMDGPU ELF of a processor in gpuio's table.
    pub fn processor(&self) -> Option<&'static str> {
        if !self.is_amdgpu_elf() {
            return None;
        }
        let b = &self.bytes;
        let flags = u32::from_le_bytes([b[48], b[49], b[50], b[51]]);
        MACHS
            .iter()
            .find(|(mach, _)| *mach == flags & EF_AMDGPU_MACH)
            .map(|(_, name)| *name)
    }

    /// Whether `symbol` (a kernel name) occurs in the code object's bytes.
    pub fn mentions(&self, symbol: &str) -> bool {
        let s = symbol.as_bytes();
        !s.is_empty() && self.bytes.windows(s.len()).any(|w| w == s)
    }
}

/// Why kernels could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HiprtcError {
    /// No library with hiprtc in it loads here.
    #[error(
        "{0}: install the HIP runtime, which has hiprtc (Debian 12: libamdhip64-5, where it is \
         part of libamdhip64.so.5; ROCm 6 and later: libhiprtc.so from hip-runtime-amd), or \
         point {env} at it",
        env = sys::HIPRTC_LIB_ENV
    )]
    Library(#[from] LoadError),
    /// A hiprtc call failed other than by the source not compiling.
    #[error(transparent)]
    Call(#[from] HiprtcCallError),
    /// The source did not compile; `log` is the compiler's.
    #[error("hiprtc could not compile {name} for {arch}:\n{log}")]
    Compile {
        name: String,
        arch: String,
        log: String,
    },
    /// comgr, which hiprtc compiles through, does not know the target.
    #[error(
        "{comgr} does not know {arch}, so hiprtc cannot compile for it (and would abort the \
         process trying); it knows {}",
        known.join(", ")
    )]
    UnknownArch {
        arch: String,
        /// `comgr 2.4`.
        comgr: String,
        /// The processors it knows.
        known: Vec<String>,
    },
    /// comgr could not be asked which targets it knows; hiprtc would abort the process
    /// on one it does not know, so gpuio does not compile without asking.
    #[error(
        "hiprtc is here but comgr, which says what targets it can compile for, cannot be \
         asked ({why}); gpuio does not compile without asking, since hiprtc aborts the \
         process on a target comgr does not know"
    )]
    NoComgr { why: String },
    /// `arch` is not an AMD GPU target name.
    #[error("{arch:?} is not an AMD GPU target such as gfx90a or gfx90a:xnack-")]
    BadArch { arch: String },
    /// A name, source or header holds a NUL byte, which C strings cannot carry.
    #[error("{what} contains a NUL byte")]
    Nul { what: String },
}

/// What comgr (the code object manager hiprtc compiles through) knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comgr {
    /// Which name or path opened.
    pub library: String,
    pub version: (usize, usize),
    /// The processors it can compile for (`gfx90a`), in comgr's order, no duplicates.
    pub processors: Vec<String>,
}

impl Comgr {
    /// comgr as hiprtc will use it, or why it cannot be asked.
    pub fn detect() -> Result<Comgr, String> {
        let lib = sys::comgr_lib().map_err(|e| e.to_string())?;
        let isas = result::comgr_isa_names(lib).map_err(|e| e.to_string())?;
        Ok(Comgr {
            library: lib.name.clone(),
            version: result::comgr_version(lib),
            processors: processors_of(&isas),
        })
    }

    /// Whether comgr knows `arch`'s processor (`gfx90a:xnack-` → `gfx90a`).
    pub fn knows(&self, arch: &str) -> bool {
        let processor = arch.split(':').next().unwrap_or(arch);
        self.processors.iter().any(|p| p == processor)
    }

    fn describe(&self) -> String {
        format!("comgr {}.{}", self.version.0, self.version.1)
    }
}

/// The processors of comgr's ISA names (`amdgcn-amd-amdhsa--gfx90a:xnack+` →
/// `gfx90a`), in order, without duplicates.
pub fn processors_of(isa_names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for isa in isa_names {
        let target = isa.rsplit("--").next().unwrap_or(isa);
        let processor = target.split(':').next().unwrap_or(target);
        if !processor.is_empty() && !out.iter().any(|p| p == processor) {
            out.push(processor.to_string());
        }
    }
    out
}

/// What hiprtc is here, found without compiling (what the probe reports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiprtcInfo {
    /// Which name or path opened.
    pub library: String,
    /// The file it was loaded from, links resolved.
    pub path: Option<PathBuf>,
    /// `hiprtcVersion` (9.0 in every ROCm 5 release).
    pub version: (i32, i32),
    /// comgr, or why it cannot be asked (then nothing is compiled).
    pub comgr: Result<Comgr, String>,
}

impl HiprtcInfo {
    /// Loads hiprtc (once per process) and asks its version and comgr's targets.
    pub fn detect() -> Result<HiprtcInfo, HiprtcError> {
        let lib = sys::hiprtc_lib()?;
        Self::of(&lib)
    }

    fn of(lib: &HiprtcLib) -> Result<HiprtcInfo, HiprtcError> {
        Ok(HiprtcInfo {
            library: lib.name.clone(),
            path: lib.path.clone(),
            version: result::rtc_version(lib)?,
            comgr: Comgr::detect(),
        })
    }

    /// One line for the probe: version, library, and whether `arch` can be
    /// compiled for.
    pub fn summary(&self, arch: &str) -> String {
        let file = self
            .path
            .as_deref()
            .and_then(Path::file_name)
            .map(|f| f.to_string_lossy().into_owned())
            .filter(|f| *f != self.library)
            .map(|f| format!(" ({f})"))
            .unwrap_or_default();
        let head = format!(
            "{}.{} in {}{file}",
            self.version.0, self.version.1, self.library
        );
        match &self.comgr {
            Ok(c) if c.knows(arch) => format!(
                "{head}, {}: compiles gpuio.h for {arch} and {} other AMD targets; {NEVER_RUN}",
                c.describe(),
                c.processors.len().saturating_sub(1)
            ),
            Ok(c) => format!(
                "{head}, {}: cannot compile for {arch}, which this comgr does not know (it knows \
                 {}); {NEVER_RUN}",
                c.describe(),
                c.processors.join(", ")
            ),
            Err(why) => format!(
                "{head}: compiles nothing, since comgr cannot be asked which targets it knows \
                 ({why}); {NEVER_RUN}"
            ),
        }
    }
}

/// hiprtc, found and asked what it can do.
#[derive(Clone, Debug)]
pub struct Compiler {
    lib: Arc<HiprtcLib>,
    info: HiprtcInfo,
    cache: Option<PathBuf>,
}

/// Compiles in this process take turns (see the module doc).
static COMPILING: Mutex<()> = Mutex::new(());

impl Compiler {
    /// Finds hiprtc (`GPUIO_HIPRTC_LIB`, else [`sys::HIPRTC_LIB_NAMES`]; no panic
    /// when it is absent), comgr and the cache directory.
    pub fn new() -> Result<Self, HiprtcError> {
        Self::with_lib(sys::hiprtc_lib()?)
    }

    /// As [`Compiler::new`], with hiprtc from the first of `names` that has it.
    pub fn open(names: &[&str]) -> Result<Self, HiprtcError> {
        Self::with_lib(Arc::new(HiprtcLib::open(names)?))
    }

    fn with_lib(lib: Arc<HiprtcLib>) -> Result<Self, HiprtcError> {
        let info = HiprtcInfo::of(&lib)?;
        let cache = cache_dir(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
            .filter(|d| std::fs::create_dir_all(d).is_ok());
        Ok(Self { lib, info, cache })
    }

    /// Without a disk cache.
    pub fn without_cache(mut self) -> Self {
        self.cache = None;
        self
    }

    /// With the disk cache in `dir` (created if missing; no cache if it cannot be).
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.cache = std::fs::create_dir_all(&dir).is_ok().then_some(dir);
        self
    }

    /// The cache directory in use, if any.
    pub fn cache(&self) -> Option<&Path> {
        self.cache.as_deref()
    }

    /// Version, library and comgr, as found.
    pub fn info(&self) -> &HiprtcInfo {
        &self.info
    }

    /// Whether comgr knows `arch`; `None` when comgr could not be asked.
    pub fn knows(&self, arch: &str) -> Option<bool> {
        self.info.comgr.as_ref().ok().map(|c| c.knows(arch))
    }

    /// Compiles `source` (which may `#include "gpuio.h"`) for `arch` (`gfx90a`), or
    /// reads it from the cache.
    pub fn compile(&self, name: &str, source: &str, arch: &str) -> Result<CodeObject, HiprtcError> {
        self.compile_with(name, source, gpuio_device::header::HEADERS, arch)
    }

    /// As [`Compiler::compile`], with other in-memory headers (`(include name,
    /// text)`) in place of the embedded `gpuio.h`.
    pub fn compile_with(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        arch: &str,
    ) -> Result<CodeObject, HiprtcError> {
        self.check_arch(arch)?;
        let options = options(arch);
        let key = cache_key(name, source, headers, &options, &self.identity());
        let file = cache_file_name(key, arch, self.info.version);
        let cache_path = self.cache.as_ref().map(|d| d.join(&file));
        if let Some(p) = &cache_path {
            if let Ok(bytes) = std::fs::read(p) {
                if !bytes.is_empty() {
                    tracing::debug!(path = %p.display(), "code object from cache");
                    return Ok(CodeObject {
                        bytes,
                        arch: arch.to_string(),
                        cached: true,
                        cache_path,
                        log: String::new(),
                    });
                }
            }
        }
        let span = tracing::info_span!("hiprtc.compile", name, arch);
        let _enter = span.enter();
        let (bytes, log) = self.run(name, source, headers, arch, &options)?;
        if !log.is_empty() {
            tracing::info!(%log, "hiprtc said");
        }
        if let Some(p) = &cache_path {
            store(p, &bytes);
        }
        Ok(CodeObject {
            bytes,
            arch: arch.to_string(),
            cached: false,
            cache_path,
            log,
        })
    }

    fn check_arch(&self, arch: &str) -> Result<(), HiprtcError> {
        if !is_target_name(arch) {
            return Err(HiprtcError::BadArch {
                arch: arch.to_string(),
            });
        }
        match &self.info.comgr {
            Ok(c) if c.knows(arch) => Ok(()),
            Ok(c) => Err(HiprtcError::UnknownArch {
                arch: arch.to_string(),
                comgr: c.describe(),
                known: c.processors.clone(),
            }),
            Err(why) => Err(HiprtcError::NoComgr { why: why.clone() }),
        }
    }

    /// What identifies this hiprtc in cache keys: the file it was loaded from.
    fn identity(&self) -> String {
        match &self.info.path {
            Some(p) => p.display().to_string(),
            None => self.info.library.clone(),
        }
    }

    /// One hiprtc program, created, compiled, read and destroyed.
    fn run(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        arch: &str,
        options: &[String],
    ) -> Result<(Vec<u8>, String), HiprtcError> {
        let c_source = c_string("the kernel source", source)?;
        let c_name = c_string("the program name", name)?;
        let c_headers = headers
            .iter()
            .map(|(n, t)| Ok((c_string("a header name", n)?, c_string(n, t)?)))
            .collect::<Result<Vec<_>, HiprtcError>>()?;
        let c_options = options
            .iter()
            .map(|o| c_string("an option", o))
            .collect::<Result<Vec<_>, _>>()?;

        let _turn = COMPILING.lock().unwrap_or_else(|e| e.into_inner());
        let program = Program {
            lib: &self.lib,
            prog: result::rtc_create_program(&self.lib, &c_source, &c_name, &c_headers)?,
        };
        // SAFETY: `program.prog` is live until `program` drops and used by this thread
        // only (it never leaves this function; compiles take turns under COMPILING);
        // `check_arch` made sure comgr knows the ISA.
        let compiled = unsafe { result::rtc_compile_program(&self.lib, program.prog, &c_options) };
        // SAFETY: as above.
        let log = unsafe { result::rtc_program_log(&self.lib, program.prog) }
            .map(|l| name_comgr_paths(&l, name))?;
        match compiled {
            Ok(()) => {}
            Err(e) if e.code == sys::HIPRTC_ERROR_COMPILATION => {
                return Err(HiprtcError::Compile {
                    name: name.to_string(),
                    arch: arch.to_string(),
                    log: if log.is_empty() { e.to_string() } else { log },
                })
            }
            Err(e) => return Err(e.into()),
        }
        // SAFETY: as above, and the program compiled.
        let bytes = unsafe { result::rtc_code(&self.lib, program.prog) }?;
        Ok((bytes, log))
    }
}

/// A live hiprtc program, destroyed on drop.
struct Program<'a> {
    lib: &'a HiprtcLib,
    prog: hiprtcProgram,
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: `prog` came from rtc_create_program, is destroyed only here, and
        // nothing uses it after this.
        if let Err(e) = unsafe { result::rtc_destroy_program(self.lib, &mut self.prog) } {
            tracing::warn!(error = %e, "hiprtc program not destroyed");
        }
    }
}

fn c_string(what: &str, s: &str) -> Result<CString, HiprtcError> {
    CString::new(s).map_err(|_| HiprtcError::Nul {
        what: what.to_string(),
    })
}

/// `gfx90a`, `gfx1030`, `gfx90a:sramecc+:xnack-`: what `--offload-arch=` takes, and
/// nothing that could smuggle in another option.
pub fn is_target_name(arch: &str) -> bool {
    let mut parts = arch.split(':');
    let processor = parts.next().unwrap_or_default();
    let feature_ok = |f: &str| {
        f.len() > 1
            && (f.ends_with('+') || f.ends_with('-'))
            && f[..f.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    processor.len() > 3
        && processor.starts_with("gfx")
        && processor[3..].bytes().all(|b| b.is_ascii_alphanumeric())
        && parts.all(feature_ok)
}

/// The options every compile gets; `-std=c++17` as NVRTC gets it (hiprtc 5.2
/// defaults to C++14).
pub fn options(arch: &str) -> Vec<String> {
    vec![format!("--offload-arch={arch}"), "-std=c++17".to_string()]
}

/// comgr's temporary paths in `log`, renamed: the source to `name`, headers to
/// their include names.
pub fn name_comgr_paths(log: &str, name: &str) -> String {
    const MARK: &str = "/comgr-";
    const SOURCE: &str = "/input/CompileSource";
    const INCLUDE: &str = "/include/";
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(i) = rest.find(MARK) {
        // The path starts after the last space, quote or parenthesis before it.
        let start = rest[..i]
            .char_indices()
            .rev()
            .find(|&(_, c)| c.is_whitespace() || matches!(c, '\'' | '"' | '(' | '`'))
            .map_or(0, |(p, c)| p + c.len_utf8());
        let after_mark = i + MARK.len();
        // comgr's directory suffix (`comgr-808e15`) is letters and digits.
        let dir_end = rest[after_mark..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(rest.len(), |j| after_mark + j);
        let tail = &rest[dir_end..];
        let absolute = rest[start..].starts_with('/');
        let (replacement, consumed) = if absolute && tail.starts_with(SOURCE) {
            (name, dir_end + SOURCE.len())
        } else if absolute && tail.starts_with(INCLUDE) {
            ("", dir_end + INCLUDE.len())
        } else {
            out.push_str(&rest[..after_mark]);
            rest = &rest[after_mark..];
            continue;
        };
        out.push_str(&rest[..start]);
        out.push_str(replacement);
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    out
}

fn store(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let stored = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = stored {
        tracing::debug!(path = %path.display(), error = %e, "code object cache not written");
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The cache directory: `$XDG_CACHE_HOME/gpuio/hip` when set and absolute, else
/// `$HOME/.cache/gpuio/hip`.
pub fn cache_dir(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    gpuio_device::header::cache_root(xdg_cache_home, home).map(|r| r.join("hip"))
}

/// A stable hash of the header (or `headers`, when not the embedded ones),
/// `source`, its name, the options and the hiprtc library.
pub fn cache_key(
    name: &str,
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
    library: &str,
) -> u64 {
    let mut extra = format!("{name}\n{}\n{library}\n", options.join(" "));
    if !std::ptr::eq(headers, gpuio_device::header::HEADERS) {
        for (n, t) in headers {
            extra.push_str(n);
            extra.push('\0');
            extra.push_str(t);
            extra.push('\0');
        }
    }
    extra.push_str(source);
    gpuio_device::header::source_hash(&extra)
}

/// The cache file for a code object.
pub fn cache_file_name(key: u64, arch: &str, hiprtc: (i32, i32)) -> String {
    format!(
        "kernels-{key:016x}-{}-hiprtc{}.{}.co",
        arch.replace(':', "_"),
        hiprtc.0,
        hiprtc.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(mach: u32) -> CodeObject {
        let mut bytes = vec![0u8; 64];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2;
        bytes[5] = 1;
        bytes[7] = ELFOSABI_AMDGPU_HSA;
        bytes[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        bytes[48..52].copy_from_slice(&mach.to_le_bytes());
        CodeObject {
            bytes,
            arch: String::new(),
            cached: false,
            cache_path: None,
            log: String::new(),
        }
    }

    #[test]
    fn the_elf_header_names_the_processor_whatever_the_feature_bits() {
        assert_eq!(object(0x53f).processor(), Some("gfx90a"));
        assert_eq!(object(0x036).processor(), Some("gfx1030"));
        assert_eq!(object(0x0ff).processor(), None);
        let mut x86 = object(0x03f);
        x86.bytes[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert!(!x86.is_amdgpu_elf());
        assert_eq!(x86.processor(), None);
    }

    #[test]
    fn comgr_isa_names_become_processors_without_duplicates() {
        let isas = [
            "amdgcn-amd-amdhsa--gfx90a",
            "amdgcn-amd-amdhsa--gfx90a:xnack+",
            "amdgcn-amd-amdhsa--gfx1030",
        ]
        .map(String::from);
        assert_eq!(processors_of(&isas), ["gfx90a", "gfx1030"]);
        let c = Comgr {
            library: "libamd_comgr.so.2".into(),
            version: (2, 4),
            processors: processors_of(&isas),
        };
        assert!(c.knows("gfx90a:sramecc+:xnack-"));
        assert!(!c.knows("gfx940"));
    }

    #[test]
    fn target_names_are_a_processor_and_features_and_nothing_else() {
        for ok in [
            "gfx90a",
            "gfx1030",
            "gfx940",
            "gfx90a:xnack-",
            "gfx90a:sramecc+:xnack+",
        ] {
            assert!(is_target_name(ok), "{ok}");
        }
        for bad in [
            "",
            "gfx",
            "sm_90",
            "gfx90a -DX",
            "gfx90a:xnack",
            "gfx90a:",
            "--gfx90a",
        ] {
            assert!(!is_target_name(bad), "{bad}");
        }
    }

    #[test]
    fn comgr_temporary_paths_in_the_log_become_the_program_and_header_names() {
        let log = "/tmp/comgr-808e15/input/CompileSource:3:7: error: expected ';'\n\
                   In file included from /tmp/comgr-808e15/input/CompileSource:1:\n\
                   /tmp/comgr-808e15/include/gpuio/api.h:12:3: note: here\n\
                   1 error generated when compiling for gfx90a.";
        assert_eq!(
            name_comgr_paths(log, "bad.hip"),
            "bad.hip:3:7: error: expected ';'\n\
             In file included from bad.hip:1:\n\
             gpuio/api.h:12:3: note: here\n\
             1 error generated when compiling for gfx90a."
        );
        let untouched = "see /comgr-x for details; relative comgr-1/input/CompileSource";
        assert_eq!(name_comgr_paths(untouched, "k.hip"), untouched);
    }

    #[test]
    fn cache_key_covers_source_name_options_headers_and_library() {
        let src = gpuio_device::header::KERNELS_SOURCE;
        let h = gpuio_device::header::HEADERS;
        let o = options("gfx90a");
        let lib = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153";
        let k = cache_key("conformance.hip", src, h, &o, lib);
        assert_eq!(k, cache_key("conformance.hip", src, h, &o, lib));
        assert_ne!(
            k,
            cache_key("conformance.hip", src, h, &options("gfx1030"), lib)
        );
        assert_ne!(k, cache_key("other.hip", src, h, &o, lib));
        assert_ne!(k, cache_key("conformance.hip", "", h, &o, lib));
        assert_ne!(k, cache_key("conformance.hip", src, &[], &o, lib));
        assert_ne!(
            k,
            cache_key("conformance.hip", src, h, &o, "libhiprtc.so.6")
        );
    }

    #[test]
    fn cache_files_live_under_gpuio_hip_and_name_target_and_hiprtc() {
        assert_eq!(
            cache_dir(Some("/x/cache".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/cache/gpuio/hip"))
        );
        assert_eq!(
            cache_dir(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.cache/gpuio/hip"))
        );
        assert_eq!(cache_dir(None, None), None);
        assert_eq!(
            cache_file_name(0x0123_4567_89ab_cdef, "gfx90a:xnack-", (9, 0)),
            "kernels-0123456789abcdef-gfx90a_xnack--hiprtc9.0.co"
        );
    }

    #[test]
    fn the_probe_line_says_what_compiles_and_that_nothing_runs() {
        let mut info = HiprtcInfo {
            library: "libamdhip64.so.5".into(),
            path: Some("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153".into()),
            version: (9, 0),
            comgr: Ok(Comgr {
                library: "libamd_comgr.so.2".into(),
                version: (2, 4),
                processors: vec!["gfx90a".into(), "gfx1030".into()],
            }),
        };
        let line = info.summary("gfx90a");
        assert!(
            line.starts_with("9.0 in libamdhip64.so.5 (libamdhip64.so.5.2.21153), comgr 2.4"),
            "{line}"
        );
        assert!(line.contains("compiles gpuio.h for gfx90a"), "{line}");
        assert!(line.contains("never run on AMD hardware"), "{line}");
        let line = info.summary("gfx940");
        assert!(line.contains("cannot compile for gfx940"), "{line}");
        info.comgr = Err("comgr was not found".into());
        let line = info.summary("gfx90a");
        assert!(line.contains("compiles nothing"), "{line}");
        assert!(line.contains("(comgr was not found)"), "{line}");
        assert!(line.contains("never run on AMD hardware"), "{line}");
    }
}
