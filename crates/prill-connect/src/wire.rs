//! neuro-san's wire format: the `ChatRequest` a client sends ([`chat_request`]) and how
//! a client picks the answer out of the streamed `ChatResponse`s ([`Collector`]).
//!
//! Both follow upstream's code (`streaming_input_processor.formulate_chat_request`,
//! `AnswerMessageProcessor`, `ChatContextMessageProcessor`,
//! `TokenAccountingMessageProcessor`); see `shared/research/neuro-san.md` §1.4 and §4.

mod trajectory;

use serde_json::{Map, Value, json};

use crate::types::{AgentRequest, AgentResponse, Timings, TokenUsage};

/// A streamed line or message that breaks neuro-san's wire format: what was wrong, as
/// a protocol error's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

/// The `ChatRequest` body for `request`, exactly as neuro-san's driver formulates it:
/// `user_message` (`type` `HUMAN`, `text`, `null` when there is none), then
/// `chat_context` when it is not empty, `sly_data` when it is not empty, and
/// `chat_filter`.
///
/// ```
/// use prill_connect::{AgentRequest, wire::chat_request};
///
/// let mut request = AgentRequest::new("multiply");
/// request.sly_data = serde_json::json!({"x": 847, "y": 23}).as_object().cloned();
/// assert_eq!(
///     chat_request(&request).to_string(),
///     r#"{"user_message":{"type":"HUMAN","text":"multiply"},"sly_data":{"x":847,"y":23},"chat_filter":{"chat_filter_type":"MINIMAL"}}"#
/// );
/// ```
pub fn chat_request(request: &AgentRequest) -> Value {
    let mut body = Map::new();
    body.insert(
        "user_message".into(),
        json!({"type": "HUMAN", "text": request.text}),
    );
    if let Some(chat_context) = &request.chat_context
        && truthy(chat_context)
    {
        body.insert("chat_context".into(), chat_context.clone());
    }
    if let Some(sly_data) = &request.sly_data
        && !sly_data.is_empty()
    {
        body.insert("sly_data".into(), Value::Object(sly_data.clone()));
    }
    body.insert(
        "chat_filter".into(),
        json!({"chat_filter_type": request.chat_filter.name()}),
    );
    Value::Object(body)
}

/// Python's truth value of a JSON value, as `bool(chat_context)` sees it.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A `ChatMessage`'s type, by name (`"AI"`) or by its `chat.proto` number (`4`).
pub fn message_type(message: &Value) -> Option<&'static str> {
    const TYPES: [(&str, i64); 8] = [
        ("UNKNOWN", 0),
        ("SYSTEM", 1),
        ("HUMAN", 2),
        ("AI", 4),
        ("AGENT", 100),
        ("AGENT_FRAMEWORK", 101),
        ("AGENT_TOOL_RESULT", 103),
        ("AGENT_PROGRESS", 104),
    ];
    match message.get("type")? {
        Value::String(name) => TYPES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(n, _)| *n),
        Value::Number(number) => {
            let number = number.as_i64()?;
            TYPES.iter().find(|(_, v)| *v == number).map(|(n, _)| *n)
        }
        _ => None,
    }
}

/// Whether `message` is a keep-alive heartbeat: an `AGENT_PROGRESS` message with empty
/// text and no structure.
pub fn is_heartbeat(message: &Value) -> bool {
    message_type(message) == Some("AGENT_PROGRESS")
        && present(message, "text").is_none_or(|t| t.as_str() == Some(""))
        && present(message, "structure").is_none()
}

/// The field `key` when it is there and not `null` (Python's `dict.get(key) is not None`).
fn present<'v>(message: &'v Value, key: &str) -> Option<&'v Value> {
    message.get(key).filter(|v| !v.is_null())
}

/// How long `origin` is, as Python's `len()` counts it; `None` when there is none.
fn origin_len(message: &Value) -> usize {
    match present(message, "origin") {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(o)) => o.len(),
        Some(Value::String(s)) => s.chars().count(),
        _ => 0,
    }
}

