//! [`FakeOllama`]: Ollama's native chat API on 127.0.0.1 (`POST /api/chat`).
//!
//! It validates requests as Ollama does, with Ollama's error shape `{"error": "..."}`,
//! and is stricter in one way: a field or option Ollama would silently ignore is a 400
//! here, since a silently ignored parameter is a mapping mistake.
//!
//! | request | answer |
//! |---|---|
//! | another path | 404 `404 page not found` (plain text) |
//! | not `POST` | 405 `405 method not allowed` (plain text) |
//! | a body that is not a JSON object | 400 `{"error": "invalid character ..."}` |
//! | no `model` | 400 `{"error": "model is required"}` |
//! | a model not in [`FakeOllama::models`], when set | 404 `{"error": "model 'x' not found"}` |
//! | an unknown top-level field, or an unknown key in `options` | 400 |
//! | an option of the wrong type (`"temperature": "hot"`) | 400 |
//! | a message with an unknown role, a tool without `function.name` | 400 |
//! | tool-call `arguments` that are not an object | 400 |
//! | a `tool` message whose `tool_name` names no unanswered call of the assistant turn before it (stricter than Ollama) | 400 |
//! | a `format` that is neither `"json"` nor an object (a JSON schema) | 400 `invalid format: ...` |
//! | no `messages` | 200: the model is loaded, `done_reason: "load"` |
//!
//! A valid request gets the next [`Reply`]: streamed unless `"stream": false` (Ollama's
//! default is to stream), as JSON lines (`application/x-ndjson`): the text piece by piece
//! in `{"message": {"role": "assistant", "content": ...}, "done": false}`, the tool calls
//! in one line (`message.tool_calls[].function.{name, arguments}`, arguments an object),
//! then a last line with `"done": true`, `done_reason`, `prompt_eval_count` and
//! `eval_count`. A [`Reply::structured`] answer is the message's text, as JSON.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use serde_json::{Map, Value, json};

use super::reply::{Outcome, Reply, State, last_user_text, word_count};
use super::scripted::{
    Answer, Body, RecordedRequest, Served, json_answer, relabel, serve, streamed_answer,
};

/// The top-level fields `/api/chat` knows.
const KNOWN_FIELDS: [&str; 8] = [
    "model",
    "messages",
    "tools",
    "format",
    "options",
    "stream",
    "keep_alive",
    "think",
];

/// The options that take a number (any), an integer, or a list of strings.
const FLOAT_OPTIONS: [&str; 9] = [
    "temperature",
    "top_p",
    "min_p",
    "typical_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "mirostat_tau",
    "mirostat_eta",
];
const INT_OPTIONS: [&str; 10] = [
    "num_predict",
    "top_k",
    "seed",
    "num_ctx",
    "num_keep",
    "repeat_last_n",
    "mirostat",
    "num_gpu",
    "num_thread",
    "num_batch",
];

/// The creation time every answer reports.
const CREATED_AT: &str = "2024-01-01T00:00:00.000000Z";

/// A fake Ollama server; stops when dropped.
#[derive(Debug)]
pub struct FakeOllama {
    served: Served,
    state: Arc<State>,
}

scripting!(FakeOllama);

impl FakeOllama {
    /// Starts a fake on a free port of 127.0.0.1 that serves any model and answers `ok`
    /// unless scripted otherwise.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeOllama {
        let state = State::new();
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeOllama { served, state }
    }

    /// Serves only `models` (as pulled) from now on.
    pub fn models(&self, models: &[&str]) -> &FakeOllama {
        self.state
            .set_models(Some(models.iter().map(|m| (*m).to_owned()).collect()));
        self
    }

    /// `http://127.0.0.1:<port>`: the host, as `OLLAMA_HOST` gives it.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.served.addr)
    }

    /// The server's address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.served.addr
    }
}

fn plain(status: u16, text: &'static str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from_static(text.as_bytes())).boxed())
        .expect("a valid response")
}

fn error(status: u16, message: impl Into<String>) -> Response<Body> {
    json_answer(status, &[], &json!({"error": message.into()}))
}

