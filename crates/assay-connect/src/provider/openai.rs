//! OpenAI Chat Completions, and every server that speaks it: vLLM, llama.cpp's server,
//! LM Studio, OpenRouter, Hugging Face's router and TGI ([`super::huggingface`]).
//!
//! A call is `POST {base}/chat/completions` with `Authorization: Bearer {key}`, streamed
//! (`"stream": true`, `"stream_options": {"include_usage": true}`) as server-sent events:
//! text deltas are joined, tool-call deltas gathered by `index` (their arguments arrive
//! as pieces of a JSON string, parsed once joined; a string that is not JSON stays a
//! string, an empty one is `{}`), the usage taken from the last chunk and the finish
//! reason from the chunk that has one. The stream is whole only when a `finish_reason`
//! came and it ended with `data: [DONE]`; a stream cut short is an error, never an
//! answer. A plain JSON body to a streaming request is read as the whole answer when it
//! is a chat completion; any other `Content-Type` (an HTML error page from a proxy,
//! say) is an error that names it.
//!
//! | [`ModelRequest`] | request |
//! |---|---|
//! | `system` | a first `{"role": "system"}` message |
//! | `messages` | `{"role", "content"}` messages |
//! | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]` |
//! | `temperature`, `top_p`, `seed` | the same names |
//! | `max_tokens` | `max_tokens`; `max_completion_tokens` for o-series models (`o1`, `o3-mini`, `openai/o4-mini`) |
//! | `stop_sequences` | `stop` |
//! | `top_k` | unsupported: an error naming it, before anything is sent |
//! | `response_format` | `"response_format": {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}`; the JSON is the message's text |
//!
//! The key is needed only by the provider's own hosts (`api.openai.com`; Hugging Face's
//! `*.huggingface.co` and `*.huggingface.cloud`): local servers take none, and then no
//! `Authorization` header is sent.

use std::sync::Arc;
use std::time::Instant;

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::transport::{Flow, Posted, Reading, SseEnd, SseEvent, Transport, not_an_answer};
use super::{
    ModelRequest, ModelResponse, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RawEvents, Secret, unsupported,
};
use crate::error::ConnectError;
use crate::server::{endpoint, label};
use crate::types::{Timings, TokenUsage};
use crate::{BoxFuture, with_timeout};

/// An OpenAI-compatible Chat Completions endpoint, as `kind` (openai or huggingface).
///
/// Cheap to clone; clones share the transport.
#[derive(Debug, Clone)]
pub struct ChatCompletions {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    kind: ProviderKind,
    settings: ProviderSettings,
    url: Url,
    peer: String,
    transport: Transport,
    stream: bool,
}

impl ChatCompletions {
    /// The endpoint `{settings.base_url}/chat/completions`, reached through `transport`.
    pub fn new(kind: ProviderKind, settings: ProviderSettings, transport: Transport) -> Self {
        let url = endpoint(&settings.base_url, &["chat/completions"]);
        let peer = format!("{} ({})", kind.name(), label(&url));
        ChatCompletions {
            inner: Arc::new(Inner {
                kind,
                settings,
                url,
                peer,
                transport,
                stream: true,
            }),
        }
    }

    /// Streams the answer (`true`, the default) or asks for it whole.
    pub fn streaming(self, stream: bool) -> Self {
        let inner = Arc::unwrap_or_clone(self.inner);
        ChatCompletions {
            inner: Arc::new(Inner { stream, ..inner }),
        }
    }

    /// The url calls go to.
    pub fn url(&self) -> &Url {
        &self.inner.url
    }

    /// The key, when the endpoint needs one; a hosted endpoint without a key is an
    /// error naming the variable to set.
    fn key(&self) -> Result<Option<&Secret>, ConnectError> {
        let settings = &self.inner.settings;
        if settings.api_key.is_some() || !needs_key(self.inner.kind, &settings.base_url) {
            return Ok(settings.api_key.as_ref());
        }
        settings.require_key().map(Some)
    }

