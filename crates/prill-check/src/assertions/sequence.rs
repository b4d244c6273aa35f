//! `tool_sequence` and `graph_steps`: names matched to the calls made (or the steps a
//! graph ran) one to one as the mode says (`matching.rs`), with each call's arguments
//! fitted as `args_mode` says, and the messages that say what was found.

use prill_spec::model::sentinel::{ArgMatcher, ArgsMode, SequenceMode, ToolSequence};
use serde_json::{Value, json};

use super::trajectory::{ARGS_CHARS, arguments, matches};
use super::{AssertionError, matching};
use crate::evaluation::{Evaluation, Threshold};
use crate::response::ToolCall;
use crate::text::cut;

/// What `graph_steps` looks at.
pub(super) const STEPS_TARGET: &str = "graph_steps";

fn names(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(|c| c.name.as_str()).collect()
}

/// `tool_sequence`: the tools matched to the calls as its mode says (each tool to at
/// most one call and each call to at most one tool, as many as can be: `matching.rs`);
/// with `score: f1`, the F1 score of the matched calls against its threshold.
pub(super) fn sequence(seq: &ToolSequence, calls: &[ToolCall]) -> (Evaluation, String) {
    matched(seq, calls, &CALLS)
}

/// `graph_steps`: the nodes matched to the steps a graph ran as the mode says, as
/// `tool_sequence` matches tools to calls. A response that does not say which nodes ran
/// (no LangGraph run) cannot be checked.
pub(super) fn graph_steps(
    seq: &ToolSequence,
    steps: Option<&[String]>,
) -> Result<(Evaluation, String), AssertionError> {
    let steps = steps.ok_or(AssertionError::StepsNotRecorded)?;
    let steps: Vec<ToolCall> = steps
        .iter()
        .map(|s| ToolCall::new(s.clone(), Value::Null))
        .collect();
    Ok(matched(seq, &steps, &STEPS))
}

/// How the messages speak of what was matched.
pub(super) struct Words {
    /// The things, plural: `calls`.
    items: &'static str,
    /// One of them: `call`.
    item: &'static str,
    /// What was done to a name: `called`.
    did: &'static str,
    /// One of them, of a name: `call to`.
    one_of: &'static str,
    /// Them, of names: `calls to`.
    many_of: &'static str,
    /// None at all: `no tool calls`.
    none: &'static str,
}

/// Tools and the calls made.
const CALLS: Words = Words {
    items: "calls",
    item: "call",
    did: "called",
    one_of: "call to",
    many_of: "calls to",
    none: "no tool calls",
};

/// A graph's nodes and the steps it ran.
const STEPS: Words = Words {
    items: "steps",
    item: "step",
    did: "ran",
    one_of: "run of",
    many_of: "runs of",
    none: "no steps",
};

/// The names as `a → b → c`, or what says there are none.
fn arrow_of(names: &[&str], words: &Words) -> String {
    if names.is_empty() {
        words.none.to_owned()
    } else {
        names.join(" → ")
    }
}

/// The sequence's names matched to `calls` (tool calls, or a graph's steps).
fn matched(seq: &ToolSequence, calls: &[ToolCall], words: &Words) -> (Evaluation, String) {
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
            arrow_of(&wanted, words),
            if seq.mode.ordered() {
                "in order"
            } else {
                "in any order"
            },
            seq.mode.name(),
            arrow_of(&called, words),
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
            mode_message(seq.mode, passed, &wanted, &found, words)
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
fn mode_message(
    mode: SequenceMode,
    passed: bool,
    wanted: &[&str],
    found: &Found,
    words: &Words,
) -> String {
    let Found {
        called,
        missing,
        unexpected,
        prefix,
    } = *found;
    let Words {
        items,
        item,
        did,
        one_of,
        many_of,
        none,
    } = *words;
    let arrow = |names: &[&str]| arrow_of(names, words);
    if wanted.is_empty() {
        // Only `strict`, `any_order` and `subset` take an empty list: none at all.
        return if passed {
            format!("{none}, as expected")
        } else {
            format!("expected {none}, found {}", arrow(called))
        };
    }
    let set = wanted.join(", ");
    match (mode, passed) {
        (SequenceMode::Strict, true) => format!("{did} exactly {}", arrow(wanted)),
        (SequenceMode::Strict, false) => format!(
            "expected exactly the {items} {}, found {}",
            arrow(wanted),
            arrow(called)
        ),
        (SequenceMode::InOrder, true) => format!("{did} {} in order", arrow(wanted)),
        (SequenceMode::InOrder, false) => {
            format!(
                "expected {items} in the order {}, found {} (no {one_of} {} after {})",
                arrow(wanted),
                arrow(called),
                wanted.get(prefix).copied().unwrap_or("the last one"),
                if prefix == 0 {
                    "the start".to_owned()
                } else {
                    wanted[..prefix].join(" → ")
                }
            )
        }
        (SequenceMode::AnyOrder, true) => format!("{did} exactly {set}, in some order"),
        (SequenceMode::AnyOrder, false) => format!(
            "expected exactly the {items} {set}, in any order, found {}{}",
            arrow(called),
            differences(missing, unexpected)
        ),
        (SequenceMode::Subset, true) => format!("every {item} was one of {set}"),
        (SequenceMode::Subset, false) => format!(
            "expected every {item} to be one of {set}, found {}{}",
            arrow(called),
            differences(&[], unexpected)
        ),
        (SequenceMode::Superset, true) => format!("{did} {set}, in some order"),
        (SequenceMode::Superset, false) => format!(
            "expected {many_of} {set}, in any order, found {}{}",
            arrow(called),
            differences(missing, &[])
        ),
    }
}
