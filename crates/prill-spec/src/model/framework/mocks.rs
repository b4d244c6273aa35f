//! The mocks of Prill's tool loop (`framework_config.tool_results`): each tool's
//! answers (always the same, in order, or by its arguments, with errors and delays) and
//! what its calls must be (`expect_calls`), read from the dictionary as written with
//! every problem at its path. `docs/frameworks.md` has the forms.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Problem, ProblemKind};

/// What a tool returns, as `tool_results` gives it, and what its calls must be.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResults {
    /// How it answers.
    pub answers: Answers,
    /// What the calls it received must be (`expect_calls`), checked when the sample ends.
    pub expect_calls: Option<ExpectCalls>,
}

impl ToolResults {
    /// Answers with no expectation on the calls.
    pub fn answering(answers: Answers) -> ToolResults {
        ToolResults {
            answers,
            expect_calls: None,
        }
    }
}

/// How a mocked tool answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answers {
    /// The same answer every call (any JSON but a list, `{value: ...}`, or
    /// `{error: "..."}`).
    Always(ToolReply),
    /// One answer per call, in order (a list, or `sequence`), each a value, `{value: ...}`
    /// or `{error: "..."}`: "the first call errors, the second answers"; a call past the
    /// end is an error.
    InOrder(Vec<ToolReply>),
    /// By arguments (`{by_args: [{args: {...}, result: ...}], default: ...}`): the
    /// first row whose every `args` key matches the call's argument of that name
    /// ([`args_match`]); `default` when none does; an error when none does and there
    /// is no default.
    ByArgs {
        /// The rows, in order.
        rows: Vec<ArgsRow>,
        /// The answer when no row matches.
        default: Option<Box<ToolReply>>,
    },
}

/// One row of an [`Answers::ByArgs`] table.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgsRow {
    /// The arguments it answers: each key must match the call's argument.
    pub args: Map<String, Value>,
    /// What it answers: one answer (`result` or `error`), or one per call it matches,
    /// in order (`sequence`).
    pub replies: Vec<ToolReply>,
}

/// One answer of a mocked tool, after an optional delay.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// A result, or a tool error.
    pub outcome: Reply,
    /// How long the tool takes before it answers (`delay_in_seconds`); the time counts
    /// against the call's limit, so a delay past it is a timeout.
    pub delay: Option<std::time::Duration>,
}

impl ToolReply {
    /// A result, at once.
    pub fn value(value: Value) -> ToolReply {
        ToolReply {
            outcome: Reply::Value(value),
            delay: None,
        }
    }

    /// A tool error, at once.
    pub fn error(message: impl Into<String>) -> ToolReply {
        ToolReply {
            outcome: Reply::Error(message.into()),
            delay: None,
        }
    }
}

/// What a mocked tool answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A result.
    Value(Value),
    /// A tool error, with its message.
    Error(String),
}

/// What the calls a mocked tool received must be (`expect_calls`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum ExpectCalls {
    /// Exactly this many (`expect_calls: 2`), or between `min` and `max`
    /// (`expect_calls: {min: 1, max: 3}`).
    Count {
        /// The fewest.
        min: u32,
        /// The most, when bounded.
        #[serde(skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
    },
    /// Exactly these calls, in this order, each with arguments its pattern matches
    /// ([`args_match`]): `expect_calls: [{order_id: "#W1"}, {order_id: "*"}]`.
    Calls(Vec<Map<String, Value>>),
}

/// The tool and its `expect_calls`, as the check that reads the trajectory holds them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MockCalls {
    /// The mocked tool.
    pub tool: String,
    /// What its calls must be.
    pub expect: ExpectCalls,
}

/// The argument value that matches any value of a present argument.
pub const ANY: &str = "*";

/// Whether `arguments` (a call's) match `pattern`: every key of the pattern is an
/// argument of the call, equal to the pattern's value (numbers by value), or of any
/// value where the pattern says `"*"`. Arguments the pattern does not name may be
/// anything.
pub fn args_match(pattern: &Map<String, Value>, arguments: &Value) -> bool {
    pattern.iter().all(|(key, want)| match arguments.get(key) {
        None => false,
        Some(_) if want.as_str() == Some(ANY) => true,
        Some(found) => json_equal(want, found),
    })
}