    /// The request body for `request`; an unsupported parameter is an error naming it.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        request_body(self.inner.kind, request, self.inner.stream)
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ConnectError> {
        let body = self.body(request)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = self.key()? {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ConnectError::config(format!(
                        "the {} key holds characters that cannot be sent in a header",
                        self.inner.kind.name()
                    ))
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
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
        } = transport
            .post_json_held(self.inner.url.clone(), headers, &body, None, peer)
            .await?;
        let result = match Reading::of(self.inner.stream, response.headers()) {
            Reading::Events => {
                let mut answer = StreamedAnswer::default();
                let end = transport
                    .read_sse(response, started, peer, |event| answer.take(event, peer))
                    .await?;
                answer.finish(peer, end, started)
            }
            Reading::Whole => {
                let (value, first_byte) = transport.read_json(response, started, peer).await?;
                if self.inner.stream && value.get("error").is_none() && !value["choices"].is_array()
                {
                    return Err(not_an_answer(peer, "a chat completion", &value));
                }
                whole_answer(value, peer, first_byte, started)
            }
            Reading::Unexpected => Err(transport.unexpected_body(response, peer, accept).await),
        };
        drop(permit);
        result
    }
}

impl Provider for ChatCompletions {
    fn kind(&self) -> ProviderKind {
        self.inner.kind
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

/// OpenAI, or any OpenAI-compatible server at `OPENAI_BASE_URL`.
#[derive(Debug, Clone)]
pub struct OpenAi(ChatCompletions);

impl OpenAi {
    /// The provider for `settings`, reached through `transport`.
    pub fn new(settings: ProviderSettings, transport: Transport) -> OpenAi {
        OpenAi(ChatCompletions::new(
            ProviderKind::Openai,
            settings,
            transport,
        ))
    }

    /// Streams the answer (`true`, the default) or asks for it whole.
    pub fn streaming(self, stream: bool) -> OpenAi {
        OpenAi(self.0.streaming(stream))
    }

    /// The request body for `request`; an unsupported parameter is an error naming it.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        self.0.body(request)
    }
}

impl Provider for OpenAi {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        self.0.complete(request)
    }
}

/// Whether `kind`'s endpoint at `base` is a hosted one that needs a key.
fn needs_key(kind: ProviderKind, base: &Url) -> bool {
    let host = base.host_str().unwrap_or_default().to_ascii_lowercase();
    match kind {
        ProviderKind::Huggingface => {
            host == "huggingface.co"
                || host.ends_with(".huggingface.co")
                || host.ends_with(".huggingface.cloud")
        }
        _ => host == "api.openai.com",
    }
}

