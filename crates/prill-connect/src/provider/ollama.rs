//! Ollama's native chat API: `POST {host}/api/chat`, streamed as JSON lines.
//!
//! Each line is `{"message": {"role", "content", "tool_calls"?}, "done": false}`; the text
//! pieces are joined, tool calls arrive whole
//! (`message.tool_calls[].function.{name, arguments}`, the arguments an object), and the
//! last line (`"done": true`) carries `done_reason`, `prompt_eval_count` (input tokens)
//! and `eval_count` (output tokens). A line `{"error": "..."}` is the server giving up.
//!
//! | [`ModelRequest`] | request |
//! |---|---|
//! | `system` | a first `{"role": "system"}` message |
//! | `messages` | `{"role", "content"}` messages |
//! | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]` |
//! | `temperature`, `top_p`, `top_k`, `seed` | `options.temperature`, `.top_p`, `.top_k`, `.seed` |
//! | `max_tokens` | `options.num_predict` |
//! | `stop_sequences` | `options.stop` |
//! | `response_format` | `"format": <schema>` (Ollama takes a JSON schema there); the JSON is the message's text |
//!
//! Every sampling parameter is supported (the sampling goes through
//! [`Sampling::fit`](crate::provider::Sampling::fit) as every provider's does, and a
//! note for anything it leaves out lands in [`ModelResponse::notes`]). The last line's
//! `done_reason` (`stop`, `length`, `load`, `unload`) is the answer's `stop_reason`, so
//! an answer cut at `num_predict` is [`ModelResponse::truncated`]. Ollama needs no key; when `prill.toml` names
//! one (`api_key_env`, for a server behind an authenticating proxy) it is sent as a
//! bearer token.

use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::transport::{BodyKind, Flow, Posted, Transport, body_kind};
use super::{
    ChatMessage, ModelRequest, ModelResponse, ModelToolCall, Provider, ProviderKind,
    ProviderSettings, RawEvents, result_text, tool_input,
};
use crate::error::ConnectError;
use crate::server::{endpoint, label};
use crate::types::{Timings, TokenUsage};
use crate::{BoxFuture, with_timeout};

/// An Ollama server.
#[derive(Debug, Clone)]
pub struct Ollama {
    settings: ProviderSettings,
    url: Url,
    peer: String,
    transport: Transport,
    stream: bool,
}

impl Ollama {
    /// The provider for `settings` (the host from `OLLAMA_HOST`), reached through
    /// `transport`.
    pub fn new(settings: ProviderSettings, transport: Transport) -> Ollama {
        let url = endpoint(&settings.base_url, &["api/chat"]);
        let peer = format!("ollama ({})", label(&url));
        Ollama {
            settings,
            url,
            peer,
            transport,
            stream: true,
        }
    }

    /// Streams the answer (`true`, the default) or asks for it whole.
    pub fn streaming(self, stream: bool) -> Ollama {
        Ollama { stream, ..self }
    }

    /// The request body for `request`.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        Ok(request_body(request, self.stream))
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ConnectError> {
        let body = self.body(request)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.settings.api_key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ConnectError::config(
                        "the ollama key holds characters that cannot be sent in a header",
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let peer = self.peer.as_str();
        let Posted {
            response,
            started,
            permit,
            cached,
            pending,
        } = self
            .transport
            .post_json_held(self.url.clone(), headers, &body, None, peer)
            .await?;
        let transport = &self.transport;
        let mut answer = Answer::default();
        let first_byte = match (self.stream, body_kind(response.headers())) {
            // One JSON object is a stream of one line.
            (true, BodyKind::JsonLines | BodyKind::Json | BodyKind::Unlabelled) => {
                transport
                    .read_ndjson(response, started, peer, |line| answer.take(line, peer))
                    .await?
            }
            (false, BodyKind::Json | BodyKind::Unlabelled) => {
                let (value, first_byte) = transport.read_json(response, started, peer).await?;
                answer.take(value, peer)?;
                first_byte
            }
            (true, _) => {
                return Err(transport
                    .unexpected_body(response, peer, "application/x-ndjson")
                    .await);
            }
            (false, _) => {
                return Err(transport
                    .unexpected_body(response, peer, "application/json")
                    .await);
            }
        };
        drop(permit);
        let (_, notes) = request.sampling.fit(ProviderKind::Ollama, &request.model);
        let result = answer
            .finish(peer, first_byte, started)
            .map(|response| ModelResponse {
                notes,
                cached,
                ..response
            });
        if result.is_ok() {
            pending.keep();
        }
        result
    }
}

impl Provider for Ollama {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Ollama
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        Box::pin(with_timeout(
            &self.peer,
            self.transport.limit(request.timeout),
            self.call(request),
        ))
    }

    /// `GET /api/tags` answered 200 within `limit`, over the provider's own client
    /// (once, no retry).
    fn reachable(&self, limit: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let url = endpoint(&self.settings.base_url, &["api/tags"]);
            let get = self.transport.get_once(url, &self.peer);
            matches!(tokio::time::timeout(limit, get).await, Ok(Ok(r)) if r.status().is_success())
        })
    }
}

