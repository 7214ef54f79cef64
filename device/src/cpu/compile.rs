//! Kernel files compiled at run time by the host C++ compiler into shared objects,
//! cached on disk.
//!
//! **Compiler.** `CXX` when set (split at whitespace: a program, then arguments),
//! else the first of `c++`, `g++`, `clang++` on `PATH`; its `--version` first line
//! is its identity. A launcher chooses once per process ([`Compiler::new`]); tests
//! and tools choose explicitly ([`Cxx::find`]) without touching the environment.
//!
//! **Object.** Two units are compiled with [`FLAGS`] and linked into one shared
//! object: the user's file, as given, and the CPU runtime (`cpu/runtime_body.h`,
//! embedded), whose runner is `gpuio_cpu_module_run_thread`. The object carries its
//! own `gpuio_cpu_self` because it cannot use the executable's (a Rust executable
//! exports none of its symbols). `-fvisibility=hidden` keeps everything but the runner
//! and the kernels (`GPUIO_KERNEL` exports them) inside the object, so its copy of
//! the runtime never meets the executable's; `-Wl,-z,defs` turns a missing symbol
//! into a compile error rather than a failed load.
//!
//! **Headers.** `gpuio.h` comes from [`crate::header::HEADERS`], the texts embedded
//! in the binary, written once into `include-<hash>/` in the cache: a binary copied
//! alone to another machine compiles there without the source tree.
//!
//! **Cache.** [`cache_dir`]: `$XDG_CACHE_HOME/gpuio/cpu` (else
//! `~/.cache/gpuio/cpu`), beside the NVRTC images of the CUDA backend. One file per
//! (source, name, compiler identity, flags, header, runtime), named
//! `<name stem>-<hash>.so` ([`cache_key`]); compiled under a temporary name and then
//! renamed, so a reader never sees half an object. Without a usable cache directory
//! the objects go to a private temporary directory of this process (no reuse).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::CpuModule;
use crate::DeviceError;

/// Flags of every compile, before the include directory, output and sources.
pub const FLAGS: &[&str] = &[
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-pthread",
    "-fvisibility=hidden",
    "-Wl,-z,defs",
    "-x",
    "c++",
];

/// The runner the runtime unit defines in every object (see `cpu/runtime_body.h`).
pub(crate) const RUNNER: &str = "gpuio_cpu_module_run_thread";

/// The runtime's text, compiled into every object.
const RUNTIME_BODY: &str = include_str!("../../cpu/runtime_body.h");

/// The runtime unit's file name in a build directory.
const RUNTIME_UNIT: &str = "gpuio-cpu-runtime.cpp";

/// Compilers looked for on `PATH` when `CXX` is not set, in order.
const CANDIDATES: [&str; 3] = ["c++", "g++", "clang++"];

/// Build directories and temporary files of concurrent compiles in this process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// A host C++ compiler, found and asked who it is.
#[derive(Clone, Debug)]
pub struct Cxx {
    program: PathBuf,
    args: Vec<String>,
    version: String,
}

impl Cxx {
    /// `CXX` if set, else the first of `c++`, `g++`, `clang++` on `PATH`.
    pub fn from_env() -> Result<Self, DeviceError> {
        Self::find(
            std::env::var_os("CXX").as_deref(),
            std::env::var_os("PATH").as_deref(),
        )
    }

    /// As [`Cxx::from_env`], with the values of `CXX` and `PATH` given: a
    /// non-empty `cxx` is used as is (an error if it cannot be run; no fallback),
    /// else the candidates are looked for in `path`.
    pub fn find(cxx: Option<&OsStr>, path: Option<&OsStr>) -> Result<Self, DeviceError> {
        let Some(cxx) = cxx.filter(|c| !c.is_empty()) else {
            let found = CANDIDATES.iter().find_map(|c| which(c, path));
            return match found {
                Some(program) => Self::ask(program, Vec::new(), "PATH"),
                None => Err(DeviceError::NoCompiler(
                    "no C++ compiler found for the CPU device (tried $CXX, then c++, g++, \
                     clang++ on PATH): install g++ or clang++, or set CXX to one"
                        .to_string(),
                )),
            };
        };
        let text = cxx.to_str().ok_or_else(|| {
            DeviceError::NoCompiler(format!(
                "CXX={} is not valid UTF-8: set CXX to a C++ compiler",
                cxx.to_string_lossy()
            ))
        })?;
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else {
            return Self::find(None, path);
        };
        let args = words.map(str::to_string).collect();
        let program = if first.contains('/') {
            PathBuf::from(first)
        } else {
            which(first, path).unwrap_or_else(|| PathBuf::from(first))
        };
        Self::ask(program, args, "CXX")
    }

