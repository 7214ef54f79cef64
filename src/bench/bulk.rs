//! Bulk figures (`gpuio bench`): 1 MiB `gpuio_pwrite_warp` / `gpuio_pread_warp`
//! from every warp of the device (built-in kernel `bulk`; on the CPU device every
//! thread is a warp; with `--quick`, as few warps per block as 128 MiB a pass needs,
//! [`Scale::bulk_every_warp`]), into one file and into one file per SM group
//! ([`GROUPS`] groups of consecutive blocks), in GB/s. Each figure is held against
//! references measured in the same run, once per repeat and shared by every
//! transport (they do not depend on it):
//! * one host thread `pwrite`-ing / `pread`-ing exactly the same ranges of files
//!   laid out the same way, from / into one buffer of 1 MiB (which stays in the
//!   CPU's cache), and again from / into as much memory as the `direct` bulk
//!   channel's staging, as a transport's host thread copies from / into slots all
//!   over its staging (on the development machine a thread `pwrite`s 1 MiB chunks
//!   into a file already written at 7.5 GB/s from one buffer, 5.0 GB/s from 512
//!   MiB; into fresh files, as here, 5.2 against 4.2–4.3 GB/s from 256 MiB);
//! * the same io_uring work driven by a CPU thread: one host thread keeping
//!   [`IN_FLIGHT`] 1 MiB reads or writes of the same ranges in flight on an
//!   ordinary io_uring, with [`IN_FLIGHT`] buffers of its own (which stay in the
//!   CPU's cache), and again with its buffers spread over as much memory as the
//!   `direct` bulk channel's staging, taken in turn, as `direct`'s requests copy
//!   into slots all over its staging (a thread on a 2-core test machine `pread`
//!   1 MiB chunks of a cached file at 8.7 GB/s into 8 MiB of buffers, 6.6 GB/s into
//!   512 MiB); and both again with each 1 MiB SQE marked `IOSQE_ASYNC`, as
//!   `direct` marks its transfers of 64 KiB and more (`GPUIO_DIRECT_ASYNC_BYTES`),
//!   and the marked one on [`IN_FLIGHT`] buffers once more with them registered
//!   with the ring (`WRITE_FIXED` / `READ_FIXED`), as `direct`'s SQEs name its
//!   registered staging, and at most one write of a file in flight, as `direct`'s
//!   write gate keeps them (left out where `RLIMIT_MEMLOCK` refuses the 8 MiB): the
//!   same SQEs, so that "GPU-driven against CPU-driven" compares like with like;
//!
//!   every reference run writes into fresh files of its own, sized beforehand, and
//!   reads back what it wrote, as a transport's passes do;
//! * the ceiling of any copy between host and device memory
//!   ([`Device::copy_bandwidth`]: pinned `cuMemcpyDtoH`/`HtoD` on CUDA, `memcpy` on
//!   the CPU device) in the direction the bytes travel (a write goes device to
//!   host).
//!
//! Each variant runs four passes on one channel: writes, then reads of what they
//! wrote, both through the channel's slots (each warp copies its chunk between
//! device memory and its slot's staging chunk), then the same writes and reads
//! from and into the channel's user staging area with one lane's
//! `gpuio_pwrite_staged` / `gpuio_pread_staged` (`STAGED_CHUNKS` chunks, shared
//! by the warps): no copy between device and host memory, so the same work as the
//! CPU-driven references, which are their main references (on `direct` the one
//! with marked SQEs on registered buffers, or on plain ones where those could not
//! be registered; on `forward` the unmarked one; on `mailbox`, whose host threads
//! make plain syscalls, one host thread's `pwrite`/`pread`), each on the buffers that
//! stay in the CPU's cache, the faster of its two. The files are emptied before
//! the staged writes (`emptied`), so that both write passes write into fresh
//! files, as every reference does. Two passes without a request follow: every
//! warp copies its chunks between device memory and its slot's staging chunk as a
//! pread's and a pwrite's copy does (`COPIES`), and the write and read passes
//! through the slots are held against that too ("the device's copy alone"). A
//! pass through the slots moves each chunk through the I/O and the copy in turn,
//! so it is read next to both: its staged pass and the copy alone (on an H100,
//! 2026-12-07: SMs read pinned host memory at 51 GB/s with any load width or the
//! bulk-copy unit, preads into staging ran at 65 GB/s, both in turn at 32.5).
//! Every figure's host CPU is split into the process's own threads, the kernel's
//! SQPOLL threads and its io-wq workers (`super::threads`).
//!
//! The channel: slots of 1 MiB ([`CHUNK`]), so that a warp's 1 MiB request is one
//! request (a request can be no longer than a slot's staging chunk; the default 64
//! KiB slot would split it into 16 round trips), [`Scale::bulk_slots`] of them (1024,
//! 1 GiB of staging, in a full run; 256 with `--quick`; at most `DIRECT_SLOTS` on
//! `direct`), fewer if a channel that large does not open (the figure notes how
//! many); a 60 s call deadline. The write pass comes first and the read pass reads
//! back what it wrote; files are sized beforehand, so a chunk the write pass did
//! not reach reads as zeros rather than short. Each pass stops starting chunks
//! after [`Scale::bulk_seconds`].

use std::fs::File;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpuio_core::{Access, Channel, ChannelConfig, Endpoint, TransportKind};
use gpuio_device::{CopyBandwidth, Device, DeviceBuffer};

use super::{create_rw, launch_channel, launch_wait_shape, threads, Better, Figure, Panel, Scale};
use crate::conformance::Opener;

