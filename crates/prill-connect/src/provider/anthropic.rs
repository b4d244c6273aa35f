//! Anthropic's Messages API.
//!
//! A call is `POST {base}/v1/messages` (`ANTHROPIC_BASE_URL` overrides the base) with
//! `x-api-key: {ANTHROPIC_API_KEY}` and/or, for gateways, `Authorization: Bearer
//! {ANTHROPIC_AUTH_TOKEN}` (both headers when both are set, as the official SDK sends
//! them), and `anthropic-version: 2023-06-01`, streamed
//! (`"stream": true`) as server-sent events: `message_start` gives the input tokens,
//! `content_block_start` opens a text or `tool_use` block (with its id and name),
//! `content_block_delta` adds a `text_delta` or an `input_json_delta` (the tool input's
//! JSON arrives in pieces, joined per block and parsed at `content_block_stop`; a string
//! that is not JSON stays a string, an empty one is `{}`), `message_delta` gives the
//! stop reason and the output tokens, and `message_stop` ends the answer. An `error`
//! event (an `overloaded_error` mid-stream, say) is an error, and so is a stream that
//! ends before `message_stop`. A plain JSON body to a streaming request is read as the
//! whole answer when it is a message (`"type": "message"`); any other `Content-Type` is
//! an error that names it.
//!
//! | [`ModelRequest`] | request |
//! |---|---|
//! | `system` | the top-level `system` (never a message) |
//! | `messages` | `{"role", "content"}` messages |
//! | `tools` | `[{"name", "description", "input_schema"}]` |
//! | `temperature`, `top_p`, `top_k`, `stop_sequences` | the same names, as [`Sampling::fit`](crate::provider::Sampling::fit) leaves them for the model (a note in [`ModelResponse::notes`] for each left out) |
//! | `max_tokens` | `max_tokens`, which the API requires: [`DEFAULT_MAX_TOKENS`] (1024) when the spec gives none |
//! | `seed` | not sent: the API has no seed (a seed is passed only where supported) |
//! | `response_format` | a forced tool: `{"name", "description": "Record the answer.", "input_schema"}` after the other tools, and `"tool_choice": {"type": "tool", "name"}` |
//!
//! The `stop_reason` is kept as the API says it (`end_turn`, `max_tokens`,
//! `stop_sequence`, `tool_use`, `pause_turn`, `refusal`,
//! `model_context_window_exceeded`); `refusal` marks the answer as one
//! ([`ModelResponse::refusal`]).
//!
//! The answer to a `response_format` is the forced tool call's input, serialized as
//! compact JSON, in [`ModelResponse::text`]; that call is not one of the tool calls.
//! The time to the first token ([`crate::Timings::first_byte`]) is measured to the
//! first content delta, not to `message_start`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

mod turns;

use super::settings::ANTHROPIC_AUTH_TOKEN;
use super::transport::{Flow, Posted, Reading, SseEvent, Transport, not_an_answer};
use super::{
    ModelRequest, ModelResponse, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RawEvents, forced_tool, take_forced,
};
use crate::error::{ConnectError, cut};
use crate::server::{endpoint, label};
use crate::types::{Timings, TokenUsage};
use crate::{BoxFuture, with_timeout};

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// The `max_tokens` sent when the spec gives none: the API requires one.
pub const DEFAULT_MAX_TOKENS: u64 = 1024;

/// Anthropic's Messages API.
///
/// Cheap to clone; clones share the transport.
#[derive(Debug, Clone)]
pub struct Anthropic {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    settings: ProviderSettings,
    url: Url,
    peer: String,
    transport: Transport,
    stream: bool,
}

impl Anthropic {
    /// The endpoint `{settings.base_url}/v1/messages`, reached through `transport`.
    pub fn new(settings: ProviderSettings, transport: Transport) -> Anthropic {
        let url = endpoint(&settings.base_url, &["v1/messages"]);
        let key_env = match (&settings.api_key, &settings.auth_token) {
            (Some(_), Some(_)) => "ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN",
            (None, Some(_)) => ANTHROPIC_AUTH_TOKEN,
            _ => "ANTHROPIC_API_KEY",
        };
        let transport = transport.with_key_env(Some(key_env));
        let peer = format!("anthropic ({})", label(&settings.base_url));
        Anthropic {
            inner: Arc::new(Inner {
                settings,
                url,
                peer,
                transport,
                stream: true,
            }),
        }
    }

    /// Streams the answer (`true`, the default) or asks for it whole.
    pub fn streaming(self, stream: bool) -> Anthropic {
        let inner = Arc::unwrap_or_clone(self.inner);
        Anthropic {
            inner: Arc::new(Inner { stream, ..inner }),
        }
    }

    /// The url calls go to.
    pub fn url(&self) -> &Url {
        &self.inner.url
    }

