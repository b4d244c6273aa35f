//! How many chat completions a second the `fake-openai` binary serves on loopback:
//! `cargo bench -p prill-testkit --bench fake_throughput`.
//!
//! Starts the binary (latency 0 from 200 connections, then 20 ms from 500), drives it
//! for a few seconds from keep-alive connections of a minimal HTTP/1.1 client (so that
//! the client costs as little of the shared cores as it can), whole JSON answers and
//! streamed ones (`stream_options.include_usage`, as Prill asks), and prints requests/s
//! and, on Linux, the fake's own CPU time per request (the client's is not in it).
//! Exits non-zero when the fake serves fewer than 20,000 requests/s with no latency: a
//! benchmark of Prill against it would then measure the fake. With 20 ms the ideal is
//! 500 / 20 ms = 25,000 requests/s.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The least the fake must serve with no latency.
const TARGET: f64 = 20_000.0;
/// How long each run drives the fake.
const RUN: Duration = Duration::from_secs(3);

/// A running `fake-openai`; killed when dropped.
struct Fake {
    child: Child,
    addr: String,
}

impl Fake {
    /// The CPU time the fake has used so far (user and system), when the system tells
    /// (Linux's `/proc`).
    fn cpu(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // The fields after the command's name, which is in parentheses: utime and stime
        // are the 14th and 15th fields of the line, in clock ticks (100 a second).
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(Duration::from_millis(ticks * 10))
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(latency_ms: u64) -> Fake {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-openai"))
        .args(["--latency-ms", &latency_ms.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("fake-openai starts");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("a stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the first line");
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix("/v1"))
        .expect("listening on http://ADDR/v1")
        .to_owned();
    Fake { child, addr }
}

fn request(addr: &str, stream: bool) -> Vec<u8> {
    let body = if stream {
        r#"{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"How many people live in Paris?"}]}"#
    } else {
        r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"How many people live in Paris?"}]}"#
    };
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nauthorization: Bearer sk-bench\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Whether `buf` holds one whole response; panics on anything but a 200.
fn complete(buf: &[u8]) -> bool {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "an answer: {head}");
    let body = &buf[end + 4..];
    match head.lines().find_map(|l| l.strip_prefix("content-length:")) {
        Some(n) => body.len() >= n.trim().parse::<usize>().expect("a length"),
        None => body.ends_with(b"0\r\n\r\n") && body.windows(12).any(|w| w == b"data: [DONE]"),
    }
}

/// One keep-alive connection sending requests one after another until `stop`.
async fn connection(addr: String, stream: bool, stop: Arc<AtomicBool>, done: Arc<AtomicU64>) {
    let request = request(&addr, stream);
    let mut socket = TcpStream::connect(&addr).await.expect("a connection");
    socket.set_nodelay(true).expect("nodelay");
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    while !stop.load(Ordering::Relaxed) {
        socket.write_all(&request).await.expect("a request sent");
        buf.clear();
        while !complete(&buf) {
            let n = socket.read(&mut chunk).await.expect("an answer read");
            assert!(n > 0, "the fake closed the connection");
            buf.extend_from_slice(&chunk[..n]);
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
}

/// What one run measured.
struct Measure {
    /// Requests served a second.
    rate: f64,
    /// The fake's CPU time per request, when known.
    cpu_per_request: Option<Duration>,
}

/// Requests/s from `connections` connections for [`RUN`], and the fake's CPU time
/// per request.
async fn measure(fake: &Fake, stream: bool, connections: usize) -> Measure {
    let addr = fake.addr.as_str();
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            tokio::spawn(connection(
                addr.to_owned(),
                stream,
                Arc::clone(&stop),
                Arc::clone(&done),
            ))
        })
        .collect();
    // Let the connections open, then count.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (before, started, cpu) = (done.load(Ordering::Relaxed), Instant::now(), fake.cpu());
    tokio::time::sleep(RUN).await;
    let served = done.load(Ordering::Relaxed) - before;
    let rate = served as f64 / started.elapsed().as_secs_f64();
    let cpu_per_request = cpu
        .zip(fake.cpu())
        .map(|(before, after)| (after - before) / served.max(1) as u32);
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("a connection ends");
    }
    Measure {
        rate,
        cpu_per_request,
    }
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut below = false;
    for (latency, connections) in [(0, 200), (20, 500)] {
        let fake = start(latency);
        for stream in [false, true] {
            let Measure {
                rate,
                cpu_per_request,
            } = runtime.block_on(measure(&fake, stream, connections));
            let kind = if stream { "SSE " } else { "JSON" };
            let cpu = cpu_per_request
                .map(|c| format!(", {:>5.1} µs of the fake's CPU each", c.as_secs_f64() * 1e6))
                .unwrap_or_default();
            println!(
                "fake-openai, latency {latency:>2} ms, {kind}, {connections} connections: {rate:>8.0} requests/s{cpu}"
            );
            if latency == 0 && rate < TARGET {
                below = true;
            }
        }
    }
    if below {
        println!("below {TARGET} requests/s with no latency");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
