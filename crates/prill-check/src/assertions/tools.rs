//! `must_call_tool`: every named tool is among the response's tool calls.

use serde_json::{Value, json};

use crate::evaluation::Evaluation;
use crate::response::ToolCall;

/// What the assertion looks at.
pub(super) const TARGET: &str = "tool_calls";

/// The names of the tools called, in order, as a report shows what was found.
pub(super) fn found(calls: &[ToolCall]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|c| Value::String(c.name.clone()))
            .collect(),
    )
}

/// Whether every tool of `tools` was called.
pub(super) fn evaluate(tools: &[String], calls: &[ToolCall]) -> (Evaluation, String) {
    let called: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    let missing: Vec<&str> = tools
        .iter()
        .map(String::as_str)
        .filter(|t| !called.contains(t))
        .collect();
    let message = if missing.is_empty() {
        format!("called {}", tools.join(", "))
    } else {
        let called_text = if called.is_empty() {
            "no tool".to_owned()
        } else {
            called.join(", ")
        };
        format!(
            "expected calls to {}, found calls to {called_text}",
            missing.join(", ")
        )
    };
    (
        Evaluation::pass_fail(missing.is_empty())
            .with("called", json!(called))
            .with("missing", json!(missing)),
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    fn call(name: &str) -> ToolCall {
        ToolCall::new(name, json!({}))
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn every_named_tool_must_be_called() {
        let calls = [call("web_search")];
        let (e, m) = evaluate(&names(&["web_search"]), &calls);
        assert_eq!(e.status(), Status::Passed);
        assert_eq!(m, "called web_search");
        let (e, m) = evaluate(&names(&["web_search", "calculator"]), &calls);
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(e.metadata["missing"], json!(["calculator"]));
        assert_eq!(m, "expected calls to calculator, found calls to web_search");
        let (_, m) = evaluate(&names(&["calculator"]), &[]);
        assert_eq!(m, "expected calls to calculator, found calls to no tool");
        assert_eq!(found(&calls), json!(["web_search"]));
    }
}