/// JSON equality, with numbers compared by value (`1` equals `1.0`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

pub(super) fn tool_results(
    value: &Value,
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, ToolResults> {
    let Some(tools) = value.as_object() else {
        problems.push(Problem::expected(
            &["tool_results"],
            "an object: tool name -> its results",
            value,
        ));
        return BTreeMap::new();
    };
    tools
        .iter()
        .filter_map(|(name, results)| {
            let parsed = tool_result(name, results, problems)?;
            Some((name.clone(), parsed))
        })
        .collect()
}

/// The keys of a tool's results written as an object of settings rather than as a
/// value: an object whose every key is one of these is read as settings.
pub const TOOL_RESULT_KEYS: [&str; 7] = [
    "value",
    "error",
    "sequence",
    "by_args",
    "default",
    "delay_in_seconds",
    "expect_calls",
];

/// The keys of a `by_args` row.
pub const ROW_KEYS: [&str; 5] = ["args", "result", "error", "sequence", "delay_in_seconds"];

/// The longest `delay_in_seconds` taken: an hour.
pub const MAX_DELAY_SECONDS: f64 = 3600.0;

/// One tool's results: an object of settings (`value`, `error`, `sequence` or
/// `by_args`, with `default`, `delay_in_seconds`, `expect_calls`), a list (in order),
/// or any other value (the same every call).
fn tool_result(name: &str, value: &Value, problems: &mut Vec<Problem>) -> Option<ToolResults> {
    let at = ["tool_results", name];
    let object = match value {
        Value::Array(items) => {
            let replies = replies(&at, items, problems)?;
            return Some(ToolResults::answering(Answers::InOrder(replies)));
        }
        Value::Object(object) if is_settings(object, &TOOL_RESULT_KEYS) => object,
        other => {
            return Some(ToolResults::answering(Answers::Always(ToolReply::value(
                other.clone(),
            ))));
        }
    };
    let before = problems.len();
    let kinds: Vec<&str> = ["value", "error", "sequence", "by_args"]
        .into_iter()
        .filter(|k| object.contains_key(*k))
        .collect();
    let expect_calls = object
        .get("expect_calls")
        .and_then(|v| expect_calls(&[&at[..], &["expect_calls"]].concat(), v, problems));
    let answers = match kinds.as_slice() {
        ["value" | "error"] => reply(&at, value, problems).map(Answers::Always),
        ["sequence"] => {
            let at = [&at[..], &["sequence"]].concat();
            match object.get("sequence") {
                Some(Value::Array(items)) if !items.is_empty() => {
                    replies(&at, items, problems).map(Answers::InOrder)
                }
                other => {
                    problems.push(Problem::expected(
                        &at,
                        "a non-empty list of answers, one per call",
                        other.unwrap_or(&Value::Null),
                    ));
                    None
                }
            }
        }
        ["by_args"] => {
            let rows = object
                .get("by_args")
                .and_then(|rows| args_rows(name, rows, problems));
            let default = match object.get("default") {
                Some(d) => reply(&[&at[..], &["default"]].concat(), d, problems).map(Box::new),
                None => None,
            };
            rows.map(|rows| Answers::ByArgs { rows, default })
        }
        _ => {
            problems.push(Problem::expected(
                &at,
                "one of `value`, `error`, `sequence` or `by_args`",
                value,
            ));
            None
        }
    };
    if object.contains_key("default") && kinds != ["by_args"] {
        problems.push(Problem::expected(
            &[&at[..], &["default"]].concat(),
            "no `default` here: it answers the calls no `by_args` row matches",
            &object["default"],
        ));
    }
    if object.contains_key("delay_in_seconds")
        && matches!(kinds.as_slice(), ["sequence"] | ["by_args"])
    {
        problems.push(Problem::expected(
            &[&at[..], &["delay_in_seconds"]].concat(),
            "a delay on each answer of the `sequence` or row of `by_args`, not on the whole",
            &object["delay_in_seconds"],
        ));
    }
    if problems.len() > before {
        return None;
    }
    Some(ToolResults {
        answers: answers?,
        expect_calls,
    })
}

/// Whether an object is settings rather than a value: it has keys, and every one is
/// among `keys`.
fn is_settings(object: &Map<String, Value>, keys: &[&str]) -> bool {
    !object.is_empty() && object.keys().all(|k| keys.contains(&k.as_str()))
}

/// The answers of a list, in order.
fn replies(at: &[&str], items: &[Value], problems: &mut Vec<Problem>) -> Option<Vec<ToolReply>> {
    let before = problems.len();
    let replies: Vec<ToolReply> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| reply(&[at, &[i.to_string().as_str()]].concat(), item, problems))
        .collect();
    (problems.len() == before).then_some(replies)
}

