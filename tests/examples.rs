//! The examples run on every CPU pair, both ways a user runs them: `gpuio run
//! examples/X.cu …` (with `--compare`, which must find every pair's output
//! byte-identical) and `cargo run --example X` (each checks its own output). The
//! README's kernel is `examples/hello.cu`, verbatim.

mod probe_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use probe_support::{gpuio, run, stderr, stdout};

const CPU_PAIRS: [&str; 3] = ["cpu/direct", "cpu/forward", "cpu/mailbox"];

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

/// The pairs `--compare` ran, from its table, with the last column.
fn compared(table: &str) -> Vec<(String, String)> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let pair = l.split_whitespace().next()?.to_string();
            let verdict = l.rsplit("  ").next()?.trim().to_string();
            Some((pair, verdict))
        })
        .collect()
}

fn assert_all_cpu_pairs_identical(o: &std::process::Output) {
    let table = stdout(o);
    assert!(o.status.success(), "{table}\n{}", stderr(o));
    let rows = compared(&table);
    let pairs: Vec<&str> = rows.iter().map(|(p, _)| p.as_str()).collect();
    for p in CPU_PAIRS {
        assert!(pairs.contains(&p), "{p} missing from\n{table}");
    }
    assert_eq!(rows[0].1, "(reference)", "{table}");
    for (pair, verdict) in &rows[1..] {
        assert_eq!(verdict, "byte-identical", "{pair}:\n{table}");
    }
}

#[test]
fn the_readme_kernel_is_the_hello_example_verbatim() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("```c++\n").expect("the README shows a kernel") + "```c++\n".len();
    let len = readme[start..].find("```").unwrap();
    let hello = std::fs::read_to_string(example("hello.cu")).unwrap();
    assert_eq!(&readme[start..start + len], hello);
}

#[test]
fn hello_runs_through_gpuio_run_with_every_line_written_and_printed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hello.out");
    let o = run(&mut gpuio(&[
        "--backend",
        "cpu/mailbox",
        "run",
        &example("hello.cu"),
        "--grid",
        "2",
        "--block",
        "32",
        "--file",
        &format!("out={}:w", out.display()),
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    let file = std::fs::read(&out).unwrap();
    for t in 0..64u64 {
        assert!(
            printed.contains(&format!("thread {t} says hello\n")),
            "{printed}"
        );
        let want = format!("thread {t} of 64\n");
        let at = (t * 64) as usize;
        assert_eq!(&file[at..at + want.len()], want.as_bytes(), "thread {t}");
    }
    let err = stderr(&o);
    assert!(
        err.contains("hello from") && err.contains("on cpu/mailbox"),
        "{err}"
    );
    assert!(err.contains("params: ["), "{err}");
    // The writes are requests; the lines travel over stdout's printf log.
    assert!(
        err.contains("channel: mailbox: submitted 64 = completed 64 + failed 0")
            && err.contains("printf log to \"stdout\": 64 lines"),
        "{err}"
    );
}

#[test]
fn a_queue_out_file_holds_every_message_the_kernel_sent_in_each_threads_order() {
    let kernel = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/send_records.cu");
    let (threads, per) = (64u64, 500u64);
    for pair in CPU_PAIRS {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("records.bin");
        let o = run(&mut gpuio(&[
            "--backend",
            pair,
            "run",
            &kernel.display().to_string(),
            "--grid",
            "2",
            "--block",
            "32",
            "--queue-out",
            &format!("records={}", out.display()),
            "--arg",
            &per.to_string(),
            "--arg",
            "0",
        ]));
        let err = stderr(&o);
        assert!(o.status.success(), "{pair}: {err}");
        assert!(err.contains("params: [500, 0]"), "{pair}: {err}");
        let want = threads * per;
        assert!(
            err.contains(&format!(
                "queue \"records\": {want} messages, {} bytes written to",
                want * 16
            )),
            "{pair}: {err}"
        );
        let file = std::fs::read(&out).unwrap();
        assert_eq!(file.len() as u64, want * 16, "{pair}");
        // Every record once, each thread's in the order it sent them.
        let mut next = vec![0u64; threads as usize];
        for r in file.chunks_exact(16) {
            let t = u64::from_le_bytes(r[..8].try_into().unwrap());
            let i = u64::from_le_bytes(r[8..].try_into().unwrap());
            assert!(t < threads, "{pair}: a record from thread {t}");
            assert_eq!(
                i, next[t as usize],
                "{pair}: thread {t}'s records out of order"
            );
            next[t as usize] += 1;
        }
        assert!(next.iter().all(|&n| n == per), "{pair}");
    }
}

#[test]
fn hello_compares_byte_identical_on_every_cpu_pair() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hello.out");
    let o = run(&mut gpuio(&[
        "--backend",
        "cpu",
        "run",
        "--compare",
        &example("hello.cu"),
        "--grid",
        "2",
        "--block",
        "16",
        "--file",
        &format!("out={}:w", out.display()),
    ]));
    assert_all_cpu_pairs_identical(&o);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("thread 31 of 32\n"));
}

