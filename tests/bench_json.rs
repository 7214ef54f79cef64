//! `gpuio bench --quick --json --plot` on this machine (the CPU device in CI): the
//! JSON names every available pair of the chosen backend, and every figure says its
//! unit, which way is better, its samples and spread, its same-run references and
//! ratios, and its host CPU cost where it has them; the plot is an SVG document.
//! The host-queue figures are there each way for 64 B, 256 B and 4 KiB, the to-host
//! ones held against the copy-back habit and the naive mapped ring.
//! `--only latency` gives the round trips alone, each against the ping-pong floor.
//! Figures are measured, never checked against numbers here.

mod probe_support;

use probe_support::{gpuio, run};

#[test]
fn bench_quick_json_has_every_pair_figure_reference_and_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = dir.path().join("calibration.json");
    let probe = run(gpuio(&["probe", "--json"]).env("GPUIO_CALIBRATION", &calibration));
    let probe: serde_json::Value = serde_json::from_slice(&probe.stdout).expect("probe JSON");
    let backend = probe["chosen"]
        .as_str()
        .and_then(|c| c.split('/').next())
        .expect("a chosen pair")
        .to_string();
    let available: Vec<String> = probe["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["available"] == true && p["backend"] == backend.as_str())
        .map(|p| {
            format!(
                "{}/{}",
                p["backend"].as_str().unwrap(),
                p["transport"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!available.is_empty(), "{probe}");

    let started = std::time::Instant::now();
    let plot = dir.path().join("bench.svg");
    let out = run(gpuio(&["bench", "--quick", "--json", "--plot"])
        .arg(&plot)
        .env("GPUIO_CALIBRATION", &calibration));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}); stderr: {stderr}"));
    eprintln!("bench --quick took {:.1?}", started.elapsed());
    assert_eq!(doc["quick"], true);
    assert_eq!(doc["repeats"], 1, "--quick measures once");
    assert_eq!(doc["backend"], backend.as_str());
    let svg = std::fs::read_to_string(&plot).expect("the plot is written");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<polyline"), "the plot draws lines");

    // The references every transport is held against, measured in the same run.
    let references = doc["references"]["figures"].as_array().expect("references");
    for wanted in [
        "copy ceiling, device to host",
        "copy ceiling, host to device",
        "one host thread, pwrite 1 MiB, one file",
        "one host thread, pread 1 MiB, one file per SM group",
        "io_uring, 8 x 1 MiB writes in flight, one file",
        "io_uring, 8 x 1 MiB reads in flight, one file per SM group",
    ] {
        assert!(
            references
                .iter()
                .any(|f| f["what"].as_str().unwrap().contains(wanted)),
            "no reference {wanted:?} in {references:?}"
        );
    }
    // The SQPOLL rings' NOP rates, at two depths, where SQPOLL rings open (wherever
    // direct is available).
    if available.iter().any(|p| p.ends_with("/direct")) {
        for depth in ["SQPOLL ring of 256,", "SQPOLL ring of 1024,"] {
            assert!(
                references
                    .iter()
                    .any(|f| f["what"].as_str().unwrap().contains(depth)),
                "no reference {depth:?} in {references:?}"
            );
        }
    }
    for f in references {
        check_figure("references", f);
    }
    let pairs = doc["pairs"].as_array().unwrap();
    let names: Vec<&str> = pairs.iter().map(|p| p["pair"].as_str().unwrap()).collect();
    assert_eq!(
        names, available,
        "one entry per available pair, in rank order"
    );

    for pair in pairs {
        let name = pair["pair"].as_str().unwrap();
        assert!(pair.get("error").is_none(), "{name}: {}", pair["error"]);
        let figures = pair["figures"].as_array().unwrap();
        let whats: Vec<&str> = figures
            .iter()
            .map(|f| f["what"].as_str().unwrap())
            .collect();
        for wanted in [
            "NOP round trip, 1 thread",
            "NOP latency p50",
            "NOP latency p99",
            "64 B pwrite latency p50",
            "64 B pwrite latency p99",
            "NOPs, 64 threads",
            "NOPs, whole device",
            "pwrite 1 B..1 MiB",
            "printf, 64 threads",
            "whole device",
            "64 B pwrite, whole device",
            "64 B pread, whole device",
            "4096 B pwrite, whole device",
            "4096 B pread, whole device",
            "64 B pwrite, 1 thread",
            "64 B pwrite, 64 threads",
            "1 MiB pwrite, whole device, one file",
            "1 MiB pread, whole device, one file",
            "1 MiB pwrite, whole device, one file per SM group",
            "1 MiB pread, whole device, one file per SM group",
            "printf, whole device",
            "printf bytes, whole device",
        ] {
            assert!(
                whats.iter().any(|w| w.contains(wanted)),
                "{name}: no figure {wanted:?} in {whats:?}"
            );
        }
        for f in figures {
            check_figure(name, f);
        }
        let find = |part: &'static str| {
            figures
                .iter()
                .filter(move |f| f["what"].as_str().unwrap().contains(part))
        };
        check_bulk(name, figures, registered_reference(&doc));
        // Whole-device NOPs, at a default channel's slots and at four times as many:
        // against a CPU thread driving an SQPOLL ring as deep. Where direct is
        // available SQPOLL rings open, so the reference must be there.
        assert_eq!(
            find("NOPs, whole device").count(),
            2,
            "{name}: whole-device NOPs at two depths"
        );
        if name.ends_with("/direct") {
            let sqpoll = |r: &serde_json::Value| {
                r["what"]
                    .as_str()
                    .is_some_and(|w| w.contains("SQPOLL ring"))
            };
            let ratio = |r: &serde_json::Value| {
                r["ratio"]
                    .as_f64()
                    .is_some_and(|x| x.is_finite() && x > 0.0)
            };
            for f in find("NOPs, whole device") {
                let what = f["what"].as_str().unwrap();
                let also = f["also"].as_array().unwrap();
                assert!(
                    (sqpoll(&f["reference"]) && ratio(f))
                        || also.iter().any(|r| sqpoll(r) && ratio(r)),
                    "{what}: no SQPOLL ring reference with a ratio"
                );
            }
        }
        // printf: against the device's own printf, lines counted, none lost.
        for f in find("printf, ") {
            let what = f["what"].as_str().unwrap();
            let mut refs = f["also"]
                .as_array()
                .unwrap()
                .iter()
                .chain(Some(&f["reference"]));
            assert!(
                refs.any(|r| r["what"]
                    .as_str()
                    .is_some_and(|w| w.contains("printf, same lines"))),
                "{what}: no reference to the device's own printf"
            );
            let notes: Vec<&str> = f["notes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
                .collect();
            assert_eq!(notes.len(), 2, "{what}: {notes:?}");
            assert!(
                notes.iter().all(|n| n.ends_with(", 0 lost")),
                "{what}: {notes:?}"
            );
            assert!(f["host_cpu"].is_object(), "{what}");
        }
        assert_eq!(
            find("printf, ").count(),
            2,
            "{name}: 64 threads and the whole device"
        );
        // Host cost beside the throughput figures.
        for part in ["NOPs, 64 threads", "whole device", "pwrite 1 B..1 MiB"] {
            for f in find(part).filter(|f| !f["what"].as_str().unwrap().contains("printf bytes")) {
                assert!(f["host_cpu"].is_object(), "{}: no host cost", f["what"]);
            }
        }
        // Every latency figure is held against the ping-pong floor of the same run.
        assert!(figures
            .iter()
            .filter(|f| f["what"].as_str().unwrap().contains("latency"))
            .all(|f| f["reference"]["what"]
                .as_str()
                .unwrap()
                .contains("ping-pong")));
    }
    assert!(
        calibration.exists(),
        "the bench stores its whole-device figures for selection"
    );
    check_queues(&doc["queues"]);
}

/// The host-queue figures: messages/s each way for 64 B, 256 B and 4 KiB, the
/// to-host ones against the copy-back habit and the naive mapped ring, the
/// to-device ones against one upload of the same bytes, every value finite.
fn check_queues(queues: &serde_json::Value) {
    assert!(queues.get("error").is_none(), "queues: {}", queues["error"]);
    let figures = queues["figures"].as_array().expect("queue figures");
    let find = |part: &str| {
        figures
            .iter()
            .find(|f| f["what"].as_str().unwrap().contains(part))
            .unwrap_or_else(|| panic!("no queue figure {part:?} in {figures:?}"))
    };
    for bytes in [64, 256, 4096] {
        let f = find(&format!("queue to host, {bytes} B messages"));
        let what = f["what"].as_str().unwrap();
        assert_eq!(f["unit"], "M msg/s", "{what}");
        assert!(
            f["reference"]["what"]
                .as_str()
                .unwrap()
                .starts_with("copy-back"),
            "{what}: {}",
            f["reference"]
        );
        let naive = f["also"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["what"].as_str().unwrap().starts_with("naive mapped ring"))
            .unwrap_or_else(|| panic!("{what}: no naive-ring reference; notes {}", f["notes"]));
        assert!(naive["value"].as_f64().unwrap().is_finite(), "{what}");
        assert!(naive["ratio"].as_f64().unwrap().is_finite(), "{what}");

        let f = find(&format!("queue to device, {bytes} B messages"));
        let what = f["what"].as_str().unwrap();
        assert_eq!(f["unit"], "M msg/s", "{what}");
        assert!(
            f["reference"]["what"]
                .as_str()
                .unwrap()
                .contains("uploaded in one copy"),
            "{what}"
        );
        assert!(f["ratio"].as_f64().unwrap().is_finite(), "{what}");
    }
    let one = find("one message on an idle queue");
    assert!(
        one["reference"]["what"]
            .as_str()
            .unwrap()
            .contains("ping-pong"),
        "{one}"
    );
    for f in figures {
        let what = f["what"].as_str().unwrap();
        if what.contains("idle open channel") {
            // A process at rest may cost no measurable CPU at all.
            let v = f["value"].as_f64().unwrap();
            assert!(v.is_finite() && v >= 0.0, "{what} = {v}");
        } else {
            check_figure("queues", f);
        }
    }
}

/// Every figure: a positive value with its unit and direction, its samples (the
/// value their median, inside their spread), and each reference with its samples
/// and a ratio that is value / reference.
fn check_figure(name: &str, f: &serde_json::Value) {
    let what = f["what"].as_str().unwrap();
    let value = f["value"].as_f64().unwrap();
    assert!(value.is_finite() && value > 0.0, "{name}: {what} = {value}");
    assert!(f["unit"].as_str().is_some_and(|u| !u.is_empty()), "{what}");
    assert!(
        f["better"] == "higher" || f["better"] == "lower",
        "{what}: better = {}",
        f["better"]
    );
    let samples: Vec<f64> = f["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no samples"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(!samples.is_empty(), "{what}");
    let (min, max) = (f["min"].as_f64().unwrap(), f["max"].as_f64().unwrap());
    assert!(
        min <= value && value <= max,
        "{what}: {min} <= {value} <= {max}"
    );
    assert!(samples.iter().all(|s| (min..=max).contains(s)), "{what}");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    match f["reference"].as_object() {
        None => assert!(f["ratio"].is_null(), "{what}: a ratio without a reference"),
        Some(r) => {
            let rv = r["value"].as_f64().unwrap();
            assert!(r["what"].as_str().is_some_and(|w| !w.is_empty()), "{what}");
            assert!(!r["samples"].as_array().unwrap().is_empty(), "{what}");
            assert!(close(f["ratio"].as_f64().unwrap(), value / rv), "{what}");
        }
    }
    for a in f["also"].as_array().unwrap() {
        let av = a["value"].as_f64().unwrap();
        assert!(av.is_finite() && av > 0.0, "{what}: {a}");
        assert!(a["what"].as_str().is_some_and(|w| !w.is_empty()), "{what}");
        assert!(close(a["ratio"].as_f64().unwrap(), value / av), "{what}");
    }
}

/// Whether the run's references hold the CPU thread's io_uring on registered
/// buffers.
///
/// Its writes, marked `IOSQE_ASYNC`, all run on the kernel's io-wq workers, and their
/// figure says so: the host's CPU split by kind of thread, the workers' share of it
/// above zero. No other reference carries a split.
fn registered_reference(doc: &serde_json::Value) -> bool {
    let figures = doc["references"]["figures"]
        .as_array()
        .expect("reference figures");
    let mut registered = false;
    for f in figures {
        let what = f["what"].as_str().unwrap();
        let split = &f["host_cpu"]["split"];
        if what.contains("registered buffers (FIXED)") {
            registered = true;
            if what.contains("writes in flight") {
                assert!(split["workers"].as_f64().unwrap() >= 1.0, "{what}: {f}");
                assert!(
                    split["workers_cores"].as_f64().unwrap() > 0.0,
                    "{what}: {f}"
                );
                assert!(
                    split["workers_seconds_per_gb"].as_f64().unwrap() > 0.0,
                    "{what}: {f}"
                );
                continue;
            }
        }
        assert!(
            split.is_null(),
            "{what}: only the registered writes are split"
        );
    }
    registered
}

/// Bulk: writes and reads through the slots and from / into the staging area, in
/// two layouts; each figure against one host thread (the slots' passes) or the same
/// work driven by one CPU thread (the staged ones), with every other reference and
/// the copy ceiling beside it (and, for the passes through the slots, the device's
/// copy alone), and its host cost split by kind of thread. `registered`: the run
/// measured the CPU thread's io_uring on registered buffers (it is left out where
/// `RLIMIT_MEMLOCK` refuses them), which is then direct's staged passes' main
/// reference and every other pass's one more.
fn check_bulk(name: &str, figures: &[serde_json::Value], registered: bool) {
    let transport = name.split('/').nth(1).unwrap();
    let bulk: Vec<&serde_json::Value> = figures
        .iter()
        .filter(|f| f["what"].as_str().unwrap().contains("1 MiB p"))
        .collect();
    assert_eq!(
        bulk.len(),
        8,
        "{name}: pwrite and pread, through the slots and staged, two layouts"
    );
    for f in bulk {
        let what = f["what"].as_str().unwrap();
        let main = f["reference"]["what"].as_str().unwrap();
        let staged = what.contains("staging area (no copy");
        let want = if staged && transport != "mailbox" {
            "io_uring work driven by one CPU thread (8 in flight"
        } else {
            "one host thread, p"
        };
        assert!(main.contains(want), "{what}: main reference {main:?}");
        assert!(!main.contains("buffers over"), "{what}: {main:?}");
        assert_eq!(
            main.contains("IOSQE_ASYNC"),
            staged && transport == "direct",
            "{what}: {main:?}"
        );
        assert_eq!(
            main.contains("registered buffers"),
            staged && transport == "direct" && registered,
            "{what}: {main:?}"
        );
        let also: Vec<&str> = f["also"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["what"].as_str().unwrap())
            .collect();
        // The passes through the slots are also held against the device's copy
        // alone, measured on the same channel; the staged ones copy nothing.
        let others = if staged { 6 } else { 7 } + usize::from(registered);
        assert_eq!(also.len(), others, "{what}: {also:?}");
        let alone: Vec<&serde_json::Value> = f["also"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                a["what"]
                    .as_str()
                    .unwrap()
                    .contains("the device's copy alone")
            })
            .collect();
        assert_eq!(alone.len(), usize::from(!staged), "{what}: {also:?}");
        for a in alone {
            let direction = if what.contains("pwrite") {
                "device to host"
            } else {
                "host to device"
            };
            assert!(
                a["what"].as_str().unwrap().contains(direction),
                "{what}: {a}"
            );
            assert!(a["value"].as_f64().unwrap() > 0.0, "{what}: {a}");
        }
        assert!(
            also.iter().any(|a| a.contains("io_uring")),
            "{what}: {also:?}"
        );
        assert!(
            also.iter().any(|a| a.contains("copy ceiling")),
            "{what}: {also:?}"
        );
        let cpu = &f["host_cpu"];
        let per_gb = cpu["seconds_per_gb"].as_f64().unwrap();
        assert!(per_gb >= 0.0, "{what}");
        assert!(cpu["seconds_per_mop"].as_f64().unwrap() >= 0.0, "{what}");
        let split = &cpu["split"];
        let parts: Vec<f64> = [
            "own_seconds_per_gb",
            "sqpoll_seconds_per_gb",
            "workers_seconds_per_gb",
        ]
        .iter()
        .map(|k| {
            split[*k]
                .as_f64()
                .unwrap_or_else(|| panic!("{what}: no {k}"))
        })
        .collect();
        assert!(parts.iter().all(|&v| v >= 0.0), "{what}: {split}");
        // One repeat: the parts add up to the whole.
        assert!(
            (parts.iter().sum::<f64>() - per_gb).abs() <= 1e-6 * per_gb.max(1.0),
            "{what}: {split} against {per_gb}"
        );
        if transport != "direct" {
            assert_eq!(
                parts[1], 0.0,
                "{what}: only direct's ring has an SQPOLL thread"
            );
        }
        let cores = split["cores"].as_f64().unwrap();
        assert!(cores > 0.0, "{what}");
        // The workers' cores are part of the process's: its CPU time counts theirs.
        let workers_cores = split["workers_cores"].as_f64().unwrap();
        assert!(
            (0.0..=cores * (1.0 + 1e-6)).contains(&workers_cores),
            "{what}: {split}"
        );
        for k in ["workers_runs_per_op", "workers_wait_us_per_op"] {
            if let Some(v) = split.get(k) {
                assert!(v.as_f64().unwrap() >= 0.0, "{what}: {split}");
            }
        }
        if workers_cores == 0.0 {
            assert_eq!(
                split["workers_seconds_per_gb"].as_f64(),
                Some(0.0),
                "{what}"
            );
        }
    }
}

/// `gpuio bench --only <part> --quick --json` with a calibration path of its own:
/// the JSON document, whether a calibration was stored, and the words on stderr.
fn bench_only(part: &str) -> (serde_json::Value, bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let calibration = dir.path().join("calibration.json");
    let out = run(gpuio(&["bench", "--only", part, "--quick", "--json"])
        .env("GPUIO_CALIBRATION", &calibration));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "bench failed: {stderr}");
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}); stderr: {stderr}"));
    (doc, calibration.exists(), stderr)
}