    /// Runs `program args --version` for the identity.
    fn ask(program: PathBuf, args: Vec<String>, from: &str) -> Result<Self, DeviceError> {
        let out = Command::new(&program)
            .args(&args)
            .arg("--version")
            .output()
            .map_err(|e| {
                DeviceError::NoCompiler(format!(
                    "cannot run the C++ compiler {} (from {from}): {e}; install g++ or \
                     clang++, or set CXX to one",
                    program.display()
                ))
            })?;
        if !out.status.success() {
            return Err(DeviceError::NoCompiler(format!(
                "the C++ compiler {} (from {from}) fails on --version ({}): {}",
                program.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        Ok(Self {
            program,
            args,
            version,
        })
    }

    /// The program run (a path when found on `PATH`).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The first line of its `--version`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A command that runs it: the program, then the arguments `CXX` gave.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        cmd
    }
}

/// `name` in the directories of `path`, if it is an executable file there.
fn which(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// A compiled kernel file.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The shared object, in the cache.
    pub path: PathBuf,
    /// Found in the cache rather than compiled now (the compiler did not run).
    pub cached: bool,
    /// The compiler's output (warnings); empty when cached.
    pub log: String,
}

/// Builds kernel files for the CPU device: a host compiler and a cache directory.
#[derive(Clone, Debug)]
pub struct Compiler {
    cxx: Cxx,
    cache: PathBuf,
}

impl Compiler {
    /// The compiler of [`Cxx::from_env`], caching in [`cache_dir`] (or, when that
    /// cannot be created, in a new private temporary directory).
    pub fn new() -> Result<Self, DeviceError> {
        let cxx = Cxx::from_env()?;
        let cache = cache_dir(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
            .filter(|d| std::fs::create_dir_all(d).is_ok());
        let cache = match cache {
            Some(d) => d,
            None => private_temp_dir()?,
        };
        Ok(Self { cxx, cache })
    }

    /// `cxx`, caching in `cache` (created when needed).
    pub fn with_cache(cxx: Cxx, cache: impl Into<PathBuf>) -> Self {
        Self {
            cxx,
            cache: cache.into(),
        }
    }

    /// The host compiler.
    pub fn cxx(&self) -> &Cxx {
        &self.cxx
    }

    /// The cache directory.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// Compiles `source` (a kernel file that includes `gpuio.h`; `name` names it
    /// in diagnostics) and loads it. A cached object that does not load is
    /// compiled afresh once.
    pub fn load(&self, name: &str, source: &str) -> Result<Arc<CpuModule>, DeviceError> {
        let object = self.compile(name, source)?;
        if !object.cached {
            return Ok(Arc::new(CpuModule::open(name, object)?));
        }
        let path = object.path.clone();
        match CpuModule::open(name, object) {
            Ok(m) => Ok(Arc::new(m)),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cached CPU module refused; recompiling");
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::debug!(path = %path.display(), error = %e, "cannot evict");
                }
                Ok(Arc::new(CpuModule::open(
                    name,
                    self.compile(name, source)?,
                )?))
            }
        }
    }

    /// The shared object for `source`: from the cache, or compiled into it.
    pub fn compile(&self, name: &str, source: &str) -> Result<Compiled, DeviceError> {
        let key = cache_key(name, source, &self.cxx);
        let file = unit_name(name);
        let stem = Path::new(&file)
            .file_stem()
            .map_or("kernel".into(), |s| s.to_string_lossy());
        let path = self.cache.join(format!("{stem}-{key:016x}.so"));
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0) {
            tracing::debug!(path = %path.display(), "CPU module from cache");
            return Ok(Compiled {
                path,
                cached: true,
                log: String::new(),
            });
        }
        let fail = |what: &str, p: &Path, e: std::io::Error| DeviceError::Kernel {
            kernel: name.to_string(),
            message: format!("{what} {}: {e}", p.display()),
        };
        std::fs::create_dir_all(&self.cache)
            .map_err(|e| fail("cannot create the cache directory", &self.cache, e))?;
        let include = self
            .headers()
            .map_err(|(p, e)| fail("cannot write", &p, e))?;
        let seq = format!(
            "{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let build = self.cache.join(format!("build-{key:016x}-{seq}"));
        let tmp = self.cache.join(format!("{stem}-{key:016x}.so.tmp{seq}"));
        let span = tracing::info_span!("cpu.compile", name, cxx = %self.cxx.program.display());
        let _enter = span.enter();
        let compiled = (|| {
            std::fs::create_dir_all(&build).map_err(|e| fail("cannot create", &build, e))?;
            write(&build.join(&file), source).map_err(|(p, e)| fail("cannot write", &p, e))?;
            let runtime = format!("#define GPUIO_CPU_RUNNER {RUNNER}\n{RUNTIME_BODY}");
            write(&build.join(RUNTIME_UNIT), &runtime)
                .map_err(|(p, e)| fail("cannot write", &p, e))?;
            // Relative source names (run in `build`), so diagnostics name the file
            // as the user did.
            let out = self
                .cxx
                .command()
                .args(FLAGS)
                .arg("-I")
                .arg(&include)
                .arg("-o")
                .arg(&tmp)
                .arg(&file)
                .arg(RUNTIME_UNIT)
                .current_dir(&build)
                .output()
                .map_err(|e| {
                    DeviceError::NoCompiler(format!(
                        "cannot run the C++ compiler {}: {e}",
                        self.cxx.program.display()
                    ))
                })?;
            let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
            log.push_str(&String::from_utf8_lossy(&out.stdout));
            if !out.status.success() {
                if log.trim().is_empty() {
                    log = format!("{} exited with {}", self.cxx.program.display(), out.status);
                }
                return Err(DeviceError::Compile {
                    name: name.to_string(),
                    log,
                });
            }
            std::fs::rename(&tmp, &path).map_err(|e| fail("cannot store", &path, e))?;
            Ok(log)
        })();
        if let Err(e) = std::fs::remove_dir_all(&build) {
            tracing::debug!(dir = %build.display(), error = %e, "build directory not removed");
        }
        let log = compiled.inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        if !log.trim().is_empty() {
            tracing::info!(log = %log, "the C++ compiler said");
        }
        Ok(Compiled {
            path,
            cached: false,
            log,
        })
    }

    /// `include-<hash>/` in the cache, holding the embedded header; written on first
    /// use (into a temporary directory, then renamed).
    fn headers(&self) -> Result<PathBuf, (PathBuf, std::io::Error)> {
        let hash = crate::header::source_hash("include");
        let dir = self.cache.join(format!("include-{hash:016x}"));
        if dir.is_dir() {
            return Ok(dir);
        }
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = self.cache.join(format!(
            "include-{hash:016x}.tmp{}-{seq}",
            std::process::id()
        ));
        let written = crate::header::HEADERS
            .iter()
            .try_for_each(|(name, text)| write(&tmp.join(name), text))
            .and_then(|()| std::fs::rename(&tmp, &dir).map_err(|e| (dir.clone(), e)));
        match written {
            Ok(()) => Ok(dir),
            // Another compile put it there first.
            Err(_) if dir.is_dir() => {
                let _ = std::fs::remove_dir_all(&tmp);
                Ok(dir)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                Err(e)
            }
        }
    }
}

/// Writes `text` to `path`, creating its directory.
fn write(path: &Path, text: &str) -> Result<(), (PathBuf, std::io::Error)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| (dir.to_path_buf(), e))?;
    }
    std::fs::write(path, text).map_err(|e| (path.to_path_buf(), e))
}

