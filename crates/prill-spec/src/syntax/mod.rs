//! Parsers from text to the located [`Node`] tree, one per syntax, and emitters back.
//!
//! Each parser reports syntax errors as [`Diagnostic`]s with spans; none of them
//! knows anything about test dialects.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::limits::Limits;
use crate::node::Node;
use crate::source::{Source, Syntax};

pub mod comments;
pub mod emit;
pub mod hocon;
pub mod json;
pub mod toml;
mod values;
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

/// What parsing a file gave: the tree or its errors, and the environment variables
/// it read.
#[derive(Debug)]
pub struct Parsed {
    /// The located tree, or every error found.
    pub tree: Result<Node, Vec<Diagnostic>>,
    /// The names of the environment variables that HOCON `${...}` in the file or in
    /// the files it includes read. Their values are kept out of every message.
    pub environment: Vec<String>,
}

/// Parses `source` as `syntax` into a located tree, or every syntax error found.
pub fn parse(source: &Source, syntax: Syntax, env: &Env) -> Result<Node, Vec<Diagnostic>> {
    parse_with(source, syntax, env, &Limits::default()).tree
}

/// [`parse`] within `limits` (which only HOCON, the syntax with includes and
/// substitutions, needs), also telling which environment variables were read.
pub fn parse_with(source: &Source, syntax: Syntax, env: &Env, limits: &Limits) -> Parsed {
    match syntax {
        Syntax::Hocon => hocon::parse_with(source, env, limits),
        Syntax::Yaml => Parsed {
            tree: yaml::parse(source),
            environment: Vec::new(),
        },
        Syntax::Json => Parsed {
            tree: json::parse(source),
            environment: Vec::new(),
        },
    }
}
