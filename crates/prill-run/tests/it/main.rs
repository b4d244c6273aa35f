//! `prill-run`'s integration tests, one binary: verdicts, conversations, scopes,
//! the Rust testing API, the tool loop and the last run.

mod continue_conversation;
mod last_run;
mod scope;
mod suite;
mod tool_loop;
mod use_direct;
mod verdicts;