    /// The request body for `request`; a response format named like one of the tools is
    /// an error.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        request_body(request, self.inner.stream)
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ConnectError> {
        let mut headers = auth_headers(&self.inner.settings)?;
        let body = self.body(request)?;
        let (_, notes) = request
            .sampling
            .fit(ProviderKind::Anthropic, &request.model);
        let forced = request.response_format.as_ref().map(|f| f.name.as_str());
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        let accept = if self.inner.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let transport = &self.inner.transport;
        let peer = self.inner.peer.as_str();
        let Posted {
            response,
            started,
            permit,
            cached,
            pending,
        } = transport
            .post_json_held(self.inner.url.clone(), headers, &body, None, peer)
            .await?;
        let result = match Reading::of(self.inner.stream, response.headers()) {
            Reading::Events => {
                let mut answer = Streamed::new(started);
                let end = transport
                    .read_sse(response, started, peer, |event| answer.take(&event, peer))
                    .await?;
                answer.finish(peer, end.first_byte)
            }
            Reading::Whole => {
                let (value, first_byte) = transport.read_json(response, started, peer).await?;
                if self.inner.stream && !matches!(value["type"].as_str(), Some("message" | "error"))
                {
                    return Err(not_an_answer(peer, "a message", &value));
                }
                whole_answer(value, peer, first_byte, started)
            }
            Reading::Unexpected => Err(transport.unexpected_body(response, peer, accept).await),
        };
        let result = result.map(|mut r| {
            let (text, calls) = take_forced(forced, std::mem::take(&mut r.text), r.tool_calls);
            ModelResponse {
                refusal: r.stop_reason.as_deref() == Some("refusal"),
                notes,
                text,
                tool_calls: calls,
                cached,
                ..r
            }
        });
        drop(permit);
        if result.is_ok() {
            pending.keep();
        }
        result
    }
}

impl Provider for Anthropic {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        Box::pin(with_timeout(
            &self.inner.peer,
            self.inner.transport.limit(request.timeout),
            self.call(request),
        ))
    }
}

/// The key headers: `x-api-key` for `ANTHROPIC_API_KEY`, `Authorization: Bearer` for
/// `ANTHROPIC_AUTH_TOKEN`, both when both are set (as the official SDK sends them);
/// neither is an error that names both variables.
fn auth_headers(settings: &ProviderSettings) -> Result<HeaderMap, ConnectError> {
    let sensitive = |value: String, var: &str| {
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            ConnectError::config(format!(
                "the anthropic key ({var}) holds characters that cannot be sent in a header"
            ))
        })?;
        value.set_sensitive(true);
        Ok::<_, ConnectError>(value)
    };
    let mut headers = HeaderMap::new();
    if let Some(key) = &settings.api_key {
        let value = sensitive(key.expose().to_owned(), "ANTHROPIC_API_KEY")?;
        headers.insert(HeaderName::from_static("x-api-key"), value);
    }
    if let Some(token) = &settings.auth_token {
        let value = sensitive(format!("Bearer {}", token.expose()), ANTHROPIC_AUTH_TOKEN)?;
        headers.insert(AUTHORIZATION, value);
    }
    if headers.is_empty() {
        return Err(ConnectError::config(
            "anthropic needs a key: set ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN for a gateway that takes a bearer token",
        ));
    }
    Ok(headers)
}

/// The Messages body for `request`. The sampling is what
/// [`Sampling::fit`](crate::provider::Sampling::fit) leaves for the model (Claude 4.7
/// and later take no `temperature`, `top_p` or `top_k`; 4.1 to 4.6 one of `temperature`
/// and `top_p`); `seed` is left out (the API has none). A response format named like
/// one of the tools is an error.
pub fn request_body(request: &ModelRequest, stream: bool) -> Result<Value, ConnectError> {
    let forced = forced_tool(ProviderKind::Anthropic, request)?;
    let (sampling, _) = request
        .sampling
        .fit(ProviderKind::Anthropic, &request.model);
    let sampling = &sampling;
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "max_tokens".into(),
        json!(sampling.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    body.insert(
        "messages".into(),
        Value::Array(turns::messages(&request.messages)?),
    );
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = sampling.top_k {
        body.insert("top_k".into(), json!(k));
    }
    if !sampling.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(sampling.stop_sequences));
    }
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let mut t = Map::new();
            t.insert("name".into(), json!(tool.name));
            if let Some(description) = &tool.description {
                t.insert("description".into(), json!(description));
            }
            t.insert("input_schema".into(), tool.parameters.clone());
            Value::Object(t)
        })
        .collect();
    if let Some(format) = forced {
        tools.push(
            json!({"name": format.name, "description": "Record the answer.",
            "input_schema": format.schema}),
        );
        body.insert(
            "tool_choice".into(),
            json!({"type": "tool", "name": format.name}),
        );
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Ok(Value::Object(body))
}

