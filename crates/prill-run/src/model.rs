//! Sentinel cases: a plan case that targets a model becomes a [`ModelRequest`], and the
//! model's answer becomes the [`Response`] the assertions check.
//!
//! How the inputs map (every provider gets the same request; each maps it onto its own
//! API):
//!
//! - `system_prompt`, then every `system` message of `messages`, then `context`, are
//!   joined with blank lines into the system instructions. `context` is rendered as
//!   `Context:` followed by the object as pretty JSON in a ```` ```json ```` fence.
//! - `messages` (user and assistant) are the conversation, in order; `query` is a last
//!   user message after them.
//! - With no user or assistant message at all (only `system_prompt` or `context`), the
//!   rendered context is sent as the user message; with no context either, the case
//!   errors: a model needs something to answer.
//! - A tool given by name gets the schema `{"type": "object", "properties": {}}`; a
//!   ToolSpec's `parameters` are its schema.

use prill_check::{Response, TokenUsage, ToolCall};
use prill_spec::model::sentinel::{self, Tool};
use prill_spec::plan::{Case, Target};
use prill_target::model::{ChatMessage, ModelRequest, ModelResponse, Role, Sampling, ToolDef};
use serde_json::{Value, json};

/// Why a case gives no model request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The case tests an agent, not a model.
    #[error("not a model case")]
    NotAModelCase,
    /// The case has no interaction.
    #[error("the case sends nothing")]
    NothingSent,
    /// The inputs hold no message for the model.
    #[error("the inputs hold no message for the model: add `query` or `messages`")]
    NoMessage,
}

/// The request a model case sends, or why it cannot be built.
pub fn model_request(case: &Case) -> Result<ModelRequest, RequestError> {
    model_request_opening(case, None)
}

/// [`model_request`], with `opening` as the last user message in place of the case's
/// `query` when given (a simulated user's first message, for a case that has none).
pub(crate) fn model_request_opening(
    case: &Case,
    opening: Option<&str>,
) -> Result<ModelRequest, RequestError> {
    let Target::Model {
        model,
        tools,
        model_config,
        seed,
        ..
    } = &case.target
    else {
        return Err(RequestError::NotAModelCase);
    };
    let Some(step) = case.interactions.first() else {
        return Err(RequestError::NothingSent);
    };
    let input = &step.input;
    let mut system: Vec<String> = Vec::new();
    if let Some(prompt) = &input.system_prompt {
        system.push(prompt.to_string());
    }
    let mut messages = Vec::new();
    for m in &input.messages {
        match m.role {
            sentinel::Role::System => system.push(m.content.clone()),
            sentinel::Role::User => messages.push(ChatMessage::text(Role::User, m.content.clone())),
            sentinel::Role::Assistant => {
                messages.push(ChatMessage::text(Role::Assistant, m.content.clone()))
            }
        }
    }
    if let Some(query) = opening.or(input.text.as_deref()) {
        messages.push(ChatMessage::text(Role::User, query.to_owned()));
    }
    let context = input.context.as_deref().map(render_context);
    match (&context, messages.is_empty()) {
        (Some(context), true) => messages.push(ChatMessage::text(Role::User, context.clone())),
        (Some(context), false) => system.push(context.clone()),
        (None, true) => {
            return Err(RequestError::NoMessage);
        }
        (None, false) => {}
    }
    let config = model_config.clone().unwrap_or_default();
    Ok(ModelRequest {
        model: model.to_string(),
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        tools: tools.iter().map(tool_def).collect(),
        sampling: Sampling {
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            top_p: config.top_p,
            top_k: config.top_k,
            stop_sequences: config.stop_sequences.unwrap_or_default(),
            seed: *seed,
        },
        timeout: case.timeout,
        response_format: None,
    })
}

/// `Context:` and the object as pretty JSON in a fence.
pub fn render_context(context: &serde_json::Map<String, Value>) -> String {
    let pretty = serde_json::to_string_pretty(context).unwrap_or_default();
    format!("Context:\n```json\n{pretty}\n```")
}