/// One turn in `/api/chat`'s shape: the model's tool calls as `tool_calls` with
/// `function: {name, arguments}` (the arguments an object), and a tool result as a
/// `tool` message with `tool_name`. Ollama gives calls no id: a result answers the call
/// of its name, in the order the calls came, so results go in the calls' order.
fn message_of(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
            json!({"role": "assistant", "content": text})
        }
        ChatMessage::Assistant { text, tool_calls } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| {
                    json!({"function": {
                        "name": call.name,
                        "arguments": tool_input(&call.arguments),
                    }})
                })
                .collect();
            json!({"role": "assistant", "content": text, "tool_calls": calls})
        }
        ChatMessage::ToolResult(result) => json!({
            "role": "tool",
            "content": result_text(result),
            "tool_name": result.name,
        }),
    }
}

/// The `/api/chat` body for `request`, with the sampling
/// [`Sampling::fit`](crate::provider::Sampling::fit) leaves for the model (Ollama takes
/// every parameter, so only a model's own refusals leave one out).
pub fn request_body(request: &ModelRequest, stream: bool) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(message_of(message));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(stream));
    if !request.tools.is_empty() {
        body.insert("tools".into(), super::openai::request::tools(request));
    }
    if let Some(format) = &request.response_format {
        body.insert("format".into(), format.schema.clone());
    }
    let (sampling, _) = request.sampling.fit(ProviderKind::Ollama, &request.model);
    let sampling = &sampling;
    let mut options = Map::new();
    if let Some(t) = sampling.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        options.insert("top_p".into(), json!(p));
    }
    if let Some(k) = sampling.top_k {
        options.insert("top_k".into(), json!(k));
    }
    if let Some(n) = sampling.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if !sampling.stop_sequences.is_empty() {
        options.insert("stop".into(), json!(sampling.stop_sequences));
    }
    if let Some(seed) = sampling.seed {
        options.insert("seed".into(), json!(seed));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    Value::Object(body)
}

/// The answer as the lines build it.
#[derive(Debug, Default)]
struct Answer {
    text: String,
    tool_calls: Vec<ModelToolCall>,
    usage: Option<TokenUsage>,
    stop_reason: Option<String>,
    done: bool,
    raw: RawEvents,
}

impl Answer {
    /// Takes in one line (or the whole answer).
    fn take(&mut self, line: Value, peer: &str) -> Result<Flow, ConnectError> {
        if let Some(error) = line.get("error") {
            let message = error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(ConnectError::protocol(
                peer,
                format!(
                    "the server reported an error: {}",
                    crate::error::cut(&message, 300)
                ),
            ));
        }
        let message = &line["message"];
        if let Some(text) = message["content"].as_str() {
            self.text.push_str(text);
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let function = &call["function"];
            let arguments = match &function["arguments"] {
                Value::String(text) => {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                }
                Value::Null => json!({}),
                other => other.clone(),
            };
            self.tool_calls.push(ModelToolCall {
                id: call["id"].as_str().map(str::to_owned),
                name: function["name"].as_str().unwrap_or_default().to_owned(),
                arguments,
            });
        }
        let done = line["done"].as_bool() == Some(true);
        if done {
            self.done = true;
            self.stop_reason = line["done_reason"].as_str().map(str::to_owned);
            let input = line["prompt_eval_count"].as_u64();
            let output = line["eval_count"].as_u64();
            if input.is_some() || output.is_some() {
                self.usage = Some(TokenUsage {
                    input,
                    output,
                    reasoning: None,
                });
            }
        }
        self.raw.push(line);
        Ok(if done { Flow::Stop } else { Flow::Continue })
    }

    fn finish(
        self,
        peer: &str,
        first_byte: Option<std::time::Duration>,
        started: Instant,
    ) -> Result<ModelResponse, ConnectError> {
        if !self.done {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended before its last line (`\"done\": true`)",
            ));
        }
        Ok(ModelResponse {
            cached: false,
            refusal: false,
            notes: Vec::new(),
            text: self.text,
            tool_calls: self.tool_calls,
            usage: self.usage,
            timings: Timings {
                first_byte,
                total: started.elapsed(),
            },
            stop_reason: self.stop_reason,
            events: self.raw.count(),
            raw: self.raw,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ChatMessage, Role, Sampling};

    #[test]
    fn sampling_goes_into_options() {
        let request = ModelRequest {
            model: "llama3.1:8b".into(),
            system: None,
            messages: vec![ChatMessage::text(Role::User, "hi")],
            tools: Vec::new(),
            sampling: Sampling {
                temperature: Some(0.5),
                max_tokens: Some(20),
                top_k: Some(4),
                ..Sampling::default()
            },
            timeout: None,
            response_format: None,
        };
        let body = request_body(&request, true);
        assert_eq!(
            body,
            json!({
                "model": "llama3.1:8b",
                "messages": [{"role": "user", "content": "hi"}],
                "stream": true,
                "options": {"temperature": 0.5, "top_k": 4, "num_predict": 20},
            })
        );
        let bare = ModelRequest {
            sampling: Sampling::default(),
            ..request
        };
        assert!(request_body(&bare, false).get("options").is_none());
        let structured = ModelRequest {
            response_format: Some(crate::provider::ResponseFormat {
                name: "verdict".into(),
                schema: json!({"type": "object"}),
            }),
            ..bare
        };
        assert_eq!(
            request_body(&structured, false)["format"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn a_stream_without_done_is_broken() {
        let mut answer = Answer::default();
        answer
            .take(json!({"message": {"content": "x"}, "done": false}), "p")
            .unwrap();
        let e = answer.finish("p", None, Instant::now()).unwrap_err();
        assert!(e.to_string().contains("done"), "{e}");
    }
}
