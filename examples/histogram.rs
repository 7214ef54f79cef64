//! A byte histogram computed by the kernel: `examples/histogram.cu` reads the
//! input in slices over every thread, adds its counts to shared bins, and the last
//! thread to finish writes the result file ("0x41  65 1234" per byte value).
//!
//!     cargo run --example histogram [INPUT [RESULT]]
//!     gpuio run examples/histogram.cu --grid 8 --block 32 --params 258 \
//!         --file in=INPUT:r --file out=RESULT:w --arg $(stat -c %s INPUT)
//!
//! Without an input it counts the bytes of its own kernel source repeated 40
//! times. The program recounts on the host and exits non-zero if the kernel's
//! file says anything else.

use std::fmt::Write as _;
use std::time::Duration;

use gpuio::{Access, ChannelConfig, Endpoint, Runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut args = std::env::args_os().skip(1);
    let input = match args.next() {
        Some(p) => p.into(),
        None => {
            let p = dir.path().join("input.txt");
            let text = include_str!("histogram.cu").repeat(40);
            std::fs::write(&p, text)?;
            p
        }
    };
    let result = args
        .next()
        .map_or_else(|| dir.path().join("histogram.txt"), Into::into);

    let factory = Runtime::auto()?;
    let module = factory.load("histogram.cu", include_str!("histogram.cu"))?;
    let inp = std::fs::File::open(&input)?;
    let out = std::fs::File::create(&result)?;
    let size = inp.metadata()?.len();
    let mut cfg = ChannelConfig::default();
    cfg.endpoint(Endpoint::file("in", &inp, Access::READ)?);
    cfg.endpoint(Endpoint::file("out", &out, Access::WRITE)?);
    let channel = factory.open(cfg)?;

    let mut params = vec![0u64; 258];
    params[0] = size;
    let (grid, block) = (8, 32);
    let params = module
        .launch("histogram", grid, block, &channel, &params)?
        .join(Duration::from_secs(120))?;
    let report = channel.close();
    eprintln!("histogram on {}: {report}", factory.pair());

    let mut counts = [0u64; 256];
    for b in std::fs::read(&input)? {
        counts[usize::from(b)] += 1;
    }
    let mut want = String::new();
    for (b, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let _ = writeln!(want, "0x{b:02x} {b:3} {n}");
    }
    let got = std::fs::read_to_string(&result)?;
    if got != want {
        return Err(format!(
            "{} is not the histogram of {}",
            result.display(),
            input.display()
        )
        .into());
    }
    if params[1] != u64::from(grid * block) || !report.is_clean() {
        return Err(format!(
            "{} of {} threads finished; {report}",
            params[1],
            grid * block
        )
        .into());
    }
    eprintln!(
        "histogram: {} checked ({size} bytes counted)",
        result.display()
    );
    Ok(())
}
