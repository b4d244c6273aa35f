//! The OpenAI and Hugging Face providers end to end against `prill-testkit`'s fake
//! OpenAI-compatible server on 127.0.0.1: answers streamed and whole, tool calls,
//! usage, timings, the exact request mapping, unsupported parameters, keys, retries and
//! timeouts.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RAW_EVENTS_KEPT, Role, Sampling, ToolDef,
};
use prill_connect::{ConnectError, ErrorKind, HttpOptions, RetryPolicy};
use prill_spec::model::config::{MaxTokensField, ProviderConfig};
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
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
        messages: vec![ChatMessage::text(Role::User, text)],
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
    assert_eq!(response.raw.values().len(), RAW_EVENTS_KEPT);
    assert_eq!(
        response.raw.values()[0]["choices"][0]["delta"]["role"],
        "assistant"
    );
    assert_eq!(response.raw.values()[3]["usage"]["prompt_tokens"], 12);
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
    assert_eq!(response.raw.values().len(), RAW_EVENTS_KEPT);
    assert_eq!(
        response.raw.values()[0]["choices"][0]["delta"]["role"],
        "assistant"
    );
    assert_eq!(
        response.raw.values()[3]["usage"]["completion_tokens"],
        5_000
    );
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
            id: Some("call_0".into()),
            name: "get_weather".into(),
            arguments: json!({"city": "Paris", "unit": "celsius", "days": [1, 2]}),
        },
        ModelToolCall {
            id: Some("call_1".into()),
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
            ChatMessage::text(Role::User, "hi"),
            ChatMessage::text(Role::Assistant, "hello"),
            ChatMessage::text(Role::User, "weather in Paris?"),
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

/// The provider for `fake` with `config` as its `[providers.openai]` table.
fn openai_configured(fake: &FakeOpenAi, config: &ProviderConfig, vars: &[(&str, &str)]) -> OpenAi {
    let base = fake.base_url();
    let mut env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.insert("OPENAI_BASE_URL".into(), base);
    env.insert("OPENAI_API_KEY".into(), KEY.into());
    let settings = ProviderSettings::resolve(ProviderKind::Openai, &env, Some(config)).unwrap();
    OpenAi::new(settings, transport(ProviderKind::Openai, Limits::none()))
}

/// Reasoning models get `max_completion_tokens` from any server, other models
/// `max_tokens` from a compatible server; `max_tokens_field` overrides, and the fake
/// (OpenAI's definition and model rules) refuses `max_tokens` to a reasoning model.
#[tokio::test]
async fn the_token_limit_goes_under_the_name_the_model_takes() {
    let fake = started().await;
    let cases = [
        ("o3-mini", "max_completion_tokens"),
        ("gpt-5", "max_completion_tokens"),
        ("gpt-5-mini", "max_completion_tokens"),
        ("gpt-5.1", "max_completion_tokens"),
        ("openai/gpt-5-nano", "max_completion_tokens"),
        ("codex-mini-latest", "max_completion_tokens"),
        ("gpt-4o", "max_tokens"),
        ("gpt-5-chat-latest", "max_tokens"),
    ];
    for (model, field) in cases {
        let mut request = ask("hi");
        request.model = model.into();
        request.sampling.max_tokens = Some(100);
        request.sampling.seed = Some(7);
        openai(&fake, Some(KEY)).complete(&request).await.unwrap();
        let body = fake.last_body();
        assert_eq!(body[field], 100, "{model}");
        assert_eq!(body.as_object().unwrap().len(), 6, "{model}: {body}");
    }
    let forced = ProviderConfig {
        max_tokens_field: Some(MaxTokensField::MaxCompletionTokens),
        ..ProviderConfig::default()
    };
    let mut request = ask("hi");
    request.sampling.max_tokens = Some(100);
    openai_configured(&fake, &forced, &[])
        .complete(&request)
        .await
        .unwrap();
    assert_eq!(fake.last_body()["max_completion_tokens"], 100);

    let old = ProviderConfig {
        max_tokens_field: Some(MaxTokensField::MaxTokens),
        ..ProviderConfig::default()
    };
    request.model = "gpt-5.1".into();
    let e = openai_configured(&fake, &old, &[])
        .complete(&request)
        .await
        .unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 400, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("Use 'max_completion_tokens' instead"),
        "{e}"
    );
}

