//! [`FakeAnthropic`]: Anthropic's Messages API (`POST /v1/messages`) on 127.0.0.1.
//!
//! It checks requests as the real API does and refuses bad ones with the real error
//! shape, `{"type": "error", "error": {"type": ..., "message": ...}}`:
//!
//! | request | answer |
//! |---|---|
//! | another path or method | 404 `not_found_error` |
//! | no `x-api-key` (nor `Authorization: Bearer`) | 401 `authentication_error`, `x-api-key header is required` |
//! | another key (or bearer token) than [`FakeAnthropic::expect_key`]'s | 401 `authentication_error`, `invalid x-api-key` |
//! | no `anthropic-version` header, or an unknown one | 400 `invalid_request_error` |
//! | a body that is not a JSON object | 400 |
//! | an unknown top-level field (`seed`, say) | 400 `seed: Extra inputs are not permitted` |
//! | no `model`, `max_tokens` or `messages` | 400 `max_tokens: Field required`, ... |
//! | a `system` role inside `messages` | 400 `messages: Unexpected role "system"...` |
//! | messages that do not start with `user` | 400 |
//! | `temperature` or `top_p` outside 0..=1, a non-integer `top_k`, blank stop sequences | 400 |
//! | `temperature`, `top_p` or `top_k` for Claude 4.7 and later | 400 `` `temperature` is deprecated for this model. `` |
//! | `temperature` and `top_p` together for Claude 4.1 to 4.6 | 400 `` `temperature` and `top_p` cannot both be specified for this model. Please use only one. `` |
//! | a tool without a valid name (`^[a-zA-Z0-9_-]{1,64}$`) or an `input_schema` of type `object` | 400 `tools.0.custom...` |
//! | two tools of the same name | 400 `tools: Tool names must be unique.` |
//! | a `tool_choice` without `tools`, of an unknown type, or naming no tool of `tools` | 400 `tool_choice...` |
//!
//! | a `tool_use` of an assistant turn that the next user turn answers with no `tool_result` | 400 ``messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: ...`` |
//! | a `tool_result` that answers no `tool_use` of the turn before | 400 ``messages.N.content: unexpected `tool_use_id` found in `tool_result` blocks: ...`` |
//!
//! Consecutive turns of the same role are taken, as the API takes them (it combines
//! them into one turn, says `MessageCreateParams.messages` in the official SDK).
//!
//! When `tool_choice` forces a tool (`{"type": "tool", "name"}`), the answer is a call of
//! it, as the API's is: a [`Reply::structured`] answer is its input, and a reply without
//! one (and without a call of that tool) has its text, as is, for input.
//!
//! A valid request gets the next [`Reply`]: a whole message, or with `"stream": true`
//! server-sent events as the API sends them (`message_start` with the input tokens,
//! for each block `content_block_start`, a `ping` after the first, `text_delta`s or
//! `input_json_delta`s of 5 characters, `content_block_stop`; then `message_delta` with
//! the stop reason and output tokens, and `message_stop`). A [`Reply::error`] is
//! answered in the API's error shape with the error type of its status
//! (`rate_limit_error` for 429, `overloaded_error` for 529, ...); [`stream_error`] makes
//! a stream that breaks off with an `error` event.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

mod tool_turns;

use super::reply::{Outcome, Reply, State, last_user_text, word_count};
use super::scripted::{
    Answer, Body, RecordedRequest, Served, json_answer, pieces, relabel, serve, streamed_answer,
};

/// The top-level fields the Messages API accepts.
const FIELDS: [&str; 16] = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "metadata",
    "stop_sequences",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "tools",
    "tool_choice",
    "thinking",
    "service_tier",
    "container",
    "mcp_servers",
];

/// A reply that is a `200` stream which starts a message, then breaks off with an
/// `error` event (an `overloaded_error` mid-stream, say), as the API does.
pub fn stream_error(error_type: &str, message: &str) -> Reply {
    let start = json!({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}}});
    let error = json!({"type": "error", "error": {"type": error_type, "message": message}});
    Reply::raw(
        200,
        format!("event: message_start\ndata: {start}\n\nevent: error\ndata: {error}\n\n"),
    )
}