/// Bytes per request.
pub const CHUNK: u64 = 1 << 20;
/// Files of the "one file per SM group" figures.
pub const GROUPS: u64 = 8;
/// Requests the io_uring reference keeps in flight.
pub const IN_FLIGHT: usize = 8;
/// Most slots of the bulk channel on `direct`: its staging is registered as one
/// io_uring fixed buffer of at most 1 GiB, so 1024 slots of 1 MiB (and the user
/// staging beside them) do not open there, and one SQPOLL ring serves them however
/// many there are. 512 and 256 slots moved 1 MiB reads from every warp at 7.72 /
/// 8.80 and 6.56 / 7.20 GB/s (H100, 2026-11-26, one call, alternating).
const DIRECT_SLOTS: u32 = 512;

/// Chunks of the user staging area the staged passes read into and write from
/// (units share them modulo this count).
const STAGED_CHUNKS: u64 = 32;

/// Chunks of device memory the kernel reads from and into (units share them
/// modulo this count).
const BUFFER_CHUNKS: u64 = 256;

/// Which chunks go where: `units` warps (or CPU threads), `per` chunks each,
/// split into groups of consecutive units as the kernel `bulk` does; launched as
/// `shape` (grid, block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub units: u64,
    pub per: u64,
    pub shape: (u32, u32),
}

impl Layout {
    /// `(file, offset)` of every chunk when the units are split over `files`
    /// files: unit u is in group g = u · files / units, which starts at
    /// first(g) = ⌈g · units / files⌉; its chunk i is at ((u − first(g)) · per + i) ·
    /// CHUNK of file g.
    pub fn ranges(&self, files: u64) -> Vec<(usize, u64)> {
        let mut out = Vec::with_capacity((self.units * self.per) as usize);
        for u in 0..self.units {
            let g = u * files / self.units;
            let first = (g * self.units).div_ceil(files);
            for i in 0..self.per {
                out.push((g as usize, ((u - first) * self.per + i) * CHUNK));
            }
        }
        out
    }

    /// Bytes of each of `files` files.
    pub fn file_lens(&self, files: u64) -> Vec<u64> {
        let mut lens = vec![0u64; files as usize];
        for (f, off) in self.ranges(files) {
            lens[f] = lens[f].max(off + CHUNK);
        }
        lens
    }
}

/// One way of laying out the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub files: u64,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant { files: 1 }, Variant { files: GROUPS }];

    fn words(self) -> String {
        if self.files == 1 {
            "one file".to_string()
        } else {
            format!("one file per SM group ({})", self.files)
        }
    }
}

/// The references of one variant, bytes per second.
#[derive(Clone, Copy, Debug)]
pub struct HostRefs {
    pub variant: Variant,
    /// One host thread's `pwrite`s and `pread`s, from / into one buffer.
    pub thread: Rates,
    /// The same over [`HostRefs::staging_mib`] MiB of buffers.
    pub staging_thread: Rates,
    /// The same io_uring work, on [`IN_FLIGHT`] buffers.
    pub uring: Rates,
    /// The same io_uring work over [`HostRefs::staging_mib`] MiB of buffers.
    pub staging_uring: Rates,
    /// [`HostRefs::uring`] and [`HostRefs::staging_uring`] with each 1 MiB SQE
    /// marked `IOSQE_ASYNC`, as `direct` marks its large transfers.
    pub uring_async: Rates,
    pub staging_uring_async: Rates,
    /// [`HostRefs::uring_async`] with its buffers registered with the ring and
    /// read or written by `IORING_OP_READ_FIXED` / `WRITE_FIXED`, as `direct`'s
    /// SQEs name its registered staging; `None` where registering them failed
    /// (`RLIMIT_MEMLOCK`).
    pub uring_fixed: Option<Rates>,
    /// What [`HostRefs::uring_fixed`]'s writes cost the host, split by kind of
    /// thread, and how many 1 MiB writes they were: its io-wq workers' busy share and
    /// runs per write set direct's one-file writes beside the same SQEs made by a CPU
    /// thread, handover by handover.
    pub uring_fixed_write_cpu: Option<(threads::CpuUse, u64)>,
    pub staging_mib: u64,
}

/// Bytes per second written and read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    pub write: f64,
    pub read: f64,
}

impl Rates {
    /// The write rate for op 0 (the write pass), else the read rate.
    fn of(self, op: u32) -> f64 {
        if op == 0 {
            self.write
        } else {
            self.read
        }
    }
}

/// The references of one repeat that every transport's figures share.
#[derive(Clone, Debug, Default)]
pub struct RunRefs {
    pub copy: Option<CopyBandwidth>,
    pub layout: Option<Layout>,
    pub host: Vec<HostRefs>,
    /// One CPU thread driving an SQPOLL ring kept full of NOPs: `(entries, M/s)`,
    /// for each depth the whole-device NOP figures are measured at
    /// (`super::sqpoll_refs`).
    pub sqpoll_nops: Vec<(u32, f64)>,
    /// One host thread's io_uring NOP, submitted and waited for alone: µs.
    pub host_nop_us: Option<f64>,
}

impl RunRefs {
    /// The SQPOLL ring's NOP rate at `entries` deep, if it was measured.
    pub fn sqpoll_rate(&self, entries: u32) -> Option<f64> {
        self.sqpoll_nops
            .iter()
            .find(|&&(e, _)| e == entries)
            .map(|&(_, rate)| rate)
    }
}

/// Measures this repeat's references: the copy ceiling, the bulk layout (from a
/// launch of `bulk` that moves nothing), the host's bulk references, one host
/// thread's io_uring NOP and the SQPOLL rings' NOP rates.
pub fn run_refs(device: &dyn Device, dir: &Path, scale: Scale) -> Result<RunRefs, String> {
    let copy = device
        .copy_bandwidth(scale.copy_bytes, 5)
        .map_err(|e| format!("copy bandwidth: {e}"))?;
    let layout = layout(device, scale)?;
    let mut host = Vec::new();
    for variant in Variant::ALL {
        host.push(host_refs(dir, layout, variant, direct_slots(scale))?);
    }
    Ok(RunRefs {
        copy: Some(copy),
        layout: Some(layout),
        host,
        sqpoll_nops: super::sqpoll_refs(device, scale),
        host_nop_us: super::host_uring_nop_us(scale.nops).ok(),
    })
}

