//! [`FakeOpenAi`]: an OpenAI Chat Completions server on 127.0.0.1 (`POST
//! /v1/chat/completions`), which also stands in for Hugging Face's router, for vLLM,
//! llama.cpp and LM Studio, and ([`FakeOpenAi::azure`]) for an Azure OpenAI resource
//! (TGI has its own fake, [`super::tgi`]).
//!
//! It validates requests as the real API does and rejects malformed ones with the real
//! error shape, `{"error": {"message", "type", "param", "code"}}`: first the checks
//! below, with the real API's own messages, then the whole body against OpenAI's
//! published definition of the request (`definition.rs`: `CreateChatCompletionRequest`
//! from OpenAI's OpenAPI document, vendored under `data/openai/`), a 400 naming the first
//! problem:
//!
//! | request | answer |
//! |---|---|
//! | another path | 404 `Invalid URL (POST /v1/x)` |
//! | not `POST` | 405 |
//! | no bearer, when a key is expected | 401 `You didn't provide an API key...` |
//! | another bearer | 401 `Incorrect API key provided...`, code `invalid_api_key` |
//! | a body that is not a JSON object | 400 `We could not parse the JSON body...` |
//! | a top-level field the definition does not name (`top_k`) | 400 `Unrecognized request argument supplied: top_k` |
//! | no `model` | 400 `you must provide a model parameter` |
//! | no `messages`, or empty | 400, code `missing_required_parameter` / `empty_array` |
//! | a message with an unknown role, or no content | 400, param `messages[i].role` / `.content` |
//! | a tool that is not `{"type": "function", "function": {"name", ...}}` | 400, param `tools[i]...` |
//! | `temperature` outside 0..=2, `top_p` outside 0..=1, a `stop` of more than 4 | 400 |
//! | a non-integer `seed`, `max_tokens` or `max_completion_tokens` | 400, code `invalid_type` |
//! | `max_tokens`, or a `temperature` other than 1, to a reasoning model (o-series, `gpt-5*` but `-chat`, `codex-*`) | 400, code `unsupported_parameter` / `unsupported_value` |
//! | `stream_options` without `stream: true` | 400 |
//! | a `response_format` whose `type` is not `text`, `json_object` or `json_schema`; a `json_schema` without `name` or `schema`, or whose schema strict mode refuses; `json_object` without the word "json" in the messages | 400, param `response_format...` |
//! | a model not in [`FakeOpenAi::models`], when set | 404, code `model_not_found` |
//! | a `tool` message that answers no call of the assistant message with `tool_calls` before it | 400 `messages with role 'tool' must be a response to a preceeding message with 'tool_calls'` |
//! | a call of such a message left without a `tool` message | 400 `... The following tool_call_ids did not have response messages: ...` |
//! | anything else the definition refuses (a wrong type, an unknown enum value, a wrongly shaped `response_format` or `stream_options`) | 400, param where it is |
//! | Azure: another path, or a deployment path without `api-version` | 404 `Resource not found` |
//! | Azure: no `api-key` header, or another key | 401 `Access denied due to invalid subscription key...` |
//!
//! A valid request gets the next [`Reply`]: a `chat.completion`, or with `stream: true`
//! server-sent `chat.completion.chunk` events (the role first, text piece by piece, each
//! tool call's name then its arguments in pieces of 5 characters, the finish reason, the
//! usage when `stream_options.include_usage` is set, then `data: [DONE]`). A
//! [`Reply::structured`] answer is the message's text, as JSON. [`Reply::whole`],
//! [`Reply::cut_after`] and [`Reply::content_type`] script the faults of broken servers
//! and proxies.
//!
//! Answers are written straight into bytes (`render.rs`), a stream's events into one
//! buffer sent in slices, and an answer a thread wrote lately is sent again as the same
//! bytes (`memo.rs`), so that the fake serves tens of thousands of completions a second
//! and a benchmark of a client measures the client (`docs/performance.md`).

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::Response;
use serde_json::{Map, Value, json};

