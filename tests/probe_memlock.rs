//! Probe and open agree on locked memory.
//!
//! A direct channel registers its staging area (17 MiB by default) as an io_uring
//! fixed buffer, charged with the ring's pages to `RLIMIT_MEMLOCK` unless the
//! process has `CAP_IPC_LOCK`. Each test runs child processes whose limit is
//! lowered (`setrlimit`) and, where the probe must see a process without it,
//! whose `CAP_IPC_LOCK` is dropped from the bounding set before `exec` (root gets
//! every capability of the bounding set back at `exec`, so clearing the effective
//! set alone would not last). Where that cannot be done here, the test says so and
//! skips; `GPUIO_REQUIRE=memlock` makes that a failure.
//!
//! The charge is the user's, shared by all of their processes without the
//! capability, and a closed ring is uncharged a moment after `close`: the children
//! run one at a time.

mod probe_support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use gpuio::core::direct::{pinned_bytes, DirectBuilder};
use gpuio::core::memory::HostMemory;
use gpuio::core::probe::{Memlock, UringProbe};
use gpuio::core::TransportKind;
use gpuio::runtime::{Origin, Request, Runtime};
use gpuio::{Channel, ChannelConfig, OpenError, Pair};
use probe_support::{gpuio, libcuda_present, report, row, skip, stderr, stdout};
use rustix::process::{Resource, Rlimit};
use rustix::thread::{CapabilitySet, CapabilitySets};

/// Children charge the same user's locked memory: one at a time.
static ONE_CHILD_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Set in a child of these tests (re-executing this test binary) to the test it runs.
const CHILD_ENV: &str = "GPUIO_MEMLOCK_CHILD";

/// The part `GPUIO_REQUIRE` names to make these tests' skips failures.
const PART: &str = "memlock";

/// Makes `cmd`'s process start with `RLIMIT_MEMLOCK` at `limit` bytes (soft and
/// hard) and, if `drop_cap`, without `CAP_IPC_LOCK` (effective, permitted,
/// inheritable and bounding sets). Whether the capability is really gone is for
/// the child to report: dropping it from the bounding set needs `CAP_SETPCAP`.
fn limited(cmd: &mut Command, limit: u64, drop_cap: bool) -> &mut Command {
    // SAFETY: the closure runs in the forked child before exec and makes only the
    // setrlimit, prctl and capget/capset system calls (no allocation, no locks),
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setrlimit(
                Resource::Memlock,
                Rlimit {
                    current: Some(limit),
                    maximum: Some(limit),
                },
            )?;
            if drop_cap {
                // Failures are left for the child's report: a process that never
                // had the capability needs neither call.
                let _ = rustix::thread::remove_capability_from_bounding_set(
                    rustix::thread::CapabilitySet::IPC_LOCK,
                );
                if let Ok(sets) = rustix::thread::capabilities(None) {
                    let _ = rustix::thread::set_capabilities(None, without_ipc_lock(sets));
                }
            }
            Ok(())
        });
    }
    cmd
}

fn without_ipc_lock(sets: CapabilitySets) -> CapabilitySets {
    CapabilitySets {
        effective: sets.effective - CapabilitySet::IPC_LOCK,
        permitted: sets.permitted - CapabilitySet::IPC_LOCK,
        inheritable: sets.inheritable - CapabilitySet::IPC_LOCK,
    }
}

/// This test binary again, running only the test `name` as a child.
fn child(name: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env("GPUIO_CALIBRATION", "off");
    for var in ["GPUIO_BACKEND", "GPUIO_PROBE_FAKE"] {
        cmd.env_remove(var);
    }
    cmd
}

fn in_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// What a child printed on a line `SKIP: why`, if it could not set itself up.
fn skipped(o: &Output) -> Option<String> {
    stdout(o)
        .lines()
        .find_map(|l| l.strip_prefix("SKIP: "))
        .map(str::to_string)
}

fn run_child(cmd: &mut Command) -> Output {
    let _one = ONE_CHILD_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    cmd.output().expect("the child runs")
}

/// The CPU backend's `RLIMIT_MEMLOCK` capability line in a probe report.
fn memlock_line(json: &serde_json::Value) -> String {
    json["backends"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["name"] == "cpu"))
        .and_then(|b| b["capabilities"].as_array())
        .and_then(|c| c.iter().find(|c| c["name"] == "RLIMIT_MEMLOCK"))
        .and_then(|c| c["value"].as_str())
        .unwrap_or_else(|| panic!("no RLIMIT_MEMLOCK line in {json:#}"))
        .to_string()
}

