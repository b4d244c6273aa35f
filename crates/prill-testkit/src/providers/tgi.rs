//! [`FakeTgi`]: Hugging Face's Text Generation Inference (the server behind Inference
//! Endpoints) on 127.0.0.1, speaking its Chat Completions route, `POST
//! /v1/chat/completions`, streamed and whole, in the OpenAI-like shape TGI answers in.
//!
//! It reads a request as TGI's router does (`router/src/lib.rs`, `ChatRequest`): fields
//! it does not know are ignored, and a body its types cannot take is a 422 with a text
//! body (`Failed to deserialize the JSON body into the target type: ...`):
//!
//! | request | answer |
//! |---|---|
//! | another path | 404 |
//! | not `POST` | 405 |
//! | another bearer, when a key is expected (an Inference Endpoint) | 401 |
//! | not JSON | 400 |
//! | no `messages` | 422 ``missing field `messages` `` |
//! | a `seed` that is not an integer from 0 up (TGI's seed is a `u64`) | 422 ``seed: invalid value: integer `-1`, expected u64`` |
//! | `max_tokens`, `max_completion_tokens` (its alias) not an integer from 0 up, or both | 422 |
//! | `stop` that is not an array of strings | 422 |
//! | `response_format` other than `{"type": "json" \| "json_object", "value": <schema>}`, `{"type": "regex", "value": "<regex>"}`, `{"type": "json_schema", "value": {"name"?, "schema"}}`; OpenAI's `{"type": "json_schema", "json_schema": ...}` among them | 422 ``response_format: missing field `value` `` |
//! | `response_format` with `tools` | 422 `{"error": "Grammar and tools are mutually exclusive", "error_type": "tool_error"}` |
//!
//! A valid request gets the next [`Reply`](super::Reply), as [`super::openai::FakeOpenAi`] answers it.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use serde_json::{Map, Value, json};

use super::reply::{State, last_user_text};
use super::scripted::{Answer, Body, RecordedRequest, Served, json_answer, relabel, serve};

/// A fake TGI server; stops when dropped.
#[derive(Debug)]
pub struct FakeTgi {
    served: Served,
    state: Arc<State>,
}

scripting!(FakeTgi);

impl FakeTgi {
    /// Starts a fake on a free port of 127.0.0.1 that takes any key (or none) and
    /// answers `ok` unless scripted otherwise.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeTgi {
        let state = State::new();
        let shared = Arc::clone(&state);
        let served = serve(move |request| handle(Arc::clone(&shared), request)).await;
        FakeTgi { served, state }
    }

    /// Accepts only `Authorization: Bearer {key}` from now on, as an Inference Endpoint.
    pub fn expect_key(&self, key: &str) -> &FakeTgi {
        self.state.set_key(Some(key.to_owned()));
        self
    }

    /// `http://127.0.0.1:{port}/v1`, the base url a client is given.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.served.addr)
    }
}

/// Why a request is refused: a status and a body, text or JSON.
enum Refusal {
    Text(u16, String),
    Json(u16, Value),
}

fn handle(state: Arc<State>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        state.record(&request);
        match check(&state, &request) {
            Err(Refusal::Json(status, body)) => json_answer(status, &[], &body),
            Err(Refusal::Text(status, text)) => text_answer(status, text),
            Ok(body) => {
                let reply = state.next_for(&body, &last_user_text(&body));
                let content_type = reply.content_type.clone();
                relabel(
                    super::openai::answer(&body, reply).await,
                    content_type.as_deref(),
                )
            }
        }
    })
}

fn text_answer(status: u16, text: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(text)).boxed())
        .expect("a valid response")
}

/// A body TGI's types cannot take.
fn undeserializable(what: String) -> Refusal {
    Refusal::Text(
        422,
        format!("Failed to deserialize the JSON body into the target type: {what}"),
    )
}