use super::reply::{Outcome, Reply, ScriptedToolCall, State, last_user_text, word_count};
use super::scripted::{
    Answer, Body, RecordedRequest, Served, json_answer, relabel, serve_on, streamed_answer,
};

mod definition;
mod memo;
mod render;
mod response_format;
mod tool_turns;

/// The roles a message may have.
const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// A fake OpenAI-compatible server; stops when dropped.
#[derive(Debug)]
pub struct FakeOpenAi {
    served: Served,
    state: Arc<State>,
    azure: Arc<AtomicBool>,
}

scripting!(FakeOpenAi);

impl FakeOpenAi {
    /// Starts a fake on a free port of 127.0.0.1 that accepts any key (or none) and
    /// any model, and answers `ok` unless scripted otherwise.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeOpenAi {
        FakeOpenAi::start_on(0)
            .await
            .expect("a fake provider binds 127.0.0.1")
    }

    /// Starts the same fake on `127.0.0.1:port`, or on a free port when `port` is 0.
    ///
    /// # Errors
    ///
    /// When the port cannot be bound (taken, or not allowed).
    pub async fn start_on(port: u16) -> std::io::Result<FakeOpenAi> {
        let state = State::new();
        let azure = Arc::new(AtomicBool::new(false));
        let (shared, on_azure) = (Arc::clone(&state), Arc::clone(&azure));
        let served = serve_on(port, move |request| {
            let azure = on_azure.load(Ordering::Relaxed);
            handle(Arc::clone(&shared), request, azure)
        })
        .await?;
        Ok(FakeOpenAi {
            served,
            state,
            azure,
        })
    }

    /// Answers as an Azure OpenAI resource from now on: at
    /// `/openai/deployments/{deployment}/chat/completions?api-version=...` and
    /// `/openai/v1/chat/completions`, with the key in the `api-key` header.
    pub fn azure(&self) -> &FakeOpenAi {
        self.azure.store(true, Ordering::Relaxed);
        self
    }

    /// Accepts only `Authorization: Bearer {key}` from now on.
    pub fn expect_key(&self, key: &str) -> &FakeOpenAi {
        self.state.set_key(Some(key.to_owned()));
        self
    }

    /// Serves only `models` from now on.
    pub fn models(&self, models: &[&str]) -> &FakeOpenAi {
        self.state
            .set_models(Some(models.iter().map(|m| (*m).to_owned()).collect()));
        self
    }

    /// `http://127.0.0.1:<port>/v1`: the base url clients append `/chat/completions` to.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.served.addr)
    }

    /// The server's address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.served.addr
    }
}

/// An OpenAI error body.
fn error_body(message: &str, kind: &str, param: Option<&str>, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
}

/// A 400 `invalid_request_error`.
fn invalid(message: String, param: Option<&str>, code: Option<&str>) -> Rejection {
    Rejection {
        status: 400,
        body: error_body(&message, "invalid_request_error", param, code),
    }
}

/// Why a request is refused.
struct Rejection {
    status: u16,
    body: Value,
}

fn handle(state: Arc<State>, request: RecordedRequest, azure: bool) -> Answer {
    Box::pin(async move {
        state.record(&request);
        let checked = match azure {
            true => check_azure(&state, &request),
            false => check(&state, &request),
        };
        match checked.and_then(|()| check_body(&state, &request)) {
            Err(r) => json_answer(r.status, &[], &r.body),
            Ok(body) => {
                let reply = state.next_for(&body, &last_user_text(&body));
                let content_type = reply.content_type.clone();
                relabel(answer(&body, reply).await, content_type.as_deref())
            }
        }
    })
}

