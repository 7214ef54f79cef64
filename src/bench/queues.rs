//! Host-queue figures (`gpuio bench`): message streams between the whole device and
//! the host program. Queues do not depend on the transport, so they are measured
//! once per backend, each figure against a reference from the same run:
//! * GPU → host, every thread of the device sending 64 B, 256 B and 4 KiB messages,
//!   drained by one host thread per ring — references: the habit it replaces, the
//!   same messages written into device memory and copied back after the kernel;
//!   and the naive mapped ring (`gpuio_k_queue_naive`): the same messages from the
//!   same threads through one ring in shared memory, one slot and one ready word per
//!   message, each position taken with a device fetch-add and each waiting thread
//!   polling the host's head, one host thread taking them in order — what a first
//!   attempt at live delivery looks like;
//! * host → GPU, one host thread sending 64 B, 256 B and 4 KiB messages to every
//!   thread of the device — reference: the same bytes uploaded in one copy;
//! * a message's round trip, host → device → host (one kernel thread echoing) —
//!   reference: the device↔host ping-pong through shared memory, the floor of any
//!   round trip;
//! * one message on an idle queue (`gpuio_k_queue_wake_send`): the host stores a
//!   word a waiting kernel thread polls, the thread `gpuio_send`s 8 bytes, the host's
//!   `Receiver` sees them — the same two crossings as the ping-pong, so the floor is
//!   the reference again and the difference is what a send and its receipt cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gpuio_core::{ChannelConfig, Endpoint, QueueConfig, Receiver, RecvError, SendError};
use gpuio_device::Device;

use super::{
    fail_check, launch_channel, pingpong_us, process_cpu_time, Better, Figure, Scale,
    KERNEL_TIMEOUT,
};
use crate::conformance::Opener;

/// Rings of the queue to the host (one host thread drains each): one per host core,
/// from 4 to 16. Measured on an H100 with 16 host cores (2026-11-26, one binary,
/// `GPUIO_BENCH_QUEUE_RINGS`), 64 B messages: 8 rings 200 M msg/s, 12 rings 244 M,
/// 16 rings 328–350 M.
fn rings() -> u32 {
    std::thread::available_parallelism()
        .map_or(4, |n| n.get() as u32)
        .clamp(4, 16)
}

/// The shape of the queue the to-host figures use: [`rings`] rings, one drain thread
/// per ring, each ring holding 1 MiB of messages but at least 4096 of them (16384
/// cells for 64 B, 4096 for 256 B and for 4 KiB). Why 1 MiB: on an H100 (2026-11-27,
/// one binary, `GPUIO_BENCH_QUEUE_CAPACITY`, 16 rings) 64 B messages ran 219-343 M
/// msg/s with 4096 cells, 472-496 M with 16384, 462-484 M with 65536 (the kernel
/// took 24-33 ms, then 16.5-17.3 ms). Why 4096 cells of 4 KiB (16 MiB a ring):
/// a warp holds its 32 cells while it writes them, and at 4 KiB a warp's writing is
/// slow (its lanes' messages are handed out one lane at a time), so the cells in
/// flight set how many warps write at once. On an H200 (2026-11-27, one binary, 16
/// rings, two passes each) 512 cells a ring ran 2.56-2.72 M msg/s, 1024 4.22-4.51,
/// 2048 6.82-7.16, 4096 6.88-8.65, 8192 7.34-8.06; the kernel alone, into memory
/// that never fills, writes 10.7 M msg/s (44 GB/s of cells) the same way
/// (`docs/validation/h200-2026-11-27-queue-cells/`). For experiments (what limits
/// the rate?) `GPUIO_BENCH_QUEUE_RINGS`, `GPUIO_BENCH_QUEUE_CAPACITY` and
/// `GPUIO_BENCH_QUEUE_DRAINS` override each; the figure's name then says so.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shape {
    rings: u32,
    capacity: u32,
    drains: u32,
}

impl Shape {
    /// The shape the figures use unless the environment says otherwise.
    fn default_for(bytes: u64) -> Self {
        Self {
            rings: rings(),
            capacity: ((1u64 << 20) / bytes.max(1)).clamp(4096, 16384) as u32,
            drains: rings(),
        }
    }

