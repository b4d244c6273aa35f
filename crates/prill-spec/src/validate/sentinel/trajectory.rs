//! Validates the trajectory assertions, Prill's extensions to the DSL: `tool_sequence`,
//! `must_not_call_tool`, `tool_args`, `max_tool_calls`, `min_tool_calls` and
//! `max_iterations_used`.
//!
//! Sentinel does not know these names, so every rule here is Prill's own: the
//! diagnostics carry no Sentinel block and say why Prill refuses the value.

use super::super::cx::{At, Cx, list_names};
use super::assertions::regex_because;
use crate::diag::{Diagnostic, did_you_mean};
use crate::model::sentinel::{
    ArgMatcher, ArgSchema, ArgsMode, Assertion, ExpectedCall, SequenceMode, ToolArgs, ToolSequence,
};
use crate::node::{Node, Value};

/// Why a wrong value of a trajectory assertion is refused in a Sentinel file.
const EXTENSION: &str = "the trajectory assertions are Prill's extension to Sentinel's DSL";

/// `tool_sequence`: a list of tool names, or `{tools, mode, score, threshold}`
/// (`strict: true` is `mode: strict`).
pub(in crate::validate) fn tool_sequence(
    value: &Node,
    at: &At,
    cx: &mut Cx,
) -> Option<ToolSequence> {
    match &value.value {
        Value::Array(_) => expected_calls(value, at, false, cx).map(|tools| ToolSequence {
            tools,
            ..ToolSequence::in_order(Vec::new())
        }),
        Value::Object(entries) => {
            let keys = ["tools", "mode", "args_mode", "strict", "score", "threshold"];
            cx.unknown_keys_because(
                entries,
                at,
                &keys,
                |k| {
                    matches!(k, "match" | "match_type" | "trajectory_match_mode")
                        .then(|| "the way calls are matched is `mode`".to_owned())
                },
                EXTENSION,
            );
            let before = cx.errors();
            let mode = sequence_mode(value, at, cx);
            let args_mode = args_mode(value, at, cx);
            let f1_threshold = score(value, at, cx);
            // No calls expected: under these modes, no call made; under the others,
            // nothing to check.
            let may_be_empty = f1_threshold == Some(None)
                && matches!(
                    mode,
                    Some(SequenceMode::Strict | SequenceMode::AnyOrder | SequenceMode::Subset)
                );
            let tools = match value.get("tools") {
                Some(n) => expected_calls(n, &at.key("tools"), may_be_empty, cx),
                None => {
                    missing(value, at, "tools", "the list of tool names, in order", cx);
                    None
                }
            };
            if cx.errors() > before {
                return None;
            }
            Some(ToolSequence {
                tools: tools?,
                mode: mode?,
                args_mode: args_mode?,
                f1_threshold: f1_threshold?,
            })
        }
        _ => {
            let expected = "a list of tool names, or `{tools: [...], mode: strict}`";
            cx.own_type_error(value, at, expected, EXTENSION);
            None
        }
    }
}

/// `graph_steps`: `tool_sequence`'s forms, with node names only: a node takes no
/// arguments, so neither `{tool, args}` items nor `args_mode`.
pub(in crate::validate) fn graph_steps(value: &Node, at: &At, cx: &mut Cx) -> Option<ToolSequence> {
    let before = cx.errors();
    let (items, items_at) = match &value.value {
        Value::Array(items) => (Some(items.as_slice()), at.clone()),
        Value::Object(_) => {
            if let Some(n) = value.get("args_mode") {
                let d = Diagnostic::new(
                    "unknown-key",
                    at.key("args_mode").path(),
                    "a graph's nodes take no arguments",
                )
                .at(n.span)
                .help("remove `args_mode`; `graph_steps` matches nodes by name");
                cx.own(d, at, EXTENSION, None);
            }
            (value.get("tools").and_then(Node::as_array), at.key("tools"))
        }
        _ => (None, at.clone()),
    };
    for (i, item) in items.unwrap_or_default().iter().enumerate() {
        if !matches!(item.value, Value::String(_)) {
            cx.own_type_error(
                item,
                &items_at.index(i),
                "a node's name (a string)",
                EXTENSION,
            );
        }
    }
    if cx.errors() > before {
        return None;
    }
    tool_sequence(value, at, cx)
}

