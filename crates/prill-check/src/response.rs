//! What a check sees of an agent's or a model's response.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One tool call the agent or model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments, as JSON.
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// What it returned, where known (`trajectory_gist` shows it to the judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// Whether it failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolCall {
    /// A call with these arguments and no known result.
    pub fn new(name: impl Into<String>, arguments: serde_json::Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments,
            result: None,
            is_error: false,
        }
    }

    /// The call, with what it returned.
    pub fn with_result(mut self, result: serde_json::Value, is_error: bool) -> ToolCall {
        self.result = Some(result);
        self.is_error = is_error;
        self
    }
}

/// Token counts, as the agent or provider reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Tokens generated, hidden reasoning included where the provider counts it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Of `output`, the hidden reasoning tokens, where the provider reports them
    /// (OpenAI's `completion_tokens_details.reasoning_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
}

impl TokenUsage {
    /// Two usages (of the model calls of one run) summed field by field; a field
    /// neither reports stays unknown, and one only one reports counts as reported.
    pub fn sum(a: Option<TokenUsage>, b: Option<TokenUsage>) -> Option<TokenUsage> {
        let add = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
        };
        match (a, b) {
            (None, b) => b,
            (a, None) => a,
            (Some(a), Some(b)) => Some(TokenUsage {
                input: add(a.input, b.input),
                output: add(a.output, b.output),
                reasoning: add(a.reasoning, b.reasoning),
            }),
        }
    }

    /// The tokens of the visible answer: `output` less `reasoning`.
    pub fn answer(&self) -> Option<u64> {
        self.output
            .map(|out| out.saturating_sub(self.reasoning.unwrap_or(0)))
    }
}

/// A response, as every check sees it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Response {
    /// The answer text, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The returned sly_data (a JSON object), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<serde_json::Value>,
    /// The returned structure (a JSON object), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<serde_json::Value>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// From the request to the end of the response.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_millis")]
    pub latency: Option<Duration>,
    /// From the request to the first byte of the response.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_millis")]
    pub time_to_first_byte: Option<Duration>,
    /// Token counts, where the agent or provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// Why the model stopped, in the provider's words (`stop`, `length`, `max_tokens`,
    /// `content_filter`, `refusal`, `guardrail_intervened`, ...), where it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// How many times the model was called to produce this response: 1 for a single
    /// model call, one per turn for a tool loop; absent where it is not known (an
    /// agent behind a connection, which does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// The graph's nodes as they ran, in order (a LangGraph run); absent where the agent
    /// is no graph or does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_steps: Option<Vec<String>>,
    /// Whether `text` is the model's refusal rather than an answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refusal: bool,
    /// Every streamed message, raw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<serde_json::Value>,
    /// The end state of the test's tools, when they gave one (`expect_state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_state: Option<EndState>,
    /// The whole conversation, in order, when a simulated user carried it on: what the
    /// judge of `trajectory_gist` reads before the calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<Said>,
}

/// One message of a conversation with a simulated user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Said {
    /// `user` or `agent`.
    pub by: String,
    /// The message.
    pub text: String,
}

/// The state a test's tool program gave when the conversation was over, and the states
/// the reference calls of each `expect_state: {replay}` left on a fresh program.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EndState {
    /// The state after the conversation.
    pub state: serde_json::Value,
    /// For each distinct `replay` list, what it left, or why it could not be replayed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replayed: Vec<Replayed>,
}

/// What one `replay` list of reference calls left on a fresh program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replayed {
    /// The calls, as the check names them.
    pub calls: Vec<prill_spec::model::state::ReplayCall>,
    /// The state they left, or why they could not be replayed (a call that the program
    /// answered with an error, a program that broke).
    pub state: Result<serde_json::Value, String>,
}

impl Response {
    /// A response that is only an answer text.
    pub fn text(text: impl Into<String>) -> Response {
        Response {
            text: Some(text.into()),
            ..Response::default()
        }
    }

    /// Sets the sly_data.
    pub fn with_sly_data(mut self, sly_data: serde_json::Value) -> Response {
        self.sly_data = Some(sly_data);
        self
    }

    /// Sets the structure.
    pub fn with_structure(mut self, structure: serde_json::Value) -> Response {
        self.structure = Some(structure);
        self
    }

    /// Adds a tool call.
    pub fn with_tool_call(mut self, name: &str, arguments: serde_json::Value) -> Response {
        self.tool_calls.push(ToolCall::new(name, arguments));
        self
    }

    /// Sets the latency.
    pub fn with_latency(mut self, latency: Duration) -> Response {
        self.latency = Some(latency);
        self
    }

    /// Sets the token usage.
    pub fn with_usage(mut self, input: Option<u64>, output: Option<u64>) -> Response {
        self.usage = Some(TokenUsage {
            input,
            output,
            reasoning: None,
        });
        self
    }

    /// Sets how many times the model was called.
    pub fn with_iterations(mut self, iterations: u32) -> Response {
        self.iterations = Some(iterations);
        self
    }

    /// Sets the stop reason.
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Response {
        self.stop_reason = Some(reason.into());
        self
    }

    /// Whether the answer was cut short by a token limit (stop reason `length`,
    /// `max_tokens` or `model_context_window_exceeded`).
    pub fn truncated(&self) -> bool {
        matches!(
            self.stop_reason.as_deref(),
            Some("length" | "max_tokens" | "model_context_window_exceeded")
        )
    }
}

/// Anything a built-in evaluator can check: a [`Response`], or plain text.
pub trait Output {
    /// The output as a response.
    fn to_response(&self) -> std::borrow::Cow<'_, Response>;
}

impl Output for Response {
    fn to_response(&self) -> std::borrow::Cow<'_, Response> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl Output for String {
    fn to_response(&self) -> std::borrow::Cow<'_, Response> {
        std::borrow::Cow::Owned(Response::text(self.clone()))
    }
}

impl Output for &str {
    fn to_response(&self) -> std::borrow::Cow<'_, Response> {
        std::borrow::Cow::Owned(Response::text(*self))
    }
}

mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_secs_f64() * 1000.0)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        let ms: Option<f64> = Option::deserialize(d)?;
        Ok(ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()))
    }
}

#[cfg(test)]
mod usage_tests {
    use super::TokenUsage;

    #[test]
    fn usage_sums_what_each_turn_reported() {
        let turn = |i, o, r| {
            Some(TokenUsage {
                input: i,
                output: o,
                reasoning: r,
            })
        };
        let total = TokenUsage::sum(
            TokenUsage::sum(None, turn(Some(10), Some(5), None)),
            turn(Some(20), None, Some(2)),
        );
        assert_eq!(total, turn(Some(30), Some(5), Some(2)));
        assert_eq!(TokenUsage::sum(None, None), None);
    }
}