/// Collects the streamed messages of one exchange and picks the answer from them.
///
/// Rules, from upstream's message processors:
/// - **answer text and structure**: among the messages of type `AI` or `AGENT_FRAMEWORK`
///   whose `origin` is missing or at most one long (the front man, never a sub-agent)
///   and that hold `text` or `structure`, each one's non-null `text` replaces the answer
///   and each one's non-null `structure` replaces the structure: the last wins.
/// - **chat_context and sly_data**: from the `AGENT_FRAMEWORK` messages that hold a
///   non-null `chat_context`: the last one's `chat_context`, and the last `sly_data`
///   key among them (a `null` one clears it).
/// - **token usage**: the last `AGENT` message of the front man whose `structure` has
///   `total_tokens`; `prompt_tokens` is the input and `completion_tokens` the output.
/// - **trajectory**: the agents and tools invoked, read from the messages' `origin`
///   paths and their `Received arguments:` / `Got result:` messages (see
///   `docs/checks.md`, "The `trajectory` part"); under `MINIMAL` there is none.
/// - heartbeats ([`is_heartbeat`]) are dropped; every other message is kept, raw.
/// - every message's `text` is a string and its `structure`, `sly_data` and
///   `chat_context` are objects (each may be missing or `null`), as `chat.proto` has
///   them; anything else is a [`WireError`], never read as something else.
/// - the answer is complete ([`Collector::ended`]) at the front man's `AGENT_FRAMEWORK`
///   message that carries a `chat_context`: the message a `MINIMAL` stream consists of,
///   and the one upstream's client continues the conversation from.
///
/// ```
/// use prill_connect::wire::Collector;
/// use serde_json::json;
///
/// let mut collector = Collector::default();
/// collector.accept_line(json!({"response": {"type": "AI", "text": "thinking",
///     "origin": [{"tool": "Front", "instantiation_index": 1}, {"tool": "Sub", "instantiation_index": 1}]}})).unwrap();
/// collector.accept_line(json!({"response": {"type": "AGENT_FRAMEWORK", "text": "42",
///     "chat_context": {"chat_histories": []}, "sly_data": {"equals": 42}}})).unwrap();
/// let response = collector.finish(Default::default());
/// assert_eq!(response.text.as_deref(), Some("42"));
/// assert_eq!(response.sly_data, Some(json!({"equals": 42})));
/// assert_eq!(response.messages.len(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Collector {
    text: Option<String>,
    structure: Option<Value>,
    sly_data: Option<Value>,
    chat_context: Option<Value>,
    usage: Option<TokenUsage>,
    messages: Vec<Value>,
    trajectory: trajectory::Reader,
    saw_final: bool,
    ended: bool,
}

impl Collector {
    /// Takes one streamed `ChatResponse` (one JSON value of a line). `{}` (what neuro-san
    /// answers a request without text) holds no message and is skipped. Anything other
    /// than an object whose `response`, if any, is an object, is an error, described.
    pub fn accept_line(&mut self, line: Value) -> Result<(), WireError> {
        let Value::Object(mut object) = line else {
            return Err(WireError(format!(
                "a line holds {} where a ChatResponse object belongs",
                describe(&line)
            )));
        };
        match object.remove("response") {
            None | Some(Value::Null) => Ok(()),
            Some(message @ Value::Object(_)) => self.accept_message(message),
            Some(other) => Err(WireError(format!(
                "a ChatResponse's `response` is {}, not a ChatMessage object",
                describe(&other)
            ))),
        }
    }

