//! YAML text to a located [`Node`] tree.

use crate::diag::Diagnostic;
use crate::node::Node;
use crate::source::Source;

/// Parses `source` as YAML.
pub fn parse(source: &Source) -> Result<Node, Vec<Diagnostic>> {
    let _ = source;
    Err(vec![Diagnostic::new("syntax", "", "yaml parser not written yet")])
}
