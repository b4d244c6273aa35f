//! Validates a data-driven interaction's `trajectory` response part, a Prill extension:
//! the trajectory assertions of Sentinel specs, read by the same rules
//! (`validate::sentinel::trajectory`), and the rules only this dialect has: the
//! interaction must ask for a `MAXIMAL` stream, and `mcp` shows no trajectory.

use crate::diag::Diagnostic;
use crate::model::data_driven::{ChatFilter, Connection, TrajectoryChecks};
use crate::node::{Node, Value};
use crate::validate::cx::{At, Cx, present};
use crate::validate::sentinel::trajectory as rules;

/// The trajectory assertions a data-driven file cannot use, and why.
fn not_here(key: &str) -> Option<String> {
    match key {
        "max_iterations_used" => Some(
            "a neuro-san stream does not show how often the agent's models were called; \
             bound the invocations with `max_tool_calls`"
                .to_owned(),
        ),
        "tool_calls" | "tools" | "sequence" | "calls" | "order" => {
            Some("write `tool_sequence = [first, second, ...]`".to_owned())
        }
        _ => None,
    }
}

/// `trajectory { ... }`: the checks, each valid as in a Sentinel spec.
pub(super) fn trajectory(node: &Node, at: &At, cx: &mut Cx) -> Option<TrajectoryChecks> {
    let before = cx.errors();
    let Value::Object(entries) = &node.value else {
        let d = Diagnostic::new(
            "invalid-type",
            at.path(),
            format!(
                "expected an object of trajectory checks, found {}",
                crate::validate::cx::a_type(node)
            ),
        )
        .at(node.span)
        .expected("an object such as `{ tool_sequence: [\"search\", \"summarize\"] }`");
        cx.report(d, at, None, Some(node));
        return None;
    };
    if entries.is_empty() {
        let d = Diagnostic::new(
            "empty-object",
            at.path(),
            "an empty `trajectory` checks nothing",
        )
        .at(node.span)
        .expected(format!("one of {}", list(&TrajectoryChecks::KEYS)));
        cx.report(d, at, None, Some(node));
        return None;
    }
    cx.unknown_keys(entries, at, &TrajectoryChecks::KEYS, not_here);
    let key = |k: &str| at.key(k);
    let tool_sequence =
        present(node, "tool_sequence").map(|n| rules::tool_sequence(n, &key("tool_sequence"), cx));
    let must_call_tool =
        present(node, "must_call_tool").map(|n| rules::tool_names(n, &key("must_call_tool"), cx));
    let must_not_call_tool = present(node, "must_not_call_tool")
        .map(|n| rules::tool_names(n, &key("must_not_call_tool"), cx));
    let tool_args = present(node, "tool_args").map(|n| {
        let at = key("tool_args");
        match n.as_array() {
            Some(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| rules::tool_args(item, &at.index(i), cx))
                .collect::<Option<Vec<_>>>(),
            _ => rules::tool_args(n, &at, cx).map(|one| vec![one]),
        }
    });
    let max_tool_calls =
        present(node, "max_tool_calls").map(|n| rules::count(n, &key("max_tool_calls"), 0, cx));
    let min_tool_calls =
        present(node, "min_tool_calls").map(|n| rules::count(n, &key("min_tool_calls"), 1, cx));
    let gist = present(node, "gist").map(|n| rules::criteria(n, &key("gist"), cx));
    let not_gist = present(node, "not_gist").map(|n| rules::criteria(n, &key("not_gist"), cx));
    if let (Some(Some(min)), Some(Some(max))) = (min_tool_calls, max_tool_calls)
        && min > max
    {
        let d = Diagnostic::new(
            "value-error",
            at.path(),
            format!(
                "min_tool_calls {min} is greater than max_tool_calls {max}; no response can pass"
            ),
        )
        .at(node.span);
        cx.report(d, at, None, None);
    }
    if cx.errors() > before {
        return None;
    }
    Some(TrajectoryChecks {
        tool_sequence: tool_sequence.flatten(),
        must_call_tool: must_call_tool.flatten(),
        must_not_call_tool: must_not_call_tool.flatten(),
        tool_args: tool_args.flatten().unwrap_or_default(),
        max_tool_calls: max_tool_calls.flatten(),
        min_tool_calls: min_tool_calls.flatten(),
        gist: gist.flatten(),
        not_gist: not_gist.flatten(),
    })
}

/// `a`, `b` or `c`.
fn list(names: &[&str]) -> String {
    crate::validate::cx::list_names(names)
}

/// A `trajectory` part on an interaction that asks for a `MINIMAL` stream sees nothing:
/// that stream holds only the final message. `response` is the interaction's response
/// node, `at` the interaction's position.
pub(super) fn needs_maximal(filter: ChatFilter, response: &Node, at: &At, cx: &mut Cx) {
    let Some(node) = present(response, "trajectory") else {
        return;
    };
    if filter == ChatFilter::Maximal {
        return;
    }
    let part = at.key("response").key("trajectory");
    let d = Diagnostic::new(
        "trajectory-needs-maximal",
        part.path(),
        "a trajectory check needs the interaction's intermediate messages, and a MINIMAL \
         stream holds only the final one",
    )
    .at(key_span(response, "trajectory").unwrap_or(node.span))
    .expected("`chat_filter: MAXIMAL` on this interaction")
    .help("add `chat_filter = \"MAXIMAL\"` to this interaction");
    cx.report(d, &part, None, None);
}

/// A `trajectory` part in a case that runs over `mcp` can never be checked there:
/// neuro-san's MCP tool answers with the final message only.
pub(super) fn not_over_mcp(root: &Node, connections: &[Connection], cx: &mut Cx) {
    if !connections.contains(&Connection::Mcp) {
        return;
    }
    let Some(items) = root.get("interactions").and_then(Node::as_array) else {
        return;
    };
    let at = At::root("DataDrivenTestCase").key("interactions");
    for (i, item) in items.iter().enumerate() {
        let Some(response) = present(item, "response") else {
            continue;
        };
        let Some(node) = present(response, "trajectory") else {
            continue;
        };
        let part = at.index(i).key("response").key("trajectory");
        let d = Diagnostic::new(
            "trajectory-over-mcp",
            part.path(),
            "a trajectory check cannot be run over `mcp`: neuro-san's MCP endpoint answers \
             with the final message only, so no invocation would ever be seen",
        )
        .at(key_span(response, "trajectory").unwrap_or(node.span))
        .expected("connections without `mcp`")
        .help("remove `mcp` from `connections`, or move this check to a file that runs over direct, http or https");
        cx.report(d, &part, None, None);
    }
}

/// The span of `key`'s name in the object `node`.
fn key_span(node: &Node, key: &str) -> Option<crate::node::Span> {
    node.as_object()?
        .iter()
        .find(|(k, _)| k.name == key)
        .map(|(k, _)| k.span)
}
