//! The OpenAI and Hugging Face providers end to end against `assay-testkit`'s fake
//! OpenAI-compatible server on 127.0.0.1: answers streamed and whole, tool calls,
//! usage, timings, the exact request mapping, unsupported parameters, keys, retries and
//! timeouts.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use assay_connect::provider::huggingface::HuggingFace;
use assay_connect::provider::openai::OpenAi;
use assay_connect::provider::transport::Transport;
use assay_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RAW_EVENTS_KEPT, Role, Sampling, ToolDef,
};
use assay_connect::{ConnectError, ErrorKind, HttpOptions, RetryPolicy};
use assay_testkit::providers::Reply;
use assay_testkit::providers::openai::FakeOpenAi;
use serde_json::json;

const KEY: &str = "sk-test-key-0123456789";

/// Settings of `kind` from an environment holding `vars`.
fn settings(kind: ProviderKind, vars: &[(&str, &str)]) -> ProviderSettings {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ProviderSettings::resolve(kind, &env, None).expect("settings resolve")
}

/// A transport with quick retries.
fn transport(kind: ProviderKind, limits: Limits) -> Transport {
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(3),
        },
        ..HttpOptions::default()
    };
    Transport::new(kind, &options, limits).expect("a transport")
}

/// The provider for `fake` with the key `KEY` and `options`.
fn openai_with(fake: &FakeOpenAi, options: &HttpOptions) -> OpenAi {
    let base = fake.base_url();
    OpenAi::new(
        settings(
            ProviderKind::Openai,
            &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", KEY)],
        ),
        Transport::new(ProviderKind::Openai, options, Limits::none()).unwrap(),
    )
}

