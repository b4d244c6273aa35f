//! What a model is asked and what it answers: [`ModelRequest`], [`ModelResponse`], and
//! the [`Provider`] trait every model provider implements (the implementations, over
//! HTTP, are in `prill-connect`).

use std::fmt;
use std::time::Duration;

use prill_spec::ProviderKind;
use serde_json::Value;

use crate::BoxFuture;
use crate::error::ConnectError;
use crate::types::{Timings, TokenUsage};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool, answering a call the model made.
    Tool,
}

impl Role {
    /// `user`, `assistant` or `tool`.
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message of a conversation (system instructions travel apart, in
/// [`ModelRequest::system`]).
///
/// Each kind of turn carries exactly what it may: the user speaks text, the model
/// speaks text and/or asks for tools, and a tool answers one call. Providers put
/// these in their own shapes (an OpenAI `tool` message, an Anthropic `tool_result`
/// block in a user turn, a Bedrock `toolResult` block, an Ollama `tool` message).
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// The user's text.
    User(String),
    /// The model's turn: its text (may be empty) and the tools it asked for, in order.
    Assistant {
        /// What the model said.
        text: String,
        /// The tools it called; each call's `id` is what its result answers.
        tool_calls: Vec<ModelToolCall>,
    },
    /// A tool's answer to one call of the model's previous turn.
    ToolResult(ToolResult),
}

impl ChatMessage {
    /// A text turn of `role`: the user's text or the model's; a [`Role::Tool`] text is
    /// a tool result with no call id and no name (use [`ChatMessage::ToolResult`]).
    pub fn text(role: Role, content: impl Into<String>) -> ChatMessage {
        let content = content.into();
        match role {
            Role::User => ChatMessage::User(content),
            Role::Assistant => ChatMessage::assistant(content),
            Role::Tool => ChatMessage::ToolResult(ToolResult {
                call_id: None,
                name: String::new(),
                output: ToolOutput::Text(content),
                is_error: false,
            }),
        }
    }

    /// The user's text.
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::User(content.into())
    }

