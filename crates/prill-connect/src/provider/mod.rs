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
mod errors;
pub mod huggingface;
mod limits;
pub mod ollama;
pub mod openai;
mod settings;
pub mod sse;
pub mod transport;

use serde_json::Value;

pub use limits::Limits;
pub use prill_spec::{ProviderKind, infer_provider};
pub use settings::{ANTHROPIC_AUTH_TOKEN, AwsCredentials, ChatSettings, ProviderSettings, Secret};

pub use prill_target::model::{
    ChatMessage, ModelRequest, ModelResponse, ModelToolCall, Provider, RAW_EVENTS_KEPT, RawEvents,
    ResponseFormat, Role, Sampling, ToolDef, ToolOutput, ToolResult, unsupported,
};

use crate::error::ConnectError;

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

/// The id of the model's earlier `call`, which a provider that matches results to
/// calls by id needs sent back: its absence is an error.
pub(crate) fn call_id(provider: ProviderKind, call: &ModelToolCall) -> Result<&str, ConnectError> {
    call.id.as_deref().ok_or_else(|| {
        ConnectError::config(format!(
            "{}: the earlier call of tool `{}` has no id, and {} matches tool results to \
             calls by id; keep the id the model's answer gave the call",
            provider.name(),
            call.name,
            provider.name()
        ))
    })
}

/// The id of the call `result` answers, for a provider that matches them by id: its
/// absence is an error.
pub(crate) fn result_id(provider: ProviderKind, result: &ToolResult) -> Result<&str, ConnectError> {
    result.call_id.as_deref().ok_or_else(|| {
        ConnectError::config(format!(
            "{}: the result of tool `{}` names no call id, and {} matches tool results to \
             calls by id; give it the id of the call it answers",
            provider.name(),
            result.name,
            provider.name()
        ))
    })
}

/// A tool result as text, for a provider with no error flag (OpenAI-compatible,
/// Ollama): JSON serialized, and a failed tool's output behind `Error: `.
pub(crate) fn result_text(result: &ToolResult) -> String {
    let text = result.output.to_text();
    if result.is_error {
        format!("Error: {text}")
    } else {
        text
    }
}

/// A call's arguments as the object Anthropic, Bedrock and Ollama take back:
/// arguments that were not an object (a string the model sent that was not JSON) are
/// wrapped as `{"input": ...}`.
pub(crate) fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        other => serde_json::json!({"input": other}),
    }
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
    build_with_cache(kind, settings, options, limits, None)
}

/// As [`build`], answering requests at temperature 0 from the model response `cache`
/// (and keeping the provider's answers to them there), when there is one.
pub fn build_with_cache(
    kind: ProviderKind,
    settings: ProviderSettings,
    options: &crate::HttpOptions,
    limits: Limits,
    cache: Option<crate::cache::ModelCache>,
) -> Result<std::sync::Arc<dyn Provider>, ConnectError> {
    let transport = transport::Transport::new(kind, options, limits)?.with_cache(cache);
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
            id: None,
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
