//! `expect_state` (a Prill extension): `{equals, contains, paths, schema, replay,
//! ignore}`, at least one of the checks, every JSONPath parsed and every schema
//! compiled before anything runs.

use super::super::cx::{At, Cx};
use super::trajectory;
use crate::diag::Diagnostic;
use crate::model::state::{ExpectState, KEYS, ReplayCall, StatePath};
use crate::node::{Node, Value};

/// Why a wrong `expect_state` is refused in a Sentinel file.
const EXTENSION: &str = "`expect_state` is Prill's extension to Sentinel's DSL";

/// `expect_state`'s value.
pub(in crate::validate) fn expect_state(value: &Node, at: &At, cx: &mut Cx) -> Option<ExpectState> {
    let Value::Object(entries) = &value.value else {
        let expected = "`{equals | contains | paths | schema | replay: ...}`";
        cx.own_type_error(value, at, expected, EXTENSION);
        return None;
    };
    cx.unknown_keys_because(
        entries,
        at,
        &KEYS,
        |k| {
            matches!(k, "reference" | "actions" | "expected_actions")
                .then(|| "reference tool calls go under `replay`".to_owned())
        },
        EXTENSION,
    );
    let before = cx.errors();
    let mut expect = ExpectState::default();
    for (key, node) in entries {
        let at = at.key(&key.name);
        match key.name.as_str() {
            "equals" => expect.equals = Some(node.to_json()),
            "contains" => expect.contains = Some(node.to_json()),
            "paths" => expect.paths = paths(node, &at, cx).unwrap_or_default(),
            "schema" => expect.schema = trajectory::schema_because(node, &at, EXTENSION, cx),
            "replay" => expect.replay = replay(node, &at, cx),
            "ignore" => expect.ignore = ignore(node, &at, cx).unwrap_or_default(),
            _ => {}
        }
    }
    let checks = expect.equals.is_some()
        || expect.contains.is_some()
        || !expect.paths.is_empty()
        || expect.schema.is_some()
        || expect.replay.is_some();
    if !checks && cx.errors() == before {
        let d = Diagnostic::new("empty-object", at.path(), "checks nothing")
            .at(value.span)
            .expected("at least one of `equals`, `contains`, `paths`, `schema` or `replay`");
        cx.own(
            d,
            at,
            "an `expect_state` that checks nothing always passes",
            Some(value),
        );
    }
    (cx.errors() == before).then_some(expect)
}

/// A JSONPath, parsed.
fn path(node: &Node, text: &str, at: &At, cx: &mut Cx) -> Option<StatePath> {
    match StatePath::new(text) {
        Ok(path) => Some(path),
        Err(why) => {
            let d = Diagnostic::new(
                "invalid-json-path",
                at.path(),
                format!("not a JSONPath: {why}"),
            )
            .at(node.span)
            .expected("a JSONPath (RFC 9535), e.g. `$.orders['#W1'].status`");
            cx.own(d, at, EXTENSION, Some(node));
            None
        }
    }
}

/// `paths`: JSONPath -> value, at least one.
fn paths(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<(StatePath, serde_json::Value)>> {
    let Value::Object(entries) = &node.value else {
        cx.own_type_error(
            node,
            at,
            "an object: JSONPath -> the value it selects",
            EXTENSION,
        );
        return None;
    };
    if entries.is_empty() {
        let d = Diagnostic::new("empty-object", at.path(), "must name at least one path")
            .at(node.span)
            .expected("`{\"$.orders[0].status\": cancelled}`");
        cx.own(d, at, "an empty `paths` checks nothing", Some(node));
        return None;
    }
    let before = cx.errors();
    let parsed: Vec<_> = entries
        .iter()
        .filter_map(|(key, value)| {
            let here = at.key(&key.name);
            let key_node = Node {
                span: key.span,
                value: Value::String(key.name.clone()),
            };
            Some((path(&key_node, &key.name, &here, cx)?, value.to_json()))
        })
        .collect();
    (cx.errors() == before).then_some(parsed)
}

/// `ignore`: a list of JSONPaths.
fn ignore(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<StatePath>> {
    let Some(items) = node.as_array() else {
        cx.own_type_error(node, at, "a list of JSONPaths", EXTENSION);
        return None;
    };
    let before = cx.errors();
    let parsed: Vec<StatePath> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let here = at.index(i);
            match item.as_str() {
                Some(text) => path(item, text, &here, cx),
                None => {
                    cx.own_type_error(item, &here, "a JSONPath (a string)", EXTENSION);
                    None
                }
            }
        })
        .collect();
    (cx.errors() == before).then_some(parsed)
}

