//! [`NeuroSanMcp`]: a neuro-san server's MCP endpoint (`shared/research/neuro-san.md` §4.5).
//!
//! JSON-RPC 2.0 over `POST {base}/mcp`. Each conversation initializes once (`initialize`
//! with protocol version [`MCP_PROTOCOL_VERSION`], then the `notifications/initialized`
//! notification), then calls the agent as a tool for each request: `tools/call` with
//! `{"name": agent, "arguments": <ChatRequest>}`. After `initialize`, every request
//! carries `MCP-Protocol-Version` and, when the server gave one, `Mcp-Session-Id`.
//!
//! The result maps as upstream's `McpChatResponseDictionaryConverter` does:
//! `content[0].text` is the answer and `structuredContent`'s `structure`,
//! `chat_context` and `sly_data` are those parts, as one `AGENT_FRAMEWORK` message.
//! A result with `isError` and a JSON-RPC error are errors. Unlike upstream, a result
//! without `isError` is not taken for an error (MCP says it defaults to false). A reply
//! whose `id` is not the request's is a protocol error, never taken for its answer.
//! An answer may come as a `text/event-stream` body, read by the HTML standard's rules
//! ([`SseDecoder`]) within the body cap; one that ends mid-event, or before the
//! response, is an error: the answer was cut short.
//!
//! The timings of an answer are the `tools/call`'s last attempt's: the session's
//! `initialize` does not count.

use std::sync::Arc;
use std::time::Instant;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use crate::error::{ConnectError, cut};
use crate::http::{Answered, HttpClient, HttpOptions, metadata_headers, parse_json};
use crate::provider::sse::SseDecoder;
use crate::server::{endpoint, label};
use crate::types::{AgentRequest, AgentResponse, Timings};
use crate::wire::{Collector, chat_request};
use crate::{BoxFuture, Connector, Conversation, with_timeout};

/// The MCP protocol version spoken, as neuro-san's MCP service does.
pub const MCP_PROTOCOL_VERSION: &str = "2025-06-18";

const PROTOCOL_HEADER: &str = "mcp-protocol-version";
const SESSION_HEADER: &str = "mcp-session-id";

/// A neuro-san server's MCP endpoint.
///
/// Cheap to clone; clones share one connection pool.
#[derive(Debug, Clone)]
pub struct NeuroSanMcp {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    url: Url,
    label: String,
    http: HttpClient,
}

impl NeuroSanMcp {
    /// A connector for the MCP endpoint of the server at `base` (`{base}/mcp`).
    pub fn new(base: Url, options: &HttpOptions) -> Result<NeuroSanMcp, ConnectError> {
        let url = endpoint(&base, &["mcp"]);
        Ok(NeuroSanMcp {
            inner: Arc::new(Inner {
                label: label(&url),
                http: HttpClient::new(options, "mcp")?,
                url,
            }),
        })
    }

    /// The endpoint's url.
    pub fn url(&self) -> &Url {
        &self.inner.url
    }
}

impl Connector for NeuroSanMcp {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        let conversation = McpConversation {
            inner: self.inner.clone(),
            agent: agent.to_owned(),
            session: None,
            next_id: 1,
        };
        Box::pin(async move { Ok(Box::new(conversation) as Box<dyn Conversation>) })
    }
}

/// What `initialize` established.
#[derive(Debug, Clone)]
struct Session {
    id: Option<HeaderValue>,
}

#[derive(Debug)]
struct McpConversation {
    inner: Arc<Inner>,
    agent: String,
    /// Set once `initialize` and its notification went through.
    session: Option<Session>,
    next_id: u64,
}

impl Conversation for McpConversation {
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        let peer = self.inner.label.clone();
        let limit = self.inner.http.limit(request.timeout);
        // Metadata values (bearer tokens) an error quotes from the server are blanked.
        Box::pin(async move {
            with_timeout(&peer, limit, self.exchange(request))
                .await
                .map_err(|e| e.redacted(&request.secrets()))
        })
    }
}

