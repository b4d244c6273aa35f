//! The trajectory assertions (Prill's extension to Sentinel's DSL), over the tool
//! calls of a response in the order they were made: `tool_sequence`,
//! `must_not_call_tool`, `tool_args`, `max_tool_calls`, `min_tool_calls`, and
//! `max_iterations_used` over the number of model calls.
//!
//! A failure names what was expected and the calls that were made, as
//! `search → summarize`.

use prill_spec::model::framework::json_equal;
use prill_spec::model::sentinel::{ArgMatcher, ToolArgs};
use serde_json::{Value, json};

use super::AssertionError;
use crate::evaluation::Evaluation;
use crate::response::ToolCall;
use crate::text::cut;

/// What the tool-call assertions look at.
pub(super) const TARGET: &str = "tool_calls";

/// What `max_iterations_used` looks at.
pub(super) const ITERATIONS_TARGET: &str = "iterations";

/// The most characters of a call's arguments a message shows.
pub(super) const ARGS_CHARS: usize = 200;

/// What `trajectory_gist` looks at: the calls with their results, then the answer.
pub(super) const TRANSCRIPT_TARGET: &str = "trajectory";

/// The most calls a transcript lists; the rest are counted.
const TRANSCRIPT_CALLS: usize = 100;

/// The most characters of one call's arguments or result a transcript shows.
const TRANSCRIPT_VALUE_CHARS: usize = 1_000;

/// The most characters of the final answer a transcript shows.
const TRANSCRIPT_ANSWER_CHARS: usize = 4_000;

/// The whole trajectory as the judge reads it for `trajectory_gist`: every tool call in
/// order, with its arguments and what it returned (or that it failed), then the final
/// answer. Long values are cut (with a visible marker) so that a runaway agent cannot
/// make the judge's prompt unbounded.
pub fn transcript(response: &crate::Response) -> String {
    let mut out = String::new();
    if !response.conversation.is_empty() {
        out.push_str("The conversation, in order:\n");
        for said in &response.conversation {
            out.push_str(&format!(
                "{}: {}\n",
                said.by,
                cut(&said.text, TRANSCRIPT_VALUE_CHARS)
            ));
        }
    }
    if response.tool_calls.is_empty() {
        out.push_str("No tool calls were made.\n");
    } else {
        out.push_str("Tool calls, in the order they were made:\n");
        for (i, call) in response
            .tool_calls
            .iter()
            .take(TRANSCRIPT_CALLS)
            .enumerate()
        {
            let args = cut(
                &arguments(&call.arguments).to_string(),
                TRANSCRIPT_VALUE_CHARS,
            );
            let result = match (&call.result, call.is_error) {
                (Some(r), false) => format!(" → {}", cut(&r.to_string(), TRANSCRIPT_VALUE_CHARS)),
                (Some(r), true) => {
                    format!(" → error: {}", cut(&r.to_string(), TRANSCRIPT_VALUE_CHARS))
                }
                (None, true) => " → error".to_owned(),
                (None, false) => String::new(),
            };
            out.push_str(&format!("{}. {} {args}{result}\n", i + 1, call.name));
        }
        let more = response.tool_calls.len().saturating_sub(TRANSCRIPT_CALLS);
        if more > 0 {
            out.push_str(&format!("… and {more} more calls\n"));
        }
    }
    match response.text.as_deref() {
        Some(text) => {
            out.push_str("Final answer:\n");
            out.push_str(&cut(text, TRANSCRIPT_ANSWER_CHARS));
        }
        None => out.push_str("No final answer."),
    }
    out
}

/// The calls as `a → b → c`, or `no tool calls`.
pub(super) fn arrow(calls: &[&str]) -> String {
    if calls.is_empty() {
        "no tool calls".to_owned()
    } else {
        calls.join(" → ")
    }
}

fn names(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(|c| c.name.as_str()).collect()
}

/// `must_not_call_tool`: none of the tools was called.
pub(super) fn must_not(tools: &[String], calls: &[ToolCall]) -> (Evaluation, String) {
    let called = names(calls);
    let forbidden: Vec<&str> = tools
        .iter()
        .map(String::as_str)
        .filter(|t| called.contains(t))
        .collect();
    let message = if forbidden.is_empty() {
        format!("no call to {}", tools.join(", "))
    } else {
        format!(
            "expected no call to {}, found {}",
            forbidden.join(", "),
            arrow(&called)
        )
    };
    (
        Evaluation::pass_fail(forbidden.is_empty())
            .with("called", json!(called))
            .with("forbidden_called", json!(forbidden)),
        message,
    )
}

