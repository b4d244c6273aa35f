//! Validates a Sentinel test's `assertions`: each item one key, each value of the shape
//! its assertion takes.
//!
//! The DSL's own rules (an item is an object with one key; the value types of its
//! table) carry the Sentinel block. Prill's stricter rules (a known assertion name, an
//! empty text or tool list, a regex that compiles, `min_tokens` at most `max_tokens`)
//! say that they are Prill's: Sentinel loads such a file and fails, or passes, the
//! assertion when it runs.

use super::super::cx::{At, Cx, Pyd, a_type, list_names};
use super::trajectory;
use crate::diag::{Diagnostic, did_you_mean};
use crate::model::sentinel::{Assertion, OutputType, Pattern, TextMatch};
use crate::node::{Key, Node, Span, Value};

/// Names Sentinel users write for assertions Prill spells otherwise, with the way to
/// write them. The first three are in Sentinel's own release notes, which renamed them.
const ALIASES: [(&str, &str); 18] = [
    (
        "tool_called",
        "Sentinel renamed `tool_called` to `must_call_tool`: write `must_call_tool: [name]`",
    ),
    (
        "is_json",
        "Sentinel replaced `is_json` with `output_type`: write `output_type: json`",
    ),
    (
        "word_count_min",
        "Sentinel replaced `word_count_min` with `min_tokens`: write `min_tokens: N` (a count of tokens, not words)",
    ),
    (
        "word_count_max",
        "write `max_tokens: N` (a count of tokens, not words)",
    ),
    (
        "min_words",
        "write `min_tokens: N` (a count of tokens, not words)",
    ),
    (
        "max_words",
        "write `max_tokens: N` (a count of tokens, not words)",
    ),
    ("contains", "write `must_contain`"),
    ("not_contains", "write `must_not_contain`"),
    ("does_not_contain", "write `must_not_contain`"),
    ("regex", "write `regex_match`"),
    ("matches", "write `regex_match`"),
    ("is_markdown", "write `output_type: markdown`"),
    ("is_code", "write `output_type: code`"),
    ("max_latency", "write `max_latency_ms` (milliseconds)"),
    ("tool_not_called", "write `must_not_call_tool: [name]`"),
    ("tool_order", "write `tool_sequence: [first, second, ...]`"),
    ("trajectory", "write `tool_sequence: [first, second, ...]`"),
    (
        "max_iterations",
        "write `max_iterations_used: N` (model calls)",
    ),
];

/// Why Prill refuses an assertion name Sentinel would load.
const UNKNOWN_WHY: &str = "Sentinel loads it, and fails the assertion when the test runs";

pub(super) fn assertions(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<Assertion>> {
    let items = cx.nonempty_list(node, at)?;
    let out: Vec<Option<Assertion>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| assertion(item, &at.index(i), cx))
        .collect();
    out.into_iter().collect()
}

/// One item of `assertions`: an object with one key, the assertion's name.
fn assertion(node: &Node, at: &At, cx: &mut Cx) -> Option<Assertion> {
    let Value::Object(entries) = &node.value else {
        not_an_object(node, at, cx);
        return None;
    };
    let [(key, value)] = entries.as_slice() else {
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
        not_one_key(node, at, &keys, cx);
        return None;
    };
    let at = at.key(&key.name);
    match key.name.as_str() {
        "must_contain" => text_match(value, &at, cx).map(Assertion::MustContain),
        "must_not_contain" => text_match(value, &at, cx).map(Assertion::MustNotContain),
        "regex_match" => regex(value, &at, cx).map(Assertion::RegexMatch),
        "must_call_tool" => tool_names(value, &at, cx).map(Assertion::MustCallTool),
        "output_type" => {
            let name = cx.choice(value, &at, &OutputType::NAMES, true)?;
            OutputType::from_name(&name).map(Assertion::OutputType)
        }
        "max_latency_ms" => own_positive(value, &at, cx).map(Assertion::MaxLatencyMs),
        "min_tokens" => non_negative(value, &at, cx).map(Assertion::MinTokens),
        "max_tokens" => own_positive(value, &at, cx).map(Assertion::MaxTokens),
        "tool_sequence" => trajectory::tool_sequence(value, &at, cx).map(Assertion::ToolSequence),
        "must_not_call_tool" => {
            trajectory::tool_names(value, &at, cx).map(Assertion::MustNotCallTool)
        }
        "tool_args" => {
            trajectory::tool_args(value, &at, cx).map(|a| Assertion::ToolArgs(Box::new(a)))
        }
        "max_tool_calls" => trajectory::count(value, &at, 0, cx).map(Assertion::MaxToolCalls),
        "min_tool_calls" => trajectory::count(value, &at, 1, cx).map(Assertion::MinToolCalls),
        "max_iterations_used" => {
            trajectory::count(value, &at, 1, cx).map(Assertion::MaxIterationsUsed)
        }
        "graph_steps" => trajectory::graph_steps(value, &at, cx).map(Assertion::GraphSteps),
        "trajectory_gist" => trajectory::criteria(value, &at, cx).map(Assertion::TrajectoryGist),
        "not_trajectory_gist" => {
            trajectory::criteria(value, &at, cx).map(Assertion::NotTrajectoryGist)
        }
        "expect_state" => {
            super::state::expect_state(value, &at, cx).map(|e| Assertion::ExpectState(Box::new(e)))
        }
        other => {
            unknown(other, key.span, &at, cx);
            None
        }
    }
}