fn handle(state: Arc<State>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        state.record(&request);
        // `GET /api/tags` lists the models pulled, as `ollama list` shows them.
        if request.path == "/api/tags" && request.method == "GET" {
            let models: Vec<Value> = state
                .models()
                .unwrap_or_default()
                .iter()
                .map(|name| json!({"name": name, "model": name}))
                .collect();
            return json_answer(200, &[], &json!({"models": models}));
        }
        if request.path != "/api/chat" {
            return plain(404, "404 page not found");
        }
        if request.method != "POST" {
            return plain(405, "405 method not allowed");
        }
        let body: Value = match serde_json::from_slice(&request.body) {
            Ok(body) => body,
            Err(e) => return error(400, format!("invalid character in the request: {e}")),
        };
        let Some(fields) = body.as_object() else {
            return error(
                400,
                "json: cannot unmarshal into Go value of type api.ChatRequest",
            );
        };
        if let Err(message) = validate(fields) {
            return error(400, message);
        }
        let model = fields["model"].as_str().unwrap_or_default();
        if !state.serves(model) {
            return error(404, format!("model '{model}' not found"));
        }
        if !fields.contains_key("messages") {
            return json_answer(
                200,
                &[],
                &json!({"model": model, "created_at": CREATED_AT, "message": {"role": "assistant", "content": ""}, "done_reason": "load", "done": true}),
            );
        }
        let reply = state.next_for(&body, &last_user_text(&body));
        let content_type = reply.content_type.clone();
        relabel(answer(&body, reply).await, content_type.as_deref())
    })
}

/// Tool turns: a call's `arguments` must be an object (Ollama's Go type is a map), and
/// (stricter than Ollama, which matches results by order and name) a `tool` message
/// must name in `tool_name` a call of the assistant turn before it not yet answered.
fn check_tool_turns(messages: &[Value]) -> Result<(), String> {
    let mut calls: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        match message["role"].as_str() {
            Some("tool") => {
                let name = message["tool_name"].as_str().unwrap_or_default();
                let Some(at) = calls.iter().position(|c| c == name) else {
                    return Err(format!(
                        "messages[{i}]: the tool result for \"{name}\" answers no call of the assistant turn before it"
                    ));
                };
                calls.remove(at);
            }
            _ => {
                calls.clear();
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let function = &call["function"];
                    if !function["arguments"].is_object() {
                        return Err("json: cannot unmarshal into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments".to_owned());
                    }
                    calls.push(function["name"].as_str().unwrap_or_default().to_owned());
                }
            }
        }
    }
    Ok(())
}

fn validate(fields: &Map<String, Value>) -> Result<(), String> {
    if let Some(unknown) = fields.keys().find(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field \"{unknown}\" (ollama would ignore it silently)"
        ));
    }
    match fields.get("model") {
        Some(Value::String(m)) if !m.is_empty() => {}
        _ => return Err("model is required".to_owned()),
    }
    if let Some(messages) = fields.get("messages") {
        let Some(messages) = messages.as_array() else {
            return Err("json: cannot unmarshal messages into Go struct field ChatRequest.messages of type []api.Message".to_owned());
        };
        for message in messages {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("");
            if !["system", "user", "assistant", "tool"].contains(&role) {
                return Err(format!("invalid role \"{role}\""));
            }
            if let Some(content) = message.get("content")
                && !content.is_string()
            {
                return Err("json: cannot unmarshal content into Go struct field Message.messages.content of type string".to_owned());
            }
        }
        check_tool_turns(messages)?;
    }
    if let Some(tools) = fields.get("tools") {
        let Some(tools) = tools.as_array() else {
            return Err("json: cannot unmarshal tools into Go struct field ChatRequest.tools of type api.Tools".to_owned());
        };
        for tool in tools {
            if tool.get("type").and_then(Value::as_str) != Some("function") {
                return Err("invalid tool: type must be \"function\"".to_owned());
            }
            match tool["function"].get("name") {
                Some(Value::String(n)) if !n.is_empty() => {}
                _ => return Err("invalid tool: function.name is required".to_owned()),
            }
        }
    }
    match fields.get("format") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(Value::String(f)) if f == "json" => {}
        Some(other) => {
            return Err(format!(
                "invalid format: {other}; expected \"json\" or a valid JSON Schema object"
            ));
        }
    }
    if let Some(stream) = fields.get("stream")
        && !stream.is_boolean()
    {
        return Err(
            "json: cannot unmarshal stream into Go struct field ChatRequest.stream of type bool"
                .to_owned(),
        );
    }
    if let Some(options) = fields.get("options") {
        let Some(options) = options.as_object() else {
            return Err("json: cannot unmarshal options into Go struct field ChatRequest.options of type map[string]interface {}".to_owned());
        };
        for (key, value) in options {
            let ok = if FLOAT_OPTIONS.contains(&key.as_str()) {
                value.is_number()
            } else if INT_OPTIONS.contains(&key.as_str()) {
                value.is_i64() || value.is_u64()
            } else if key == "stop" {
                value
                    .as_array()
                    .is_some_and(|s| s.iter().all(Value::is_string))
            } else {
                return Err(format!(
                    "invalid option provided: \"{key}\" (ollama would ignore it silently)"
                ));
            };
            if !ok {
                return Err(format!("option \"{key}\" has the wrong type"));
            }
        }
    }
    Ok(())
}

