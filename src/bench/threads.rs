//! The host's CPU time split by who spent it, for the bulk figures: the kernel's io
//! threads that run in this process — a ring's SQPOLL thread (`iou-sqp-<pid>`) and
//! its io-wq workers (`iou-wrk-<pid>`) — and the rest, the process's own threads (a
//! transport's host threads; on the CPU device the emulated kernel's threads too).
//! `direct` should leave the process's own threads idle on its data path; where its
//! CPU goes instead is the kernel's.
//!
//! Read from `/proc/self/task/<tid>/schedstat` (nanoseconds on a CPU; `stat`'s
//! clock ticks where schedstat is missing). Of the io-wq workers schedstat also
//! gives how often they were put on a CPU and how long they waited, runnable, for
//! one: a worker that sleeps between a file's writes, woken for each, runs about
//! once per write and waits its wake-up's latency each time, where one that finds
//! the next write queued runs on. A thread that starts between two
//! snapshots counts from zero; an io thread that ends between them (an io-wq
//! worker idle for seconds) loses its share to "the rest", which is the process's
//! whole CPU time less the io threads'.

use std::time::{Duration, Instant};

/// Which kind of thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sqpoll,
    Worker,
    Own,
}

fn kind_of(comm: &str) -> Kind {
    if comm.starts_with("iou-sqp-") {
        Kind::Sqpoll
    } else if comm.starts_with("iou-wrk-") {
        Kind::Worker
    } else {
        Kind::Own
    }
}

/// What `/proc` says of one thread: its CPU time and, where schedstat is read, how
/// long it waited on a run queue and how many times it was put on a CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sched {
    cpu: Duration,
    waits: Option<(Duration, u64)>,
}

/// The process's CPU time and each of its threads', at one moment.
pub struct Snapshot {
    at: Instant,
    total: Duration,
    threads: Vec<(u64, Kind, Sched)>,
}

/// CPU time spent between two snapshots, by kind of thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuUse {
    pub wall: Duration,
    /// Every thread of the process (`CLOCK_PROCESS_CPUTIME_ID`).
    pub total: Duration,
    /// The rings' SQPOLL threads.
    pub sqpoll: Duration,
    /// io-wq workers.
    pub workers: Duration,
    /// io-wq workers that ran at all.
    pub workers_seen: usize,
    /// Of the io-wq workers: the time they waited, runnable, for a CPU, and how many
    /// times they were put on one; `None` where schedstat could not be read for one
    /// of them.
    pub workers_waits: Option<(Duration, u64)>,
}

impl CpuUse {
    /// The process's own threads: everything but the kernel's io threads.
    pub fn own(&self) -> Duration {
        self.total.saturating_sub(self.sqpoll + self.workers)
    }
}

impl Snapshot {
    pub fn now() -> Self {
        let at = Instant::now();
        Self {
            at,
            total: super::process_cpu_time(),
            threads: threads(),
        }
    }

    /// What was spent since `self`.
    pub fn since(&self) -> CpuUse {
        let now = Snapshot::now();
        let mut out = CpuUse {
            wall: now.at.duration_since(self.at),
            total: now.total.saturating_sub(self.total),
            ..CpuUse::default()
        };
        let mut waits = Some((Duration::ZERO, 0u64));
        for &(tid, kind, t) in &now.threads {
            let before = self
                .threads
                .iter()
                .find(|(id, ..)| *id == tid)
                .map_or(Sched::default(), |&(.., b)| b);
            let spent = t.cpu.saturating_sub(before.cpu);
            match kind {
                Kind::Sqpoll => out.sqpoll += spent,
                Kind::Worker => {
                    out.workers += spent;
                    if !spent.is_zero() {
                        out.workers_seen += 1;
                    }
                    // A thread new since `self` counts from zero, as its CPU time does.
                    let (d0, n0) = before.waits.unwrap_or_default();
                    waits = waits.zip(t.waits).map(|((d, n), (d1, n1))| {
                        (d + d1.saturating_sub(d0), n + n1.saturating_sub(n0))
                    });
                }
                Kind::Own => {}
            }
        }
        out.workers_waits = waits;
        out
    }
}

