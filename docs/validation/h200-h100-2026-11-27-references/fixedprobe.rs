//! 4224 x 1 MiB writes into a fresh sized file, then reads back, 8 in flight on one io_uring,
//! from / into 512 MiB of buffers taken in turn: WRITE/READ against WRITE_FIXED/READ_FIXED on
//! the same memory registered as one fixed buffer; 4 KiB pages against MADV_HUGEPAGE; and the
//! same with SQPOLL. GB/s.
use io_uring::{opcode, types, IoUring};
use std::os::fd::AsRawFd;
use std::time::Instant;
const CH: usize = 1 << 20;
const N: usize = 4224;
const BUFS: usize = 512;
fn mapping(huge: bool) -> *mut u8 {
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), BUFS * CH, libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert!(p != libc::MAP_FAILED);
        if huge { libc::madvise(p, BUFS * CH, libc::MADV_HUGEPAGE); }
        std::ptr::write_bytes(p as *mut u8, 0x5a, BUFS * CH);
        p as *mut u8
    }
}
fn run(dir: &str, mem: *mut u8, fixed: bool, sqpoll: bool, write: bool, file: &std::fs::File) -> f64 {
    let mut b: io_uring::Builder = IoUring::builder();
    if sqpoll { b.setup_sqpoll(50); }
    let mut ring: IoUring = b.build(32).unwrap();
    if fixed {
        let iov = [libc::iovec { iov_base: mem as _, iov_len: BUFS * CH }];
        unsafe { ring.submitter().register_buffers(&iov).unwrap(); }
    }
    let _ = dir;
    let fd = types::Fd(file.as_raw_fd());
    let (mut next, mut done) = (0usize, 0usize);
    let t = Instant::now();
    while done < N {
        while next < N && next - done < 8 {
            let buf = unsafe { mem.add((next % BUFS) * CH) };
            let off = (next * CH) as u64;
            let e = match (fixed, write) {
                (true, true) => opcode::WriteFixed::new(fd, buf, CH as u32, 0).offset(off).build(),
                (true, false) => opcode::ReadFixed::new(fd, buf, CH as u32, 0).offset(off).build(),
                (false, true) => opcode::Write::new(fd, buf, CH as u32).offset(off).build(),
                (false, false) => opcode::Read::new(fd, buf, CH as u32).offset(off).build(),
            };
            unsafe { ring.submission().push(&e).unwrap(); }
            next += 1;
        }
        ring.submit_and_wait(1).unwrap();
        for c in ring.completion() { assert_eq!(c.result(), CH as i32, "result"); done += 1; }
    }
    (N * CH) as f64 / t.elapsed().as_secs_f64() / 1e9
}
fn main() {
    let dir = std::env::args().nth(1).unwrap_or("/tmp".into());
    let small = mapping(false);
    let huge = mapping(true);
    for rep in 0..2 {
        for (name, mem) in [("4k", small), ("huge", huge)] {
            for sqpoll in [false, true] {
                for fixed in [false, true] {
                    let path = format!("{dir}/fixedprobe-{}", std::process::id());
                    let _ = std::fs::remove_file(&path);
                    let f = std::fs::OpenOptions::new().create(true).read(true).write(true).open(&path).unwrap();
                    f.set_len((N * CH) as u64).unwrap();
                    let w = run(&dir, mem, fixed, sqpoll, true, &f);
                    let r = run(&dir, mem, fixed, sqpoll, false, &f);
                    println!("rep {rep} {name:4} sqpoll {sqpoll:5} fixed {fixed:5}: write {w:.2} GB/s, read {r:.2} GB/s");
                    drop(f);
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
}