/// The file name the user's unit gets in a build directory: the last part of
/// `name`, with anything but `[A-Za-z0-9._+-]` replaced by `_`.
fn unit_name(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let clean: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match clean.trim_start_matches('.') {
        "" => "kernel.cpp".to_string(),
        _ if clean == RUNTIME_UNIT => format!("user-{clean}"),
        _ => clean,
    }
}

/// A new directory only this user can enter, under the system's temporary directory.
fn private_temp_dir() -> Result<PathBuf, DeviceError> {
    use std::os::unix::fs::DirBuilderExt as _;
    let base = std::env::temp_dir();
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("gpuio-cpu-{}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(DeviceError::Kernel {
        kernel: String::new(),
        message: format!(
            "no cache directory ($XDG_CACHE_HOME and $HOME unusable) and none can be made in {}: {}",
            base.display(),
            last.map_or_else(String::new, |e| e.to_string())
        ),
    })
}

/// The CPU device's cache: `$XDG_CACHE_HOME/gpuio/cpu` when set and absolute,
/// else `$HOME/.cache/gpuio/cpu` (the CUDA backend's NVRTC cache is the `gpuio`
/// directory above it).
pub fn cache_dir(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    crate::header::cache_root(xdg_cache_home, home).map(|r| r.join("cpu"))
}