/// `tool_sequence`'s calls: a list, each a tool's name or `{tool, args}`, not empty
/// unless `may_be_empty` (a mode where no calls expected means no call made).
fn expected_calls(
    value: &Node,
    at: &At,
    may_be_empty: bool,
    cx: &mut Cx,
) -> Option<Vec<ExpectedCall>> {
    if may_be_empty && value.as_array().is_some_and(<[Node]>::is_empty) {
        return Some(Vec::new());
    }
    let help = "to check that no tool was called, write `max_tool_calls: 0`, or `tools: []` \
                with `mode: strict`, `any_order` or `subset`";
    let what = "a list of tool names or `{tool, args}`";
    let items = non_empty(value, at, what, Some(help), cx)?;
    let calls: Vec<Option<ExpectedCall>> = items
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let item_at = at.index(i);
            match &n.value {
                Value::Object(_) => {
                    call(n, &item_at, Empty::NoArguments, cx).map(|t| ExpectedCall {
                        tool: t.tool,
                        args: Some(t.args),
                    })
                }
                _ => name(n, &item_at, cx).map(ExpectedCall::named),
            }
        })
        .collect();
    calls.into_iter().collect()
}

/// `args_mode` of a `tool_sequence` object: `superset` when absent.
fn args_mode(value: &Node, at: &At, cx: &mut Cx) -> Option<ArgsMode> {
    let Some(node) = value.get("args_mode") else {
        return Some(ArgsMode::default());
    };
    let mode_at = at.key("args_mode");
    let Some(name) = node.as_str() else {
        cx.own_type_error(node, &mode_at, "a mode's name (a string)", EXTENSION);
        return None;
    };
    ArgsMode::from_name(name).or_else(|| {
        let mut d = Diagnostic::new(
            "unknown-mode",
            mode_at.path(),
            format!("unknown argument mode `{name}`"),
        )
        .at(node.span)
        .expected(format!("one of {}", list_names(&ArgsMode::NAMES)))
        .found(name);
        if let Some(hint) = did_you_mean(name, ArgsMode::NAMES) {
            d = d.help(hint);
        }
        cx.own(d, &mode_at, EXTENSION, None);
        None
    })
}

/// `mode` (a name or an alias), or `strict: true`, of a `tool_sequence` object; not
/// both.
fn sequence_mode(value: &Node, at: &At, cx: &mut Cx) -> Option<SequenceMode> {
    let strict = match value.get("strict") {
        None => None,
        Some(n) => Some(boolean(n, &at.key("strict"), cx)?),
    };
    let Some(node) = value.get("mode") else {
        return Some(if strict == Some(true) {
            SequenceMode::Strict
        } else {
            SequenceMode::InOrder
        });
    };
    let mode_at = at.key("mode");
    let Some(name) = node.as_str() else {
        cx.own_type_error(node, &mode_at, "a mode's name (a string)", EXTENSION);
        return None;
    };
    let Some(mode) = SequenceMode::from_name(name) else {
        let aliases = SequenceMode::ALIASES.iter().map(|(a, _)| *a);
        let mut d = Diagnostic::new(
            "unknown-mode",
            mode_at.path(),
            format!("unknown mode `{name}`"),
        )
        .at(node.span)
        .expected(format!("one of {}", list_names(&SequenceMode::NAMES)))
        .found(name);
        // Prill's own names first: `any-order` is `any_order`, not ADK's `ANY_ORDER`
        // (which is `superset`).
        let hint = did_you_mean(name, SequenceMode::NAMES).or_else(|| did_you_mean(name, aliases));
        if let Some(hint) = hint {
            d = d.help(hint);
        }
        cx.own(d, &mode_at, EXTENSION, None);
        return None;
    };
    if strict.is_some() {
        let d = Diagnostic::new(
            "two-modes",
            at.key("strict").path(),
            "`strict` and `mode` both say how calls are matched",
        )
        .at(value.span)
        .expected("`mode` alone")
        .help("`strict: true` is `mode: strict`; remove `strict`");
        cx.own(d, at, EXTENSION, None);
        return None;
    }
    Some(mode)
}