/// The tool a request forces with `"tool_choice": {"type": "tool", "name"}`.
fn forced_tool(body: &Value) -> Option<&str> {
    let choice = &body["tool_choice"];
    (choice["type"] == "tool")
        .then(|| choice["name"].as_str())
        .flatten()
}

/// The API's error type for a status.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// A fake Anthropic Messages API on 127.0.0.1; stops when dropped.
#[derive(Debug)]
pub struct FakeAnthropic {
    served: Served,
    state: Arc<State>,
}

scripting!(FakeAnthropic);

impl FakeAnthropic {
    /// Starts the fake on a free port of 127.0.0.1. It takes any non-empty key until
    /// [`FakeAnthropic::expect_key`], and answers `ok` unless scripted otherwise.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeAnthropic {
        let state = State::new();
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeAnthropic { served, state }
    }

    /// Takes only `key`, in `x-api-key` or as a bearer token, from now on.
    pub fn expect_key(&self, key: &str) -> &FakeAnthropic {
        self.state.set_key(Some(key.to_owned()));
        self
    }

    /// `http://127.0.0.1:<port>`: what `ANTHROPIC_BASE_URL` would say.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.served.addr)
    }
}

fn handle(state: Arc<State>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        state.record(&request);
        match check(&request, state.key().as_deref()) {
            Err((status, kind, message)) => error_answer(status, &kind, &message, None),
            Ok(()) => {
                let body = request.json();
                let reply = state.next_for(&body, &last_user_text(&body));
                let content_type = reply.content_type.clone();
                relabel(answer(&body, reply).await, content_type.as_deref())
            }
        }
    })
}

/// The API's error answer.
fn error_answer(
    status: u16,
    kind: &str,
    message: &str,
    retry_after: Option<u64>,
) -> hyper::Response<Body> {
    let mut headers = vec![("request-id", "req_fake".to_owned())];
    if let Some(seconds) = retry_after {
        headers.push(("retry-after", seconds.to_string()));
    }
    json_answer(
        status,
        &headers,
        &json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// The answer to a valid request.
async fn answer(body: &Value, reply: Reply) -> hyper::Response<Body> {
    let streaming = body["stream"].as_bool().unwrap_or(false) && !reply.whole;
    let (text, calls) = match &reply.outcome {
        Outcome::Answer {
            text,
            tool_calls,
            structured,
        } => Reply::as_forced_call(text, tool_calls, structured.as_ref(), forced_tool(body)),
        Outcome::Fail {
            status,
            message,
            retry_after,
        } => {
            tokio::time::sleep(reply.first_delay).await;
            return error_answer(*status, error_type(*status), message, *retry_after);
        }
        Outcome::Raw { status, body } => {
            let content_type = if *status == 200 && streaming {
                "text/event-stream; charset=utf-8"
            } else {
                "application/json"
            };
            let piece = vec![(reply.first_delay, Bytes::from(body.clone()))];
            let mut response = streamed_answer(content_type, &[], piece);
            *response.status_mut() =
                hyper::StatusCode::from_u16(*status).unwrap_or(hyper::StatusCode::OK);
            return response;
        }
    };
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let (input, output) = reply.usage.unwrap_or_else(|| {
        (
            word_count(body),
            text.split_whitespace().count() as u64 + calls.len() as u64,
        )
    });
    let stop = reply.finish_reason.clone().unwrap_or_else(|| {
        if calls.is_empty() {
            "end_turn".to_owned()
        } else {
            "tool_use".to_owned()
        }
    });
    if !streaming {
        tokio::time::sleep(reply.first_delay).await;
        let mut content = Vec::new();
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        for (i, call) in calls.iter().enumerate() {
            let input = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            content.push(json!({"type": "tool_use", "id": format!("toolu_fake_{i}"),
                "name": call.name, "input": input}));
        }
        let message = json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": output},
        });
        return json_answer(200, &[("request-id", "req_fake".to_owned())], &message);
    }
    let mut events: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1},
        }}),
    )];
    let mut blocks: Vec<(Value, Vec<Value>)> = Vec::new();
    if !text.is_empty() {
        let deltas = reply
            .text_pieces(&text)
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        blocks.push((json!({"type": "text", "text": ""}), deltas));
    }
    for (i, call) in calls.iter().enumerate() {
        let start = json!({"type": "tool_use", "id": format!("toolu_fake_{i}"),
            "name": call.name, "input": {}});
        let deltas = pieces(&call.arguments, 5)
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        blocks.push((start, deltas));
    }
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if index == 0 {
            events.push(("ping", json!({"type": "ping"})));
        }
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": output}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    if let Some(n) = reply.cut_after {
        events.truncate(n);
    }
    let timed = events
        .into_iter()
        .enumerate()
        .map(|(i, (name, data))| {
            let pause = if i == 0 { reply.first_delay } else { reply.gap };
            (
                pause,
                Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
            )
        })
        .collect();
    streamed_answer(
        "text/event-stream; charset=utf-8",
        &[("request-id", "req_fake".to_owned())],
        timed,
    )
}

