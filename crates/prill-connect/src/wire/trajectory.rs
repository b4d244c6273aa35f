//! Reads a neuro-san agent's trajectory (the agents and tools it invoked) from the
//! messages of a `MAXIMAL` stream. See [`Reader`] for the rules, which follow the
//! messages neuro-san writes (`shared/research/neuro-san.md` §4.3 and its source:
//! `Origination`, `AbstractClassActivation.attempt_invoke`, `ExternalActivation`,
//! `JournalingCallbackHandler`, `JournalingToolsAgentOutputParser`,
//! `LangChainRunContext.parse_tool_output`).

use serde_json::{Map, Value};

use crate::types::Invocation;

/// An origin path: `(tool, instantiation_index)` from the front man on.
type Path = Vec<(String, u64)>;

/// The keys neuro-san adds to a tool's arguments before it writes them (the tool's own
/// origin, as a list and as a string); they are not arguments anything passed.
const ADDED_KEYS: [&str; 2] = ["origin", "origin_str"];

/// Reads the invocations out of the messages of one exchange, in stream order.
///
/// Rules:
/// - every message's `origin` is the path from the front man to what wrote it; each
///   distinct path longer than one element is an invocation of its last `tool`, by the
///   element before it. The front man (the first element) is the agent under test and
///   is never an invocation of its own. A path shows every shorter path in it too, so a
///   nested call is never seen before its caller.
/// - invocations are ordered by the message that first showed them (its position in the
///   messages kept, from 1). neuro-san numbers each name's instantiations across the
///   request (`instantiation_index` 1, 2, ...): a second call of one agent is a second
///   invocation.
/// - the arguments are the `tool_args` of the invocation's own `AGENT` message with
///   `tool_start: true` (`toolStart` before July 2025), without the `origin` and
///   `origin_str` keys neuro-san adds; failing that, the `params` of the caller's `AGENT`
///   message with `invoking_start: true` naming it (the n-th such message of a caller for
///   one name goes with that caller's n-th invocation of the name); failing that, `{}`.
/// - the result is the `tool_output` of the invocation's own `AGENT` message with
///   `tool_end: true` (`toolEnd`); failing that, the text of an `AGENT_TOOL_RESULT`
///   message whose `tool_result_origin` is the invocation's path.
/// - an `origin` that is not a list of objects with a string `tool` shows nothing.
#[derive(Debug, Clone, Default)]
pub(super) struct Reader {
    invocations: Vec<Invocation>,
    /// Per invocation: whether its arguments came from its own `tool_start` message.
    own_arguments: Vec<bool>,
    /// The callers' announcements: caller path, name invoked, params.
    announced: Vec<(Path, String, Value)>,
}

impl Reader {
    /// Takes one message of type `kind`, kept at `position` (from 1).
    pub(super) fn accept(&mut self, message: &Value, kind: Option<&str>, position: usize) {
        let path = message.get("origin").and_then(path_of);
        if let Some(path) = &path {
            for end in 2..=path.len() {
                self.invocation(&path[..end], position);
            }
        }
        let structure = message.get("structure").and_then(Value::as_object);
        match (kind, structure) {
            (Some("AGENT"), Some(structure)) => self.agent(path, structure),
            (Some("AGENT_TOOL_RESULT"), _) => {
                let Some(origin) = message.get("tool_result_origin").and_then(path_of) else {
                    return;
                };
                if origin.len() < 2 {
                    return;
                }
                let at = self.invocation(&origin, position);
                let text = message.get("text").filter(|t| !t.is_null());
                if let (Some(text), None) = (text, &self.invocations[at].result) {
                    self.invocations[at].result = Some(text.clone());
                }
            }
            _ => {}
        }
    }