/// Slots of 1 MiB the `direct` bulk channel asks for.
fn direct_slots(scale: Scale) -> u32 {
    scale.bulk_slots.min(DIRECT_SLOTS)
}

/// The references as figures of their own, for the run's reference section.
pub fn reference_figures(refs: &RunRefs) -> Vec<Figure> {
    let mut out = Vec::new();
    if let Some(c) = &refs.copy {
        let mib = c.bytes >> 20;
        out.push(Figure::new(
            format!(
                "copy ceiling, device to host ({}, {mib} MiB, best of 5)",
                c.how
            ),
            c.device_to_host / 1e9,
            "GB/s",
            Better::Higher,
        ));
        out.push(Figure::new(
            format!(
                "copy ceiling, host to device ({}, {mib} MiB, best of 5)",
                c.how
            ),
            c.host_to_device / 1e9,
            "GB/s",
            Better::Higher,
        ));
    }
    for h in &refs.host {
        let v = h.variant.words();
        let mib = h.staging_mib;
        // `staging`: buffers over as much memory as direct's staging; `marked`: SQEs
        // marked IOSQE_ASYNC, as direct marks its large transfers.
        let uring = |what: &str, staging: bool, marked: bool| {
            let buffers = match (staging, what) {
                (false, _) => String::new(),
                (true, "writes") => format!(" from {mib} MiB"),
                (true, _) => format!(" into {mib} MiB"),
            };
            let flag = if marked { ", IOSQE_ASYNC" } else { "" };
            format!("one host thread, io_uring, {IN_FLIGHT} x 1 MiB {what} in flight{buffers}{flag}, {v}")
        };
        let mut figures = vec![
            (
                format!("one host thread, pwrite 1 MiB, {v}"),
                h.thread.write,
            ),
            (format!("one host thread, pread 1 MiB, {v}"), h.thread.read),
            (
                format!("one host thread, pwrite 1 MiB from {mib} MiB, {v}"),
                h.staging_thread.write,
            ),
            (
                format!("one host thread, pread 1 MiB into {mib} MiB, {v}"),
                h.staging_thread.read,
            ),
        ];
        for (rates, staging, marked) in [
            (h.uring, false, false),
            (h.staging_uring, true, false),
            (h.uring_async, false, true),
            (h.staging_uring_async, true, true),
        ] {
            figures.push((uring("writes", staging, marked), rates.write));
            figures.push((uring("reads", staging, marked), rates.read));
        }
        for (what, rate) in figures {
            out.push(Figure::new(what, rate / 1e9, "GB/s", Better::Higher));
        }
        if let Some(rates) = h.uring_fixed {
            let fixed = |what: &str, gate: &str, rate: f64| {
                let what = format!("one host thread, io_uring, {IN_FLIGHT} x 1 MiB {what} in flight{gate}, registered buffers (FIXED), IOSQE_ASYNC, {v}");
                Figure::new(what, rate / 1e9, "GB/s", Better::Higher)
            };
            let mut writes = fixed("writes", &write_gate(), rates.write);
            if let Some((cpu, n)) = h.uring_fixed_write_cpu {
                writes = writes.host_cpu_split(&cpu, n * CHUNK, n);
            }
            out.push(writes);
            out.push(fixed("reads", "", rates.read));
        }
    }
    if let Some(us) = refs.host_nop_us {
        out.push(Figure::new(
            "host thread, io_uring NOP".into(),
            us,
            "us/op",
            Better::Lower,
        ));
    }
    for &(entries, rate) in &refs.sqpoll_nops {
        out.push(Figure::new(
            super::sqpoll_what(entries),
            rate,
            "Mop/s",
            Better::Higher,
        ));
    }
    out
}

/// The launch shape of the bulk passes, how many units it has and how many chunks
/// each moves: the device's full shape, or with [`Scale::bulk_every_warp`] off, as
/// few units per block as [`Scale::bulk_bytes`] needs.
fn layout(device: &dyn Device, scale: Scale) -> Result<Layout, String> {
    let full = device.full_shape();
    let ch = launch_channel(device, "the bulk layout")?;
    let (p, _) = launch_wait_shape(device, &ch, "bulk", full, &params(0, 1, 0, 0, 0, 0, 0))?;
    let _ = ch.close();
    let mut units = p[9];
    if units == 0 {
        return Err("bulk: the kernel reported no units".into());
    }
    let mut shape = full;
    let threads = u64::from(full.0) * u64::from(full.1);
    if !scale.bulk_every_warp && units * CHUNK > scale.bulk_bytes && threads % units == 0 {
        // `lanes` threads make a unit (a warp); keep the grid, trim the blocks to
        // `want` units each, so the grid has `want` units per block.
        let lanes = threads / units;
        let per_block = (u64::from(full.1) / lanes).max(1);
        let want = (scale.bulk_bytes / CHUNK)
            .div_ceil(u64::from(full.0))
            .clamp(1, per_block);
        shape = (full.0, (want * lanes) as u32);
        units = u64::from(full.0) * want;
    }
    Ok(Layout {
        units,
        per: (scale.bulk_bytes / (units * CHUNK)).max(1),
        shape,
    })
}

/// The kernel's parameters (see `gpuio_k_bulk` in `kernels/conformance.h`).
fn params(
    ep: u32,
    files: u64,
    op: u64,
    per: u64,
    buf: u64,
    buf_chunks: u64,
    limit_ns: u64,
) -> [u64; 14] {
    [
        u64::from(ep),
        files,
        op,
        CHUNK,
        per,
        buf,
        buf_chunks,
        limit_ns,
        0,
        0,
        0,
        0,
        0,
        0,
    ]
}