type Refusal = (u16, String, String);

fn invalid(message: impl Into<String>) -> Refusal {
    (400, "invalid_request_error".to_owned(), message.into())
}

/// Checks a request as the real API does.
fn check(request: &RecordedRequest, expected_key: Option<&str>) -> Result<(), Refusal> {
    if request.method != "POST" || request.path != "/v1/messages" {
        return Err((
            404,
            "not_found_error".to_owned(),
            format!("Not Found: {} {}", request.method, request.path),
        ));
    }
    // A gateway (or the API, for OAuth tokens) takes `Authorization: Bearer` instead.
    let bearer = request
        .header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "));
    match (request.header("x-api-key").or(bearer), expected_key) {
        (None | Some(""), _) => {
            return Err((
                401,
                "authentication_error".to_owned(),
                "x-api-key header is required".to_owned(),
            ));
        }
        (Some(got), Some(want)) if got != want => {
            return Err((
                401,
                "authentication_error".to_owned(),
                "invalid x-api-key".to_owned(),
            ));
        }
        _ => {}
    }
    match request.header("anthropic-version") {
        None => return Err(invalid("anthropic-version: header is required")),
        Some("2023-01-01" | "2023-06-01") => {}
        Some(other) => {
            return Err(invalid(format!(
                "anthropic-version: invalid version `{other}`"
            )));
        }
    }
    if !request
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json"))
    {
        return Err(invalid("content-type: must be application/json"));
    }
    let body: Value = serde_json::from_slice(&request.body)
        .map_err(|e| invalid(format!("There was an issue with your request body: {e}")))?;
    let Some(body) = body.as_object() else {
        return Err(invalid("Input should be a valid dictionary"));
    };
    check_body(body)
}

fn check_body(body: &Map<String, Value>) -> Result<(), Refusal> {
    for key in body.keys() {
        if !FIELDS.contains(&key.as_str()) {
            return Err(invalid(format!("{key}: Extra inputs are not permitted")));
        }
    }
    for required in ["model", "messages", "max_tokens"] {
        if !body.contains_key(required) {
            return Err(invalid(format!("{required}: Field required")));
        }
    }
    if body["model"].as_str().is_none_or(|m| m.is_empty()) {
        return Err(invalid("model: Input should be a valid string"));
    }
    match body["max_tokens"].as_u64() {
        Some(n) if n >= 1 => {}
        Some(_) => {
            return Err(invalid(
                "max_tokens: Input should be greater than or equal to 1",
            ));
        }
        None => return Err(invalid("max_tokens: Input should be a valid integer")),
    }
    for name in ["temperature", "top_p"] {
        if let Some(v) = body.get(name) {
            match v.as_f64() {
                Some(x) if (0.0..=1.0).contains(&x) => {}
                Some(x) if x < 0.0 => {
                    return Err(invalid(format!(
                        "{name}: Input should be greater than or equal to 0"
                    )));
                }
                Some(_) => {
                    return Err(invalid(format!(
                        "{name}: Input should be less than or equal to 1"
                    )));
                }
                None => return Err(invalid(format!("{name}: Input should be a valid number"))),
            }
        }
    }
    check_samplers(body)?;
    if body.get("top_k").is_some_and(|v| v.as_u64().is_none()) {
        return Err(invalid("top_k: Input should be a valid integer"));
    }
    if body.get("stream").is_some_and(|v| !v.is_boolean()) {
        return Err(invalid("stream: Input should be a valid boolean"));
    }
    if let Some(stops) = body.get("stop_sequences") {
        let Some(stops) = stops.as_array() else {
            return Err(invalid("stop_sequences: Input should be a valid list"));
        };
        for (i, stop) in stops.iter().enumerate() {
            match stop.as_str() {
                Some(s) if !s.trim().is_empty() => {}
                Some(_) => {
                    return Err(invalid(
                        "stop_sequences: each stop sequence must contain non-whitespace",
                    ));
                }
                None => {
                    return Err(invalid(format!(
                        "stop_sequences.{i}: Input should be a valid string"
                    )));
                }
            }
        }
    }
    if let Some(system) = body.get("system") {
        let ok = match system {
            Value::String(_) => true,
            Value::Array(blocks) => blocks
                .iter()
                .all(|b| b["type"] == "text" && b["text"].is_string()),
            _ => false,
        };
        if !ok {
            return Err(invalid(
                "system: Input should be a valid string or a list of text blocks",
            ));
        }
    }
    check_messages(&body["messages"])?;
    if let Some(tools) = body.get("tools") {
        check_tools(tools)?;
    }
    if let Some(choice) = body.get("tool_choice") {
        check_tool_choice(choice, body.get("tools"))?;
    }
    Ok(())
}