    /// The model's text, without tool calls.
    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage::Assistant {
            text: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// The model's turn that asked for `tool_calls` (with `text`, which may be empty).
    pub fn tool_calls(text: impl Into<String>, tool_calls: Vec<ModelToolCall>) -> ChatMessage {
        ChatMessage::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    /// Who speaks it.
    pub fn role(&self) -> Role {
        match self {
            ChatMessage::User(_) => Role::User,
            ChatMessage::Assistant { .. } => Role::Assistant,
            ChatMessage::ToolResult(_) => Role::Tool,
        }
    }

    /// Its text: the user's or the model's, or a tool's result as text (JSON
    /// serialized).
    pub fn content(&self) -> String {
        match self {
            ChatMessage::User(text) | ChatMessage::Assistant { text, .. } => text.clone(),
            ChatMessage::ToolResult(result) => result.output.to_text(),
        }
    }
}

/// A tool's answer to one call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call it answers ([`ModelToolCall::id`]); `None` only where the
    /// provider gives calls no id (Ollama, which matches results to calls by order and
    /// by `name`). The other providers refuse a result without one.
    pub call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// What the tool returned.
    pub output: ToolOutput,
    /// Whether the tool failed and `output` says why.
    pub is_error: bool,
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A JSON value (sent as JSON where the provider takes it, else serialized).
    Json(Value),
    /// Plain text.
    Text(String),
}

impl ToolOutput {
    /// The output as text: a text as it is, JSON serialized.
    pub fn to_text(&self) -> String {
        match self {
            ToolOutput::Json(value) => value.to_string(),
            ToolOutput::Text(text) => text.clone(),
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments; a bare tool name gets `{"type": "object"}`.
    pub parameters: Value,
}

/// Sampling parameters; `None` leaves the provider's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sampling {
    /// Temperature.
    pub temperature: Option<f64>,
    /// The most output tokens.
    pub max_tokens: Option<u64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-K sampling.
    pub top_k: Option<u64>,
    /// Stop sequences.
    pub stop_sequences: Vec<String>,
    /// A seed, where the provider supports one.
    pub seed: Option<i64>,
}

impl Sampling {
    /// The parameters `model`, served by `kind`, takes (by
    /// [`prill_spec::model::family::traits`]), and a note for each one left out: a
    /// reasoning model's `temperature` and `top_p`, the sampling parameters newer Claude
    /// models refuse, and `top_p` where only one sampler may be set (`temperature` is
    /// kept). Parameters the provider has no name for at all stay, for the provider to
    /// refuse by name.
    pub fn fit(&self, kind: ProviderKind, model: &str) -> (Sampling, Vec<String>) {
        use prill_spec::model::family::{Temperature, traits};
        let traits = traits(kind, model);
        let mut sampling = self.clone();
        let mut notes = Vec::new();
        if let Some(t) = sampling.temperature {
            let why = match traits.temperature {
                Temperature::Accepted => None,
                Temperature::Fixed => {
                    Some("is a reasoning model and takes only its default temperature, 1")
                }
                Temperature::Refused => Some("does not take temperature"),
            };
            if let Some(why) = why {
                sampling.temperature = None;
                notes.push(format!("temperature {t} not sent: {model} {why}"));
            }
        }
        if let Some(p) = sampling.top_p {
            if !traits.top_p {
                sampling.top_p = None;
                notes.push(format!("top_p {p} not sent: {model} does not take top_p"));
            } else if traits.one_sampler && sampling.temperature.is_some() {
                sampling.top_p = None;
                notes.push(format!(
                    "top_p {p} not sent: {model} takes temperature or top_p, not both; temperature was kept"
                ));
            }
        }
        if let Some(k) = sampling.top_k
            && !traits.top_k
            && traits.temperature == Temperature::Refused
        {
            sampling.top_k = None;
            notes.push(format!("top_k {k} not sent: {model} does not take top_k"));
        }
        (sampling, notes)
    }
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelRequest {
    /// The model's name, as the provider knows it.
    pub model: String,
    /// System instructions (the spec's `system_prompt`, system messages, and the
    /// rendered `context`).
    pub system: Option<String>,
    /// The conversation; the last message is the user's.
    pub messages: Vec<ChatMessage>,
    /// Tools offered.
    pub tools: Vec<ToolDef>,
    /// Sampling parameters.
    pub sampling: Sampling,
    /// A limit on the whole call, retries included.
    pub timeout: Option<Duration>,
    /// Ask for an answer of this shape, in the provider's structured-output mode where
    /// it has one; `None` for free text.
    pub response_format: Option<ResponseFormat>,
}

/// A structured answer: a JSON object matching `schema`, named `name`.
///
/// Providers use their own mode: OpenAI-compatible `response_format` with a JSON
/// schema, Anthropic and Bedrock a forced tool of that name, Ollama `format`. The JSON
/// comes back as the response text (from a forced tool: its input, serialized).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFormat {
    /// A short name for the shape, e.g. `verdict`.
    pub name: String,
    /// The JSON Schema of the object.
    pub schema: Value,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelToolCall {
    /// The provider's id for the call, which its result answers: OpenAI's
    /// `tool_calls[].id`, Anthropic's `tool_use.id`, Bedrock's `toolUse.toolUseId`.
    /// Ollama gives none (`None`); its results are matched to calls by order and name.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Its arguments, as JSON (a string the model sent that is not JSON stays a string).
    pub arguments: Value,
}

/// What a model answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResponse {
    /// The output text (all text parts, joined).
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ModelToolCall>,
    /// Token usage as the provider reported it.
    pub usage: Option<TokenUsage>,
    /// Time to the first token (`first_byte`) and to the end.
    pub timings: Timings,
    /// Why the model stopped, in the provider's words (`stop`, `length`,
    /// `max_tokens`, `content_filter`, `refusal`, `guardrail_intervened`, ...).
    pub stop_reason: Option<String>,
    /// What the provider changed about the request so that the model would take it
    /// (a sampling parameter the model refuses, not sent; consecutive turns of one role,
    /// merged), in words for reports.
    pub notes: Vec<String>,
    /// Whether `text` is the model's refusal (OpenAI's `refusal`, a `refusal` stop
    /// reason) rather than an answer.
    pub refusal: bool,
    /// Raw response bodies or stream events, for reports: a whole answer's body; of a
    /// stream, only the first event and the last few (at most [`RAW_EVENTS_KEPT`] in
    /// all), never every chunk. Kept as the provider's text where it read them without
    /// a `Value`, and parsed only when asked for ([`RawEvents::values`]).
    pub raw: RawEvents,
    /// How many bodies or stream events the answer came in (`raw` keeps at most
    /// [`RAW_EVENTS_KEPT`] of them).
    pub events: u64,
    /// Whether the answer came from the model response cache (`[cache] models`)
    /// rather than from the provider: it cost no tokens.
    pub cached: bool,
}

impl ModelResponse {
    /// Whether the answer was cut short by a token limit (stop reason `length`,
    /// `max_tokens` or `model_context_window_exceeded`).
    pub fn truncated(&self) -> bool {
        matches!(
            self.stop_reason.as_deref(),
            Some("length" | "max_tokens" | "model_context_window_exceeded")
        )
    }
}

/// How many raw events a [`ModelResponse`] keeps at most: the first and the last three.
pub const RAW_EVENTS_KEPT: usize = 4;

/// A stream's raw events as an answer keeps them: the first (which names the model
/// and the message), the last few (which carry the finish reason and usage), and how
/// many there were. Memory stays bounded however long the stream is.
///
/// An event may be kept as the JSON text it came as ([`RawEvents::push_text`]) and
/// parsed only if it is still kept at the end: a provider that reads the common events
/// without building a `Value` does not build one for each event either.
#[derive(Debug, Clone, Default)]
pub struct RawEvents {
    first: Option<Raw>,
    last: std::collections::VecDeque<Raw>,
    count: u64,
}

/// One kept event.
#[derive(Debug, Clone)]
enum Raw {
    Parsed(Value),
    /// JSON text, known to be valid.
    Text(Box<str>),
}

impl Raw {
    fn value(&self) -> Value {
        match self {
            Raw::Parsed(value) => value.clone(),
            Raw::Text(text) => Raw::parse(text),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Raw::Parsed(value) => value,
            Raw::Text(text) => Raw::parse(&text),
        }
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    }
}

impl RawEvents {
    /// The events of an answer that came as the one body `value`.
    pub fn one(value: Value) -> RawEvents {
        let mut raw = RawEvents::default();
        raw.push(value);
        raw
    }