/// Files `name-0 .. name-(n-1)` in `dir`, created empty and sized to `lens`.
fn files(dir: &Path, name: &str, lens: &[u64]) -> Result<(Vec<File>, Vec<PathBuf>), String> {
    let mut files = Vec::new();
    let mut paths = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let path = dir.join(format!("{name}-{i}.bin"));
        let f = create_rw(&path)?;
        f.set_len(len)
            .map_err(|e| format!("size {}: {e}", path.display()))?;
        files.push(f);
        paths.push(path);
    }
    Ok((files, paths))
}

/// Empties `files` and sizes them to `lens` again: their blocks are freed, so the
/// next pass writes into fresh files (as the references do) rather than over the
/// blocks the first write pass allocated, which is faster (H200, 2026-11-28,
/// forward's staged writes to one file: 5.2–6.7 GB/s over those blocks in eight
/// runs, with one CPU thread's io_uring 3.9–4.8 into fresh files in the same runs;
/// into fresh files 3.5 and 3.7, against 4.4 and 3.6).
fn emptied(files: &[File], lens: &[u64]) -> Result<(), String> {
    for (i, (f, &len)) in files.iter().zip(lens).enumerate() {
        f.set_len(0)
            .and_then(|()| f.set_len(len))
            .map_err(|e| format!("empty bulk file {i} before the staged writes: {e}"))?;
    }
    Ok(())
}

fn remove(paths: &[PathBuf]) {
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

/// One host thread, `pwrite` then `pread` of every range, range i from / into
/// buffer i % `buffers` of [`CHUNK`] bytes: bytes per second each.
fn host_thread(files: &[File], ranges: &[(usize, u64)], buffers: usize) -> Result<Rates, String> {
    let mut bufs: Vec<Vec<u8>> = (0..buffers.max(1))
        .map(|_| vec![0x5au8; CHUNK as usize])
        .collect();
    let n = bufs.len();
    let start = Instant::now();
    for (i, &(f, off)) in ranges.iter().enumerate() {
        files[f]
            .write_all_at(&bufs[i % n], off)
            .map_err(|e| format!("host pwrite: {e}"))?;
    }
    let write = start.elapsed();
    let start = Instant::now();
    for (i, &(f, off)) in ranges.iter().enumerate() {
        files[f]
            .read_exact_at(&mut bufs[i % n], off)
            .map_err(|e| format!("host pread: {e}"))?;
    }
    let read = start.elapsed();
    let bytes = (ranges.len() as u64 * CHUNK) as f64;
    Ok(Rates {
        write: bytes / write.as_secs_f64(),
        read: bytes / read.as_secs_f64(),
    })
}

/// The file whose earliest range not yet started comes first among the files
/// with fewer than `per_file` requests in flight (`busy`), if any: `waiting` holds
/// each file's ranges not yet started, by index, in order.
fn next_file(
    waiting: &[std::collections::VecDeque<usize>],
    busy: &[usize],
    per_file: usize,
) -> Option<usize> {
    (0..waiting.len())
        .filter(|&f| busy[f] < per_file)
        .filter_map(|f| waiting[f].front().map(|&i| (i, f)))
        .min()
        .map(|(_, f)| f)
}

/// How the CPU-driven reference builds its SQEs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sqes {
    /// `IORING_OP_WRITE` / `READ` on the thread's buffers, as `forward` submits.
    Plain,
    /// The same marked `IOSQE_ASYNC`, as `direct` marks its large transfers.
    Marked,
    /// Marked, on buffers registered with the ring (`WRITE_FIXED` / `READ_FIXED`),
    /// as `direct`'s SQEs name its registered staging; and, as `direct`'s write
    /// gate does (`GPUIO_DIRECT_WRITE_DEPTH`), at most [`DIRECT_WRITE_DEPTH`]
    /// writes of a file in flight: io-wq does not keep a file's marked writes
    /// apart, and without the gate every worker queues on the file's lock.
    MarkedFixed,
}

/// `GPUIO_DIRECT_WRITE_DEPTH` (`gpuio/direct.h`): marked writes of one file
/// `direct` keeps in flight.
const DIRECT_WRITE_DEPTH: usize = 1;
/// How the references say it.
fn write_gate() -> String {
    format!(", at most {DIRECT_WRITE_DEPTH} of a file as direct's write gate")
}

