//! The trajectory assertions (Prill's extension to Sentinel's DSL), over the tool
//! calls of a response in the order they were made: `tool_sequence`,
//! `must_not_call_tool`, `tool_args`, `max_tool_calls`, `min_tool_calls`, and
//! `max_iterations_used` over the number of model calls.
//!
//! A failure names what was expected and the calls that were made, as
//! `search → summarize`.

use prill_spec::model::sentinel::{ArgMatcher, ArgsMode, SequenceMode, ToolArgs, ToolSequence};
use serde_json::{Value, json};

use super::{AssertionError, matching};
use crate::evaluation::{Evaluation, Threshold};
use crate::response::ToolCall;
use crate::text::cut;

/// What the tool-call assertions look at.
pub(super) const TARGET: &str = "tool_calls";

/// What `max_iterations_used` looks at.
pub(super) const ITERATIONS_TARGET: &str = "iterations";

/// The most characters of a call's arguments a message shows.
const ARGS_CHARS: usize = 200;

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

/// `tool_sequence`: the tools matched to the calls as its mode says (each tool to at
/// most one call and each call to at most one tool, as many as can be: `matching.rs`);
/// with `score: f1`, the F1 score of the matched calls against its threshold.
pub(super) fn sequence(seq: &ToolSequence, calls: &[ToolCall]) -> (Evaluation, String) {
    let called = names(calls);
    let wanted: Vec<&str> = seq.tools.iter().map(|c| c.tool.as_str()).collect();
    let given: Vec<Value> = calls.iter().map(|c| arguments(&c.arguments)).collect();
    let fits = |i: usize, j: usize| {
        wanted[i] == called[j]
            && args_fit(seq.tools[i].args.as_deref(), &given[j], seq.args_mode).is_ok()
    };
    let pairs = matching::best(wanted.len(), called.len(), seq.mode.ordered(), fits);
    let (matched, n_wanted, n_called) = (pairs.len(), wanted.len(), called.len());
    let missing: Vec<&str> = (0..n_wanted)
        .filter(|i| !pairs.iter().any(|(e, _)| e == i))
        .map(|i| wanted[i])
        .collect();
    let unexpected: Vec<&str> = (0..n_called)
        .filter(|j| !pairs.iter().any(|(_, a)| a == j))
        .map(|j| called[j])
        .collect();
    let (precision, recall, f1) = matching::f1(matched, n_wanted, n_called);
    let by_mode = match seq.mode {
        SequenceMode::InOrder | SequenceMode::Superset => missing.is_empty(),
        SequenceMode::Subset => unexpected.is_empty(),
        SequenceMode::Strict | SequenceMode::AnyOrder => {
            missing.is_empty() && unexpected.is_empty()
        }
    };
    let mut evaluation = match seq.f1_threshold {
        None => Evaluation::pass_fail(by_mode),
        Some(t) => Evaluation::score(f1).with_threshold(Threshold {
            gte: Some(t),
            ..Threshold::default()
        }),
    };
    evaluation = evaluation
        .with("called", json!(called))
        .with("expected", json!(seq.tools))
        .with("mode", seq.mode.name())
        .with("args_mode", seq.args_mode.name())
        .with("matched", matched)
        .with("missing", json!(missing))
        .with("unexpected", json!(unexpected))
        .with("precision", precision)
        .with("recall", recall)
        .with("f1", f1);
    let passed = evaluation.status() == crate::status::Status::Passed;
    let nearest = (!passed)
        .then(|| nearest(seq, &pairs, calls, &given))
        .flatten()
        .unwrap_or_default();
    let message = match seq.f1_threshold {
        Some(t) => format!(
            "F1 {f1:.2} (precision {precision:.2}, recall {recall:.2}) {} the threshold {t} for {} {} ({}), found {}{}",
            if passed { "meets" } else { "is below" },
            arrow(&wanted),
            if seq.mode.ordered() {
                "in order"
            } else {
                "in any order"
            },
            seq.mode.name(),
            arrow(&called),
            differences(&missing, &unexpected)
        ),
        None => {
            // How many tools were found in order from the start, to say where it broke.
            let mut prefix = 0;
            for j in 0..n_called {
                if prefix < n_wanted && fits(prefix, j) {
                    prefix += 1;
                }
            }
            let found = Found {
                called: &called,
                missing: &missing,
                unexpected: &unexpected,
                prefix,
            };
            mode_message(seq.mode, passed, &wanted, &found)
        }
    };
    (evaluation, message + &nearest)
}