    /// How many events are kept (at most [`RAW_EVENTS_KEPT`]).
    pub fn kept(&self) -> usize {
        usize::from(self.first.is_some()) + self.last.len()
    }

    /// Takes in one event: it is kept while it is the first or among the last few.
    pub fn push(&mut self, event: Value) {
        self.keep(Raw::Parsed(event));
    }

    /// Takes in one event as its JSON text (which must be valid JSON), parsed only if
    /// it is kept to the end.
    pub fn push_text(&mut self, json: &str) {
        self.keep(Raw::Text(json.into()));
    }

    fn keep(&mut self, event: Raw) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(event);
            return;
        }
        if self.last.len() == RAW_EVENTS_KEPT - 1 {
            self.last.pop_front();
        }
        self.last.push_back(event);
    }

    /// How many events were taken in.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether no event was taken in.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The kept events, in order: the first, then the last few.
    pub fn into_vec(self) -> Vec<Value> {
        self.first
            .into_iter()
            .chain(self.last)
            .map(Raw::into_value)
            .collect()
    }

    /// The kept events, in order, as values (each kept as text is parsed now).
    pub fn values(&self) -> Vec<Value> {
        self.first
            .iter()
            .chain(&self.last)
            .map(Raw::value)
            .collect()
    }
}

