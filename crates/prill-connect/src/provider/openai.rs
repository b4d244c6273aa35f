//! OpenAI Chat Completions, and every server that speaks it: Azure OpenAI, vLLM,
//! llama.cpp's server, LM Studio, OpenRouter, Hugging Face's router and TGI
//! ([`super::huggingface`]).
//!
//! A call is `POST {base}/chat/completions` (Azure: see below), streamed
//! (`"stream": true`, `"stream_options": {"include_usage": true}`) as server-sent events:
//! text deltas are joined, refusal deltas too, tool-call deltas gathered by `index`
//! (their arguments arrive as pieces of a JSON string, parsed once joined; a string that
//! is not JSON stays a string, an empty one is `{}`), the usage taken from the last chunk
//! and the finish reason from the chunk that has one. The stream is whole only when a
//! `finish_reason` came and it ended with `data: [DONE]`; a stream cut short is an
//! error, never an answer. A plain JSON body to a streaming request is read as the whole
//! answer when it is a chat completion; any other `Content-Type` (an HTML error page
//! from a proxy, say) is an error that names it.
//!
//! | [`ModelRequest`] | request |
//! |---|---|
//! | `system` | a first `{"role": "system"}` message |
//! | `messages` | `{"role", "content"}` messages |
//! | `tools` | `[{"type": "function", "function": {"name", "description", "parameters"}}]` |
//! | `sampling` | first fitted to the model ([`crate::provider::Sampling::fit`]): a reasoning model's `temperature` and `top_p` are left out, each with a note in [`ModelResponse::notes`] |
//! | `temperature`, `top_p`, `seed` | the same names |
//! | `max_tokens` | `max_completion_tokens` to `api.openai.com`, to Azure and to reasoning models anywhere; `max_tokens` to other servers; `max_tokens_field` in `prill.toml` overrides |
//! | `stop_sequences` | `stop` |
//! | `top_k` | unsupported: an error naming it, before anything is sent |
//! | `response_format` | `"response_format": {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}`; TGI: `{"type": "json", "value": schema}`; the JSON is the message's text |
//!
//! | answer | [`ModelResponse`] |
//! |---|---|
//! | `content` | `text` |
//! | `refusal` (streamed or whole) | `text`, with `refusal: true` |
//! | `finish_reason` | `stop_reason`, as sent (`stop`, `length`, `tool_calls`, `content_filter`) |
//! | `usage.prompt_tokens`, `completion_tokens`, `completion_tokens_details.reasoning_tokens` | `usage.input`, `output`, `reasoning` |
//!
//! The key goes as `Authorization: Bearer`, and is needed only by the provider's own
//! hosts (`api.openai.com`, Azure's; Hugging Face's `*.huggingface.co` and
//! `*.huggingface.cloud`): local servers take none, and then no `Authorization` header
//! is sent. `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` go as `OpenAI-Organization` and
//! `OpenAI-Project`. An Azure OpenAI resource (`*.openai.azure.com`,
//! `*.cognitiveservices.azure.com`, `*.services.ai.azure.com`) gets the key as
//! `api-key`, and the url `{resource}/openai/deployments/{model}/chat/completions?api-version=`
//! when an `api-version` is set, else its v1 API's `{resource}/openai/v1/chat/completions`
//! (`request.rs`).

use std::sync::Arc;
use std::time::Instant;

use reqwest::Url;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde_json::{Value, json};

pub(crate) mod request;
use request::Shape;

use super::transport::{Flow, Posted, Reading, SseEnd, SseEvent, Transport, not_an_answer};
use super::{
    ModelRequest, ModelResponse, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RawEvents, Secret,
};
use crate::error::ConnectError;
use crate::server::label;
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
    settings: ProviderSettings,
    shape: Shape,
    peer: String,
    transport: Transport,
    stream: bool,
}