fn generated(dir: &Path, name: &str, len: usize) -> PathBuf {
    let p = dir.join(name);
    let data: Vec<u8> = (0..len as u64)
        .map(|i| b"gpuio copies and counts bytes\n"[(i * 7 % 30) as usize])
        .collect();
    std::fs::write(&p, data).unwrap();
    p
}

/// Bytes `examples/copy.cu` copies in the tests below.
const COPY_LEN: u64 = (1 << 20) + 77;

/// `gpuio --backend <backend> run <run_args…> examples/copy.cu` on a generated
/// source in `dir`: what it printed, and the source's and the copy's bytes.
fn run_copy(
    dir: &Path,
    backend: &str,
    run_args: &[&str],
) -> (std::process::Output, Vec<u8>, Vec<u8>) {
    let src = generated(dir, "src.bin", COPY_LEN as usize);
    let dst = dir.join("dst.bin");
    let (src_arg, dst_arg, len) = (
        format!("src={}:r", src.display()),
        format!("dst={}:w", dst.display()),
        COPY_LEN.to_string(),
    );
    let copy = example("copy.cu");
    let mut args = vec!["--backend", backend, "run"];
    args.extend_from_slice(run_args);
    args.extend_from_slice(&[
        &copy, "--grid", "2", "--block", "16", "--params", "3", "--file", &src_arg, "--file",
        &dst_arg, "--arg", &len,
    ]);
    let o = run(&mut gpuio(&args));
    let copied = std::fs::read(&dst).unwrap_or_default();
    (o, std::fs::read(&src).unwrap(), copied)
}

#[test]
fn copy_compares_byte_identical_on_every_cpu_pair_and_the_copy_is_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let (o, src, dst) = run_copy(dir.path(), "cpu", &["--compare"]);
    assert_all_cpu_pairs_identical(&o);
    assert_eq!(src, dst);
}

/// `gpuio run --slot-size`: the same copy, in requests of 4 KiB instead of the
/// default 64 KiB, is still the source byte for byte and takes at least one
/// request per 4 KiB each way.
#[test]
fn a_smaller_slot_size_splits_the_same_copy_into_more_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (o, src, dst) = run_copy(dir.path(), "cpu/forward", &["--slot-size", "4096"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(src, dst);
    let submitted: u64 = err
        .split("channel: forward: submitted ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no request count in\n{err}"));
    assert!(
        submitted >= 2 * COPY_LEN.div_ceil(4096),
        "{submitted} requests\n{err}"
    );
}

