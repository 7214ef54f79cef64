//! A parallel file copy done by the kernel: `examples/copy.cu` reads the source
//! with `gpuio_pread` and writes the copy with `gpuio_pwrite`, chunks spread over
//! every thread.
//!
//!     cargo run --example copy [SOURCE [COPY]]
//!     gpuio run examples/copy.cu --grid 4 --block 32 --params 3 \
//!         --file src=SOURCE:r --file dst=COPY:w --arg $(stat -c %s SOURCE)
//!
//! Without a source it copies 3 MiB + 123 bytes of generated data. The program
//! compares the copy with the source and exits non-zero if they differ.

use std::time::Duration;

use gpuio::{Access, ChannelConfig, Endpoint, Runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut args = std::env::args_os().skip(1);
    let source = match args.next() {
        Some(p) => p.into(),
        None => {
            let p = dir.path().join("source.bin");
            let data: Vec<u8> = (0..(3u64 << 20) + 123)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            std::fs::write(&p, data)?;
            p
        }
    };
    let copy = args
        .next()
        .map_or_else(|| dir.path().join("copy.bin"), Into::into);

    let factory = Runtime::auto()?;
    let module = factory.load("copy.cu", include_str!("copy.cu"))?;
    let src = std::fs::File::open(&source)?;
    let dst = std::fs::File::create(&copy)?;
    let size = src.metadata()?.len();
    let mut cfg = ChannelConfig::default();
    cfg.endpoint(Endpoint::file("src", &src, Access::READ)?);
    cfg.endpoint(Endpoint::file("dst", &dst, Access::WRITE)?);
    let channel = factory.open(cfg)?;

    let params = module
        .launch("copy", 4, 32, &channel, &[size, 0, 0])?
        .join(Duration::from_secs(120))?;
    let report = channel.close();
    eprintln!(
        "copy on {}: {} of {size} bytes copied, {} calls failed; {report}",
        factory.pair(),
        params[1],
        params[2]
    );
    if std::fs::read(&source)? != std::fs::read(&copy)? {
        return Err(format!("{} differs from {}", copy.display(), source.display()).into());
    }
    if params[2] != 0 || !report.is_clean() {
        return Err("the copy is complete but some calls failed".into());
    }
    eprintln!(
        "copy: {} is byte-identical to {}",
        copy.display(),
        source.display()
    );
    Ok(())
}