/// Azure's path, `api-version` and `api-key` header, as an Azure resource checks them.
fn check_azure(state: &State, request: &RecordedRequest) -> Result<(), Rejection> {
    let azure_error = |status: u16, message: &str| Rejection {
        status,
        body: json!({"error": {"code": status.to_string(), "message": message}}),
    };
    let path = request.path.as_str();
    let deployment = path
        .strip_prefix("/openai/deployments/")
        .and_then(|rest| rest.strip_suffix("/chat/completions"))
        .is_some_and(|d| !d.is_empty() && !d.contains('/'));
    let versioned = request.query.as_deref().is_some_and(|q| {
        q.split('&')
            .any(|p| p.starts_with("api-version=") && p.len() > 12)
    });
    let found = (deployment && versioned) || path == "/openai/v1/chat/completions";
    if !found || request.method != "POST" {
        return Err(azure_error(404, "Resource not found"));
    }
    if let Some(key) = state.key()
        && request.header("api-key") != Some(key.as_str())
    {
        return Err(azure_error(
            401,
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        ));
    }
    Ok(())
}

/// OpenAI's own path and bearer key.
fn check(state: &State, request: &RecordedRequest) -> Result<(), Rejection> {
    if request.path != "/v1/chat/completions" {
        return Err(Rejection {
            status: 404,
            body: error_body(
                &format!("Invalid URL ({} {})", request.method, request.path),
                "invalid_request_error",
                None,
                None,
            ),
        });
    }
    if request.method != "POST" {
        return Err(Rejection {
            status: 405,
            body: error_body(
                &format!(
                    "Invalid method for URL ({} {})",
                    request.method, request.path
                ),
                "invalid_request_error",
                None,
                None,
            ),
        });
    }
    if let Some(key) = state.key() {
        let given = request
            .header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            None => {
                return Err(Rejection {
                    status: 401,
                    body: error_body(
                        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                        "invalid_request_error",
                        None,
                        None,
                    ),
                });
            }
            Some(given) if given != key => {
                return Err(Rejection {
                    status: 401,
                    body: error_body(
                        &format!(
                            "Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.",
                            mask(given)
                        ),
                        "invalid_request_error",
                        None,
                        Some("invalid_api_key"),
                    ),
                });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The request's body when it is valid.
fn check_body(state: &State, request: &RecordedRequest) -> Result<Value, Rejection> {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let Some(fields) = body.as_object() else {
        return Err(invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)".to_owned(),
            None,
            None,
        ));
    };
    // The real API's own messages for what the fake checks by hand, then the
    // published definition for everything else.
    definition::check_fields(&body)?;
    validate(fields)?;
    definition::check(&body)?;
    let model = fields["model"].as_str().unwrap_or_default();
    if !state.serves(model) {
        return Err(Rejection {
            status: 404,
            body: error_body(
                &format!("The model `{model}` does not exist or you do not have access to it."),
                "invalid_request_error",
                None,
                Some("model_not_found"),
            ),
        });
    }
    Ok(body)
}

/// A key as OpenAI shows a wrong one: its first 3 and last 4 characters when long,
/// else only stars.
fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 16 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

/// The JSON type name OpenAI's messages use.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "decimal",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(param: &str, expected: &str, value: &Value) -> Rejection {
    invalid(
        format!(
            "Invalid type for '{param}': expected {expected}, but got {} instead.",
            type_name(value)
        ),
        Some(param),
        Some("invalid_type"),
    )
}

fn missing(param: &str) -> Rejection {
    invalid(
        format!("Missing required parameter: '{param}'."),
        Some(param),
        Some("missing_required_parameter"),
    )
}

/// Whether `model` is one of OpenAI's reasoning models, which answer 400 to
/// `max_tokens` and to a `temperature` other than 1: the o-series (`o1`, `o3-mini`,
/// `o4-mini`), `gpt-5*` but its `-chat` models, `codex-*` (an `openai/` owner prefix
/// or a `ft:` fine-tune prefix allowed).
fn reasoning(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let m = m.strip_prefix("openai/").unwrap_or(&m);
    let m = m.strip_prefix("ft:").unwrap_or(m);
    let mut chars = m.chars();
    let o_series = chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit());
    o_series || (m.starts_with("gpt-5") && !m.contains("-chat")) || m.starts_with("codex-")
}

