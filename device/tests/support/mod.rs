//! What the device crate's integration tests share.

use gpuio_device::cpu::Cxx;

/// The compiler from `CXX`/`PATH`, or a skip naming what is missing (a failure where
/// `GPUIO_REQUIRE` lists `cxx`).
pub fn cxx() -> Option<Cxx> {
    match Cxx::from_env() {
        Ok(c) => Some(c),
        Err(e) => {
            let required = std::env::var("GPUIO_REQUIRE").unwrap_or_default();
            if required.split(',').any(|p| p.trim() == "cxx") {
                panic!("GPUIO_REQUIRE lists cxx, but {e}");
            }
            eprintln!("skipped: Unsupported: cxx — {e}");
            None
        }
    }
}
