//! LangChain's message serialization, both ways: the run's input built from
//! [`GraphRequest`]s, and the state's messages read into [`GraphMessage`]s.
//!
//! A serialized message is an object with a `type` (`human`, `ai`, `tool`, `system`)
//! and a `content` that is a string or a list of content blocks (`{"type": "text",
//! "text": ...}`; other blocks carry no text). An AI message adds `tool_calls`
//! (`[{name, args, id, type: "tool_call"}]`), `usage_metadata` (`input_tokens`,
//! `output_tokens`, `total_tokens`, `output_token_details.reasoning`) and
//! `response_metadata` (the provider's `finish_reason` or `stop_reason`); a tool message
//! adds `tool_call_id`, `name` and `status` (`success` or `error`).

use prill_target::TokenUsage;
use prill_target::graph::{AiMessage, GraphMessage, GraphRequest, ToolMessage};
use prill_target::model::{ChatMessage, ModelToolCall};
use serde_json::{Map, Value, json};

/// The run's `input`: `{"messages": [...]}`, the system instructions first.
pub(crate) fn input(request: &GraphRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"type": "system", "content": system}));
    }
    for m in &request.messages {
        messages.push(match m {
            ChatMessage::User(text) => json!({"type": "human", "content": text}),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut ai = json!({"type": "ai", "content": text});
                if !tool_calls.is_empty() {
                    ai["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"name": c.name, "args": c.arguments, "id": c.id, "type": "tool_call"})
                        })
                        .collect();
                }
                ai
            }
            ChatMessage::ToolResult(result) => json!({
                "type": "tool",
                "content": result.output.to_text(),
                "tool_call_id": result.call_id,
                "name": result.name,
                "status": if result.is_error { "error" } else { "success" },
            }),
        });
    }
    json!({"messages": messages})
}

/// Reads one serialized message; the error says what is wrong with it.
pub(crate) fn parse(value: &Value) -> Result<GraphMessage, String> {
    let Some(object) = value.as_object() else {
        return Err(format!("a message is not an object but {}", kind_of(value)));
    };
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .ok_or("a message has no `type`")?;
    let text = content_text(object.get("content").unwrap_or(&Value::Null))?;
    Ok(match kind {
        "human" | "HumanMessageChunk" => GraphMessage::Human { text },
        "system" | "SystemMessageChunk" => GraphMessage::System { text },
        "ai" | "AIMessageChunk" => GraphMessage::Ai(ai(object, text)?),
        "tool" | "ToolMessageChunk" => GraphMessage::Tool(tool(object, text)?),
        other => GraphMessage::Other {
            kind: other.to_owned(),
            text,
        },
    })
}

fn ai(object: &Map<String, Value>, text: String) -> Result<AiMessage, String> {
    let mut tool_calls = Vec::new();
    match object.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter().enumerate() {
                let name = call["name"]
                    .as_str()
                    .ok_or_else(|| format!("tool call {i} of an AI message has no `name`"))?;
                tool_calls.push(ModelToolCall {
                    id: call["id"].as_str().map(str::to_owned),
                    name: name.to_owned(),
                    arguments: call.get("args").cloned().unwrap_or_else(|| json!({})),
                });
            }
        }
        Some(other) => {
            return Err(format!(
                "the `tool_calls` of an AI message are {}, not a list",
                kind_of(other)
            ));
        }
    }
    let usage = object
        .get("usage_metadata")
        .and_then(Value::as_object)
        .map(|u| TokenUsage {
            input: u.get("input_tokens").and_then(Value::as_u64),
            output: u.get("output_tokens").and_then(Value::as_u64),
            reasoning: u
                .get("output_token_details")
                .and_then(|d| d.get("reasoning"))
                .and_then(Value::as_u64),
        });
    let meta = object.get("response_metadata");
    let stop_reason = ["finish_reason", "stop_reason", "done_reason"]
        .iter()
        .find_map(|k| meta.and_then(|m| m.get(*k)).and_then(Value::as_str))
        .map(str::to_owned);
    Ok(AiMessage {
        text,
        tool_calls,
        usage,
        stop_reason,
    })
}