/// One answer: `{value: X}` or `{error: "..."}`, either with `delay_in_seconds`; any
/// other value is the result itself.
fn reply(at: &[&str], value: &Value, problems: &mut Vec<Problem>) -> Option<ToolReply> {
    let Value::Object(object) = value else {
        return Some(ToolReply::value(value.clone()));
    };
    if !is_settings(object, &["value", "error", "delay_in_seconds"]) {
        return Some(ToolReply::value(value.clone()));
    }
    let delay = match object.get("delay_in_seconds") {
        Some(d) => Some(delay(&[at, &["delay_in_seconds"]].concat(), d, problems)?),
        None => None,
    };
    let outcome = match (object.get("value"), object.get("error")) {
        (Some(v), None) => Reply::Value(v.clone()),
        (None, Some(Value::String(message))) => Reply::Error(message.clone()),
        (None, Some(other)) => {
            problems.push(Problem::expected(
                &[at, &["error"]].concat(),
                "the tool's error message (a string)",
                other,
            ));
            return None;
        }
        (Some(_), Some(_)) => {
            problems.push(Problem::expected(at, "`value` or `error`, not both", value));
            return None;
        }
        (None, None) => {
            problems.push(Problem::expected(
                at,
                "`value` or `error` beside `delay_in_seconds`",
                value,
            ));
            return None;
        }
    };
    Some(ToolReply { outcome, delay })
}

/// `delay_in_seconds`: a number of seconds from 0 to an hour.
fn delay(at: &[&str], value: &Value, problems: &mut Vec<Problem>) -> Option<std::time::Duration> {
    match value.as_f64() {
        Some(s) if (0.0..=MAX_DELAY_SECONDS).contains(&s) => {
            std::time::Duration::try_from_secs_f64(s).ok()
        }
        _ => {
            problems.push(Problem::expected(
                at,
                "a number of seconds from 0 to 3600",
                value,
            ));
            None
        }
    }
}

/// `expect_calls`: a count, `{min, max}`, or the list of calls' argument patterns.
fn expect_calls(at: &[&str], value: &Value, problems: &mut Vec<Problem>) -> Option<ExpectCalls> {
    let count = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
    match value {
        Value::Number(_) => match count(value) {
            Some(n) => Some(ExpectCalls::Count {
                min: n,
                max: Some(n),
            }),
            None => {
                problems.push(Problem::expected(
                    at,
                    "a number of calls (0 or more)",
                    value,
                ));
                None
            }
        },
        Value::Object(object) if is_settings(object, &["min", "max"]) => {
            let min = object.get("min").map(|v| (v, count(v)));
            let max = object.get("max").map(|v| (v, count(v)));
            for (key, bound) in [("min", min), ("max", max)] {
                if let Some((v, None)) = bound {
                    problems.push(Problem::expected(
                        &[at, &[key]].concat(),
                        "a number of calls (0 or more)",
                        v,
                    ));
                    return None;
                }
            }
            let min = min.and_then(|(_, n)| n).unwrap_or(0);
            let max = max.and_then(|(_, n)| n);
            if max.is_some_and(|max| max < min) {
                problems.push(Problem::expected(at, "`min` at most `max`", value));
                return None;
            }
            Some(ExpectCalls::Count { min, max })
        }
        Value::Array(items) => {
            let before = problems.len();
            let calls: Vec<Map<String, Value>> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Value::Object(pattern) => Some(pattern.clone()),
                    other => {
                        problems.push(Problem::expected(
                            &[at, &[i.to_string().as_str()]].concat(),
                            "the arguments of a call, an object (`\"*\"` for any value)",
                            other,
                        ));
                        None
                    }
                })
                .collect();
            (problems.len() == before).then_some(ExpectCalls::Calls(calls))
        }
        other => {
            problems.push(Problem::expected(
                at,
                "a number of calls, `{min, max}`, or the list of the calls' arguments",
                other,
            ));
            None
        }
    }
}

