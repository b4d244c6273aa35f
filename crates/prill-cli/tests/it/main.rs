//! The `prill` binary end to end: one integration-test binary (as each crate has), whose
//! modules run the built `prill` against real servers on 127.0.0.1, the repository's
//! fixtures and the files it writes. The rules themselves are tested in the crates that
//! own them; what is here is what only the binary can show: arguments, exit codes,
//! output on stdout and stderr, files written, and the crates wired together.
//!
//! The real neuro-san test (`tests/neuro_san_real`) is a binary of its own: it has its
//! own harness, and CI runs it by name.

mod agent_state;
mod agents;
mod assess;
mod bedrock_credentials;
mod cache;
mod cassettes;
mod cassettes_hostile;
mod ci_docs;
mod ci_reports;
mod cli;
mod commands;
mod compare;
mod end_state;
mod env;
mod explain;
mod failures;
mod files;
mod gates;
mod habits;
mod history;
mod history_hostile;
mod hostile;
mod html;
mod identity;
mod judge;
mod langgraph;
mod langgraph_real;
mod limits;
mod neuro_san_direct;
mod neuro_san_trajectory;
mod otel;
mod otel_in;
mod providers;
mod quarantine;
mod reports;
mod run;
mod secrets;
mod selection;
mod sentinel;
mod serve;
mod simulated_users;
mod stale_cassettes;
mod stop_reasons;
mod stored_reports;
mod support;
mod timeouts;
mod tool_loops;
mod trajectory;
mod view;
mod workflow_commands;