fn validate(fields: &Map<String, Value>) -> Result<(), Rejection> {
    let Some(model) = fields.get("model").and_then(Value::as_str) else {
        return Err(invalid(
            "you must provide a model parameter".to_owned(),
            None,
            None,
        ));
    };
    let messages = match fields.get("messages") {
        None => return Err(missing("messages")),
        Some(Value::Array(m)) => m,
        Some(other) => return Err(wrong_type("messages", "an array", other)),
    };
    if messages.is_empty() {
        return Err(invalid(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.".to_owned(),
            Some("messages"),
            Some("empty_array"),
        ));
    }
    for (i, message) in messages.iter().enumerate() {
        check_message(i, message)?;
    }
    tool_turns::check(messages)?;
    if let Some(tools) = fields.get("tools") {
        let Value::Array(tools) = tools else {
            return Err(wrong_type("tools", "an array", tools));
        };
        for (i, tool) in tools.iter().enumerate() {
            check_tool(i, tool)?;
        }
    }
    if let Some(format) = fields.get("response_format").filter(|f| !f.is_null()) {
        response_format::check(format, messages)?;
    }
    check_number(fields, "temperature", 0.0, 2.0)?;
    check_number(fields, "top_p", 0.0, 1.0)?;
    for name in ["seed", "max_tokens", "max_completion_tokens", "n"] {
        if let Some(value) = fields.get(name)
            && !(value.is_i64() || value.is_u64())
        {
            return Err(wrong_type(name, "an integer", value));
        }
    }
    if let Some(stop) = fields.get("stop") {
        match stop {
            Value::String(_) | Value::Null => {}
            Value::Array(items) if items.iter().all(Value::is_string) => {
                if items.len() > 4 {
                    return Err(invalid(
                        format!(
                            "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length {} instead.",
                            items.len()
                        ),
                        Some("stop"),
                        Some("array_above_max_length"),
                    ));
                }
            }
            other => return Err(wrong_type("stop", "a string or an array of strings", other)),
        }
    }
    if reasoning(model) {
        if fields.contains_key("max_tokens") {
            return Err(invalid(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.".to_owned(),
                Some("max_tokens"),
                Some("unsupported_parameter"),
            ));
        }
        if let Some(t) = fields.get("temperature").and_then(Value::as_f64)
            && t != 1.0
        {
            return Err(invalid(
                format!(
                    "Unsupported value: 'temperature' does not support {t} with this model. Only the default (1) value is supported."
                ),
                Some("temperature"),
                Some("unsupported_value"),
            ));
        }
    }
    let streaming = match fields.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(wrong_type("stream", "a boolean", other)),
    };
    if fields.get("stream_options").is_some_and(|v| !v.is_null()) && !streaming {
        return Err(invalid(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.".to_owned(),
            Some("stream_options"),
            None,
        ));
    }
    Ok(())
}

fn check_message(i: usize, message: &Value) -> Result<(), Rejection> {
    let at = |field: &str| format!("messages[{i}].{field}");
    let Some(message) = message.as_object() else {
        return Err(wrong_type(&format!("messages[{i}]"), "an object", message));
    };
    let role = match message.get("role") {
        None => return Err(missing(&at("role"))),
        Some(Value::String(role)) => role.as_str(),
        Some(other) => return Err(wrong_type(&at("role"), "a string", other)),
    };
    if !ROLES.contains(&role) {
        return Err(invalid(
            format!(
                "Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."
            ),
            Some(&at("role")),
            Some("invalid_value"),
        ));
    }
    let content = message.get("content");
    let may_be_empty = role == "assistant" && message.contains_key("tool_calls");
    match content {
        None | Some(Value::Null) if !may_be_empty => Err(missing(&at("content"))),
        None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {
            if role == "tool" && !message.contains_key("tool_call_id") {
                return Err(missing(&at("tool_call_id")));
            }
            Ok(())
        }
        Some(other) => Err(wrong_type(
            &at("content"),
            "one of a string or array of objects",
            other,
        )),
    }
}