    /// Takes one `ChatMessage`; a field of the wrong type is an error.
    pub fn accept_message(&mut self, message: Value) -> Result<(), WireError> {
        check_fields(&message)?;
        if is_heartbeat(&message) {
            return Ok(());
        }
        let kind = message_type(&message);
        let front_man = origin_len(&message) <= 1;
        if matches!(kind, Some("AI" | "AGENT_FRAMEWORK")) && front_man {
            if let Some(Value::String(text)) = present(&message, "text") {
                self.text = Some(text.clone());
            }
            if let Some(structure) = present(&message, "structure") {
                self.structure = Some(structure.clone());
            }
        }
        if kind == Some("AGENT_FRAMEWORK") {
            self.saw_final = true;
            if let Some(chat_context) = present(&message, "chat_context") {
                self.ended |= front_man;
                self.chat_context = Some(chat_context.clone());
                if let Some(sly_data) = message.get("sly_data") {
                    self.sly_data = Some(sly_data.clone()).filter(|v| !v.is_null());
                }
            }
        }
        if kind == Some("AGENT")
            && front_man
            && let Some(structure) = present(&message, "structure")
            && present(structure, "total_tokens").is_some()
        {
            let count = |key: &str| {
                let n = structure.get(key)?;
                n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.is_finite() && *f >= 0.0)
                        .map(|f| f.round() as u64)
                })
            };
            self.usage = Some(TokenUsage {
                reasoning: None,
                input: count("prompt_tokens"),
                output: count("completion_tokens"),
            });
        }
        self.trajectory
            .accept(&message, kind, self.messages.len() + 1);
        self.messages.push(message);
        Ok(())
    }

    /// Whether an `AGENT_FRAMEWORK` message has been taken (a direct agent's answer ends
    /// with the first one).
    pub fn saw_final(&self) -> bool {
        self.saw_final
    }

    /// Whether the final message has been taken: an `AGENT_FRAMEWORK` message of the
    /// front man (no `origin`, or one element) carrying a `chat_context`. Over http the
    /// answer ends there, whether or not the server closes the stream.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Whether any message (heartbeats aside) has been taken.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The response picked from every message taken.
    pub fn finish(self, timings: Timings) -> AgentResponse {
        AgentResponse {
            text: self.text,
            structure: self.structure,
            sly_data: self.sly_data,
            chat_context: self.chat_context,
            messages: self.messages,
            timings,
            usage: self.usage,
            trajectory: self.trajectory.finish(),
        }
    }
}

/// The types `chat.proto` gives a `ChatMessage`'s fields: `text` a string, `structure`,
/// `sly_data` and `chat_context` objects; each may be missing or `null`.
fn check_fields(message: &Value) -> Result<(), WireError> {
    let wrong = |key: &str, expected: &str, found: &Value| {
        let which = match message_type(message) {
            Some(kind) if kind.starts_with(['A', 'U']) => format!("an {kind}"),
            Some(kind) => format!("a {kind}"),
            None => "a".to_owned(),
        };
        Err(WireError(format!(
            "the `{key}` of {which} message is {}, not {expected}",
            describe(found)
        )))
    };
    match present(message, "text") {
        None | Some(Value::String(_)) => {}
        Some(other) => return wrong("text", "a string", other),
    }
    for key in ["structure", "sly_data", "chat_context"] {
        match present(message, key) {
            None | Some(Value::Object(_)) => {}
            Some(other) => return wrong(key, "an object", other),
        }
    }
    Ok(())
}

/// `an array`, `a string`, ...: what a JSON value is, for messages.
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The response that `messages` (`ChatMessage`s, in stream order) amount to, by the
/// [`Collector`] rules; for in-process agents that produce messages.
/// A message with a field of the wrong type is an error.
pub fn response_from_messages(
    messages: impl IntoIterator<Item = Value>,
) -> Result<AgentResponse, WireError> {
    let mut collector = Collector::default();
    for message in messages {
        collector.accept_message(message)?;
    }
    Ok(collector.finish(Timings::default()))
}

#[cfg(test)]
mod tests {
    use prill_spec::model::data_driven::ChatFilter;

    use super::*;

    fn front() -> Value {
        json!([{"tool": "MusicNerdPro", "instantiation_index": 1}])
    }

    fn sub() -> Value {
        json!([{"tool": "MusicNerdPro", "instantiation_index": 1}, {"tool": "Accountant", "instantiation_index": 1}])
    }

    fn collect(lines: Vec<Value>) -> AgentResponse {
        let mut collector = Collector::default();
        for line in lines {
            collector.accept_line(line).unwrap();
        }
        collector.finish(Timings::default())
    }

    #[test]
    fn request_is_exactly_upstreams() {
        let mut request = AgentRequest::new("multiply");
        request.sly_data = json!({"x": 847, "y": 23}).as_object().cloned();
        assert_eq!(
            serde_json::to_string(&chat_request(&request)).unwrap(),
            r#"{"user_message":{"type":"HUMAN","text":"multiply"},"sly_data":{"x":847,"y":23},"chat_filter":{"chat_filter_type":"MINIMAL"}}"#
        );
    }