/// An item with no key or with several: the DSL's rule.
fn not_one_key(node: &Node, at: &At, keys: &[&str], cx: &mut Cx) {
    let (sentence, help) = if keys.is_empty() {
        (
            "an assertion has exactly one key, found an empty item".to_owned(),
            "write the check in the item, e.g. `- must_contain: \"Paris\"`, or remove the empty item",
        )
    } else {
        (
            format!(
                "an assertion has exactly one key, found {}: {}",
                keys.len(),
                list_names(keys)
            ),
            "write each assertion as its own list item",
        )
    };
    let d = Diagnostic::new("invalid-assertion", at.path(), sentence.clone())
        .at(node.span)
        .help(help);
    cx.report(
        d,
        at,
        Some(Pyd::new("value_error", format!("Value error, {sentence}"))),
        Some(node),
    );
}

/// An assertion name Prill does not know (Prill's rule), with the way to write it when
/// it is a name Sentinel users write, or the closest name.
fn unknown(name: &str, span: Span, at: &At, cx: &mut Cx) {
    let help = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, hint)| (*hint).to_owned())
        .or_else(|| did_you_mean(name, Assertion::NAMES.iter().copied()));
    let d = Diagnostic::new(
        "unknown-assertion",
        at.path(),
        format!("unknown assertion `{name}`"),
    )
    .at(span)
    .expected(format!("one of {}", list_names(&Assertion::NAMES)))
    .maybe_help(help);
    cx.own(d, at, UNKNOWN_WHY, None);
}

/// An item that is not an object: the DSL's rule, with a hint for a bare name.
fn not_an_object(node: &Node, at: &At, cx: &mut Cx) {
    let d = Diagnostic::new(
        "invalid-type",
        at.path(),
        format!(
            "expected an assertion such as `must_contain: \"x\"`, found {}",
            a_type(node)
        ),
    )
    .at(node.span)
    .expected(format!(
        "an object with one key: {}",
        list_names(&Assertion::NAMES)
    ))
    .maybe_help(node.as_str().and_then(|s| {
        Assertion::NAMES
            .contains(&s)
            .then(|| format!("give `{s}` a value: `- {s}: ...`"))
    }));
    cx.report(
        d,
        at,
        Some(Pyd::new("dict_type", "Input should be a valid dictionary")),
        Some(node),
    );
}

/// `must_contain` / `must_not_contain`: a text (the DSL's form), a list of texts, or
/// `{text, case_sensitive}` (Prill's).
fn text_match(value: &Node, at: &At, cx: &mut Cx) -> Option<TextMatch> {
    match &value.value {
        Value::String(_) | Value::Array(_) => texts(value, at, cx).map(TextMatch::all),
        Value::Object(entries) => text_match_object(value, entries, at, cx),
        _ => {
            cx.type_error(
                value,
                at,
                "a string",
                Pyd::new("string_type", "Input should be a valid string"),
            );
            None
        }
    }
}