/// One content block as the stream builds it.
#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: Option<String>,
        name: String,
        input: String,
    },
}

/// The answer as the stream builds it.
#[derive(Debug)]
struct Streamed {
    started: Instant,
    first_token: Option<Duration>,
    text: String,
    open: Vec<(u64, Block)>,
    calls: Vec<ModelToolCall>,
    usage: TokenUsage,
    stop_reason: Option<String>,
    began: bool,
    ended: bool,
    raw: RawEvents,
}

impl Streamed {
    fn new(started: Instant) -> Streamed {
        Streamed {
            started,
            first_token: None,
            text: String::new(),
            open: Vec::new(),
            calls: Vec::new(),
            usage: TokenUsage::default(),
            stop_reason: None,
            began: false,
            ended: false,
            raw: RawEvents::default(),
        }
    }

    /// Takes in one event.
    fn take(&mut self, event: &SseEvent, peer: &str) -> Result<Flow, ConnectError> {
        if event.data.trim().is_empty() {
            return Ok(Flow::Continue);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            ConnectError::protocol(
                peer,
                format!(
                    "an event's data is not JSON ({e}): {}",
                    cut(event.data.trim(), 120)
                ),
            )
        })?;
        let kind = data["type"]
            .as_str()
            .or(event.event.as_deref())
            .unwrap_or_default()
            .to_owned();
        let index = data["index"].as_u64().unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                self.began = true;
                self.add_usage(&data["message"]["usage"]);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                let open = match block["type"].as_str() {
                    Some("tool_use") => Block::ToolUse {
                        id: block["id"].as_str().map(str::to_owned),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        input: String::new(),
                    },
                    _ => {
                        // A text block may come with text already.
                        if let Some(text) = block["text"].as_str() {
                            self.text.push_str(text);
                        }
                        Block::Text
                    }
                };
                self.open.push((index, open));
            }
            "content_block_delta" => {
                self.first_token
                    .get_or_insert_with(|| self.started.elapsed());
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        self.text
                            .push_str(delta["text"].as_str().unwrap_or_default());
                    }
                    Some("input_json_delta") => {
                        if let Some((_, Block::ToolUse { input, .. })) =
                            self.open.iter_mut().find(|(i, _)| *i == index)
                        {
                            input.push_str(delta["partial_json"].as_str().unwrap_or_default());
                        }
                    }
                    // Thinking and signature deltas are not part of the answer.
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(at) = self.open.iter().position(|(i, _)| *i == index)
                    && let (_, Block::ToolUse { id, name, input }) = self.open.remove(at)
                {
                    self.calls.push(ModelToolCall {
                        id,
                        name,
                        arguments: arguments_of(&input),
                    });
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.add_usage(&data["usage"]);
            }
            "message_stop" => self.ended = true,
            "error" => return Err(reported_error(&data["error"], peer)),
            // `ping`, and event types added later.
            _ => {}
        }
        if kind != "ping" {
            self.raw.push(data);
        }
        Ok(if self.ended {
            Flow::Stop
        } else {
            Flow::Continue
        })
    }

    /// Takes the token counts a `usage` object has (later counts replace earlier ones:
    /// `message_delta`'s are cumulative).
    fn add_usage(&mut self, usage: &Value) {
        if let Some(n) = usage["input_tokens"].as_u64() {
            self.usage.input = Some(n);
        }
        if let Some(n) = usage["output_tokens"].as_u64() {
            self.usage.output = Some(n);
        }
    }

    fn finish(
        self,
        peer: &str,
        first_byte: Option<Duration>,
    ) -> Result<ModelResponse, ConnectError> {
        if !self.began {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended without a `message_start` event",
            ));
        }
        if !self.ended {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended before its `message_stop` event",
            ));
        }
        let usage = (self.usage != TokenUsage::default()).then_some(self.usage);
        Ok(ModelResponse {
            cached: false,
            refusal: false,
            notes: Vec::new(),
            text: self.text,
            tool_calls: self.calls,
            usage,
            timings: Timings {
                first_byte: self.first_token.or(first_byte),
                total: self.started.elapsed(),
            },
            stop_reason: self.stop_reason,
            events: self.raw.count(),
            raw: self.raw,
        })
    }
}

