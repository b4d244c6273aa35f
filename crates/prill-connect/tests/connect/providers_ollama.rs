//! The Ollama provider end to end against `prill-testkit`'s fake Ollama on 127.0.0.1:
//! JSON-lines streams, tool calls, usage, timings, the exact request mapping, errors,
//! retries and timeouts.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use prill_connect::provider::ollama::Ollama;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RAW_EVENTS_KEPT, Role, Sampling, ToolDef,
};
use prill_connect::{ConnectError, ErrorKind, HttpOptions, RetryPolicy};
use prill_testkit::providers::Reply;
use prill_testkit::providers::ollama::FakeOllama;
use serde_json::json;

fn ollama(fake: &FakeOllama) -> Ollama {
    ollama_with(fake, Duration::from_millis(20), Limits::none())
}

/// The provider for `fake`, retrying after `backoff`, within `limits`.
fn ollama_with(fake: &FakeOllama, backoff: Duration, limits: Limits) -> Ollama {
    // OLLAMA_HOST as people write it: without a scheme.
    let host = fake.base_url().replace("http://", "");
    let env: HashMap<String, String> = [("OLLAMA_HOST".to_owned(), host)].into();
    let settings = ProviderSettings::resolve(ProviderKind::Ollama, &env, None).unwrap();
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: backoff,
            max_delay: Duration::from_secs(3),
        },
        ..HttpOptions::default()
    };
    Ollama::new(
        settings,
        Transport::new(ProviderKind::Ollama, &options, limits).unwrap(),
    )
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "llama3.1:8b".into(),
        system: None,
        messages: vec![ChatMessage::text(Role::User, text)],
        tools: Vec::new(),
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

#[tokio::test]
async fn a_streamed_answer_is_joined_with_usage_and_timings() {
    let fake = FakeOllama::start().await;
    fake.models(&["llama3.1:8b"]);
    fake.script(
        Reply::text("Paris is the capital.")
            .usage(26, 5)
            .delay(Duration::from_millis(100))
            .gap(Duration::from_millis(10)),
    );
    let response = ollama(&fake).complete(&ask("capital?")).await.unwrap();
    assert_eq!(response.text, "Paris is the capital.");
    let usage = response.usage.unwrap();
    assert_eq!((usage.input, usage.output), (Some(26), Some(5)));
    assert_eq!(response.stop_reason.as_deref(), Some("stop"));
    assert_eq!(response.events, 5, "four words and the last line");
    assert_eq!(response.raw.values().len(), RAW_EVENTS_KEPT);
    assert_eq!(response.raw.values()[3]["done"], true);
    let first = response.timings.first_byte.unwrap();
    assert!(first >= Duration::from_millis(100), "{first:?}");
    assert!(first <= response.timings.total);
    let request = &fake.requests()[0];
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.header("authorization"), None);
}

/// Issue 16: a stream of thousands of lines keeps its whole text but only a bounded
/// number of raw lines.
#[tokio::test]
async fn a_long_stream_keeps_the_whole_text_and_few_raw_lines() {
    let fake = FakeOllama::start().await;
    let text = crate::long_text(5_000);
    fake.script(Reply::text(&text).usage(3, 5_000));
    let response = ollama(&fake).complete(&ask("count")).await.unwrap();
    assert_eq!(response.text, text);
    assert_eq!(response.events, 5_001, "a line a word and the last line");
    assert_eq!(response.raw.values().len(), RAW_EVENTS_KEPT);
    assert_eq!(response.raw.values()[3]["done"], true);
}

#[tokio::test]
async fn a_whole_answer_when_not_streaming() {
    let fake = FakeOllama::start().await;
    fake.script(Reply::text("Paris").with_tool_call("lookup", json!({"q": "Paris"})));
    let response = ollama(&fake)
        .streaming(false)
        .complete(&ask("capital?"))
        .await
        .unwrap();
    assert_eq!(response.text, "Paris");
    assert_eq!(response.tool_calls[0].arguments, json!({"q": "Paris"}));
    assert!(response.usage.is_some());
    assert_eq!(fake.last_body()["stream"], false);
}

#[tokio::test]
async fn tool_calls_arrive_with_object_arguments() {
    let fake = FakeOllama::start().await;
    fake.script(
        Reply::tool_call("get_weather", json!({"city": "Paris", "days": 2}))
            .with_tool_call("now", json!({})),
    );
    let response = ollama(&fake).complete(&ask("weather?")).await.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![
            ModelToolCall {
                id: None,
                name: "get_weather".into(),
                arguments: json!({"city": "Paris", "days": 2}),
            },
            ModelToolCall {
                id: None,
                name: "now".into(),
                arguments: json!({}),
            },
        ]
    );
    assert_eq!(response.text, "");
}

