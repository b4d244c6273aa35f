//! The Anthropic provider end to end against `prill-testkit`'s fake Messages API on
//! 127.0.0.1: streamed and whole answers, tool calls whose input arrives in pieces,
//! usage, timings, the exact request mapping, keys, retries, timeouts, and the fake's
//! own refusals of malformed requests.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use prill_connect::provider::anthropic::Anthropic;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RAW_EVENTS_KEPT, Role, Sampling, ToolDef,
};
use prill_connect::{ConnectError, ErrorKind, HttpOptions, RetryPolicy};
use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::{FakeAnthropic, stream_error};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-0123456789";

fn provider(fake: &FakeAnthropic, key: Option<&str>) -> Anthropic {
    let vars: Vec<(&str, &str)> = key.map(|k| ("ANTHROPIC_API_KEY", k)).into_iter().collect();
    provider_env(fake, &vars)
}

/// The provider for `fake` with the variables `vars`.
fn provider_env(fake: &FakeAnthropic, vars: &[(&str, &str)]) -> Anthropic {
    let base = fake.base_url();
    let mut env = HashMap::from([("ANTHROPIC_BASE_URL".to_owned(), base)]);
    for (k, v) in vars {
        env.insert((*k).to_owned(), (*v).to_owned());
    }
    let settings = ProviderSettings::resolve(ProviderKind::Anthropic, &env, None).unwrap();
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(3),
        },
        ..HttpOptions::default()
    };
    let transport = Transport::new(ProviderKind::Anthropic, &options, Limits::none()).unwrap();
    Anthropic::new(settings, transport)
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "claude-3-5-haiku-latest".into(),
        system: None,
        messages: vec![ChatMessage::text(Role::User, text)],
        tools: Vec::new(),
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

async fn started() -> FakeAnthropic {
    let fake = FakeAnthropic::start().await;
    fake.expect_key(KEY);
    fake
}

#[tokio::test]
async fn a_streamed_answer_is_joined_with_usage_and_time_to_first_token() {
    let fake = started().await;
    fake.script(
        Reply::text("The capital of France is Paris.")
            .usage(14, 8)
            .delay(Duration::from_millis(100))
            .gap(Duration::from_millis(10)),
    );
    let response = provider(&fake, Some(KEY))
        .complete(&ask("capital of France?"))
        .await
        .unwrap();
    assert_eq!(response.text, "The capital of France is Paris.");
    assert!(response.tool_calls.is_empty());
    let usage = response.usage.expect("usage");
    assert_eq!((usage.input, usage.output), (Some(14), Some(8)));
    assert_eq!(response.stop_reason.as_deref(), Some("end_turn"));
    // `message_start`, a block of one text_delta a word (six), `message_delta` and
    // `message_stop` (the ping is not counted); the first and the last three are kept.
    assert_eq!(response.events, 1 + (1 + 6 + 1) + 2);
    let raw = response.raw.values();
    let kinds: Vec<&Value> = raw.iter().map(|e| &e["type"]).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let first = response.timings.first_byte.expect("time to first token");
    assert!(first >= Duration::from_millis(100), "{first:?}");
    assert!(response.timings.total >= first + Duration::from_millis(50));

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("authorization"), None);
}

/// Issue 16: a stream of thousands of events keeps its whole text but only a bounded
/// number of raw events.
#[tokio::test]
async fn a_long_stream_keeps_the_whole_text_and_few_raw_events() {
    let fake = started().await;
    let text = crate::long_text(5_000);
    fake.script(Reply::text(&text).usage(3, 5_000));
    let response = provider(&fake, Some(KEY))
        .complete(&ask("count"))
        .await
        .unwrap();
    assert_eq!(response.text, text);
    assert_eq!(response.events, 1 + (1 + 5_000 + 1) + 2);
    assert_eq!(response.raw.values().len(), RAW_EVENTS_KEPT);
    assert_eq!(response.raw.values()[0]["type"], "message_start");
    assert_eq!(response.raw.values()[3]["type"], "message_stop");
}

#[tokio::test]
async fn a_whole_answer_when_not_streaming() {
    let fake = started().await;
    fake.script(
        Reply::text("Paris")
            .with_tool_call("lookup", json!({"q": "x"}))
            .usage(5, 2),
    );
    let response = provider(&fake, Some(KEY))
        .streaming(false)
        .complete(&ask("capital?"))
        .await
        .unwrap();
    assert_eq!(response.text, "Paris");
    assert_eq!(response.tool_calls[0].arguments, json!({"q": "x"}));
    assert_eq!(response.usage.unwrap().input, Some(5));
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
    assert!(fake.last_body().get("stream").is_none());
}