/// `score: f1` with its `threshold`, of a `tool_sequence` object: `Some(None)` without
/// a score.
fn score(value: &Node, at: &At, cx: &mut Cx) -> Option<Option<f64>> {
    let threshold = value.get("threshold");
    let Some(score) = value.get("score") else {
        if let Some(t) = threshold {
            let d = Diagnostic::new(
                "threshold-without-score",
                at.key("threshold").path(),
                "a threshold needs the score it is for",
            )
            .at(t.span)
            .expected("`score: f1` beside it");
            cx.own(d, at, EXTENSION, None);
            return None;
        }
        return Some(None);
    };
    if score.as_str() != Some("f1") {
        let d = Diagnostic::new(
            "unknown-score",
            at.key("score").path(),
            "the only score of a tool sequence is `f1`",
        )
        .at(score.span)
        .expected("`f1`");
        cx.own(d, &at.key("score"), EXTENSION, Some(score));
        return None;
    }
    let Some(t) = threshold else {
        missing(
            value,
            at,
            "threshold",
            "the least F1 score that passes, above 0 and at most 1",
            cx,
        );
        return None;
    };
    let number = match &t.value {
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match number {
        Some(x) if x > 0.0 && x <= 1.0 => Some(Some(x)),
        _ => {
            let d = Diagnostic::new(
                "out-of-range",
                at.key("threshold").path(),
                "must be above 0 and at most 1",
            )
            .at(t.span)
            .expected("a number in (0, 1]");
            cx.own(d, &at.key("threshold"), EXTENSION, Some(t));
            None
        }
    }
}

/// `must_not_call_tool`: a tool name or a non-empty list of them.
pub(in crate::validate) fn tool_names(value: &Node, at: &At, cx: &mut Cx) -> Option<Vec<String>> {
    match &value.value {
        Value::String(_) => name(value, at, cx).map(|s| vec![s]),
        Value::Array(_) => tool_list(value, at, cx),
        _ => {
            cx.own_type_error(value, at, "a tool name or a list of them", EXTENSION);
            None
        }
    }
}

/// The items of `value`, a non-empty list (else the error, saying a list of `what`, with
/// `help` when given).
fn non_empty<'n>(
    value: &'n Node,
    at: &At,
    what: &str,
    help: Option<&str>,
    cx: &mut Cx,
) -> Option<&'n [Node]> {
    let Some(items) = value.as_array() else {
        cx.own_type_error(value, at, what, EXTENSION);
        return None;
    };
    if items.is_empty() {
        let mut d = Diagnostic::new("empty-list", at.path(), "must have at least one item")
            .at(value.span)
            .expected("at least 1 tool name");
        if let Some(help) = help {
            d = d.help(help);
        }
        cx.own(d, at, "an empty list of tools checks nothing", Some(value));
        return None;
    }
    Some(items)
}

/// A non-empty list of non-empty tool names.
fn tool_list(value: &Node, at: &At, cx: &mut Cx) -> Option<Vec<String>> {
    let items = non_empty(value, at, "a list of tool names", None, cx)?;
    let names: Vec<Option<String>> = items
        .iter()
        .enumerate()
        .map(|(i, n)| name(n, &at.index(i), cx))
        .collect();
    names.into_iter().collect()
}

/// A non-empty tool name.
pub(super) fn name(node: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    let Some(s) = node.as_str() else {
        cx.own_type_error(node, at, "a tool name (a string)", EXTENSION);
        return None;
    };
    if s.is_empty() {
        let d = Diagnostic::new("empty-string", at.path(), "must not be empty")
            .at(node.span)
            .expected("a tool name");
        cx.own(d, at, "no tool has an empty name", Some(node));
        return None;
    }
    Some(s.to_owned())
}

/// `trajectory_gist`'s criteria: a text that says something.
pub(in crate::validate) fn criteria(node: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    let Some(s) = node.as_str() else {
        cx.own_type_error(node, at, "criteria text (a string)", EXTENSION);
        return None;
    };
    if s.trim().is_empty() {
        let d = Diagnostic::new("empty-string", at.path(), "must not be empty")
            .at(node.span)
            .expected("criteria text the judge can hold the trajectory to");
        cx.own(d, at, "empty criteria judge nothing", Some(node));
        return None;
    }
    Some(s.to_owned())
}

/// `true` or `false`.
fn boolean(node: &Node, at: &At, cx: &mut Cx) -> Option<bool> {
    match node.value {
        Value::Bool(b) => Some(b),
        _ => {
            cx.own_type_error(node, at, "`true` or `false`", EXTENSION);
            None
        }
    }
}

