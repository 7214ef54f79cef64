//! A kernel file loaded at run time: the shared object [`super::Compiler`] built,
//! opened with libloading (`RTLD_LOCAL`: its symbols stay out of the process's
//! global scope), its kernels looked up by name at launch.
//!
//! `dlsym` on a library handle also searches the libraries it depends on (libc,
//! libstdc++), so a name is a kernel of the module only when its address lies in
//! the module's own object (`dladdr`); `printf` is no kernel.

use std::borrow::Cow;
use std::ffi::{c_void, CString};
use std::path::Path;
use std::sync::Arc;

use gpuio_core::Channel;

use super::compile::{Compiled, RUNNER};
use super::{CpuDevice, CpuKernel, Image, KernelFn, RunnerFn};
use crate::{DeviceError, Module, RunningKernel};

/// An open shared object and its runner. Kernels of it hold an `Arc` to it, and
/// every launched thread a clone, so it is closed only after the last one ends.
#[derive(Debug)]
pub(crate) struct Loaded {
    lib: libloading::Library,
    runner: RunnerFn,
    /// Where the object is mapped (`dli_fbase`), to tell its symbols from those
    /// of its dependencies.
    base: usize,
}

impl Loaded {
    pub(crate) fn runner(&self) -> RunnerFn {
        self.runner
    }
}

/// Kernels compiled from one kernel file and loaded into this process.
#[derive(Debug)]
pub struct CpuModule {
    name: String,
    object: Compiled,
    loaded: Arc<Loaded>,
}

impl CpuModule {
    /// Opens `object`, compiled from the file `name`.
    pub(crate) fn open(name: &str, object: Compiled) -> Result<Self, DeviceError> {
        let refused = |message: String| DeviceError::Driver {
            call: "dlopen",
            message: format!("{name} ({}): {message}", object.path.display()),
        };
        // SAFETY: opening runs the object's initialisers: the C++ runtime's and the
        // static constructors of the user's kernel file, which the caller asked to
        // run (loading a kernel file means running its code). The object was built
        // by `Compiler` with -z defs, so it needs no symbol from this executable, and
        // it is opened RTLD_LOCAL, so its symbols replace none of ours.
        let lib = unsafe { libloading::Library::new(&object.path) }
            .map_err(|e| refused(e.to_string()))?;
        // SAFETY: every object `Compiler` builds defines RUNNER in its runtime unit
        // (cpu/runtime_body.h) with exactly `RunnerFn`'s signature; the pointer is
        // kept beside `lib` in `Loaded`, so it is never used after the object closes.
        let runner: RunnerFn = unsafe { lib.get::<RunnerFn>(RUNNER.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| refused(format!("no CPU runtime in the object: {e}")))?;
        let base = object_base(runner as *const c_void)
            .ok_or_else(|| refused("the runner's address is in no object".to_string()))?;
        Ok(Self {
            name: name.to_string(),
            object,
            loaded: Arc::new(Loaded { lib, runner, base }),
        })
    }

    /// The kernel `name` (its `GPUIO_KERNEL` name), or `NoSuchKernel` when the
    /// file defines none by that name.
    pub fn kernel(&self, name: &str) -> Result<CpuKernel, DeviceError> {
        let missing = || DeviceError::NoSuchKernel(name.to_string());
        if name == RUNNER {
            return Err(missing());
        }
        let symbol = CString::new(name).map_err(|_| missing())?;
        // SAFETY: the symbol is taken as an address only; it is called as a kernel
        // only if it lies in this object, whose exports are its kernels (extern "C",
        // `KernelFn`'s signature, by GPUIO_KERNEL) and the runner (excluded above),
        // everything else being hidden by -fvisibility=hidden. The pointer goes into
        // a `CpuKernel` that holds `self.loaded`, so it never outlives the object.
        let entry: KernelFn =
            unsafe { self.loaded.lib.get::<KernelFn>(symbol.as_bytes_with_nul()) }
                .map(|s| *s)
                .map_err(|_| missing())?;
        if object_base(entry as *const c_void) != Some(self.loaded.base) {
            return Err(missing());
        }
        Ok(CpuKernel {
            name: Cow::Owned(name.to_string()),
            entry,
            image: Image::Loaded(self.loaded.clone()),
        })
    }

    /// The name the source was loaded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shared object, in the cache.
    pub fn path(&self) -> &Path {
        &self.object.path
    }

    /// Whether the object came from the cache (the compiler did not run).
    pub fn cached(&self) -> bool {
        self.object.cached
    }

    /// The compiler's output (warnings); empty when cached.
    pub fn log(&self) -> &str {
        &self.object.log
    }
}

/// The base address of the object `addr` lies in, if any.
fn object_base(addr: *const c_void) -> Option<usize> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the dynamic loader's tables and writes `info`, a
    // valid `Dl_info`; `addr` is compared with mappings, never dereferenced.
    let found = unsafe { libc::dladdr(addr, &mut info) };
    (found != 0 && !info.dli_fbase.is_null()).then_some(info.dli_fbase as usize)
}

impl Module for CpuModule {
    fn launch(
        &self,
        kernel: &str,
        grid: u32,
        block: u32,
        channel: &Channel,
        params: &[u64],
    ) -> Result<Box<dyn RunningKernel>, DeviceError> {
        let k = self.kernel(kernel)?;
        Ok(Box::new(CpuDevice.launch(k, grid, block, channel, params)?))
    }
}