/// `replay`: a list of `{tool, args}` (empty: nothing should have changed).
fn replay(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<ReplayCall>> {
    let Some(items) = node.as_array() else {
        cx.own_type_error(node, at, "a list of `{tool, args}` calls", EXTENSION);
        return None;
    };
    let before = cx.errors();
    let calls: Vec<ReplayCall> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| call(item, &at.index(i), cx))
        .collect();
    (cx.errors() == before).then_some(calls)
}

/// One reference call: `{tool: name, args: {...}}`.
fn call(node: &Node, at: &At, cx: &mut Cx) -> Option<ReplayCall> {
    let Value::Object(entries) = &node.value else {
        cx.own_type_error(node, at, "`{tool: name, args: {...}}`", EXTENSION);
        return None;
    };
    cx.unknown_keys_because(
        entries,
        at,
        &["tool", "args"],
        |k| {
            matches!(k, "arguments" | "name" | "kwargs" | "parameters")
                .then(|| "write the tool as `tool` and its arguments as `args`".to_owned())
        },
        EXTENSION,
    );
    let before = cx.errors();
    let tool = match node.get("tool") {
        Some(n) => trajectory::name(n, &at.key("tool"), cx),
        None => {
            cx.missing(node, at, "tool", "the tool's name");
            None
        }
    };
    let args = match node.get("args") {
        None => Some(serde_json::Map::new()),
        Some(n) => match n.to_json() {
            serde_json::Value::Object(map) => Some(map),
            _ => {
                cx.own_type_error(n, &at.key("args"), "an object of arguments", EXTENSION);
                None
            }
        },
    };
    if cx.errors() > before {
        return None;
    }
    Some(ReplayCall {
        tool: tool?,
        args: args?,
    })
}

/// Where a test's `expect_state` reads the end state from: its `tool_command`, which
/// only the built-in tool loop runs. Every `replay` call names one of the test's tools.
pub(super) fn source(t: &super::Checked<'_>, defaults: Option<&Node>, cx: &mut Cx) {
    use crate::model::framework::FrameworkConfig;
    use crate::model::sentinel::{Assertion, Framework};
    let Some((_, list, at)) = t.field("assertions", defaults) else {
        return;
    };
    let program = match t.test.framework {
        Some(f @ (Framework::OpenaiSdk | Framework::ClaudeSdk | Framework::Strands)) => {
            match FrameworkConfig::parse(f, t.test.framework_config.as_ref()) {
                Ok(FrameworkConfig::Loop(c)) => c.tool_command.is_some(),
                // Its own problems are said where they are.
                _ => true,
            }
        }
        _ => false,
    };
    let tools: Vec<&str> = t
        .test
        .tools
        .iter()
        .flatten()
        .map(|tool| tool.name())
        .collect();
    for (i, assertion) in t.test.assertions.iter().enumerate() {
        let Assertion::ExpectState(expect) = assertion else {
            continue;
        };
        let at = at.index(i).key("expect_state");
        let Some(node) = list
            .as_array()
            .and_then(|a| a.get(i))
            .and_then(|n| n.get("expect_state"))
        else {
            continue;
        };
        if !program {
            let d = Diagnostic::new(
                "no-state",
                at.path(),
                "the test has no tool program to give its end state",
            )
            .at(node.span)
            .help("`expect_state` reads the state a `framework_config.tool_command` program gives when the conversation is over (`docs/conversations.md`): run the test with `framework: openai-sdk`, `claude-sdk` or `strands` and a `tool_command` (an MCP server, `tool_mcp`, gives no state)");
            cx.own(d, &at, EXTENSION, None);
            continue;
        }
        for (j, call) in expect.replay.iter().flatten().enumerate() {
            if tools.contains(&call.tool.as_str()) {
                continue;
            }
            let here = at.key("replay").index(j).key("tool");
            let span = node
                .get("replay")
                .and_then(|r| r.as_array())
                .and_then(|r| r.get(j))
                .and_then(|c| c.get("tool"))
                .map_or(node.span, |n| n.span);
            let d = Diagnostic::new(
                "unknown-tool",
                here.path(),
                format!("`{}` is not among the test's tools", call.tool),
            )
            .at(span)
            .expected(format!("one of {}", super::super::cx::list_names(&tools)))
            .maybe_help(crate::diag::did_you_mean(&call.tool, tools.iter().copied()));
            cx.own(d, &here, EXTENSION, None);
        }
    }
}