/// A reasoning model gets no `temperature` or `top_p`, and the answer says why.
#[tokio::test]
async fn sampling_a_model_refuses_is_left_out_with_a_note() {
    let fake = started().await;
    let mut request = ask("hi");
    request.model = "gpt-5-mini".into();
    request.sampling.temperature = Some(0.2);
    request.sampling.top_p = Some(0.9);
    let response = openai(&fake, Some(KEY)).complete(&request).await.unwrap();
    let body = fake.last_body();
    assert!(
        body.get("temperature").is_none() && body.get("top_p").is_none(),
        "{body}"
    );
    assert_eq!(response.notes.len(), 2, "{:?}", response.notes);
    assert!(
        response.notes[0].starts_with("temperature 0.2 not sent: gpt-5-mini"),
        "{:?}",
        response.notes
    );
    assert!(
        response.notes[1].starts_with("top_p 0.9 not sent"),
        "{:?}",
        response.notes
    );

    request.model = "gpt-4.1-mini".into();
    let response = openai(&fake, Some(KEY)).complete(&request).await.unwrap();
    assert!(response.notes.is_empty());
    assert_eq!(fake.last_body()["temperature"], 0.2);
}

/// `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` go as OpenAI's SDKs send them.
#[tokio::test]
async fn organization_and_project_are_sent_as_headers() {
    let fake = started().await;
    let vars = [
        ("OPENAI_ORG_ID", "org-abc"),
        ("OPENAI_PROJECT_ID", "proj_xyz"),
    ];
    openai_configured(&fake, &ProviderConfig::default(), &vars)
        .complete(&ask("hi"))
        .await
        .unwrap();
    let sent = &fake.requests()[0];
    assert_eq!(sent.header("openai-organization"), Some("org-abc"));
    assert_eq!(sent.header("openai-project"), Some("proj_xyz"));
    openai(&fake, Some(KEY)).complete(&ask("hi")).await.unwrap();
    assert_eq!(fake.requests()[1].header("openai-organization"), None);
}

/// A streamed `delta.refusal` and a whole `message.refusal` become the text, marked;
/// the finish reason and the reasoning tokens are kept.
#[tokio::test]
async fn refusals_stop_reasons_and_reasoning_tokens_are_kept() {
    let fake = started().await;
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5",
        "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 509, "total_tokens": 518,
        "completion_tokens_details": {"reasoning_tokens": 500}}});
    let events = [
        chunk(
            json!({"role": "assistant", "content": null, "refusal": ""}),
            None,
        ),
        chunk(json!({"refusal": "I'm sorry, "}), None),
        chunk(json!({"refusal": "I can't help with that."}), None),
        chunk(json!({}), Some("stop")),
        usage,
    ];
    let mut sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    sse.push_str("data: [DONE]\n\n");
    fake.script(Reply::raw(200, sse).content_type("text/event-stream"));
    let mut request = ask("something refused");
    request.model = "gpt-5".into();
    let response = openai(&fake, Some(KEY)).complete(&request).await.unwrap();
    assert_eq!(response.text, "I'm sorry, I can't help with that.");
    assert!(response.refusal);
    assert_eq!(response.stop_reason.as_deref(), Some("stop"));
    let usage = response.usage.unwrap();
    assert_eq!((usage.output, usage.reasoning), (Some(509), Some(500)));
    assert_eq!(usage.answer(), Some(9));

    let whole = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
        "content": null, "refusal": "I can't help with that."}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}});
    fake.script(Reply::raw(200, whole.to_string()));
    let response = openai(&fake, Some(KEY))
        .streaming(false)
        .complete(&ask("x"))
        .await
        .unwrap();
    assert_eq!(
        (response.text.as_str(), response.refusal),
        ("I can't help with that.", true)
    );
    assert_eq!(response.usage.unwrap().reasoning, None);

    for reason in ["length", "content_filter"] {
        fake.script(Reply::text("cut").finish_reason(reason));
        let response = openai(&fake, Some(KEY)).complete(&ask("x")).await.unwrap();
        assert_eq!(response.stop_reason.as_deref(), Some(reason));
        assert!(!response.refusal);
        assert_eq!(response.truncated(), reason == "length");
    }
}

