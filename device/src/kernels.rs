//! The conformance kernels (`kernels/conformance.h`): their CPU entry points, and
//! the Rust mirror of the pattern and sizes they write, which the host checks.

use crate::cpu::{CpuKernel, KernelFn};

/// Each thread owns this many bytes of the test file.
pub const REGION: u64 = 4 << 20;

/// The byte expected at file offset `off` (mirror of `gpuio_conf_byte`).
pub fn pattern_byte(off: u64) -> u8 {
    ((off.wrapping_mul(131)) ^ ((off >> 11).wrapping_mul(7)) ^ 0x5a) as u8
}

/// Size of write `i` of `thread` (mirror of `gpuio_conf_size`).
pub fn write_size(thread: u64, i: u64) -> u32 {
    if i == 0 {
        return 1;
    }
    if i % 125 == 124 {
        return (1u32 << 20) >> ((i / 125 + thread) % 8);
    }
    let h = (thread.wrapping_mul(1_000_003).wrapping_add(i)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    1 + ((h >> 40) % 2048) as u32
}

/// The `(offset, len)` of every write of `thread`, in order.
pub fn writes_of(thread: u64, count: u64) -> Vec<(u64, u32)> {
    let mut off = thread * REGION;
    (0..count)
        .map(|i| {
            let n = write_size(thread, i);
            let w = (off, n);
            off += u64::from(n);
            w
        })
        .collect()
}

/// Result slots of `gpuio_k_bad_input`, from `params[3]`, with what each case is.
pub const BAD_INPUT_CASES: [&str; 11] = [
    "unregistered endpoint",
    "staging range outside the area",
    "length 0",
    "length larger than the staging area",
    "write to a read-only endpoint",
    "raw request: unregistered endpoint",
    "raw request: staging range outside the area",
    "raw request: length larger than the staging area",
    "raw SQE: plain WRITE on a raw fd",
    "raw SQE: disallowed opcode",
    "a good write afterwards",
];

/// Result slots of `gpuio_k_null_channel`, from `params[1]`: the call each made
/// with a null channel (each must return `-EINVAL`).
pub const NULL_CHANNEL_CALLS: [&str; 10] = [
    "gpuio_nop",
    "gpuio_pwrite",
    "gpuio_pread",
    "gpuio_write",
    "gpuio_read",
    "gpuio_pwrite_staged",
    "gpuio_pread_staged",
    "gpuio_printf",
    "gpuio_fprintf",
    "gpuio_printf (no arguments)",
];

/// Result slots of `gpuio_k_beyond_access`, from `params[3]`, with what each case
/// is: the first seven go beyond an endpoint's declared access (`-EBADF`; the two
/// raw SQEs only on direct, `1` elsewhere), the last three stay within it.
pub const BEYOND_ACCESS_CASES: [&str; 10] = [
    "raw pwrite on an endpoint declared read-only",
    "raw write on an endpoint declared read-only",
    "raw pread on an endpoint declared write-only",
    "raw read on an endpoint declared write-only",
    "raw read on an O_APPEND endpoint declared write-only",
    "raw SQE: WRITE_FIXED on the read-only endpoint's fixed file",
    "raw SQE: READ_FIXED on the write-only endpoint's fixed file",
    "pread of 4 bytes from the read-only endpoint",
    "pwrite of 5 bytes to the write-only endpoint",
    "write of 5 bytes to the O_APPEND endpoint",
];

/// Longest message the queue kernels handle (`GPUIO_CONF_QMAX`).
pub const QUEUE_MESSAGE_MAX: u32 = 256;

/// Length of queue message `key` of at most `max` bytes (mirror of `gpuio_conf_qlen`):
/// 8 ..= max.
pub fn queue_message_len(key: u64, max: u32) -> u32 {
    let mut h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 31;
    8 + (h % u64::from(max - 7)) as u32
}

/// Queue message `key` of at most `max` bytes (mirror of `gpuio_conf_qmessage`): the
/// key little-endian, then bytes that follow from the key and their position.
pub fn queue_message(key: u64, max: u32) -> Vec<u8> {
    let len = queue_message_len(key, max);
    let mut m = key.to_le_bytes().to_vec();
    m.extend((8..len).map(|k| {
        (key.wrapping_mul(131))
            .wrapping_add(u64::from(k) * 7)
            .wrapping_add(key >> 29) as u8
    }));
    m
}

/// The key of a whole queue message of at most `max` bytes, or `None` if `m` is
/// torn, cut or not one of them.
pub fn queue_message_key(m: &[u8], max: u32) -> Option<u64> {
    let key = u64::from_le_bytes(m.get(..8)?.try_into().ok()?);
    (m == queue_message(key, max)).then_some(key)
}

/// Where the slots of `gpuio_k_queue_naive`'s ring of `slots` slots begin (mirror of
/// `GPUIO_CONF_NAIVE_DATA`): after the head (+0), the gave-up flag (+64) and the
/// ready words (+128, one u64 a slot), at a multiple of 64.
pub fn naive_ring_data(slots: u64) -> u64 {
    (slots * 8 + 128).div_ceil(64) * 64
}

/// Result slots of `gpuio_k_queue_misuse`, from `params[4]`, with what each is.
pub const QUEUE_MISUSE_CASES: [&str; 12] = [
    "gpuio_recv on a queue to the host",
    "gpuio_send on a queue to the device",
    "gpuio_send of 65 bytes on a queue of 64-byte messages",
    "gpuio_send on an endpoint that does not exist",
    "gpuio_try_recv on an empty queue",
    "gpuio_try_send of 4 messages into a queue of 4 cells (how many fitted)",
    "gpuio_try_send into the full queue",
    "gpuio_try_recv with room for 4 bytes (the message stays queued)",
    "gpuio_recv of the message (its length)",
    "the key of the message received (7 when whole)",
    "gpuio_recv once the host closed and the queue is empty",
    "gpuio_try_recv after the end",
];

macro_rules! kernels {
    ($($name:ident),* $(,)?) => {
        extern "C" { $(fn $name(ch: *const gpuio_core::abi::Channel, params: *mut u64);)* }
        /// Every conformance kernel by name.
        pub const ALL: &[CpuKernel] = &[$(CpuKernel::linked(stringify!($name), $name as KernelFn)),*];
    };
}

kernels!(
    gpuio_k_pwrite_pattern,
    gpuio_k_pread_pattern,
    gpuio_k_printf_lines,
    gpuio_k_bad_input,
    gpuio_k_until_closed,
    gpuio_k_nop,
    gpuio_k_full_device,
    gpuio_k_null_channel,
    gpuio_k_printf_limits,
    gpuio_k_read_timeouts,
    gpuio_k_stuck_and_busy,
    gpuio_k_beyond_access,
    gpuio_k_latency,
    gpuio_k_nop_anatomy,
    gpuio_k_pingpong,
    gpuio_k_async_pattern,
    gpuio_k_async_many,
    gpuio_k_warp_pattern,
    gpuio_k_small_ops,
    gpuio_k_bulk,
    gpuio_k_native_printf,
    gpuio_k_queue_send,
    gpuio_k_queue_fill,
    gpuio_k_queue_naive,
    gpuio_k_queue_recv,
    gpuio_k_queue_echo,
    gpuio_k_queue_wake_send,
    gpuio_k_queue_numbered,
    gpuio_k_queue_take,
    gpuio_k_queue_misuse,
    gpuio_k_rulebook,
    gpuio_k_hostile_sq_tail,
    gpuio_k_hostile_stamps,
    gpuio_k_route_rings,
);

/// Bytes of each row `gpuio_k_full_device` writes and prints.
pub const FULL_DEVICE_ROW: usize = 48;

/// The row thread `t` of `n` writes at `t * FULL_DEVICE_ROW` and prints.
pub fn full_device_row(t: u64, n: u64) -> String {
    format!("t={t:010} n={n:010} gpuio full-device row\n")
}

/// The entry-point symbol of a conformance kernel named with or without its
/// `gpuio_k_` prefix (`"nop"` and `"gpuio_k_nop"` are the same kernel).
pub fn entry_name(name: &str) -> String {
    if name.starts_with("gpuio_k_") {
        name.to_string()
    } else {
        format!("gpuio_k_{name}")
    }
}

/// The CPU entry point of a conformance kernel.
pub fn cpu(name: &str) -> Option<CpuKernel> {
    let entry = entry_name(name);
    ALL.iter().find(|k| k.name() == entry).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_fits_its_region_and_sizes_span_one_byte_to_one_mebibyte() {
        let mut seen_1 = false;
        let mut seen_1m = false;
        for t in 0..64 {
            let w = writes_of(t, 1000);
            let (last_off, last_len) = *w.last().unwrap();
            assert!(
                last_off + u64::from(last_len) <= (t + 1) * REGION,
                "thread {t} overflows"
            );
            seen_1 |= w.iter().any(|&(_, n)| n == 1);
            seen_1m |= w.iter().any(|&(_, n)| n == 1 << 20);
        }
        assert!(seen_1 && seen_1m);
    }

    #[test]
    fn queue_messages_span_8_bytes_to_the_maximum_and_name_their_key() {
        let lens: Vec<u32> = (0..4096).map(|k| queue_message_len(k, 200)).collect();
        assert_eq!(lens.iter().min(), Some(&8));
        assert_eq!(lens.iter().max(), Some(&200));
        let m = queue_message(5 << 32 | 9, 200);
        assert_eq!(queue_message_key(&m, 200), Some(5 << 32 | 9));
        assert_eq!(queue_message_key(&m[..m.len() - 1], 200), None);
        let mut torn = m.clone();
        *torn.last_mut().unwrap() ^= 1;
        assert_eq!(queue_message_key(&torn, 200), None);
    }
}
