//! Where io_uring is blocked: `gpuio probe` runs in a child process whose seccomp
//! filter makes `io_uring_setup` fail (EPERM as container runtimes' default
//! profiles do, or ENOSYS as a kernel without io_uring does). The mailbox pair must
//! be chosen, and the report must name the cause.
//!
//! The filter is built with `seccompiler` (rust-vmm's, used by Firecracker): it
//! emits the architecture check and the syscall-number match for us, so no BPF is
//! hand-assembled here. It is compiled in the parent and only installed in the
//! child (`pre_exec`, after fork: `apply_filter` makes just `prctl` and `seccomp`
//! calls, no allocation).

mod probe_support;

use std::os::unix::process::CommandExt;
use std::process::Output;

use probe_support::{gpuio, libcuda_present, line, report, row, skip, stderr, stdout};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

/// A filter that fails `io_uring_setup` with `errno` and allows everything else.
fn refuse_io_uring_setup(errno: i32) -> BpfProgram {
    let arch = TargetArch::try_from(std::env::consts::ARCH).expect("x86_64 or aarch64");
    let filter = SeccompFilter::new(
        // An empty rule list matches the syscall whatever its arguments.
        [(libc::SYS_io_uring_setup, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .expect("a valid filter");
    filter.try_into().expect("the filter compiles to BPF")
}

/// Runs `gpuio <args>` under `filter`.
fn gpuio_filtered(args: &[&str], filter: BpfProgram) -> Output {
    let mut cmd = gpuio(args);
    // SAFETY: the closure runs in the forked child before exec; it only makes the
    // prctl and seccomp system calls (no allocation, no locks), which is
    // async-signal-safe, and reads `filter`, moved into it before the fork.
    unsafe {
        cmd.pre_exec(move || {
            seccompiler::apply_filter(&filter).map_err(|_| std::io::Error::last_os_error())
        });
    }
    cmd.output()
        .expect("the gpuio binary runs under the filter")
}

fn mailbox_is_chosen_and_the_cause_is_named(errno: i32, name: &str, cause: &str) {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    let o = gpuio_filtered(&["probe", "--json"], refuse_io_uring_setup(errno));
    assert!(o.status.success(), "{}", stderr(&o));
    let json = report(&o);
    assert_eq!(json["chosen"], "cpu/mailbox", "{json:#}");
    for t in ["direct", "forward"] {
        let r = row(&json, "cpu", t);
        assert_eq!(r["available"], false, "{r}");
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("io_uring_setup: {name} — ")),
            "{reason}"
        );
        assert!(reason.contains(cause), "{reason}");
        assert!(
            reason.contains("the mailbox transport needs no io_uring"),
            "{reason}"
        );
    }
    assert_eq!(row(&json, "cpu", "mailbox")["available"], true);

    let o = gpuio_filtered(&["probe"], refuse_io_uring_setup(errno));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(line(&text, "cpu", "mailbox").starts_with('*'), "{text}");
    assert!(
        line(&text, "cpu", "direct").contains(&format!("io_uring_setup: {name}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("io_uring.setup: io_uring_setup: {name}")),
        "{text}"
    );
    assert!(text.lines().any(|l| l == "chosen: cpu/mailbox"), "{text}");

    // Forcing a pair that needs io_uring stops with the same cause.
    let mut cmd = gpuio(&["--backend", "cpu/forward", "probe"]);
    let filter = refuse_io_uring_setup(errno);
    // SAFETY: as in `gpuio_filtered`.
    unsafe {
        cmd.pre_exec(move || {
            seccompiler::apply_filter(&filter).map_err(|_| std::io::Error::last_os_error())
        });
    }
    let o = cmd.output().expect("gpuio runs");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("io_uring_setup: {name}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn io_uring_setup_refused_with_eperm_chooses_mailbox_and_names_the_seccomp_block() {
    mailbox_is_chosen_and_the_cause_is_named(
        libc::EPERM,
        "EPERM",
        "io_uring is blocked here (container seccomp profile or kernel.io_uring_disabled=2",
    );
}

#[test]
fn io_uring_setup_refused_with_enosys_chooses_mailbox_and_names_the_missing_syscall() {
    mailbox_is_chosen_and_the_cause_is_named(libc::ENOSYS, "ENOSYS", "this kernel has no io_uring");
}