#[test]
fn histogram_compares_byte_identical_on_every_cpu_pair_and_counts_right() {
    let dir = tempfile::tempdir().unwrap();
    let len = 300_001;
    let input = generated(dir.path(), "in.txt", len);
    let result = dir.path().join("histogram.txt");
    let o = run(&mut gpuio(&[
        "--backend",
        "cpu",
        "run",
        "--compare",
        &example("histogram.cu"),
        "--grid",
        "4",
        "--block",
        "8",
        "--params",
        "258",
        "--file",
        &format!("in={}:r", input.display()),
        "--file",
        &format!("out={}:w", result.display()),
        "--arg",
        &len.to_string(),
    ]));
    assert_all_cpu_pairs_identical(&o);
    let mut counts = [0u64; 256];
    for b in std::fs::read(&input).unwrap() {
        counts[usize::from(b)] += 1;
    }
    let want: String = counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(b, n)| format!("0x{b:02x} {b:3} {n}\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(&result).unwrap(), want);
}

/// The same record, for thread `t` of `n`, as `tests/kernels/count_slices.cu` writes.
fn count_slices_record(data: &[u8], t: usize, n: usize) -> String {
    let size = data.len();
    let slice = size.div_ceil(n);
    let begin = (t * slice).min(size);
    let end = (begin + slice).min(size);
    let space = |c: u8| matches!(c, b' ' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c);
    let lines = data[begin..end].iter().filter(|c| **c == b'\n').count();
    let words = (begin..end)
        .filter(|&i| !space(data[i]) && (i == 0 || space(data[i - 1])))
        .count();
    let body = format!(
        "t={t:05} off={begin:08} len={:06} lines={lines:06} words={words:06}",
        end - begin
    );
    format!("{body:<63}\n")
}

/// Runs `kernel` (a kernel file counting lines and words as
/// `tests/kernels/count_slices.cu` does) over a generated text with `gpuio run
/// --compare` on every CPU pair, and checks the pairs agree and the records are
/// right.
fn count_slices_compares_byte_identical(kernel: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..4000)
        .map(|i| format!("line {i}:  some\twords   here{}\n", " x".repeat(i % 7)))
        .collect();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, &text).unwrap();
    let out = dir.path().join("out.bin");
    let o = run(&mut gpuio(&[
        "--backend",
        "cpu",
        "run",
        "--compare",
        &kernel.display().to_string(),
        "--grid",
        "3",
        "--block",
        "7",
        "--params",
        "4",
        "--file",
        &format!("in={}:r", input.display()),
        "--file",
        &format!("out={}:w", out.display()),
        "--arg",
        &text.len().to_string(),
    ]));
    assert_all_cpu_pairs_identical(&o);
    let want: String = (0..21)
        .map(|t| count_slices_record(text.as_bytes(), t, 21))
        .collect();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), want);
}

#[test]
fn a_kernel_written_from_the_docs_alone_compares_byte_identical_on_every_cpu_pair() {
    count_slices_compares_byte_identical(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/count_slices.cu"),
    );
}

#[test]
fn a_kernel_that_sets_its_own_first_poll_pause_still_gets_every_answer_right() {
    // The host target does not pause by default (GPUIO_FIRST_POLL_NS 0): a kernel
    // that defines it runs the pause's spin on every synchronous call, and one that
    // defines forward's alone on forward's.
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/count_slices.cu");
    let text = std::fs::read_to_string(source).unwrap();
    for (name, define) in [
        ("paused.cu", "#define GPUIO_FIRST_POLL_NS 20000u"),
        (
            "forward_paused.cu",
            "#define GPUIO_FIRST_POLL_FORWARD_NS 20000u",
        ),
    ] {
        let kernel = dir.path().join(name);
        std::fs::write(&kernel, format!("{define}\n{text}")).unwrap();
        count_slices_compares_byte_identical(&kernel);
    }
}

/// `target/<profile>/examples/<name>`, built by `cargo test` beside this test.
fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    profile_dir.join("examples").join(name)
}

#[test]
fn every_cargo_example_runs_and_checks_itself_on_every_cpu_pair() {
    for name in ["hello", "copy", "histogram", "queue_worker"] {
        let bin = example_binary(name);
        assert!(bin.exists(), "{} was not built", bin.display());
        for pair in CPU_PAIRS {
            let o = Command::new(&bin)
                .env("GPUIO_BACKEND", pair)
                .env_remove("GPUIO_PROBE_FAKE")
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{name} on {pair}:\n{}\n{}",
                stdout(&o),
                stderr(&o)
            );
            assert!(stderr(&o).contains(&format!("on {pair}")), "{}", stderr(&o));
        }
    }
}
