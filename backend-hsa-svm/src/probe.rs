//! What the HSA runtime finds here: the library, `hsa_init`, GPU agents and their
//! fine-grained global memory pools — as data, with a verdict a person can act on.
//! Beside it, whether hiprtc is here to compile kernels for AMD GPUs (its version and
//! targets only: the probe compiles nothing).

use std::path::Path;

use crate::hiprtc::{HiprtcError, HiprtcInfo};
use crate::result::{self, HsaError};
use crate::sys::{self, LoadError};

/// The KFD device node the ROCm runtime talks to.
pub const KFD_PATH: &str = "/dev/kfd";

/// One HSA agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// `HSA_AGENT_INFO_NAME` (`gfx90a`, or the CPU's name).
    pub name: String,
    /// `HSA_AMD_AGENT_INFO_PRODUCT_NAME` where the runtime gives it.
    pub product: Option<String>,
    /// `hsa_device_type_t`.
    pub device_type: u32,
    /// Sizes in bytes of the agent's fine-grained pools in the global segment.
    pub fine_grained_pools: Vec<usize>,
    /// How many coarse-grained global pools it has.
    pub coarse_grained_pools: usize,
}

impl Agent {
    pub fn is_gpu(&self) -> bool {
        self.device_type == sys::HSA_DEVICE_TYPE_GPU
    }

    /// "AMD Instinct MI210 (gfx90a)".
    pub fn describe(&self) -> String {
        match &self.product {
            Some(p) if !p.is_empty() && *p != self.name => format!("{p} ({})", self.name),
            _ => self.name.clone(),
        }
    }
}

/// Everything the probe found, step by step; later steps are empty when an
/// earlier one failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HsaFindings {
    /// The library that opened, or why none did.
    pub library: Result<String, LoadError>,
    /// Whether `/dev/kfd` exists.
    pub kfd: bool,
    /// `hsa_init`'s result, when the library loaded.
    pub init: Option<Result<(), HsaError>>,
    /// Every agent (CPU and GPU) and its pools, when `hsa_init` succeeded.
    pub agents: Vec<Agent>,
    /// A failure while walking agents or pools.
    pub walk: Option<HsaError>,
    /// hiprtc's version and comgr's targets, or why hiprtc is not here.
    pub hiprtc: Result<HiprtcInfo, HiprtcError>,
}

impl HsaFindings {
    /// Asks the runtime. Never panics; an `hsa_init` it makes is shut down again.
    pub fn detect() -> Self {
        let kfd = Path::new(KFD_PATH).exists();
        let hiprtc = HiprtcInfo::detect();
        let lib = match sys::lib() {
            Ok(lib) => lib,
            Err(e) => {
                return Self {
                    library: Err(e),
                    kfd,
                    init: None,
                    agents: Vec::new(),
                    walk: None,
                    hiprtc,
                }
            }
        };
        let mut findings = Self {
            library: Ok(lib.name.clone()),
            kfd,
            init: Some(result::init(lib)),
            agents: Vec::new(),
            walk: None,
            hiprtc,
        };
        if let Some(Ok(())) = findings.init {
            match walk(lib) {
                Ok(agents) => findings.agents = agents,
                Err(e) => findings.walk = Some(e),
            }
            if let Err(e) = result::shut_down(lib) {
                tracing::warn!(error = %e, "hsa_shut_down after probing");
            }
        }
        tracing::debug!(?findings, "HSA probe");
        findings
    }

    pub fn gpus(&self) -> impl Iterator<Item = &Agent> {
        self.agents.iter().filter(|a| a.is_gpu())
    }

    /// The GPU the backend would use, or why there is none, in words.
    pub fn verdict(&self) -> Result<String, String> {
        match &self.library {
            Err(LoadError::NotFound { .. }) => {
                return Err(format!(
                    "{}: install the ROCm HSA runtime (package hsa-rocr / rocm-hsa-runtime) \
                     or point {} at libhsa-runtime64.so.1",
                    self.library
                        .as_ref()
                        .err()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                    sys::LIB_ENV
                ))
            }
            Err(e) => return Err(e.to_string()),
            Ok(_) => {}
        }
        if let Some(Err(e)) = &self.init {
            return Err(init_failure_reason(e, self.kfd));
        }
        if let Some(e) = &self.walk {
            return Err(format!("listing HSA agents failed: {e}"));
        }
        let gpus: Vec<&Agent> = self.gpus().collect();
        if gpus.is_empty() {
            return Err(format!(
                "the HSA runtime sees no GPU agent ({} agents, none a GPU): \
                 is the GPU supported by this ROCm release?",
                self.agents.len()
            ));
        }
        // Host-visible fine-grained memory is what the SVM provider allocates from:
        // a CPU agent's pool (system memory the GPU can reach) or the GPU's own.
        if !self.agents.iter().any(|a| !a.fine_grained_pools.is_empty()) {
            return Err(
                "no agent offers a fine-grained global memory pool, which host-polled \
                        rings need (check the amdgpu driver's and ROCm's versions)"
                    .to_string(),
            );
        }
        Ok(gpus
            .iter()
            .map(|g| g.describe())
            .collect::<Vec<_>>()
            .join(", "))
    }
}

/// Why `hsa_init` failed. A missing `/dev/kfd` is a reason of its own: the runtime
/// is installed, the device is not reachable.
pub fn init_failure_reason(e: &HsaError, kfd_present: bool) -> String {
    if kfd_present {
        format!(
            "{e}: the HSA runtime is installed and /dev/kfd exists, but the runtime could not \
             start (is this user in the `render`/`video` group? does `rocminfo` work?)"
        )
    } else {
        format!(
            "no /dev/kfd: the amdgpu kernel driver is not loaded or this container was not \
             given the device (pass --device=/dev/kfd --device=/dev/dri); {e}"
        )
    }
}

fn walk(lib: &sys::Lib) -> Result<Vec<Agent>, HsaError> {
    let mut out = Vec::new();
    for agent in result::agents(lib)? {
        let device_type = result::agent_u32(lib, agent, sys::HSA_AGENT_INFO_DEVICE)?;
        let name = result::agent_string(lib, agent, sys::HSA_AGENT_INFO_NAME)?;
        let product = result::agent_string(lib, agent, sys::HSA_AMD_AGENT_INFO_PRODUCT_NAME).ok();
        let mut fine_grained_pools = Vec::new();
        let mut coarse_grained_pools = 0;
        for pool in result::memory_pools(lib, agent)? {
            if result::pool_u32(lib, pool, sys::HSA_AMD_MEMORY_POOL_INFO_SEGMENT)?
                != sys::HSA_AMD_SEGMENT_GLOBAL
            {
                continue;
            }
            let flags = result::pool_u32(lib, pool, sys::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS)?;
            if flags & sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0 {
                fine_grained_pools.push(result::pool_usize(
                    lib,
                    pool,
                    sys::HSA_AMD_MEMORY_POOL_INFO_SIZE,
                )?);
            } else if flags & sys::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0 {
                coarse_grained_pools += 1;
            }
        }
        out.push(Agent {
            name,
            product,
            device_type,
            fine_grained_pools,
            coarse_grained_pools,
        });
    }
    Ok(out)
}
