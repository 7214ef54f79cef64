//! `gpuio bench --quick --json` on this machine (the CPU device in CI): the JSON
//! names every available pair of the chosen backend, and every figure says its
//! unit, which way is better, and its same-run reference and ratio where it has one.
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
    let out = run(gpuio(&["bench", "--quick", "--json"]).env("GPUIO_CALIBRATION", &calibration));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}); stderr: {stderr}"));
    eprintln!("bench --quick took {:.1?}", started.elapsed());
    assert_eq!(doc["quick"], true);
    assert_eq!(doc["backend"], backend.as_str());
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
            "pwrite 1 B..1 MiB",
            "printf, 64 threads",
            "whole device",
            "64 B pwrite, whole device",
            "64 B pread, whole device",
            "4096 B pwrite, whole device",
            "4096 B pread, whole device",
        ] {
            assert!(
                whats.iter().any(|w| w.contains(wanted)),
                "{name}: no figure {wanted:?} in {whats:?}"
            );
        }
        for f in figures {
            let what = f["what"].as_str().unwrap();
            let value = f["value"].as_f64().unwrap();
            assert!(value.is_finite() && value > 0.0, "{name}: {what} = {value}");
            assert!(f["unit"].as_str().is_some_and(|u| !u.is_empty()), "{what}");
            assert!(
                f["better"] == "higher" || f["better"] == "lower",
                "{what}: better = {}",
                f["better"]
            );
            match f["reference"].as_object() {
                None => assert!(f["ratio"].is_null(), "{what}: a ratio without a reference"),
                Some(r) => {
                    let rv = r["value"].as_f64().unwrap();
                    assert!(r["what"].as_str().is_some_and(|w| !w.is_empty()), "{what}");
                    let ratio = f["ratio"].as_f64().unwrap();
                    assert!(
                        (ratio - value / rv).abs() <= 1e-9 * ratio.abs().max(1.0),
                        "{what}"
                    );
                }
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
}
