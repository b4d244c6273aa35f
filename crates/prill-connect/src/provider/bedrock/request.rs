//! The Converse request body: turns made acceptable to Converse, sampling fitted to the
//! model, tools, and the response format in the way the model's family takes it
//! ([`structured_mode`], the one table of it).

use serde_json::{Map, Value, json};

use super::super::{
    ChatMessage, ModelRequest, ProviderKind, ResponseFormat, Role, ToolOutput, call_id,
    forced_tool, result_id, tool_input, unsupported,
};
use crate::error::ConnectError;

/// The text of the user turn put before a conversation that starts with the assistant's
/// turn: Converse takes only conversations that start with a user message.
pub const LEADING_USER_TURN: &str = "(The conversation so far follows.)";

/// How a model is asked for an answer of a given shape ([`ResponseFormat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructuredMode {
    /// Converse's model-agnostic structured output: `outputConfig.textFormat` with the
    /// JSON schema (as a string); the answer is the text.
    OutputConfig,
    /// A tool of that name, forced with `toolChoice.tool`; the answer is its input.
    ForcedTool,
    /// No tool and no `outputConfig`: the system prompt asks for one JSON object of
    /// the schema, and the text is the answer, parsed strictly by the caller.
    Prompt,
}

/// How `model` is asked for structured answers on Bedrock — the one table of it:
///
/// | family | mode | why |
/// |---|---|---|
/// | Claude 4.5 and later (`claude-sonnet-4-5`, `claude-haiku-4-5`, `claude-opus-4-5`, `claude-opus-4-6`, ...) | [`StructuredMode::OutputConfig`] | AWS lists these Claude models for structured outputs through Converse |
/// | Claude 3 to 4.1, Amazon Nova | [`StructuredMode::ForcedTool`] | `toolChoice.tool` is accepted only by Claude 3+ and Nova, and these have no `outputConfig` |
/// | everything else (Llama, Mistral, Cohere, DeepSeek, gpt-oss, Qwen, Titan, ...) | [`StructuredMode::Prompt`] | neither a forced tool nor `outputConfig` is documented for them |
///
/// The model may be a model id, a cross-region inference profile (`us.`, `eu.`,
/// `global.`, ...) or an ARN naming one; only the family in it counts.
pub fn structured_mode(model: &str) -> StructuredMode {
    let m = model.to_ascii_lowercase();
    if let Some(version) = claude_version(&m) {
        if version >= (4, 5) {
            return StructuredMode::OutputConfig;
        }
        if version >= (3, 0) {
            return StructuredMode::ForcedTool;
        }
        return StructuredMode::Prompt;
    }
    if m.contains("amazon.nova") {
        return StructuredMode::ForcedTool;
    }
    StructuredMode::Prompt
}

