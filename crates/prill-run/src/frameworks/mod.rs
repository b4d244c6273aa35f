//! What a Sentinel test's `framework` runs: the built-in tool loop (`openai-sdk`,
//! `claude-sdk`, `strands`; [`tool_loop`]) and a LangGraph server's assistant
//! (`langgraph`; [`langgraph`]). Both report their trajectory (every tool call, its
//! arguments, its result and its turn) and, when asked, every step.

mod end_state;
pub mod fixed;
pub mod langgraph;
mod simulated;
pub mod tool_loop;
