//! The model of every Assay test dialect.
#![warn(missing_docs)]

pub mod diag;
pub mod node;
pub mod source;
pub mod syntax;