/// One host thread keeping [`IN_FLIGHT`] requests of every range in flight on an
/// ordinary io_uring (writes when `write`, else reads), SQEs built as `sqes` says
/// (which may hold fewer of one file's writes in flight), each request on the
/// buffer of [`CHUNK`] bytes that has been free longest of `buffers` (at least
/// [`IN_FLIGHT`]), the ranges started in order but for those of a file at its
/// limit: bytes per second. Each wait for a completion has a 10 s
/// deadline, the whole a 120 s one; requests still in flight when it gives up keep
/// their buffers (leaked, never freed under the kernel).
fn host_uring(
    files: &[File],
    ranges: &[(usize, u64)],
    write: bool,
    buffers: usize,
    sqes: Sqes,
) -> Result<f64, String> {
    use io_uring::{opcode, types};
    let mut ring =
        io_uring::IoUring::new(2 * IN_FLIGHT as u32).map_err(|e| format!("io_uring_setup: {e}"))?;
    let buffers = buffers.max(IN_FLIGHT);
    let mut bufs: Vec<Vec<u8>> = (0..buffers).map(|_| vec![0x5au8; CHUNK as usize]).collect();
    if sqes == Sqes::MarkedFixed {
        let iovecs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: every iovec spans one buffer of `bufs`, which outlives the ring
        // (the ring is dropped, unregistering them, before `bufs` is freed, or
        // `bufs` is leaked) and is not moved: its Vecs' heap blocks stay put.
        unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|e| {
            format!("io_uring_register(IORING_REGISTER_BUFFERS, {buffers} x 1 MiB): {e}")
        })?;
    }
    // Longest free first: the requests go round every buffer.
    let mut free: std::collections::VecDeque<usize> = (0..buffers).collect();
    let per_file = match (sqes, write) {
        (Sqes::MarkedFixed, true) => DIRECT_WRITE_DEPTH,
        _ => IN_FLIGHT,
    };
    // Each file's ranges not yet started, in order, and its requests in flight.
    let mut waiting: Vec<std::collections::VecDeque<usize>> = vec![Default::default(); files.len()];
    for (i, &(f, _)) in ranges.iter().enumerate() {
        waiting[f].push_back(i);
    }
    let mut busy = vec![0usize; files.len()];
    let (mut next, mut done, mut failed) = (0usize, 0usize, None::<String>);
    let wait = types::Timespec::new().sec(10);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(120);
    while done < next || (next < ranges.len() && failed.is_none()) {
        while failed.is_none() && next < ranges.len() && next - done < IN_FLIGHT {
            let Some(f) = next_file(&waiting, &busy, per_file) else {
                break;
            };
            let Some(b) = free.pop_front() else { break };
            let (_, off) = ranges[waiting[f][0]];
            let fd = types::Fd(files[f].as_raw_fd());
            let buf = bufs[b].as_mut_ptr();
            let len = CHUNK as u32;
            let entry = match (sqes, write) {
                (Sqes::MarkedFixed, true) => opcode::WriteFixed::new(fd, buf, len, b as u16)
                    .offset(off)
                    .build(),
                (Sqes::MarkedFixed, false) => opcode::ReadFixed::new(fd, buf, len, b as u16)
                    .offset(off)
                    .build(),
                (_, true) => opcode::Write::new(fd, buf, len).offset(off).build(),
                (_, false) => opcode::Read::new(fd, buf, len).offset(off).build(),
            };
            let entry = match sqes {
                Sqes::Plain => entry,
                Sqes::Marked | Sqes::MarkedFixed => entry.flags(io_uring::squeue::Flags::ASYNC),
            };
            let tag = (b as u64) | ((f as u64) << 32);
            // SAFETY: buffer `b` is not in flight (it was free) and outlives the
            // request: it is freed only after every request submitted has completed
            // (the loop runs while done < next), or leaked when they did not.
            if unsafe { ring.submission().push(&entry.user_data(tag)) }.is_err() {
                free.push_front(b);
                break; // the queue is full: submit what is there first
            }
            waiting[f].pop_front();
            busy[f] += 1;
            next += 1;
        }
        if Instant::now() > deadline {
            failed.get_or_insert(format!(
                "io_uring: {done} of {next} requests done after {:?}",
                start.elapsed()
            ));
            break;
        }
        let args = types::SubmitArgs::new().timespec(&wait);
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
            Err(e) => {
                failed.get_or_insert(format!("io_uring_enter: {e}"));
                break;
            }
        }
        let cqes: Vec<(i32, u64)> = ring
            .completion()
            .map(|c| (c.result(), c.user_data()))
            .collect();
        for (res, tag) in cqes {
            if res != CHUNK as i32 {
                failed.get_or_insert(format!(
                    "io_uring {}: result {res}",
                    if write { "write" } else { "read" }
                ));
            }
            free.push_back((tag & u64::from(u32::MAX)) as usize);
            let f = (tag >> 32) as usize;
            busy[f] = busy[f].saturating_sub(1);
            done += 1;
        }
    }
    let took = start.elapsed();
    if done < next {
        // Requests the kernel may still write into: never free their buffers.
        std::mem::forget(bufs);
    }
    drop(ring);
    match failed {
        Some(e) => Err(e),
        None => Ok((ranges.len() as u64 * CHUNK) as f64 / took.as_secs_f64()),
    }
}

fn host_refs(
    dir: &Path,
    layout: Layout,
    variant: Variant,
    staging_slots: u32,
) -> Result<HostRefs, String> {
    let ranges = layout.ranges(variant.files);
    let lens = layout.file_lens(variant.files);
    let staging = staging_slots as usize;
    // Every run writes into fresh files of its own and reads back what it wrote, as
    // a transport's passes do: writing over blocks a run before allocated is faster
    // (H200, 2026-11-27: io_uring, 8 writes in flight, 5.56-5.95 GB/s over the
    // files the thread had just written, against 3.9-4.6 into fresh files).
    let uring_run = |name: &str, buffers: usize, sqes: Sqes| {
        in_fresh_files(dir, name, &lens, |files| {
            Ok(Rates {
                write: host_uring(files, &ranges, true, buffers, sqes)?,
                read: host_uring(files, &ranges, false, buffers, sqes)?,
            })
        })
    };
    let staging_thread = in_fresh_files(dir, "bench-bulk-host-staging", &lens, |files| {
        host_thread(files, &ranges, staging)
    })?;
    let thread = in_fresh_files(dir, "bench-bulk-host", &lens, |files| {
        host_thread(files, &ranges, 1)
    })?;
    let uring = uring_run("bench-bulk-uring", IN_FLIGHT, Sqes::Plain)?;
    let staging_uring = uring_run("bench-bulk-uring-staging", staging, Sqes::Plain)?;
    let uring_async = uring_run("bench-bulk-uring-async", IN_FLIGHT, Sqes::Marked)?;
    let staging_uring_async = uring_run("bench-bulk-uring-async-staging", staging, Sqes::Marked)?;
    // Registering pins the buffers, charged to RLIMIT_MEMLOCK: where that is too
    // low the reference is left out (and said so), not the bench.
    let uring_fixed = in_fresh_files(dir, "bench-bulk-uring-fixed", &lens, |files| {
        let cpu = threads::Snapshot::now();
        let write = host_uring(files, &ranges, true, IN_FLIGHT, Sqes::MarkedFixed)?;
        let cpu = cpu.since();
        let read = host_uring(files, &ranges, false, IN_FLIGHT, Sqes::MarkedFixed)?;
        Ok((Rates { write, read }, (cpu, ranges.len() as u64)))
    })
    .map_err(|e| tracing::warn!(error = %e, "no registered-buffer io_uring reference"))
    .ok();
    let (uring_fixed, uring_fixed_write_cpu) = uring_fixed.unzip();
    Ok(HostRefs {
        variant,
        thread,
        staging_thread,
        uring,
        staging_uring,
        uring_async,
        staging_uring_async,
        uring_fixed,
        uring_fixed_write_cpu,
        staging_mib: u64::from(staging_slots),
    })
}

