//! Validates a data-driven test case tree into a [`DataDrivenCase`].
//!
//! Stricter than upstream on purpose: an unknown key or an unknown check name is an
//! error with a suggestion, because upstream ignores both and a misspelt check passes.
//! One kind of unknown top-level key is not a typo: in HOCON, a key that the file's own
//! substitutions refer to (`common = {...}` and then `${common}`) only holds shared
//! parts; [`drop_substitution_sources`] leaves it out before validation.

mod state;
mod trajectory;

use super::cx::{At, Cx, Pyd, optional, present};
use crate::diag::{Diagnostic, did_you_mean};
use crate::model::data_driven::{
    ChatFilter, Connection, DataDrivenCase, Expected, FieldChecks, Interaction, MAX_SAMPLES,
    ResponseChecks, StockCheck, StockTest, SuccessRatio, TextChecks, TrajectoryChecks,
    TrajectorySource,
};
use crate::node::{Node, Value};

const TOP_KEYS: [&str; 13] = [
    "agent",
    "connections",
    "success_ratio",
    "reliability",
    "use_direct",
    "metadata",
    "timeout_in_seconds",
    "interactions",
    "failure_patterns",
    "trajectory",
    "user",
    "state_endpoint",
    "expect_state",
];

const INTERACTION_KEYS: [&str; 6] = [
    "text",
    "sly_data",
    "timeout_in_seconds",
    "chat_filter",
    "continue_conversation",
    "response",
];

const RESPONSE_KEYS: [&str; 4] = ["text", "sly_data", "structure", "trajectory"];

/// Removes from `root` the top-level keys that are not keys of a case but that a
/// substitution of the same file refers to (`roots`, from
/// [`crate::syntax::hocon::substitution_roots`]): they were only a source of values,
/// which the substitutions have already copied where they belong. An unknown key that no
/// substitution names stays, and is an error.
pub(crate) fn drop_substitution_sources(root: &mut Node, roots: &[String]) {
    if let Value::Object(entries) = &mut root.value {
        entries
            .retain(|(key, _)| TOP_KEYS.contains(&key.name.as_str()) || !roots.contains(&key.name));
    }
}

/// Validates `root`; every problem goes to `cx`. Returns the case when there was none.
pub(crate) fn validate(root: &Node, cx: &mut Cx) -> Option<DataDrivenCase> {
    let at = At::root("DataDrivenTestCase");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(entries, &at, &TOP_KEYS, |k| {
        (k == "name")
            .then(|| "data-driven cases are named after their file; remove `name`".to_owned())
    });

    let agent = match root.get("agent") {
        Some(node) => cx.nonempty_string(node, &at.key("agent")),
        None => {
            cx.missing(root, &at, "agent", "the name of the agent to test");
            None
        }
    };
    let connections = match present(root, "connections") {
        Some(node) => connections(node, &at.key("connections"), cx),
        None => Some(vec![Connection::Direct]),
    };
    let success_ratio = optional(root, "success_ratio", |n| {
        success_ratio(n, &at.key("success_ratio"), cx)
    });
    let reliability = optional(root, "reliability", |n| {
        super::gate::reliability(n, &at.key("reliability"), cx)
    });
    if let (Some(_), Some(node)) = (present(root, "success_ratio"), present(root, "reliability")) {
        one_gate(node, &at.key("reliability"), cx);
    }
    let use_direct = match present(root, "use_direct") {
        Some(node) => cx.boolean(node, &at.key("use_direct")),
        None => Some(false),
    };
    let metadata = optional(root, "metadata", |n| cx.dict(n, &at.key("metadata")));
    let timeout_in_seconds = optional(root, "timeout_in_seconds", |n| {
        cx.positive_seconds(n, &at.key("timeout_in_seconds"))
    });
    let failure_patterns = optional(root, "failure_patterns", |n| {
        cx.string_list(n, &at.key("failure_patterns"))
    });
    let source = match present(root, "trajectory") {
        Some(node) => trajectory_source(node, &at.key("trajectory"), cx),
        None => Some(TrajectorySource::Stream),
    };
    let otel = source == Some(TrajectorySource::Otel);
    let user = optional(root, "user", |n| user(n, &at.key("user"), otel, cx));
    let interactions = match root.get("interactions") {
        Some(node) => {
            let at = at.key("interactions");
            cx.nonempty_list(node, &at).map(|items| {
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| interaction(item, &at.index(i), otel, cx))
                    .collect::<Vec<_>>()
            })
        }
        // A simulated user may carry the whole conversation.
        None if root.get("user").is_some() => Some(Vec::new()),
        None => {
            cx.missing(root, &at, "interactions", "a list of interactions");
            None
        }
    };

    if let (Some(connections), false) = (&connections, otel) {
        trajectory::not_over_mcp(root, connections, cx);
    }
    let (state_endpoint, expect_state) = state::end_state(root, &at, connections.as_deref(), cx);
    if cx.errors() > before {
        return None;
    }
    Some(DataDrivenCase {
        agent: agent?,
        connections: connections?,
        success_ratio: success_ratio?,
        reliability: reliability?,
        use_direct: use_direct?,
        metadata: metadata?,
        timeout_in_seconds: timeout_in_seconds?,
        interactions: interactions?,
        failure_patterns: failure_patterns?,
        trajectory: source?,
        user: user?,
        state_endpoint: state_endpoint?,
        expect_state: expect_state?,
    })
}