#[tokio::test]
async fn model_config_is_mapped_exactly() {
    let fake = FakeOllama::start().await;
    let request = ModelRequest {
        model: "qwen2.5:7b".into(),
        system: Some("Answer in one word.".into()),
        messages: vec![
            ChatMessage::text(Role::User, "hi"),
            ChatMessage::text(Role::Assistant, "hello"),
            ChatMessage::text(Role::User, "capital of France?"),
        ],
        tools: vec![ToolDef {
            name: "lookup".into(),
            description: Some("Looks things up".into()),
            parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        }],
        sampling: Sampling {
            temperature: Some(0.0),
            max_tokens: Some(64),
            top_p: Some(0.5),
            top_k: Some(20),
            stop_sequences: vec!["\n\n".into(), "END".into()],
            seed: Some(1234),
        },
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    };
    ollama(&fake).complete(&request).await.unwrap();
    assert_eq!(
        fake.last_body(),
        json!({
            "model": "qwen2.5:7b",
            "messages": [
                {"role": "system", "content": "Answer in one word."},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "capital of France?"},
            ],
            "stream": true,
            "tools": [{"type": "function", "function": {"name": "lookup", "description": "Looks things up", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
            "options": {
                "temperature": 0.0,
                "top_p": 0.5,
                "top_k": 20,
                "num_predict": 64,
                "stop": ["\n\n", "END"],
                "seed": 1234,
            },
        })
    );
}

#[tokio::test]
async fn an_unknown_model_is_a_404_with_ollama_s_message() {
    let fake = FakeOllama::start().await;
    fake.models(&["llama3.1:8b"]);
    let mut request = ask("hi");
    request.model = "mistral:7b".into();
    let e = ollama(&fake).complete(&request).await.unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 404, .. }), "{e}");
    assert!(
        e.to_string().contains("model 'mistral:7b' not found"),
        "{e}"
    );
    assert_eq!(fake.requests().len(), 1, "a 404 is not retried");
}

#[tokio::test]
async fn server_errors_are_retried() {
    let fake = FakeOllama::start().await;
    fake.script(Reply::error(500, "llama runner process has terminated"));
    fake.script(Reply::text("back"));
    let response = ollama(&fake).complete(&ask("hi")).await.unwrap();
    assert_eq!(response.text, "back");
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn content_types_other_than_asked_for_are_errors() {
    let fake = FakeOllama::start().await;
    let provider = ollama(&fake);
    // One JSON object is a stream of one line.
    fake.script(Reply::text("Paris").whole());
    assert_eq!(provider.complete(&ask("hi")).await.unwrap().text, "Paris");
    fake.script(Reply::raw(200, "<html>login</html>").content_type("text/html"));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string().contains(
            "asked for application/x-ndjson, the answer is text/html: <html>login</html>"
        ),
        "{e}"
    );
    // Lines cut before `"done": true` are an error.
    fake.script(Reply::text("Paris is").cut_after(1));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert!(e.to_string().contains("before its last line"), "{e}");
}

#[tokio::test]
async fn the_timeout_is_enforced() {
    let fake = FakeOllama::start().await;
    fake.script(Reply::text("too late").delay(Duration::from_secs(5)));
    let mut request = ask("hi");
    request.timeout = Some(Duration::from_millis(300));
    let begin = Instant::now();
    let e = ollama(&fake).complete(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(begin.elapsed() < Duration::from_secs(3));
}

/// "Is Ollama there?" goes through the provider's own client (`GET /api/tags`, once),
/// and says no at once when nothing listens; the judge's pick from the environment asks
/// it.
#[tokio::test]
async fn reachable_asks_the_tags_endpoint_through_the_provider() {
    let fake = FakeOllama::start().await;
    fake.models(&["llama3.1:8b"]);
    let provider = ollama(&fake);
    assert!(provider.reachable(Duration::from_secs(2)).await);
    let asked = fake.requests();
    assert_eq!(asked.len(), 1, "one request, no retry");
    assert_eq!(
        (asked[0].method.as_str(), asked[0].path.as_str()),
        ("GET", "/api/tags")
    );
    // Nothing listens there any more.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone = closed.local_addr().unwrap();
    drop(closed);
    let env: HashMap<String, String> = [("OLLAMA_HOST".to_owned(), gone.to_string())].into();
    let settings = ProviderSettings::resolve(ProviderKind::Ollama, &env, None).unwrap();
    let absent = Ollama::new(
        settings,
        Transport::new(
            ProviderKind::Ollama,
            &HttpOptions::default(),
            Limits::none(),
        )
        .unwrap(),
    );
    let started = Instant::now();
    assert!(!absent.reachable(Duration::from_secs(2)).await);
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// Every attempt takes a rate slot: a call retried after a 503 sends its second
/// attempt no sooner than the rate allows.
#[tokio::test]
async fn a_retried_attempt_takes_its_own_rate_slot() {
    let fake = FakeOllama::start().await;
    fake.script(Reply::error(503, "busy"));
    fake.script(Reply::text("hi"));
    // 120 a minute: one every 500 ms.
    let provider = ollama_with(
        &fake,
        Duration::from_millis(1),
        Limits::new(None, Some(120)),
    );
    let answer = provider.complete(&ask("hello")).await.unwrap();
    assert_eq!(answer.text, "hi");
    let times: Vec<_> = fake.requests().iter().map(|r| r.received).collect();
    assert_eq!(times.len(), 2);
    assert!(
        times[1] - times[0] >= Duration::from_millis(450),
        "the retry came {:?} after the first attempt",
        times[1] - times[0]
    );
}

#[tokio::test]
async fn every_sampling_parameter_is_sent_and_done_reason_is_the_stop_reason() {
    let fake = FakeOllama::start().await;
    let mut request = ask("hi");
    request.sampling = Sampling {
        temperature: Some(0.0),
        top_p: Some(0.9),
        top_k: Some(4),
        seed: Some(7),
        max_tokens: Some(3),
        ..Sampling::default()
    };
    fake.script(Reply::text("one two three").finish_reason("length"));
    let r = ollama(&fake).complete(&request).await.unwrap();
    assert_eq!(
        fake.last_body()["options"],
        json!({"temperature": 0.0, "top_p": 0.9, "top_k": 4, "seed": 7, "num_predict": 3})
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.stop_reason.as_deref(), Some("length"));
    assert!(r.truncated());
    let r = ollama(&fake).complete(&ask("hi")).await.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("stop"));
    assert!(!r.truncated());
}