#[test]
fn bench_only_bulk_measures_the_1_mib_figures_with_their_references_and_nothing_else() {
    let (doc, calibrated, _) = bench_only("bulk");
    assert!(doc["references"]["figures"].is_array(), "{doc}");
    assert!(doc["queues"].is_null(), "no host queues: {doc}");
    assert!(!calibrated, "no calibration from bulk figures alone");
    let pairs = doc["pairs"].as_array().expect("pairs");
    assert!(!pairs.is_empty(), "{doc}");
    for pair in pairs {
        let name = pair["pair"].as_str().expect("a pair's name");
        let figures = pair["figures"].as_array().expect("figures");
        check_bulk(name, figures, registered_reference(&doc));
        assert_eq!(figures.len(), 8, "{name}: the bulk figures alone");
        for f in figures {
            check_figure(name, f);
        }
    }
}

#[test]
fn bench_only_latency_measures_each_pairs_round_trips_against_the_floor_and_nothing_else() {
    let (doc, calibrated, stderr) = bench_only("latency");
    assert!(doc["references"].is_null(), "no bulk references: {doc}");
    assert!(doc["queues"].is_null(), "no host queues: {doc}");
    assert!(!calibrated, "no calibration from round trips alone");
    let pairs = doc["pairs"].as_array().expect("pairs");
    assert!(!pairs.is_empty(), "{doc}");
    for pair in pairs {
        let name = pair["pair"].as_str().expect("a pair's name");
        let transport = name.split('/').nth(1).expect("backend/transport");
        let figures = pair["figures"].as_array().expect("figures");
        let names: Vec<&str> = figures.iter().filter_map(|f| f["what"].as_str()).collect();
        for wanted in [
            "NOP latency p50",
            "NOP latency p99",
            "64 B pwrite latency p50",
            "64 B pwrite latency p99",
        ] {
            let want = format!("{transport}: {wanted}, 1 thread");
            assert!(
                names.contains(&want.as_str()),
                "{name}: no {want:?} in {names:?}"
            );
        }
        assert_eq!(figures.len(), 4, "{name}: only the round trips: {names:?}");
        for f in figures {
            assert!(
                f["reference"]["what"]
                    .as_str()
                    .is_some_and(|w| w.contains("ping-pong"))
                    && f["ratio"].is_number(),
                "{name}: every round trip is held against the ping-pong floor: {f}"
            );
        }
        assert!(
            stderr.contains(&format!("{transport}: one NOP, median of each step")),
            "{name}: the NOP's steps are printed: {stderr}"
        );
    }
}
