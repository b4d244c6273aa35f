//! Model providers: one [`Provider`] trait, five implementations over reqwest
//! (OpenAI-compatible Chat Completions, Anthropic Messages, Ollama's `/api/chat`,
//! Hugging Face's OpenAI-compatible router and TGI, Bedrock Converse).
//!
//! A Sentinel test becomes a [`ModelRequest`]; every provider maps it onto its own API
//! and maps the answer back to a [`ModelResponse`]: the output text, the tool calls,
//! token usage, latency and time to first token (streaming where the provider can).
//!
//! Keys come from the environment and never appear in errors, logs or `Debug` output.

pub mod anthropic;
pub mod bedrock;
pub mod huggingface;
mod limits;
pub mod ollama;
pub mod openai;
mod settings;
pub mod transport;

use std::fmt;
use std::time::Duration;

use serde_json::Value;

pub use assay_spec::{ProviderKind, infer_provider};
pub use limits::Limits;
pub use settings::{AwsCredentials, ProviderSettings, Secret};

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
}

impl Role {
    /// `user` or `assistant`.
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a conversation (system instructions travel apart, in
/// [`ModelRequest::system`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
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

/// One call to a model.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct ModelToolCall {
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
    /// Why the model stopped, in the provider's words.
    pub stop_reason: Option<String>,
    /// The raw response bodies or stream events, for reports.
    pub raw: Vec<Value>,
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

/// The response format of `request` for a provider that asks for it with a forced tool
/// (Anthropic, Bedrock): an error when a tool of the request has its name already, since
/// the two could not be told apart.
pub(crate) fn forced_tool(
    provider: ProviderKind,
    request: &ModelRequest,
) -> Result<Option<&ResponseFormat>, ConnectError> {
    let Some(format) = &request.response_format else {
        return Ok(None);
    };
    if request.tools.iter().any(|t| t.name == format.name) {
        return Err(ConnectError::config(format!(
            "{}: the response format `{}` has the name of one of the tools; rename one of them",
            provider.name(),
            format.name
        )));
    }
    Ok(Some(format))
}

/// Takes the call of the forced tool `forced` out of `calls`: its input becomes the
/// text (serialized as compact JSON; input that was not JSON, kept as a string, as is),
/// the other calls stay. Without such a call, `text` and `calls` are left as they are.
pub(crate) fn take_forced(
    forced: Option<&str>,
    text: String,
    mut calls: Vec<ModelToolCall>,
) -> (String, Vec<ModelToolCall>) {
    let Some(at) = forced.and_then(|name| calls.iter().position(|c| c.name == name)) else {
        return (text, calls);
    };
    let call = calls.remove(at);
    let text = match call.arguments {
        Value::String(raw) => raw,
        other => other.to_string(),
    };
    (text, calls)
}

/// Builds the provider of `kind` from its settings, the connection options (TLS, retry)
/// and its limits. A missing key is reported by the first call, not here, so that every
/// provider can be built whatever keys the environment holds.
pub fn build(
    kind: ProviderKind,
    settings: ProviderSettings,
    options: &crate::HttpOptions,
    limits: Limits,
) -> Result<std::sync::Arc<dyn Provider>, ConnectError> {
    let transport = transport::Transport::new(kind, options, limits)?;
    Ok(match kind {
        ProviderKind::Openai => std::sync::Arc::new(openai::OpenAi::new(settings, transport)),
        ProviderKind::Anthropic => {
            std::sync::Arc::new(anthropic::Anthropic::new(settings, transport))
        }
        ProviderKind::Ollama => std::sync::Arc::new(ollama::Ollama::new(settings, transport)),
        ProviderKind::Huggingface => {
            std::sync::Arc::new(huggingface::HuggingFace::new(settings, transport))
        }
        ProviderKind::Bedrock => std::sync::Arc::new(bedrock::Bedrock::new(settings, transport)),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_forced_call_becomes_the_text() {
        let call = |name: &str, arguments: Value| ModelToolCall {
            name: name.into(),
            arguments,
        };
        let calls = vec![
            call("lookup", json!({"q": 1})),
            call("verdict", json!({"pass": true})),
        ];
        let (text, rest) = take_forced(Some("verdict"), String::new(), calls.clone());
        assert_eq!(text, r#"{"pass":true}"#);
        assert_eq!(rest, vec![call("lookup", json!({"q": 1}))]);
        let (text, rest) = take_forced(None, "hi".into(), calls.clone());
        assert_eq!((text.as_str(), rest.len()), ("hi", 2));
        let raw = vec![call("verdict", json!("not json"))];
        assert_eq!(
            take_forced(Some("verdict"), String::new(), raw).0,
            "not json"
        );
    }
}