/// Runs `run` on new files `name`-* of `lens` bytes in `dir`, removed afterwards.
fn in_fresh_files<T>(
    dir: &Path,
    name: &str,
    lens: &[u64],
    run: impl FnOnce(&[File]) -> Result<T, String>,
) -> Result<T, String> {
    let (files, paths) = files(dir, name, lens)?;
    let measured = run(&files);
    drop(files);
    remove(&paths);
    measured
}

/// A bulk channel on `files` (endpoints in order from the returned first index):
/// `slots` slots of [`CHUNK`] bytes, or fewer when that does not open.
fn open_bulk(open: &Opener<'_>, files: &[File], slots: u32) -> Result<(Channel, u32, u32), String> {
    let mut last = String::new();
    let mut slots = slots;
    while slots >= 8 {
        let mut cfg = ChannelConfig {
            slots,
            slot_size: CHUNK as u32,
            user_staging: (STAGED_CHUNKS * CHUNK) as usize,
            call_timeout: Duration::from_secs(60),
            ..ChannelConfig::default()
        };
        let mut first = None;
        for (g, f) in files.iter().enumerate() {
            let ep = Endpoint::file(format!("bulk{g}"), f, Access::READ_WRITE)
                .map_err(|e| e.to_string())?;
            let ep = cfg.endpoint(ep);
            first.get_or_insert(ep);
        }
        match open(cfg) {
            Ok(ch) => return Ok((ch, first.unwrap_or(0), slots)),
            Err(e) => last = e,
        }
        slots /= 2;
    }
    Err(format!(
        "no bulk channel opened, even with 8 slots of 1 MiB: {last}"
    ))
}

/// What one pass of the kernel did.
struct Pass {
    bytes: u64,
    chunks: u64,
    took: Duration,
    cpu: threads::CpuUse,
    failures: u64,
    first_failure: i64,
    not_started: u64,
}

#[allow(clippy::too_many_arguments)]
fn pass(
    device: &dyn Device,
    ch: &Channel,
    ep: u32,
    variant: Variant,
    layout: Layout,
    op: u64,
    buf: &dyn DeviceBuffer,
    limit: Duration,
) -> Result<Pass, String> {
    let buf_chunks = (buf.len() as u64 / CHUNK).max(1);
    let cpu0 = threads::Snapshot::now();
    let (p, took) = launch_wait_shape(
        device,
        ch,
        "bulk",
        layout.shape,
        &params(
            ep,
            variant.files,
            op,
            layout.per,
            buf.device_addr(),
            buf_chunks,
            limit.as_nanos() as u64,
        ),
    )?;
    Ok(Pass {
        bytes: p[8],
        chunks: p[8] / CHUNK,
        took,
        cpu: cpu0.since(),
        failures: p[10],
        first_failure: p[11] as i64,
        not_started: p[13],
    })
}

impl Pass {
    fn gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.took.as_secs_f64() / 1e9
    }

    /// An error naming `what` (and the pass's failures) where the pass moved
    /// nothing: a rate of zero bytes is no figure.
    fn moved(&self, what: impl FnOnce() -> String) -> Result<(), String> {
        if self.bytes > 0 {
            return Ok(());
        }
        Err(format!(
            "{}: nothing moved ({} failures, first {})",
            what(),
            self.failures,
            self.first_failure
        ))
    }
}

/// The kernel op of the staged write pass, before which the files are emptied.
const STAGED_WRITE: u64 = 2;

/// The passes of one variant, in the order they run: (kernel op, words). The
/// staged passes leave out the copy between device memory and staging: the same
/// io_uring work as the CPU-driven reference, which copies nothing to the device.
const PASSES: [(u64, &str); 4] = [
    (0, "pwrite"),
    (1, "pread"),
    (
        2,
        "pwrite from the staging area (no copy from device memory)",
    ),
    (3, "pread into the staging area (no copy to device memory)"),
];

/// The kernel ops of the copy passes, run after [`PASSES`]: no request, every warp
/// copies its 1 MiB between its slot's staging chunk and device memory as a pread
/// (4) or a pwrite (5) does, so that each pass is held against the device's copy
/// alone on the same channel, layout and machine ([`CopyAlone`], in this order).
const COPIES: [u64; 2] = [4, 5];

/// What the device's copy alone reached (GB/s) on one variant's channel: a pread's
/// (host to device) and a pwrite's (device to host).
#[derive(Clone, Copy, Debug, Default)]
struct CopyAlone {
    read: f64,
    write: f64,
}