/// The `(major, minor)` version of a Claude model id, read on its own here (not from
/// Prill's model table, so that the fake cannot share its mistakes):
/// `claude-opus-4-7` is 4.7, `claude-sonnet-4-5-20250929` 4.5, `claude-opus-4-20250514`
/// 4.0, `claude-3-5-haiku-latest` 3.5.
fn claude_version(model: &str) -> Option<(u64, u64)> {
    let rest = model.strip_prefix("claude-")?;
    let mut numbers = rest
        .split('-')
        .skip_while(|part| part.parse::<u64>().is_err())
        .map_while(|part| part.parse::<u64>().ok());
    let major = numbers.next()?;
    let minor = numbers.next().filter(|n| *n < 100).unwrap_or(0);
    Some((major, minor))
}

/// Refuses the samplers a model no longer takes, in the API's words: Claude 4.7 and
/// later take none of `temperature`, `top_p` and `top_k`; Claude 4.1 to 4.6 take
/// `temperature` or `top_p`, not both.
fn check_samplers(body: &Map<String, Value>) -> Result<(), Refusal> {
    let model = body["model"].as_str().unwrap_or_default();
    let Some(version) = claude_version(model) else {
        return Ok(());
    };
    if version >= (4, 7) {
        for name in ["temperature", "top_p", "top_k"] {
            if body.contains_key(name) {
                return Err(invalid(format!("`{name}` is deprecated for this model.")));
            }
        }
    } else if version >= (4, 1) && body.contains_key("temperature") && body.contains_key("top_p") {
        return Err(invalid(
            "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
        ));
    }
    Ok(())
}

/// Checks `tool_choice`: `auto`, `any`, `none`, or `tool` naming one of `tools`.
fn check_tool_choice(choice: &Value, tools: Option<&Value>) -> Result<(), Refusal> {
    let Some(choice) = choice.as_object() else {
        return Err(invalid("tool_choice: Input should be a valid dictionary"));
    };
    let kind = match choice.get("type").and_then(Value::as_str) {
        Some(kind @ ("auto" | "any" | "tool" | "none")) => kind,
        Some(other) => {
            return Err(invalid(format!(
                "tool_choice: Input tag '{other}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"
            )));
        }
        None => return Err(invalid("tool_choice.type: Field required")),
    };
    let allowed: &[&str] = if kind == "tool" {
        &["type", "name", "disable_parallel_tool_use"]
    } else {
        &["type", "disable_parallel_tool_use"]
    };
    if let Some(key) = choice.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid(format!(
            "tool_choice.{kind}.{key}: Extra inputs are not permitted"
        )));
    }
    let names: Vec<&str> = tools
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    if names.is_empty() && kind != "none" {
        return Err(invalid(
            "tool_choice may only be specified while providing tools.",
        ));
    }
    if kind == "tool" {
        let Some(name) = choice.get("name").and_then(Value::as_str) else {
            return Err(invalid("tool_choice.tool.name: Field required"));
        };
        if !names.contains(&name) {
            return Err(invalid(format!(
                "tool_choice.tool.name: Tool '{name}' not found in tools"
            )));
        }
    }
    Ok(())
}

