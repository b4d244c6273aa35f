//! `user` (a Prill extension of the Sentinel and data-driven dialects): a simulated
//! user's brief and settings, every problem placed in the file.

use super::cx::{At, Cx};
use crate::diag::Diagnostic;
use crate::model::user::{DEFAULT_MAX_TURNS, KEYS, MAX_TURNS_LIMIT, SimulatedUser};
use crate::node::{Node, Value};

/// Why a wrong `user` is refused in a Sentinel file.
const EXTENSION: &str = "`user` is Prill's extension to the dialect";

/// `user`'s value; `extra` are the keys the dialect adds beside the brief's.
pub(crate) fn user(node: &Node, at: &At, extra: &[&str], cx: &mut Cx) -> Option<SimulatedUser> {
    let Value::Object(entries) = &node.value else {
        cx.own_type_error(
            node,
            at,
            "`{goal, model, ...}`: the simulated user's brief",
            EXTENSION,
        );
        return None;
    };
    let allowed: Vec<&str> = KEYS.iter().chain(extra).copied().collect();
    cx.unknown_keys_because(
        entries,
        at,
        &allowed,
        |k| match k {
            "instructions" | "scenario" | "task" => {
                Some("what the user wants goes in `goal`".to_owned())
            }
            "max_iterations" => Some(
                "`max_turns` bounds the user's turns; `max_iterations` (framework_config) the model calls of each answer"
                    .to_owned(),
            ),
            "messages" | "turns" | "scripted" => {
                Some("the user's scripted opening messages go in `first_turns`".to_owned())
            }
            _ => None,
        },
        EXTENSION,
    );
    let before = cx.errors();
    let text = |key: &str, cx: &mut Cx| -> Option<String> {
        let n = node.get(key)?;
        let s = cx.nonempty_string(n, &at.key(key))?;
        Some(s)
    };
    let goal = text("goal", cx);
    if node.get("goal").is_none() {
        cx.missing(
            node,
            at,
            "goal",
            "what the user wants from the conversation",
        );
    }
    let model = text("model", cx);
    if node.get("model").is_none() {
        cx.missing(
            node,
            at,
            "model",
            "the simulator's model, e.g. `gpt-4o-mini`",
        );
    }
    let persona = text("persona", cx);
    // The test's own rule for `provider`: a kind, or a name of `[providers]`.
    let provider = node
        .get("provider")
        .and_then(|n| super::sentinel::provider(n, &at.key("provider"), cx));
    let facts = match node.get("facts") {
        None => serde_json::Value::Null,
        Some(n) => match n.to_json() {
            value @ serde_json::Value::Object(_) => value,
            serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_string) => {
                serde_json::Value::Array(items)
            }
            _ => {
                cx.own_type_error(
                    n,
                    &at.key("facts"),
                    "an object (name -> value) or a list of sentences",
                    EXTENSION,
                );
                serde_json::Value::Null
            }
        },
    };
    let max_turns = match node.get("max_turns") {
        None => DEFAULT_MAX_TURNS,
        Some(n) => match cx.integer(n, &at.key("max_turns")) {
            Some(i) if (1..=i64::from(MAX_TURNS_LIMIT)).contains(&i) => {
                u32::try_from(i).unwrap_or(DEFAULT_MAX_TURNS)
            }
            Some(_) => {
                let d = Diagnostic::new(
                    "out-of-range",
                    at.key("max_turns").path(),
                    format!("must be from 1 to {MAX_TURNS_LIMIT}"),
                )
                .at(n.span)
                .expected(format!("an integer from 1 to {MAX_TURNS_LIMIT}"));
                cx.own(d, &at.key("max_turns"), EXTENSION, Some(n));
                DEFAULT_MAX_TURNS
            }
            None => DEFAULT_MAX_TURNS,
        },
    };
    let first_turns = match node.get("first_turns") {
        None => Vec::new(),
        Some(n) => cx
            .string_list(n, &at.key("first_turns"))
            .unwrap_or_default(),
    };
    let check_turns = match node.get("check_turns") {
        None => true,
        Some(n) => cx.boolean(n, &at.key("check_turns")).unwrap_or(true),
    };
    if cx.errors() > before {
        return None;
    }
    Some(SimulatedUser {
        goal: goal?,
        persona,
        facts,
        max_turns,
        model: model?,
        provider,
        first_turns,
        check_turns,
    })
}