/// `user`: the simulated user's brief, with the settings of its turns (`chat_filter`,
/// `timeout_in_seconds`) and the checks on the last answer (`response`).
fn user(
    node: &Node,
    at: &At,
    otel: bool,
    cx: &mut Cx,
) -> Option<crate::model::data_driven::DataDrivenUser> {
    use crate::model::data_driven::USER_TURN_KEYS;
    let before = cx.errors();
    let brief = super::user::user(node, at, &USER_TURN_KEYS, cx);
    let (timeout_in_seconds, chat_filter, response) = turn_settings(node, at, otel, cx);
    if cx.errors() > before {
        return None;
    }
    Some(crate::model::data_driven::DataDrivenUser {
        brief: brief?,
        turns: Interaction {
            text: None,
            sly_data: None,
            timeout_in_seconds: timeout_in_seconds?,
            chat_filter: chat_filter?,
            continue_conversation: true,
            response: response?,
        },
    })
}

/// The top-level `trajectory`: where the trajectory checks read the tool calls from.
fn trajectory_source(node: &Node, at: &At, cx: &mut Cx) -> Option<TrajectorySource> {
    if node.as_object().is_some() {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            "the top-level `trajectory` says where the trajectory comes from; its checks go in an interaction's `response`",
        )
        .at(node.span)
        .expected("`stream` or `otel`")
        .help("move this object into `interactions[i].response.trajectory`");
        cx.report(d, at, None, Some(node));
        return None;
    }
    match cx
        .choice(node, at, &TrajectorySource::NAMES, false)?
        .as_str()
    {
        "otel" => Some(TrajectorySource::Otel),
        _ => Some(TrajectorySource::Stream),
    }
}

fn connections(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<Connection>> {
    let items: Vec<(&Node, At)> = match &node.value {
        Value::String(_) => vec![(node, at.clone())],
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, n)| (n, at.index(i)))
            .collect(),
        Value::Array(_) => {
            cx.nonempty_list(node, at);
            return None;
        }
        _ => {
            cx.type_error(
                node,
                at,
                "a connection or a list of them",
                Pyd::new("list_type", "Input should be a valid list"),
            );
            return None;
        }
    };
    let mut out = Vec::new();
    let mut ok = true;
    for (item, item_at) in items {
        let Some(name) = cx.choice(item, &item_at, &Connection::NAMES, false) else {
            ok = false;
            continue;
        };
        let Some(connection) = Connection::from_name(&name) else {
            ok = false;
            continue;
        };
        if out.contains(&connection) {
            let d = Diagnostic::new(
                "duplicate-value",
                item_at.path(),
                format!("connection `{name}` is listed twice"),
            )
            .at(item.span);
            cx.report(d, &item_at, None, Some(item));
            ok = false;
            continue;
        }
        out.push(connection);
    }
    ok.then_some(out)
}