#[test]
fn below_a_default_channels_need_probe_refuses_direct_with_the_numbers_and_forward_opens() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    // 1 MiB holds the forward ring and the probe's rings, not 17 MiB of staging.
    let o = run_child(limited(&mut gpuio(&["probe", "--json"]), 1 << 20, true));
    assert!(o.status.success(), "{}", stderr(&o));
    let json = report(&o);
    let line = memlock_line(&json);
    if !line.contains("no CAP_IPC_LOCK") {
        return skip(
            PART,
            &format!(
                "CAP_IPC_LOCK could not be dropped from the child (it needs CAP_SETPCAP): {line}"
            ),
        );
    }
    assert!(line.starts_with("1 MiB"), "{line}");
    let direct = row(&json, "cpu", "direct");
    assert_eq!(direct["available"], false, "{direct}");
    let reason = direct["reason"].as_str().unwrap();
    for words in [
        "RLIMIT_MEMLOCK is 1 MiB",
        "lacks CAP_IPC_LOCK",
        "17 MiB staging area",
        "ulimit -l",
        "the forward transport needs only plain io_uring",
    ] {
        assert!(reason.contains(words), "{words:?} missing from: {reason}");
    }
    // What was chosen is what opened, right after the probe, with no fallback.
    assert_eq!(json["chosen"], "cpu/forward", "{json:#}");
    assert_eq!(json["opened"], "cpu/forward", "{json:#}");
    assert!(
        json["opened_shape"]
            .as_str()
            .is_some_and(|s| s.ends_with("own forwarder thread")),
        "the opened channel says how forward serves it: {json:#}"
    );
    assert_eq!(json["fallbacks"], serde_json::json!([]), "{json:#}");
    assert_eq!(json["error"], serde_json::Value::Null, "{json:#}");

    // Forcing direct stops with the same reason instead of trying anything else.
    let o = run_child(limited(
        &mut gpuio(&["--backend", "cpu/direct", "probe"]),
        1 << 20,
        true,
    ));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("RLIMIT_MEMLOCK is 1 MiB"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn at_64_kib_a_forward_channel_opens_right_after_the_probe() {
    // The probe's own rings (two pages each) are uncharged a moment after it
    // closes them; the forward ring (256 entries, 28 KiB) set up right after must
    // not be refused for that moment.
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    let o = run_child(limited(&mut gpuio(&["probe", "--json"]), 64 << 10, true));
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let json = report(&o);
    let line = memlock_line(&json);
    if !line.contains("no CAP_IPC_LOCK") {
        return skip(PART, &format!("CAP_IPC_LOCK could not be dropped: {line}"));
    }
    assert_eq!(json["chosen"], "cpu/forward", "{json:#}");
    assert_eq!(json["opened"], "cpu/forward", "{json:#}");
    assert_eq!(json["fallbacks"], serde_json::json!([]), "{json:#}");
}

/// The body of a child run without `CAP_IPC_LOCK`: prints `SKIP: why` and returns
/// `None` where the process still has it.
fn memlock_in_child(need: u64) -> Option<Memlock> {
    let m = Memlock::detect_need(need);
    if m.cap_ipc_lock {
        println!("SKIP: CAP_IPC_LOCK could not be dropped from the child (it needs CAP_SETPCAP)");
        return None;
    }
    Some(m)
}

fn small_config() -> ChannelConfig {
    ChannelConfig {
        slots: 16,
        user_staging: 64 << 10,
        ..ChannelConfig::default()
    }
}

#[test]
fn where_the_limit_fits_a_direct_channel_opens_right_after_the_probe() {
    const NAME: &str = "where_the_limit_fits_a_direct_channel_opens_right_after_the_probe";
    // Room for the channel and 64 KiB: not for the probe's 64 KiB buffer as well,
    // had the probe left it registered until its ring was freed.
    let need = pinned_bytes(&small_config());
    if in_child(NAME) {
        let Some(m) = memlock_in_child(need) else {
            return;
        };
        assert!(m.fits(), "{m:?}");
        let probe = UringProbe::detect(&HostMemory);
        assert_eq!(probe.fixed_buffers, Ok(()), "{probe:?}");
        let channel = Channel::open(
            std::sync::Arc::new(HostMemory),
            &DirectBuilder::default(),
            small_config(),
        )
        .unwrap_or_else(|e| panic!("a direct channel right after the probe: {e}"));
        let report = channel.close();
        assert!(report.is_clean(), "{report}");
        println!("OPENED: {}", report.transport);
        return;
    }
    let o = run_child(limited(&mut child(NAME), need + (64 << 10), true));
    if let Some(why) = skipped(&o) {
        return skip(PART, &why);
    }
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("OPENED: direct"), "{}", stdout(&o));
}

