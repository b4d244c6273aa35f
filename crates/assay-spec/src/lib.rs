//! The model of every Assay test dialect: parse, validate, and normalize to one plan.
#![warn(missing_docs)]

pub mod diag;
pub mod load;
pub mod model;
pub mod node;
pub mod plan;
pub mod schema;
pub mod source;
pub mod syntax;
mod validate;

pub use diag::{Diagnostic, Report};
pub use load::{Document, Loaded, Unrecognized, load_file, load_str};
pub use plan::{Case, Check, CheckKind, Dialect, Plan};
pub use source::{Source, Syntax};
pub use syntax::Env;