/// `success_ratio` and `reliability` both given: a case has one gate.
fn one_gate(node: &Node, at: &At, cx: &mut Cx) {
    let d = Diagnostic::new(
        "two-gates",
        at.path(),
        "a case has one gate: `success_ratio` or `reliability`, not both",
    )
    .at(node.span)
    .expected("`success_ratio` or `reliability`")
    .help("keep `success_ratio` for neuro-san's own driver, or `reliability` for a verdict with stated error rates; `prill explain` compares them");
    cx.report(d, at, None, None);
}

fn success_ratio(node: &Node, at: &At, cx: &mut Cx) -> Option<SuccessRatio> {
    let Value::String(text) = &node.value else {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            format!("expected a string `k/n`, found {}", super::cx::a_type(node)),
        )
        .at(node.span)
        .expected("a string `k/n`, e.g. \"3/5\"")
        .maybe_help(match &node.value {
            Value::Number(n) => Some(format!("write it as a string: \"{n}/{n}\"")),
            _ => None,
        });
        cx.report(d, at, None, Some(node));
        return None;
    };
    match SuccessRatio::parse(text) {
        Ok(ratio) => Some(ratio),
        Err(why) => {
            let d = Diagnostic::new("invalid-success-ratio", at.path(), why.to_string())
                .at(node.span)
                .expected(format!("`k/n` with 1 <= n <= {MAX_SAMPLES} and k <= n"));
            cx.report(d, at, None, Some(node));
            None
        }
    }
}

/// What an interaction and a simulated user's turns share: `timeout_in_seconds`,
/// `chat_filter` and `response` (whose trajectory checks need `MAXIMAL` unless `otel`).
fn turn_settings(
    node: &Node,
    at: &At,
    otel: bool,
    cx: &mut Cx,
) -> (
    Option<Option<f64>>,
    Option<ChatFilter>,
    Option<ResponseChecks>,
) {
    let timeout_in_seconds = optional(node, "timeout_in_seconds", |n| {
        cx.positive_seconds(n, &at.key("timeout_in_seconds"))
    });
    let chat_filter = match present(node, "chat_filter") {
        None => Some(ChatFilter::Minimal),
        Some(n) => chat_filter(n, &at.key("chat_filter"), cx),
    };
    let response = match present(node, "response") {
        None => Some(ResponseChecks::default()),
        Some(n) => {
            if let (Some(filter), false) = (chat_filter, otel) {
                trajectory::needs_maximal(filter, n, at, cx);
            }
            response(n, &at.key("response"), cx)
        }
    };
    (timeout_in_seconds, chat_filter, response)
}

/// One interaction; with `otel` its trajectory comes from spans, which any stream has.
fn interaction(node: &Node, at: &At, otel: bool, cx: &mut Cx) -> Option<Interaction> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &INTERACTION_KEYS, |k| match k {
        "input" | "message" | "query" => Some("the user message goes in `text`".to_owned()),
        "checks" | "expect" | "expected" => Some("checks go in `response`".to_owned()),
        _ => None,
    });
    let text = match node.get("text") {
        None => None,
        Some(n) if n.value == Value::Null => None,
        Some(n) => cx.string(n, &at.key("text")),
    };
    let sly_data = optional(node, "sly_data", |n| cx.dict(n, &at.key("sly_data")));
    let (timeout_in_seconds, chat_filter, response) = turn_settings(node, at, otel, cx);
    let continue_conversation = match present(node, "continue_conversation") {
        None => Some(true),
        Some(n) => cx.boolean(n, &at.key("continue_conversation")),
    };
    if cx.errors() > before {
        return None;
    }
    Some(Interaction {
        text,
        sly_data: sly_data?,
        timeout_in_seconds: timeout_in_seconds?,
        chat_filter: chat_filter?,
        continue_conversation: continue_conversation?,
        response: response?,
    })
}