/// `{text, case_sensitive}`: Prill's object form of `must_contain` / `must_not_contain`.
fn text_match_object(
    value: &Node,
    entries: &[(Key, Node)],
    at: &At,
    cx: &mut Cx,
) -> Option<TextMatch> {
    cx.unknown_keys_because(
        entries,
        at,
        &["text", "case_sensitive"],
        |_| None,
        "the object form is Prill's; it takes `text` and `case_sensitive`",
    );
    let before = cx.errors();
    let texts = match value.get("text") {
        Some(n) => texts(n, &at.key("text"), cx),
        None => {
            let d = Diagnostic::new(
                "missing-field",
                at.key("text").path(),
                "missing required field `text`",
            )
            .at(value.span)
            .expected("the text to look for, or a list of texts");
            cx.own(d, at, "the object form names the text to look for", None);
            None
        }
    };
    let case_sensitive = match value.get("case_sensitive") {
        None => Some(false),
        Some(n) => match n.value {
            Value::Bool(b) => Some(b),
            _ => {
                let at = at.key("case_sensitive");
                cx.own_type_error(n, &at, "`true` or `false`", "the object form is Prill's");
                None
            }
        },
    };
    if cx.errors() > before {
        return None;
    }
    Some(TextMatch::all(texts?).case_sensitive(case_sensitive?))
}

/// One non-empty text, or a non-empty list of them.
fn texts(value: &Node, at: &At, cx: &mut Cx) -> Option<Vec<String>> {
    const EMPTY_WHY: &str = "an empty text is in every output, so it checks nothing";
    match &value.value {
        Value::Array(_) => {
            let items = own_nonempty_list(value, at, cx, "text", "an empty list checks nothing")?;
            let out: Vec<Option<String>> = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let at = at.index(i);
                    if !matches!(item.value, Value::String(_)) {
                        let why = "each item of the list is a text to look for";
                        cx.own_type_error(item, &at, "a string", why);
                        return None;
                    }
                    own_nonempty(item, &at, cx, EMPTY_WHY)
                })
                .collect();
            out.into_iter().collect()
        }
        _ => {
            cx.string(value, at)?;
            own_nonempty(value, at, cx, EMPTY_WHY).map(|s| vec![s])
        }
    }
}

/// The items of a list (of `what`s), which Prill's rule wants to have at least one.
fn own_nonempty_list<'n>(
    value: &'n Node,
    at: &At,
    cx: &mut Cx,
    what: &str,
    why: &str,
) -> Option<&'n [Node]> {
    let items = value.as_array()?;
    if items.is_empty() {
        let d = Diagnostic::new("empty-list", at.path(), "must have at least one item")
            .at(value.span)
            .expected(format!("at least 1 {what}"));
        cx.own(d, at, why, Some(value));
        return None;
    }
    Some(items)
}

/// A string of at least one character, where the DSL would accept an empty one.
fn own_nonempty(node: &Node, at: &At, cx: &mut Cx, why: &str) -> Option<String> {
    let s = node.as_str()?.to_owned();
    if s.is_empty() {
        let d = Diagnostic::new("empty-string", at.path(), "must not be empty")
            .at(node.span)
            .expected("at least 1 character");
        cx.own(d, at, why, Some(node));
        return None;
    }
    Some(s)
}

/// A regular expression that compiles (Sentinel compiles it only when the test runs,
/// and fails the assertion when it does not).
fn regex(value: &Node, at: &At, cx: &mut Cx) -> Option<Pattern> {
    regex_because(
        value,
        at,
        cx,
        "Sentinel compiles the pattern only when the test runs; Prill reads Rust `regex` syntax (no look-around, no back-references)",
    )
}

/// [`regex`], saying `why` a pattern that does not compile is refused.
pub(super) fn regex_because(value: &Node, at: &At, cx: &mut Cx, why: &str) -> Option<Pattern> {
    cx.string(value, at)?;
    let pattern = own_nonempty(value, at, cx, "an empty pattern matches every output")?;
    let compiled = cx
        .regexes
        .entry(pattern.clone())
        .or_insert_with(|| Pattern::new(&pattern).map_err(|e| first_line_of_regex_error(&e)))
        .clone();
    match compiled {
        Ok(compiled) => Some(compiled),
        Err(reason) => {
            let d = Diagnostic::new(
                "invalid-regex",
                at.path(),
                format!("invalid regular expression: {reason}"),
            )
            .at(value.span);
            cx.own(d, at, why, Some(value));
            None
        }
    }
}