/// Every bulk figure of one transport (see the module doc).
pub fn figures(
    device: &dyn Device,
    transport: TransportKind,
    open: &Opener<'_>,
    dir: &Path,
    refs: &RunRefs,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let Some(layout) = refs.layout else {
        return Ok(Vec::new());
    };
    let buf = device
        .buffer((layout.units.min(BUFFER_CHUNKS) * CHUNK) as usize, &[])
        .map_err(|e| format!("bulk buffer: {e}"))?;
    let limit = Duration::from_secs_f64(scale.bulk_seconds);
    // GPUIO_BENCH_BULK_SLOTS: another slot count, to see how a pass depends on how
    // many chunks can be in flight (the figure's note says how many it had).
    let slots = std::env::var("GPUIO_BENCH_BULK_SLOTS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&v| v >= 8)
        .unwrap_or(match transport {
            TransportKind::Direct => direct_slots(scale),
            _ => scale.bulk_slots,
        });
    let mut out = Vec::new();
    for variant in Variant::ALL {
        let lens = layout.file_lens(variant.files);
        let (files, paths) = files(dir, &format!("bench-bulk-{transport}"), &lens)?;
        let measured = open_bulk(open, &files, slots).and_then(|(ch, ep, slots)| {
            let shape = ch.transport_shape();
            let mut passes = Vec::new();
            let ops = PASSES.iter().map(|&(op, _)| op).chain(COPIES);
            for op in ops {
                // Every write pass writes into fresh files, as the references do.
                let fresh = if op == STAGED_WRITE {
                    emptied(&files, &lens)
                } else {
                    Ok(())
                };
                match fresh
                    .and_then(|()| pass(device, &ch, ep, variant, layout, op, buf.as_ref(), limit))
                {
                    Ok(p) => passes.push(p),
                    Err(e) => {
                        let _ = ch.close();
                        return Err(e);
                    }
                }
            }
            let report = ch.close();
            if !report.is_clean() {
                return Err(format!("close: {report}"));
            }
            Ok((passes, slots, shape))
        });
        drop(files);
        remove(&paths);
        let (mut passes, slots, shape) = measured?;
        let copies = passes.split_off(PASSES.len());
        for (op, p) in COPIES.into_iter().zip(&copies) {
            p.moved(|| format!("the device's copy alone (op {op}), {}", variant.words()))?;
        }
        let alone = CopyAlone {
            read: copies[0].gb_per_s(),
            write: copies[1].gb_per_s(),
        };
        let run = VariantRun {
            transport,
            variant,
            layout,
            host: refs.host.iter().find(|h| h.variant == variant),
            refs,
            slots,
            shape,
            scale,
            alone,
        };
        for ((op, name), p) in PASSES.into_iter().zip(&passes) {
            p.moved(|| format!("1 MiB {name}, {}", variant.words()))?;
            out.push(figure(&run, op, name, p));
        }
    }
    Ok(out)
}

/// What the figures of one variant's passes share: the transport and layout they
/// ran on, their channel's slots and the run's references.
struct VariantRun<'a> {
    transport: TransportKind,
    variant: Variant,
    layout: Layout,
    /// The host references of this variant (measured once per repeat).
    host: Option<&'a HostRefs>,
    refs: &'a RunRefs,
    slots: u32,
    /// How the transport served the channel on the host ([`Channel::transport_shape`]).
    shape: String,
    scale: Scale,
    /// The device's copy alone on this variant's channel.
    alone: CopyAlone,
}

