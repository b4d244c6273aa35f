//! HOCON text to a located [`Node`] tree.

use super::Env;
use crate::diag::Diagnostic;
use crate::node::Node;
use crate::source::Source;

/// Parses `source` as HOCON, resolving includes relative to its path and
/// substitutions from the file and from `env`.
pub fn parse(source: &Source, env: &Env) -> Result<Node, Vec<Diagnostic>> {
    let _ = (source, env);
    Err(vec![Diagnostic::new("syntax", "", "hocon parser not written yet")])
}