    fn for_bytes(bytes: u64) -> Self {
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|&v| v > 0)
        };
        let default = Self::default_for(bytes);
        let rings = env("GPUIO_BENCH_QUEUE_RINGS").unwrap_or(default.rings);
        Self {
            rings,
            capacity: env("GPUIO_BENCH_QUEUE_CAPACITY").unwrap_or(default.capacity),
            drains: env("GPUIO_BENCH_QUEUE_DRAINS").unwrap_or(rings).min(rings),
        }
    }

    /// Empty for the default shape, else what differs, for a figure's name.
    fn note(self, bytes: u64) -> String {
        if self == Self::default_for(bytes) {
            String::new()
        } else {
            format!(
                " ({} rings x {} cells, {} drain threads)",
                self.rings, self.capacity, self.drains
            )
        }
    }
}

/// Host threads sending to the device, one ring of the queue each
/// (`Sender::split`); `GPUIO_BENCH_QUEUE_SENDERS` overrides it (the figure's name
/// says how many). Measured on an H100 (2026-11-26, 135,168 reading threads), 1 / 4
/// / 8 senders: 64 B 34.5 / 131–135 / 255 M msg/s, 256 B 36.0 / 71–73 / 67.5 M, 4 KiB
/// 2.10 / 5.2 / 5.0 M.
const SENDERS: u32 = 8;

/// Bytes of device memory the copy-back reference may use.
const COPY_BACK_LIMIT: u64 = 1 << 30;

/// Every host-queue figure, for the backend behind `open`.
pub fn figures(
    device: &dyn Device,
    open: &Opener<'_>,
    scale: Scale,
) -> Result<Vec<Figure>, String> {
    let mut out = Vec::new();
    warm_up(device, open)?;
    // The bus's own ceiling, for what limits the queues to the host: a message moves
    // its whole cell across it (QueueConfig::cell_bytes).
    let ceiling = device
        .copy_bandwidth(scale.copy_bytes, 3)
        .map(|c| c.device_to_host)
        .ok();
    let target: u64 = if scale.nops < Scale::FULL.nops {
        1 << 20
    } else {
        1 << 23
    };
    // GPUIO_BENCH_QUEUE_SIZES (e.g. "64,256"): only these message sizes, for
    // experiments with the shape overrides of [`Shape`].
    let sizes: Vec<u64> = std::env::var("GPUIO_BENCH_QUEUE_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| vec![64, 256, 4096]);
    for &bytes in &sizes {
        eprintln!("gpuio bench: queue to the host, {bytes} B messages ...");
        out.extend(to_host(
            device,
            open,
            bytes,
            target / (bytes / 64).max(1),
            ceiling,
            NaiveLimits::for_scale(scale),
        )?);
    }
    for &bytes in &sizes {
        eprintln!("gpuio bench: queue to the device, {bytes} B messages ...");
        out.push(to_device(
            device,
            open,
            bytes,
            target / (bytes / 64).max(1),
        )?);
    }
    eprintln!("gpuio bench: queue round trip ...");
    out.push(round_trip(device, open, scale.nops.clamp(100, 5_000))?);
    eprintln!("gpuio bench: one message on an idle queue ...");
    out.push(wake_to_seen(device, open, scale.nops.clamp(100, 5_000))?);
    eprintln!("gpuio bench: an idle open channel ...");
    let idle = if scale.nops < Scale::FULL.nops { 1 } else { 3 };
    out.push(idle_cost(open, Duration::from_secs(idle))?);
    Ok(out)
}

/// Loads the kernels before anything is timed: a device's first launch may compile
/// them (NVRTC, cold: up to a minute).
fn warm_up(device: &dyn Device, open: &Opener<'_>) -> Result<(), String> {
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(Endpoint::queue_to_host("warm-up", QueueConfig::default()));
    let ch = open(cfg)?;
    device
        .launch("queue_send", 1, 1, &ch, &[u64::from(ep), 0, 64, 0, 0])
        .map_err(|e| format!("launch queue_send: {e}"))?
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("queue_send: {e}"))?;
    let _ = ch.close();
    Ok(())
}

/// Whether a message's first 8 bytes name one of `threads` senders and one of its
/// `per` messages (`gpuio_conf_message`: thread << 24 | number).
fn from_a_sender(head: u64, threads: u64, per: u64) -> bool {
    head >> 24 < threads && head & 0xff_ffff < per
}