impl McpConversation {
    async fn exchange(&mut self, request: &AgentRequest) -> Result<AgentResponse, ConnectError> {
        let headers = metadata_headers(&request.metadata)?;
        if self.session.is_none() {
            self.session = Some(self.initialize(&headers).await?);
        }
        let mut params = json!({"name": self.agent, "arguments": chat_request(request)});
        if let Some(context) = request.metadata.get(prill_target::otel::TRACEPARENT) {
            // Where MCP's semantic conventions carry the trace context.
            params["_meta"] = json!({ prill_target::otel::TRACEPARENT: context });
        }
        let (result, start, first_byte) = self.call("tools/call", params, &headers).await?;
        let first_byte = Some(first_byte.duration_since(start));
        let server = &self.inner.label;
        let result = result.as_object().ok_or_else(|| {
            ConnectError::protocol(server, "the tools/call result is not an object")
        })?;
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .and_then(|content| content.first())
            .map(|first| first.get("text").cloned().unwrap_or(json!("")));
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let said = match &text {
                Some(Value::String(s)) => cut(s, 500),
                _ => "(no text)".to_owned(),
            };
            return Err(ConnectError::protocol(
                server,
                format!("the tool call of `{}` failed: {said}", self.agent),
            ));
        }
        let mut collector = Collector::default();
        let structured = result.get("structuredContent");
        let part = |key: &str| structured.and_then(|s| s.get(key)).filter(|v| !v.is_null());
        // No content is no answer, as upstream has it.
        if let Some(text) = text {
            let mut message = Map::new();
            message.insert("type".into(), json!("AGENT_FRAMEWORK"));
            message.insert("text".into(), text);
            for key in ["structure", "chat_context", "sly_data"] {
                if let Some(value) = part(key) {
                    message.insert(key.into(), value.clone());
                }
            }
            collector
                .accept_message(Value::Object(message))
                .map_err(|e| ConnectError::protocol(server, e.0))?;
        }
        let mut response = collector.finish(Timings {
            first_byte,
            total: start.elapsed(),
        });
        // sly_data comes back even without a chat_context.
        if let Some(sly_data) = part("sly_data") {
            response.sly_data = Some(sly_data.clone());
        }
        Ok(response)
    }

    /// `initialize`, its version check, and the `notifications/initialized` notification.
    async fn initialize(&mut self, headers: &HeaderMap) -> Result<Session, ConnectError> {
        let params = json!({
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {"roots": {"listChanged": false}, "sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "prill", "title": "Prill", "version": env!("CARGO_PKG_VERSION")}
        });
        let id = self.take_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let Answered { response, .. } = self.post(&body, headers, None).await?;
        let session = Session {
            id: response.headers().get(SESSION_HEADER).cloned(),
        };
        let result = self.answer(response, id, "initialize").await?;
        let server = &self.inner.label;
        match result.get("protocolVersion").and_then(Value::as_str) {
            Some(MCP_PROTOCOL_VERSION) => {}
            Some(other) => {
                return Err(ConnectError::protocol(
                    server,
                    format!(
                        "the server speaks MCP protocol version `{other}`; prill speaks `{MCP_PROTOCOL_VERSION}`"
                    ),
                ));
            }
            None => {
                return Err(ConnectError::protocol(
                    server,
                    "the initialize result names no `protocolVersion`",
                ));
            }
        }
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        // The answer (normally `202 Accepted`) has nothing to read.
        self.post(&notification, headers, Some(&session)).await?;
        Ok(session)
    }

    /// One JSON-RPC call after initialization: its result, when its last attempt
    /// began, and when the answer began.
    async fn call(
        &mut self,
        method: &str,
        params: Value,
        headers: &HeaderMap,
    ) -> Result<(Value, Instant, Instant), ConnectError> {
        let id = self.take_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let session = self.session.clone();
        let Answered {
            response, started, ..
        } = self.post(&body, headers, session.as_ref()).await?;
        let began = Instant::now();
        Ok((self.answer(response, id, method).await?, started, began))
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// POSTs one JSON-RPC message, with the retry rules.
    async fn post(
        &self,
        body: &Value,
        headers: &HeaderMap,
        session: Option<&Session>,
    ) -> Result<Answered, ConnectError> {
        let inner = &self.inner;
        let body = body.to_string();
        inner
            .http
            .send(&inner.label, None, || {
                let mut builder = inner
                    .http
                    .client
                    .post(inner.url.clone())
                    .headers(headers.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "application/json, text/event-stream")
                    .body(body.clone());
                if let Some(session) = session {
                    builder = builder.header(PROTOCOL_HEADER, MCP_PROTOCOL_VERSION);
                    if let Some(id) = &session.id {
                        builder = builder.header(SESSION_HEADER, id.clone());
                    }
                }
                builder
            })
            .await
    }

    /// The `result` of the JSON-RPC response to request `id`, read from a JSON body or
    /// from the events of a `text/event-stream` body.
    async fn answer(
        &self,
        response: reqwest::Response,
        id: u64,
        method: &str,
    ) -> Result<Value, ConnectError> {
        let server = self.inner.label.as_str();
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        let body = self.inner.http.read_body(response, server).await?;
        let message = if is_sse {
            let limit = self.inner.http.max_body_bytes;
            event_stream_answer(&body, limit, id, method, server)?
        } else {
            parse_json(&body, server)?
        };
        let answered = message.get("id");
        // An error about a request the server could not read has a null id.
        let unread = answered == Some(&Value::Null) && message.get("error").is_some();
        if !answers(answered, id) && !unread {
            let found = match answered {
                Some(other) => format!("`id` {other}"),
                None => "no `id`".to_owned(),
            };
            return Err(ConnectError::protocol(
                server,
                format!(
                    "the answer to {method} request {id} has {found}: it answers another request"
                ),
            ));
        }
        if let Some(error) = message.get("error") {
            return Err(self.rpc_error(error, method));
        }
        match message.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(ConnectError::protocol(
                server,
                format!(
                    "the answer to {method} is not a JSON-RPC response (no `result` or `error`)"
                ),
            )),
        }
    }

    /// A JSON-RPC error as a connect error; "unknown tool" is an unknown agent.
    fn rpc_error(&self, error: &Value, method: &str) -> ConnectError {
        let code = error.get("code").and_then(Value::as_i64);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)");
        let lower = message.to_lowercase();
        if method == "tools/call"
            && (lower.contains("unknown tool") || lower.contains("tool not found"))
        {
            return ConnectError::UnknownAgent {
                agent: self.agent.clone(),
                server: self.inner.label.clone(),
            };
        }
        let code = code.map(|c| format!(" {c}")).unwrap_or_default();
        ConnectError::protocol(
            &self.inner.label,
            format!(
                "{method} failed with json-rpc error{code}: {}",
                cut(message, 500)
            ),
        )
    }
}