/// An answer asked for whole: `content` blocks, `stop_reason`, `usage`.
fn whole_answer(
    value: Value,
    peer: &str,
    first_byte: Option<Duration>,
    started: Instant,
) -> Result<ModelResponse, ConnectError> {
    if value["type"] == "error" {
        return Err(reported_error(&value["error"], peer));
    }
    let Some(content) = value["content"].as_array() else {
        return Err(ConnectError::protocol(peer, "the answer has no `content`"));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ModelToolCall {
                id: block["id"].as_str().map(str::to_owned),
                name: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => {}
        }
    }
    let usage = value
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| TokenUsage {
            reasoning: None,
            input: u["input_tokens"].as_u64(),
            output: u["output_tokens"].as_u64(),
        });
    Ok(ModelResponse {
        cached: false,
        refusal: false,
        notes: Vec::new(),
        text,
        tool_calls,
        usage,
        timings: Timings {
            first_byte,
            total: started.elapsed(),
        },
        stop_reason: value["stop_reason"].as_str().map(str::to_owned),
        raw: RawEvents::one(value),
        events: 1,
    })
}

/// The arguments of a tool call: the JSON they spell, a string when they are not JSON,
/// `{}` when empty.
fn arguments_of(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// An error the API reported in the stream: `{"type": ..., "message": ...}`.
fn reported_error(error: &Value, peer: &str) -> ConnectError {
    let kind = error["type"].as_str().unwrap_or("error");
    let message = error["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    ConnectError::protocol(
        peer,
        format!(
            "the server reported an error ({kind}): {}",
            cut(&message, 300)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ChatMessage, Role, Sampling, ToolDef};

    fn request() -> ModelRequest {
        ModelRequest {
            model: "claude-3-5-haiku-latest".into(),
            system: Some("be brief".into()),
            messages: vec![ChatMessage::text(Role::User, "hi")],
            tools: vec![ToolDef {
                name: "lookup".into(),
                description: Some("finds things".into()),
                parameters: json!({"type": "object", "properties": {}}),
            }],
            sampling: Sampling {
                seed: Some(7),
                ..Sampling::default()
            },
            timeout: None,
            response_format: None,
        }
    }

    #[test]
    fn body_maps_every_parameter_and_leaves_out_seed() {
        let mut r = request();
        r.sampling.temperature = Some(0.2);
        r.sampling.top_p = Some(0.9);
        r.sampling.top_k = Some(40);
        r.sampling.stop_sequences = vec!["END".into()];
        let body = request_body(&r, true).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-3-5-haiku-latest",
                "max_tokens": 1024,
                "system": "be brief",
                "messages": [{"role": "user", "content": "hi"}],
                "temperature": 0.2,
                "top_p": 0.9,
                "top_k": 40,
                "stop_sequences": ["END"],
                "tools": [{"name": "lookup", "description": "finds things",
                    "input_schema": {"type": "object", "properties": {}}}],
                "stream": true,
            })
        );
    }

    #[test]
    fn response_format_is_a_forced_tool_after_the_others() {
        let mut r = request();
        r.response_format = Some(crate::provider::ResponseFormat {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body(&r, false).unwrap();
        assert_eq!(
            body["tools"][1],
            json!({"name": "verdict",
            "description": "Record the answer.", "input_schema": {"type": "object"}})
        );
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "verdict"})
        );
        r.tools[0].name = "verdict".into();
        let e = request_body(&r, false).unwrap_err();
        assert!(e.to_string().contains("name of one of the tools"), "{e}");
    }

    #[test]
    fn stream_events_build_the_answer() {
        let started = Instant::now();
        let mut s = Streamed::new(started);
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "there"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ": 1}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
            json!({"type": "message_stop"}),
        ];
        let mut flows = Vec::new();
        for e in events {
            let event = SseEvent {
                event: e["type"].as_str().map(str::to_owned),
                data: e.to_string(),
                id: String::new(),
            };
            flows.push(s.take(&event, "p").unwrap());
        }
        assert_eq!(flows.last(), Some(&Flow::Stop));
        let r = s.finish("p", None).unwrap();
        assert_eq!(r.text, "Hi there");
        assert_eq!(
            r.tool_calls,
            vec![ModelToolCall {
                id: Some("t".into()),
                name: "f".into(),
                arguments: json!({"a": 1})
            }]
        );
        assert_eq!(
            r.usage,
            Some(TokenUsage {
                reasoning: None,
                input: Some(9),
                output: Some(12)
            })
        );
        assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
        assert!(r.timings.first_byte.is_some());
    }

    #[test]
    fn error_events_and_cut_streams_are_errors() {
        let mut s = Streamed::new(Instant::now());
        let event = SseEvent {
            event: Some("error".into()),
            data: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
            id: String::new(),
        };
        let e = s.take(&event, "p").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p broke the protocol: the server reported an error (overloaded_error): Overloaded"
        );
        let mut s = Streamed::new(Instant::now());
        let start = SseEvent {
            event: None,
            data: json!({"type": "message_start", "message": {}}).to_string(),
            id: String::new(),
        };
        s.take(&start, "p").unwrap();
        assert!(
            s.finish("p", None)
                .unwrap_err()
                .to_string()
                .contains("before its `message_stop`")
        );
    }
}