/// The Claude version (`(major, minor)`) in a lowercase Bedrock model id, if it names
/// a Claude model: `anthropic.claude-3-5-haiku-20241022-v1:0` is 3.5,
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0` is 4.5, `anthropic.claude-v2:1` is 2.
fn claude_version(m: &str) -> Option<(u32, u32)> {
    let rest = &m[m.find("claude-")? + "claude-".len()..];
    let mut parts = rest
        .split(['-', '.', ':', '@', '_'])
        .map(|p| p.strip_prefix('v').unwrap_or(p))
        .skip_while(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()));
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()
        .filter(|p| (1..=2).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

/// Whether `model` is one of Anthropic's on Bedrock (a model id, an inference profile
/// such as `us.anthropic.…`, or an ARN naming one), which take `top_k`.
pub fn is_anthropic_model(model: &str) -> bool {
    model.contains("anthropic.")
}

/// A Converse body, with what was changed to make the model take it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The body.
    pub body: Value,
    /// What was changed about the request, for [`super::super::ModelResponse::notes`].
    pub notes: Vec<String>,
    /// The response format's way, when the request has one.
    pub structured: Option<StructuredMode>,
}

/// The Converse body for `request`.
pub fn request_body(request: &ModelRequest) -> Result<Value, ConnectError> {
    prepare(request).map(|p| p.body)
}

/// The Converse body for `request`, with the notes of what was changed: consecutive
/// turns of one role merged, a leading user turn added, sampling parameters the model
/// refuses left out. A `top_k` for a model that is not Anthropic's is an error naming
/// it, before anything is sent.
pub fn prepare(request: &ModelRequest) -> Result<Prepared, ConnectError> {
    let format = forced_tool(ProviderKind::Bedrock, request)?;
    let (sampling, mut notes) = request.sampling.fit(ProviderKind::Bedrock, &request.model);
    let top_k = match sampling.top_k {
        Some(k) if is_anthropic_model(&request.model) => Some(k),
        Some(_) => return Err(unsupported(ProviderKind::Bedrock, "top_k")),
        None => None,
    };
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.messages, &mut notes)?),
    );
    let structured = format.map(|_| structured_mode(&request.model));
    let mut system = request
        .system
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_default();
    if let (Some(format), Some(StructuredMode::Prompt)) = (format, structured) {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(&prompt_instruction(format));
    }
    if !system.is_empty() {
        body.insert("system".into(), json!([{"text": system}]));
    }
    let mut config = Map::new();
    if let Some(n) = sampling.max_tokens {
        config.insert("maxTokens".into(), json!(n));
    }
    if let Some(t) = sampling.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        config.insert("topP".into(), json!(p));
    }
    if !sampling.stop_sequences.is_empty() {
        config.insert("stopSequences".into(), json!(sampling.stop_sequences));
    }
    if !config.is_empty() {
        body.insert("inferenceConfig".into(), Value::Object(config));
    }
    tool_config(request, format, structured, &mut body);
    if let (Some(format), Some(StructuredMode::OutputConfig)) = (format, structured) {
        body.insert(
            "outputConfig".into(),
            json!({"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {
                "schema": format.schema.to_string(), "name": format.name}}}}),
        );
    }
    if let Some(k) = top_k {
        body.insert("additionalModelRequestFields".into(), json!({"top_k": k}));
    }
    Ok(Prepared {
        body: Value::Object(body),
        notes,
        structured,
    })
}

/// `toolConfig`: the request's tools, and the forced tool of the response format when
/// that is the model's way.
fn tool_config(
    request: &ModelRequest,
    format: Option<&ResponseFormat>,
    structured: Option<StructuredMode>,
    body: &mut Map<String, Value>,
) {
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let mut spec = Map::new();
            spec.insert("name".into(), json!(tool.name));
            if let Some(description) = tool.description.as_deref().filter(|d| !d.is_empty()) {
                spec.insert("description".into(), json!(description));
            }
            spec.insert("inputSchema".into(), json!({"json": tool.parameters}));
            json!({"toolSpec": spec})
        })
        .collect();
    if let (Some(format), Some(StructuredMode::ForcedTool)) = (format, structured) {
        tools.push(
            json!({"toolSpec": {"name": format.name, "description": "Record the answer.",
            "inputSchema": {"json": format.schema}}}),
        );
        body.insert(
            "toolConfig".into(),
            json!({"tools": tools, "toolChoice": {"tool": {"name": format.name}}}),
        );
    } else if !tools.is_empty() {
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
}

/// The instruction added to the system prompt of a model without a structured mode.
pub fn prompt_instruction(format: &ResponseFormat) -> String {
    format!(
        "Answer with one JSON object and nothing else: no prose and no code fence. The object (`{}`) must match this JSON schema: {}",
        format.name, format.schema
    )
}

/// The conversation as Converse takes it: consecutive turns of one role become one
/// message whose content blocks keep their order, and a conversation that starts with
/// the assistant gets a user turn ([`LEADING_USER_TURN`]) before it. Each change adds a
/// note. The model's tool calls are `toolUse` blocks of its turn, and tool results
/// `toolResult` blocks of the user turn after it: the results of one turn always go
/// into that one user message (not a change worth a note: it is Converse's shape).
fn messages(turns: &[ChatMessage], notes: &mut Vec<String>) -> Result<Vec<Value>, ConnectError> {
    let mut out: Vec<(Role, Vec<Value>)> = Vec::new();
    let mut merged = 0;
    for turn in turns {
        let (role, blocks) = blocks_of(turn)?;
        match out.last_mut() {
            Some((last, into)) if *last == role => {
                if !matches!(turn, ChatMessage::ToolResult(_)) {
                    merged += 1;
                }
                into.extend(blocks);
            }
            _ => out.push((role, blocks)),
        }
    }
    if merged > 0 {
        notes.push(format!(
            "{merged} turn(s) merged into the turn before: Converse takes only alternating user and assistant turns"
        ));
    }
    if out
        .first()
        .is_some_and(|(role, _)| *role == Role::Assistant)
    {
        out.insert(0, (Role::User, vec![json!({"text": LEADING_USER_TURN})]));
        notes.push(format!(
            "a user turn \"{LEADING_USER_TURN}\" was put first: Converse takes only conversations that start with a user turn"
        ));
    }
    Ok(out
        .into_iter()
        .map(|(role, content)| json!({"role": role.name(), "content": content}))
        .collect())
}

/// The Converse role and content blocks of one turn: a tool result speaks as the user.
fn blocks_of(turn: &ChatMessage) -> Result<(Role, Vec<Value>), ConnectError> {
    const KIND: ProviderKind = ProviderKind::Bedrock;
    Ok(match turn {
        ChatMessage::User(text) => (Role::User, vec![json!({"text": text})]),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut blocks = Vec::new();
            if !text.is_empty() || tool_calls.is_empty() {
                blocks.push(json!({"text": text}));
            }
            for call in tool_calls {
                blocks.push(json!({"toolUse": {
                    "toolUseId": call_id(KIND, call)?,
                    "name": call.name,
                    "input": tool_input(&call.arguments),
                }}));
            }
            (Role::Assistant, blocks)
        }
        ChatMessage::ToolResult(result) => {
            // A JSON object goes as a `json` document; any other value, as text.
            let content = match &result.output {
                ToolOutput::Json(value @ Value::Object(_)) => json!({"json": value}),
                ToolOutput::Json(value) => json!({"text": value.to_string()}),
                ToolOutput::Text(text) => json!({"text": text}),
            };
            let mut block = json!({
                "toolUseId": result_id(KIND, result)?,
                "content": [content],
            });
            if result.is_error {
                block["status"] = json!("error");
            }
            (Role::User, vec![json!({"toolResult": block})])
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structured_mode_follows_the_family() {
        let cases = [
            (
                "anthropic.claude-sonnet-4-5-20250929-v1:0",
                StructuredMode::OutputConfig,
            ),
            (
                "global.anthropic.claude-haiku-4-5-20251001-v1:0",
                StructuredMode::OutputConfig,
            ),
            (
                "us.anthropic.claude-opus-4-6-v1",
                StructuredMode::OutputConfig,
            ),
            ("anthropic.claude-opus-4-7", StructuredMode::OutputConfig),
            (
                "anthropic.claude-3-haiku-20240307-v1:0",
                StructuredMode::ForcedTool,
            ),
            (
                "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
                StructuredMode::ForcedTool,
            ),
            (
                "anthropic.claude-sonnet-4-20250514-v1:0",
                StructuredMode::ForcedTool,
            ),
            (
                "anthropic.claude-opus-4-1-20250805-v1:0",
                StructuredMode::ForcedTool,
            ),
            ("anthropic.claude-v2:1", StructuredMode::Prompt),
            ("us.amazon.nova-pro-v1:0", StructuredMode::ForcedTool),
            ("meta.llama3-1-70b-instruct-v1:0", StructuredMode::Prompt),
            ("mistral.mistral-large-2407-v1:0", StructuredMode::Prompt),
            ("cohere.command-r-plus-v1:0", StructuredMode::Prompt),
            ("us.deepseek.r1-v1:0", StructuredMode::Prompt),
            ("openai.gpt-oss-120b-1:0", StructuredMode::Prompt),
            ("qwen.qwen3-32b-v1:0", StructuredMode::Prompt),
        ];
        for (model, want) in cases {
            assert_eq!(structured_mode(model), want, "{model}");
        }
    }

    #[test]
    fn turns_are_merged_and_a_first_assistant_turn_gets_a_user_turn() {
        let turn = |role, content: &str| ChatMessage::text(role, content);
        let mut notes = Vec::new();
        let out = messages(
            &[
                turn(Role::Assistant, "hello"),
                turn(Role::User, "a"),
                turn(Role::User, "b"),
                turn(Role::Assistant, "c"),
            ],
            &mut notes,
        )
        .unwrap();
        assert_eq!(
            Value::Array(out),
            json!([
                {"role": "user", "content": [{"text": LEADING_USER_TURN}]},
                {"role": "assistant", "content": [{"text": "hello"}]},
                {"role": "user", "content": [{"text": "a"}, {"text": "b"}]},
                {"role": "assistant", "content": [{"text": "c"}]},
            ])
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        let mut none = Vec::new();
        messages(&[turn(Role::User, "x")], &mut none).unwrap();
        assert!(none.is_empty());
    }
}