    #[test]
    fn request_with_everything() {
        let request = AgentRequest {
            text: Some("again".into()),
            sly_data: json!({"k": 1}).as_object().cloned(),
            chat_context: Some(json!({"chat_histories": [{"messages": []}]})),
            chat_filter: ChatFilter::Maximal,
            metadata: [("user_id".to_owned(), "alice".to_owned())].into(),
            timeout: None,
            use_direct: true,
        };
        assert_eq!(
            serde_json::to_string(&chat_request(&request)).unwrap(),
            r#"{"user_message":{"type":"HUMAN","text":"again"},"chat_context":{"chat_histories":[{"messages":[]}]},"sly_data":{"k":1},"chat_filter":{"chat_filter_type":"MAXIMAL"}}"#
        );
    }

    #[test]
    fn request_leaves_out_empty_parts_and_sends_null_text() {
        let request = AgentRequest {
            sly_data: Some(Map::new()),
            chat_context: Some(json!({})),
            ..AgentRequest::default()
        };
        assert_eq!(
            serde_json::to_string(&chat_request(&request)).unwrap(),
            r#"{"user_message":{"type":"HUMAN","text":null},"chat_filter":{"chat_filter_type":"MINIMAL"}}"#
        );
        let request = AgentRequest {
            chat_context: Some(Value::Null),
            ..AgentRequest::new("x")
        };
        assert!(chat_request(&request).get("chat_context").is_none());
    }

