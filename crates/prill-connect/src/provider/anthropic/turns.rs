//! The conversation in the Messages API's shape: the model's tool calls as `tool_use`
//! blocks of its turn, and the results of one turn's calls as `tool_result` blocks of
//! the one user message that follows it.

use serde_json::{Value, json};

use super::super::{ChatMessage, ProviderKind, ToolOutput, call_id, result_id, tool_input};
use crate::error::ConnectError;

const KIND: ProviderKind = ProviderKind::Anthropic;

/// The `messages` of a request. A text-only turn keeps the plain string `content`; a
/// turn with tool calls or results takes content blocks. Consecutive tool results go
/// into one user message, as the API wants all the results of one turn together right
/// after it, and user text that follows them joins that message after the results.
pub(super) fn messages(turns: &[ChatMessage]) -> Result<Vec<Value>, ConnectError> {
    let mut out: Vec<Value> = Vec::new();
    let mut results_open = false;
    for turn in turns {
        match turn {
            ChatMessage::ToolResult(result) => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": result_id(KIND, result)?,
                    "content": match &result.output {
                        ToolOutput::Text(text) => text.clone(),
                        ToolOutput::Json(value) => value.to_string(),
                    },
                });
                if result.is_error {
                    block["is_error"] = json!(true);
                }
                match out.last_mut() {
                    Some(last) if results_open => push_block(last, block),
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
                results_open = true;
            }
            ChatMessage::User(text) if results_open => {
                if let Some(last) = out.last_mut() {
                    push_block(last, json!({"type": "text", "text": text}));
                }
                results_open = false;
            }
            ChatMessage::User(text) => {
                out.push(json!({"role": "user", "content": text}));
                results_open = false;
            }
            ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                out.push(json!({"role": "assistant", "content": text}));
                results_open = false;
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call_id(KIND, call)?,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    }));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
                results_open = false;
            }
        }
    }
    Ok(out)
}

/// Adds `block` to the content blocks of `message`.
fn push_block(message: &mut Value, block: Value) {
    if let Some(blocks) = message["content"].as_array_mut() {
        blocks.push(block);
    }
}