/// Whether `model` is an o-series reasoning model (`o1`, `o3-mini`, `openai/o4-mini`),
/// which takes `max_completion_tokens` instead of `max_tokens`.
pub fn o_series(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let mut chars = name.chars();
    matches!(chars.next(), Some('o' | 'O')) && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// The Chat Completions body for `request`.
pub fn request_body(
    kind: ProviderKind,
    request: &ModelRequest,
    stream: bool,
) -> Result<Value, ConnectError> {
    let sampling = &request.sampling;
    if sampling.top_k.is_some() {
        return Err(unsupported(kind, "top_k"));
    }
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(json!({"role": message.role.name(), "content": message.content}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                function.insert("name".into(), json!(tool.name));
                if let Some(description) = &tool.description {
                    function.insert("description".into(), json!(description));
                }
                function.insert("parameters".into(), tool.parameters.clone());
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(n) = sampling.max_tokens {
        let name = if o_series(&request.model) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(name.into(), json!(n));
    }
    if !sampling.stop_sequences.is_empty() {
        body.insert("stop".into(), json!(sampling.stop_sequences));
    }
    if let Some(seed) = sampling.seed {
        body.insert("seed".into(), json!(seed));
    }
    if let Some(format) = &request.response_format {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": format.name, "schema": format.schema, "strict": true}}),
        );
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Value::Object(body))
}

/// A tool call gathered from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The answer as the stream builds it.
#[derive(Debug, Default)]
struct StreamedAnswer {
    text: String,
    calls: Vec<PartialCall>,
    usage: Option<TokenUsage>,
    stop_reason: Option<String>,
    raw: RawEvents,
}

impl StreamedAnswer {
    /// Takes in one event.
    fn take(&mut self, event: SseEvent, peer: &str) -> Result<Flow, ConnectError> {
        if event.data.trim().is_empty() {
            return Ok(Flow::Continue);
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
            ConnectError::protocol(
                peer,
                format!(
                    "an event's data is not JSON ({e}): {}",
                    crate::error::cut(event.data.trim(), 120)
                ),
            )
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(stream_error(error, peer));
        }
        if let Some(usage) = usage_of(&chunk) {
            self.usage = Some(usage);
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            if choice["index"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                self.text.push_str(text);
            }
            let calls = match &delta["tool_calls"] {
                Value::Array(calls) => calls.iter().collect(),
                // Older TGI sends one call as an object.
                call @ Value::Object(_) => vec![call],
                _ => Vec::new(),
            };
            for call in calls {
                self.take_call(call);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.stop_reason = Some(reason.to_owned());
            }
        }
        self.raw.push(chunk);
        Ok(Flow::Continue)
    }

    /// Takes in one tool-call delta: found by `index`, or else by a new `id` (a delta
    /// with neither continues the last call). A name that comes again is not repeated.
    fn take_call(&mut self, call: &Value) {
        let id = call["id"].as_str().filter(|id| !id.is_empty());
        let index = match call["index"].as_u64() {
            Some(index) => index,
            None => match self.calls.last() {
                Some(last) if id.is_none() || id == last.id.as_deref() => last.index,
                Some(last) => last.index + 1,
                None => 0,
            },
        };
        let at = match self.calls.iter().position(|c| c.index == index) {
            Some(at) => at,
            None => {
                self.calls.push(PartialCall {
                    index,
                    id: id.map(str::to_owned),
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[at];
        if let Some(name) = call["function"]["name"].as_str()
            && name != partial.name
        {
            partial.name.push_str(name);
        }
        if let Some(arguments) = call["function"]["arguments"].as_str() {
            partial.arguments.push_str(arguments);
        }
    }

    fn finish(
        mut self,
        peer: &str,
        end: SseEnd,
        started: Instant,
    ) -> Result<ModelResponse, ConnectError> {
        if self.raw.is_empty() {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended without an answer",
            ));
        }
        if self.stop_reason.is_none() {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended before a `finish_reason`: the answer was cut short",
            ));
        }
        if !end.done {
            return Err(ConnectError::protocol(
                peer,
                "the stream ended without `data: [DONE]`: the answer may be cut short",
            ));
        }
        let first_byte = end.first_byte;
        self.calls.sort_by_key(|c| c.index);
        Ok(ModelResponse {
            refusal: false,
            notes: Vec::new(),
            text: self.text,
            tool_calls: self
                .calls
                .into_iter()
                .map(|c| ModelToolCall {
                    name: c.name,
                    arguments: arguments_of(&c.arguments),
                })
                .collect(),
            usage: self.usage,
            timings: Timings {
                first_byte,
                total: started.elapsed(),
            },
            stop_reason: self.stop_reason,
            events: self.raw.count(),
            raw: self.raw.into_vec(),
        })
    }
}

/// An answer asked for whole.
fn whole_answer(
    value: Value,
    peer: &str,
    first_byte: Option<std::time::Duration>,
    started: Instant,
) -> Result<ModelResponse, ConnectError> {
    if let Some(error) = value.get("error") {
        return Err(stream_error(error, peer));
    }
    let Some(choice) = value["choices"].as_array().and_then(|c| c.first()) else {
        return Err(ConnectError::protocol(peer, "the answer has no `choices`"));
    };
    let message = &choice["message"];
    let tool_calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|call| ModelToolCall {
            name: call["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            arguments: match &call["function"]["arguments"] {
                Value::String(text) => arguments_of(text),
                Value::Null => json!({}),
                other => other.clone(),
            },
        })
        .collect();
    Ok(ModelResponse {
        refusal: false,
        notes: Vec::new(),
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        usage: usage_of(&value),
        timings: Timings {
            first_byte,
            total: started.elapsed(),
        },
        stop_reason: choice["finish_reason"].as_str().map(str::to_owned),
        raw: vec![value],
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

/// The usage of a chunk or a completion, when it has one.
fn usage_of(value: &Value) -> Option<TokenUsage> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    Some(TokenUsage {
        reasoning: None,
        input: usage["prompt_tokens"].as_u64(),
        output: usage["completion_tokens"].as_u64(),
    })
}

/// An error the server reported in a 200 body or in the stream.
fn stream_error(error: &Value, peer: &str) -> ConnectError {
    let message = error["message"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| error.as_str().map(str::to_owned))
        .unwrap_or_else(|| error.to_string());
    ConnectError::protocol(
        peer,
        format!(
            "the server reported an error: {}",
            crate::error::cut(&message, 300)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ChatMessage, Role, Sampling, ToolDef};

    fn request() -> ModelRequest {
        ModelRequest {
            model: "gpt-4o-mini".into(),
            system: Some("be brief".into()),
            messages: vec![ChatMessage {
                role: Role::User,
                content: "hi".into(),
            }],
            tools: vec![ToolDef {
                name: "lookup".into(),
                description: None,
                parameters: json!({"type": "object"}),
            }],
            sampling: Sampling::default(),
            timeout: None,
            response_format: None,
        }
    }

    #[test]
    fn o_series_takes_max_completion_tokens() {
        let mut r = request();
        r.sampling.max_tokens = Some(10);
        let body = request_body(ProviderKind::Openai, &r, false).unwrap();
        assert_eq!(body["max_tokens"], 10);
        r.model = "o3-mini".into();
        let body = request_body(ProviderKind::Openai, &r, false).unwrap();
        assert_eq!(body["max_completion_tokens"], 10);
        assert!(body.get("max_tokens").is_none());
        assert!(o_series("openai/o4-mini") && !o_series("gpt-4o") && !o_series("omni"));
    }

    #[test]
    fn tools_without_description_omit_it() {
        let body = request_body(ProviderKind::Openai, &request(), true).unwrap();
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}])
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }

    #[test]
    fn response_format_is_a_strict_json_schema() {
        let mut r = request();
        r.response_format = Some(crate::provider::ResponseFormat {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body(ProviderKind::Huggingface, &r, false).unwrap();
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "verdict",
                "schema": {"type": "object"}, "strict": true}})
        );
    }

    #[test]
    fn tool_call_deltas_without_index_or_with_repeated_names() {
        let mut answer = StreamedAnswer::default();
        let deltas = [
            json!({"id": "a", "function": {"name": "f", "arguments": "{\"x\""}}),
            json!({"function": {"name": "f", "arguments": ":1}"}}),
            json!({"id": "b", "function": {"name": "g", "arguments": ""}}),
        ];
        for call in &deltas {
            answer.take_call(call);
        }
        let end = SseEnd {
            first_byte: None,
            done: true,
        };
        let r = answer.finish("p", end, Instant::now());
        assert!(r.is_err(), "no chunk was taken");
        let mut answer = StreamedAnswer::default();
        for call in &deltas {
            answer.take_call(call);
        }
        answer.raw.push(json!({}));
        answer.stop_reason = Some("tool_calls".into());
        let r = answer.finish("p", end, Instant::now()).unwrap();
        assert_eq!(
            r.tool_calls,
            vec![
                ModelToolCall {
                    name: "f".into(),
                    arguments: json!({"x": 1})
                },
                ModelToolCall {
                    name: "g".into(),
                    arguments: json!({})
                },
            ]
        );
    }

    #[test]
    fn arguments_parse_or_stay_strings() {
        assert_eq!(arguments_of("{\"a\":1}"), json!({"a": 1}));
        assert_eq!(arguments_of("not json"), json!("not json"));
        assert_eq!(arguments_of(""), json!({}));
    }

    #[test]
    fn hosted_endpoints_need_keys() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(needs_key(
            ProviderKind::Openai,
            &u("https://api.openai.com/v1")
        ));
        assert!(!needs_key(
            ProviderKind::Openai,
            &u("http://localhost:8000/v1")
        ));
        assert!(needs_key(
            ProviderKind::Huggingface,
            &u("https://router.huggingface.co/v1")
        ));
        assert!(needs_key(
            ProviderKind::Huggingface,
            &u("https://x.us-east-1.aws.endpoints.huggingface.cloud/v1")
        ));
        assert!(!needs_key(
            ProviderKind::Huggingface,
            &u("http://tgi:8080/v1")
        ));
    }
}
