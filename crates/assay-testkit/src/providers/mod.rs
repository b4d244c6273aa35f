//! Fake model providers: real http servers on 127.0.0.1 that validate requests the way
//! the real APIs do, answer from a script, and record every request they receive.
//!
//! Each fake has its own module; they share the server plumbing of `scripted` and the
//! provider-neutral script of [`reply`].

pub mod anthropic;
pub mod bedrock;
pub mod ollama;
pub mod openai;
pub mod reply;
mod scripted;

pub use reply::{Reply, ScriptedToolCall};
pub use scripted::RecordedRequest;
