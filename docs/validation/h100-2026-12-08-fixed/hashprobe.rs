// A scratch probe (not part of the build): `hashprobe marked|unmarked sqpoll|plain ROUND IN_FLIGHT [FILES]`.
// One CPU thread writes 1 GiB in 1 MiB WRITE_FIXEDs on registered files, round-robin over
// FILES new files, and counts the io-wq workers, their CPU, runs and run-queue wait.
use io_uring::{opcode, squeue::Flags, types, IoUring};
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::time::Instant;

const CHUNK: usize = 1 << 20;
const N: usize = 1024;


/// io-wq workers: count, CPU seconds, times put on a CPU, seconds waiting for one
/// (schedstat).
fn workers() -> (usize, f64, u64, f64) {
    let mut n = 0;
    let mut ticks = 0u64;
    let (mut runs, mut wait) = (0u64, 0u64);
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let p = e.unwrap().path();
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if comm.starts_with("iou-wrk") {
            n += 1;
            let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
            let rest = &stat[stat.rfind(')').unwrap() + 2..];
            let f: Vec<&str> = rest.split(' ').collect();
            ticks += f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
            let ss = std::fs::read_to_string(p.join("schedstat")).unwrap_or_default();
            let v: Vec<u64> = ss.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            if v.len() == 3 {
                wait += v[1];
                runs += v[2];
            }
        }
    }
    (n, ticks as f64 / 100.0, runs, wait as f64 / 1e9)
}

fn run(marked: bool, sqpoll: bool, round: usize, infl: usize, nfiles: usize) {
    let paths: Vec<String> = (0..nfiles).map(|i| format!("/tmp/hashprobe-{round}-{marked}-{sqpoll}-{i}.bin")).collect();
    let fs: Vec<std::fs::File> = paths.iter().map(|p| OpenOptions::new().create(true).truncate(true).read(true).write(true).open(p).unwrap()).collect();
    let mut b = IoUring::builder();
    if sqpoll {
        b.setup_sqpoll(1000);
    }
    let mut ring: IoUring = b.build(64).unwrap();
    ring.submitter().register_files(&fs.iter().map(|f| f.as_raw_fd()).collect::<Vec<_>>()).unwrap();
    let mut bufs: Vec<Vec<u8>> = (0..infl).map(|i| vec![i as u8 + 1; CHUNK]).collect();
    let iov: Vec<libc::iovec> = bufs.iter_mut().map(|b| libc::iovec { iov_base: b.as_mut_ptr().cast(), iov_len: CHUNK }).collect();
    unsafe { ring.submitter().register_buffers(&iov).unwrap() };
    let mut free: Vec<usize> = (0..infl).collect();
    let (mut next, mut done) = (0usize, 0usize);
    let (w0, c0, r0, q0) = workers();
    let mut maxw = w0;
    let t = Instant::now();
    while done < N {
        while next < N {
            let Some(b) = free.pop() else { break };
            let mut e = opcode::WriteFixed::new(types::Fixed((next % nfiles) as u32), bufs[b].as_mut_ptr(), CHUNK as u32, b as u16)
                .offset(((next / nfiles) * CHUNK) as u64)
                .build()
                .user_data(b as u64);
            if marked {
                e = e.flags(Flags::ASYNC);
            }
            unsafe { ring.submission().push(&e).unwrap() };
            next += 1;
        }
        ring.submit_and_wait(1).unwrap();
        let cq: Vec<(i32, u64)> = ring.completion().map(|c| (c.result(), c.user_data())).collect();
        for (r, b) in cq {
            assert_eq!(r, CHUNK as i32);
            free.push(b as usize);
            done += 1;
        }
        if done % 64 == 0 {
            maxw = maxw.max(workers().0);
        }
    }
    let dt = t.elapsed().as_secs_f64();
    let (w1, c1, r1, q1) = workers();
    println!(
        "round {round} marked={marked} sqpoll={sqpoll} in flight {infl} files {nfiles}: {:.2} GB/s, iou-wrk threads max {} (end {w1}), their CPU {:.2} s ({:.3} s/GB), {:.2} runs and {:.1} us waiting per write",
        (N * CHUNK) as f64 / dt / 1e9,
        maxw.max(w1),
        c1 - c0,
        (c1 - c0) / ((N * CHUNK) as f64 / 1e9),
        (r1 - r0) as f64 / N as f64,
        (q1 - q0) * 1e6 / N as f64
    );
    drop(ring);
    drop(fs);
    for p in &paths { let _ = std::fs::remove_file(p); }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    run(a[1] == "marked", a[2] == "sqpoll", a[3].parse().unwrap(), a[4].parse().unwrap(), a.get(5).map_or(1, |n| n.parse().unwrap()));
}
