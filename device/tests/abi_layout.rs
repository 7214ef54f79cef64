//! The header and the Rust ABI describe the same bytes.

use gpuio_core::abi;

extern "C" {
    fn gpuio_abi_layout(count: *mut u64) -> *const u64;
}

#[test]
fn header_layout_matches_rust_abi_entry_by_entry() {
    gpuio_device::link();
    let mut n = 0u64;
    // SAFETY: gpuio_abi_layout returns a pointer to a static array of `n` entries.
    let c = unsafe { std::slice::from_raw_parts(gpuio_abi_layout(&mut n), n as usize) };
    let rust = abi::layout();
    assert_eq!(
        c.len(),
        rust.len(),
        "the header reports {} entries, Rust {}",
        c.len(),
        rust.len()
    );
    let wrong: Vec<String> = rust
        .iter()
        .zip(c)
        .filter(|((_, r), c)| *r as u64 != **c)
        .map(|((name, r), c)| format!("{name}: Rust {r}, header {c}"))
        .collect();
    assert!(wrong.is_empty(), "layout differs:\n{}", wrong.join("\n"));
}