/// Every thread of the process now: id, kind, CPU time. Threads whose files
/// cannot be read (gone meanwhile) are left out.
fn threads() -> Vec<(u64, Kind, Sched)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        let sched = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| schedstat(&s))
            .map(|(cpu, wait, runs)| Sched {
                cpu: Duration::from_nanos(cpu),
                waits: Some((Duration::from_nanos(wait), runs)),
            })
            .or_else(|| {
                std::fs::read_to_string(path.join("stat"))
                    .ok()
                    .and_then(|s| stat_ticks(&s))
                    .map(|t| Sched {
                        cpu: ticks(t),
                        waits: None,
                    })
            });
        if let Some(sched) = sched {
            out.push((tid, kind_of(comm.trim_end()), sched));
        }
    }
    out
}

/// A `schedstat` line's three fields: nanoseconds on a CPU, nanoseconds waiting on
/// a run queue, times put on a CPU.
fn schedstat(s: &str) -> Option<(u64, u64, u64)> {
    let mut f = s.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??, f.next()??))
}

/// utime + stime (fields 14 and 15) of a `stat` line, in clock ticks. The command
/// name (field 2) may hold spaces and parentheses: fields are counted after its
/// last `)`.
fn stat_ticks(s: &str) -> Option<u64> {
    let rest = &s[s.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11); // field 3 is the first after ')'
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

fn ticks(n: u64) -> Duration {
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Duration::from_nanos(n.saturating_mul(1_000_000_000) / hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_threads_are_told_apart_by_their_names() {
        assert_eq!(kind_of("iou-sqp-4242"), Kind::Sqpoll);
        assert_eq!(kind_of("iou-wrk-4242"), Kind::Worker);
        assert_eq!(kind_of("gpuio-fwd-0"), Kind::Own);
        assert_eq!(kind_of("gpuio"), Kind::Own);
    }

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
        // cmajflt utime stime ...
        let line = "77 (a (b) c) S 1 77 77 0 -1 4194304 10 0 0 0 123 45 0 0 20 0 1 0";
        assert_eq!(stat_ticks(line), Some(168));
        assert_eq!(schedstat("987654 1234 56\n"), Some((987_654, 1234, 56)));
        assert_eq!(schedstat("987654\n"), None);
    }

    /// Held by the tests that read the whole process's CPU: one of them makes an
    /// io-wq worker, whose time the other would count if they ran side by side
    /// (seen in CI, 2026-11-29: 85 µs of a worker's time in the busy thread's test).
    static PROCESS_CPU: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_busy_thread_of_the_process_is_counted_as_its_own() {
        let _alone = PROCESS_CPU.lock().unwrap_or_else(|e| e.into_inner());
        let before = Snapshot::now();
        let spin = std::thread::spawn(|| {
            let start = Instant::now();
            let mut x = 0u64;
            while start.elapsed() < Duration::from_millis(50) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            x
        });
        // Read while the thread still runs: a thread that ended is gone from /proc.
        std::thread::sleep(Duration::from_millis(30));
        let used = before.since();
        let _ = spin.join();
        assert!(used.total >= Duration::from_millis(10), "{used:?}");
        assert_eq!(
            (used.sqpoll, used.workers),
            (Duration::ZERO, Duration::ZERO)
        );
        assert_eq!(used.own(), used.total);
    }

    #[test]
    fn a_read_marked_async_is_counted_to_the_io_wq_workers() {
        use io_uring::{opcode, squeue, types, IoUring};
        let _alone = PROCESS_CPU.lock().unwrap_or_else(|e| e.into_inner());
        use std::os::fd::AsRawFd as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut ring = IoUring::new(8).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let before = Snapshot::now();
        let sqe = opcode::Read::new(types::Fd(file.as_raw_fd()), buf.as_mut_ptr(), 1 << 20)
            .offset(0)
            .build()
            .flags(squeue::Flags::ASYNC);
        // SAFETY: `buf` outlives the request: submit_and_wait returns once it completed.
        unsafe { ring.submission().push(&sqe) }.unwrap();
        ring.submit_and_wait(1).unwrap();
        let res = ring.completion().next().unwrap().result();
        // The worker idles for seconds before it ends: still there to be read.
        let used = before.since();
        assert_eq!(res, 1 << 20);
        assert_eq!(buf[12345], 7);
        assert!(
            used.workers_seen >= 1 && !used.workers.is_zero(),
            "{used:?}"
        );
        if let Some((_, runs)) = used.workers_waits {
            assert!(runs >= 1, "a worker that ran was put on a CPU: {used:?}");
        }
        assert_eq!(used.sqpoll, Duration::ZERO);
    }
}
