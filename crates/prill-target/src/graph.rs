//! Graph servers: a [`GraphServer`] runs an assistant of a LangGraph server on a
//! [`GraphRequest`] and returns the run's final messages as a [`GraphRun`].
//!
//! The messages are LangChain's, typed: human, system, AI (text, tool calls with their
//! ids and arguments, token usage) and tool messages (the result of one call, by its
//! id). The implementation over the network is `prill_connect::langgraph`.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::model::{ChatMessage, ModelToolCall};
use crate::{BoxFuture, ConnectError, Timings, TokenUsage};

/// One run of an assistant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphRequest {
    /// The assistant to run: its id, or the name of a graph (which the server takes as
    /// that graph's default assistant).
    pub assistant_id: String,
    /// System instructions, sent as a system message before `messages`.
    pub system: Option<String>,
    /// The conversation; the last message is the user's.
    pub messages: Vec<ChatMessage>,
    /// The run's `config.configurable`.
    pub configurable: Option<Map<String, Value>>,
    /// The run's `config.recursion_limit`: the most graph steps (super-steps).
    pub recursion_limit: Option<u32>,
    /// A limit on the whole run, thread creation included; `None` takes the server's
    /// default.
    pub timeout: Option<Duration>,
}

/// One message of a run's state, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphMessage {
    /// A user's message (`human`).
    Human {
        /// Its text.
        text: String,
    },
    /// A system message.
    System {
        /// Its text.
        text: String,
    },
    /// A model's message (`ai`): text and tool calls.
    Ai(AiMessage),
    /// A tool's answer to one call (`tool`).
    Tool(ToolMessage),
    /// Any other type (`function`, `chat`, `remove`, ...), by its type's name.
    Other {
        /// The message's `type`.
        kind: String,
        /// Its content as text.
        text: String,
    },
}

/// A model's message of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AiMessage {
    /// The text parts, joined.
    pub text: String,
    /// The tool calls, in order, with their ids and arguments.
    pub tool_calls: Vec<ModelToolCall>,
    /// Token usage (`usage_metadata`).
    pub usage: Option<TokenUsage>,
    /// Why the model stopped, from `response_metadata` (`finish_reason`,
    /// `stop_reason`), in the provider's words.
    pub stop_reason: Option<String>,
}

/// A tool's answer to one call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolMessage {
    /// The id of the call it answers (`tool_call_id`).
    pub call_id: String,
    /// The tool's name, when the message gives it.
    pub name: Option<String>,
    /// What the tool returned: its content, as JSON when the text is JSON.
    pub content: Value,
    /// Whether the tool failed (`status: error`).
    pub is_error: bool,
}

/// What a run came to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphRun {
    /// The run's id, from its `metadata` event.
    pub run_id: Option<String>,
    /// The thread it ran on.
    pub thread_id: String,
    /// The state's messages at the end of the run (or, after a failure, at the last
    /// state the run streamed), typed, in order: the input, then what the graph added.
    pub messages: Vec<GraphMessage>,
    /// The same messages as the server sent them.
    pub raw_messages: Vec<Value>,
    /// The run's error event, when the run failed.
    pub failure: Option<RunFailure>,
    /// The graph's nodes as they ran, in order, from the stream's `updates` events (a
    /// node that ran twice is here twice).
    pub steps: Vec<String>,
    /// Time to the first byte of the run's stream, and to its end.
    pub timings: Timings,
    /// The raw events, for reports: the first and the last few (`RawEvents`).
    pub raw: Vec<Value>,
    /// How many events the stream held.
    pub events: u64,
}

/// A run's `error` event: the graph raised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunFailure {
    /// The error's name (`GraphRecursionError`, `ValueError`, ...), when given.
    pub error: Option<String>,
    /// Its message.
    pub message: String,
}

impl RunFailure {
    /// Whether the run hit its recursion limit.
    pub fn is_recursion_limit(&self) -> bool {
        self.error.as_deref() == Some("GraphRecursionError")
            || self.message.contains("Recursion limit")
    }
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.error {
            Some(error) => write!(f, "{error}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A server that runs graphs: a LangGraph server through its HTTP API.
pub trait GraphServer: Send + Sync {
    /// Runs `request` on a new thread and returns its final messages. A server that
    /// cannot be reached, refuses the request, or ends the stream before the run's end
    /// is a [`ConnectError`]; a run whose graph raised is a [`GraphRun`] with its
    /// [`GraphRun::failure`] (and the messages of its last state).
    fn run<'a>(
        &'a self,
        request: &'a GraphRequest,
    ) -> BoxFuture<'a, Result<GraphRun, ConnectError>>;
}

impl fmt::Debug for dyn GraphServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GraphServer")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reads_as_its_error_and_message() {
        let f = RunFailure {
            error: Some("GraphRecursionError".into()),
            message: "Recursion limit of 3 reached".into(),
        };
        assert_eq!(
            f.to_string(),
            "GraphRecursionError: Recursion limit of 3 reached"
        );
        assert!(f.is_recursion_limit());
        let f = RunFailure {
            error: None,
            message: "boom".into(),
        };
        assert_eq!(f.to_string(), "boom");
        assert!(!f.is_recursion_limit());
    }
}
