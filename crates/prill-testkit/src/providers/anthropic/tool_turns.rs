//! The rules the Messages API applies to tool turns, with its wording: every
//! `tool_use` block of an assistant turn is answered by a `tool_result` block in the
//! user turn right after it, and a `tool_result` answers a `tool_use` of the turn right
//! before it. Consecutive turns of one role count as one, as the API combines them.

use serde_json::Value;

use super::{Refusal, invalid};

/// Refuses tool results that answer no call and calls left without a result.
pub(super) fn check(messages: &[Value]) -> Result<(), Refusal> {
    // The `tool_use` ids of the last assistant turn, and where that turn started.
    let mut calls: Option<(usize, Vec<String>)> = None;
    let mut i = 0;
    while i < messages.len() {
        let role = messages[i]["role"].as_str().unwrap_or_default();
        let start = i;
        let mut blocks: Vec<&Value> = Vec::new();
        while i < messages.len() && messages[i]["role"].as_str().unwrap_or_default() == role {
            blocks.extend(messages[i]["content"].as_array().into_iter().flatten());
            i += 1;
        }
        let of_type = |kind: &str, key: &str| -> Vec<String> {
            blocks
                .iter()
                .filter(|b| b["type"] == kind)
                .map(|b| b[key].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        if role == "assistant" {
            if let Some((at, pending)) = calls.take().filter(|(_, p)| !p.is_empty()) {
                return Err(missing_results(at, &pending));
            }
            calls = Some((start, of_type("tool_use", "id")));
            continue;
        }
        let results = of_type("tool_result", "tool_use_id");
        let expected = calls.take().unwrap_or_default();
        if let Some(stray) = results.iter().find(|id| !expected.1.contains(id)) {
            return Err(invalid(format!(
                "messages.{start}.content: unexpected `tool_use_id` found in `tool_result` blocks: {stray}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )));
        }
        let pending: Vec<String> = expected
            .1
            .iter()
            .filter(|id| !results.contains(id))
            .cloned()
            .collect();
        if !pending.is_empty() {
            return Err(missing_results(expected.0, &pending));
        }
    }
    Ok(())
}

/// The error for `tool_use` blocks of the turn at `at` that no result answers.
fn missing_results(at: usize, pending: &[String]) -> Refusal {
    invalid(format!(
        "messages.{at}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        pending.join(", ")
    ))
}
