//! [`Reply`]: what a fake provider answers, scripted by a test, and the script of one
//! fake: a queue of replies taken in order, then a responder function of the whole
//! request body, then rules keyed by the last user message, then a default.
//!
//! A structured answer ([`Reply::structured`]) is rendered the way each API gives one:
//! as JSON text by the OpenAI-compatible and Ollama fakes, as a call of the forced tool
//! by the Anthropic and Bedrock fakes. When a request forces a tool, a reply without a
//! structured answer and without a call of that tool becomes a call of it whose input is
//! the reply's text as is (JSON or not), so that malformed answers can be scripted too.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use super::scripted::RecordedRequest;

/// One tool call a fake answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as the model writes them: JSON text, or anything else.
    pub arguments: String,
}

/// What a reply is.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// An answer: text, tool calls, or both.
    Answer {
        /// The text (may be empty).
        text: String,
        /// The tool calls, in order.
        tool_calls: Vec<ScriptedToolCall>,
        /// A structured answer (a JSON object), rendered as each API gives one.
        structured: Option<Value>,
    },
    /// An error in the provider's own error shape.
    Fail {
        /// The http status.
        status: u16,
        /// The error's message.
        message: String,
        /// A `Retry-After` header, in seconds.
        retry_after: Option<u64>,
    },
    /// A status with a body sent as is.
    Raw {
        /// The http status.
        status: u16,
        /// The body.
        body: String,
    },
}

/// A scripted reply of a fake provider.
///
/// ```
/// use std::time::Duration;
///
/// use prill_testkit::providers::Reply;
/// use serde_json::json;
///
/// let reply = Reply::text("Paris")
///     .with_tool_call("lookup", json!({"city": "Paris"}))
///     .usage(12, 3)
///     .delay(Duration::from_millis(50));
/// assert_eq!(reply.usage, Some((12, 3)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The answer or the error.
    pub outcome: Outcome,
    /// The pause before the first byte of a streamed body (before the response itself
    /// when it is not streamed, or is an error).
    pub first_delay: Duration,
    /// The pause before each later piece of a streamed body.
    pub gap: Duration,
    /// Input and output tokens to report; else counted from the words.
    pub usage: Option<(u64, u64)>,
    /// The stop reason to report; else the provider's usual one.
    pub finish_reason: Option<String>,
    /// Characters per streamed text piece; else the text streams word by word.
    pub piece_size: Option<usize>,
    /// The `Content-Type` to send instead of the API's own.
    pub content_type: Option<String>,
    /// Answer whole (one JSON body) even when the request asks for a stream.
    pub whole: bool,
    /// Stream only the first this many events or lines, then end the body cleanly, as
    /// a connection cut mid-answer by a proxy would look.
    pub cut_after: Option<usize>,
}

impl Reply {
    fn of(outcome: Outcome) -> Reply {
        Reply {
            outcome,
            first_delay: Duration::ZERO,
            gap: Duration::ZERO,
            usage: None,
            finish_reason: None,
            piece_size: None,
            content_type: None,
            whole: false,
            cut_after: None,
        }
    }

