//! The rules Chat Completions applies to tool turns, with its wording: a `tool`
//! message must answer a call of the assistant message with `tool_calls` right before
//! it (the tool messages of one turn coming together after it), and every call of
//! such a message must be answered before the conversation goes on.

use serde_json::Value;

use super::{Rejection, invalid};

/// Refuses a conversation whose tool messages do not answer the calls before them.
pub(super) fn check(messages: &[Value]) -> Result<(), Rejection> {
    // The ids of the open tool-call turn that are not answered yet, and where it is.
    let mut open: Option<(usize, Vec<String>)> = None;
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let answered = match &mut open {
                Some((_, pending)) => match pending.iter().position(|p| p == id) {
                    Some(at) => {
                        pending.remove(at);
                        true
                    }
                    None => false,
                },
                None => false,
            };
            if !answered {
                return Err(invalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".to_owned(),
                    Some(&format!("messages.[{i}].role")),
                    None,
                ));
            }
            continue;
        }
        unanswered(&open)?;
        open = match message["tool_calls"].as_array() {
            Some(calls) if role == "assistant" && !calls.is_empty() => Some((
                i,
                calls
                    .iter()
                    .map(|c| c["id"].as_str().unwrap_or_default().to_owned())
                    .collect(),
            )),
            _ => None,
        };
    }
    unanswered(&open)
}

/// The error for calls of the open turn left without an answer.
fn unanswered(open: &Option<(usize, Vec<String>)>) -> Result<(), Rejection> {
    match open {
        Some((at, pending)) if !pending.is_empty() => Err(invalid(
            format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                pending.join(", ")
            ),
            Some(&format!("messages.[{at}].role")),
            None,
        )),
        _ => Ok(()),
    }
}