impl ChatCompletions {
    /// The endpoint of `settings` (`{base_url}/chat/completions`, or Azure's forms),
    /// reached through `transport`.
    pub fn new(kind: ProviderKind, settings: ProviderSettings, transport: Transport) -> Self {
        // A refused key names the variable it came from (Azure's, or prill.toml's).
        let transport = match &settings.key_source {
            Some(source) => transport.with_key_env(Some(source.clone())),
            None => transport,
        };
        let shape = Shape::of(kind, &settings);
        let peer = format!("{} ({})", kind.name(), label(&settings.base_url));
        ChatCompletions {
            inner: Arc::new(Inner {
                settings,
                shape,
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

    /// The url a call for `model` goes to (on Azure, the deployment is the model).
    pub fn url(&self, model: &str) -> Result<Url, ConnectError> {
        self.inner.shape.url(model)
    }

    /// The key, when the endpoint needs one; a hosted endpoint without a key is an
    /// error naming the variable to set.
    fn key(&self) -> Result<Option<&Secret>, ConnectError> {
        let settings = &self.inner.settings;
        if settings.api_key.is_some() || !needs_key(&self.inner.shape) {
            return Ok(settings.api_key.as_ref());
        }
        settings.require_key().map(Some)
    }

    /// The request body for `request`; an unsupported parameter is an error naming it.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        Ok(self.inner.shape.body(request, self.inner.stream)?.0)
    }

    /// The url, headers and body a call for `request` sends, without sending it (a
    /// dry run): the key's header is marked sensitive, so `Debug` does not show it.
    pub fn prepared(
        &self,
        request: &ModelRequest,
    ) -> Result<(Url, HeaderMap, Value), ConnectError> {
        let body = self.body(request)?;
        let headers = self.inner.shape.auth_headers(self.key()?)?;
        Ok((self.url(&request.model)?, headers, body))
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ConnectError> {
        let (body, notes) = self.inner.shape.body(request, self.inner.stream)?;
        let mut headers = self.inner.shape.auth_headers(self.key()?)?;
        let accept = if self.inner.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let transport = &self.inner.transport;
        let peer = self.inner.peer.as_str();
        let url = self.url(&request.model)?;
        let Posted {
            response,
            started,
            permit,
            cached,
            pending,
        } = transport
            .post_json_held(url, headers, &body, None, peer)
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
        if result.is_ok() {
            pending.keep();
        }
        result.map(|response| ModelResponse {
            notes,
            cached,
            ..response
        })
    }
}

impl Provider for ChatCompletions {
    fn kind(&self) -> ProviderKind {
        self.inner.shape.kind
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

    /// The url, headers and body a call for `request` sends, without sending it.
    pub fn prepared(
        &self,
        request: &ModelRequest,
    ) -> Result<(Url, HeaderMap, Value), ConnectError> {
        self.0.prepared(request)
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

/// Whether the endpoint is a hosted one that needs a key: OpenAI's own host, an Azure
/// resource, Hugging Face's hosts (`*.huggingface.co`, `*.huggingface.cloud`).
fn needs_key(shape: &Shape) -> bool {
    let host = shape
        .base
        .host_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match shape.kind {
        ProviderKind::Huggingface => {
            host == "huggingface.co"
                || host.ends_with(".huggingface.co")
                || host.ends_with(".huggingface.cloud")
        }
        _ => shape.openai_host || shape.azure,
    }
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
    refusal: String,
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
        if self.take_plain(&event.data) {
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
            if let Some(text) = delta["refusal"].as_str() {
                self.refusal.push_str(text);
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

    /// Takes in an event that holds only text deltas and finish reasons (no error,
    /// usage or tool call): most of a stream. It is read into borrowed fields rather
    /// than a `Value`, and kept raw as its text. `false` (nothing taken) sends every
    /// other event, and anything of an unexpected type, the general way.
    fn take_plain(&mut self, data: &str) -> bool {
        let Ok(chunk) = serde_json::from_str::<PlainChunk<'_>>(data) else {
            return false;
        };
        if chunk.error.0
            || chunk.usage.is_some()
            || chunk
                .choices
                .iter()
                .any(|c| c.delta.as_ref().is_some_and(|d| d.tool_calls.0))
        {
            return false;
        }
        for choice in &chunk.choices {
            if choice
                .index
                .as_ref()
                .and_then(serde_json::Number::as_u64)
                .unwrap_or(0)
                != 0
            {
                continue;
            }
            if let Some(delta) = &choice.delta {
                if let Some(text) = &delta.content {
                    self.text.push_str(text);
                }
                if let Some(text) = &delta.refusal {
                    self.refusal.push_str(text);
                }
            }
            if let Some(reason) = &choice.finish_reason {
                self.stop_reason = Some(reason.to_string());
            }
        }
        self.raw.push_text(data);
        true
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
        let (text, refusal) = with_refusal(self.text, self.refusal);
        Ok(ModelResponse {
            cached: false,
            refusal,
            notes: Vec::new(),
            text,
            tool_calls: self
                .calls
                .into_iter()
                .map(|c| ModelToolCall {
                    id: c.id,
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
            raw: self.raw,
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
            id: call["id"]
                .as_str()
                .filter(|id| !id.is_empty())
                .map(str::to_owned),
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
    let (text, refusal) = with_refusal(
        message["content"].as_str().unwrap_or_default().to_owned(),
        message["refusal"].as_str().unwrap_or_default().to_owned(),
    );
    Ok(ModelResponse {
        cached: false,
        refusal,
        notes: Vec::new(),
        text,
        tool_calls,
        usage: usage_of(&value),
        timings: Timings {
            first_byte,
            total: started.elapsed(),
        },
        stop_reason: choice["finish_reason"].as_str().map(str::to_owned),
        raw: RawEvents::one(value),
        events: 1,
    })
}

/// The text of an answer and whether it is a refusal: OpenAI sends a refusal in its
/// own field (`refusal`), with no `content`; it becomes the text, marked.
fn with_refusal(text: String, refusal: String) -> (String, bool) {
    match (refusal.is_empty(), text.is_empty()) {
        (true, _) => (text, false),
        (false, true) => (refusal, true),
        (false, false) => (format!("{text}{refusal}"), true),
    }
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
/// A streamed chunk as [`StreamedAnswer::take_plain`] reads it: the fields that
/// change the answer, borrowed from the event's text where they can be, and whether
/// the fields that need the general reading are there at all.
#[derive(serde::Deserialize)]
struct PlainChunk<'a> {
    #[serde(default)]
    error: Present,
    /// `null` on every chunk but the last when usage is asked for, which the general
    /// reading takes for no usage too.
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    choices: Vec<PlainChoice<'a>>,
}

/// One choice of a [`PlainChunk`].
#[derive(serde::Deserialize)]
struct PlainChoice<'a> {
    #[serde(default)]
    index: Option<serde_json::Number>,
    #[serde(default, borrow)]
    delta: Option<PlainDelta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

/// The delta of a [`PlainChoice`].
#[derive(serde::Deserialize)]
struct PlainDelta<'a> {
    #[serde(default, borrow)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    refusal: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Present,
}

/// Whether a field was there, whatever its value (`null` included).
#[derive(Default)]
struct Present(bool);

impl<'de> serde::Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

fn usage_of(value: &Value) -> Option<TokenUsage> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    Some(TokenUsage {
        reasoning: usage["completion_tokens_details"]["reasoning_tokens"].as_u64(),
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
    use prill_spec::model::config::{ChatApi, MaxTokensField, ProviderConfig};

    fn request() -> ModelRequest {
        ModelRequest {
            model: "gpt-4o-mini".into(),
            system: Some("be brief".into()),
            messages: vec![ChatMessage::text(Role::User, "hi")],
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

    /// The shape of `kind`'s endpoint at `base`, with `config`.
    fn shape(kind: ProviderKind, base: &str, config: Option<ProviderConfig>) -> Shape {
        let env = [(kind.endpoint_env().to_owned(), base.to_owned())].into();
        let settings = ProviderSettings::resolve(kind, &env, config.as_ref()).unwrap();
        Shape::of(kind, &settings)
    }

    fn body(shape: &Shape, r: &ModelRequest) -> Value {
        shape.body(r, false).unwrap().0
    }

    /// The token limit's name by host, model family and setting.
    #[test]
    fn the_token_limit_goes_under_the_name_each_endpoint_takes() {
        let mut r = request();
        r.sampling.max_tokens = Some(10);
        let openai = shape(ProviderKind::Openai, "https://api.openai.com/v1", None);
        let azure = shape(ProviderKind::Openai, "https://x.openai.azure.com", None);
        let vllm = shape(ProviderKind::Openai, "http://127.0.0.1:8000/v1", None);
        let forced = ProviderConfig {
            max_tokens_field: Some(MaxTokensField::MaxTokens),
            ..ProviderConfig::default()
        };
        let forced = shape(
            ProviderKind::Openai,
            "https://api.openai.com/v1",
            Some(forced),
        );
        let cases = [
            (&openai, "gpt-4o-mini", "max_completion_tokens"),
            (&openai, "gpt-5.1", "max_completion_tokens"),
            (&azure, "gpt-4o", "max_completion_tokens"),
            (&vllm, "meta-llama/Llama-3.1-8B-Instruct", "max_tokens"),
            (&vllm, "o3-mini", "max_completion_tokens"),
            (&vllm, "openai/gpt-5-mini", "max_completion_tokens"),
            (&vllm, "gpt-5-chat-latest", "max_tokens"),
            (&forced, "gpt-5", "max_tokens"),
        ];
        for (shape, model, want) in cases {
            r.model = model.into();
            let body = body(shape, &r);
            assert_eq!(body[want], 10, "{model} at {}", shape.base);
            let other = if want == "max_tokens" {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            assert!(body.get(other).is_none(), "{model} at {}", shape.base);
        }
    }

    #[test]
    fn tools_without_description_omit_it() {
        let vllm = shape(ProviderKind::Openai, "http://127.0.0.1:8000/v1", None);
        let (body, _) = vllm.body(&request(), true).unwrap();
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}])
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }

    /// The router takes OpenAI's spelling; TGI and Inference Endpoints their own.
    #[test]
    fn response_format_is_openai_s_or_tgi_s() {
        let mut r = request();
        r.tools.clear();
        r.response_format = Some(crate::provider::ResponseFormat {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        });
        let router = shape(
            ProviderKind::Huggingface,
            "https://router.huggingface.co/v1",
            None,
        );
        assert_eq!(
            body(&router, &r)["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "verdict",
                "schema": {"type": "object"}, "strict": true}})
        );
        let tgi = shape(
            ProviderKind::Huggingface,
            "https://x.endpoints.huggingface.cloud/v1",
            None,
        );
        let want = json!({"type": "json", "value": {"type": "object"}});
        assert_eq!(body(&tgi, &r)["response_format"], want);
        let local = shape(ProviderKind::Huggingface, "http://127.0.0.1:8080/v1", None);
        assert_eq!(body(&local, &r)["response_format"], want);
        let told = ProviderConfig {
            api: Some(ChatApi::Tgi),
            ..ProviderConfig::default()
        };
        let told = shape(
            ProviderKind::Huggingface,
            "https://router.huggingface.co/v1",
            Some(told),
        );
        assert_eq!(body(&told, &r)["response_format"], want);
    }

    /// Azure's deployment and v1 url forms, and the `api-version` they carry.
    #[test]
    fn azure_urls_follow_the_sdk_s_forms() {
        let versioned = ProviderConfig {
            api_version: Some("2024-10-21".into()),
            ..ProviderConfig::default()
        };
        let cases = [
            (
                "https://r.openai.azure.com",
                None,
                "https://r.openai.azure.com/openai/v1/chat/completions",
            ),
            (
                "https://r.openai.azure.com/openai/v1",
                None,
                "https://r.openai.azure.com/openai/v1/chat/completions",
            ),
            (
                "https://r.openai.azure.com/",
                Some(&versioned),
                "https://r.openai.azure.com/openai/deployments/my%20gpt/chat/completions?api-version=2024-10-21",
            ),
            (
                "https://r.cognitiveservices.azure.com/openai",
                Some(&versioned),
                "https://r.cognitiveservices.azure.com/openai/deployments/my%20gpt/chat/completions?api-version=2024-10-21",
            ),
            (
                "https://r.services.ai.azure.com/openai/deployments/d",
                Some(&versioned),
                "https://r.services.ai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
            ),
            (
                "https://r.openai.azure.com/openai/v1/",
                Some(&versioned),
                "https://r.openai.azure.com/openai/v1/chat/completions",
            ),
            (
                "https://api.openai.com/v1",
                Some(&versioned),
                "https://api.openai.com/v1/chat/completions",
            ),
        ];
        for (base, config, want) in cases {
            let shape = shape(ProviderKind::Openai, base, config.cloned());
            assert_eq!(shape.url("my gpt").unwrap().as_str(), want, "{base}");
        }
        let unversioned = shape(
            ProviderKind::Openai,
            "https://r.openai.azure.com/openai/deployments/d",
            None,
        );
        let e = unversioned.url("d").unwrap_err().to_string();
        assert!(
            e.contains("needs an api-version") && e.contains("OPENAI_API_VERSION"),
            "{e}"
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
                    id: Some("a".into()),
                    name: "f".into(),
                    arguments: json!({"x": 1})
                },
                ModelToolCall {
                    id: Some("b".into()),
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
        let cases = [
            (ProviderKind::Openai, "https://api.openai.com/v1", true),
            (ProviderKind::Openai, "https://r.openai.azure.com", true),
            (ProviderKind::Openai, "http://localhost:8000/v1", false),
            (
                ProviderKind::Huggingface,
                "https://router.huggingface.co/v1",
                true,
            ),
            (
                ProviderKind::Huggingface,
                "https://x.us-east-1.aws.endpoints.huggingface.cloud/v1",
                true,
            ),
            (ProviderKind::Huggingface, "http://tgi:8080/v1", false),
        ];
        for (kind, base, want) in cases {
            assert_eq!(needs_key(&shape(kind, base, None)), want, "{base}");
        }
    }
}