#[test]
fn when_the_chosen_pair_cannot_open_auto_falls_back_to_the_next_pair_and_says_why() {
    const NAME: &str =
        "when_the_chosen_pair_cannot_open_auto_falls_back_to_the_next_pair_and_says_why";
    if !in_child(NAME) {
        if libcuda_present() {
            return skip("libcuda-absent", "libcuda loads on this machine");
        }
        // The child keeps CAP_IPC_LOCK for the probe and drops it before opening:
        // the probe's answer no longer holds when open runs, as when other channels
        // took the locked memory in between.
        let o = run_child(limited(&mut child(NAME), 1 << 20, false));
        if let Some(why) = skipped(&o) {
            return skip(PART, &why);
        }
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("FELL BACK: cpu/direct could not open"),
            "{out}"
        );
        return;
    }
    let factory = Runtime::auto().expect("a pair is chosen");
    let direct = Pair {
        backend: "cpu",
        transport: TransportKind::Direct,
    };
    let forward = Pair {
        backend: "cpu",
        transport: TransportKind::Forward,
    };
    if factory.pair() != direct {
        println!(
            "SKIP: with CAP_IPC_LOCK the probe chose {}, not cpu/direct",
            factory.pair()
        );
        return;
    }
    let forced = Runtime::probe()
        .choose(Some(
            &Request::parse("cpu/direct", Origin::Code).expect("a request"),
        ))
        .expect("cpu/direct is available to the probe");
    // Capabilities are per thread: io_uring asks the thread that registers.
    let sets = rustix::thread::capabilities(None).expect("capget");
    if rustix::thread::set_capabilities(None, without_ipc_lock(sets)).is_err() {
        println!("SKIP: CAP_IPC_LOCK could not be dropped from the child's thread");
        return;
    }

    let channel = factory
        .open(ChannelConfig::default())
        .unwrap_or_else(|e| panic!("no fallback: {e}"));
    assert_eq!(channel.transport(), TransportKind::Forward);
    let fallbacks = factory.fallbacks();
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    assert_eq!((fallbacks[0].from, fallbacks[0].to), (direct, forward));
    let reason = &fallbacks[0].reason;
    assert!(reason.contains("RLIMIT_MEMLOCK is 1 MiB"), "{reason}");
    assert!(reason.contains("17 MiB staging area"), "{reason}");
    let report = channel.close();
    assert!(report.is_clean(), "{report}");
    println!("FELL BACK: {}", fallbacks[0]);

    // Under 16 KiB even the forward ring (28 KiB) cannot be charged: the mailbox,
    // which pins nothing, opens, and both steps are kept.
    rustix::process::setrlimit(
        Resource::Memlock,
        Rlimit {
            current: Some(16 << 10),
            maximum: Some(16 << 10),
        },
    )
    .expect("lowering a limit");
    std::thread::sleep(Duration::from_millis(20));
    let channel = factory
        .open(ChannelConfig::default())
        .unwrap_or_else(|e| panic!("no fallback to the mailbox: {e}"));
    assert_eq!(channel.transport(), TransportKind::Mailbox);
    let fallbacks = factory.fallbacks();
    assert_eq!(fallbacks.len(), 3, "{fallbacks:?}");
    assert_eq!(fallbacks[2].from, forward);
    assert!(
        fallbacks[2].reason.contains("ENOMEM") || fallbacks[2].reason.contains("os error 12"),
        "{}",
        fallbacks[2].reason
    );
    assert!(channel.close().is_clean());

    // A forced pair does not fall back.
    let e = forced
        .open(ChannelConfig::default())
        .expect_err("direct cannot pin 17 MiB under 16 KiB");
    assert!(matches!(e, OpenError::Forced { .. }), "{e:?}");
    assert!(e.to_string().contains("does not fall back"), "{e}");
    assert!(forced.fallbacks().is_empty());
}
