//! The reporters fed hand-built event streams (a unit that passes, one that fails, one
//! that errors and one that was skipped) and a Rust suite's events; snapshots of their
//! outputs and checks against the report schemas.

mod fanout;
mod fixtures;
mod github;
mod html;
mod human;
mod json;
mod junit;
mod last_run;
mod markdown;
mod otel;
mod output;
mod rebuild;
mod schema;
mod show;
mod snapshots;
mod suite;
mod xsd;