/// A tool name or a non-empty list of them.
fn tool_names(value: &Node, at: &At, cx: &mut Cx) -> Option<Vec<String>> {
    const WHY: &str = "an empty tool name or list checks nothing";
    match &value.value {
        Value::String(_) => own_nonempty(value, at, cx, WHY).map(|s| vec![s]),
        Value::Array(_) => {
            let items = own_nonempty_list(value, at, cx, "tool name", WHY)?;
            let names: Vec<Option<String>> = items
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let at = at.index(i);
                    cx.string(n, &at)?;
                    own_nonempty(n, &at, cx, WHY)
                })
                .collect();
            names.into_iter().collect()
        }
        _ => {
            cx.type_error(
                value,
                at,
                "a tool name or a list of them",
                Pyd::new(
                    "string_type",
                    "Input should be a valid string or a valid list",
                ),
            );
            None
        }
    }
}

/// An integer (the DSL's rule) greater than zero (Prill's: zero can never pass).
fn own_positive(node: &Node, at: &At, cx: &mut Cx) -> Option<u64> {
    let n = cx.integer(node, at)?;
    if n <= 0 {
        let d = Diagnostic::new("out-of-range", at.path(), "must be greater than 0")
            .at(node.span)
            .expected("greater than 0");
        cx.own(d, at, "no response meets a limit of 0", Some(node));
        return None;
    }
    u64::try_from(n).ok()
}

/// An integer (the DSL's rule) of at least zero (Prill's: a count is never negative).
fn non_negative(node: &Node, at: &At, cx: &mut Cx) -> Option<u64> {
    let n = cx.integer(node, at)?;
    if n < 0 {
        let d = Diagnostic::new("out-of-range", at.path(), "must be at least 0")
            .at(node.span)
            .expected("at least 0");
        cx.own(d, at, "a token count is never negative", Some(node));
        return None;
    }
    u64::try_from(n).ok()
}

/// `min_tokens` above `max_tokens` can never pass.
pub(super) fn token_bounds(node: &Node, at: &At, list: &[Assertion], cx: &mut Cx) {
    let bounds = Bounds {
        min: "min_tokens",
        max: "max_tokens",
        nothing: "no output can pass",
        why: "Sentinel runs such a test, and it always fails",
    };
    bounds.check(node, at, list, cx, |a| match a {
        Assertion::MinTokens(n) => Some((true, *n)),
        Assertion::MaxTokens(n) => Some((false, *n)),
        _ => None,
    });
}

/// A pair of assertions that bound one count from below and from above (`min_tokens`
/// and `max_tokens`, `min_tool_calls` and `max_tool_calls`): a lower bound above the
/// upper one is an error, as no answer can pass.
pub(super) struct Bounds {
    /// The lower bound's name.
    pub(super) min: &'static str,
    /// The upper bound's name.
    pub(super) max: &'static str,
    /// The end of the message: `no output can pass`.
    pub(super) nothing: &'static str,
    /// Why it is Prill's rule (see `Cx::own`).
    pub(super) why: &'static str,
}

impl Bounds {
    /// Checks `list`; `bound` reads an assertion as `(is_lower, value)`, or `None`
    /// for assertions of other kinds.
    pub(super) fn check(
        &self,
        node: &Node,
        at: &At,
        list: &[Assertion],
        cx: &mut Cx,
        bound: impl Fn(&Assertion) -> Option<(bool, u64)>,
    ) {
        let find = |lower: bool| {
            list.iter()
                .filter_map(&bound)
                .find_map(|(is_lower, n)| (is_lower == lower).then_some(n))
        };
        let (Some(min), Some(max)) = (find(true), find(false)) else {
            return;
        };
        if min <= max {
            return;
        }
        let span = node.get("assertions").map(|n| n.span).unwrap_or(node.span);
        let d = Diagnostic::new(
            "value-error",
            at.key("assertions").path(),
            format!(
                "{} {min} is greater than {} {max}; {}",
                self.min, self.max, self.nothing
            ),
        )
        .at(span);
        cx.own(d, &at.key("assertions"), self.why, None);
    }
}

/// The regex crate's message is a multi-line snippet; keep its last line, the reason.
fn first_line_of_regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: ").map(str::to_owned))
        .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_owned())
}