fn chat_filter(node: &Node, at: &At, cx: &mut Cx) -> Option<ChatFilter> {
    let text = cx.string(node, at)?;
    match text.to_ascii_uppercase().as_str() {
        "MINIMAL" => Some(ChatFilter::Minimal),
        "MAXIMAL" => Some(ChatFilter::Maximal),
        _ => {
            let d = Diagnostic::new(
                "invalid-value",
                at.path(),
                format!("unknown chat filter `{text}`"),
            )
            .at(node.span)
            .expected("`MINIMAL` or `MAXIMAL`")
            .maybe_help(did_you_mean(
                &text.to_ascii_uppercase(),
                ["MINIMAL", "MAXIMAL"],
            ));
            cx.report(d, at, None, Some(node));
            None
        }
    }
}

fn response(node: &Node, at: &At, cx: &mut Cx) -> Option<ResponseChecks> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    // Upstream ignores any other key here, and some of its own files rely on that to
    // switch checks off; so an unknown part is a warning that its checks never run.
    for (key, value) in entries {
        if RESPONSE_KEYS.contains(&key.name.as_str()) {
            continue;
        }
        let part_at = at.key(&key.name);
        let help = if StockTest::from_name(&key.name).is_some() {
            Some(format!(
                "a check goes under the part it tests, e.g. `text: {{ {}: ... }}`",
                key.name
            ))
        } else if TrajectoryChecks::KEYS.contains(&key.name.as_str()) {
            Some(format!(
                "a trajectory check goes under `trajectory`, e.g. `trajectory: {{ {}: ... }}`",
                key.name
            ))
        } else {
            did_you_mean(&key.name, RESPONSE_KEYS).or_else(|| {
                matches!(value.value, Value::Object(_))
                    .then(|| format!("to check a field of the structure, move it under `structure`: `structure.{}`", key.name))
            })
        };
        let d = Diagnostic::new(
            "ignored-check",
            part_at.path(),
            format!(
                "`{}` is not a part of the response, so nothing under it is checked",
                key.name
            ),
        )
        .warning()
        .at(key.span)
        .expected("`text`, `sly_data`, `structure` or `trajectory`")
        .maybe_help(help);
        cx.report(d, &part_at, None, None);
    }
    let text = optional(node, "text", |n| text_checks(n, &at.key("text"), cx));
    let sly_data = optional(node, "sly_data", |n| {
        field_checks(n, &at.key("sly_data"), cx)
    });
    let structure = optional(node, "structure", |n| {
        field_checks(n, &at.key("structure"), cx)
    });
    let trajectory = optional(node, "trajectory", |n| {
        trajectory::trajectory(n, &at.key("trajectory"), cx)
    });
    if cx.errors() > before {
        return None;
    }
    Some(ResponseChecks {
        text: text?,
        sly_data: sly_data?,
        structure: structure?,
        trajectory: trajectory?,
    })
}

fn text_checks(node: &Node, at: &At, cx: &mut Cx) -> Option<TextChecks> {
    let Value::Object(entries) = &node.value else {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            format!(
                "expected an object of checks, found {}",
                super::cx::a_type(node)
            ),
        )
        .at(node.span)
        .expected("an object such as `{ keywords: \"Beatles\" }`")
        .maybe_help(node.as_str().map(|s| {
            format!(
                "to look for this text, write `text: {{ keywords: {} }}`",
                serde_json::json!(s)
            )
        }));
        cx.report(d, at, None, Some(node));
        return None;
    };
    let mut tests = Vec::new();
    let mut ok = true;
    for (key, value) in entries {
        let check_at = at.key(&key.name);
        match StockTest::from_name(&key.name) {
            Some(_) if matches!(value.value, Value::Object(_)) => {
                let d = Diagnostic::new(
                    "invalid-type",
                    check_at.path(),
                    format!(
                        "`{}` needs a value to compare with, found an object",
                        key.name
                    ),
                )
                .at(value.span)
                .help("the answer text has no fields to nest into");
                cx.report(d, &check_at, None, Some(value));
                ok = false;
            }
            Some((test, negated)) => match stock_check(test, negated, value, &check_at, cx) {
                Some(check) => tests.push(check),
                None => ok = false,
            },
            None => {
                unknown_check(&key.name, key.span, &check_at, value, true, cx);
                ok = false;
            }
        }
    }
    ok.then_some(TextChecks { tests })
}