fn check_tool(i: usize, tool: &Value) -> Result<(), Rejection> {
    let at = |field: &str| format!("tools[{i}].{field}");
    match tool.get("type") {
        None => return Err(missing(&at("type"))),
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            return Err(invalid(
                format!("Invalid value: {other}. Supported values are: 'function'."),
                Some(&at("type")),
                Some("invalid_value"),
            ));
        }
    }
    let Some(function) = tool.get("function") else {
        return Err(missing(&at("function")));
    };
    let name = match function.get("name") {
        None => return Err(missing(&at("function.name"))),
        Some(Value::String(name)) => name,
        Some(other) => return Err(wrong_type(&at("function.name"), "a string", other)),
    };
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(invalid(
            format!(
                "Invalid '{}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                at("function.name")
            ),
            Some(&at("function.name")),
            Some("invalid_value"),
        ));
    }
    if let Some(parameters) = function.get("parameters")
        && !parameters.is_object()
    {
        return Err(wrong_type(
            &at("function.parameters"),
            "an object",
            parameters,
        ));
    }
    Ok(())
}

fn check_number(
    fields: &Map<String, Value>,
    name: &str,
    min: f64,
    max: f64,
) -> Result<(), Rejection> {
    let Some(value) = fields.get(name) else {
        return Ok(());
    };
    let Some(n) = value.as_f64() else {
        return Err(wrong_type(name, "a decimal", value));
    };
    if n < min {
        return Err(invalid(
            format!(
                "Invalid '{name}': decimal below minimum value. Expected a value >= {min}, but got {n} instead."
            ),
            Some(name),
            Some("decimal_below_min_value"),
        ));
    }
    if n > max {
        return Err(invalid(
            format!(
                "Invalid '{name}': decimal above maximum value. Expected a value <= {max}, but got {n} instead."
            ),
            Some(name),
            Some("decimal_above_max_value"),
        ));
    }
    Ok(())
}

/// Waits `pause` ([`super::clock::sleep`]: on time, and not at all when it is none).
async fn pause(pause: Duration) {
    super::clock::sleep(pause).await;
}

/// The answer to a valid request.
pub(super) async fn answer(body: &Value, reply: Reply) -> Response<Body> {
    let (text, tool_calls, structured) = match &reply.outcome {
        Outcome::Answer {
            text,
            tool_calls,
            structured,
        } => (text, tool_calls, structured.as_ref()),
        Outcome::Fail {
            status,
            message,
            retry_after,
        } => {
            pause(reply.first_delay).await;
            return error_answer(*status, message, *retry_after);
        }
        Outcome::Raw { status, body } => {
            pause(reply.first_delay).await;
            return bytes_answer(*status, Bytes::from(body.clone()));
        }
    };
    let streaming = body["stream"].as_bool().unwrap_or(false) && !reply.whole;
    let stream = streaming.then(|| body["stream_options"]["include_usage"].as_bool() == Some(true));
    let model = body["model"].as_str().unwrap_or_default();
    let input = match reply.usage {
        Some(_) => 0,
        None => word_count(body),
    };
    let rendered = memo::rendered(&reply, model, input, stream, || {
        let (text, tool_calls) = Reply::as_text(text, tool_calls, structured);
        render_answer(&reply, &text, &tool_calls, model, input, stream)
    });
    if stream.is_none() {
        pause(reply.first_delay).await;
        return bytes_answer(200, rendered.bytes);
    }
    let pieces = timed(&rendered.bytes, &rendered.ranges, &reply);
    streamed_answer("text/event-stream", &[], pieces)
}

/// The bytes of an answer of `text` and `tool_calls` to a request naming `model` with
/// `input` words: whole (`stream` `None`) or the events of a stream, with the usage
/// at its end when `stream` is `Some(true)`.
fn render_answer(
    reply: &Reply,
    text: &str,
    tool_calls: &[ScriptedToolCall],
    model: &str,
    input: u64,
    stream: Option<bool>,
) -> memo::Rendered {
    let usage = reply.usage.unwrap_or((
        input,
        text.split_whitespace().count() as u64 + tool_calls.len() as u64,
    ));
    let finish = match &reply.finish_reason {
        Some(finish) => finish.as_str(),
        None if tool_calls.is_empty() => "stop",
        None => "tool_calls",
    };
    let completion = render::Completion {
        model,
        text,
        tool_calls,
        usage,
        finish,
    };
    match stream {
        None => memo::Rendered::whole(render::completion(&completion)),
        Some(include_usage) => {
            let (bytes, ranges) =
                render::chunks(&completion, &reply.text_pieces(text), include_usage);
            memo::Rendered {
                bytes,
                ranges: ranges.into(),
            }
        }
    }
}

