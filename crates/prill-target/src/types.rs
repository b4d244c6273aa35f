//! What goes to an agent ([`AgentRequest`]) and what comes back ([`AgentResponse`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use prill_spec::model::data_driven::ChatFilter;
use serde_json::Value;

/// A JSON object.
pub type JsonMap = serde_json::Map<String, Value>;

/// One message to an agent: one turn of a conversation.
///
/// The caller carries the conversation: it passes the `chat_context` (and, if it wants,
/// the `sly_data`) that the previous [`AgentResponse`] returned, as neuro-san's own
/// test driver does.
///
/// `Debug` shows metadata keys but never their values: they travel as headers and may
/// be secrets.
#[derive(Clone, Default, PartialEq)]
pub struct AgentRequest {
    /// The user message; `None` sends `"text": null` (neuro-san then answers nothing).
    pub text: Option<String>,
    /// Private data for the agent; sent only when not empty.
    pub sly_data: Option<JsonMap>,
    /// The conversation so far, exactly as the last response returned it; sent only when
    /// not empty.
    pub chat_context: Option<Value>,
    /// How much the server streams back.
    pub chat_filter: ChatFilter,
    /// Request metadata: headers over http, https and MCP; a `metadata` object over stdio.
    pub metadata: BTreeMap<String, String>,
    /// A limit on the whole exchange, retries included; `None` takes the connector's
    /// default ([`crate::DEFAULT_TIMEOUT`] unless configured otherwise).
    pub timeout: Option<Duration>,
    /// The case's `use_direct`: how a neuro-san network run in-process reaches its
    /// external agents. Sent over stdio (a server decides this for itself).
    pub use_direct: bool,
}

impl AgentRequest {
    /// A request with a user message and nothing else.
    pub fn new(text: impl Into<String>) -> AgentRequest {
        AgentRequest {
            text: Some(text.into()),
            ..AgentRequest::default()
        }
    }

    /// The same request carrying `chat_context`.
    pub fn with_chat_context(mut self, chat_context: Option<Value>) -> AgentRequest {
        self.chat_context = chat_context;
        self
    }

    /// The same request with `sly_data`.
    pub fn with_sly_data(mut self, sly_data: JsonMap) -> AgentRequest {
        self.sly_data = Some(sly_data);
        self
    }

    /// The same request with a metadata entry.
    pub fn with_metadata(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> AgentRequest {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Its metadata values as secrets (each of four characters or more, shown as `<metadata KEY>`): a server or
    /// agent that echoes a bearer token back must not get it into a message.
    pub fn secrets(&self) -> prill_spec::redact::Redactor {
        let mut secrets = prill_spec::redact::Redactor::default();
        // A value of a few characters (the sample index) is no secret.
        for (key, value) in self.metadata.iter().filter(|(_, v)| v.chars().count() >= 4) {
            secrets.secret(format!("<metadata {key}>"), value);
        }
        secrets
    }

    /// The same request with a time limit.
    pub fn with_timeout(mut self, timeout: Duration) -> AgentRequest {
        self.timeout = Some(timeout);
        self
    }
}

impl fmt::Debug for AgentRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let metadata: BTreeMap<&str, &str> = self
            .metadata
            .keys()
            .map(|k| (k.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("AgentRequest")
            .field("text", &self.text)
            .field("sly_data", &self.sly_data)
            .field("chat_context", &self.chat_context)
            .field("chat_filter", &self.chat_filter)
            .field("metadata", &metadata)
            .field("timeout", &self.timeout)
            .field("use_direct", &self.use_direct)
            .finish()
    }
}

/// What an agent answered to one [`AgentRequest`], picked from the streamed messages by
/// neuro-san's rules (see `prill_connect::wire::Collector`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentResponse {
    /// The answer text.
    pub text: Option<String>,
    /// The answer's structure.
    pub structure: Option<Value>,
    /// The sly_data the agent returned.
    pub sly_data: Option<Value>,
    /// The state to carry into the next request to continue the conversation.
    pub chat_context: Option<Value>,
    /// Every streamed message (the `response` of each line), raw, in order; heartbeats
    /// are left out.
    pub messages: Vec<Value>,
    /// How long it took.
    pub timings: Timings,
    /// Tokens used, when the agent reported them (neuro-san does under `MAXIMAL`).
    pub usage: Option<TokenUsage>,
    /// The agents and tools the agent invoked, in the order the stream first showed
    /// each (neuro-san shows them under `MAXIMAL` only; empty otherwise).
    pub trajectory: Vec<Invocation>,
}

/// One invocation of an agent or tool by the agent under test (its front man) or by
/// anything it invoked, as the streamed messages show it.
///
/// neuro-san gives every message an `origin`: the path of `{tool, instantiation_index}`
/// from the front man to whatever wrote it. Each distinct path longer than the front man
/// alone is one invocation; a second call of the same agent has its own
/// `instantiation_index` and so is a second invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invocation {
    /// The agent or tool invoked: the last `tool` of its origin.
    pub tool: String,
    /// The full origin path, as `(tool, instantiation_index)` pairs from the front man.
    pub origin: Vec<(String, u64)>,
    /// What it was invoked with: the `tool_args` of its `Received arguments` message or
    /// the `params` its caller announced; `{}` when the stream does not show them.
    pub arguments: Value,
    /// What it returned, where the stream shows it (`Got result` or the caller's
    /// `AGENT_TOOL_RESULT`).
    pub result: Option<Value>,
    /// Which message first showed it: its position (from 1) in
    /// [`AgentResponse::messages`].
    pub position: usize,
}

/// How long an exchange took, measured from the start of the attempt that got the
/// answer: waiting out a 429 and earlier failed attempts do not count, nor (over MCP)
/// opening the session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Until the first byte of the streamed body (the first stdout byte of a command);
    /// `None` when the body was empty.
    pub first_byte: Option<Duration>,
    /// Until the response was complete.
    pub total: Duration,
}

/// Tokens an agent reported using.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Tokens sent to models (`prompt_tokens`).
    pub input: Option<u64>,
    /// Tokens models generated (`completion_tokens`), hidden reasoning included where
    /// the provider counts it there.
    pub output: Option<u64>,
    /// Of `output`, the tokens of hidden reasoning, where the provider reports them
    /// (OpenAI's `completion_tokens_details.reasoning_tokens`); the visible answer is
    /// `output - reasoning`.
    pub reasoning: Option<u64>,
}

impl TokenUsage {
    /// The tokens of the visible answer: `output` less `reasoning`.
    pub fn answer(&self) -> Option<u64> {
        self.output
            .map(|out| out.saturating_sub(self.reasoning.unwrap_or(0)))
    }
}

/// One agent a server hosts, as `GET /api/v1/list` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// The agent's name, as requests name it.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// An agent's function, as `GET /api/v1/{agent}/function` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFunction {
    /// What the agent does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments, when it declares one.
    pub parameters: Option<Value>,
    /// The JSON Schema of the sly_data it reads, when it declares one.
    pub sly_data_schema: Option<Value>,
    /// The whole `function` object, as sent.
    pub raw: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_metadata_values() {
        let request = AgentRequest::new("hi").with_metadata("authorization", "Bearer sk-secret");
        let shown = format!("{request:?}");
        assert!(shown.contains("authorization"));
        assert!(!shown.contains("sk-secret"), "{shown}");
    }
}