fn tool_def(tool: &Tool) -> ToolDef {
    match tool {
        Tool::Name(name) => ToolDef {
            name: name.clone(),
            description: None,
            parameters: json!({"type": "object", "properties": {}}),
        },
        Tool::Spec(spec) => ToolDef {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone().map_or_else(
                || json!({"type": "object", "properties": {}}),
                Value::Object,
            ),
        },
    }
}

/// The model's answer as the assertions see it, its raw events as `messages`.
pub fn to_check_response(response: ModelResponse) -> Response {
    let messages = response.raw.values();
    Response {
        messages,
        ..answer_of(response)
    }
}

/// [`to_check_response`] without the raw events, which no check reads: the engine's
/// answer, whose events kept as text are then never parsed.
pub(crate) fn answer_of(response: ModelResponse) -> Response {
    Response {
        text: Some(response.text),
        sly_data: None,
        structure: None,
        tool_calls: response
            .tool_calls
            .into_iter()
            .map(|c| ToolCall::new(c.name, c.arguments))
            .collect(),
        latency: Some(response.timings.total),
        time_to_first_byte: response.timings.first_byte,
        usage: response.usage.map(|u| TokenUsage {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
        }),
        stop_reason: response.stop_reason,
        // One model call: the spec runs as a single request today.
        iterations: Some(1),
        graph_steps: None,
        refusal: response.refusal,
        messages: Vec::new(),
        end_state: None,
        conversation: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use prill_spec::{Env, Unrecognized};

    use super::*;

    fn case(yaml: &str) -> Case {
        let loaded = prill_spec::load_str(
            Path::new("t.yaml"),
            yaml,
            &Env::default(),
            Unrecognized::Error,
        )
        .unwrap();
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        loaded.cases().remove(0)
    }

    #[test]
    fn inputs_map_to_system_and_messages() {
        let c = case(
            "name: t\nmodel: gpt-4o\nseed: 7\ntimeout_ms: 1500\ninputs:\n  system_prompt: Be brief.\n  context: {city: Paris}\n  messages:\n    - {role: system, content: Answer in French.}\n    - {role: user, content: Hi}\n    - {role: assistant, content: Bonjour}\n  query: Capital?\nassertions: [{must_contain: Paris}]\ntools: [search, {name: calc, description: math, parameters: {type: object, properties: {x: {type: number}}}}]\nmodel_config: {temperature: 0.2, top_k: 5, stop_sequences: [END]}\n",
        );
        let r = model_request(&c).unwrap();
        assert_eq!(
            r.system.as_deref(),
            Some(
                "Be brief.\n\nAnswer in French.\n\nContext:\n```json\n{\n  \"city\": \"Paris\"\n}\n```"
            )
        );
        let turns: Vec<(&str, String)> = r
            .messages
            .iter()
            .map(|m| (m.role().name(), m.content()))
            .collect();
        assert_eq!(
            turns,
            [
                ("user", "Hi".to_owned()),
                ("assistant", "Bonjour".to_owned()),
                ("user", "Capital?".to_owned())
            ]
        );
        assert_eq!(
            r.tools[0].parameters,
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(r.tools[1].description.as_deref(), Some("math"));
        assert_eq!(r.sampling.temperature, Some(0.2));
        assert_eq!(r.sampling.top_k, Some(5));
        assert_eq!(r.sampling.stop_sequences, ["END"]);
        assert_eq!(r.sampling.seed, Some(7));
        assert_eq!(r.timeout, Some(std::time::Duration::from_millis(1500)));
    }

    #[test]
    fn context_alone_becomes_the_user_message_and_nothing_at_all_is_an_error() {
        let c = case(
            "name: t\nmodel: gpt-4o\ninputs:\n  context: {a: 1}\nassertions: [{output_type: text}]\n",
        );
        let r = model_request(&c).unwrap();
        assert_eq!(r.messages.len(), 1);
        assert!(r.messages[0].content().starts_with("Context:\n```json"));
        assert!(r.system.is_none());
        let c = case(
            "name: t\nmodel: gpt-4o\ninputs:\n  system_prompt: hi\nassertions: [{output_type: text}]\n",
        );
        assert_eq!(model_request(&c).unwrap_err(), RequestError::NoMessage);
        assert!(RequestError::NoMessage.to_string().contains("no message"));
    }
}
