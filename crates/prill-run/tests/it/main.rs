//! `prill-run`'s integration tests, one binary: verdicts, conversations, scopes,
//! the Rust testing API, the tool loop, the last run, and the gates' simulation.

mod continue_conversation;
mod gates;
mod known_rate;
mod last_run;
mod otel_trajectory;
mod scope;
mod simulated_user;
mod suite;
mod tool_loop;
mod use_direct;
mod verdicts;
