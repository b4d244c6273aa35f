//! Parsers from text to the located [`Node`] tree, one per syntax, and emitters back.
//!
//! Each parser reports syntax errors as [`Diagnostic`]s with spans; none of them
//! knows anything about test dialects.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::node::Node;
use crate::source::{Source, Syntax};

pub mod emit;
pub mod hocon;
pub mod json;
pub mod toml;
pub mod yaml;

/// The environment HOCON substitutions read (`${X}`, `${?X}`).
///
/// Tests build one by hand so that they never depend on the process environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// The process environment.
    pub fn from_process() -> Self {
        Env {
            vars: std::env::vars().collect(),
        }
    }

    /// An environment with only these variables.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// One variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// All variables.
    pub fn vars(&self) -> &HashMap<String, String> {
        &self.vars
    }
}

/// Parses `source` as `syntax` into a located tree, or every syntax error found.
pub fn parse(source: &Source, syntax: Syntax, env: &Env) -> Result<Node, Vec<Diagnostic>> {
    match syntax {
        Syntax::Hocon => hocon::parse(source, env),
        Syntax::Yaml => yaml::parse(source),
        Syntax::Json => json::parse(source),
    }
}
