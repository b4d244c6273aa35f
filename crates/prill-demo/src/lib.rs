//! A neuro-san-compatible server with deterministic demo agents and fault modes.
//!
//! It speaks neuro-san's http wire protocol and its MCP endpoint, so that tests, benchmarks
//! and `prill serve --demo` have a real agent server on loopback whose every answer can be
//! predicted. It runs on the caller's tokio runtime: one task accepts, one task serves each
//! connection (no thread per request, no lock on the hot path).
//!
//! # Starting it
//!
//! ```
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = prill_demo::DemoServer::builder()
//!     .tls(Some(prill_demo::TlsIdentity::self_signed()?))
//!     .bind("127.0.0.1:0")
//!     .await?;
//! assert_eq!(server.base_url(), format!("http://{}", server.addr()));
//!
//! let mut stream = tokio::net::TcpStream::connect(server.addr()).await?;
//! stream
//!     .write_all(b"GET /api/v1/list HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
//!     .await?;
//! let mut response = String::new();
//! stream.read_to_string(&mut response).await?;
//! assert!(response.starts_with("HTTP/1.1 200 OK"));
//! assert!(response.contains(r#""agent_name": "math_guy""#));
//!
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! **One port serves http and https.** The server peeks at the first byte of every
//! connection: `0x16` (a TLS ClientHello) is served over TLS with the configured
//! certificate, anything else as plain http/1.1. So a client can switch a base url's
//! scheme between `http` and `https` and keep the port. [`TlsIdentity::self_signed`] makes
//! a certificate for `localhost` and `127.0.0.1`; a client trusts it by adding
//! [`TlsIdentity::cert_pem`] as an extra root. Without a certificate a TLS client is simply
//! disconnected.
//!
//! [`RunningServer::shutdown`] stops accepting, lets requests in flight finish within a
//! grace period (5 s, see [`DemoServerBuilder::grace`]), cuts `hang` streams at once, and
//! returns when every task of the server has ended. Dropping a [`RunningServer`] starts the
//! same shutdown without waiting for it.
//!
//! **Pages instead of agents.** [`DemoServerBuilder::pages`] serves a read-only site
//! made by a [`Pages`] (`prill view`) on the same listener, with the same limits; see
//! [`pages`].
//!
//! # Limits on clients
//!
//! Every phase of a request has a time limit, and the connections held at once have a
//! cap ([`ClientLimits`], set with [`DemoServerBuilder::limits`]), so clients that send
//! nothing, stall halfway through a request or read none of the answer cannot hold the
//! server's descriptors or memory for long. By default: 10 s from the connection to its
//! first byte, 10 s more for the TLS handshake, 30 s for each request head (counted from
//! the end of the previous response on a keep-alive connection, so also the most a
//! connection stays idle between requests), 60 s for a request body and 10 s between two
//! reads of it (then a `408` and the connection closed, what was read of the body
//! dropped), 30 s for a response waiting on a client that reads none of it; and at most
//! half the process's soft open-file limit in connections, past which new ones wait in
//! the kernel's accept queue. A request body is at most 16 MiB (a `413` past it), a
//! request head at most hyper's buffer (about 400 KiB).
//! [`RunningServer::open_connections`] says how many connections the server holds.
//!
//! # Endpoints
//!
//! Every JSON body is written the way Python's `json.dumps` writes it (`", "` and `": "`
//! separators, non-ASCII as `\uXXXX`), as neuro-san does.
//!
//! | request | response |
//! |---|---|
//! | `GET /`, `/healthz`, `/readyz`, `/livez` | `{"service": "neuro-san.Agent", "status": "ok", "versions": {"prill-demo": "<version>"}}` |
//! | `GET /api/v1/list` | `{"agents": [{"agent_name": …, "description": …, "tags": […]}]}`, sorted by name |
//! | `GET /api/v1/{agent}/function` | `{"function": {"description": …, "parameters"?: {…}, "sly_data_schema"?: {…}}}` |
//! | `POST /api/v1/{agent}/streaming_chat` | a JSON-lines stream (below) |
//! | `POST /mcp` | MCP JSON-RPC 2.0 (below) |
//! | `POST /v1/chat/completions` | the demo model: an OpenAI chat completion answering `You said: <the last user message>` |
//!
//! `{agent}` may contain `/` (and `%2F`); an unknown agent, or any other path, is a 404 with
//! an empty body. A wrong method is a 405 with an empty body. A `streaming_chat` body that
//! is not a JSON object is a 400 `{"error": "Invalid JSON format"}`.
//!
//! # `streaming_chat`
//!
//! The request is a neuro-san `ChatRequest`:
//! `{"user_message": {"type": "HUMAN", "text": …}, "sly_data"?: {…}, "chat_context"?: {…},
//! "chat_filter"?: {"chat_filter_type": "MINIMAL" | "MAXIMAL"}}`. Request metadata travel
//! as http headers. The response is `200`, `Content-Type: application/json-lines`,
//! chunked, one JSON object and a `\n` per line, each line sent as soon as it is ready.
//!
//! - A request without `user_message.text` gets one line, `{}`.
//! - `MINIMAL` (also an absent or unknown filter) gets exactly one line, the final message:
//!   `{"response": {"type": "AGENT_FRAMEWORK", "text": …, "chat_context": {…},
//!   "structure"?: {…}, "sly_data"?: {…}}}` (keys in that order, no `origin`, absent
//!   optional keys left out).
//! - `MAXIMAL` (or `2`) gets exactly seven lines, in this order; every line but the
//!   heartbeat has `"request": <the request echoed>` after `"response"`:
//!   1. `{"type": "AI", "origin": [<front man>], "text": "I will ask <Tool> for this."}`
//!   2. `{"type": "AGENT", "origin": [<front man>, <tool>], "text": "Received arguments:",
//!      "structure": {"tool_start": true, "tool_args": {…}}}` (neuro-san's shape for a coded
//!      tool's arguments)
//!   3. the heartbeat `{"response": {"type": "AGENT_PROGRESS", "text": ""}}`, exactly
//!      this fixed frame **without** `request`, as neuro-san sends it; clients ignore it.
//!      (The `slow` agent waits after this line.)
//!   4. `{"type": "AGENT", "origin": [<front man>, <tool>], "text": "Got result:",
//!      "structure": {"tool_end": true, "tool_output": …}}`
//!   5. `{"type": "AI", "origin": [<front man>], "text": <the answer>}`
//!   6. `{"type": "AGENT", "origin": [<front man>], "structure": {"total_tokens", "prompt_tokens",
//!      "completion_tokens", "successful_requests", "total_cost", "time_taken_in_seconds",
//!      "models"}}` (token accounting, no `text`)
//!   7. the final `AGENT_FRAMEWORK` message, as under `MINIMAL`.
//!
//! An origin element is `{"tool": <name>, "instantiation_index": 1}`. The `chat_context`
//! is `{"chat_histories": [{"origin": [<front man>], "messages": [<SYSTEM "<redacted>">,
//! <HUMAN>, <AI>, …]}]}`: the front man's history from the request's chat_context (found by
//! its origin) with this turn's HUMAN and AI messages appended, each
//! `{"type", "origin", "text"}` with `{` and `}` doubled. Clients copy it verbatim into the
//! next request to continue a conversation.
//!
//! # Demo agents
//!
//! See [`DemoAgent`]. All are deterministic.
//!
//! - `math_guy` (front man `MathGuy`, tool `Calculator`): sly_data `{"x", "y"}` and a text
//!   naming the operation, matched case-insensitively anywhere in it (`times`/`multipl…`/
//!   `product`, `plus`/`add`/`sum`, `minus`/`subtract`/`difference`, `divide`/`quotient`,
//!   looked for in that order). The answer is `Check sly_data['equals'] for the result` with
//!   sly_data `{"equals": <float>}`, always a JSON float (`847` times `23` is `19481.0`).
//!   Division by zero, a missing `x` or `y`, or no operation give a text saying so and no
//!   sly_data.
//! - `music_nerd_pro` (`MusicNerdPro`, `Accountant`): a fixed table of 11 songs and 10 bands
//!   with their home towns. "Who did Yellow Submarine?" is answered
//!   `Yellow Submarine was recorded by The Beatles.`; a question with `where`, `from` or
//!   `home` gets the band's home town (`The Beatles are from Liverpool, England.`), using
//!   the band last named in the chat_context when the question names none. The structure
//!   is `{"answer": <the text>, "running_cost": <float>}`, where the running cost is 3.0
//!   times the turn number of the conversation (the HUMAN messages in the chat_context plus
//!   one): 3.0, then 6.0 with the chat_context carried.
//! - `echo` (`Echo`, `Mirror`): answers with the text it was sent; the sly_data it was
//!   sent comes back as both its `sly_data` and its `structure` (both absent without
//!   sly_data).
//! - `slow` (`Slow`, `Sleeper`): waits sly_data `delay_ms` (1000 by default, at most one
//!   hour) with a tokio timer, then answers `I waited <n> ms.` with structure
//!   `{"delay_ms": n}`. The response head is sent at once; the wait stops when the client
//!   goes away.
//! - `flaky` (`Flaky`, `Dice`): sly_data `{"seed": int, "modes": {"<name>": p, …},
//!   "sample"?: int}`. It draws `u` = [`uniform_draw`]`(seed, sample)` in `[0, 1)`; the
//!   modes, in sorted name order, partition `[0, 1)` by cumulative probability, and the
//!   answer is `failure <name>` for the mode `u` falls in, else `ok`. The structure is
//!   `{"outcome": "ok" | "failure", "mode"?: name, "draw": u}`. Same seed and sample, same
//!   answer; over many sample indices each mode's share approaches its probability.
//!
//! # Fault modes
//!
//! A request picks a fault with the header [`FAULT_HEADER`] (`x-prill-fault`); since
//! request metadata travel as headers, a test file sets it through its `metadata`. Faults
//! apply to `streaming_chat` and to MCP `tools/call` (other requests ignore the header),
//! after the agent is found and the body is parsed. An unknown mode is a 400 naming the
//! known ones.
//!
//! | value | `streaming_chat` | MCP `tools/call` |
//! |---|---|---|
//! | `drop` | the heartbeat line, then the connection is closed without finishing the chunked body | the first bytes of a JSON-RPC response, then the same cut |
//! | `malformed` | a line that is not JSON, then the normal answer | a 200 body that is not JSON |
//! | `500` | 500 `{"error": "Internal server error"}` | the same |
//! | `503` | 503 `{"error": "Server is shutting down"}` with `Retry-After: 1` | the same |
//! | `503-once:<key>` | like `503` for the first request carrying `<key>`, then normal answers | the same |
//! | `429` | 429 `{"error": "Too many requests"}` with `Retry-After: 1` | the same |
//! | `hang` | the 200 head, then nothing until the client leaves or the server shuts down | the same |
//! | `huge`, `huge:<MiB>` | 64 MiB (or `<MiB>`) of 64 KiB `AGENT` lines from the tool, then the normal answer | a valid JSON-RPC result whose text is that big |
//!
//! Huge bodies are made lazily from one shared 64 KiB buffer: nothing is buffered.
//! [`RunningServer::active_streams`] counts streams in flight, so a test can see that a
//! client's disconnect stopped a `hang` or a `slow` stream.
//!
//! # MCP
//!
//! `POST /mcp`, JSON-RPC 2.0, answered as `application/json` (no SSE, no sessions):
//!
//! - `initialize` → `{"protocolVersion": "2025-06-18", "capabilities": {"tools":
//!   {"listChanged": false}}, "serverInfo": {"name": "prill-demo", …}, "instructions": ""}`
//!   (the client's version instead when it asks for `2025-03-26`).
//! - a notification (`notifications/initialized`, or any request without an `id`) → 202
//!   with no body.
//! - `ping` → `{}`; `tools/list` → one tool per agent, its `inputSchema` a `ChatRequest`.
//! - `tools/call` with `{"name": <agent>, "arguments": <ChatRequest>}` (or
//!   `{"input": <text>}`) → `{"content": [{"type": "text", "text": <answer>}],
//!   "structuredContent": {"structure"?: …, "chat_context": …, "sly_data"?: …}, "isError":
//!   false}`. A request without text gives `isError: true`.
//! - Errors: an unknown tool or a missing name is JSON-RPC error -32602 and an unknown
//!   method -32601, both with http 200; a body that is not JSON is a 400 with -32700; a
//!   request that is not JSON-RPC 2.0, or an `MCP-Protocol-Version` header other than
//!   `2025-06-18` or `2025-03-26` on any method but `initialize`, is a 400 with -32600.

mod agents;
mod body;
mod chat;
mod conversation;
mod direct;
mod faults;
mod limits;
mod mcp;
mod model;
pub mod otlp;
pub mod pages;
mod pyjson;
pub mod replay;
mod routes;
mod server;
mod timed;
mod tls;

pub use agents::{DemoAgent, uniform_draw};
pub use conversation::{SAMPLE_HEADER, apply_sample};
pub use direct::respond;
pub use faults::{DEFAULT_HUGE_BYTES, FAULT_HEADER, HUGE_LINE_BYTES};
pub use limits::ClientLimits;
pub use mcp::MCP_PROTOCOL_VERSION;
pub use pages::{Page, Pages};
pub use replay::Recordings;
pub use server::{DemoServer, DemoServerBuilder, RunningServer};
pub use tls::TlsIdentity;

/// Why the demo server could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The address could not be bound.
    #[error("cannot listen: {0}")]
    Bind(#[source] std::io::Error),
    /// The certificate could not be made or read.
    #[error("bad certificate: {0}")]
    Certificate(String),
}