fn check_messages(messages: &Value) -> Result<(), Refusal> {
    let Some(messages) = messages.as_array() else {
        return Err(invalid("messages: Input should be a valid list"));
    };
    if messages.is_empty() {
        return Err(invalid("messages: at least one message is required"));
    }
    for (i, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            return Err(invalid(format!(
                "messages.{i}: Input should be a valid dictionary"
            )));
        };
        for key in message.keys() {
            if key != "role" && key != "content" {
                return Err(invalid(format!(
                    "messages.{i}.{key}: Extra inputs are not permitted"
                )));
            }
        }
        let role = match message.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            Some("system") => {
                return Err(invalid(
                    "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.",
                ));
            }
            Some(other) => {
                return Err(invalid(format!(
                    "messages.{i}.role: Input should be 'user' or 'assistant', got '{other}'"
                )));
            }
            None => return Err(invalid(format!("messages.{i}.role: Field required"))),
        };
        if i == 0 && role != "user" {
            return Err(invalid(
                "messages: first message must use the \"user\" role",
            ));
        }
        match message.get("content") {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(Value::String(_)) => {
                return Err(invalid(format!(
                    "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
                )));
            }
            Some(Value::Array(blocks)) if blocks.iter().all(|b| b["type"].is_string()) => {}
            Some(_) => {
                return Err(invalid(format!(
                    "messages.{i}.content: Input should be a valid string or a list of content blocks"
                )));
            }
            None => return Err(invalid(format!("messages.{i}.content: Field required"))),
        }
    }
    tool_turns::check(messages)
}

