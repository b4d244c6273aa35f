//! Validators: from a located tree to the typed model, collecting every problem.

pub(crate) mod checkless;
pub(crate) mod compare;
pub(crate) mod config;
pub(crate) mod cx;
pub(crate) mod data_driven;
pub(crate) mod history;
pub(crate) mod sentinel;
