//! Every thread writes a line into a file and prints one: `examples/hello.cu`,
//! the kernel of the README, launched from Rust on the pair gpuio chooses.
//!
//!     cargo run --example hello [OUT_FILE]
//!     gpuio run examples/hello.cu --grid 4 --block 32 --file out=hello.out:w
//!
//! `GPUIO_BACKEND=cpu/mailbox` (or any pair `gpuio probe` lists) picks the pair.
//! The program checks the file it gets back and exits non-zero if a line is wrong.

use std::time::Duration;

use gpuio::{Access, ChannelConfig, Endpoint, Runtime};

const GRID: u32 = 4;
const BLOCK: u32 = 32;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let factory = Runtime::auto()?;
    let module = factory.load("hello.cu", include_str!("hello.cu"))?;

    let dir = tempfile::tempdir()?;
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| dir.path().join("hello.out"), Into::into);
    let file = std::fs::File::create(&path)?;
    let mut cfg = ChannelConfig::default();
    cfg.endpoint(Endpoint::file("out", &file, Access::WRITE)?);
    cfg.stdout(Endpoint::stdout()?);
    let channel = factory.open(cfg)?;

    let kernel = module.launch("hello", GRID, BLOCK, &channel, &[])?;
    kernel.join(Duration::from_secs(60))?;
    let report = channel.close();
    eprintln!("hello on {}: {report}", factory.pair());

    let threads = u64::from(GRID * BLOCK);
    let bytes = std::fs::read(&path)?;
    for t in 0..threads {
        let want = format!("thread {t} of {threads}\n");
        let at = (t * 64) as usize;
        let got = bytes.get(at..at + want.len());
        if got != Some(want.as_bytes()) {
            return Err(format!("{}: line of thread {t} is {got:?}", path.display()).into());
        }
    }
    if !report.is_clean() {
        return Err(format!("the channel did not close cleanly: {report}").into());
    }
    eprintln!("hello: {threads} lines checked in {}", path.display());
    Ok(())
}
