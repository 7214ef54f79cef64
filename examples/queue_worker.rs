//! A persistent kernel served by async tasks through host queues:
//! `examples/queue_worker.cu` takes lines of text from a queue to the device and
//! answers each (length, words, FNV-1a hash) through a queue to the host. One tokio
//! task feeds the lines into the [`Sender`](gpuio::Sender) as a `Sink`, another
//! reads the answers from the [`Receiver`](gpuio::Receiver) as a `Stream`. The end
//! is an ordinary close: the feeder closes its Sender, so every thread's
//! `gpuio_recv` returns 0 and the kernel ends; closing the channel then ends the
//! answers' stream once every answer was read.
//!
//!     cargo run --example queue_worker [INPUT]
//!
//! Without an input it sends the lines of its own kernel source, 100 times over
//! (lines longer than a message are cut). The program computes every answer itself
//! and exits non-zero if one is missing, repeated or different.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use gpuio::{ChannelConfig, Endpoint, QueueConfig, Runtime};

const GRID: u32 = 4;
const BLOCK: u32 = 32;
/// Bytes of a line a message carries: the queue's longest message less the
/// line's 4-byte number.
const MAX_LINE: usize = 236;

/// What the kernel answers for one line (`struct line_answer`).
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    line: u32,
    bytes: u32,
    words: u32,
    fnv1a: u64,
}

impl Answer {
    /// The answer for `text`, computed on the host.
    fn of(line: u32, text: &[u8]) -> Self {
        let space = |c: u8| matches!(c, b' ' | b'\t'..=b'\r');
        let words = (0..text.len())
            .filter(|&i| !space(text[i]) && (i == 0 || space(text[i - 1])))
            .count();
        let fnv1a = text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Self {
            line,
            bytes: text.len() as u32,
            words: words as u32,
            fnv1a,
        }
    }

    /// The answer in a message from the kernel.
    fn parse(m: &[u8]) -> Result<Self, String> {
        let word = |at: usize| u32::from_le_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]]);
        if m.len() != 24 {
            return Err(format!("an answer of {} bytes (24 expected)", m.len()));
        }
        Ok(Self {
            line: word(0),
            bytes: word(4),
            words: word(8),
            fnv1a: u64::from(word(16)) | u64::from(word(20)) << 32,
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(path)?,
        None => include_str!("queue_worker.cu").repeat(100).into_bytes(),
    };
    let lines: Vec<Vec<u8>> = text
        .split(|&b| b == b'\n')
        .map(|l| l[..l.len().min(MAX_LINE)].to_vec())
        .collect();

    let factory = Runtime::auto()?;
    let module = factory.load("queue_worker.cu", include_str!("queue_worker.cu"))?;
    // A worker waits in gpuio_recv until its next line comes, at most the call
    // timeout: generous, since the lines come as fast as the host feeds them.
    let mut cfg = ChannelConfig {
        call_timeout: Duration::from_secs(60),
        ..ChannelConfig::default()
    };
    let queue = QueueConfig {
        max_message: (4 + MAX_LINE) as u32,
        ..QueueConfig::default()
    };
    let to_kernel = cfg.endpoint(Endpoint::queue_to_device("lines", queue.clone())); // endpoint 0
    let to_host = cfg.endpoint(Endpoint::queue_to_host("answers", queue)); // endpoint 1
    let channel = factory.open(cfg)?;
    let mut sink = channel.sender(to_kernel)?;
    let mut stream = channel.receiver(to_host)?;
    let kernel = module.launch("queue_worker", GRID, BLOCK, &channel, &[0, 0, 0])?;

    // Feeds every line, then closes: the kernel's gpuio_recv returns 0 from then
    // on, once every line was taken. (`SinkExt::send`, not the Sender's own
    // blocking `send`, which would hold up the executor's thread.)
    let sent = lines.len();
    let feeder = tokio::spawn(async move {
        for (number, line) in lines.into_iter().enumerate() {
            let mut msg = (number as u32).to_le_bytes().to_vec();
            msg.extend(line);
            SinkExt::send(&mut sink, msg).await?;
        }
        SinkExt::close(&mut sink).await
    });
    // Reads answers as they come, in whatever order the threads finish; the
    // stream ends when the channel has closed and every answer was read.
    let reader = tokio::spawn(async move {
        let mut answers = Vec::new();
        while let Some(m) = stream.next().await {
            answers.push(Answer::parse(&m?)?);
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(answers)
    });

    let params =
        tokio::task::spawn_blocking(move || kernel.join(Duration::from_secs(120))).await??;
    let report = channel.close();
    eprintln!("queue_worker on {}: {report}", factory.pair());
    feeder.await??;
    let mut answers = reader.await?.map_err(|e| e.to_string())?;

    answers.sort_by_key(|a| a.line);
    let text_lines = text.split(|&b| b == b'\n');
    let want: Vec<Answer> = text_lines
        .enumerate()
        .map(|(i, l)| Answer::of(i as u32, &l[..l.len().min(MAX_LINE)]))
        .collect();
    if let Some(i) = (0..want.len()).find(|&i| answers.get(i) != Some(&want[i])) {
        return Err(format!(
            "line {i}: the kernel answered {:?}, expected {:?}",
            answers.get(i),
            want[i]
        )
        .into());
    }
    if answers.len() != sent || params[0] != sent as u64 || params[1] != 0 || !report.is_clean() {
        return Err(format!(
            "{} answers for {sent} lines; the kernel answered {} and failed {} times \
             (first: -errno {}); {report}",
            answers.len(),
            params[0],
            params[1],
            -(params[2] as i64)
        )
        .into());
    }
    eprintln!(
        "queue_worker: {sent} lines answered by {} threads, each once and right",
        GRID * BLOCK
    );
    Ok(())
}