/// The answer to a valid request.
async fn answer(body: &Value, reply: Reply) -> Response<Body> {
    let (text, tool_calls) = match &reply.outcome {
        Outcome::Answer {
            text,
            tool_calls,
            structured,
        } => Reply::as_text(text, tool_calls, structured.as_ref()),
        Outcome::Fail {
            status,
            message,
            retry_after,
        } => {
            tokio::time::sleep(reply.first_delay).await;
            let headers: Vec<(&str, String)> = retry_after
                .map(|s| ("retry-after", s.to_string()))
                .into_iter()
                .collect();
            return json_answer(*status, &headers, &json!({"error": message}));
        }
        Outcome::Raw { status, body } => {
            tokio::time::sleep(reply.first_delay).await;
            return Response::builder()
                .status(*status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body.clone())).boxed())
                .expect("a valid response");
        }
    };
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let streaming = body["stream"].as_bool().unwrap_or(true) && !reply.whole;
    let (input, output) = reply.usage.unwrap_or_else(|| {
        (
            word_count(body),
            text.split_whitespace().count() as u64 + tool_calls.len() as u64,
        )
    });
    let done_reason = reply
        .finish_reason
        .clone()
        .unwrap_or_else(|| "stop".to_owned());
    let calls: Vec<Value> = tool_calls
        .iter()
        .map(|c| {
            let arguments = serde_json::from_str::<Value>(&c.arguments)
                .unwrap_or_else(|_| Value::String(c.arguments.clone()));
            json!({"function": {"name": c.name, "arguments": arguments}})
        })
        .collect();
    let last = |message: Value| {
        json!({
            "model": model,
            "created_at": CREATED_AT,
            "message": message,
            "done_reason": done_reason,
            "done": true,
            "total_duration": 1_000_000,
            "load_duration": 1_000,
            "prompt_eval_count": input,
            "prompt_eval_duration": 10_000,
            "eval_count": output,
            "eval_duration": 100_000,
        })
    };
    if !streaming {
        tokio::time::sleep(reply.first_delay).await;
        let mut message = json!({"role": "assistant", "content": text});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        return json_answer(200, &[], &last(message));
    }
    let line = |v: Value| Bytes::from(format!("{v}\n"));
    let mut lines = Vec::new();
    for piece in reply.text_pieces(&text).iter().filter(|p| !p.is_empty()) {
        lines.push(line(json!({"model": model, "created_at": CREATED_AT, "message": {"role": "assistant", "content": piece}, "done": false})));
    }
    if !calls.is_empty() {
        lines.push(line(json!({"model": model, "created_at": CREATED_AT, "message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": false})));
    }
    lines.push(line(last(json!({"role": "assistant", "content": ""}))));
    if let Some(n) = reply.cut_after {
        lines.truncate(n);
    }
    let timed: Vec<(Duration, Bytes)> = lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| (if i == 0 { reply.first_delay } else { reply.gap }, l))
        .collect();
    streamed_answer("application/x-ndjson", &[], timed)
}
