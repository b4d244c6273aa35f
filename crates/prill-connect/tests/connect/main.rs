//! Integration tests of every connector against real processes and real sockets on
//! 127.0.0.1: the demo server of `prill-testkit` (`demo.rs`) and its replaying server
//! (`replay_server.rs`), a scripted http server (`server.rs`) for faults the demo cannot
//! make and for exact request checks, and small Python agents for stdio. Nothing here
//! reaches beyond loopback.

mod cassettes;
mod demo;
mod fuzz_corpus;
mod http;
mod langgraph;
mod mcp;
mod mcp_chat_filter;
mod neuro_san_direct;
mod neuro_san_workers;
mod orphans;
mod otlp;
mod pool;
mod providers_anthropic;
mod providers_bedrock;
mod providers_errors;
mod providers_fakes;
mod providers_huggingface;
mod providers_ollama;
mod providers_openai;
mod providers_structured;
mod providers_tool_turns;
mod replay_server;
mod secrets_kept;
mod server;
mod stdio;
mod stdio_cassettes;
mod tls_ca_cert;
mod tools_command;
mod tools_mcp;
mod trajectory;

/// A text of `n` words, each streamed as its own delta by the fakes (the long-stream
/// tests of every provider).
fn long_text(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A request to `model` at temperature 0 (which the model cache keeps), with a 20 s
/// limit: what the cassette and cache tests ask.
fn request_at_zero(
    model: &str,
    system: Option<&str>,
    text: &str,
) -> prill_connect::provider::ModelRequest {
    use prill_connect::provider::{ChatMessage, ModelRequest, Role, Sampling};
    ModelRequest {
        model: model.into(),
        system: system.map(Into::into),
        messages: vec![ChatMessage::text(Role::User, text)],
        tools: Vec::new(),
        sampling: Sampling {
            temperature: Some(0.0),
            ..Sampling::default()
        },
        timeout: Some(std::time::Duration::from_secs(20)),
        response_format: None,
    }
}