impl PartialEq for RawEvents {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.values() == other.values()
    }
}

/// A model provider.
pub trait Provider: Send + Sync {
    /// Which provider this is.
    fn kind(&self) -> ProviderKind;

    /// Calls the model. A parameter the provider does not support is a
    /// [`ConnectError::Config`] that names it, never dropped silently.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>>;

    /// Whether the provider answers at all, found out within `limit` without spending
    /// tokens. Only a provider that has such a request (Ollama lists its models) can
    /// say yes; the default says no.
    fn reachable(&self, limit: Duration) -> BoxFuture<'_, bool> {
        let _ = limit;
        Box::pin(async { false })
    }
}

impl fmt::Debug for dyn Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Provider({})", self.kind().name())
    }
}

/// The error for a parameter `provider` does not support.
pub fn unsupported(provider: ProviderKind, parameter: &str) -> ConnectError {
    ConnectError::config(format!(
        "{} does not support `{parameter}`; remove it from model_config (or use another provider)",
        provider.name()
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sampling_fits_the_model() {
        let asked = Sampling {
            temperature: Some(0.2),
            top_p: Some(0.9),
            top_k: Some(40),
            max_tokens: Some(100),
            ..Sampling::default()
        };
        let (sent, notes) = asked.fit(ProviderKind::Openai, "gpt-5.1");
        assert_eq!((sent.temperature, sent.top_p), (None, None));
        assert_eq!(
            sent.top_k,
            Some(40),
            "left for the provider to refuse by name"
        );
        assert_eq!(sent.max_tokens, Some(100));
        assert!(notes[0].starts_with("temperature 0.2 not sent: gpt-5.1 is a reasoning model"));
        let (sent, notes) = asked.fit(ProviderKind::Anthropic, "claude-sonnet-4-5");
        assert_eq!(
            (sent.temperature, sent.top_p, sent.top_k),
            (Some(0.2), None, Some(40))
        );
        assert_eq!(notes.len(), 1);
        let (sent, notes) = asked.fit(ProviderKind::Anthropic, "claude-opus-4-7");
        assert_eq!(
            (sent.temperature, sent.top_p, sent.top_k),
            (None, None, None)
        );
        assert_eq!(notes.len(), 3);
        let (sent, notes) = asked.fit(ProviderKind::Ollama, "llama3.1:8b");
        assert_eq!((sent, notes.len()), (asked.clone(), 0));
    }

    #[test]
    fn messages_say_who_speaks_and_what() {
        assert_eq!(ChatMessage::text(Role::User, "hi"), ChatMessage::user("hi"));
        let said = ChatMessage::text(Role::Assistant, "ok");
        assert_eq!(
            (said.role(), said.content()),
            (Role::Assistant, "ok".into())
        );
        let call = ModelToolCall {
            id: Some("c1".into()),
            name: "search".into(),
            arguments: json!({"q": "x"}),
        };
        let asked = ChatMessage::tool_calls("", vec![call]);
        assert_eq!(asked.role().name(), "assistant");
        let result = ChatMessage::ToolResult(ToolResult {
            call_id: Some("c1".into()),
            name: "search".into(),
            output: ToolOutput::Json(json!({"hits": 2})),
            is_error: false,
        });
        assert_eq!(
            (result.role().name(), result.content()),
            ("tool", r#"{"hits":2}"#.into())
        );
    }

    #[test]
    fn raw_events_keep_the_first_and_the_last_few() {
        let mut raw = RawEvents::default();
        assert!(raw.is_empty());
        for i in 0..10_000 {
            raw.push(json!(i));
        }
        assert_eq!(raw.count(), 10_000);
        assert_eq!(
            raw.into_vec(),
            vec![json!(0), json!(9_997), json!(9_998), json!(9_999)]
        );
        let mut few = RawEvents::default();
        few.push(json!("a"));
        few.push(json!("b"));
        assert_eq!(few.count(), 2);
        assert_eq!(few.into_vec(), vec![json!("a"), json!("b")]);
    }
}