fn args_rows(name: &str, rows: &Value, problems: &mut Vec<Problem>) -> Option<Vec<ArgsRow>> {
    let at = ["tool_results", name, "by_args"];
    let Some(items) = rows.as_array().filter(|r| !r.is_empty()) else {
        problems.push(Problem::expected(
            &at,
            "a non-empty list of `{args: {...}, result: ...}` rows",
            rows,
        ));
        return None;
    };
    let before = problems.len();
    let mut parsed = Vec::new();
    for (i, row) in items.iter().enumerate() {
        let index = i.to_string();
        let here = [&at[..], &[index.as_str()]].concat();
        if let Some(row) = args_row(&here, row, problems) {
            parsed.push(row);
        }
    }
    (problems.len() == before).then_some(parsed)
}

/// One row of `by_args`: `{args, result | error | sequence, delay_in_seconds}`.
fn args_row(here: &[&str], row: &Value, problems: &mut Vec<Problem>) -> Option<ArgsRow> {
    let Some(object) = row.as_object() else {
        problems.push(Problem::expected(here, "`{args: {...}, result: ...}`", row));
        return None;
    };
    for key in object.keys().filter(|k| !ROW_KEYS.contains(&k.as_str())) {
        problems.push(Problem {
            path: [here, &[key.as_str()]]
                .concat()
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            kind: ProblemKind::UnknownKey {
                allowed: ROW_KEYS.to_vec(),
                hint: None,
            },
        });
    }
    let args = match object.get("args") {
        Some(Value::Object(args)) => args.clone(),
        Some(other) => {
            problems.push(Problem::expected(
                &[here, &["args"]].concat(),
                "an object of argument values (`\"*\"` for any value)",
                other,
            ));
            return None;
        }
        None => Map::new(),
    };
    let kinds: Vec<&str> = ["result", "error", "sequence"]
        .into_iter()
        .filter(|k| object.contains_key(*k))
        .collect();
    let replies = match kinds.as_slice() {
        ["result" | "error"] => {
            let mut single = Map::new();
            for (from, to) in [
                ("result", "value"),
                ("error", "error"),
                ("delay_in_seconds", "delay_in_seconds"),
            ] {
                if let Some(v) = object.get(from) {
                    single.insert(to.to_owned(), v.clone());
                }
            }
            vec![reply(here, &Value::Object(single), problems)?]
        }
        ["sequence"] => {
            let at = [here, &["sequence"]].concat();
            if let Some(d) = object.get("delay_in_seconds") {
                problems.push(Problem::expected(
                    &[here, &["delay_in_seconds"]].concat(),
                    "a delay on each answer of the `sequence`, not on the row",
                    d,
                ));
                return None;
            }
            match object.get("sequence") {
                Some(Value::Array(items)) if !items.is_empty() => replies(&at, items, problems)?,
                other => {
                    problems.push(Problem::expected(
                        &at,
                        "a non-empty list of answers, one per call the row matches",
                        other.unwrap_or(&Value::Null),
                    ));
                    return None;
                }
            }
        }
        [] => {
            problems.push(Problem::expected(
                here,
                "a row with one of `result`, `error` or `sequence`",
                row,
            ));
            return None;
        }
        _ => {
            problems.push(Problem::expected(
                here,
                "a row with one of `result`, `error` or `sequence`, not several",
                row,
            ));
            return None;
        }
    };
    Some(ArgsRow { args, replies })
}