/// The message of an event stream that answers request `id`: the response with its id,
/// else the first response, whose id the caller then reports. Requests the server makes
/// of the client, and notifications, have a `method`: they are no response.
///
/// A stream with no response is an error: it ended before the answer came. (One that
/// ended mid-event is one already: [`event_stream_messages`].)
fn event_stream_answer(
    body: &[u8],
    limit: u64,
    id: u64,
    method: &str,
    server: &str,
) -> Result<Value, ConnectError> {
    let mut responses: Vec<Value> = event_stream_messages(body, limit, server)?
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect();
    match responses.iter().position(|m| answers(m.get("id"), id)) {
        Some(at) => Ok(responses.swap_remove(at)),
        None if !responses.is_empty() => Ok(responses.swap_remove(0)),
        None => Err(ConnectError::protocol(
            server,
            format!("the event stream holds no answer to the {method} request"),
        )),
    }
}

/// The JSON messages of a `text/event-stream` body, in order: the data of each event
/// that is JSON (the others are skipped), whatever the event's type. The body is read by
/// the HTML standard's rules ([`SseDecoder`]: lines end with `\r\n`, `\n` or `\r`, a
/// byte order mark opening it is dropped), within `limit` bytes.
///
/// A body that ends mid-event (a line, or an event, it did not end with a blank line)
/// is an error: the spec discards that event, so the answer was cut short.
fn event_stream_messages(
    body: &[u8],
    limit: u64,
    server: &str,
) -> Result<Vec<Value>, ConnectError> {
    let mut decoder = SseDecoder::new(limit);
    let events = decoder.feed(body).ok_or_else(|| ConnectError::TooLarge {
        peer: server.to_owned(),
        limit,
    })?;
    if let Some(rest) = decoder.finish() {
        let mut message = "the event stream ended mid-event (no blank line after its last \
                           lines), which discards that event: the answer was cut short"
            .to_owned();
        if !rest.data.trim().is_empty() {
            message.push_str(&format!(
                "; its data so far: {}",
                cut(rest.data.trim(), 120)
            ));
        }
        return Err(ConnectError::protocol(server, message));
    }
    Ok(events
        .iter()
        .filter_map(|event| serde_json::from_str(&event.data).ok())
        .collect())
}

