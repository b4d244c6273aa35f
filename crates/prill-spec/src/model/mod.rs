//! The typed model of every dialect, as a validated file holds it.
//!
//! The `JsonSchema` derives here generate the files in `schemas/`.

pub mod compare;
pub mod config;
pub mod data_driven;
pub mod family;
pub mod framework;
mod framework_schema;
pub mod gate;
pub mod provider;
pub mod quarantine;
pub mod sentinel;
pub mod state;
pub mod trajectory;
pub mod user;