/// `tool_args`: some call of the tool had arguments matching every matcher.
pub(super) fn args(want: &ToolArgs, calls: &[ToolCall]) -> (Evaluation, String) {
    let expected = serde_json::to_value(want)
        .ok()
        .and_then(|v| v.get("args").cloned())
        .unwrap_or(Value::Null);
    let of_tool: Vec<Value> = calls
        .iter()
        .filter(|c| c.name == want.tool)
        .map(|c| arguments(&c.arguments))
        .collect();
    let matching = of_tool.iter().position(|a| {
        want.args
            .iter()
            .all(|(name, m)| a.get(name).is_some_and(|v| matches(m, v)))
    });
    let message = match (matching, of_tool.is_empty()) {
        (Some(i), _) => format!(
            "call {} of {} had arguments matching {expected}",
            i + 1,
            want.tool
        ),
        (None, true) => format!(
            "expected a call to {} with arguments matching {expected}, found {}",
            want.tool,
            arrow(&names(calls))
        ),
        (None, false) => {
            let found: Vec<String> = of_tool
                .iter()
                .map(|a| format!("{}({})", want.tool, cut(&a.to_string(), ARGS_CHARS)))
                .collect();
            format!(
                "expected a call to {} with arguments matching {expected}, found {}",
                want.tool,
                found.join(", ")
            )
        }
    };
    (
        Evaluation::pass_fail(matching.is_some())
            .with("tool", want.tool.clone())
            .with("calls_of_tool", Value::Array(of_tool)),
        message,
    )
}

/// A call's arguments as an object: some providers hand them over as a JSON text.
pub(super) fn arguments(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

/// Whether one argument's value satisfies its matcher.
pub(super) fn matches(m: &ArgMatcher, value: &Value) -> bool {
    match m {
        ArgMatcher::Equals(want) => json_equal(want, value),
        ArgMatcher::Regex(p) => value.as_str().is_some_and(|s| p.regex().is_match(s)),
        ArgMatcher::Contains(want) => match (value, want) {
            (Value::String(s), Value::String(text)) => s.contains(text.as_str()),
            (Value::Array(items), _) => items.iter().any(|i| json_equal(want, i)),
            _ => false,
        },
        ArgMatcher::Schema(schema) => schema.is_valid(value),
    }
}

/// Which way a count is bounded.
#[derive(Debug, Clone, Copy)]
pub(super) enum Bound {
    /// `min_tool_calls`.
    AtLeast,
    /// `max_tool_calls`.
    AtMost,
}

/// `max_tool_calls` / `min_tool_calls`: the number of tool calls against `n`.
pub(super) fn count(bound: Bound, n: u64, calls: &[ToolCall]) -> (Evaluation, String) {
    let called = names(calls);
    let made = called.len() as u64;
    let (passed, word) = match bound {
        Bound::AtLeast => (made >= n, "at least"),
        Bound::AtMost => (made <= n, "at most"),
    };
    let s = if made == 1 { "" } else { "s" };
    let message = if passed {
        format!("made {made} tool call{s}, {word} {n}")
    } else {
        let ns = if n == 1 { "" } else { "s" };
        format!(
            "expected {word} {n} tool call{ns}, found {made}: {}",
            arrow(&called)
        )
    };
    (
        Evaluation::pass_fail(passed)
            .with("tool_calls", made)
            .with("called", json!(called)),
        message,
    )
}

/// `max_iterations_used`: the model was called at most `max` times. A response that
/// does not say how many times (an agent behind a connection) cannot be checked.
pub(super) fn iterations(
    max: u64,
    iterations: Option<u32>,
) -> Result<(Evaluation, String), AssertionError> {
    let used = u64::from(iterations.ok_or(AssertionError::IterationsNotRecorded)?);
    let passed = used <= max;
    let s = if used == 1 { "" } else { "s" };
    let message = if passed {
        format!("used {used} model call{s}, within {max}")
    } else {
        format!("expected at most {max} model calls, used {used}")
    };
    Ok((
        Evaluation::pass_fail(passed).with("iterations", used),
        message,
    ))
}

#[cfg(test)]
#[path = "trajectory_tests.rs"]
mod tests;
