//! `fake-openai`: [`FakeOpenAi`] as a process of its own, for benchmarks that drive
//! Prill (or promptfoo) against an OpenAI-compatible server on loopback.
//!
//! `fake-openai [--port P] [--latency-ms MS] [--reply TEXT] [--reply-bytes N] [--threads N]`
//! serves on `127.0.0.1:P` (a free port by default), prints `listening on
//! http://127.0.0.1:PORT/v1` as its first line, and answers every valid chat completion
//! with `TEXT` after `MS` milliseconds (0 by default), whole or streamed as server-sent
//! events when asked, with `usage`, until it is killed. With `--reply-bytes` the answer
//! is `TEXT` repeated to `N` bytes, streamed 64 KiB an event (a long answer). It keeps
//! no record of the requests, so it does not grow with them.
//!
//! `--shop` plays the scripted shop of [`prill_testkit::providers::shop`] instead (a
//! simulated customer, the retail agent's tool loop and the judge, each reply after
//! `MS`), and `--shop-suite N` prints the tests of `N` such conversations and exits:
//! `cargo xtask bench --conversations` records and replays them.
//!
//! It runs on one thread by default (`--threads 1`, tokio's current-thread runtime),
//! its pauses on a `timerfd` of that thread's reactor: sharing two cores with the client
//! it measures, it then costs the least CPU a request, and still serves more than
//! 60,000 requests/s with no latency (`cargo bench -p prill-testkit --bench
//! fake_throughput`; the numbers are in `docs/performance.md`). `--threads 0` runs a
//! worker per core, `--threads N` N of them.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;

/// The answer when `--reply` is not given: it passes the benchmark's checks
/// (`must_contain "Paris"`, `must_not_contain "London"`, `regex_match "\d+"`).
const DEFAULT_REPLY: &str = "Paris has 2 million people";

const USAGE: &str = "usage: fake-openai [--port P] [--latency-ms MS] [--reply TEXT] [--reply-bytes N] [--threads N] [--shop] [--shop-suite N]";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
struct Options {
    port: u16,
    latency: Duration,
    reply: String,
    /// The reply's length in bytes: `reply` repeated (and cut) to it.
    reply_bytes: Option<usize>,
    /// Runtime threads: 1 runs everything on the main thread, 0 one per core.
    threads: usize,
    /// Play the scripted shop rather than answer `reply`.
    shop: bool,
    /// Print the tests of this many shop conversations, and exit.
    shop_suite: Option<usize>,
}

/// The options in `args` (without the program's name).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        port: 0,
        latency: Duration::ZERO,
        reply: DEFAULT_REPLY.to_owned(),
        reply_bytes: None,
        threads: 1,
        shop: false,
        shop_suite: None,
    };
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => {
                let v = value()?;
                options.port = v.parse().map_err(|_| format!("bad --port: {v}"))?;
            }
            "--latency-ms" => {
                let v = value()?;
                let ms: u64 = v.parse().map_err(|_| format!("bad --latency-ms: {v}"))?;
                options.latency = Duration::from_millis(ms);
            }
            "--reply" => options.reply = value()?,
            "--reply-bytes" => {
                let v = value()?;
                let n = v.parse().map_err(|_| format!("bad --reply-bytes: {v}"))?;
                options.reply_bytes = Some(n);
            }
            "--threads" => {
                let v = value()?;
                options.threads = v.parse().map_err(|_| format!("bad --threads: {v}"))?;
            }
            "--shop" => options.shop = true,
            "--shop-suite" => {
                let v = value()?;
                let n = v.parse().map_err(|_| format!("bad --shop-suite: {v}"))?;
                options.shop_suite = Some(n);
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    if options.reply.is_empty() && options.reply_bytes.is_some_and(|n| n > 0) {
        return Err("--reply-bytes needs a --reply that is not empty".to_owned());
    }
    Ok(options)
}

/// `reply` repeated, a space between each, and cut to `bytes` (ASCII `reply`: cut at
/// character boundaries otherwise).
fn long_reply(reply: &str, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + reply.len() + 1);
    while out.len() < bytes {
        out.push_str(reply);
        out.push(' ');
    }
    let mut end = bytes;
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("fake-openai: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(n) = options.shop_suite {
        print!("{}", prill_testkit::providers::shop::customers(n));
        return ExitCode::SUCCESS;
    }
    let runtime = match options.threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        0 => tokio::runtime::Builder::new_multi_thread(),
        n => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(n);
            builder
        }
    }
    .enable_all()
    .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fake-openai: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(options))
}

async fn run(options: Options) -> ExitCode {
    let fake = match FakeOpenAi::start_on(options.port).await {
        Ok(fake) => fake,
        Err(e) => {
            eprintln!("fake-openai: cannot bind 127.0.0.1:{}: {e}", options.port);
            return ExitCode::FAILURE;
        }
    };
    // A long reply is streamed in pieces of 64 KiB, as a model streams a few tokens an
    // event: word by word it would take many times its length on the wire.
    let reply = match options.reply_bytes {
        Some(bytes) => Reply::text(long_reply(&options.reply, bytes)).pieces(64 * 1024),
        None => Reply::text(options.reply),
    };
    fake.record_requests(false)
        .default_reply(reply.delay(options.latency));
    if options.shop {
        let latency = options.latency;
        fake.respond_with(move |body| {
            prill_testkit::providers::shop::play(body).map(|r| r.delay(latency))
        });
    }
    let mut out = std::io::stdout().lock();
    if writeln!(out, "listening on {}", fake.base_url())
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(out);
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_are_read_with_defaults() {
        let options = parse(args(&[])).unwrap();
        assert_eq!(options.port, 0);
        assert_eq!(options.latency, Duration::ZERO);
        assert_eq!(options.reply, DEFAULT_REPLY);
        let options = parse(args(&[
            "--port",
            "8080",
            "--latency-ms",
            "20",
            "--reply",
            "hi",
        ]))
        .unwrap();
        assert_eq!(
            options,
            Options {
                port: 8080,
                latency: Duration::from_millis(20),
                reply: "hi".to_owned(),
                reply_bytes: None,
                threads: 1,
                shop: false,
                shop_suite: None,
            }
        );
        assert_eq!(parse(args(&["--threads", "0"])).unwrap().threads, 0);
        assert!(parse(args(&["--shop"])).unwrap().shop);
        assert_eq!(
            parse(args(&["--shop-suite", "9"])).unwrap().shop_suite,
            Some(9)
        );
        assert!(parse(args(&["--shop-suite", "x"])).is_err());
        assert!(parse(args(&["--threads", "-1"])).is_err());
        assert!(parse(args(&["--port"])).is_err());
        assert!(parse(args(&["--latency-ms", "x"])).is_err());
        assert!(parse(args(&["--verbose"])).is_err());
    }

    #[test]
    fn long_replies_repeat_the_reply_to_the_length() {
        assert_eq!(long_reply("ab", 7), "ab ab a");
        assert_eq!(long_reply("ab", 0), "");
        assert_eq!(long_reply("é", 3), "é ");
        let options = parse(args(&["--reply-bytes", "1048576"])).unwrap();
        assert_eq!(options.reply_bytes, Some(1_048_576));
        assert!(parse(args(&["--reply", "", "--reply-bytes", "3"])).is_err());
    }
}