/// A required field absent from the object `value`.
fn missing(value: &Node, at: &At, field: &str, expected: &str, cx: &mut Cx) {
    let d = Diagnostic::new(
        "missing-field",
        at.key(field).path(),
        format!("missing required field `{field}`"),
    )
    .at(value.span)
    .expected(expected);
    cx.own(d, at, EXTENSION, None);
}

/// `tool_args`: `{tool, args: {name: matcher, ...}}`.
pub(in crate::validate) fn tool_args(value: &Node, at: &At, cx: &mut Cx) -> Option<ToolArgs> {
    call(value, at, Empty::Refused, cx)
}

/// What an empty `args` object means where it is written.
#[derive(Clone, Copy, PartialEq)]
enum Empty {
    /// Nothing to check: an error (`tool_args`).
    Refused,
    /// A call with no arguments (an item of `tool_sequence`).
    NoArguments,
}

/// `{tool, args: {name: matcher, ...}}`, `args` possibly empty where `empty` allows.
fn call(value: &Node, at: &At, empty: Empty, cx: &mut Cx) -> Option<ToolArgs> {
    let Value::Object(entries) = &value.value else {
        let expected = "`{tool: name, args: {argument: value or matcher}}`";
        cx.own_type_error(value, at, expected, EXTENSION);
        return None;
    };
    cx.unknown_keys_because(
        entries,
        at,
        &["tool", "args"],
        |k| {
            matches!(k, "arguments" | "params" | "parameters" | "input")
                .then(|| "the arguments go under `args`".to_owned())
        },
        EXTENSION,
    );
    let before = cx.errors();
    let tool = match value.get("tool") {
        Some(n) => name(n, &at.key("tool"), cx),
        None => {
            missing(value, at, "tool", "the tool's name", cx);
            None
        }
    };
    let args = match value.get("args") {
        Some(n) => args(n, &at.key("args"), empty, cx),
        None => {
            missing(value, at, "args", "the arguments to match, by name", cx);
            None
        }
    };
    if cx.errors() > before {
        return None;
    }
    Some(ToolArgs {
        tool: tool?,
        args: args?,
    })
}

/// `args`: an object of argument matchers, not empty unless `empty` allows.
fn args(value: &Node, at: &At, empty: Empty, cx: &mut Cx) -> Option<Vec<(String, ArgMatcher)>> {
    let Value::Object(entries) = &value.value else {
        cx.own_type_error(value, at, "an object of arguments", EXTENSION);
        return None;
    };
    if entries.is_empty() && empty == Empty::Refused {
        let d = Diagnostic::new("empty-object", at.path(), "must name at least one argument")
            .at(value.span)
            .expected("at least 1 argument")
            .help("to check only that the tool was called, write `must_call_tool`");
        cx.own(d, at, "an empty `args` checks nothing", Some(value));
        return None;
    }
    let out: Vec<Option<(String, ArgMatcher)>> = entries
        .iter()
        .map(|(key, n)| matcher(n, &at.key(&key.name), cx).map(|m| (key.name.clone(), m)))
        .collect();
    out.into_iter().collect()
}

/// One argument's matcher: a one-key object whose key is a matcher's name, or an
/// exact value. A one-key object whose key is close to a matcher's name is an error,
/// so a typo does not silently become an exact value.
fn matcher(value: &Node, at: &At, cx: &mut Cx) -> Option<ArgMatcher> {
    let Some([(k, inner)]) = value.as_object() else {
        return Some(ArgMatcher::Equals(value.to_json()));
    };
    let inner_at = at.key(&k.name);
    match k.name.as_str() {
        "equals" => Some(ArgMatcher::Equals(inner.to_json())),
        "regex" => {
            if inner.as_str().is_none() {
                cx.own_type_error(
                    inner,
                    &inner_at,
                    "a regular expression (a string)",
                    EXTENSION,
                );
                return None;
            }
            let why = "Prill reads Rust `regex` syntax (no look-around, no back-references)";
            regex_because(inner, &inner_at, cx, why).map(ArgMatcher::Regex)
        }
        "contains" => {
            if inner.as_str() == Some("") {
                let d = Diagnostic::new("empty-string", inner_at.path(), "must not be empty")
                    .at(inner.span)
                    .expected("the text or item to look for");
                cx.own(
                    d,
                    &inner_at,
                    "every string holds the empty text",
                    Some(inner),
                );
                return None;
            }
            Some(ArgMatcher::Contains(inner.to_json()))
        }
        "schema" => schema(inner, &inner_at, cx).map(ArgMatcher::Schema),
        other => match misspelt_matcher(other) {
            None => Some(ArgMatcher::Equals(value.to_json())),
            Some(hint) => {
                let d = Diagnostic::new(
                    "unknown-matcher",
                    inner_at.path(),
                    format!("unknown argument matcher `{other}`"),
                )
                .at(k.span)
                .expected(format!("one of {}", list_names(&ArgMatcher::KEYS)))
                .found(other)
                .help(format!(
                    "{hint} To match this object exactly, write `{{equals: {{{other}: ...}}}}`"
                ));
                cx.own(
                    d,
                    &inner_at,
                    "a one-key object named like a matcher is most likely a misspelt matcher",
                    None,
                );
                None
            }
        },
    }
}