/// A stable hash of everything the object depends on: `source`, its `name`, the
/// compiler (program, arguments, `--version` line), [`FLAGS`], the header and the
/// runtime.
pub fn cache_key(name: &str, source: &str, cxx: &Cxx) -> u64 {
    crate::header::source_hash(&format!(
        "cpu\n{name}\n{}\n{}\n{}\n{}\n{RUNTIME_BODY}\n{source}",
        cxx.program.display(),
        cxx.args.join(" "),
        cxx.version,
        FLAGS.join(" "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cxx(version: &str) -> Cxx {
        Cxx {
            program: PathBuf::from("/usr/bin/c++"),
            args: Vec::new(),
            version: version.to_string(),
        }
    }

    #[test]
    fn cache_dir_prefers_xdg_cache_home_then_home() {
        assert_eq!(
            cache_dir(Some("/x/cache".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/cache/gpuio/cpu"))
        );
        assert_eq!(
            cache_dir(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.cache/gpuio/cpu"))
        );
        assert_eq!(cache_dir(None, None), None);
    }

    #[test]
    fn cache_key_covers_source_name_and_compiler_identity() {
        let k = cache_key("k.cpp", "int x;", &cxx("g++ 12"));
        assert_eq!(k, cache_key("k.cpp", "int x;", &cxx("g++ 12")));
        assert_ne!(k, cache_key("k.cpp", "int y;", &cxx("g++ 12")));
        assert_ne!(k, cache_key("j.cpp", "int x;", &cxx("g++ 12")));
        assert_ne!(k, cache_key("k.cpp", "int x;", &cxx("g++ 13")));
        let mut other = cxx("g++ 12");
        other.program = PathBuf::from("/opt/bin/c++");
        assert_ne!(k, cache_key("k.cpp", "int x;", &other));
    }

    #[test]
    fn unit_names_are_plain_file_names() {
        assert_eq!(unit_name("kernels/my kernel.cpp"), "my_kernel.cpp");
        assert_eq!(unit_name("a.cu"), "a.cu");
        assert_eq!(unit_name(""), "kernel.cpp");
        assert_eq!(unit_name(".."), "kernel.cpp");
        assert_eq!(unit_name(RUNTIME_UNIT), format!("user-{RUNTIME_UNIT}"));
    }

    #[test]
    fn no_compiler_on_path_says_what_was_tried_and_to_set_cxx() {
        let empty = tempfile::tempdir().unwrap();
        let e = Cxx::find(None, Some(empty.path().as_os_str())).unwrap_err();
        let DeviceError::NoCompiler(msg) = e else {
            panic!("unexpected: {e}")
        };
        for part in ["c++", "g++", "clang++", "CXX"] {
            assert!(msg.contains(part), "{msg}");
        }
    }
}