/// Whether a call's arguments `given` fit those written, `args`, under `mode`; `Err`
/// names the first argument that does not (or the call's argument not written, under
/// `subset` and `exact`). Written by name alone (`args` is `None`), any arguments fit;
/// written as `args: {}`, a call with no arguments (or, under `superset`, any call).
fn args_fit(
    args: Option<&[(String, ArgMatcher)]>,
    given: &Value,
    mode: ArgsMode,
) -> Result<(), String> {
    let Some(args) = args else { return Ok(()) };
    let fits = |name: &str, m: &ArgMatcher| given.get(name).is_some_and(|v| matches(m, v));
    let written = |name: &str| args.iter().any(|(n, _)| n == name);
    let extra = || {
        given
            .as_object()
            .and_then(|o| o.keys().find(|k| !written(k)).cloned())
            .map_or(Ok(()), Err)
    };
    let first_misfit = |present_only: bool| {
        args.iter()
            .find(|(n, m)| (!present_only || given.get(n.as_str()).is_some()) && !fits(n, m))
            .map_or(Ok(()), |(n, _)| Err(n.clone()))
    };
    match mode {
        ArgsMode::Ignore => Ok(()),
        ArgsMode::Superset => first_misfit(false),
        ArgsMode::Subset => extra().and_then(|()| first_misfit(true)),
        ArgsMode::Exact => extra().and_then(|()| first_misfit(false)),
    }
}

/// For the first expected call left unmatched that names arguments, the call to the same
/// tool whose arguments come nearest, and the argument that differs:
/// `; nearest: fetch call 2, argument \`url\` expected {"regex":"^https"}, found "http://x"`.
fn nearest(
    seq: &ToolSequence,
    pairs: &[(usize, usize)],
    calls: &[ToolCall],
    given: &[Value],
) -> Option<String> {
    let (_, want) = seq
        .tools
        .iter()
        .enumerate()
        .find(|(i, c)| c.args.is_some() && !pairs.iter().any(|(e, _)| e == i))?;
    let written = want.args.as_deref().unwrap_or_default();
    let differing = |j: usize| {
        written
            .iter()
            .filter(|(n, m)| !given[j].get(n.as_str()).is_some_and(|v| matches(m, v)))
            .count()
    };
    let j = (0..calls.len())
        .filter(|&j| calls[j].name == want.tool)
        .min_by_key(|&j| differing(j))?;
    let argument = args_fit(Some(written), &given[j], seq.args_mode).err()?;
    let expected = written
        .iter()
        .find(|(n, _)| *n == argument)
        .map_or_else(|| "not written".to_owned(), |(_, m)| json!(m).to_string());
    let found = given[j]
        .get(argument.as_str())
        .map_or_else(|| "absent".to_owned(), |v| cut(&v.to_string(), ARGS_CHARS));
    Some(format!(
        "; nearest: {} call {}, argument `{argument}` expected {expected}, found {found}",
        want.tool,
        calls[..=j].iter().filter(|c| c.name == want.tool).count()
    ))
}

/// `; missing: a; not expected: b`, for what is not empty.
fn differences(missing: &[&str], unexpected: &[&str]) -> String {
    let mut out = String::new();
    if !missing.is_empty() {
        out.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    if !unexpected.is_empty() {
        out.push_str(&format!("; not expected: {}", unexpected.join(", ")));
    }
    out
}

/// What a `tool_sequence` found.
struct Found<'a> {
    called: &'a [&'a str],
    missing: &'a [&'a str],
    unexpected: &'a [&'a str],
    /// How many of the tools, from the first, fit calls in order (the first that fit).
    prefix: usize,
}

/// What a `tool_sequence` without a score found, in its mode's words.
fn mode_message(mode: SequenceMode, passed: bool, wanted: &[&str], found: &Found) -> String {
    let Found {
        called,
        missing,
        unexpected,
        prefix,
    } = *found;
    if wanted.is_empty() {
        // Only `strict`, `any_order` and `subset` take an empty list: no call at all.
        return if passed {
            "no tool calls, as expected".to_owned()
        } else {
            format!("expected no tool calls, found {}", arrow(called))
        };
    }
    let set = wanted.join(", ");
    match (mode, passed) {
        (SequenceMode::Strict, true) => format!("called exactly {}", arrow(wanted)),
        (SequenceMode::Strict, false) => format!(
            "expected exactly the calls {}, found {}",
            arrow(wanted),
            arrow(called)
        ),
        (SequenceMode::InOrder, true) => format!("called {} in order", arrow(wanted)),
        (SequenceMode::InOrder, false) => {
            format!(
                "expected calls in the order {}, found {} (no call to {} after {})",
                arrow(wanted),
                arrow(called),
                wanted.get(prefix).copied().unwrap_or("the last tool"),
                if prefix == 0 {
                    "the start".to_owned()
                } else {
                    wanted[..prefix].join(" → ")
                }
            )
        }
        (SequenceMode::AnyOrder, true) => format!("called exactly {set}, in some order"),
        (SequenceMode::AnyOrder, false) => format!(
            "expected exactly the calls {set}, in any order, found {}{}",
            arrow(called),
            differences(missing, unexpected)
        ),
        (SequenceMode::Subset, true) => format!("every call was one of {set}"),
        (SequenceMode::Subset, false) => format!(
            "expected every call to be one of {set}, found {}{}",
            arrow(called),
            differences(&[], unexpected)
        ),
        (SequenceMode::Superset, true) => format!("called {set}, in some order"),
        (SequenceMode::Superset, false) => format!(
            "expected calls to {set}, in any order, found {}{}",
            arrow(called),
            differences(missing, &[])
        ),
    }
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
fn arguments(value: &Value) -> Value {
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

/// JSON equality, with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
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