/// A scripted error, in OpenAI's shape.
fn error_answer(status: u16, message: &str, retry_after: Option<u64>) -> Response<Body> {
    let (kind, code) = match status {
        429 => ("requests", Some("rate_limit_exceeded")),
        s if s >= 500 => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    let headers: Vec<(&str, String)> = retry_after
        .map(|s| ("retry-after", s.to_string()))
        .into_iter()
        .collect();
    json_answer(status, &headers, &error_body(message, kind, None, code))
}

/// The events at `ranges` of `events`, as many as `reply` lets through, each after its
/// pause (the first delay, then the gap): those that follow without a pause go out with
/// the one before them, as one piece of the same buffer.
fn timed(events: &Bytes, ranges: &[Range<usize>], reply: &Reply) -> Vec<(Duration, Bytes)> {
    let kept = reply.cut_after.unwrap_or(usize::MAX);
    let mut timed: Vec<(Duration, Range<usize>)> = Vec::new();
    for (i, range) in ranges.iter().take(kept).cloned().enumerate() {
        let pause = if i == 0 { reply.first_delay } else { reply.gap };
        match timed.last_mut() {
            Some((_, joined)) if pause.is_zero() => joined.end = range.end,
            _ => timed.push((pause, range)),
        }
    }
    timed
        .into_iter()
        .map(|(pause, range)| (pause, events.slice(range)))
        .collect()
}

/// A whole answer of `status` whose body, `body`, is JSON (or anything sent as such).
fn bytes_answer(status: u16, body: Bytes) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(http_body_util::BodyExt::boxed(http_body_util::Full::new(
            body,
        )))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_go_out_after_their_pauses_as_far_as_the_cut() {
        let events = Bytes::from_static(b"aabbbcd");
        let ranges = vec![0..2, 2..5, 5..6, 6..7];
        let ms = Duration::from_millis;
        let piece =
            |pause: Duration, text: &'static str| (pause, Bytes::from_static(text.as_bytes()));
        let timed_by = |reply: Reply| timed(&events, &ranges, &reply);
        assert_eq!(
            timed_by(Reply::text("x")),
            vec![piece(Duration::ZERO, "aabbbcd")]
        );
        assert_eq!(
            timed_by(Reply::text("x").delay(ms(5))),
            vec![piece(ms(5), "aabbbcd")]
        );
        assert_eq!(
            timed_by(Reply::text("x").delay(ms(5)).gap(ms(1)).cut_after(3)),
            vec![piece(ms(5), "aa"), piece(ms(1), "bbb"), piece(ms(1), "c")]
        );
        assert_eq!(
            timed_by(Reply::text("x").cut_after(2)),
            vec![piece(Duration::ZERO, "aabbb")]
        );
        assert!(timed_by(Reply::text("x").cut_after(0)).is_empty());
    }

    #[test]
    fn wrong_keys_are_masked() {
        assert_eq!(mask("sk-test"), "*******");
        assert_eq!(mask("sk-proj-abcdefghijkl"), "sk-*************ijkl");
    }

    #[test]
    fn reasoning_models_are_recognised() {
        for model in [
            "o1",
            "o3-mini",
            "o4-mini",
            "gpt-5",
            "gpt-5.1",
            "openai/gpt-5-mini",
            "codex-mini-latest",
        ] {
            assert!(reasoning(model), "{model}");
        }
        for model in ["omni", "gpt-4o", "gpt-5-chat-latest", "gpt-4.1-mini"] {
            assert!(!reasoning(model), "{model}");
        }
    }
}
