//! `prill-connect` reaches the agents under test. It is the only crate of Prill that
//! talks to agents.
//!
//! One pair of traits covers every way to reach an agent: a [`Connector`] opens a
//! [`Conversation`] with a named agent, and a conversation sends [`AgentRequest`]s and
//! returns [`AgentResponse`]s. A conversation is a fresh session; like neuro-san's own
//! test driver, the caller carries the conversation by passing the `chat_context` of one
//! response into the next request.
//!
//! | connection | connector | protocol |
//! |---|---|---|
//! | `http`, `https` | [`NeuroSanHttp`] | `POST {base}/api/v1/{agent}/streaming_chat`, JSON lines back |
//! | `mcp` | [`NeuroSanMcp`] | JSON-RPC 2.0 at `POST {base}/mcp`: `initialize`, then `tools/call` |
//! | `direct` (a command) | [`StdioConnector`] | one JSON line per request on stdin, JSON lines back on stdout (`docs/direct-agents.md`) |
//! | `direct` (a neuro-san network) | [`neuro_san_direct::NeuroSanDirect`] | the same, to Prill's bridge into neuro-san's library |
//! | `direct` (Rust) | [`Registry`] of [`InProcessAgent`]s | a function call |
//!
//! A LangGraph server (`framework: langgraph`) is reached by
//! [`langgraph::LanggraphServer`], a [`prill_target::graph::GraphServer`]: a thread,
//! then a streamed run of an assistant (`POST /threads/{id}/runs/stream`).
//!
//! The wire format follows neuro-san to the letter (`shared/research/neuro-san.md` §4):
//! [`wire::chat_request`] builds the body, [`decode::LineDecoder`] splits the stream as
//! it arrives (strictly on `\n`, several JSON values per line allowed, blank lines and
//! keep-alive heartbeats skipped, a last unterminated line parsed, the whole body
//! capped at 32 MiB by default), and [`wire::Collector`] picks the answer, structure,
//! sly_data and chat_context by upstream's rules.
//!
//! **Errors.** Every [`ConnectError`] means the agent could not be reached or broke the
//! protocol; none of them is a test failure. [`ConnectError::kind`] tells them apart.
//! Messages never hold header or environment values, which may be secrets.
//!
//! **Answers end at the final message.** Over http an exchange ends with the front
//! man's `AGENT_FRAMEWORK` message that carries a `chat_context`, whether or not the
//! server closes the stream after it; a stream that ends before it (an empty body, only
//! `{}` to a request with text, a cut stream) is a protocol error, and so is a message
//! whose `text` is not a string or whose `structure`, `sly_data` or `chat_context` is
//! not an object.
//!
//! **Time.** Nothing waits forever. A request's `timeout` bounds the whole exchange,
//! retries included; a request without one gets the connector's default
//! ([`DEFAULT_TIMEOUT`], 300 s, which `prill.toml`'s `timeout_in_seconds` changes). An
//! optional idle limit ([`HttpOptions::idle_timeout`], off by default) ends an exchange
//! during which nothing arrived for that long. Dropping the future (which a timeout
//! does) closes the connection or abandons the command's answer.
//!
//! **Retries** ([`retry`]): only after a connection that could not be made (never once
//! the request may have reached the server), or after a status that asks to come back
//! later (an agent: 429 and 503; a model provider: 408, 409, 429 and 5xx), honouring
//! `Retry-After` up to a cap; never after response bytes arrived, never on a timeout.
//! An error after retries says how many attempts were made, and the timings of an
//! answer are its last attempt's.
//!
//! **Cassettes** ([`cassette`]). Every http exchange, of the http, https and MCP
//! connectors, the model providers and LangGraph servers alike, goes through one seam
//! that the run's [`cassette::Cassettes`] ([`HttpOptions::cassettes`]) answer from a
//! recording (no network, no retries; the recorded bytes at their times, or at once,
//! through the same decoders as live traffic) or record into as it streams. A request
//! is keyed by its connector, method, path and query, and body without its volatile
//! fields, never by its headers; a replayed JSON-RPC answer is given the id of the
//! request sent. A request with no recording is [`ConnectError::NoCassette`]; a
//! recording that could not be written is kept by [`cassette::Cassettes::failure`].
//! The file format, its normalization and matching are `prill-cassette`'s, re-exported
//! in [`cassette`].
//!
//! **TLS.** https uses rustls with the `ring` provider, trusting the system roots and an
//! optional extra CA ([`TlsOptions`]); an explicit insecure switch turns verification
//! off and logs a warning.
//!
//! **Tool programs.** [`tools::CommandTools`] starts the programs that answer a tool
//! loop's calls (`framework_config.tool_command`, `docs/tools.md`): one JSON line per
//! call on stdin, one per answer on stdout, under the same process rules as the
//! commands of the `direct` connection (one module starts both: a process group of its
//! own, ended with `SIGTERM` then `SIGKILL` after [`GROUP_GRACE`]; the last
//! [`STDERR_KEPT`] bytes of stderr in errors, keys blanked; lines read within a cap).
//!
//! **The server.** [`resolve_server`] picks the neuro-san server from `--server`, the
//! `PRILL_SERVER` environment variable, `prill.toml`'s `server`, or
//! `http://localhost:8080`.
//!
//! # Example
//!
//! An in-process agent, reached through the same traits as a real server:
//!
//! ```
//! use std::sync::Arc;
//!
//! use prill_connect::{AgentRequest, AgentResponse, Connector, Registry, from_fn};
//! use serde_json::json;
//!
//! let echo = from_fn(|request: AgentRequest| async move {
//!     let turn = request
//!         .chat_context
//!         .as_ref()
//!         .and_then(|c| c["turn"].as_u64())
//!         .unwrap_or(0)
//!         + 1;
//!     Ok(AgentResponse {
//!         text: Some(format!("turn {turn}: {}", request.text.unwrap_or_default())),
//!         chat_context: Some(json!({"turn": turn})),
//!         ..AgentResponse::default()
//!     })
//! });
//! let registry = Registry::new().with("echo", Arc::new(echo));
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! runtime.block_on(async {
//!     let mut conversation = registry.open("echo").await?;
//!     let first = conversation.send(&AgentRequest::new("hello")).await?;
//!     assert_eq!(first.text.as_deref(), Some("turn 1: hello"));
//!     let next = AgentRequest::new("again").with_chat_context(first.chat_context);
//!     let second = conversation.send(&next).await?;
//!     assert_eq!(second.text.as_deref(), Some("turn 2: again"));
//!     assert!(registry.open("nobody").await.is_err());
//!     Ok::<_, prill_connect::ConnectError>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A neuro-san server (this one needs a server running):
//!
//! ```no_run
//! use prill_connect::{AgentRequest, HttpOptions, NeuroSanHttp, resolve_server};
//!
//! # async fn run() -> Result<(), prill_connect::ConnectError> {
//! let base = resolve_server(None, std::env::var("PRILL_SERVER").ok().as_deref(), None)?;
//! let server = NeuroSanHttp::new(base, &HttpOptions::default())?;
//! for agent in server.list_agents().await? {
//!     println!("{}\t{}", agent.name, agent.description);
//! }
//! let response = server.chat("hello_world", &AgentRequest::new("hi")).await?;
//! println!("{:?}", response.text);
//! # Ok(())
//! # }
//! ```

pub mod cache;
pub mod cassette;
pub mod decode;
mod http;
pub mod langgraph;
mod mcp;
pub mod neuro_san_direct;
pub mod neuro_san_pool;
pub mod otlp;
mod process;
pub mod provider;
pub mod retry;
mod server;
mod stdio;
pub mod stdio_cassette;
mod tls;
pub mod tools;
pub mod tools_cassette;
pub mod wire;

pub use prill_target::{
    AgentFunction, AgentInfo, AgentRequest, AgentResponse, BoxFuture, ConnectError, Connector,
    Conversation, DEFAULT_TIMEOUT, ErrorKind, InProcessAgent, Invocation, JsonMap, Registry,
    Timings, TokenUsage, from_fn,
};
// The modules of `prill-target`, under the paths this crate's own code uses.
pub use http::{HttpOptions, INFO_TIMEOUT, NeuroSanHttp};
pub use mcp::{MCP_PROTOCOL_VERSION, NeuroSanMcp};
pub use neuro_san_direct::{ConfigSource, DirectConnector, NeuroSanDirect};
pub(crate) use prill_target::{error, types, with_timeout};
pub use process::{GROUP_GRACE, STDERR_KEPT, end_all_programs, end_pending_groups};
pub use reqwest::Url;
pub use retry::{RetryPolicy, Statuses};
pub use server::{DEFAULT_SERVER, SERVER_ENV, label, parse_server, resolve_server, with_scheme};
pub use stdio::{StdioCommand, StdioConnector, StdioConversation};
pub use tls::{TlsOptions, client_config};
