//! `prill-run`'s integration tests, one binary: verdicts, conversations, scopes,
//! the Rust testing API and the last run.

mod continue_conversation;
mod last_run;
mod scope;
mod suite;
mod use_direct;
mod verdicts;