    /// A text answer.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::of(Outcome::Answer {
            text: text.into(),
            tool_calls: Vec::new(),
            structured: None,
        })
    }

    /// A structured answer, `value` (a JSON object, or anything to script a malformed
    /// one): JSON text from the OpenAI-compatible and Ollama fakes, a call of the
    /// forced tool with `value` as its input from the Anthropic and Bedrock fakes.
    ///
    /// ```
    /// use prill_testkit::providers::Reply;
    /// use serde_json::json;
    ///
    /// let reply = Reply::structured(json!({"pass": true}))
    ///     .with_tool_call("lookup", json!({"q": "x"}));
    /// # let _ = reply;
    /// ```
    pub fn structured(value: Value) -> Reply {
        Reply::of(Outcome::Answer {
            text: String::new(),
            tool_calls: Vec::new(),
            structured: Some(value),
        })
    }

    /// An answer that is one tool call with JSON arguments.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Reply {
        Reply::text("").with_tool_call(name, arguments)
    }

    /// Adds a tool call with JSON arguments.
    pub fn with_tool_call(self, name: impl Into<String>, arguments: Value) -> Reply {
        self.with_tool_call_raw(name, arguments.to_string())
    }

    /// Adds a tool call whose arguments are `text` as is.
    pub fn with_tool_call_raw(mut self, name: impl Into<String>, text: impl Into<String>) -> Reply {
        if let Outcome::Answer { tool_calls, .. } = &mut self.outcome {
            tool_calls.push(ScriptedToolCall {
                name: name.into(),
                arguments: text.into(),
            });
        }
        self
    }

    /// An error with `status`, in the provider's error shape.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::of(Outcome::Fail {
            status,
            message: message.into(),
            retry_after: None,
        })
    }

    /// A `429` with `Retry-After: seconds`.
    pub fn rate_limited(seconds: u64) -> Reply {
        Reply::of(Outcome::Fail {
            status: 429,
            message: "Rate limit reached for requests".to_owned(),
            retry_after: Some(seconds),
        })
    }

    /// A status with `body` sent as is.
    pub fn raw(status: u16, body: impl Into<String>) -> Reply {
        Reply::of(Outcome::Raw {
            status,
            body: body.into(),
        })
    }

    /// Waits `delay` before the first byte.
    pub fn delay(self, delay: Duration) -> Reply {
        Reply {
            first_delay: delay,
            ..self
        }
    }

    /// Waits `gap` before each later streamed piece.
    pub fn gap(self, gap: Duration) -> Reply {
        Reply { gap, ..self }
    }

    /// Reports `input` and `output` tokens.
    pub fn usage(self, input: u64, output: u64) -> Reply {
        Reply {
            usage: Some((input, output)),
            ..self
        }
    }

    /// Reports `reason` as the stop reason.
    pub fn finish_reason(self, reason: impl Into<String>) -> Reply {
        Reply {
            finish_reason: Some(reason.into()),
            ..self
        }
    }

    /// Sends `content_type` as the answer's `Content-Type` (`text/html`, say).
    ///
    /// ```
    /// use prill_testkit::providers::Reply;
    ///
    /// let page = Reply::raw(200, "<html>502 Bad Gateway</html>").content_type("text/html");
    /// assert_eq!(page.content_type.as_deref(), Some("text/html"));
    /// ```
    pub fn content_type(self, content_type: impl Into<String>) -> Reply {
        Reply {
            content_type: Some(content_type.into()),
            ..self
        }
    }

    /// Answers whole, as one JSON body, even to a request that asks for a stream.
    pub fn whole(self) -> Reply {
        Reply {
            whole: true,
            ..self
        }
    }

    /// Streams only the first `n` events or lines, then ends the body cleanly.
    pub fn cut_after(self, n: usize) -> Reply {
        Reply {
            cut_after: Some(n),
            ..self
        }
    }

    /// Streams the text `size` characters at a time.
    pub fn pieces(self, size: usize) -> Reply {
        Reply {
            piece_size: Some(size.max(1)),
            ..self
        }
    }

    /// The text and the tool calls of an answer, for a fake that gives structured
    /// answers as JSON text: the structured answer, serialized, follows the text.
    pub(crate) fn as_text(
        text: &str,
        tool_calls: &[ScriptedToolCall],
        structured: Option<&Value>,
    ) -> (String, Vec<ScriptedToolCall>) {
        let mut text = text.to_owned();
        if let Some(value) = structured {
            text.push_str(&value.to_string());
        }
        (text, tool_calls.to_vec())
    }

    /// The text and the tool calls of an answer, for a fake that gives structured
    /// answers as a call of the tool the request forces (`forced`): the structured
    /// answer becomes a call of it after the others; without one, and without a call
    /// of that tool, so does the text, as is. Nothing is forced: [`Reply::as_text`].
    pub(crate) fn as_forced_call(
        text: &str,
        tool_calls: &[ScriptedToolCall],
        structured: Option<&Value>,
        forced: Option<&str>,
    ) -> (String, Vec<ScriptedToolCall>) {
        let Some(name) = forced else {
            return Reply::as_text(text, tool_calls, structured);
        };
        let mut calls = tool_calls.to_vec();
        let (text, arguments) = match structured {
            Some(value) => (text.to_owned(), value.to_string()),
            None if calls.iter().any(|c| c.name == name) => return (text.to_owned(), calls),
            None => (String::new(), text.to_owned()),
        };
        calls.push(ScriptedToolCall {
            name: name.to_owned(),
            arguments,
        });
        (text, calls)
    }

    /// The text streamed piece by piece.
    pub(crate) fn text_pieces(&self, text: &str) -> Vec<String> {
        match self.piece_size {
            Some(size) => super::scripted::pieces(text, size),
            None => super::scripted::words(text),
        }
    }
}

