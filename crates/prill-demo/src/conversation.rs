//! One exchange with an agent: the request read, the agent's reply, and the messages that
//! neuro-san would stream for it (shared by `streaming_chat` and MCP `tools/call`).

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::DemoAgent;
use crate::agents::{Reply, Turn};

/// The request metadata header that carries the sample index: Prill sends it with every
/// request, and `flaky` (only) reads it, so that it draws differently for each sample of
/// a run. One definition, the engine's.
pub use prill_target::SAMPLE_METADATA as SAMPLE_HEADER;

/// The sample index a request's headers carry, if any.
pub(crate) fn sample_header(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(SAMPLE_HEADER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Puts `sample` into the request's sly_data as `sample`, unless the sly_data already
/// has one (an explicit `sample` in a test file wins).
pub fn apply_sample(request: &mut Value, sample: Option<u64>) {
    let Some(sample) = sample else { return };
    let Some(object) = request.as_object_mut() else {
        return;
    };
    let sly = object
        .entry("sly_data")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(sly) = sly.as_object_mut() {
        sly.entry("sample").or_insert(Value::from(sample));
    }
}

/// A request's `chat_filter`: `MAXIMAL` (or 2) streams every message, anything else only
/// the final one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    Minimal,
    Maximal,
}

impl Filter {
    /// The filter a request asks for; an unknown or absent one is `MINIMAL`, as upstream.
    pub(crate) fn of(request: &Value) -> Filter {
        match request.pointer("/chat_filter/chat_filter_type") {
            Some(Value::String(name)) if name.eq_ignore_ascii_case("MAXIMAL") => Filter::Maximal,
            Some(Value::Number(number)) if number.as_u64() == Some(2) => Filter::Maximal,
            _ => Filter::Minimal,
        }
    }
}

/// An agent's answer to one request, with everything needed to stream it.
#[derive(Debug)]
pub(crate) struct Exchange {
    agent: DemoAgent,
    reply: Reply,
    chat_context: Value,
    prompt_words: usize,
}

impl Exchange {
    /// Runs `agent` on `request`; `None` when the request has no `user_message.text`
    /// (neuro-san then answers with one empty line `{}`).
    pub(crate) fn run(agent: DemoAgent, request: &Value) -> Option<Exchange> {
        let text = request.pointer("/user_message/text")?.as_str()?;
        let sly_data = request.get("sly_data").and_then(Value::as_object);
        let history = front_man_history(agent, request);
        let reply = agent.reply(&Turn {
            text,
            sly_data,
            history: &history,
        });
        let chat_context = chat_context(agent, history, text, &reply.text);
        Some(Exchange {
            agent,
            reply,
            chat_context,
            prompt_words: text.split_whitespace().count(),
        })
    }

    /// How long the agent's tool takes.
    pub(crate) fn delay(&self) -> Option<Duration> {
        self.reply.delay
    }

    /// The answer text.
    pub(crate) fn text(&self) -> &str {
        &self.reply.text
    }

    /// The final structure, if any.
    pub(crate) fn structure(&self) -> Option<&Map<String, Value>> {
        self.reply.structure.as_ref()
    }

    /// The returned sly_data, if any.
    pub(crate) fn sly_data(&self) -> Option<&Map<String, Value>> {
        self.reply.sly_data.as_ref()
    }

    /// The chat_context to carry into the next request.
    pub(crate) fn chat_context(&self) -> &Value {
        &self.chat_context
    }

    /// The final `AGENT_FRAMEWORK` message: `type, text, chat_context, structure?,
    /// sly_data?`, with no `origin`.
    pub(crate) fn final_message(&self) -> Value {
        let mut message = Map::new();
        message.insert("type".to_owned(), "AGENT_FRAMEWORK".into());
        message.insert("text".to_owned(), self.reply.text.clone().into());
        message.insert("chat_context".to_owned(), self.chat_context.clone());
        if let Some(structure) = &self.reply.structure {
            message.insert("structure".to_owned(), Value::Object(structure.clone()));
        }
        if let Some(sly_data) = &self.reply.sly_data {
            message.insert("sly_data".to_owned(), Value::Object(sly_data.clone()));
        }
        Value::Object(message)
    }

    /// The `MAXIMAL` messages before the tool's wait: the front man's plan and the tool's
    /// `Received arguments:`, in neuro-san's shape for a coded tool (`tool_start`,
    /// `tool_args`; `AbstractClassActivation.attempt_invoke`). The heartbeat follows them (see [`HEARTBEAT_LINE`]).
    pub(crate) fn messages_before_wait(&self) -> Vec<Value> {
        let front = origin(self.agent, false);
        let tool = origin(self.agent, true);
        vec![
            json!({"type": "AI", "origin": front, "text": format!("I will ask {} for this.", self.agent.tool())}),
            json!({"type": "AGENT", "origin": tool, "text": "Received arguments:",
                "structure": {"tool_start": true, "tool_args": self.reply.tool_args}}),
        ]
    }

    /// The `MAXIMAL` messages after the tool's wait, before the final message: the tool's
    /// `Got result:`, the front man's answer and its token accounting.
    pub(crate) fn messages_after_wait(&self) -> Vec<Value> {
        let front = origin(self.agent, false);
        let tool = origin(self.agent, true);
        let prompt_tokens = 40 + 2 * self.prompt_words;
        let completion_tokens = 10 + 2 * self.reply.text.split_whitespace().count();
        let seconds = self.reply.delay.map_or(0.0, |delay| delay.as_secs_f64());
        vec![
            json!({"type": "AGENT", "origin": tool, "text": "Got result:",
                "structure": {"tool_end": true, "tool_output": self.reply.tool_result}}),
            json!({"type": "AI", "origin": front, "text": self.reply.text}),
            json!({
                "type": "AGENT",
                "origin": front,
                "structure": {
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "successful_requests": 2,
                    "total_cost": 0.0,
                    "time_taken_in_seconds": seconds,
                    "models": ["prill-demo"]
                }
            }),
        ]
    }
}

/// The keep-alive frame neuro-san streams during silence; it never carries `request`.
pub(crate) const HEARTBEAT_LINE: &[u8] =
    b"{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n";

/// `[{"tool": <front man>, "instantiation_index": 1}]`, plus the tool when `tool` is set.
fn origin(agent: DemoAgent, tool: bool) -> Value {
    let mut path = vec![json!({"tool": agent.front_man(), "instantiation_index": 1})];
    if tool {
        path.push(json!({"tool": agent.tool(), "instantiation_index": 1}));
    }
    Value::Array(path)
}

/// The front man's messages in the request's chat_context: the history whose origin
/// starts with the front man.
fn front_man_history(agent: DemoAgent, request: &Value) -> Vec<Value> {
    let Some(histories) = request
        .pointer("/chat_context/chat_histories")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    histories
        .iter()
        .find(|history| {
            history.pointer("/origin/0/tool").and_then(Value::as_str) == Some(agent.front_man())
        })
        .and_then(|history| history.get("messages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Braces doubled, as neuro-san stores text in a chat_context.
fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// The chat_context after this exchange: the front man's history with this turn's HUMAN
/// and AI messages appended (a new history starts with the redacted SYSTEM message).
fn chat_context(agent: DemoAgent, mut messages: Vec<Value>, text: &str, answer: &str) -> Value {
    let front = origin(agent, false);
    if messages.is_empty() {
        messages.push(json!({"type": "SYSTEM", "origin": front, "text": "<redacted>"}));
    }
    messages.push(json!({"type": "HUMAN", "origin": front, "text": escape_braces(text)}));
    messages.push(json!({"type": "AI", "origin": front, "text": escape_braces(answer)}));
    json!({"chat_histories": [{"origin": front, "messages": messages}]})
}
