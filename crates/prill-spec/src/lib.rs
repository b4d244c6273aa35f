//! The model of every Prill test dialect: parse, validate, and normalize to one plan.
//!
//! Prill reads three kinds of test file, each in HOCON, YAML or JSON:
//! neuro-san data-driven test cases, Sentinel TestSpecs and Sentinel TestSuites; and
//! the project configuration, `prill.toml`. This crate turns any of them into a
//! [`Plan`]: cases, each with interactions, each with checks. Nothing above this crate
//! looks at a spec file again.
//!
//! The pipeline, one file at a time ([`load_str`], [`load_file`]):
//!
//! 1. [`syntax`] parses the text into a located tree ([`node::Node`]): every value and
//!    key keeps its byte span, whatever the syntax.
//! 2. [`load::detect`] tells the dialect from the tree's keys, not the file name.
//! 3. The dialect's validator walks the tree and collects *every* problem as a
//!    [`Diagnostic`] (file, line:column, field path, what was expected, what was found,
//!    a "did you mean"), or builds the typed [`model`].
//! 4. The model normalizes to plan [`Case`]s, whose ids hash only their inputs.
//!
//! No network, no async runtime: the only I/O is reading the files asked for and the
//! files they include.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use prill_spec::{Env, Unrecognized, load_str, plan::CheckKind};
//!
//! let text = r#"
//! agent = math_guy
//! interactions = [{
//!   text = times
//!   sly_data { x = 847, y = 23 }
//!   response.sly_data.equals.value = 19481.0
//! }]
//! "#;
//! let loaded = load_str(Path::new("math.hocon"), text, &Env::default(), Unrecognized::Error)
//!     .expect("a test file");
//! let cases = loaded.cases();
//! assert_eq!(cases.len(), 1);
//! let check = &cases[0].interactions[0].checks[0];
//! assert!(matches!(check.kind, CheckKind::Stock { .. }));
//! assert_eq!(&*check.path, "interactions[0].response.sly_data.equals.value");
//!
//! // A misspelt check is an error with a suggestion, not a silent pass.
//! let typo = text.replace("equals.value", "equals.valeu");
//! let loaded = load_str(Path::new("math.hocon"), &typo, &Env::default(), Unrecognized::Error)
//!     .expect("a test file");
//! let report = &loaded.reports()[0];
//! assert!(report.plain().contains("did you mean `value`?"));
//! assert!(report.plain().starts_with("math.hocon:6:"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod diag;
pub mod escape;
pub mod files;
pub mod inputs;
pub mod limits;
pub mod load;
pub mod model;
pub mod node;
pub mod plan;
pub mod redact;
pub mod schema;
pub mod source;
pub mod syntax;
mod validate;

pub use diag::{Diagnostic, Report};
pub use load::{Document, Loaded, Unrecognized, load_file, load_str};
pub use model::provider::{Guess, ProviderKind, ProviderName, guess_provider, infer_provider};
pub use plan::{Case, Check, CheckKind, Dialect, Plan};
pub use source::{Source, Syntax};
pub use syntax::Env;
