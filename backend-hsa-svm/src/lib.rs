//! gpuio-backend-hsa-svm: AMD GPUs through HSA fine-grained memory (probing and
//! compiling only, for now).
//!
//! Layers as in cudarc: [`sys`] (libloading tables of the HSA runtime's, hiprtc's and
//! comgr's functions, each opened once, every name tried reported) → [`result`] (each
//! call checked, a typed error with the runtime's text) → [`probe`] (what the machine
//! has, as data) and [`hiprtc`] (a [`Compiler`](hiprtc::Compiler) turning `gpuio.h`
//! kernels into AMD code objects). [`HsaBackend`] answers the backend role with that
//! data; it cannot open channels yet (no HSA memory provider or device runner), so
//! every transport is unavailable with the reason, and `open` says so: gpuio's AMD
//! kernels are compiled, never run on AMD hardware.

pub mod hiprtc;
pub mod probe;
pub mod result;
pub mod sys;

use std::sync::Arc;

use gpuio_core::backend::{Availability, Backend, BackendProbe, Capability};
use gpuio_core::device::Device;
use gpuio_core::TransportKind;

use probe::HsaFindings;

/// The AMD backend: HSA fine-grained SVM memory.
#[derive(Debug, Default, Clone, Copy)]
pub struct HsaBackend;

impl HsaBackend {
    pub const NAME: &'static str = "hsa";

    pub fn new() -> Self {
        Self
    }

    /// The probe's answer built from `findings` (what [`Backend::probe`] returns).
    pub fn probe_from(findings: &HsaFindings) -> BackendProbe {
        let verdict = findings.verdict();
        let reason = match &verdict {
            Ok(gpus) => format!(
                "found {gpus} with fine-grained memory, but gpuio's HSA memory provider and \
                 device runner are not built yet ({}); use the cuda or cpu backend",
                hiprtc::NEVER_RUN
            ),
            Err(why) => why.clone(),
        };
        BackendProbe {
            backend: Self::NAME,
            device: match &verdict {
                Ok(gpus) => gpus.clone(),
                Err(_) => "none".to_string(),
            },
            capabilities: capabilities(findings),
            transports: TransportKind::ALL
                .into_iter()
                .map(|t| {
                    (
                        t,
                        Availability::Unavailable {
                            reason: reason.clone(),
                        },
                    )
                })
                .collect(),
        }
    }
}

fn capabilities(f: &HsaFindings) -> Vec<Capability> {
    let mut caps = vec![
        Capability::new(
            "library",
            match &f.library {
                Ok(name) => name.clone(),
                Err(e) => e.to_string(),
            },
        ),
        Capability::new("/dev/kfd", if f.kfd { "present" } else { "absent" }),
    ];
    if let Some(init) = &f.init {
        caps.push(Capability::new(
            "hsa_init",
            match init {
                Ok(()) => "ok".to_string(),
                Err(e) => e.to_string(),
            },
        ));
    }
    if f.init == Some(Ok(())) {
        caps.push(Capability::new("gpu agents", f.gpus().count()));
        for (i, a) in f.agents.iter().enumerate() {
            let kind = match a.device_type {
                sys::HSA_DEVICE_TYPE_GPU => "gpu",
                sys::HSA_DEVICE_TYPE_CPU => "cpu",
                _ => "other",
            };
            let fine: usize = a.fine_grained_pools.iter().sum();
            caps.push(Capability::new(
                format!("agent {i}"),
                format!(
                    "{kind} {}: {} fine-grained global pools ({} MiB), {} coarse-grained",
                    a.describe(),
                    a.fine_grained_pools.len(),
                    fine >> 20,
                    a.coarse_grained_pools
                ),
            ));
        }
    }
    caps.push(Capability::new(
        "hiprtc",
        match &f.hiprtc {
            Ok(info) => info.summary(hiprtc::PROBE_ARCH),
            Err(e) => format!("unavailable: {e}; {}", hiprtc::NEVER_RUN),
        },
    ));
    caps
}

impl Backend for HsaBackend {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn is_gpu(&self) -> bool {
        true
    }

    fn probe(&self) -> BackendProbe {
        Self::probe_from(&HsaFindings::detect())
    }