#[tokio::test]
async fn tool_calls_are_joined_from_input_json_deltas() {
    let fake = started().await;
    let args = json!({"city": "Paris", "units": "metric", "days": [1, 2, 3]});
    fake.script(
        Reply::text("Let me check.")
            .with_tool_call("weather", args.clone())
            .with_tool_call("clock", json!({})),
    );
    let response = provider(&fake, Some(KEY))
        .complete(&ask("weather in Paris?"))
        .await
        .unwrap();
    assert_eq!(response.text, "Let me check.");
    assert_eq!(
        response.tool_calls,
        vec![
            ModelToolCall {
                id: Some("toolu_fake_0".into()),
                name: "weather".into(),
                arguments: args
            },
            ModelToolCall {
                id: Some("toolu_fake_1".into()),
                name: "clock".into(),
                arguments: json!({})
            },
        ]
    );
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
    // Without the input's pieces the stream is 13 events: `message_start`, the text
    // block (start, three words, stop), each call's start and stop, `clock`'s one piece,
    // `message_delta` and `message_stop`.
    assert!(
        response.events > 13 + 3,
        "the input arrived split across {} events",
        response.events - 13
    );
}

#[tokio::test]
async fn model_config_is_mapped_exactly() {
    let fake = started().await;
    let request = ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: Some("You are terse.".into()),
        messages: vec![
            ChatMessage::text(Role::User, "hi"),
            ChatMessage::text(Role::Assistant, "hello"),
            ChatMessage::text(Role::User, "weather?"),
        ],
        tools: vec![
            ToolDef {
                name: "clock".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {}}),
            },
            ToolDef {
                name: "weather".into(),
                description: Some("the forecast".into()),
                parameters: json!({"type": "object",
                    "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            },
        ],
        sampling: Sampling {
            temperature: Some(0.3),
            max_tokens: Some(200),
            top_p: Some(0.8),
            top_k: Some(20),
            stop_sequences: vec!["STOP".into(), "END".into()],
            seed: Some(42),
        },
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    };
    let r = provider(&fake, Some(KEY)).complete(&request).await.unwrap();
    // Claude 4.5 takes `temperature` or `top_p`: `top_p` is left out, with a note.
    assert_eq!(
        r.notes,
        [
            "top_p 0.8 not sent: claude-sonnet-4-5 takes temperature or top_p, not both; temperature was kept"
        ]
    );
    assert_eq!(
        fake.last_body(),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 200,
            "system": "You are terse.",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "weather?"},
            ],
            "temperature": 0.3,
            "top_k": 20,
            "stop_sequences": ["STOP", "END"],
            "tools": [
                {"name": "clock", "input_schema": {"type": "object", "properties": {}}},
                {"name": "weather", "description": "the forecast", "input_schema": {"type": "object",
                    "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            ],
            "stream": true,
        })
    );

    // No max_tokens in the spec: the required field gets 1024; no seed is ever sent.
    provider(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap();
    let body = fake.last_body();
    assert_eq!(body["max_tokens"], 1024);
    assert!(body.get("seed").is_none() && body.get("system").is_none());
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows_the_key() {
    let fake = started().await;
    let wrong = "sk-ant-wrong-secret-987654321";
    let anthropic = provider(&fake, Some(wrong));
    let e = anthropic.complete(&ask("hi")).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 401, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    assert!(text.contains("invalid x-api-key"), "{text}");
    for shown in [text, format!("{e:?}"), format!("{anthropic:?}")] {
        assert!(!shown.contains("987654321"), "{shown}");
    }
    assert_eq!(fake.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test]
async fn a_missing_key_is_an_error_before_anything_is_sent() {
    let fake = started().await;
    let e = provider(&fake, None)
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert_eq!(
        e.to_string(),
        "anthropic needs a key: set ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN for a gateway that takes a bearer token"
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let fake = started().await;
    fake.script(Reply::rate_limited(1));
    fake.script(Reply::text("finally"));
    let begin = Instant::now();
    let response = provider(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap();
    assert_eq!(response.text, "finally");
    assert!(
        begin.elapsed() >= Duration::from_secs(1),
        "retry-after honoured"
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried() {
    let fake = started().await;
    fake.script(Reply::error(529, "Overloaded"));
    fake.script(Reply::error(500, "Internal server error"));
    fake.script(Reply::text("recovered"));
    let anthropic = provider(&fake, Some(KEY));
    assert_eq!(
        anthropic.complete(&ask("hi")).await.unwrap().text,
        "recovered"
    );
    assert_eq!(fake.requests().len(), 3);

    for _ in 0..3 {
        fake.script(Reply::error(529, "Overloaded"));
    }
    let e = anthropic.complete(&ask("hi")).await.unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 529, .. }), "{e}");
    assert!(e.to_string().contains("overloaded_error"), "{e}");
    assert_eq!(fake.requests().len(), 6);
}

#[tokio::test]
async fn a_400_is_not_retried_and_shows_the_message() {
    let fake = started().await;
    let mut request = ask("hi");
    request.sampling.temperature = Some(1.5);
    let e = provider(&fake, Some(KEY))
        .complete(&request)
        .await
        .unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 400, .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("400 bad request"), "{text}");
    assert!(
        text.contains("temperature: Input should be less than or equal to 1"),
        "{text}"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_error() {
    let fake = started().await;
    fake.script(stream_error("overloaded_error", "Overloaded"));
    let e = provider(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string()
            .contains("the server reported an error (overloaded_error): Overloaded"),
        "{e}"
    );
}

#[tokio::test]
async fn content_types_other_than_asked_for_are_errors() {
    let fake = started().await;
    let anthropic = provider(&fake, Some(KEY));
    // A whole message to a stream request is that message.
    fake.script(Reply::text("Paris").whole());
    assert_eq!(anthropic.complete(&ask("hi")).await.unwrap().text, "Paris");
    fake.script(Reply::raw(200, "<html>Service Unavailable</html>").content_type("text/html"));
    let e = anthropic.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string()
            .contains("asked for text/event-stream, the answer is text/html: <html>"),
        "{e}"
    );
    // A stream cut before `message_stop` is an error too.
    fake.script(Reply::text("Paris is").cut_after(4));
    let e = anthropic.complete(&ask("hi")).await.unwrap_err();
    assert!(e.to_string().contains("before its `message_stop`"), "{e}");
}

#[tokio::test]
async fn the_timeout_is_enforced() {
    let fake = started().await;
    fake.script(Reply::text("too late").delay(Duration::from_secs(5)));
    let mut request = ask("hi");
    request.timeout = Some(Duration::from_millis(300));
    let begin = Instant::now();
    let e = provider(&fake, Some(KEY))
        .complete(&request)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(begin.elapsed() < Duration::from_secs(3));
    assert!(e.to_string().contains("within 300ms"), "{e}");
}

/// Posts `body` to the fake as is, with `headers`; returns the status and JSON body.
async fn post(fake: &FakeAnthropic, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let client = Transport::default_for(ProviderKind::Anthropic)
        .unwrap()
        .client()
        .clone();
    let mut request = client
        .post(format!("{}/v1/messages", fake.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_fake_refuses_malformed_requests_as_the_api_does() {
    let fake = started().await;
    let good = json!({"model": "claude-x", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    let auth = [("x-api-key", KEY), ("anthropic-version", "2023-06-01")];
    let error = |kind: &str, message: &str| json!({"type": "error", "error": {"type": kind, "message": message}});

    assert_eq!(post(&fake, &auth, &good).await.0, 200);
    assert_eq!(
        post(&fake, &[("x-api-key", "nope"), auth[1]], &good).await,
        (401, error("authentication_error", "invalid x-api-key"))
    );
    assert_eq!(
        post(&fake, &auth[..1], &good).await,
        (
            400,
            error(
                "invalid_request_error",
                "anthropic-version: header is required"
            )
        )
    );
    let mut no_max = good.clone();
    no_max.as_object_mut().unwrap().remove("max_tokens");
    assert_eq!(
        post(&fake, &auth, &no_max).await,
        (
            400,
            error("invalid_request_error", "max_tokens: Field required")
        )
    );
    let mut system_role = good.clone();
    system_role["messages"] =
        json!([{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]);
    let (status, body) = post(&fake, &auth, &system_role).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unexpected role \"system\""),
        "{body}"
    );
    // The API combines consecutive turns of one role; it does not refuse them.
    let mut not_alternating = good.clone();
    not_alternating["messages"] =
        json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]);
    assert_eq!(post(&fake, &auth, &not_alternating).await.0, 200);
    let mut assistant_first = good.clone();
    assistant_first["messages"] = json!([{"role": "assistant", "content": "a"}]);
    assert_eq!(post(&fake, &auth, &assistant_first).await.0, 400);
    let mut unknown = good.clone();
    unknown["seed"] = json!(1);
    assert_eq!(
        post(&fake, &auth, &unknown).await,
        (
            400,
            error(
                "invalid_request_error",
                "seed: Extra inputs are not permitted"
            )
        )
    );
    assert_eq!(fake.requests().len(), 8, "every request is recorded");
}

#[tokio::test]
async fn sampling_is_fitted_to_the_model_and_the_notes_say_what_was_left_out() {
    let fake = started().await;
    let anthropic = provider(&fake, Some(KEY));
    // Claude 4.7 refuses every sampler: the fake answers 400 if one is sent.
    let mut request = ask("hi");
    request.model = "claude-opus-4-7".into();
    request.sampling.temperature = Some(0.0);
    request.sampling.top_k = Some(5);
    let r = anthropic.complete(&request).await.unwrap();
    let body = fake.last_body();
    assert!(
        body.get("temperature").is_none() && body.get("top_k").is_none(),
        "{body}"
    );
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(
        r.notes[0].starts_with("temperature 0 not sent: claude-opus-4-7"),
        "{:?}",
        r.notes
    );
    // Claude 4.5 takes temperature or top_p: temperature is kept.
    let mut request = ask("hi");
    request.model = "claude-sonnet-4-5-20250929".into();
    request.sampling.temperature = Some(0.3);
    request.sampling.top_p = Some(0.9);
    let r = anthropic.complete(&request).await.unwrap();
    let body = fake.last_body();
    assert_eq!(body["temperature"], 0.3);
    assert!(body.get("top_p").is_none(), "{body}");
    assert!(r.notes[0].contains("not both"), "{:?}", r.notes);
    // An older model takes both, and nothing is noted.
    let mut request = ask("hi");
    request.sampling.temperature = Some(0.3);
    request.sampling.top_p = Some(0.9);
    let r = anthropic.complete(&request).await.unwrap();
    assert_eq!(fake.last_body()["top_p"], 0.9);
    assert!(r.notes.is_empty());
}

#[tokio::test]
async fn the_fake_refuses_what_the_api_refuses_when_sent_as_is() {
    let fake = started().await;
    let mut request = ask("hi");
    request.model = "claude-opus-4-7".into();
    request.sampling.temperature = Some(0.0);
    let body = provider(&fake, Some(KEY)).body(&request).unwrap();
    assert!(body.get("temperature").is_none(), "the provider fits it");
    let auth = [("x-api-key", KEY), ("anthropic-version", "2023-06-01")];
    let mut sent = body.clone();
    sent["temperature"] = json!(0.0);
    let (status, error) = post(&fake, &auth, &sent).await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["message"],
        "`temperature` is deprecated for this model."
    );
}

#[tokio::test]
async fn consecutive_turns_of_one_role_are_taken_as_the_api_takes_them() {
    let fake = started().await;
    let mut request = ask("and another thing");
    request
        .messages
        .insert(0, ChatMessage::text(Role::User, "one thing"));
    let r = provider(&fake, Some(KEY)).complete(&request).await.unwrap();
    assert_eq!(r.text, "ok");
    assert_eq!(fake.last_body()["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn stop_reasons_are_kept_and_a_refusal_is_marked() {
    let fake = started().await;
    let anthropic = provider(&fake, Some(KEY));
    fake.script(Reply::text("I can't help with that.").finish_reason("refusal"));
    let r = anthropic.complete(&ask("hi")).await.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("refusal"));
    assert!(r.refusal && !r.truncated());
    for reason in ["max_tokens", "model_context_window_exceeded"] {
        fake.script(Reply::text("The answer is").finish_reason(reason));
        let r = anthropic.complete(&ask("hi")).await.unwrap();
        assert_eq!(r.stop_reason.as_deref(), Some(reason));
        assert!(r.truncated() && !r.refusal, "{reason}");
    }
    fake.script(
        Reply::text("more to come")
            .finish_reason("pause_turn")
            .whole(),
    );
    let r = anthropic.complete(&ask("hi")).await.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("pause_turn"));
    assert!(!r.refusal && !r.truncated());
    let r = anthropic.complete(&ask("hi")).await.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
}

#[tokio::test]
async fn an_auth_token_is_sent_as_a_bearer_token_without_x_api_key() {
    let fake = started().await;
    let gateway = provider_env(&fake, &[("ANTHROPIC_AUTH_TOKEN", KEY)]);
    let r = gateway.complete(&ask("hi")).await.unwrap();
    assert_eq!(r.text, "ok");
    let sent = &fake.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert!(!format!("{gateway:?}").contains(KEY));
    // A refused token names its variable and is never shown.
    let wrong = "gw-wrong-token-987654321";
    let e = provider_env(&fake, &[("ANTHROPIC_AUTH_TOKEN", wrong)])
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.ends_with("the key was refused: check ANTHROPIC_AUTH_TOKEN"),
        "{text}"
    );
    assert!(!text.contains("987654321") && !format!("{e:?}").contains("987654321"));
    // Both set: both headers, as the official SDK sends them.
    provider_env(
        &fake,
        &[("ANTHROPIC_API_KEY", KEY), ("ANTHROPIC_AUTH_TOKEN", KEY)],
    )
    .complete(&ask("hi"))
    .await
    .unwrap();
    let sent = fake.requests().pop().unwrap();
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // Neither: an error naming both, before anything is sent.
    let before = fake.requests().len();
    let e = provider_env(&fake, &[])
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("ANTHROPIC_AUTH_TOKEN"), "{e}");
    assert_eq!(fake.requests().len(), before);
}