    /// An `AGENT` message's `tool_start`, `tool_end` or `invoking_start` structure.
    fn agent(&mut self, path: Option<Path>, structure: &Map<String, Value>) {
        let flag = |keys: [&str; 2]| {
            keys.iter()
                .any(|k| structure.get(*k).and_then(Value::as_bool) == Some(true))
        };
        if flag(["invoking_start", "invokingStart"]) {
            if let Some(name) = structure.get("invoked_agent_name").and_then(Value::as_str) {
                let params = structure.get("params").cloned().unwrap_or_default();
                self.announced
                    .push((path.unwrap_or_default(), name.to_owned(), params));
            }
            return;
        }
        let Some(path) = path.filter(|p| p.len() >= 2) else {
            return;
        };
        let at = self.invocation(&path, 0);
        if flag(["tool_start", "toolStart"])
            && let Some(arguments) = structure.get("tool_args")
        {
            let mut arguments = arguments.clone();
            if let Value::Object(map) = &mut arguments {
                for key in ADDED_KEYS {
                    map.remove(key);
                }
            }
            self.invocations[at].arguments = arguments;
            self.own_arguments[at] = true;
        }
        if flag(["tool_end", "toolEnd"])
            && let Some(output) = structure.get("tool_output")
        {
            self.invocations[at].result = Some(output.clone());
        }
    }

    /// The index of the invocation at `path`, added (shown at `position`) when new.
    fn invocation(&mut self, path: &[(String, u64)], position: usize) -> usize {
        if let Some(at) = self.invocations.iter().position(|i| i.origin == path) {
            return at;
        }
        self.invocations.push(Invocation {
            tool: path
                .last()
                .map(|(tool, _)| tool.clone())
                .unwrap_or_default(),
            origin: path.to_vec(),
            arguments: Value::Object(Map::new()),
            result: None,
            position,
        });
        self.own_arguments.push(false);
        self.invocations.len() - 1
    }

    /// The invocations, with the callers' announced params given to those that showed
    /// no arguments of their own.
    pub(super) fn finish(mut self) -> Vec<Invocation> {
        let mut used = vec![false; self.invocations.len()];
        for (caller, name, params) in std::mem::take(&mut self.announced) {
            let parent_len = caller.len().max(1);
            let next = self.invocations.iter().enumerate().position(|(i, inv)| {
                !used[i]
                    && inv.tool == name
                    && inv.origin.len() == parent_len + 1
                    && (caller.is_empty() || inv.origin[..parent_len] == caller[..])
            });
            if let Some(at) = next {
                used[at] = true;
                if !self.own_arguments[at] {
                    self.invocations[at].arguments = params;
                }
            }
        }
        self.invocations
    }
}