    #[test]
    fn minimal_stream_single_final_line() {
        let r = collect(vec![json!({"response": {
            "type": "AGENT_FRAMEWORK",
            "text": "\"Check sly_data['equals'] for the result\"",
            "chat_context": {"chat_histories": []},
            "sly_data": {"equals": 42}
        }})]);
        assert_eq!(
            r.text.as_deref(),
            Some("\"Check sly_data['equals'] for the result\"")
        );
        assert_eq!(r.sly_data, Some(json!({"equals": 42})));
        assert_eq!(r.chat_context, Some(json!({"chat_histories": []})));
        assert_eq!(r.structure, None);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.usage, None);
    }

    #[test]
    fn maximal_stream_sub_agents_ignored_last_wins() {
        let request_echo = json!({"user_message": {"type": "HUMAN", "text": "q"}});
        let r = collect(vec![
            json!({"response": {"type": "AI", "origin": front(), "text": "first front-man text"}, "request": request_echo}),
            json!({"response": {"type": "AI", "origin": sub(), "text": "sub-agent chatter", "structure": {"x": 1}}}),
            json!({"response": {"type": "AGENT", "origin": sub(), "text": "Received arguments:", "structure": {"running_cost": 0.0}}}),
            json!({"response": {"type": "AGENT_PROGRESS", "text": "", "structure": {"progress": 0.5}}}),
            json!({"response": {"type": "AGENT_PROGRESS", "text": ""}}),
            json!({"response": {"type": "AGENT", "origin": front(), "structure": {"total_tokens": 30, "prompt_tokens": 20, "completion_tokens": 10.0}}}),
            json!({"response": {"type": "AI", "origin": front(), "text": "front-man answer", "structure": {"answer": "The Beatles"}}}),
            json!({"response": {"type": "AI", "origin": sub(), "text": "late sub-agent text"}}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "final", "chat_context": {"chat_histories": [1]}}}),
        ]);
        assert_eq!(r.text.as_deref(), Some("final"));
        // The final message has no structure: the front man's last one stands.
        assert_eq!(r.structure, Some(json!({"answer": "The Beatles"})));
        assert_eq!(r.chat_context, Some(json!({"chat_histories": [1]})));
        assert_eq!(r.sly_data, None);
        assert_eq!(
            r.usage,
            Some(TokenUsage {
                reasoning: None,
                input: Some(20),
                output: Some(10)
            })
        );
        // Only the empty heartbeat is dropped; progress with a structure stays.
        assert_eq!(r.messages.len(), 8);
        assert!(r.messages.iter().all(|m| m.get("request").is_none()));
    }

    #[test]
    fn answer_needs_text_or_structure_and_the_right_type() {
        let r = collect(vec![
            json!({"response": {"type": "AI", "text": "answer"}}),
            json!({"response": {"type": "AI", "origin": front()}}),
            json!({"response": {"type": "AGENT", "text": "not an answer type"}}),
            json!({"response": {"type": "AGENT_TOOL_RESULT", "text": "nor this"}}),
            json!({"response": {"type": "AI", "text": null, "structure": null}}),
        ]);
        assert_eq!(r.text.as_deref(), Some("answer"));
        // An empty text is present and wins.
        let r = collect(vec![
            json!({"response": {"type": "AI", "text": "answer"}}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "", "chat_context": {}}}),
        ]);
        assert_eq!(r.text.as_deref(), Some(""));
        assert_eq!(r.chat_context, Some(json!({})));
    }

    #[test]
    fn chat_context_and_sly_data_from_framework_messages_with_a_context() {
        let r = collect(vec![
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "a", "chat_context": {"n": 1}, "sly_data": {"s": 1}}}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "b", "sly_data": {"ignored": true}}}),
            json!({"response": {"type": "AI", "text": "c", "chat_context": {"ignored": true}}}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "d", "chat_context": {"n": 2}}}),
        ]);
        assert_eq!(r.text.as_deref(), Some("d"));
        assert_eq!(r.chat_context, Some(json!({"n": 2})));
        // The last context-carrying message had no sly_data key: the earlier one stands.
        assert_eq!(r.sly_data, Some(json!({"s": 1})));
        let r = collect(vec![
            json!({"response": {"type": "AGENT_FRAMEWORK", "chat_context": {"n": 1}, "sly_data": {"s": 1}}}),
            json!({"response": {"type": "AGENT_FRAMEWORK", "chat_context": {"n": 2}, "sly_data": null}}),
        ]);
        assert_eq!(r.sly_data, None);
    }

    #[test]
    fn empty_object_line_is_no_answer() {
        let r = collect(vec![json!({})]);
        assert_eq!(r, AgentResponse::default());
    }

    #[test]
    fn numeric_types_and_bad_lines() {
        let r = collect(vec![
            json!({"response": {"type": 101, "text": "n", "chat_context": {"c": 1}}}),
        ]);
        assert_eq!(r.text.as_deref(), Some("n"));
        let mut collector = Collector::default();
        assert!(
            collector
                .accept_line(json!([1]))
                .unwrap_err()
                .0
                .contains("an array")
        );
        assert!(
            collector
                .accept_line(json!({"response": "x"}))
                .unwrap_err()
                .0
                .contains("a string")
        );
        assert!(!collector.saw_final());
    }

    #[test]
    fn fields_of_the_wrong_type_are_errors() {
        let error = |message: Value| {
            Collector::default()
                .accept_line(json!({"response": message}))
                .unwrap_err()
                .0
        };
        assert_eq!(
            error(json!({"type": "AGENT_FRAMEWORK", "text": {"a": 1}, "chat_context": {}})),
            "the `text` of an AGENT_FRAMEWORK message is an object, not a string"
        );
        assert_eq!(
            error(json!({"type": "AGENT_FRAMEWORK", "text": "x", "chat_context": [1]})),
            "the `chat_context` of an AGENT_FRAMEWORK message is an array, not an object"
        );
        assert!(error(json!({"type": "AI", "structure": "x"})).contains("`structure`"));
        assert!(error(json!({"type": 7, "sly_data": 3})).contains("the `sly_data` of a message"));
        // Missing and null fields are fine.
        let mut collector = Collector::default();
        collector
            .accept_message(json!({"type": "AGENT_FRAMEWORK", "text": null, "sly_data": null}))
            .unwrap();
        assert!(collector.saw_final() && !collector.ended());
    }

    #[test]
    fn the_answer_ends_at_the_front_mans_final_message_with_a_context() {
        let mut collector = Collector::default();
        collector
            .accept_message(json!({"type": "AGENT_FRAMEWORK", "origin": sub(), "chat_context": {}}))
            .unwrap();
        assert!(!collector.ended(), "a sub-agent's message");
        collector
            .accept_message(json!({"type": "AGENT_FRAMEWORK", "text": "done", "chat_context": {}}))
            .unwrap();
        assert!(collector.ended());
    }

    #[test]
    fn heartbeats() {
        assert!(is_heartbeat(&json!({"type": "AGENT_PROGRESS", "text": ""})));
        assert!(is_heartbeat(&json!({"type": "AGENT_PROGRESS"})));
        assert!(!is_heartbeat(
            &json!({"type": "AGENT_PROGRESS", "text": "50%"})
        ));
        assert!(!is_heartbeat(
            &json!({"type": "AGENT_PROGRESS", "text": "", "structure": {"progress": 0.5}})
        ));
        assert!(!is_heartbeat(&json!({"type": "AI", "text": ""})));
    }
}
