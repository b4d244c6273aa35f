//! Memory of one long model stream (issue 16): the OpenAI-compatible provider reads a
//! stream of about 30 MiB (just under the 32 MiB cap on a body) from `prill-testkit`'s
//! fake OpenAI server, 120,000 deltas of one word each. The answer must keep its whole
//! text but not the parsed chunks: before, every chunk was kept as a `serde_json::Value`
//! and one such stream peaked at 482 MB.
//!
//! Run with `cargo bench -p prill-connect --bench long_stream` (a release build). It
//! prints the events read, the raw events kept, the wall time and the peak RSS of the
//! whole process (the fake server, which holds the whole stream it sends, included),
//! and exits non-zero when more raw events were kept than `RAW_EVENTS_KEPT`, the text
//! is not whole, or the peak RSS passes 150 MB.
//!
//! Everything runs on 127.0.0.1.

use std::process::ExitCode;
use std::time::Instant;

use prill_connect::HttpOptions;
use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, Provider, ProviderKind, ProviderSettings, RAW_EVENTS_KEPT,
    Role, Sampling,
};
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;

const WORDS: usize = 120_000;
const RSS_TARGET_MB: f64 = 150.0;

/// The peak resident set size, in KiB, from `/proc/self/status`.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run())
}

async fn run() -> ExitCode {
    let fake = FakeOpenAi::start().await;
    let text: String = (0..WORDS)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    fake.script(Reply::text(&text));
    let env = std::collections::HashMap::from([
        ("OPENAI_BASE_URL".to_owned(), fake.base_url()),
        ("OPENAI_API_KEY".to_owned(), "sk-bench".to_owned()),
    ]);
    let settings = match ProviderSettings::resolve(ProviderKind::Openai, &env, None) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let transport = match Transport::new(
        ProviderKind::Openai,
        &HttpOptions::default(),
        Limits::none(),
    ) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let provider = OpenAi::new(settings, transport);
    let request = ModelRequest {
        model: "gpt-4o".into(),
        system: None,
        messages: vec![ChatMessage::text(Role::User, "count")],
        tools: Vec::new(),
        sampling: Sampling::default(),
        timeout: None,
        response_format: None,
    };
    let before_mb = peak_rss_kb() as f64 / 1024.0;
    let started = Instant::now();
    let response = match provider.complete(&request).await {
        Ok(response) => response,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let rss_mb = peak_rss_kb() as f64 / 1024.0;
    println!("events read:     {}", response.events);
    println!(
        "raw events kept: {} (at most {RAW_EVENTS_KEPT})",
        response.raw.kept()
    );
    println!("text:            {} bytes", response.text.len());
    println!("wall:            {wall:.2} s");
    println!("peak rss before: {before_mb:.1} MB");
    println!("peak rss:        {rss_mb:.1} MB (target <= {RSS_TARGET_MB})");
    let met =
        response.raw.kept() <= RAW_EVENTS_KEPT && response.text == text && rss_mb <= RSS_TARGET_MB;
    if met {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the stream kept too much, or the text is not whole");
        ExitCode::FAILURE
    }
}