/// `ceiling`: the device-to-host copy ceiling in bytes per second, held against the
/// queue as messages of its cell size.
fn to_host(
    device: &dyn Device,
    open: &Opener<'_>,
    bytes: u64,
    target: u64,
    ceiling: Option<f64>,
    naive: NaiveLimits,
) -> Result<Vec<Figure>, String> {
    let (grid, block) = device.full_shape();
    let threads = u64::from(grid) * u64::from(block);
    let per = (target / threads).max(1);
    let total = per * threads;
    let shape = Shape::for_bytes(bytes);
    let note = shape.note(bytes);
    let mut cfg = ChannelConfig::default();
    let config = QueueConfig {
        max_message: bytes as u32,
        capacity: shape.capacity,
        rings: shape.rings,
        timeout: Duration::from_secs(60),
    };
    let cell = config.cell_bytes();
    let ep = cfg.endpoint(Endpoint::queue_to_host("bench", config));
    let ch = open(cfg)?;
    let rx = ch.receiver(ep).map_err(|e| e.to_string())?;
    let received = Arc::new(AtomicU64::new(0));
    let bad = Arc::new(AtomicU64::new(0));
    // When a drain thread first saw a message (any thread's first is as good).
    let first: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    // When the last drain thread took its last message.
    let last = Arc::new(std::sync::Mutex::new(None::<Instant>));
    // Nanoseconds the drain threads spent in calls that took messages, all threads:
    // next to their lifetime it says whether they or the kernel set the pace.
    let busy_ns = Arc::new(AtomicU64::new(0));
    let cpu0 = process_cpu_time();
    let start = Instant::now();
    let drains: Vec<_> = rx
        .split(shape.drains as usize)
        .into_iter()
        .map(|mut rx| {
            let (received, bad, first, last, busy_ns) = (
                received.clone(),
                bad.clone(),
                first.clone(),
                last.clone(),
                busy_ns.clone(),
            );
            std::thread::spawn(move || {
                let deadline = Instant::now() + KERNEL_TIMEOUT;
                let mut busy = Duration::ZERO;
                loop {
                    // One clock read a call: the deadline's and the busy time's.
                    let called = Instant::now();
                    if received.load(Ordering::Relaxed) >= total || called >= deadline {
                        break;
                    }
                    let got = rx.drain(usize::MAX, |m| {
                        let head = u64::from_le_bytes(m[..8].try_into().unwrap_or([0xff; 8]));
                        if m.len() as u64 != bytes || !from_a_sender(head, threads, per) {
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                    match got {
                        Ok(0) => std::hint::spin_loop(),
                        Ok(n) => {
                            let now = Instant::now();
                            busy += now - called;
                            let _ = first.set(now);
                            if received.fetch_add(n as u64, Ordering::Relaxed) + n as u64 >= total {
                                if let Ok(mut last) = last.lock() {
                                    *last = Some(now);
                                }
                            }
                        }
                        Err(RecvError::Closed) => break,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                busy_ns.fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
                Ok(())
            })
        })
        .collect();
    let launched = Instant::now();
    let run = device
        .launch(
            "queue_send",
            grid,
            block,
            &ch,
            &[u64::from(ep), per, bytes, 0, 0],
        )
        .map_err(|e| format!("launch queue_send: {e}"))?;
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("queue_send: {e}"))?;
    let kernel_end = start.elapsed();
    for d in drains {
        d.join()
            .map_err(|_| "a drain thread panicked".to_string())??;
    }
    let took = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu0);
    fail_check(&p, 3, "queue_send")?;
    let report = ch.close();
    let got = received.load(Ordering::Relaxed);
    if got != total || bad.load(Ordering::Relaxed) != 0 || !report.is_clean() {
        return Err(format!(
            "queue to the host, {bytes} B: {got} of {total} messages received, {} malformed; {report}",
            bad.load(Ordering::Relaxed)
        ));
    }
    let rate = total as f64 / took.as_secs_f64() / 1e6;
    // Which side finished last says which side set the pace (a kernel that ends
    // long before its messages are drained was waiting on nothing but the host).
    let last_at = last.lock().ok().and_then(|l| *l).map(|t| t - start);
    // Busy: the share of the drain threads' time spent taking messages (the rest
    // they found their rings empty).
    let busy = busy_ns.load(Ordering::Relaxed) as f64
        / 1e9
        / (took.as_secs_f64() * f64::from(shape.drains));
    eprintln!(
        "gpuio bench:   {bytes} B{note}: {rate:.2} M msg/s; kernel ended after {:.1} ms, \
         last message taken after {}; drain threads busy {:.0} % of the time",
        kernel_end.as_secs_f64() * 1e3,
        last_at.map_or("?".to_string(), |t| format!(
            "{:.1} ms",
            t.as_secs_f64() * 1e3
        )),
        busy * 100.0,
    );
    let first_us = first
        .get()
        .map(|t| t.saturating_duration_since(launched).as_secs_f64() * 1e6);
    let copy = copy_back(device, per, bytes, (grid, block)).ok();
    let reference = copy.map(|(rate, _)| rate);
    let naive = naive_ring(device, per, bytes, (grid, block), naive);
    if let Ok((rate, _)) = &naive {
        eprintln!("gpuio bench:   {bytes} B, naive mapped ring: {rate:.2} M msg/s");
    }
    let naive_note = naive
        .as_ref()
        .err()
        .map(|e| format!("no naive-ring reference: {e}"));
    let naive = naive.ok();
    let mut out = vec![
        Figure::new(
            format!("queue to host, {bytes} B messages, {threads} threads{note}"),
            rate,
            "M msg/s",
            Better::Higher,
        )
        .against(
            "copy-back: fill device memory, copy after the kernel",
            reference,
        )
        .also(NAIVE, naive.map(|(rate, _)| rate))
        .also(
            &format!("copy ceiling, device to host, in cells of {cell} B (the bus)"),
            ceiling.map(|c| c / f64::from(cell) / 1e6),
        )
        .note(naive_note),
        Figure::new(
            format!("queue to host, {bytes} B: host CPU per million messages"),
            cpu.as_secs_f64() / (total as f64 / 1e6),
            "s",
            Better::Lower,
        ),
    ];
    if let Some(us) = first_us {
        out.push(
            Figure::new(
                format!("queue to host, {bytes} B: launch to the first message seen"),
                us,
                "us",
                Better::Lower,
            )
            .against(
                "copy-back: launch to the end of the copy (its first message seen)",
                copy.map(|(_, took)| took.as_secs_f64() * 1e6),
            )
            .also(
                "naive mapped ring: launch to the first message taken",
                naive.map(|(_, first)| first.as_secs_f64() * 1e6),
            ),
        );
    }
    Ok(out)
}

/// Millions of messages per second the copy-back habit moves: the kernel writes
/// the same messages into device memory, then one copy brings them back; and how
/// long from the launch until the copy ended, when the host can see the first one.
fn copy_back(
    device: &dyn Device,
    per: u64,
    bytes: u64,
    shape: (u32, u32),
) -> Result<(f64, Duration), String> {
    let threads = u64::from(shape.0) * u64::from(shape.1);
    let per = per.min(COPY_BACK_LIMIT / bytes / threads).max(1);
    let len = (threads * per * bytes) as usize;
    let buf = device.buffer(len, &[]).map_err(|e| e.to_string())?;
    // Written before the clock starts, so that no page of it is first touched (and
    // faulted in) by the copy: the habit at its best, with its buffer ready.
    let mut host = vec![0xa5u8; len];
    let ch = launch_channel(device, "the copy-back kernel")?;
    let start = Instant::now();
    device
        .launch(
            "queue_fill",
            shape.0,
            shape.1,
            &ch,
            &[buf.device_addr(), per, bytes],
        )
        .map_err(|e| format!("launch queue_fill: {e}"))?
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("queue_fill: {e}"))?;
    let filled = start.elapsed();
    buf.download(&mut host).map_err(|e| e.to_string())?;
    let took = start.elapsed();
    let _ = ch.close();
    eprintln!(
        "gpuio bench:   {bytes} B, copy-back: kernel {:.1} ms, then the copy of {} MB {:.1} ms",
        filled.as_secs_f64() * 1e3,
        len >> 20,
        (took - filled).as_secs_f64() * 1e3
    );
    Ok(((threads * per) as f64 / took.as_secs_f64() / 1e6, took))
}

/// What the naive-ring reference is called on each to-host figure.
const NAIVE: &str = "naive mapped ring: one slot + ready word per message, one ring";

/// Slots of the naive ring for messages of `bytes`: as many as one ring of the
/// queue has cells.
fn naive_slots(bytes: u64) -> u64 {
    if bytes >= 4096 {
        512
    } else {
        4096
    }
}

/// How far the naive-ring reference goes: on a GPU every waiting thread polls the
/// host's head across the bus, and the rate may collapse (H200, 2026-11-28: 4 KiB
/// messages from 132 × 1024 threads through 512 slots, 109,568 of 135,168 taken
/// in 10 s before threads gave up), so it is bounded in messages and in waiting.
#[derive(Clone, Copy, Debug)]
struct NaiveLimits {
    /// Messages it moves at most (each thread at least one).
    messages: u64,
    /// The longest a thread waits for its slot, and the longest the host waits for
    /// the next message.
    wait: Duration,
}

impl NaiveLimits {
    /// A full run: up to 2^20 messages, 10 s waits; `--quick`: one message per
    /// thread, 2 s waits (`--quick` is to finish in under a minute).
    fn for_scale(scale: Scale) -> Self {
        if scale.nops < Scale::FULL.nops {
            NaiveLimits {
                messages: 1,
                wait: Duration::from_secs(2),
            }
        } else {
            NaiveLimits {
                messages: 1 << 20,
                wait: Duration::from_secs(10),
            }
        }
    }
}

/// Millions of messages per second the naive mapped ring moves
/// (`gpuio_k_queue_naive`): every thread of `shape` sends `per` messages of `bytes`
/// (fewer where that makes more than `limits.messages`) into one ring in shared
/// memory, each message its own slot and ready word, its position taken with one
/// fetch-add on a counter in device memory; this thread takes them in order, checks
/// each one's header the way the queue figure does, and stores its head every
/// [`naive_slots`] / 8 messages (at most 64). Also how long from the launch until
/// the first message was taken.
fn naive_ring(
    device: &dyn Device,
    per: u64,
    bytes: u64,
    shape: (u32, u32),
    limits: NaiveLimits,
) -> Result<(f64, Duration), String> {
    use gpuio_device::kernels::naive_ring_data;
    if !(8..=4096).contains(&bytes) || !bytes.is_multiple_of(8) {
        return Err(format!(
            "naive ring: {bytes} B messages (a multiple of 8 from 8 to 4096)"
        ));
    }
    let threads = u64::from(shape.0) * u64::from(shape.1);
    let per = per.min(limits.messages / threads).max(1);
    let total = threads * per;
    let slots = naive_slots(bytes);
    let data = naive_ring_data(slots);
    let len = usize::try_from(data + slots * bytes)
        .map_err(|_| "the naive ring does not fit the address space".to_string())?;
    let mem = device
        .provider()
        .alloc_shared(len)
        .map_err(|e| format!("shared memory for the naive ring: {e}"))?;
    let r = mem.region();
    let word = |offset: u64| {
        mem.atomic_u64(offset as usize)
            .map_err(|e| format!("the naive ring's words: {e}"))
    };
    let (head, gave_up) = (word(0)?, word(64)?);
    let ready = (0..slots)
        .map(|i| word(128 + 8 * i))
        .collect::<Result<Vec<_>, _>>()?;
    let counter = device
        .buffer(8, &0u64.to_le_bytes())
        .map_err(|e| format!("the naive ring's counter: {e}"))?;
    let ch = launch_channel(device, "the naive-ring kernel")?;
    let wait_ns = limits.wait.as_nanos() as u64;
    let release_every = (slots / 8).clamp(1, 64);
    let start = Instant::now();
    let run = device
        .launch(
            "queue_naive",
            shape.0,
            shape.1,
            &ch,
            &[
                r.device_addr,
                slots,
                per,
                bytes,
                counter.device_addr(),
                wait_ns,
                0,
            ],
        )
        .map_err(|e| format!("launch queue_naive: {e}"))?;
    let mut first = None;
    let mut taken = 0u64;
    let mut malformed = 0u64;
    let mut stalled = None;
    'take: while taken < total {
        let slot = (taken % slots) as usize;
        let since = Instant::now();
        while ready[slot].load(Ordering::Acquire) != taken + 1 {
            if gave_up.load(Ordering::Acquire) != 0 {
                stalled = Some("a device thread stopped waiting for its slot");
                break 'take;
            }
            if since.elapsed() > limits.wait {
                stalled = Some("no message came for the host's wait limit");
                break 'take;
            }
            std::hint::spin_loop();
        }
        if first.is_none() {
            first = Some(start.elapsed());
        }
        // The slot's ready word, acquired above, says the device wrote it whole; it
        // does not write it again before the head passes it.
        let mut first_word = [0u8; 8];
        let read = mem.read_bytes((data + slot as u64 * bytes) as usize, &mut first_word);
        if read.is_err() || !from_a_sender(u64::from_le_bytes(first_word), threads, per) {
            malformed += 1;
        }
        taken += 1;
        if taken.is_multiple_of(release_every) {
            head.store(taken, Ordering::Release);
        }
    }
    head.store(taken, Ordering::Release);
    let p = match run.join(KERNEL_TIMEOUT) {
        Ok(p) => p,
        Err(e) => {
            // A kernel that may still run keeps its ring and counter: leaked, never
            // freed under it.
            std::mem::forget(mem);
            std::mem::forget(counter);
            return Err(format!("queue_naive: {e}"));
        }
    };
    let took = start.elapsed();
    let _ = ch.close();
    drop((counter, mem));
    if let Some(why) = stalled {
        return Err(format!(
            "naive ring, {bytes} B: {taken} of {total} messages taken, then {why} \
             ({} threads timed out)",
            p[6]
        ));
    }
    if malformed > 0 || p[6] > 0 {
        return Err(format!(
            "naive ring, {bytes} B: {malformed} of {total} messages malformed, {} threads \
             timed out",
            p[6]
        ));
    }
    Ok((
        total as f64 / took.as_secs_f64() / 1e6,
        first.unwrap_or(took),
    ))
}

/// [`SENDERS`] host threads, each on a ring of its own, sending `total` messages of
/// `bytes` (a multiple of 8, at most 4096) between them to every thread of the
/// device, which take them as they come (`gpuio_k_queue_recv`; a warp reads its own
/// ring first): millions of messages per second, against the same bytes uploaded to
/// device memory in one copy.
fn to_device(
    device: &dyn Device,
    open: &Opener<'_>,
    bytes: u64,
    total: u64,
) -> Result<Figure, String> {
    let (grid, block) = device.full_shape();
    let len = bytes.clamp(8, 4096) as usize;
    let senders = std::env::var("GPUIO_BENCH_QUEUE_SENDERS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&v| (1..=64).contains(&v))
        .unwrap_or(SENDERS);
    let per = total.max(1).div_ceil(u64::from(senders));
    let total = per * u64::from(senders);
    let mut cfg = ChannelConfig::default();
    let ep = cfg.endpoint(Endpoint::queue_to_device(
        "bench",
        QueueConfig {
            max_message: len as u32,
            capacity: if len >= 4096 { 1024 } else { 8192 },
            rings: senders,
            timeout: Duration::from_secs(60),
        },
    ));
    let ch = open(cfg)?;
    let txs = ch.sender(ep).map_err(|e| e.to_string())?.split();
    let start = Instant::now();
    // The host sends from threads of its own, started before the launch (a profiler
    // may hold the launch until the kernel ends). Which side sets the pace: how often
    // the senders found every cell of their ring still holding a message the kernel
    // had not taken, and how long they waited for room in all.
    let threads: Vec<_> = txs
        .into_iter()
        .enumerate()
        .map(|(k, mut tx)| {
            std::thread::spawn(move || {
                let mut msg = vec![0u8; len];
                let (mut full, mut waited) = (0u64, Duration::ZERO);
                for i in k as u64 * per..(k as u64 + 1) * per {
                    msg[..8].copy_from_slice(&i.to_le_bytes());
                    match tx.try_send(&msg) {
                        Err(SendError::Full) => {
                            full += 1;
                            let t = Instant::now();
                            tx.send(&msg)
                                .map_err(|e| format!("queue to the device, {len} B: {e}"))?;
                            waited += t.elapsed();
                        }
                        other => other.map_err(|e| format!("queue to the device, {len} B: {e}"))?,
                    }
                }
                let sent_at = start.elapsed();
                tx.close();
                Ok::<_, String>((full, waited, sent_at))
            })
        })
        .collect();
    let run = device
        .launch(
            "queue_recv",
            grid,
            block,
            &ch,
            &[u64::from(ep), 0, 0, 0, 0, 0, 0],
        )
        .map_err(|e| format!("launch queue_recv: {e}"))?;
    let p = run
        .join(KERNEL_TIMEOUT)
        .map_err(|e| format!("queue_recv: {e}"))?;
    let (mut full, mut waited, mut sent_at) = (0, Duration::ZERO, Duration::ZERO);
    for t in threads {
        let (f, w, s) = t
            .join()
            .map_err(|_| "a sending thread panicked".to_string())??;
        full += f;
        waited += w;
        sent_at = sent_at.max(s);
    }
    let took = start.elapsed();
    eprintln!(
        "gpuio bench:   {len} B: {:.2} M msg/s; {senders} host threads sent the last after \
         {:.1} ms, finding their ring full {full} times ({:.1} ms waiting for room, all \
         threads); kernel ended after {:.1} ms; {:.1} lanes per warp called gpuio_recv \
         together",
        total as f64 / took.as_secs_f64() / 1e6,
        sent_at.as_secs_f64() * 1e3,
        waited.as_secs_f64() * 1e3,
        took.as_secs_f64() * 1e3,
        p[6] as f64 / p[5].max(1) as f64,
    );
    fail_check(&p, 3, "queue_recv")?;
    let report = ch.close();
    if p[1] != total || p[2] != total * len as u64 || !report.is_clean() {
        return Err(format!(
            "queue to the device, {len} B: the kernel took {} of {total} messages, {} of {} \
             bytes; {report}",
            p[1],
            p[2],
            total * len as u64
        ));
    }
    // The reference: the same bytes, message after message, in one upload.
    let mut image = vec![0u8; total as usize * len];
    for (i, m) in image.chunks_exact_mut(len).enumerate() {
        m[..8].copy_from_slice(&(i as u64).to_le_bytes());
    }
    let up = Instant::now();
    let buf = device
        .buffer(image.len(), &image)
        .map_err(|e| e.to_string())?;
    let up = up.elapsed();
    drop(buf);
    let from = match senders {
        1 => "1 host thread".to_string(),
        n => format!("{n} host threads, a ring each"),
    };
    Ok(Figure::new(
        format!(
            "queue to device, {len} B messages, {from} -> {} threads",
            u64::from(grid) * u64::from(block)
        ),
        total as f64 / took.as_secs_f64() / 1e6,
        "M msg/s",
        Better::Higher,
    )
    .against(
        "the same bytes uploaded in one copy",
        Some(total as f64 / up.as_secs_f64() / 1e6),
    ))
}

/// `rounds + 1` timed rounds, the first a warm-up: round `i` (from 1) starts with
/// `start(i)`, then waits (at most 10 s) for `rx` to have a message that is the 8
/// bytes of `i`. The rounds' times, or why a round failed.
fn timed_rounds(
    what: &str,
    rounds: u64,
    rx: &mut Receiver,
    mut start: impl FnMut(u64) -> Result<(), String>,
) -> Result<Vec<Duration>, String> {
    let mut times = Vec::with_capacity(rounds as usize);
    let mut buf = Vec::new();
    for i in 1..=rounds + 1 {
        let t0 = Instant::now();
        start(i).map_err(|e| format!("{what}, round {i}: {e}"))?;
        loop {
            match rx.try_recv_into(&mut buf) {
                Ok(()) => break,
                Err(RecvError::Empty) if t0.elapsed() < Duration::from_secs(10) => {
                    std::hint::spin_loop()
                }
                Err(e) => return Err(format!("{what}, round {i}: {e}")),
            }
        }
        if buf != i.to_le_bytes() {
            return Err(format!("{what}, round {i}: got {buf:?}"));
        }
        if i > 1 {
            times.push(t0.elapsed());
        }
    }
    Ok(times)
}

/// Runs `host` on a thread of its own, started before `kernel` (which launches a
/// kernel and waits for it): a profiler (ncu) may hold a launch until its kernel
/// ends, and these kernels wait for the host. Both results; the host's is an error
/// if its thread panicked.
fn beside_the_host<H: Send, K>(
    host: impl FnOnce() -> H + Send,
    kernel: impl FnOnce() -> K,
) -> (Result<H, String>, K) {
    std::thread::scope(|s| {
        let host = s.spawn(host);
        let k = kernel();
        let h = host
            .join()
            .map_err(|_| "the host's thread panicked".to_string());
        (h, k)
    })
}

/// The median of `times` (not empty), in microseconds.
fn p50_us(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e6
}

fn round_trip(device: &dyn Device, open: &Opener<'_>, rounds: u64) -> Result<Figure, String> {
    let q = |rings| QueueConfig {
        max_message: 64,
        capacity: 64,
        rings,
        timeout: Duration::from_secs(10),
    };
    let mut cfg = ChannelConfig::default();
    let down = cfg.endpoint(Endpoint::queue_to_device("ping", q(1)));
    let up = cfg.endpoint(Endpoint::queue_to_host("pong", q(1)));
    let ch = open(cfg)?;
    let mut tx = ch.sender(down).map_err(|e| e.to_string())?;
    let mut rx = ch.receiver(up).map_err(|e| e.to_string())?;
    let (times, p) = beside_the_host(
        || {
            let times = timed_rounds("queue round trip", rounds, &mut rx, |i| {
                tx.send(&i.to_le_bytes()).map_err(|e| e.to_string())
            });
            tx.close(); // the echo kernel ends with the stream
            times
        },
        || {
            device
                .launch(
                    "queue_echo",
                    1,
                    1,
                    &ch,
                    &[u64::from(down), u64::from(up), 0, 0],
                )
                .map_err(|e| format!("launch queue_echo: {e}"))?
                .join(KERNEL_TIMEOUT)
                .map_err(|e| format!("queue_echo: {e}"))
        },
    );
    let p = p?;
    let _ = ch.close();
    let times = times??;
    fail_check(&p, 2, "queue_echo")?;
    let floor = pingpong_us(device, rounds.min(10_000)).ok();
    Ok(Figure::new(
        "queue round trip host -> device -> host, p50".to_string(),
        p50_us(times),
        "us",
        Better::Lower,
    )
    .against("device<->host ping-pong (floor)", floor))
}

/// One message on an idle queue, `rounds` times: the host stores `i` in a word of
/// shared memory that a kernel thread polls, the thread sends the 8 bytes of `i` on a
/// queue to the host, and the time until this thread's `Receiver` has them is taken;
/// p50 against the ping-pong floor, which makes the same two crossings.
fn wake_to_seen(device: &dyn Device, open: &Opener<'_>, rounds: u64) -> Result<Figure, String> {
    let mut cfg = ChannelConfig::default();
    let up = cfg.endpoint(Endpoint::queue_to_host(
        "one message",
        QueueConfig {
            max_message: 64,
            capacity: 64,
            rings: 1,
            timeout: Duration::from_secs(10),
        },
    ));
    let ch = open(cfg)?;
    let mut rx = ch.receiver(up).map_err(|e| e.to_string())?;
    let mem = device
        .provider()
        .alloc_shared(4096)
        .map_err(|e| format!("shared memory for the wake word: {e}"))?;
    let wake = mem
        .atomic_u64(0)
        .map_err(|e| format!("the wake word: {e}"))?;
    // After a failure the kernel gives up waiting for its next word within 1 s.
    let (times, p) = beside_the_host(
        || {
            timed_rounds("one message on an idle queue", rounds, &mut rx, |i| {
                wake.store(i, Ordering::Release);
                Ok(())
            })
        },
        || {
            device
                .launch(
                    "queue_wake_send",
                    1,
                    1,
                    &ch,
                    &[u64::from(up), mem.region().device_addr, rounds + 1, 0, 0],
                )
                .map_err(|e| (false, format!("launch queue_wake_send: {e}")))?
                .join(KERNEL_TIMEOUT)
                .map_err(|e| (true, format!("queue_wake_send: {e}")))
        },
    );
    let p = match p {
        Ok(p) => p,
        Err((launched, e)) => {
            if launched {
                std::mem::forget(mem); // a kernel that may still run keeps its word
            }
            return Err(e);
        }
    };
    let _ = ch.close();
    let times = times??;
    fail_check(&p, 3, "queue_wake_send")?;
    let floor = pingpong_us(device, rounds.min(10_000)).ok();
    Ok(Figure::new(
        "one message on an idle queue: host wakes a device thread, it sends, the Receiver has it, p50"
            .to_string(),
        p50_us(times),
        "us",
        Better::Lower,
    )
    .against("device<->host ping-pong (floor, the same two crossings)", floor))
}

/// Host CPU an open channel costs while no kernel runs: a stdout printf log (to a
/// file), a queue each way with their Receiver and Sender taken, left alone for
/// `wait`. Nothing else runs in the process meanwhile, so its CPU time is the
/// channel's (issue target: at most 1% of one core).
fn idle_cost(open: &Opener<'_>, wait: Duration) -> Result<Figure, String> {
    let dir = std::env::temp_dir().join(format!("gpuio-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (_out, mut cfg) = crate::conformance::stdout_file_config(&dir.join("stdout.txt"))?;
    let up = cfg.endpoint(Endpoint::queue_to_host("idle up", QueueConfig::default()));
    let down = cfg.endpoint(Endpoint::queue_to_device(
        "idle down",
        QueueConfig::default(),
    ));
    let ch = open(cfg)?;
    let _rx = ch.receiver(up).map_err(|e| e.to_string())?;
    let _tx = ch.sender(down).map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(100)); // past the threads' first spins
    let cpu0 = process_cpu_time();
    let start = Instant::now();
    std::thread::sleep(wait);
    let cpu = process_cpu_time().saturating_sub(cpu0);
    let took = start.elapsed();
    let _ = ch.close();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Figure::new(
        "idle open channel (stdout log, a queue each way): host CPU".to_string(),
        100.0 * cpu.as_secs_f64() / took.as_secs_f64(),
        "% of a core",
        Better::Lower,
    ))
}