/// Whether a response's `id` answers request `id`. JSON-RPC wants the request's id
/// back as it was sent; neuro-san's MCP service always sends it back as a string
/// (`1` comes back as `"1"`), which names the same request, so both forms are taken.
fn answers(found: Option<&Value>, id: u64) -> bool {
    match found {
        Some(Value::Number(n)) => n.as_u64() == Some(id),
        Some(Value::String(s)) => *s == id.to_string(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_answers_as_a_number_or_as_its_string() {
        assert!(answers(Some(&json!(1)), 1));
        assert!(answers(Some(&json!("1")), 1), "neuro-san's form");
        assert!(!answers(Some(&json!(2)), 1));
        assert!(!answers(Some(&json!("2")), 1));
        assert!(!answers(Some(&json!("01")), 1));
        assert!(!answers(Some(&json!(1.5)), 1));
        assert!(!answers(None, 1));
    }

    const LIMIT: u64 = 1 << 20;

    /// The messages of an event stream body.
    fn messages(body: &[u8]) -> Result<Vec<Value>, ConnectError> {
        event_stream_messages(body, LIMIT, "http://h/mcp")
    }

    /// The message that answers request `id` in an event stream body.
    fn answer(body: &[u8], id: u64) -> Result<Value, ConnectError> {
        event_stream_answer(body, LIMIT, id, "tools/call", "http://h/mcp")
    }

    #[test]
    fn sse_bodies() {
        // A notification, a response in two `data` lines, a comment, and an event whose
        // data is not JSON (skipped); `event` types are not looked at.
        let body = b"event: message\ndata: {\"jsonrpc\": \"2.0\", \"method\": \"note\"}\n\n\
data: {\"jsonrpc\": \"2.0\",\ndata: \"id\": 2, \"result\": {}}\n\n: comment\ndata: not json\n\n";
        let found = messages(body).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1]["id"], json!(2));
        assert_eq!(answer(body, 2).unwrap()["result"], json!({}));
        // CRLF line endings read the same.
        let crlf = String::from_utf8_lossy(body).replace('\n', "\r\n");
        assert_eq!(messages(crlf.as_bytes()).unwrap(), found);
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        let body = b"data: {\"jsonrpc\": \"2.0\", \"method\": \"note\"}\r\r\
data: {\"jsonrpc\": \"2.0\",\rdata: \"id\": 1, \"result\": {\"n\": 1}}\r\r";
        let found = messages(body).unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(answer(body, 1).unwrap()["result"], json!({"n": 1}));
    }

    #[test]
    fn a_byte_order_mark_opening_the_stream_is_dropped() {
        // Else the first line is the field `\u{feff}data`, which is no data.
        let body = b"\xEF\xBB\xBFdata: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n";
        assert_eq!(answer(body, 1).unwrap()["id"], json!(1));
        // Only the first one: one later on is part of its line.
        let body = b"\xEF\xBB\xBF\n\xEF\xBB\xBFdata: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n";
        assert!(messages(body).unwrap().is_empty());
    }

    #[test]
    fn a_stream_that_ends_mid_event_is_an_error() {
        let whole = "data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}";
        // The last event has no blank line after it, or its last line is not ended,
        // or a later event is cut: the spec discards the rest, the answer is cut short.
        for body in [
            format!("{whole}\n"),
            format!("{whole}\r"),
            whole.to_owned(),
            format!("{whole}\n\ndata: {{\"jsonrpc\": \"2.0\", \"method\": \"note\"}}\n"),
            format!("{whole}\n\n: a comment cut short"),
            // The old unit test's body, which ended so.
            "data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n: comment\ndata: not json\n"
                .to_owned(),
        ] {
            let e = answer(body.as_bytes(), 1).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Protocol, "{body:?}: {e}");
            assert!(e.to_string().contains("ended mid-event"), "{body:?}: {e}");
        }
        let e = answer(whole.as_bytes(), 1).unwrap_err();
        assert!(e.to_string().contains("its data so far: {"), "{e}");
    }

    #[test]
    fn a_stream_without_the_answer_is_an_error() {
        // It ended (well-formed) before the response to the request came.
        let body = b"event: message\ndata: {\"jsonrpc\": \"2.0\", \"method\": \"note\"}\n\n";
        let e = answer(body, 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds no answer to the tools/call request"),
            "{e}"
        );
        assert!(answer(b"", 1).is_err());
        assert!(answer(b": only a comment\n\n", 1).is_err());
    }

    #[test]
    fn a_stream_over_the_limit_is_refused() {
        let body = b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n";
        let e = event_stream_answer(body, 10, 1, "tools/call", "http://h/mcp").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::TooLarge, "{e}");
        let limit = body.len() as u64;
        assert!(event_stream_answer(body, limit, 1, "tools/call", "http://h/mcp").is_ok());
    }
}
