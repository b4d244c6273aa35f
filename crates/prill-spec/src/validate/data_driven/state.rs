//! `state_endpoint` and `expect_state` of a data-driven case (Prill's extensions): where
//! the state of the agent's environment is read when the conversation is over, and the
//! checks on it (those of Sentinel's `expect_state`, but `replay`, which needs a tool
//! program).

use super::super::cx::{At, Cx, optional, present};
use crate::diag::Diagnostic;
use crate::model::data_driven::Connection;
use crate::model::state::ExpectState;
use crate::node::Node;

/// An optional key's value as validated: `None` when it was wrong, `Some(None)` when it
/// was not given.
type Checked<T> = Option<Option<T>>;

/// What `state_endpoint` and `expect_state` of `root` hold: `None` for one that is
/// wrong (reported to `cx`). The state is read by an `http` or `https` connection, so
/// `expect_state` needs one of those alone, and a `state_endpoint`.
pub(super) fn end_state(
    root: &Node,
    at: &At,
    connections: Option<&[Connection]>,
    cx: &mut Cx,
) -> (Checked<String>, Checked<Box<ExpectState>>) {
    let endpoint = optional(root, "state_endpoint", |n| {
        endpoint(n, &at.key("state_endpoint"), cx)
    });
    let expect = optional(root, "expect_state", |n| {
        let at = at.key("expect_state");
        let expect = super::super::sentinel::state::expect_state(n, &at, cx)?;
        if expect.replay.is_some() {
            let node = present(n, "replay").unwrap_or(n);
            let at = at.key("replay");
            let d = Diagnostic::new(
                "invalid-key",
                at.path(),
                "`replay` runs reference calls on a fresh tool program, and an agent case has none",
            )
            .at(node.span)
            .expected("`equals`, `contains`, `paths` or `schema`")
            .help("check the state the agent's environment gives instead (`equals`, `paths`)");
            cx.own(
                d,
                &at,
                "a data-driven case's state comes from its agent",
                Some(node),
            );
            return None;
        }
        Some(Box::new(expect))
    });
    if let Some(node) = present(root, "expect_state") {
        if present(root, "state_endpoint").is_none() {
            cx.missing(
                root,
                at,
                "state_endpoint",
                "where `expect_state` reads the state: a path on the agent's server (`/shop/state`) or an http(s) URL",
            );
        }
        let other = connections
            .unwrap_or_default()
            .iter()
            .find(|c| !matches!(c, Connection::Http | Connection::Https));
        if let Some(other) = other {
            let at = at.key("expect_state");
            let d = Diagnostic::new(
                "invalid-value",
                at.path(),
                format!(
                    "the state is read over http, and the connection `{}` has no http to read it with",
                    other.name()
                ),
            )
            .at(node.span)
            .expected("connections = [http] or [https] (or both)")
            .found(format!("connections include `{}`", other.name()));
            cx.own(d, &at, "the end state is read by the http connection", None);
        }
    }
    (endpoint, expect)
}

/// A path on the agent's server, or an `http`/`https` URL.
fn endpoint(node: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    let text = cx.nonempty_string(node, at)?;
    let path = text.starts_with('/') && !text.starts_with("//");
    let url = text.starts_with("http://") || text.starts_with("https://");
    if (path || url) && !text.chars().any(char::is_whitespace) {
        return Some(text);
    }
    let d = Diagnostic::new(
        "invalid-value",
        at.path(),
        "not a path on the agent's server or an http(s) URL",
    )
    .at(node.span)
    .expected("a path starting with `/` (`/shop/state`), or `http://...` / `https://...`")
    .found(format!("`{text}`"));
    cx.own(d, at, "the state is read with an http GET", Some(node));
    None
}
