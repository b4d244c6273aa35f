//! `POST /v1/chat/completions`: the demo model, an OpenAI-compatible endpoint that
//! answers every request the same way, so that Sentinel specs have something to run
//! against under `prill run --demo` without a key.
//!
//! The answer is `You said: <text>`, where `<text>` is the content of the last `user`
//! message (a string, or the `text` parts of a list joined with a space), returned whole
//! as one JSON chat completion (`stream` is ignored: OpenAI clients read a plain JSON
//! body as the whole answer). The usage counts words: the prompt's words in every
//! message, the answer's words. A body that is not a JSON object with a `messages` list
//! is a 400 in OpenAI's error shape.

use http::{Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::body::Body;
use crate::routes::{json_response, read_body};
use crate::timed::RequestBody;

/// The model name the demo answers under when the request names none.
const DEFAULT_MODEL: &str = "demo";

/// Answers one chat completion request.
pub(crate) async fn handle(request: Request<RequestBody>) -> Response<Body> {
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let Some(messages) = parsed
        .as_ref()
        .and_then(|v| v.get("messages"))
        .and_then(Value::as_array)
    else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": {
                "message": "the body must be a JSON object with a `messages` list",
                "type": "invalid_request_error",
            }}),
        );
    };
    let model = parsed
        .as_ref()
        .and_then(|v| v.get("model"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL);
    json_response(StatusCode::OK, &completion(model, messages))
}

/// The completion answering `messages`.
fn completion(model: &str, messages: &[Value]) -> Value {
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(content_text)
        .unwrap_or_default();
    let answer = format!("You said: {last_user}");
    let prompt_tokens: usize = messages
        .iter()
        .map(|m| content_text(m).split_whitespace().count())
        .sum();
    let completion_tokens = answer.split_whitespace().count();
    json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": answer},
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    })
}

/// A message's text: its string content, or its `text` parts joined with a space.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_the_last_user_message() {
        let messages = [
            json!({"role": "system", "content": "be brief"}),
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": "You said: first"}),
            json!({"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}]}),
        ];
        let c = completion("m", &messages);
        assert_eq!(
            c["choices"][0]["message"]["content"],
            "You said: hello there"
        );
        assert_eq!(c["choices"][0]["finish_reason"], "stop");
        assert_eq!(c["model"], "m");
        assert_eq!(c["usage"]["completion_tokens"], 4);
        assert_eq!(c["usage"]["prompt_tokens"], 2 + 1 + 3 + 2);
    }
}