fn field_checks(node: &Node, at: &At, cx: &mut Cx) -> Option<FieldChecks> {
    let Value::Object(entries) = &node.value else {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            format!(
                "expected an object of fields and checks, found {}",
                super::cx::a_type(node)
            ),
        )
        .at(node.span)
        .expected("an object such as `{ answer: { keywords: \"x\" } }`, or `{}` for presence");
        cx.report(d, at, None, Some(node));
        return None;
    };
    let mut checks = FieldChecks::default();
    let mut ok = true;
    for (key, value) in entries {
        let child = at.key(&key.name);
        if matches!(value.value, Value::Object(_)) {
            // An object always goes one level deeper, as upstream walks it, even under a
            // key spelled like a check: that is how a field named `value` is reached.
            match field_checks(value, &child, cx) {
                Some(nested) => checks.fields.push((key.name.clone(), nested)),
                None => ok = false,
            }
            continue;
        }
        match StockTest::from_name(&key.name) {
            Some((test, negated)) => match stock_check(test, negated, value, &child, cx) {
                Some(check) => checks.tests.push(check),
                None => ok = false,
            },
            None => {
                unknown_check(&key.name, key.span, &child, value, false, cx);
                ok = false;
            }
        }
    }
    ok.then_some(checks)
}

fn unknown_check(
    name: &str,
    span: crate::node::Span,
    at: &At,
    value: &Node,
    in_text: bool,
    cx: &mut Cx,
) {
    let help = did_you_mean(name, StockTest::NAMES.iter().copied()).or_else(|| {
        (!in_text).then(|| {
            format!("to check a field named `{name}`, give it an object of checks, e.g. `{name}: {{ value: ... }}`")
        })
    });
    let d = Diagnostic::new(
        "unknown-check",
        at.path(),
        format!("unknown check `{name}`"),
    )
    .at(span)
    .expected("one of value, less, greater, keywords, gist or their not_ forms")
    .maybe_help(help);
    cx.report(d, at, None, Some(value));
}

fn stock_check(
    test: StockTest,
    negated: bool,
    node: &Node,
    at: &At,
    cx: &mut Cx,
) -> Option<StockCheck> {
    let expected = match &node.value {
        Value::Array(items) => {
            if items.is_empty() {
                let d = Diagnostic::new("empty-list", at.path(), "an empty list checks nothing")
                    .at(node.span)
                    .expected("a value, or a list of values that must all pass")
                    .help("to check only that a field is present, give the field `{}`");
                cx.report(d, at, None, Some(node));
                return None;
            }
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                ok &= check_value(test, negated, item, &at.index(i), cx);
            }
            if !ok {
                return None;
            }
            Expected::All(items.iter().map(Node::to_json).collect())
        }
        _ => {
            if !check_value(test, negated, node, at, cx) {
                return None;
            }
            Expected::One(node.to_json())
        }
    };
    Some(StockCheck {
        test,
        negated,
        expected,
    })
}

/// Whether `node` is a value `test` can compare with; reports it when not.
fn check_value(test: StockTest, negated: bool, node: &Node, at: &At, cx: &mut Cx) -> bool {
    let (fits, expected) = match (test, &node.value) {
        (_, Value::Null) => (false, "a value (null checks nothing)"),
        (_, Value::Object(_)) => (false, "a value, not an object"),
        (StockTest::Less | StockTest::Greater, v) => (
            matches!(v, Value::Number(_) | Value::String(_)),
            "a number or a string",
        ),
        (StockTest::Gist, Value::String(s)) => (!s.trim().is_empty(), "non-empty criteria text"),
        (StockTest::Gist, _) => (false, "criteria text (a string)"),
        (StockTest::Value | StockTest::Keywords, _) => (true, ""),
    };
    if !fits {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            format!(
                "`{}` needs {expected}, found {}",
                test.spelled(negated),
                super::cx::a_type(node)
            ),
        )
        .at(node.span)
        .expected(expected);
        cx.report(d, at, None, Some(node));
    }
    fits
}