/// A function of a request's body that answers it, or passes (`None`) to the rules.
pub(crate) type Responder = Arc<dyn Fn(&Value) -> Option<Reply> + Send + Sync>;

/// The script and the record of one fake.
#[derive(Debug)]
pub(crate) struct State {
    inner: Mutex<Inner>,
}

struct Inner {
    queue: VecDeque<Reply>,
    responder: Option<Responder>,
    rules: Vec<(String, Reply)>,
    default: Reply,
    requests: Vec<RecordedRequest>,
    /// Whether requests are kept for [`State::requests`] (on unless turned off).
    recording: bool,
    key: Option<String>,
    models: Option<Vec<String>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("queue", &self.queue)
            .field("responder", &self.responder.is_some())
            .field("rules", &self.rules)
            .field("default", &self.default)
            .field("requests", &self.requests.len())
            .field("models", &self.models)
            .finish_non_exhaustive()
    }
}

impl State {
    pub(crate) fn new() -> Arc<State> {
        Arc::new(State {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                responder: None,
                rules: Vec::new(),
                default: Reply::text("ok"),
                requests: Vec::new(),
                recording: true,
                key: None,
                models: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A test that panicked while holding the lock has failed already.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push(&self, reply: Reply) {
        self.lock().queue.push_back(reply);
    }

    pub(crate) fn set_responder(&self, responder: Responder) {
        self.lock().responder = Some(responder);
    }

    /// The reply to a request with `body`: the queue's first, else the responder's
    /// answer, else [`State::next`] by the last user message.
    pub(crate) fn next_for(&self, body: &Value, last_user: &str) -> Reply {
        let responder = {
            let mut inner = self.lock();
            if let Some(reply) = inner.queue.pop_front() {
                return reply;
            }
            inner.responder.clone()
        };
        // Called without the lock: a responder may take its time.
        if let Some(reply) = responder.and_then(|r| r(body)) {
            return reply;
        }
        self.next(last_user)
    }

    pub(crate) fn rule(&self, contains: &str, reply: Reply) {
        self.lock().rules.push((contains.to_owned(), reply));
    }

    pub(crate) fn set_default(&self, reply: Reply) {
        self.lock().default = reply;
    }

    pub(crate) fn set_key(&self, key: Option<String>) {
        self.lock().key = key;
    }

    pub(crate) fn key(&self) -> Option<String> {
        self.lock().key.clone()
    }

    pub(crate) fn set_models(&self, models: Option<Vec<String>>) {
        self.lock().models = models;
    }

    /// Whether `model` is served (every model is, unless a list was set).
    pub(crate) fn serves(&self, model: &str) -> bool {
        self.lock()
            .models
            .as_ref()
            .is_none_or(|m| m.iter().any(|x| x == model))
    }

    /// The models served, when set.
    pub(crate) fn models(&self) -> Option<Vec<String>> {
        self.lock().models.clone()
    }

    /// Keeps a copy of `request`, while recording.
    pub(crate) fn record(&self, request: &RecordedRequest) {
        let mut inner = self.lock();
        if inner.recording {
            inner.requests.push(request.clone());
        }
    }

    /// Whether requests are kept from now on.
    pub(crate) fn set_recording(&self, on: bool) {
        self.lock().recording = on;
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The next reply: the queue's first, else the first rule whose text the last user
    /// message contains, else the default.
    pub(crate) fn next(&self, last_user: &str) -> Reply {
        let mut inner = self.lock();
        if let Some(reply) = inner.queue.pop_front() {
            return reply;
        }
        if let Some((_, reply)) = inner
            .rules
            .iter()
            .find(|(contains, _)| last_user.contains(contains.as_str()))
        {
            return reply.clone();
        }
        inner.default.clone()
    }
}

/// The text of a message's `content`: a string, or the `text` of its parts.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The text of the last `user` message of an OpenAI-style `messages` array.
pub(crate) fn last_user_text(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|m| {
            m.iter()
                .rev()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        })
        .and_then(|m| m.get("content"))
        .map(content_text)
        .unwrap_or_default()
}

/// A rough token count: the words of every message.
pub(crate) fn word_count(body: &Value) -> u64 {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(|m| m.get("content"))
                .map(|c| content_text(c).split_whitespace().count() as u64)
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn queue_then_rules_then_default() {
        let state = State::new();
        state.push(Reply::text("first"));
        state.rule("capital", Reply::text("Paris"));
        assert_eq!(state.next("capital?"), Reply::text("first"));
        assert_eq!(state.next("the capital?"), Reply::text("Paris"));
        assert_eq!(state.next("hello"), Reply::text("ok"));
    }

    #[test]
    fn the_responder_comes_after_the_queue_and_before_the_rules() {
        let state = State::new();
        state.push(Reply::text("first"));
        state.rule("capital", Reply::text("Paris"));
        state.set_responder(Arc::new(|body: &Value| {
            body.get("tools")
                .map(|_| Reply::tool_call("lookup", json!({})))
        }));
        let with_tools = json!({"tools": []});
        assert_eq!(
            state.next_for(&with_tools, "capital?"),
            Reply::text("first")
        );
        assert_eq!(
            state.next_for(&with_tools, "capital?"),
            Reply::tool_call("lookup", json!({}))
        );
        assert_eq!(state.next_for(&json!({}), "capital?"), Reply::text("Paris"));
    }

    #[test]
    fn structured_answers_are_text_or_a_forced_call() {
        let value = json!({"pass": true});
        let lookup = ScriptedToolCall {
            name: "lookup".into(),
            arguments: "{}".into(),
        };
        let (text, calls) = Reply::as_text("", std::slice::from_ref(&lookup), Some(&value));
        assert_eq!((text.as_str(), calls.len()), (r#"{"pass":true}"#, 1));
        let (text, calls) =
            Reply::as_forced_call("", std::slice::from_ref(&lookup), Some(&value), Some("v"));
        assert_eq!(text, "");
        assert_eq!(calls[1].name, "v");
        assert_eq!(calls[1].arguments, r#"{"pass":true}"#);
        let (text, calls) = Reply::as_forced_call("not json", &[], None, Some("v"));
        assert_eq!(
            (text.as_str(), calls[0].arguments.as_str()),
            ("", "not json")
        );
        let (text, calls) = Reply::as_forced_call("plain", &[], None, None);
        assert_eq!((text.as_str(), calls.len()), ("plain", 0));
    }

    #[test]
    fn last_user_message_is_found() {
        let body = json!({"messages": [
            {"role": "user", "content": "one two"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "three"}]},
        ]});
        assert_eq!(last_user_text(&body), "three");
        assert_eq!(word_count(&body), 4);
    }
}
