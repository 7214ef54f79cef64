//! `gpuio probe` and backend selection as a person meets them: the binary run as a
//! subprocess on this machine (real io_uring, no GPU).

mod probe_support;

use probe_support::{gpuio, libcuda_present, line, report, row, run, skip, stderr, stdout};

#[test]
fn without_libcuda_the_cpu_device_is_chosen_and_probe_says_libcuda_was_not_found() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    let o = run(&mut gpuio(&["probe"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for t in ["direct", "forward", "mailbox"] {
        let l = line(&text, "cuda", t);
        assert!(l.contains("unavailable"), "{l}");
        assert!(l.contains("libcuda not found"), "{l}");
    }
    let chosen = text
        .lines()
        .find_map(|l| l.strip_prefix("chosen: "))
        .expect("a chosen line");
    assert!(chosen.starts_with("cpu/"), "{text}");
    // The chosen row is marked.
    assert!(line(&text, "cpu", chosen.trim_start_matches("cpu/")).starts_with('*'));

    let json = report(&run(&mut gpuio(&["probe", "--json"])));
    assert_eq!(row(&json, "cuda", "direct")["available"], false);
    let reason = row(&json, "cuda", "direct")["reason"].as_str().unwrap();
    assert!(reason.contains("libcuda not found"), "{reason}");
    assert!(
        json["chosen"].as_str().unwrap().starts_with("cpu/"),
        "{json:#}"
    );
}

#[test]
fn where_io_uring_allows_everything_probe_chooses_cpu_direct() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    let json = report(&run(&mut gpuio(&["probe", "--json"])));
    if row(&json, "cpu", "direct")["available"] != true {
        return skip(
            "io_uring",
            &format!(
                "cpu/direct is unavailable here: {}",
                row(&json, "cpu", "direct")["reason"]
            ),
        );
    }
    assert_eq!(json["chosen"], "cpu/direct", "{json:#}");
    assert_eq!(json["error"], serde_json::Value::Null);
    // Every pair appears once, the available ones first.
    let pairs = json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 9);
    let first_unavailable = pairs.iter().position(|p| p["available"] == false).unwrap();
    assert!(pairs[first_unavailable..]
        .iter()
        .all(|p| p["available"] == false));
}

#[test]
fn no_mmap_reported_unsupported_through_the_seam_makes_forward_win_over_direct() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    for fake in ["no_mmap_unsupported", "no_mmap=EINVAL"] {
        let o = run(gpuio(&["probe", "--json"]).env("GPUIO_PROBE_FAKE", fake));
        assert!(o.status.success(), "{}", stderr(&o));
        let json = report(&o);
        if row(&json, "cpu", "forward")["available"] != true {
            return skip("io_uring", "cpu/forward is unavailable here");
        }
        assert_eq!(json["chosen"], "cpu/forward", "{json:#}");
        let direct = &row(&json, "cpu", "direct");
        assert_eq!(direct["available"], false);
        let reason = direct["reason"].as_str().unwrap();
        assert!(
            reason.contains("io_uring_setup(NO_MMAP): EINVAL"),
            "{reason}"
        );
        assert!(reason.contains("faked by GPUIO_PROBE_FAKE"), "{reason}");
    }
}

#[test]
fn forcing_cuda_direct_without_libcuda_stops_every_command_with_the_reason() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    for command in [
        &["probe"][..],
        &["bench"],
        &["selftest"],
        &["run", "kernel.cu"],
    ] {
        let o = run(gpuio(command).env("GPUIO_BACKEND", "cuda/direct"));
        assert_eq!(
            o.status.code(),
            Some(1),
            "gpuio {command:?}: {}",
            stderr(&o)
        );
        let err = stderr(&o);
        assert!(
            err.contains("cuda/direct was asked for (GPUIO_BACKEND=cuda/direct)"),
            "{err}"
        );
        assert!(err.contains("libcuda not found"), "{err}");
    }
    let o = run(&mut gpuio(&["--backend", "cuda/direct", "probe", "--json"]));
    assert_eq!(o.status.code(), Some(1));
    let json = report(&o);
    assert_eq!(json["chosen"], serde_json::Value::Null);
    assert!(json["error"]
        .as_str()
        .unwrap()
        .contains("libcuda not found"));
    assert_eq!(json["requested"], "--backend cuda/direct");
}

