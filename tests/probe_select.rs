//! Selection through the library: the CPU backend's transports follow the io_uring
//! facts (real ones, with single facts overridden through the probe seam).

mod probe_support;

use gpuio::backends::{AnyBackend, CpuBackend, CudaBackend};
use gpuio::core::backend::Availability;
use gpuio::core::probe::{Errno, FactName, Fakes, UringProbe};
use gpuio::core::HostMemory;
use gpuio::runtime::{Origin, Request};
use gpuio::{Runtime, SelectError};
use gpuio_backend_hsa_svm::HsaBackend;

/// The default backends, the CPU one with this machine's io_uring facts and `fakes`.
fn runtime(fakes: Fakes) -> Runtime {
    let uring = UringProbe::detect_with(&HostMemory, &fakes);
    Runtime::from_backends(vec![
        AnyBackend::from(CudaBackend::new()),
        AnyBackend::from(HsaBackend::new()),
        AnyBackend::from(CpuBackend::with_uring(uring)),
    ])
}

fn chosen(rt: &Runtime, request: Option<&str>) -> Result<String, SelectError> {
    let request = request
        .map(|r| Request::parse(r, Origin::Code))
        .transpose()?;
    rt.choose(request.as_ref()).map(|f| f.pair().to_string())
}

fn io_uring_works() -> bool {
    let u = UringProbe::detect_with(&HostMemory, &Fakes::none());
    if u.facts().all(|(_, f)| f.is_ok()) {
        return true;
    }
    probe_support::skip(
        "io_uring",
        &format!("not every io_uring fact holds here: {u:?}"),
    );
    false
}

#[test]
fn with_every_io_uring_fact_the_cpu_device_runs_direct() {
    if probe_support::libcuda_present() {
        return probe_support::skip("libcuda-absent", "libcuda loads on this machine");
    }
    if !io_uring_works() {
        return;
    }
    assert_eq!(chosen(&runtime(Fakes::none()), None).unwrap(), "cpu/direct");
}

#[test]
fn without_no_mmap_forward_is_chosen_over_direct() {
    if probe_support::libcuda_present() {
        return probe_support::skip("libcuda-absent", "libcuda loads on this machine");
    }
    if !io_uring_works() {
        return;
    }
    let rt = runtime(Fakes::none().refuse(FactName::NoMmap, Errno::INVAL));
    assert_eq!(chosen(&rt, None).unwrap(), "cpu/forward");
    assert_eq!(chosen(&rt, Some("cpu")).unwrap(), "cpu/forward");
    let e = chosen(&rt, Some("cpu/direct")).unwrap_err();
    assert!(
        e.to_string()
            .contains("IORING_SETUP_NO_MMAP is unsupported"),
        "{e}"
    );
}

#[test]
fn each_missing_direct_fact_is_named_and_leaves_forward() {
    if !io_uring_works() {
        return;
    }
    for fact in [
        FactName::Sqpoll,
        FactName::Restrictions,
        FactName::EnableRings,
        FactName::FixedBuffers,
    ] {
        let rt = runtime(Fakes::none().refuse(fact, Errno::PERM));
        let cpu = rt.probes().find(|p| p.backend == "cpu").unwrap();
        let Availability::Unavailable { reason } =
            cpu.availability(gpuio::core::TransportKind::Direct)
        else {
            panic!("direct available without {}", fact.name());
        };
        assert!(reason.contains("EPERM"), "{reason}");
        assert!(cpu
            .availability(gpuio::core::TransportKind::Forward)
            .is_available());
    }
}

#[test]
fn without_io_uring_only_the_mailbox_is_left() {
    if probe_support::libcuda_present() {
        return probe_support::skip("libcuda-absent", "libcuda loads on this machine");
    }
    for errno in [Errno::PERM, Errno::NOSYS] {
        let rt = runtime(Fakes::none().refuse(FactName::Setup, errno));
        assert_eq!(chosen(&rt, None).unwrap(), "cpu/mailbox");
        let e = chosen(&rt, Some("cpu/forward")).unwrap_err();
        assert!(
            e.to_string()
                .contains("the mailbox transport needs no io_uring"),
            "{e}"
        );
    }
}

#[test]
fn runtime_with_an_unavailable_pair_is_an_error_never_a_fallback() {
    if probe_support::libcuda_present() {
        return probe_support::skip("libcuda-absent", "libcuda loads on this machine");
    }
    let e = Runtime::with("cuda/direct").unwrap_err();
    assert!(matches!(e, SelectError::Unavailable { .. }), "{e:?}");
    assert!(e.to_string().contains("libcuda not found"), "{e}");
    assert_eq!(
        Runtime::with("cpu/mailbox").unwrap().pair().to_string(),
        "cpu/mailbox"
    );
}