/// The figure of one pass (kernel op `op`, called `name`), held against every
/// reference of its variant.
fn figure(run: &VariantRun<'_>, op: u64, name: &str, p: &Pass) -> Figure {
    let (transport, variant, layout, host) = (run.transport, run.variant, run.layout, run.host);
    let writes = op.is_multiple_of(2);
    let staged = op >= 2;
    let verb = if writes { "pwrite" } else { "pread" };
    let mib = host.map_or(0, |h| h.staging_mib);
    let rate = |pick: fn(&HostRefs) -> Rates| host.map(|h| pick(h).of(u32::from(!writes)) / 1e9);
    let staging = format!("buffers over {mib} MiB like direct's staging");
    let marked = "SQEs marked IOSQE_ASYNC as direct marks them";
    let uring = |what: &str| {
        format!("the same io_uring work driven by one CPU thread ({IN_FLIGHT} in flight{what})")
    };
    // (words, rate): the first is the figure's main reference.
    let mut references = vec![
        (format!("one host thread, {verb} of the same ranges"), rate(|h| h.thread)),
        (
            format!("one host thread, {verb} of the same ranges, buffers over {mib} MiB like a channel's staging"),
            rate(|h| h.staging_thread),
        ),
        (uring(""), rate(|h| h.uring)),
        (uring(&format!(", {staging}")), rate(|h| h.staging_uring)),
        (uring(&format!(", {marked}")), rate(|h| h.uring_async)),
        (uring(&format!(", {staging}, {marked}")), rate(|h| h.staging_uring_async)),
        (
            uring(&format!(
                "{}, registered buffers (FIXED), {marked}",
                if writes { write_gate() } else { String::new() }
            )),
            host.and_then(|h| h.uring_fixed).map(|r| r.of(u32::from(!writes)) / 1e9),
        ),
    ];
    if staged {
        // The same work: the CPU thread's io_uring SQEs marked as direct marks them,
        // on registered buffers as direct's name its staging (where they could be
        // registered; else on plain ones), unmarked as forward's host thread submits
        // them; mailbox's host threads make plain syscalls. Of each, the one on
        // buffers that stay in the CPU's cache: the staged passes share
        // STAGED_CHUNKS chunks, nearer that than the staging's size, and it is the
        // faster reference of the two.
        let main = match transport {
            TransportKind::Direct if references[6].1.is_some() => 6,
            TransportKind::Direct => 4,
            TransportKind::Forward => 2,
            _ => 0,
        };
        references.swap(0, main);
    } else {
        // What the pass's copy between device memory and staging reaches without
        // the I/O: the pass moves its bytes through both in turn.
        let (dir, rate) = if writes {
            ("device to host", run.alone.write)
        } else {
            ("host to device", run.alone.read)
        };
        references.insert(
            1,
            (
                format!(
                    "the device's copy alone, {dir} (every warp 1 MiB between device memory and its slot's staging chunk, no request)"
                ),
                Some(rate),
            ),
        );
    }
    if let Some(c) = &run.refs.copy {
        references.push(if writes {
            (
                format!("copy ceiling, device to host ({})", c.how),
                Some(c.device_to_host / 1e9),
            )
        } else {
            (
                format!("copy ceiling, host to device ({})", c.how),
                Some(c.host_to_device / 1e9),
            )
        });
    }
    let mut refs_iter = references.into_iter();
    let mut fig = Figure::new(
        format!(
            "{transport}: 1 MiB {name}, whole device, {}",
            variant.words()
        ),
        p.gb_per_s(),
        "GB/s",
        Better::Higher,
    );
    if let Some((what, value)) = refs_iter.next() {
        fig = fig.against(&what, value);
    }
    for (what, value) in refs_iter {
        fig = fig.also(&what, value);
    }
    fig = fig
        .host_cpu_split(&p.cpu, p.bytes, p.chunks)
        .note(Some(format!(
            "{} units x {} chunk{} of 1 MiB (launched {} x {}); channel of {} slots of 1 MiB{}",
            layout.units,
            layout.per,
            if layout.per == 1 { "" } else { "s" },
            layout.shape.0,
            layout.shape.1,
            run.slots,
            if run.shape.is_empty() {
                String::new()
            } else {
                format!(" ({})", run.shape)
            }
        )))
        .note((p.failures > 0).then(|| {
            format!(
                "{} requests failed, the first with {}",
                p.failures, p.first_failure
            )
        }))
        .note((p.not_started > 0).then(|| {
            format!(
                "{} chunks not started within the {:.0} s limit",
                p.not_started, run.scale.bulk_seconds
            )
        }));
    if variant.files == 1 && !staged {
        fig = fig.plot(Panel::Size, verb, CHUNK as f64, 1e3);
    }
    fig
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;

    #[test]
    fn the_reference_keeps_as_many_of_a_files_marked_writes_in_flight_as_direct_does() {
        let (_, direct) = gpuio_device::header::HEADERS
            .iter()
            .find(|(name, _)| *name == "gpuio/direct.h")
            .unwrap();
        let depth = direct
            .lines()
            .find_map(|l| l.strip_prefix("#define GPUIO_DIRECT_WRITE_DEPTH "))
            .unwrap();
        assert_eq!(
            depth.trim().trim_end_matches('u').parse::<usize>().unwrap(),
            DIRECT_WRITE_DEPTH
        );
    }

    #[test]
    fn a_file_at_its_limit_waits_and_the_others_go_on_in_order() {
        use std::collections::VecDeque;
        // Ranges 0, 2, 4 of file 0 and 1, 3, 5 of file 1.
        let waiting = vec![VecDeque::from([0, 2, 4]), VecDeque::from([1, 3, 5])];
        assert_eq!(
            next_file(&waiting, &[0, 0], 1),
            Some(0),
            "the earliest range first"
        );
        assert_eq!(
            next_file(&waiting, &[1, 0], 1),
            Some(1),
            "file 0 is at its limit"
        );
        assert_eq!(next_file(&waiting, &[1, 1], 1), None, "both are");
        assert_eq!(
            next_file(&waiting, &[1, 1], 8),
            Some(0),
            "in order below the limit"
        );
        let drained = vec![VecDeque::new(), VecDeque::from([5])];
        assert_eq!(
            next_file(&drained, &[0, 1], 1),
            None,
            "file 0 has nothing left"
        );
        assert_eq!(next_file(&drained, &[0, 0], 1), Some(1));
    }

    #[test]
    fn the_registered_reference_writes_every_range_of_every_file() {
        // Two files, three ranges each, interleaved, one write of a file in flight
        // at a time: every byte of both files is what the buffers hold.
        let dir = tempfile::tempdir().unwrap();
        let lens = [3 * CHUNK, 3 * CHUNK];
        let (files, _paths) = files(dir.path(), "fixed", &lens).unwrap();
        let ranges: Vec<(usize, u64)> = (0..3)
            .flat_map(|c| [(0, c * CHUNK), (1, c * CHUNK)])
            .collect();
        match host_uring(&files, &ranges, true, IN_FLIGHT, Sqes::MarkedFixed) {
            Ok(rate) => assert!(rate > 0.0),
            // Registering 8 MiB is refused under a low RLIMIT_MEMLOCK: the bench
            // then leaves the reference out, as this does.
            Err(e) if e.contains("IORING_REGISTER_BUFFERS") => return,
            Err(e) => panic!("{e}"),
        }
        for f in &files {
            let mut all = Vec::new();
            (&*f).read_to_end(&mut all).unwrap();
            assert_eq!(all.len() as u64, 3 * CHUNK);
            assert!(all.iter().all(|&b| b == 0x5a), "every range written");
        }
    }

    #[test]
    fn emptied_files_hold_no_blocks_and_read_as_zeros_at_their_length() {
        let dir = tempfile::tempdir().unwrap();
        let lens = [3 * CHUNK, CHUNK];
        let (files, _paths) = files(dir.path(), "emptied", &lens).unwrap();
        for f in &files {
            f.write_all_at(&vec![0xa5; CHUNK as usize], 0).unwrap();
            f.sync_all().unwrap();
            assert!(f.metadata().unwrap().blocks() > 0, "written blocks");
        }
        emptied(&files, &lens).unwrap();
        for (f, &len) in files.iter().zip(&lens) {
            let meta = f.metadata().unwrap();
            assert_eq!(meta.len(), len);
            assert_eq!(meta.blocks(), 0, "no block of the first write is left");
            let mut got = Vec::new();
            (&*f).read_to_end(&mut got).unwrap();
            assert!(got.iter().all(|&b| b == 0));
        }
    }
}
