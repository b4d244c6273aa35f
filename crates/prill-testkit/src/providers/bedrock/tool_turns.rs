//! The rules Converse applies to tool turns, with its wording: `toolUse` and
//! `toolResult` blocks need a `toolConfig`, every `toolUse` of an assistant turn is
//! answered by a `toolResult` in the user turn right after it, and a `toolResult`
//! answers a `toolUse` of the turn right before it.

use serde_json::Value;

/// Refuses tool results that answer no call and calls left without a result.
pub(super) fn check(body: &Value) -> Result<(), String> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let ids = |message: &Value, kind: &str| -> Vec<String> {
        message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b.get(kind))
            .map(|b| b["toolUseId"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let uses_tools = messages
        .iter()
        .any(|m| !ids(m, "toolUse").is_empty() || !ids(m, "toolResult").is_empty());
    if uses_tools && body.get("toolConfig").is_none() {
        return Err(
            "The toolConfig field must be defined when using toolUse and toolResult content blocks."
                .to_owned(),
        );
    }
    let mut calls: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        if message["role"] == "assistant" {
            calls = ids(message, "toolUse");
            continue;
        }
        let results = ids(message, "toolResult");
        if results.len() > calls.len() {
            return Err(format!(
                "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
            ));
        }
        if let Some(stray) = results.iter().find(|id| !calls.contains(id)) {
            return Err(format!(
                "The toolUseId {stray} of the toolResult blocks at messages.{i}.content matches no toolUse block of the previous turn."
            ));
        }
        let pending: Vec<&str> = calls
            .iter()
            .filter(|id| !results.contains(id))
            .map(String::as_str)
            .collect();
        if !pending.is_empty() {
            return Err(format!(
                "Expected toolResult blocks at messages.{i}.content for the following Ids: {}",
                pending.join(", ")
            ));
        }
        calls.clear();
    }
    Ok(())
}