fn check_tools(tools: &Value) -> Result<(), Refusal> {
    let Some(tools) = tools.as_array() else {
        return Err(invalid("tools: Input should be a valid list"));
    };
    let mut seen = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let Some(tool) = tool.as_object() else {
            return Err(invalid(format!(
                "tools.{i}: Input should be a valid dictionary"
            )));
        };
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            if seen.contains(&name) {
                return Err(invalid("tools: Tool names must be unique."));
            }
            seen.push(name);
        }
        for key in tool.keys() {
            if ![
                "name",
                "description",
                "input_schema",
                "cache_control",
                "type",
            ]
            .contains(&key.as_str())
            {
                return Err(invalid(format!(
                    "tools.{i}.custom.{key}: Extra inputs are not permitted"
                )));
            }
        }
        let name_ok = tool["name"].as_str().is_some_and(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if !name_ok {
            return Err(invalid(format!(
                "tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )));
        }
        if tool.get("description").is_some_and(|d| !d.is_string()) {
            return Err(invalid(format!(
                "tools.{i}.custom.description: Input should be a valid string"
            )));
        }
        match tool.get("input_schema") {
            None => {
                return Err(invalid(format!(
                    "tools.{i}.custom.input_schema: Field required"
                )));
            }
            Some(schema) if schema["type"] != "object" => {
                return Err(invalid(format!(
                    "tools.{i}.custom.input_schema.type: Input should be 'object'"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)], body: &Value) -> RecordedRequest {
        RecordedRequest {
            method: "POST".into(),
            path: "/v1/messages".into(),
            query: None,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_string().into_bytes(),
            received: std::time::Instant::now(),
        }
    }

    const GOOD: [(&str, &str); 3] = [
        ("x-api-key", "k"),
        ("anthropic-version", "2023-06-01"),
        ("content-type", "application/json"),
    ];

    fn refusal(body: Value) -> String {
        check(&request(&GOOD, &body), Some("k")).unwrap_err().2
    }

    #[test]
    fn requests_are_checked_like_the_real_api() {
        let ok = json!({"model": "claude-x", "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}]});
        assert!(check(&request(&GOOD, &ok), Some("k")).is_ok());
        let wrong_key = check(&request(&[("x-api-key", "nope")], &ok), Some("k")).unwrap_err();
        assert_eq!(wrong_key.0, 401);
        assert_eq!(wrong_key.2, "invalid x-api-key");
        let no_version = check(&request(&[("x-api-key", "k")], &ok), Some("k")).unwrap_err();
        assert_eq!(no_version.2, "anthropic-version: header is required");
        assert_eq!(
            refusal(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})),
            "max_tokens: Field required"
        );
        assert_eq!(
            refusal(json!({"model": "m", "max_tokens": 1, "seed": 3,
                "messages": [{"role": "user", "content": "hi"}]})),
            "seed: Extra inputs are not permitted"
        );
        assert!(
            refusal(json!({"model": "m", "max_tokens": 1,
                "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]}))
            .contains("Unexpected role \"system\"")
        );
        assert_eq!(
            refusal(json!({"model": "m", "max_tokens": 1,
                "messages": [{"role": "assistant", "content": "x"}]})),
            "messages: first message must use the \"user\" role"
        );
        let merged = json!({"model": "m", "max_tokens": 1,
            "messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]});
        assert!(check(&request(&GOOD, &merged), Some("k")).is_ok());
        let long_name = "t".repeat(65);
        assert!(
            refusal(json!({"model": "m", "max_tokens": 1,
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": long_name, "input_schema": {"type": "object"}}]}))
            .contains("{1,64}")
        );
        let sampled = |model: &str, extra: Value| {
            let mut body = json!({"model": model, "max_tokens": 1,
                "messages": [{"role": "user", "content": "x"}]});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            check(&request(&GOOD, &body), Some("k")).map_err(|r| r.2)
        };
        assert_eq!(
            sampled("claude-opus-4-7", json!({"temperature": 0})).unwrap_err(),
            "`temperature` is deprecated for this model."
        );
        assert!(sampled("claude-opus-4-7", json!({})).is_ok());
        let both = json!({"temperature": 0, "top_p": 0.9});
        assert!(
            sampled("claude-sonnet-4-5-20250929", both.clone())
                .unwrap_err()
                .contains("cannot both be specified")
        );
        assert!(sampled("claude-haiku-4-5", json!({"temperature": 0})).is_ok());
        assert!(sampled("claude-opus-4-20250514", both.clone()).is_ok());
        assert!(sampled("claude-3-5-haiku-latest", both).is_ok());
        assert_eq!(claude_version("claude-3-7-sonnet-latest"), Some((3, 7)));
        assert_eq!(claude_version("gpt-4o"), None);
        assert!(
            refusal(json!({"model": "m", "max_tokens": 1,
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "t", "input_schema": {"type": "string"}}]}))
            .contains("input_schema.type")
        );
        let with = |choice: Value| {
            json!({"model": "m", "max_tokens": 1,
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "t", "input_schema": {"type": "object"}}],
                "tool_choice": choice})
        };
        assert!(
            check(
                &request(&GOOD, &with(json!({"type": "tool", "name": "t"}))),
                None
            )
            .is_ok()
        );
        assert_eq!(
            refusal(with(json!({"type": "tool", "name": "v"}))),
            "tool_choice.tool.name: Tool 'v' not found in tools"
        );
        assert!(refusal(with(json!({"type": "required"}))).contains("expected tags"));
        assert_eq!(
            refusal(with(json!({"type": "tool"}))),
            "tool_choice.tool.name: Field required"
        );
    }

    #[test]
    fn forced_tools_are_found() {
        assert_eq!(
            forced_tool(&json!({"tool_choice": {"type": "tool", "name": "v"}})),
            Some("v")
        );
        assert_eq!(forced_tool(&json!({"tool_choice": {"type": "any"}})), None);
        assert_eq!(forced_tool(&json!({})), None);
    }

    #[test]
    fn statuses_have_the_api_s_error_types() {
        assert_eq!(error_type(429), "rate_limit_error");
        assert_eq!(error_type(529), "overloaded_error");
        assert_eq!(error_type(500), "api_error");
    }
}