fn openai(fake: &FakeOpenAi, key: Option<&str>) -> OpenAi {
    let base = fake.base_url();
    let mut vars = vec![("OPENAI_BASE_URL", base.as_str())];
    if let Some(key) = key {
        vars.push(("OPENAI_API_KEY", key));
    }
    OpenAi::new(
        settings(ProviderKind::Openai, &vars),
        transport(ProviderKind::Openai, Limits::none()),
    )
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "gpt-4o-mini".into(),
        system: None,
        messages: vec![ChatMessage {
            role: Role::User,
            content: text.into(),
        }],
        tools: Vec::new(),
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

async fn started() -> FakeOpenAi {
    let fake = FakeOpenAi::start().await;
    fake.expect_key(KEY);
    fake
}

#[tokio::test]
async fn a_streamed_answer_is_joined_with_usage_and_timings() {
    let fake = started().await;
    fake.script(
        Reply::text("The capital of France is Paris.")
            .usage(12, 7)
            .delay(Duration::from_millis(100))
            .gap(Duration::from_millis(10)),
    );
    let response = openai(&fake, Some(KEY))
        .complete(&ask("capital of France?"))
        .await
        .unwrap();
    assert_eq!(response.text, "The capital of France is Paris.");
    assert!(response.tool_calls.is_empty());
    let usage = response.usage.expect("usage from the last chunk");
    assert_eq!((usage.input, usage.output), (Some(12), Some(7)));
    assert_eq!(response.stop_reason.as_deref(), Some("stop"));
    // The role chunk, six words, the finish chunk and the usage chunk; of them the
    // answer keeps the first and the last three.
    assert_eq!(response.events, 9);
    assert_eq!(response.raw.len(), RAW_EVENTS_KEPT);
    assert_eq!(response.raw[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(response.raw[3]["usage"]["prompt_tokens"], 12);
    let first = response.timings.first_byte.expect("time to first token");
    assert!(first >= Duration::from_millis(100), "{first:?}");
    assert!(first <= response.timings.total);
    assert!(response.timings.total >= first + Duration::from_millis(50));

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("content-type"), Some("application/json"));
}

/// Issue 16: a stream of thousands of chunks keeps its whole text but only a bounded
/// number of raw chunks (it used to keep every one: 482 MB for one 32 MiB stream).
#[tokio::test]
async fn a_long_stream_keeps_the_whole_text_and_few_raw_chunks() {
    let fake = started().await;
    let text = crate::long_text(5_000);
    fake.script(Reply::text(&text).usage(3, 5_000));
    let response = openai(&fake, Some(KEY))
        .complete(&ask("count"))
        .await
        .unwrap();
    assert_eq!(response.text, text);
    // The role chunk, 5,000 words, the finish chunk and the usage chunk.
    assert_eq!(response.events, 5_003);
    assert_eq!(response.raw.len(), RAW_EVENTS_KEPT);
    assert_eq!(response.raw[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(response.raw[3]["usage"]["completion_tokens"], 5_000);
}

#[tokio::test]
async fn a_whole_answer_when_not_streaming() {
    let fake = started().await;
    fake.script(Reply::text("Paris").usage(5, 1));
    let provider = openai(&fake, Some(KEY)).streaming(false);
    let response = provider.complete(&ask("capital?")).await.unwrap();
    assert_eq!(response.text, "Paris");
    let usage = response.usage.unwrap();
    assert_eq!((usage.input, usage.output), (Some(5), Some(1)));
    assert!(response.timings.first_byte.is_some());
    let body = fake.last_body();
    assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
}

#[tokio::test]
async fn tool_calls_are_gathered_from_split_arguments() {
    let fake = started().await;
    let reply = Reply::text("Let me check.")
        .with_tool_call(
            "get_weather",
            json!({"city": "Paris", "unit": "celsius", "days": [1, 2]}),
        )
        .with_tool_call_raw("note", "not json at all");
    fake.script(reply.clone());
    fake.script(reply);
    let provider = openai(&fake, Some(KEY));
    let want = vec![
        ModelToolCall {
            name: "get_weather".into(),
            arguments: json!({"city": "Paris", "unit": "celsius", "days": [1, 2]}),
        },
        ModelToolCall {
            name: "note".into(),
            arguments: json!("not json at all"),
        },
    ];
    let streamed = provider.complete(&ask("weather?")).await.unwrap();
    assert_eq!(streamed.text, "Let me check.");
    assert_eq!(streamed.tool_calls, want);
    assert_eq!(streamed.stop_reason.as_deref(), Some("tool_calls"));
    // The arguments really came in several pieces: the role chunk, three words, two
    // names, the finish and usage chunks are 8 events; the rest are argument pieces.
    assert!(streamed.events > 8 + 4, "{} events", streamed.events);

    let whole = provider
        .clone()
        .streaming(false)
        .complete(&ask("weather?"))
        .await
        .unwrap();
    assert_eq!(whole.tool_calls, want);
}

#[tokio::test]
async fn model_config_is_mapped_exactly() {
    let fake = started().await;
    let request = ModelRequest {
        model: "gpt-4o".into(),
        system: Some("You are terse.".into()),
        messages: vec![
            ChatMessage {
                role: Role::User,
                content: "hi".into(),
            },
            ChatMessage {
                role: Role::Assistant,
                content: "hello".into(),
            },
            ChatMessage {
                role: Role::User,
                content: "weather in Paris?".into(),
            },
        ],
        tools: vec![
            ToolDef {
                name: "get_weather".into(),
                description: Some("Looks the weather up".into()),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            },
            ToolDef {
                name: "now".into(),
                description: None,
                parameters: json!({"type": "object"}),
            },
        ],
        sampling: Sampling {
            temperature: Some(0.2),
            max_tokens: Some(50),
            top_p: Some(0.9),
            top_k: None,
            stop_sequences: vec!["END".into()],
            seed: Some(42),
        },
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    };
    openai(&fake, Some(KEY)).complete(&request).await.unwrap();
    assert_eq!(
        fake.last_body(),
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "weather in Paris?"},
            ],
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "description": "Looks the weather up", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
                {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
            ],
            "temperature": 0.2,
            "top_p": 0.9,
            "max_tokens": 50,
            "stop": ["END"],
            "seed": 42,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn o_series_models_get_max_completion_tokens() {
    let fake = started().await;
    let mut request = ask("hi");
    request.model = "o3-mini".into();
    request.sampling.max_tokens = Some(100);
    request.sampling.seed = Some(7);
    // The fake refuses `max_tokens` for o-series models, as the real API does.
    openai(&fake, Some(KEY)).complete(&request).await.unwrap();
    let body = fake.last_body();
    assert_eq!(body["max_completion_tokens"], 100);
    assert_eq!(body["seed"], 7);
    assert!(body.get("max_tokens").is_none());
}

#[tokio::test]
async fn an_unsupported_parameter_is_an_error_naming_it_and_nothing_is_sent() {
    let fake = started().await;
    let mut request = ask("hi");
    request.sampling.top_k = Some(40);
    let e = openai(&fake, Some(KEY))
        .complete(&request)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let text = e.to_string();
    assert!(
        text.contains("`top_k`") && text.starts_with("openai does not support"),
        "{text}"
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows_the_key() {
    let fake = started().await;
    let wrong = "sk-wrong-secret-key-987654321";
    let provider = openai(&fake, Some(wrong));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 401, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    assert!(text.contains("Incorrect API key provided"), "{text}");
    for shown in [text, format!("{e:?}"), format!("{provider:?}")] {
        assert!(!shown.contains(wrong), "{shown}");
        assert!(!shown.contains("987654321"), "{shown}");
    }
    assert_eq!(fake.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test]
async fn a_refused_key_masked_as_openai_masks_it_shows_none_of_its_ends() {
    let fake = started().await;
    let wrong = "sk-wrong-secret-key-98765Qz4w";
    let e = openai(&fake, Some(wrong))
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    // The fake masks a wrong key as OpenAI does: `sk-` + stars + its last four.
    assert!(
        text.contains("Incorrect API key provided: sk-***"),
        "{text}"
    );
    assert!(!text.contains("Qz4w"), "the key's last four leaked: {text}");
    assert!(text.contains("*<redacted>. You can find"), "{text}");

    // A provider that quotes more of each end is blanked the same way.
    fake.script(Reply::error(
        401,
        format!(
            "Incorrect API key provided: {}****{}",
            &KEY[..7],
            &KEY[KEY.len() - 4..]
        ),
    ));
    let e = openai(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("Incorrect API key provided: <redacted>****<redacted>"),
        "{text}"
    );
}

#[tokio::test]
async fn an_echoed_key_is_blanked_out_of_error_bodies() {
    let fake = started().await;
    fake.script(Reply::error(
        400,
        format!("the key {KEY} may not call this model"),
    ));
    let e = openai(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("the key <redacted> may not call"), "{text}");
}

#[tokio::test]
async fn keys_are_needed_by_hosted_endpoints_only() {
    // api.openai.com without a key: refused before anything is sent.
    let provider = OpenAi::new(
        settings(ProviderKind::Openai, &[]),
        transport(ProviderKind::Openai, Limits::none()),
    );
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.to_string(), "openai needs a key: set OPENAI_API_KEY");

    // A local server takes none, and gets no authorization header.
    let fake = FakeOpenAi::start().await;
    let response = openai(&fake, None).complete(&ask("hi")).await.unwrap();
    assert_eq!(response.text, "ok");
    assert_eq!(fake.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let fake = started().await;
    fake.script(Reply::rate_limited(1));
    fake.script(Reply::text("finally"));
    let begin = Instant::now();
    let response = openai(&fake, Some(KEY)).complete(&ask("hi")).await.unwrap();
    assert_eq!(response.text, "finally");
    assert!(
        begin.elapsed() >= Duration::from_secs(1),
        "retry-after honoured"
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_the_attempts_run_out() {
    let fake = started().await;
    fake.script(Reply::error(500, "The server had an error"));
    fake.script(Reply::error(502, "bad gateway"));
    fake.script(Reply::text("recovered"));
    let provider = openai(&fake, Some(KEY));
    assert_eq!(
        provider.complete(&ask("hi")).await.unwrap().text,
        "recovered"
    );
    assert_eq!(fake.requests().len(), 3);

    for _ in 0..3 {
        fake.script(Reply::error(503, "overloaded"));
    }
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 503, .. }), "{e}");
    assert!(e.to_string().contains("overloaded"), "{e}");
    assert!(
        e.to_string()
            .contains("answered 503 service unavailable after 3 attempts"),
        "{e}"
    );
    assert_eq!(fake.requests().len(), 6);
}

#[tokio::test]
async fn statuses_are_retried_as_the_official_sdks_do() {
    let fake = started().await;
    let provider = openai(&fake, Some(KEY));
    for status in [408, 409, 429, 500, 501, 502, 503, 504, 529] {
        fake.script(Reply::error(status, "come back later"));
        fake.script(Reply::text("recovered"));
        let before = fake.requests().len();
        let response = provider.complete(&ask("hi")).await;
        assert_eq!(response.unwrap().text, "recovered", "{status}");
        assert_eq!(fake.requests().len(), before + 2, "{status}");
    }
    for status in [400, 404, 422] {
        fake.script(Reply::error(status, "no"));
        let before = fake.requests().len();
        let e = provider.complete(&ask("hi")).await.unwrap_err();
        assert!(!e.to_string().contains("attempts"), "{e}");
        assert_eq!(fake.requests().len(), before + 1, "{status}");
    }
}

#[tokio::test]
async fn latency_is_the_last_attempts() {
    // One 429 with `Retry-After: 1`, then an answer in a few milliseconds: the latency a
    // `max_latency_ms: 500` check sees is the answer's, not the second spent waiting.
    let fake = started().await;
    fake.script(Reply::rate_limited(1));
    fake.script(Reply::text("quick"));
    let begin = Instant::now();
    let response = openai(&fake, Some(KEY)).complete(&ask("hi")).await.unwrap();
    assert!(
        begin.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    let total = response.timings.total;
    assert!(
        total < Duration::from_millis(500),
        "latency {total:?} counts the wait"
    );
    let first = response.timings.first_byte.unwrap();
    assert!(first <= total, "{first:?} {total:?}");
}

#[tokio::test]
async fn retry_after_is_capped() {
    let fake = started().await;
    fake.script(Reply::rate_limited(3600));
    fake.script(Reply::text("soon"));
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(200),
        },
        ..HttpOptions::default()
    };
    let provider = openai_with(&fake, &options);
    let begin = Instant::now();
    assert_eq!(provider.complete(&ask("hi")).await.unwrap().text, "soon");
    assert!(begin.elapsed() < Duration::from_secs(30), "waited an hour");
}

#[tokio::test]
async fn a_stream_cut_short_is_an_error_never_an_answer() {
    // The body ends cleanly, but before the finish reason: the text so far is not the
    // answer (it could pass a `must_not_contain` it would fail whole).
    let fake = started().await;
    let provider = openai(&fake, Some(KEY));
    // The role chunk and two words of five.
    fake.script(Reply::text("Paris is not the capital").cut_after(3));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("before a `finish_reason`"), "{e}");
    // After the finish reason and the usage, but without `data: [DONE]`.
    fake.script(Reply::text("Paris").cut_after(4));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("without `data: [DONE]`"), "{e}");
    // The whole stream is fine.
    fake.script(Reply::text("Paris").cut_after(5));
    assert_eq!(provider.complete(&ask("hi")).await.unwrap().text, "Paris");
}

#[tokio::test]
async fn a_plain_json_answer_to_a_stream_request_is_read_whole_when_it_is_a_completion() {
    let fake = started().await;
    let provider = openai(&fake, Some(KEY));
    fake.script(Reply::text("Paris").usage(4, 1).whole());
    let response = provider.complete(&ask("capital?")).await.unwrap();
    assert_eq!(response.text, "Paris");
    assert_eq!(response.stop_reason.as_deref(), Some("stop"));
    assert_eq!(fake.last_body()["stream"], json!(true));

    fake.script(Reply::raw(200, r#"{"status": "ok"}"#));
    let e = provider.complete(&ask("capital?")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string().contains(
            "asked for text/event-stream, the answer is application/json and not a chat completion"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn an_html_page_is_an_error_naming_its_content_type() {
    let fake = started().await;
    let page = "<html><body>502 Bad Gateway</body></html>";
    for stream in [true, false] {
        fake.script(Reply::raw(200, page).content_type("text/html; charset=utf-8"));
        let e = openai(&fake, Some(KEY))
            .streaming(stream)
            .complete(&ask("hi"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        let asked = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        assert!(
            e.to_string().contains(&format!(
                "asked for {asked}, the answer is text/html: <html>"
            )),
            "{e}"
        );
    }
    // A stream to a request for a whole answer, likewise.
    fake.script(Reply::text("Paris").content_type("text/event-stream"));
    let e = openai(&fake, Some(KEY))
        .streaming(false)
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("asked for application/json, the answer is text/event-stream"),
        "{e}"
    );
}

#[tokio::test]
async fn a_call_without_a_timeout_gets_the_default() {
    let fake = started().await;
    fake.script(Reply::text("too late").delay(Duration::from_secs(10)));
    let options = HttpOptions {
        timeout: Some(Duration::from_millis(300)),
        ..HttpOptions::default()
    };
    let provider = openai_with(&fake, &options);
    let mut request = ask("hi");
    request.timeout = None;
    let e = provider.complete(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("within 300ms"), "{e}");
}

#[tokio::test]
async fn the_idle_limit_ends_a_stalled_stream() {
    let fake = started().await;
    fake.script(Reply::text("one two three").gap(Duration::from_secs(10)));
    let options = HttpOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..HttpOptions::default()
    };
    let provider = openai_with(&fake, &options);
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("sent nothing for 300ms"), "{e}");
}

#[tokio::test]
async fn a_400_is_not_retried_and_shows_the_body() {
    let fake = started().await;
    let mut request = ask("hi");
    request.sampling.temperature = Some(5.0);
    let e = openai(&fake, Some(KEY))
        .complete(&request)
        .await
        .unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 400, .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("400 bad request"), "{text}");
    assert!(text.contains("decimal above maximum value"), "{text}");
    assert_eq!(fake.requests().len(), 1);

    fake.models(&["gpt-4o"]);
    let e = openai(&fake, Some(KEY))
        .complete(&ask("hi"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
}

#[tokio::test]
async fn the_timeout_is_enforced() {
    let fake = started().await;
    fake.script(Reply::text("too late").delay(Duration::from_secs(5)));
    let mut request = ask("hi");
    request.timeout = Some(Duration::from_millis(300));
    let begin = Instant::now();
    let e = openai(&fake, Some(KEY))
        .complete(&request)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(begin.elapsed() < Duration::from_secs(3));
    assert!(e.to_string().contains("within 300ms"), "{e}");
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    let provider = OpenAi::new(
        settings(ProviderKind::Openai, &[("OPENAI_BASE_URL", &base)]),
        transport(ProviderKind::Openai, Limits::none()),
    );
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(e.to_string().contains("after 3 attempts"), "{e}");
}

#[tokio::test]
async fn limits_bound_calls_in_flight() {
    let fake = started().await;
    fake.default_reply(Reply::text("slow").delay(Duration::from_millis(200)));
    let base = fake.base_url();
    let provider = OpenAi::new(
        settings(
            ProviderKind::Openai,
            &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", KEY)],
        ),
        transport(ProviderKind::Openai, Limits::new(Some(1), None)),
    );
    let begin = Instant::now();
    let request = ask("hi");
    let (a, b) = tokio::join!(provider.complete(&request), provider.complete(&request));
    assert!(a.is_ok() && b.is_ok());
    assert!(
        begin.elapsed() >= Duration::from_millis(400),
        "one at a time"
    );
}

#[tokio::test]
async fn hugging_face_uses_the_same_api_with_its_own_token() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key("hf_token_abcdef123456");
    fake.script(Reply::text("Bonjour").usage(3, 1));
    let base = fake.base_url();
    let hf = |token: &str| {
        HuggingFace::new(
            settings(
                ProviderKind::Huggingface,
                &[("HF_BASE_URL", &base), ("HF_TOKEN", token)],
            ),
            transport(ProviderKind::Huggingface, Limits::none()),
        )
    };
    let mut request = ask("say hello in French");
    request.model = "meta-llama/Llama-3.1-8B-Instruct".into();
    request.sampling.seed = Some(3);
    let provider = hf("hf_token_abcdef123456");
    assert_eq!(provider.kind(), ProviderKind::Huggingface);
    let response = provider.complete(&request).await.unwrap();
    assert_eq!(response.text, "Bonjour");
    let body = fake.last_body();
    assert_eq!(body["model"], "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(body["seed"], 3);
    assert_eq!(
        fake.requests()[0].header("authorization"),
        Some("Bearer hf_token_abcdef123456")
    );

    let e = hf("hf_wrong_token_999999")
        .complete(&request)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("HF_TOKEN"), "{e}");
    assert!(!e.to_string().contains("hf_wrong_token_999999"), "{e}");

    request.sampling.top_k = Some(5);
    let e = provider.complete(&request).await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("huggingface does not support `top_k`"),
        "{e}"
    );

    // The router itself needs the token.
    let router = HuggingFace::new(
        settings(ProviderKind::Huggingface, &[]),
        transport(ProviderKind::Huggingface, Limits::none()),
    );
    let e = router.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.to_string(), "huggingface needs a key: set HF_TOKEN");
}