    fn device(&self) -> Result<Arc<dyn Device>, String> {
        Err(format!(
            "the HSA backend has no device runner or memory provider yet ({})",
            hiprtc::NEVER_RUN
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiprtc::HiprtcError;
    use crate::result::HsaError;
    use crate::sys::LoadError;

    #[test]
    fn a_missing_library_is_an_error_listing_every_name_tried() {
        let e = sys::Lib::open(&["libgpuio-no-such-hsa.so.1", "/nowhere/libhsa.so"]).unwrap_err();
        let LoadError::NotFound { tried, .. } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(tried.len(), 2);
        let text = e.to_string();
        assert!(text.contains("libgpuio-no-such-hsa.so.1"), "{text}");
        assert!(text.contains("/nowhere/libhsa.so"), "{text}");
    }

    #[test]
    fn a_library_without_hsa_symbols_is_an_error_naming_the_symbol_not_a_panic() {
        // libc loads everywhere and has no hsa_init.
        let e = sys::Lib::open(&["libc.so.6"]).unwrap_err();
        assert!(
            matches!(
                &e,
                LoadError::MissingSymbol {
                    symbol: "hsa_init",
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn no_dev_kfd_is_its_own_reason() {
        let e = HsaError {
            call: "hsa_init",
            status: sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
            text: None,
        };
        let without = probe::init_failure_reason(&e, false);
        assert!(without.starts_with("no /dev/kfd: the amdgpu kernel driver is not loaded or this container was not given the device"), "{without}");
        assert!(
            without.contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
            "{without}"
        );
        let with = probe::init_failure_reason(&e, true);
        assert!(!with.contains("no /dev/kfd"), "{with}");
    }

    #[test]
    fn the_probe_never_offers_a_transport_and_there_is_no_device_yet() {
        let p = HsaBackend.probe();
        assert_eq!(p.backend, "hsa");
        assert_eq!(p.transports.len(), 3);
        for (_, a) in &p.transports {
            let Availability::Unavailable { reason } = a else {
                panic!("hsa transport available: {a:?}");
            };
            assert!(!reason.is_empty());
        }
        let err = HsaBackend.device().err().expect("no HSA device yet");
        assert!(err.contains("never run on AMD hardware"), "{err}");
    }

    #[test]
    fn without_the_runtime_installed_the_reason_says_how_to_install_it() {
        let f = HsaFindings {
            library: Err(LoadError::NotFound {
                what: sys::Lib::WHAT,
                tried: vec![("libhsa-runtime64.so.1".into(), "not found".into())],
            }),
            kfd: false,
            init: None,
            agents: vec![],
            walk: None,
            hiprtc: Err(no_hiprtc()),
        };
        let reason = f.verdict().unwrap_err();
        assert!(reason.contains("libhsa-runtime64.so.1"), "{reason}");
        assert!(reason.contains("install"), "{reason}");
    }

    #[test]
    fn a_gpu_with_fine_grained_memory_is_found_but_not_yet_usable() {
        let f = HsaFindings {
            library: Ok("libhsa-runtime64.so.1".into()),
            kfd: true,
            init: Some(Ok(())),
            agents: vec![
                probe::Agent {
                    name: "AMD EPYC".into(),
                    product: None,
                    device_type: sys::HSA_DEVICE_TYPE_CPU,
                    fine_grained_pools: vec![1 << 30],
                    coarse_grained_pools: 0,
                },
                probe::Agent {
                    name: "gfx90a".into(),
                    product: Some("AMD Instinct MI210".into()),
                    device_type: sys::HSA_DEVICE_TYPE_GPU,
                    fine_grained_pools: vec![],
                    coarse_grained_pools: 1,
                },
            ],
            walk: None,
            hiprtc: Err(no_hiprtc()),
        };
        assert_eq!(f.verdict(), Ok("AMD Instinct MI210 (gfx90a)".to_string()));
        let p = HsaBackend::probe_from(&f);
        assert_eq!(p.device, "AMD Instinct MI210 (gfx90a)");
        assert!(p.transports.iter().all(|(_, a)| !a.is_available()));
        for (_, a) in &p.transports {
            let Availability::Unavailable { reason } = a else {
                unreachable!()
            };
            assert!(reason.contains("never run on AMD hardware"), "{reason}");
        }
    }

    fn no_hiprtc() -> HiprtcError {
        HiprtcError::Library(LoadError::NotFound {
            what: sys::HiprtcLib::WHAT,
            tried: vec![("libamdhip64.so.5".into(), "not found".into())],
        })
    }

    #[test]
    fn the_probe_has_a_hiprtc_line_that_says_amd_kernels_never_run() {
        let p = HsaBackend.probe();
        let line = p
            .capabilities
            .iter()
            .find(|c| c.name == "hiprtc")
            .expect("a hiprtc capability");
        eprintln!("hiprtc: {}", line.value);
        assert!(
            line.value.contains("never run on AMD hardware"),
            "{}",
            line.value
        );
        // Present: a version and what it compiles for; absent: the names tried.
        assert!(
            line.value.contains("compiles gpuio.h for gfx90a")
                || line.value.contains("cannot compile for gfx90a")
                || line.value.contains("compiles nothing")
                || line.value.contains("was not found"),
            "{}",
            line.value
        );
    }

    #[test]
    fn without_hiprtc_the_probe_line_names_what_was_tried_and_how_to_install_it() {
        let f = HsaFindings {
            library: Ok("libhsa-runtime64.so.1".into()),
            kfd: false,
            init: None,
            agents: vec![],
            walk: None,
            hiprtc: Err(no_hiprtc()),
        };
        let caps = capabilities(&f);
        let line = &caps.iter().find(|c| c.name == "hiprtc").unwrap().value;
        assert!(line.starts_with("unavailable: hiprtc"), "{line}");
        assert!(line.contains("libamdhip64.so.5: not found"), "{line}");
        assert!(line.contains("GPUIO_HIPRTC_LIB"), "{line}");
        assert!(line.contains("never run on AMD hardware"), "{line}");
    }
}