fn tool(object: &Map<String, Value>, text: String) -> Result<ToolMessage, String> {
    let call_id = object
        .get("tool_call_id")
        .and_then(Value::as_str)
        .ok_or("a tool message has no `tool_call_id`")?;
    let content = match object.get("content") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(text)),
        Some(Value::Array(_)) => Value::String(text),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    Ok(ToolMessage {
        call_id: call_id.to_owned(),
        name: object
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        content,
        is_error: object.get("status").and_then(Value::as_str) == Some("error"),
    })
}

/// A message's content as text: a string as it is; of a list of blocks, the text of
/// the strings and of the `text` blocks, joined.
fn content_text(content: &Value) -> Result<String, String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => Ok(blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("text") => {
                    o.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")),
        other => Err(format!(
            "a message's `content` is {}, not a string or a list",
            kind_of(other)
        )),
    }
}

/// A JSON value's kind, as a message names it.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use prill_target::model::{ToolOutput, ToolResult};

    use super::*;

    #[test]
    fn the_input_is_langchain_messages() {
        let request = GraphRequest {
            assistant_id: "agent".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                ChatMessage::user("Hi"),
                ChatMessage::tool_calls(
                    "",
                    vec![ModelToolCall {
                        id: Some("c1".into()),
                        name: "search".into(),
                        arguments: json!({"q": "x"}),
                    }],
                ),
                ChatMessage::ToolResult(ToolResult {
                    call_id: Some("c1".into()),
                    name: "search".into(),
                    output: ToolOutput::Json(json!({"hits": 1})),
                    is_error: false,
                }),
            ],
            ..GraphRequest::default()
        };
        assert_eq!(
            input(&request),
            json!({"messages": [
                {"type": "system", "content": "Be brief."},
                {"type": "human", "content": "Hi"},
                {"type": "ai", "content": "", "tool_calls": [
                    {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}]},
                {"type": "tool", "content": "{\"hits\":1}", "tool_call_id": "c1",
                 "name": "search", "status": "success"},
            ]})
        );
    }

    #[test]
    fn messages_are_read_with_their_calls_results_and_usage() {
        let ai = parse(&json!({
            "type": "ai",
            "content": [{"type": "text", "text": "Let me "}, {"type": "tool_use", "id": "x"}, "look."],
            "tool_calls": [{"name": "search", "args": {"q": "laptop"}, "id": "call_1", "type": "tool_call"}],
            "usage_metadata": {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14},
            "response_metadata": {"finish_reason": "tool_calls"}
        }))
        .unwrap();
        let GraphMessage::Ai(ai) = ai else {
            panic!("{ai:?}")
        };
        assert_eq!(ai.text, "Let me look.");
        assert_eq!(ai.tool_calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(ai.tool_calls[0].arguments, json!({"q": "laptop"}));
        assert_eq!(ai.usage.unwrap().input, Some(10));
        assert_eq!(ai.stop_reason.as_deref(), Some("tool_calls"));
        let tool = parse(&json!({"type": "tool", "content": "{\"hits\": 2}", "tool_call_id": "call_1", "name": "search", "status": "error"})).unwrap();
        let GraphMessage::Tool(tool) = tool else {
            panic!()
        };
        assert_eq!(tool.content, json!({"hits": 2}));
        assert!(tool.is_error);
        let tool =
            parse(&json!({"type": "tool", "content": "plain", "tool_call_id": "c"})).unwrap();
        let GraphMessage::Tool(tool) = tool else {
            panic!()
        };
        assert_eq!(tool.content, json!("plain"));
        assert!(!tool.is_error);
        assert!(
            parse(&json!({"type": "tool", "content": "x"}))
                .unwrap_err()
                .contains("tool_call_id")
        );
        assert!(
            parse(&json!({"content": "x"}))
                .unwrap_err()
                .contains("`type`")
        );
        assert!(
            parse(&json!({"type": "ai", "content": 3}))
                .unwrap_err()
                .contains("a number")
        );
        assert!(parse(&json!({"type": "ai", "content": "", "tool_calls": {}})).is_err());
    }
}
