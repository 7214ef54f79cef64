//! The header and the Rust ABI describe the same bytes.
//!
//! The build script turns every entry of `gpuio_core::abi::layout()` into a named
//! `static_assert` (`$OUT_DIR/gpuio_abi_asserts.h`, path in `GPUIO_ABI_ASSERTS`) and
//! compiles it with `gpuio.h`: that this crate built at all says the header agrees.
//! These tests say that the check covers every entry and that it bites: the header
//! plus one wrong assert, or a header with one field changed, does not compile, and
//! the compiler names the entry.
//!
//! The compiling tests need a C++ compiler (`CXX`, else `c++`/`g++`/`clang++` on
//! `PATH`) and skip, saying so, where there is none; with `GPUIO_REQUIRE=cxx` that
//! is a failure instead.

mod support;

use std::path::Path;
use std::process::Output;

use support::cxx;

use gpuio_core::abi;
use gpuio_device::cpu::Cxx;

/// The generated header this crate was built with.
fn asserts() -> String {
    let path = env!("GPUIO_ABI_ASSERTS");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The message of the assert for `name` = `value`.
fn message(name: &str, value: usize) -> String {
    format!("\"{name}: the Rust ABI says {value}\"")
}

#[test]
fn generated_header_holds_one_named_assert_per_rust_layout_entry_in_order() {
    let text = asserts();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("static_assert("))
        .collect();
    let layout = abi::layout();
    assert_eq!(
        lines.len(),
        layout.len(),
        "the header has {} asserts, layout() {} entries",
        lines.len(),
        layout.len()
    );
    for ((name, value), line) in layout.iter().zip(&lines) {
        assert!(
            line.ends_with(&format!("== {value}ull, {});", message(name, *value))),
            "{name} = {value}: the assert in its place is {line}"
        );
    }
    let mut names: Vec<&str> = layout.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "layout() names an entry twice");
}

#[test]
fn layout_covers_every_struct_of_the_header() {
    let header = gpuio_device::header::HEADERS
        .iter()
        .find(|(name, _)| *name == "gpuio/abi.h")
        .map(|(_, text)| *text)
        .expect("the embedded headers include gpuio/abi.h");
    let layout = abi::layout();
    // io_uring's own structs are the kernel's, not abi.rs's.
    let not_ours = ["gpuio_sqe", "gpuio_cqe"];
    let structs: Vec<&str> = header
        .lines()
        .filter_map(|l| l.strip_prefix("typedef struct "))
        .filter_map(|l| l.trim_start_matches("alignas(64) ").split(' ').next())
        .filter(|s| !not_ours.contains(s))
        .collect();
    assert!(structs.len() >= 15, "found only {structs:?} in gpuio/abi.h");
    let missing: Vec<&&str> = structs
        .iter()
        .filter(|s| !layout.iter().any(|(n, _)| *n == format!("sizeof({s})")))
        .collect();
    assert!(missing.is_empty(), "layout() lists no {missing:?}");
}

/// Checks (`-fsyntax-only`) a unit that includes `gpuio.h` from `include` and then
/// `asserts`, as `abi/asserts.cpp` does.
fn check(cxx: &Cxx, dir: &Path, include: &Path, asserts: &str) -> Output {
    std::fs::write(dir.join("gpuio_abi_asserts.h"), asserts).unwrap();
    let unit = dir.join("unit.cpp");
    std::fs::write(
        &unit,
        "#include <cstddef>\n#include \"gpuio.h\"\n#include \"gpuio_abi_asserts.h\"\n",
    )
    .unwrap();
    cxx.command()
        .args(["-std=c++17", "-fsyntax-only", "-I"])
        .arg(include)
        .arg("-I")
        .arg(dir)
        .arg(&unit)
        .output()
        .expect("run the C++ compiler")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_generated_asserts_hold_and_a_wrong_one_fails_naming_its_entry() {
    let Some(cxx) = cxx() else { return };
    let dir = tempfile::tempdir().unwrap();
    let text = asserts();
    let out = check(&cxx, dir.path(), gpuio_device::header::include_dir(), &text);
    assert!(
        out.status.success(),
        "gpuio.h and the generated asserts do not compile:\n{}",
        stderr(&out)
    );

    // gpuio_endpoint.log sits at 12: claim 8.
    let right = format!("== 12ull, {});", message("gpuio_endpoint.log", 12));
    assert_eq!(text.matches(&right).count(), 1, "no single assert {right}");
    let wrong = text.replace(
        &right,
        &format!("== 8ull, {});", message("gpuio_endpoint.log", 8)),
    );
    let out = check(
        &cxx,
        dir.path(),
        gpuio_device::header::include_dir(),
        &wrong,
    );
    assert!(!out.status.success(), "a wrong offset compiled");
    assert!(
        stderr(&out).contains("gpuio_endpoint.log: the Rust ABI says 8"),
        "the error does not name the entry:\n{}",
        stderr(&out)
    );
}

#[test]
fn a_header_that_drifts_from_the_rust_abi_fails_naming_the_field() {
    let Some(cxx) = cxx() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A copy of the headers with two fields of gpuio_endpoint swapped.
    let include = dir.path().join("include");
    for (name, text) in gpuio_device::header::HEADERS {
        let path = include.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = if *name == "gpuio/abi.h" {
            let (queue, log) = (
                "  gpuio_u32 queue;  /* GPUIO_EP_HOST_QUEUE: index in gpuio_channel.queues */\n",
                "  gpuio_u32 log;    /* a printf log: its index in gpuio_channel.queues + 1; 0: none */\n",
            );
            let both = format!("{queue}{log}");
            assert!(text.contains(&both), "gpuio_endpoint's queue and log moved");
            text.replace(&both, &format!("{log}{queue}"))
        } else {
            text.to_string()
        };
        std::fs::write(&path, text).unwrap();
    }
    let out = check(&cxx, dir.path(), &include, &asserts());
    assert!(!out.status.success(), "a drifted header compiled");
    for entry in ["gpuio_endpoint.queue", "gpuio_endpoint.log"] {
        assert!(
            stderr(&out).contains(&format!("{entry}: the Rust ABI says")),
            "the error does not name {entry}:\n{}",
            stderr(&out)
        );
    }
}