/// A did-you-mean for a key one or two edits from a matcher's name (`regx`, `shema`),
/// not for any key that merely resembles one (`content` is not `contains`).
fn misspelt_matcher(key: &str) -> Option<String> {
    let close = ArgMatcher::KEYS
        .iter()
        .copied()
        .filter(|m| strsim::levenshtein(&key.to_ascii_lowercase(), m) <= 2);
    did_you_mean(key, close)
}

/// `schema`: a JSON Schema (an object or a boolean) that compiles.
fn schema(node: &Node, at: &At, cx: &mut Cx) -> Option<ArgSchema> {
    schema_because(node, at, EXTENSION, cx)
}

/// [`schema`], saying `why` the rule is Prill's.
pub(super) fn schema_because(node: &Node, at: &At, why: &str, cx: &mut Cx) -> Option<ArgSchema> {
    if !matches!(node.value, Value::Object(_) | Value::Bool(_)) {
        cx.own_type_error(node, at, "a JSON Schema (an object)", why);
        return None;
    }
    let json = node.to_json();
    let problem = super::json_schema_problem(&json);
    let compiled = match problem {
        Some(p) => Err(p),
        None => ArgSchema::new(json),
    };
    match compiled {
        Ok(s) => Some(s),
        Err(problem) => {
            let d = Diagnostic::new(
                "invalid-json-schema",
                at.path(),
                format!("not a valid JSON Schema: {problem}"),
            )
            .at(node.span)
            .expected("a JSON Schema, e.g. `{type: string, maxLength: 50}`");
            cx.own(d, at, why, None);
            None
        }
    }
}

/// A count of tool calls (`max_tool_calls`, at least 0) or of model calls
/// (`max_iterations_used`, `min_tool_calls`: at least `min`).
pub(in crate::validate) fn count(node: &Node, at: &At, min: u64, cx: &mut Cx) -> Option<u64> {
    // A negative whole number reads as 0 here, to be refused as out of range below.
    let n = match &node.value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f < 9.0e15)
                .map(|f| f.max(0.0) as u64)
        }),
        _ => None,
    };
    let Some(n) = n else {
        let expected = format!("an integer of at least {min}");
        cx.own_type_error(node, at, &expected, EXTENSION);
        return None;
    };
    let negative = node.to_json().as_f64().is_some_and(|f| f < 0.0);
    if n < min || negative {
        let d = Diagnostic::new("out-of-range", at.path(), format!("must be at least {min}"))
            .at(node.span)
            .expected(format!("at least {min}"));
        let why = if negative {
            "a count is never negative"
        } else if at.path().ends_with("max_iterations_used") {
            "a response takes at least one model call"
        } else {
            "a minimum of 0 checks nothing"
        };
        cx.own(d, at, why, Some(node));
        return None;
    }
    Some(n)
}

/// `min_tool_calls` above `max_tool_calls` can never pass.
pub(super) fn call_bounds(node: &Node, at: &At, list: &[Assertion], cx: &mut Cx) {
    let bounds = super::assertions::Bounds {
        min: "min_tool_calls",
        max: "max_tool_calls",
        nothing: "no response can pass",
        why: EXTENSION,
    };
    bounds.check(node, at, list, cx, |a| match a {
        Assertion::MinToolCalls(n) => Some((true, *n)),
        Assertion::MaxToolCalls(n) => Some((false, *n)),
        _ => None,
    });
}