/// Azure OpenAI: the key as `api-key`, the deployment in the path with `api-version`,
/// or the v1 API; sent to the fake in its Azure mode (which stands on 127.0.0.1, so the
/// request the provider builds is sent there as built).
#[tokio::test]
async fn azure_gets_its_key_header_its_urls_and_its_api_version() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key("azure-key-0123").azure();
    let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let vars = env(&[
        ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com"),
        ("AZURE_OPENAI_API_KEY", "azure-key-0123"),
        ("OPENAI_API_KEY", "sk-not-this-one"),
        ("OPENAI_API_VERSION", "2024-10-21"),
    ]);
    let settings = ProviderSettings::resolve(ProviderKind::Openai, &vars, None).unwrap();
    assert_eq!(
        settings.api_key.as_ref().unwrap().expose(),
        "azure-key-0123"
    );
    let provider = OpenAi::new(settings, transport(ProviderKind::Openai, Limits::none()));
    let mut request = ask("hi");
    request.model = "my-gpt-5".into();
    request.sampling.max_tokens = Some(30);
    let (url, headers, body) = provider.prepared(&request).unwrap();
    assert_eq!(
        url.as_str(),
        "https://res.openai.azure.com/openai/deployments/my-gpt-5/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(headers.get("api-key").unwrap(), "azure-key-0123");
    assert!(headers.get("authorization").is_none());
    assert_eq!(body["max_completion_tokens"], 30);
    assert_eq!(send_to(&fake, &url, &headers, &body).await, 200);

    // Without an api-version: the v1 API, which takes none.
    let vars = env(&[
        (
            "OPENAI_BASE_URL",
            "https://res.cognitiveservices.azure.com/",
        ),
        ("OPENAI_API_KEY", "azure-key-0123"),
    ]);
    let settings = ProviderSettings::resolve(ProviderKind::Openai, &vars, None).unwrap();
    let provider = OpenAi::new(settings, transport(ProviderKind::Openai, Limits::none()));
    let (url, headers, body) = provider.prepared(&request).unwrap();
    assert_eq!(
        url.as_str(),
        "https://res.cognitiveservices.azure.com/openai/v1/chat/completions"
    );
    assert_eq!(send_to(&fake, &url, &headers, &body).await, 200);

    // The fake refuses what Azure refuses: a bearer key, a deployment without a version.
    let mut bearer = headers.clone();
    bearer.remove("api-key");
    bearer.insert("authorization", "Bearer azure-key-0123".parse().unwrap());
    assert_eq!(send_to(&fake, &url, &bearer, &body).await, 401);
    let unversioned = url
        .as_str()
        .replace("/openai/v1/", "/openai/deployments/d/");
    let unversioned = reqwest::Url::parse(&unversioned).unwrap();
    assert_eq!(send_to(&fake, &unversioned, &headers, &body).await, 404);

    // No key for an Azure host names Azure's variable.
    let vars = env(&[("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")]);
    let settings = ProviderSettings::resolve(ProviderKind::Openai, &vars, None).unwrap();
    let provider = OpenAi::new(settings, transport(ProviderKind::Openai, Limits::none()));
    let e = provider.complete(&request).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "openai needs a key: set AZURE_OPENAI_API_KEY"
    );
}