#[test]
fn the_flag_overrides_the_environment_and_an_available_forced_pair_is_used() {
    let o =
        run(gpuio(&["--backend", "cpu/mailbox", "probe", "--json"])
            .env("GPUIO_BACKEND", "cuda/direct"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(report(&o)["chosen"], "cpu/mailbox");
    let o = run(gpuio(&["run", "/nonexistent/kernel.cu"]).env("GPUIO_BACKEND", "cpu/mailbox"));
    assert!(stderr(&o).contains("cpu/mailbox"), "{}", stderr(&o));
}

#[test]
fn malformed_requests_and_seam_values_are_errors_that_say_what_is_accepted() {
    let o = run(gpuio(&["probe"]).env("GPUIO_BACKEND", "cpu/fast"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown transport \"fast\""),
        "{}",
        stderr(&o)
    );
    let o = run(gpuio(&["probe"]).env("GPUIO_BACKEND", "rocm"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("backends: cuda, hsa, cpu"),
        "{}",
        stderr(&o)
    );
    let o = run(gpuio(&["probe"]).env("GPUIO_PROBE_FAKE", "nommap=EINVAL"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown fact \"nommap\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_hsa_backend_is_listed_with_the_reason_it_is_unavailable() {
    let json = report(&run(&mut gpuio(&["probe", "--json"])));
    for t in ["direct", "forward", "mailbox"] {
        let r = row(&json, "hsa", t);
        assert_eq!(r["available"], false);
        assert!(!r["reason"].as_str().unwrap().is_empty());
    }
}

#[test]
fn selftest_without_libcuda_lists_cuda_as_skipped_with_the_reason_and_runs_the_cpu_cases() {
    if libcuda_present() {
        return skip("libcuda-absent", "libcuda loads on this machine");
    }
    let o = run(&mut gpuio(&["--backend", "cpu/mailbox", "selftest"]));
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    for t in ["direct", "forward", "mailbox"] {
        let skipped = out
            .lines()
            .find(|l| l.starts_with(&format!("skip cuda/{t}:")))
            .unwrap_or_else(|| panic!("no skip line for cuda/{t}:\n{out}"));
        assert!(skipped.contains("libcuda not found"), "{skipped}");
    }
    let ok = out
        .lines()
        .filter(|l| l.starts_with("ok   cpu/mailbox "))
        .count();
    let (cases, skipped): (Vec<_>, Vec<_>) = gpuio::conformance::CASES
        .iter()
        .partition(|c| c.skip_reason(gpuio_core::TransportKind::Mailbox).is_none());
    let cases = cases.len();
    assert_eq!(ok, cases, "{out}");
    for case in skipped {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("skip cpu/mailbox {}: ", case.name))),
            "no skip line for {}:\n{out}",
            case.name
        );
    }
    assert_eq!(
        out.lines().last(),
        Some(format!("{cases} passed, 0 failed").as_str()),
        "{out}"
    );
}

#[test]
fn bench_stores_a_calibration_that_probe_then_ranks_the_transports_by() {
    let cache = tempfile::tempdir().unwrap();
    let with_cache = |args: &[&str]| {
        let mut cmd = gpuio(args);
        cmd.env_remove("GPUIO_CALIBRATION")
            .env("XDG_CACHE_HOME", cache.path());
        cmd
    };
    let o = run(&mut with_cache(&["--backend", "cpu", "bench", "--quick"]));
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let path = cache.path().join("gpuio/calibration.json");
    assert!(
        stdout(&o).contains(&path.display().to_string()),
        "{}",
        stdout(&o)
    );
    let cal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let pairs = cal["pairs"].as_array().unwrap();
    let fastest = pairs
        .iter()
        .max_by(|a, b| {
            a["requests_per_s"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["requests_per_s"].as_f64().unwrap())
        })
        .unwrap();
    for p in pairs {
        assert!(p["pair"].as_str().unwrap().starts_with("cpu/"), "{p}");
        assert_eq!(p["threads_done"], p["threads"], "{p}");
    }

    let json = report(&run(&mut with_cache(&["probe", "--json"])));
    let cpu = json["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "cpu")
        .unwrap();
    let line = cpu["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "transports ranked by calibration")
        .unwrap_or_else(|| panic!("no calibration line: {cpu}"));
    assert!(
        line["value"].as_str().unwrap().contains("calibration.json"),
        "{line}"
    );
    if !libcuda_present() {
        assert_eq!(json["chosen"], fastest["pair"], "{json}");
    }
}