/// The request's body when TGI would take it.
fn check(state: &State, request: &RecordedRequest) -> Result<Value, Refusal> {
    if request.path != "/v1/chat/completions" {
        return Err(Refusal::Text(404, String::new()));
    }
    if request.method != "POST" {
        return Err(Refusal::Text(405, String::new()));
    }
    if let Some(key) = state.key()
        && request.header("authorization") != Some(format!("Bearer {key}").as_str())
    {
        return Err(Refusal::Json(
            401,
            json!({"error": "Authorization header is correct, but the token seems invalid"}),
        ));
    }
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return Err(Refusal::Text(
            400,
            "Failed to parse the request body as JSON".into(),
        ));
    };
    let Some(fields) = body.as_object() else {
        return Err(undeserializable(
            "invalid type: expected struct ChatRequest".into(),
        ));
    };
    check_fields(fields)?;
    Ok(body)
}

/// The fields TGI reads, with TGI's types.
fn check_fields(fields: &Map<String, Value>) -> Result<(), Refusal> {
    match fields.get("messages") {
        Some(Value::Array(_)) => {}
        Some(_) => {
            return Err(undeserializable(
                "messages: invalid type, expected a sequence".into(),
            ));
        }
        None => return Err(undeserializable("missing field `messages`".into())),
    }
    let unsigned = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => Ok(()),
        Some(value) if value.is_u64() => Ok(()),
        Some(value) => Err(undeserializable(format!(
            "{name}: invalid value: {value}, expected u64"
        ))),
    };
    if let Some(seed) = fields
        .get("seed")
        .and_then(Value::as_i64)
        .filter(|s| *s < 0)
    {
        return Err(undeserializable(format!(
            "seed: invalid value: integer `{seed}`, expected u64"
        )));
    }
    for name in ["seed", "max_tokens", "max_completion_tokens"] {
        unsigned(name)?;
    }
    if fields.contains_key("max_tokens") && fields.contains_key("max_completion_tokens") {
        return Err(undeserializable("duplicate field `max_tokens`".into()));
    }
    if let Some(stop) = fields.get("stop").filter(|s| !s.is_null())
        && !stop
            .as_array()
            .is_some_and(|s| s.iter().all(Value::is_string))
    {
        return Err(undeserializable(
            "stop: invalid type, expected a sequence of strings".into(),
        ));
    }
    let Some(format) = fields.get("response_format").filter(|f| !f.is_null()) else {
        return Ok(());
    };
    check_grammar(format)?;
    if fields.get("tools").is_some_and(|t| !t.is_null()) {
        return Err(Refusal::Json(
            422,
            json!({"error": "Grammar and tools are mutually exclusive", "error_type": "tool_error"}),
        ));
    }
    Ok(())
}

/// TGI's `GrammarType`, tagged by `type` with its content in `value`.
fn check_grammar(format: &Value) -> Result<(), Refusal> {
    let at = |what: &str| undeserializable(format!("response_format: {what}"));
    let kind = match format.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => return Err(at("missing field `type`")),
    };
    let value = format.get("value");
    match (kind, value) {
        ("json" | "json_object" | "regex" | "json_schema", None) => {
            Err(at("missing field `value`"))
        }
        ("json" | "json_object", Some(_)) => Ok(()),
        ("regex", Some(Value::String(_))) => Ok(()),
        ("json_schema", Some(Value::Object(config))) if config.contains_key("schema") => {
            match config.get("name") {
                None | Some(Value::Null | Value::String(_)) => Ok(()),
                Some(_) => Err(at("name: invalid type, expected a string")),
            }
        }
        ("json_schema", Some(_)) => Err(at("missing field `schema`")),
        ("regex", Some(_)) => Err(at("invalid type, expected a string")),
        (other, _) => Err(at(&format!(
            "unknown variant `{other}`, expected one of `json`, `json_object`, `regex`, `json_schema`"
        ))),
    }
}