/// An origin path read from a list of `{tool, instantiation_index}` objects (a missing
/// index is neuro-san's first, 1); `None` for anything else.
fn path_of(origin: &Value) -> Option<Path> {
    origin
        .as_array()?
        .iter()
        .map(|element| {
            let tool = element.get("tool")?.as_str()?.to_owned();
            let index = match element.get("instantiation_index") {
                None | Some(Value::Null) => 1,
                Some(n) => n.as_u64()?,
            };
            Some((tool, index))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn origin(names: &[(&str, u64)]) -> Value {
        Value::Array(
            names
                .iter()
                .map(|(t, i)| json!({"tool": t, "instantiation_index": i}))
                .collect(),
        )
    }

    fn read(messages: &[Value]) -> Vec<Invocation> {
        let mut reader = Reader::default();
        for (i, m) in messages.iter().enumerate() {
            let kind = crate::wire::message_type(m);
            reader.accept(m, kind, i + 1);
        }
        reader.finish()
    }

    #[test]
    fn the_front_man_alone_is_no_invocation() {
        let front = origin(&[("Front", 1)]);
        let got = read(&[
            json!({"type": "AI", "origin": front, "text": "thinking"}),
            json!({"type": "AGENT_FRAMEWORK", "text": "done", "chat_context": {}}),
        ]);
        assert!(got.is_empty());
    }

    #[test]
    fn coded_tool_arguments_and_result_without_added_keys() {
        let tool = origin(&[("Front", 1), ("adder", 1)]);
        let got = read(&[
            json!({"type": "AI", "origin": origin(&[("Front", 1)]), "text": "x"}),
            json!({"type": "AGENT", "origin": tool, "text": "Received arguments:",
                "structure": {"tool_start": true, "tool_args": {"x": 1, "origin": [], "origin_str": "Front.adder"}}}),
            json!({"type": "AGENT", "origin": tool, "text": "Got result:",
                "structure": {"tool_end": true, "tool_output": {"sum": 3}}}),
            json!({"type": "AGENT_TOOL_RESULT", "origin": origin(&[("Front", 1)]),
                "tool_result_origin": tool, "text": "{'sum': 3}"}),
        ]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].tool, "adder");
        assert_eq!(got[0].arguments, json!({"x": 1}));
        assert_eq!(got[0].result, Some(json!({"sum": 3})));
        assert_eq!(got[0].position, 2);
    }

    #[test]
    fn old_camel_case_flags_are_read_too() {
        let tool = origin(&[("Front", 1), ("adder", 1)]);
        let got = read(&[
            json!({"type": "AGENT", "origin": tool, "structure": {"toolStart": true, "tool_args": {"x": 1}}}),
            json!({"type": "AGENT", "origin": tool, "structure": {"toolEnd": true, "tool_output": 5}}),
        ]);
        assert_eq!(got[0].arguments, json!({"x": 1}));
        assert_eq!(got[0].result, Some(json!(5)));
    }

    #[test]
    fn repeated_and_nested_invocations_in_order_with_announced_params() {
        let front = origin(&[("Front", 1)]);
        let a1 = origin(&[("Front", 1), ("Researcher", 1)]);
        let nested = origin(&[("Front", 1), ("Researcher", 1), ("search", 1)]);
        let a2 = origin(&[("Front", 1), ("Researcher", 2)]);
        let announce = |q: &str| {
            json!({"type": "AGENT", "origin": front, "text": "Invoking: `Researcher`",
                "structure": {"invoking_start": true, "invoked_agent_name": "Researcher", "params": {"inquiry": q}}})
        };
        let got = read(&[
            announce("first"),
            json!({"type": "HUMAN", "origin": a1, "text": "first"}),
            json!({"type": "AGENT", "origin": nested, "structure": {"tool_start": true, "tool_args": {"q": "x"}}}),
            json!({"type": "AI", "origin": a1, "text": "found"}),
            json!({"type": "AGENT_TOOL_RESULT", "origin": front, "tool_result_origin": a1, "text": "found"}),
            announce("second"),
            json!({"type": "AI", "origin": a2, "text": "again"}),
        ]);
        let summary: Vec<(&str, Value, Option<Value>, usize)> = got
            .iter()
            .map(|i| {
                (
                    i.tool.as_str(),
                    i.arguments.clone(),
                    i.result.clone(),
                    i.position,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "Researcher",
                    json!({"inquiry": "first"}),
                    Some(json!("found")),
                    2
                ),
                ("search", json!({"q": "x"}), None, 3),
                ("Researcher", json!({"inquiry": "second"}), None, 7),
            ]
        );
        assert_eq!(
            got[2].origin,
            vec![("Front".into(), 1), ("Researcher".into(), 2)]
        );
    }

    #[test]
    fn unreadable_origins_show_nothing() {
        let got = read(&[
            json!({"type": "AI", "origin": "Front.adder", "text": "x"}),
            json!({"type": "AI", "origin": [{"tool": "Front"}, {"name": "adder"}], "text": "x"}),
            json!({"type": "AI", "origin": [{"tool": "Front"}, {"tool": "adder", "instantiation_index": "1"}]}),
            json!({"type": "AGENT_TOOL_RESULT", "tool_result_origin": [{"tool": "Front"}], "text": "r"}),
        ]);
        assert!(got.is_empty(), "{got:?}");
    }
}