/// Sends a request built for another host to `fake`, path and query kept.
async fn send_to(
    fake: &FakeOpenAi,
    url: &reqwest::Url,
    headers: &reqwest::header::HeaderMap,
    body: &serde_json::Value,
) -> u16 {
    let mut local = reqwest::Url::parse(&fake.base_url()).unwrap();
    local.set_path(url.path());
    local.set_query(url.query());
    let client = Transport::default_for(ProviderKind::Openai)
        .unwrap()
        .client()
        .clone();
    let response = client
        .post(local)
        .headers(headers.clone())
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    response.status().as_u16()
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
async fn a_stream_that_ends_mid_event_is_an_error_never_an_answer() {
    let fake = started().await;
    let provider = openai(&fake, Some(KEY));
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = [
        chunk(json!({"role": "assistant", "content": "Paris"}), None),
        chunk(json!({}), Some("stop")),
    ];
    // A byte order mark and `\r\n` line ends, as the spec allows: read alike.
    let mut sse = "\u{FEFF}".to_owned();
    sse.extend(events.iter().map(|e| format!("data: {e}\r\n\r\n")));
    let whole = format!("{sse}data: [DONE]\r\n\r\n");
    fake.script(Reply::raw(200, whole).content_type("text/event-stream"));
    assert_eq!(provider.complete(&ask("hi")).await.unwrap().text, "Paris");
    // `data: [DONE]` without its blank line is never dispatched: the stream was cut.
    fake.script(Reply::raw(200, format!("{sse}data: [DONE]\n")).content_type("text/event-stream"));
    let e = provider.complete(&ask("hi")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("ended mid-event"), "{e}");
    assert!(e.to_string().contains("its data so far: [DONE]"), "{e}");
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

/// Captured requests × features, each checked by the fake against OpenAI's published
/// definition and its model rules: every feature to a current model of each family.
#[tokio::test]
async fn every_feature_to_every_family_is_a_request_openai_s_definition_takes() {
    let fake = started().await;
    let tools = vec![
        ToolDef {
            name: "get_weather".into(),
            description: Some("Looks the weather up".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        },
        ToolDef {
            name: "now".into(),
            description: None,
            parameters: json!({"type": "object", "properties": {}}),
        },
    ];
    let sampling = Sampling {
        temperature: Some(0.4),
        max_tokens: Some(300),
        top_p: Some(0.8),
        top_k: None,
        stop_sequences: vec!["END".into(), "STOP".into()],
        seed: Some(-5),
    };
    let history = vec![
        ChatMessage::text(Role::User, "hi"),
        ChatMessage::text(Role::Assistant, "hello"),
        ChatMessage::text(Role::User, "and now?"),
    ];
    let format = prill_connect::provider::ResponseFormat {
        name: "verdict".into(),
        schema: json!({"type": "object", "properties": {"pass": {"type": "boolean"},
            "reason": {"type": "string"}}, "required": ["pass", "reason"],
            "additionalProperties": false}),
    };
    let models = [
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-5",
        "gpt-5.1",
        "gpt-5-chat-latest",
        "o3-mini",
        "o4-mini",
    ];
    for model in models {
        for stream in [true, false] {
            let features = [
                ("system prompt and history", ask("x")),
                (
                    "tools",
                    ModelRequest {
                        tools: tools.clone(),
                        ..ask("x")
                    },
                ),
                (
                    "model_config",
                    ModelRequest {
                        sampling: sampling.clone(),
                        ..ask("x")
                    },
                ),
                (
                    "judge",
                    ModelRequest {
                        response_format: Some(format.clone()),
                        ..ask("x")
                    },
                ),
            ];
            for (feature, mut request) in features {
                request.model = model.into();
                request.system = Some("You are terse.".into());
                request.messages = history.clone();
                if feature == "judge" {
                    fake.script(Reply::structured(json!({"pass": true, "reason": "ok"})));
                }
                let provider = openai(&fake, Some(KEY)).streaming(stream);
                let response = provider.complete(&request).await;
                assert!(
                    response.is_ok(),
                    "{model} {feature} stream={stream}: {response:?}"
                );
            }
        }
    }
    assert_eq!(fake.requests().len(), models.len() * 2 * 4);
}
