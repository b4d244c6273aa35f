//! The Bedrock provider end to end against `prill-testkit`'s fake Converse API on
//! 127.0.0.1: answers, tool calls, usage, timings, the exact request mapping (`top_k`
//! for Anthropic's models only), both ways to authenticate (a Bedrock API key, and
//! SigV4 whose signature the fake recomputes), retries, timeouts, the fake's own
//! refusals; turns merged, sampling fitted per model, the judge's structured verdict
//! on every family, stop reasons, and captured requests checked against botocore's
//! service model. AWS profiles and the rest of the credential chain: [`credentials`].

use std::collections::HashMap;
use std::time::{Duration, Instant};

use prill_connect::provider::bedrock::{
    Bedrock, LEADING_USER_TURN, StructuredMode, structured_mode,
};
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    ResponseFormat, Role, Sampling, ToolDef,
};
use prill_connect::{ConnectError, ErrorKind, HttpOptions, RetryPolicy};
use prill_testkit::providers::Reply;
use prill_testkit::providers::bedrock::{FakeBedrock, ServiceModel, parse_sigv4};
use serde_json::{Value, json};

#[cfg(unix)]
mod credentials;

const TOKEN: &str = "bedrock-api-key-0123456789";
const ACCESS_KEY_ID: &str = "AKIAFAKEEXAMPLE12345";
const SECRET: &str = "fake/secret+access+key/0123456789abcdefABCD";
const CLAUDE: &str = "anthropic.claude-3-haiku-20240307-v1:0";
const LLAMA: &str = "meta.llama3-1-8b-instruct-v1:0";

fn provider(fake: &FakeBedrock, vars: &[(&str, &str)]) -> Bedrock {
    let mut env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.insert(
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME".to_owned(),
        fake.base_url(),
    );
    // Nothing leaves 127.0.0.1: no instance metadata service (and no HOME, so no profile).
    env.insert("AWS_EC2_METADATA_DISABLED".to_owned(), "true".to_owned());
    let settings = ProviderSettings::resolve(ProviderKind::Bedrock, &env, None).unwrap();
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(3),
        },
        ..HttpOptions::default()
    };
    let transport = Transport::new(ProviderKind::Bedrock, &options, Limits::none()).unwrap();
    Bedrock::new(settings, transport)
}

fn bearer(fake: &FakeBedrock) -> Bedrock {
    provider(
        fake,
        &[
            ("AWS_BEARER_TOKEN_BEDROCK", TOKEN),
            ("AWS_REGION", "us-east-1"),
        ],
    )
}

fn sigv4(fake: &FakeBedrock, secret: &str) -> Bedrock {
    provider(
        fake,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_REGION", "eu-west-3"),
        ],
    )
}

fn ask(model: &str, text: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: None,
        messages: vec![ChatMessage::text(Role::User, text)],
        tools: Vec::new(),
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

#[tokio::test]
async fn a_text_answer_with_a_bedrock_api_key() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer(TOKEN);
    fake.script(
        Reply::text("Paris.")
            .usage(11, 2)
            .delay(Duration::from_millis(100)),
    );
    let response = bearer(&fake)
        .complete(&ask(CLAUDE, "capital?"))
        .await
        .unwrap();
    assert_eq!(response.text, "Paris.");
    assert!(response.tool_calls.is_empty());
    let usage = response.usage.expect("usage");
    assert_eq!((usage.input, usage.output), (Some(11), Some(2)));
    assert_eq!(response.stop_reason.as_deref(), Some("end_turn"));
    let first = response.timings.first_byte.expect("time to the first byte");
    assert!(first >= Duration::from_millis(100), "{first:?}");
    assert!(first <= response.timings.total);

    let request = &fake.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.path,
        "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(request.header("x-amz-date"), None);
    assert_eq!(request.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn tool_use_blocks_become_tool_calls() {
    let fake = FakeBedrock::start().await;
    let args = json!({"city": "Paris", "days": 3});
    fake.script(Reply::text("Checking.").with_tool_call("weather", args.clone()));
    let response = bearer(&fake)
        .complete(&ask(LLAMA, "weather?"))
        .await
        .unwrap();
    assert_eq!(response.text, "Checking.");
    assert_eq!(
        response.tool_calls,
        vec![ModelToolCall {
            id: Some("tooluse_fake_0".into()),
            name: "weather".into(),
            arguments: args
        }]
    );
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
}

fn configured(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
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
            stop_sequences: vec!["STOP".into()],
            seed: Some(42),
        },
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

#[tokio::test]
async fn model_config_is_mapped_exactly_with_top_k_for_anthropic_models() {
    let fake = FakeBedrock::start().await;
    bearer(&fake).complete(&configured(CLAUDE)).await.unwrap();
    assert_eq!(
        fake.last_body(),
        json!({
            "messages": [
                {"role": "user", "content": [{"text": "hi"}]},
                {"role": "assistant", "content": [{"text": "hello"}]},
                {"role": "user", "content": [{"text": "weather?"}]},
            ],
            "system": [{"text": "You are terse."}],
            "inferenceConfig": {"maxTokens": 200, "temperature": 0.3, "topP": 0.8,
                "stopSequences": ["STOP"]},
            "toolConfig": {"tools": [
                {"toolSpec": {"name": "clock",
                    "inputSchema": {"json": {"type": "object", "properties": {}}}}},
                {"toolSpec": {"name": "weather", "description": "the forecast",
                    "inputSchema": {"json": {"type": "object",
                        "properties": {"city": {"type": "string"}}, "required": ["city"]}}}},
            ]},
            "additionalModelRequestFields": {"top_k": 20},
        })
    );

    // Nothing set: no inferenceConfig at all.
    bearer(&fake).complete(&ask(LLAMA, "hi")).await.unwrap();
    assert_eq!(
        fake.last_body(),
        json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    );
}

#[tokio::test]
async fn top_k_for_another_model_is_an_error_naming_it_and_nothing_is_sent() {
    let fake = FakeBedrock::start().await;
    let e = bearer(&fake)
        .complete(&configured(LLAMA))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let text = e.to_string();
    assert!(
        text.starts_with("bedrock does not support `top_k`"),
        "{text}"
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn sigv4_signs_with_the_standard_aws_variables() {
    let fake = FakeBedrock::start().await;
    // The fake recomputes the signature from the secret key and refuses a mismatch.
    fake.expect_sigv4(ACCESS_KEY_ID, SECRET, "eu-west-3");
    fake.script(Reply::text("signed"));
    let bedrock = sigv4(&fake, SECRET);
    assert!(bedrock.signs());
    let response = bedrock.complete(&configured(CLAUDE)).await.unwrap();
    assert_eq!(response.text, "signed");

    let request = &fake.requests()[0];
    let date = request.header("x-amz-date").expect("x-amz-date");
    assert_eq!(date.len(), 16);
    assert!(date.ends_with('Z') && date.as_bytes()[8] == b'T', "{date}");
    let header = request.header("authorization").expect("authorization");
    let parsed = parse_sigv4(header).expect("a well-formed SigV4 header");
    assert_eq!(parsed.access_key_id, ACCESS_KEY_ID);
    assert_eq!(parsed.date, date[..8]);
    assert_eq!(parsed.region, "eu-west-3");
    assert_eq!(parsed.service, "bedrock");
    assert_eq!(
        parsed.signed_headers,
        ["content-type", "host", "x-amz-date"]
    );
    assert_eq!(parsed.signature.len(), 64);
    assert!(!header.contains(SECRET));
    assert_eq!(request.header("x-amz-security-token"), None);

    // A session token is sent, and signed.
    let fake = FakeBedrock::start().await;
    fake.expect_sigv4(ACCESS_KEY_ID, SECRET, "eu-west-3");
    let with_token = provider(
        &fake,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_SESSION_TOKEN", "session-token-xyz"),
            ("AWS_REGION", "eu-west-3"),
        ],
    );
    with_token.complete(&ask(LLAMA, "hi")).await.unwrap();
    let request = &fake.requests()[0];
    assert_eq!(
        request.header("x-amz-security-token"),
        Some("session-token-xyz")
    );
    let parsed = parse_sigv4(request.header("authorization").unwrap()).unwrap();
    assert!(
        parsed
            .signed_headers
            .iter()
            .any(|h| h == "x-amz-security-token")
    );
}

#[tokio::test]
async fn a_wrong_secret_is_refused_and_never_shown() {
    let fake = FakeBedrock::start().await;
    fake.expect_sigv4(ACCESS_KEY_ID, SECRET, "eu-west-3");
    let wrong = "wrong/secret/key/987654321";
    let bedrock = sigv4(&fake, wrong);
    let e = bedrock.complete(&ask(LLAMA, "hi")).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 403, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("AWS_ACCESS_KEY_ID"), "{text}");
    assert!(
        text.contains("signature we calculated does not match"),
        "{text}"
    );
    for shown in [text, format!("{e:?}"), format!("{bedrock:?}")] {
        assert!(!shown.contains("987654321"), "{shown}");
    }
    assert_eq!(fake.requests().len(), 1, "a 403 is not retried");
}

#[tokio::test]
async fn a_wrong_api_key_names_its_variable_and_is_never_shown() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer(TOKEN);
    let wrong = "bedrock-wrong-key-987654321";
    let bedrock = provider(&fake, &[("AWS_BEARER_TOKEN_BEDROCK", wrong)]);
    assert!(!bedrock.signs());
    let e = bedrock.complete(&ask(LLAMA, "hi")).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 403, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("AWS_BEARER_TOKEN_BEDROCK"), "{text}");
    for shown in [text, format!("{e:?}"), format!("{bedrock:?}")] {
        assert!(!shown.contains("987654321"), "{shown}");
    }
}

#[tokio::test]
async fn the_api_key_wins_over_sigv4_credentials() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer(TOKEN);
    let bedrock = provider(
        &fake,
        &[
            ("AWS_BEARER_TOKEN_BEDROCK", TOKEN),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
        ],
    );
    bedrock.complete(&ask(LLAMA, "hi")).await.unwrap();
    assert!(fake.requests()[0].header("x-amz-date").is_none());
}

#[tokio::test]
async fn missing_credentials_or_region_are_errors_before_anything_is_sent() {
    let fake = FakeBedrock::start().await;
    let e = provider(&fake, &[("AWS_REGION", "us-east-1")])
        .complete(&ask(LLAMA, "hi"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let text = e.to_string();
    assert!(
        text.contains("AWS_BEARER_TOKEN_BEDROCK")
            && text.contains("AWS_ACCESS_KEY_ID")
            && text.contains("AWS_SECRET_ACCESS_KEY"),
        "{text}"
    );
    // SigV4 with a custom endpoint needs the region spelled out.
    let e = provider(
        &fake,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
        ],
    )
    .complete(&ask(LLAMA, "hi"))
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.to_string().contains("AWS_REGION"), "{e}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn throttling_and_server_errors_are_retried() {
    let fake = FakeBedrock::start().await;
    fake.script(Reply::rate_limited(1));
    fake.script(Reply::error(500, "Internal error"));
    fake.script(Reply::text("finally"));
    let begin = Instant::now();
    let response = bearer(&fake).complete(&ask(LLAMA, "hi")).await.unwrap();
    assert_eq!(response.text, "finally");
    assert!(
        begin.elapsed() >= Duration::from_secs(1),
        "retry-after honoured"
    );
    assert_eq!(fake.requests().len(), 3);
    for _ in 0..3 {
        fake.script(Reply::error(503, "Service unavailable"));
    }
    let e = bearer(&fake).complete(&ask(LLAMA, "hi")).await.unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 503, .. }), "{e}");
    assert_eq!(fake.requests().len(), 6);
}

#[tokio::test]
async fn a_validation_error_is_not_retried_and_shows_the_message() {
    let fake = FakeBedrock::start().await;
    let mut request = ask(LLAMA, "hi");
    request.sampling.temperature = Some(1.5);
    let e = bearer(&fake).complete(&request).await.unwrap_err();
    assert!(matches!(e, ConnectError::Status { status: 400, .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("inferenceConfig.temperature"), "{text}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn the_timeout_is_enforced() {
    let fake = FakeBedrock::start().await;
    fake.script(Reply::text("too late").delay(Duration::from_secs(5)));
    let mut request = ask(LLAMA, "hi");
    request.timeout = Some(Duration::from_millis(300));
    let begin = Instant::now();
    let e = bearer(&fake).complete(&request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(begin.elapsed() < Duration::from_secs(3));
}

/// Posts `body` to the fake's converse path for `model`, with `headers`.
async fn post(fake: &FakeBedrock, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let client = Transport::default_for(ProviderKind::Bedrock)
        .unwrap()
        .client()
        .clone();
    let mut request = client
        .post(format!("{}/model/meta.llama3/converse", fake.base_url()))
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
async fn the_fake_refuses_what_the_service_refuses() {
    let fake = FakeBedrock::start().await;
    let good = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]});
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    assert_eq!(post(&fake, &auth, &good).await.0, 200);
    assert_eq!(
        post(&fake, &[], &good).await,
        (403, json!({"message": "Missing Authentication Token"}))
    );
    let unsigned = "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    let (status, body) = post(&fake, &[("authorization", unsigned)], &good).await;
    assert_eq!(status, 403);
    assert!(
        body["message"].as_str().unwrap().contains("Signature"),
        "{body}"
    );
    let no_date = unsigned.replace("Signature=abc", &format!("Signature={}", "a".repeat(64)));
    let (status, body) = post(&fake, &[("authorization", &no_date)], &good).await;
    assert_eq!(status, 403);
    assert!(
        body["message"].as_str().unwrap().contains("X-Amz-Date"),
        "{body}"
    );

    let (status, body) = post(
        &fake,
        &auth,
        &json!({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("must start with a user message")
    );
    let (status, body) = post(
        &fake,
        &auth,
        &json!({"messages": good["messages"], "additionalModelRequestFields": {"top_k": 3}}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("extraneous key [top_k]")
    );
}

fn turn(role: Role, content: &str) -> ChatMessage {
    ChatMessage::text(role, content)
}

#[tokio::test]
async fn consecutive_turns_are_merged_and_a_first_assistant_turn_follows_a_user_turn() {
    let fake = FakeBedrock::start().await;
    fake.script(Reply::text("ok"));
    let mut request = ask(CLAUDE, "unused");
    request.messages = vec![
        turn(Role::Assistant, "Welcome! Ask me anything."),
        turn(Role::User, "first part"),
        turn(Role::User, "second part"),
        turn(Role::Assistant, "a"),
        turn(Role::Assistant, "b"),
        turn(Role::User, "go on"),
    ];
    let response = bearer(&fake).complete(&request).await.unwrap();
    assert_eq!(response.text, "ok");
    assert_eq!(
        fake.last_body()["messages"],
        json!([
            {"role": "user", "content": [{"text": LEADING_USER_TURN}]},
            {"role": "assistant", "content": [{"text": "Welcome! Ask me anything."}]},
            {"role": "user", "content": [{"text": "first part"}, {"text": "second part"}]},
            {"role": "assistant", "content": [{"text": "a"}, {"text": "b"}]},
            {"role": "user", "content": [{"text": "go on"}]},
        ])
    );
    assert_eq!(response.notes.len(), 2, "{:?}", response.notes);
    assert!(
        response.notes[0].starts_with("2 turn(s) merged"),
        "{:?}",
        response.notes
    );
    assert!(
        response.notes[1].contains("user turn"),
        "{:?}",
        response.notes
    );
    // Sent as they were, the same turns are refused by the fake, as by the service.
    let (status, body) = post(
        &fake,
        &[("authorization", "Bearer x")],
        &json!({"messages": [
            {"role": "user", "content": [{"text": "a"}]},
            {"role": "user", "content": [{"text": "b"}]}]}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"].as_str().unwrap().contains("alternate"),
        "{body}"
    );
}

#[tokio::test]
async fn sampling_is_fitted_to_the_model_and_what_is_left_out_is_noted() {
    let fake = FakeBedrock::start().await;
    let provider = bearer(&fake);
    // Claude Opus 4.7 takes no temperature, top_p or top_k.
    fake.script(Reply::text("ok"));
    let response = provider
        .complete(&configured("us.anthropic.claude-opus-4-7"))
        .await
        .unwrap();
    let body = fake.last_body();
    assert_eq!(
        body["inferenceConfig"],
        json!({"maxTokens": 200, "stopSequences": ["STOP"]})
    );
    assert!(body.get("additionalModelRequestFields").is_none(), "{body}");
    let notes = response.notes.join(" | ");
    for left_out in ["temperature 0.3", "top_p 0.8", "top_k 20"] {
        assert!(notes.contains(left_out), "{notes}");
    }
    // Claude Sonnet 4.5 takes temperature or top_p: temperature is kept.
    fake.script(Reply::text("ok"));
    let response = provider
        .complete(&configured("anthropic.claude-sonnet-4-5-20250929-v1:0"))
        .await
        .unwrap();
    let body = fake.last_body();
    assert_eq!(body["inferenceConfig"]["temperature"], json!(0.3));
    assert!(body["inferenceConfig"].get("topP").is_none(), "{body}");
    assert_eq!(body["additionalModelRequestFields"], json!({"top_k": 20}));
    assert_eq!(response.notes.len(), 1, "{:?}", response.notes);
    // Claude 3 takes all three; nothing is noted.
    fake.script(Reply::text("ok"));
    let response = provider.complete(&configured(CLAUDE)).await.unwrap();
    assert!(response.notes.is_empty(), "{:?}", response.notes);
}

fn verdict_format() -> ResponseFormat {
    ResponseFormat {
        name: "verdict".into(),
        schema: json!({"type": "object",
            "properties": {"verdict": {"type": "string", "enum": ["pass", "fail"]},
                "reason": {"type": "string"}},
            "required": ["verdict", "reason"], "additionalProperties": false}),
    }
}

fn judge_request(model: &str) -> ModelRequest {
    ModelRequest {
        system: Some("You are a strict judge.".into()),
        response_format: Some(verdict_format()),
        sampling: Sampling {
            temperature: Some(0.0),
            max_tokens: Some(512),
            ..Sampling::default()
        },
        ..ask(model, "Does the answer say Paris?")
    }
}

/// The judge's structured verdict on every family: `outputConfig` for Claude 4.5+, a
/// forced tool for Claude 3-4.1 and Nova, and a prompt-only JSON verdict for the rest;
/// each request is one the fake (and botocore's model) takes, and the text is the JSON.
#[tokio::test]
async fn the_judge_gets_a_json_verdict_from_every_family() {
    let fake = FakeBedrock::start().await;
    let provider = bearer(&fake);
    let verdict = json!({"verdict": "pass", "reason": "it says Paris"});
    let cases = [
        (
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            StructuredMode::OutputConfig,
        ),
        (
            "us.anthropic.claude-opus-4-6-v1",
            StructuredMode::OutputConfig,
        ),
        (CLAUDE, StructuredMode::ForcedTool),
        ("us.amazon.nova-pro-v1:0", StructuredMode::ForcedTool),
        (LLAMA, StructuredMode::Prompt),
        ("mistral.mistral-large-2407-v1:0", StructuredMode::Prompt),
        ("cohere.command-r-plus-v1:0", StructuredMode::Prompt),
        ("us.deepseek.r1-v1:0", StructuredMode::Prompt),
        ("openai.gpt-oss-120b-1:0", StructuredMode::Prompt),
    ];
    for (model, mode) in cases {
        assert_eq!(structured_mode(model), mode, "{model}");
        fake.script(Reply::structured(verdict.clone()));
        let response = provider.complete(&judge_request(model)).await.unwrap();
        let parsed: Value = serde_json::from_str(&response.text)
            .unwrap_or_else(|e| panic!("{model}: {e}: {}", response.text));
        assert_eq!(parsed, verdict, "{model}");
        let body = fake.last_body();
        let system = body["system"][0]["text"].as_str().unwrap();
        match mode {
            StructuredMode::OutputConfig => {
                let format = &body["outputConfig"]["textFormat"];
                assert_eq!(format["type"], "json_schema", "{body}");
                let schema = format["structure"]["jsonSchema"]["schema"]
                    .as_str()
                    .unwrap();
                assert_eq!(
                    serde_json::from_str::<Value>(schema).unwrap(),
                    verdict_format().schema
                );
                assert!(body.get("toolConfig").is_none(), "{body}");
                assert_eq!(system, "You are a strict judge.");
            }
            StructuredMode::ForcedTool => {
                assert_eq!(
                    body["toolConfig"]["toolChoice"],
                    json!({"tool": {"name": "verdict"}})
                );
                assert!(body.get("outputConfig").is_none(), "{body}");
            }
            StructuredMode::Prompt => {
                assert!(body.get("toolConfig").is_none(), "{body}");
                assert!(body.get("outputConfig").is_none(), "{body}");
                assert!(
                    system.starts_with("You are a strict judge.\n\n"),
                    "{system}"
                );
                assert!(
                    system.contains(&verdict_format().schema.to_string()),
                    "{system}"
                );
            }
        }
    }
    // What the old mapping sent a Llama judge is refused, as by the service.
    let mut old = fake.last_body();
    old["toolConfig"] = json!({"tools": [{"toolSpec": {"name": "verdict",
        "inputSchema": {"json": {"type": "object"}}}}],
        "toolChoice": {"tool": {"name": "verdict"}}});
    let (status, body) = post(&fake, &[("authorization", "Bearer x")], &old).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("toolChoice.tool"),
        "{body}"
    );
}

#[tokio::test]
async fn stop_reasons_are_kept_and_a_guardrail_message_is_a_refusal() {
    let fake = FakeBedrock::start().await;
    let provider = bearer(&fake);
    let cases = [
        ("guardrail_intervened", true, false),
        ("content_filtered", true, false),
        ("max_tokens", false, true),
        ("model_context_window_exceeded", false, true),
        ("end_turn", false, false),
        ("stop_sequence", false, false),
    ];
    for (stop, refusal, truncated) in cases {
        fake.script(Reply::text("Sorry, the model cannot answer this.").finish_reason(stop));
        let response = provider.complete(&ask(CLAUDE, "hi")).await.unwrap();
        assert_eq!(response.stop_reason.as_deref(), Some(stop));
        assert_eq!(response.refusal, refusal, "{stop}");
        assert_eq!(response.truncated(), truncated, "{stop}");
        assert_eq!(response.text, "Sorry, the model cannot answer this.");
        assert_eq!(response.usage.unwrap().reasoning, None);
    }
}

/// Captured requests, one per feature and model family, each checked against botocore's
/// service model and taken by the fake.
#[tokio::test]
async fn captured_requests_match_botocores_model() {
    let fake = FakeBedrock::start().await;
    let provider = bearer(&fake);
    let models = [
        CLAUDE,
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.anthropic.claude-opus-4-7",
        "us.amazon.nova-lite-v1:0",
        LLAMA,
        "mistral.mistral-large-2407-v1:0",
        "openai.gpt-oss-20b-1:0",
    ];
    let mut captured = 0;
    for model in models {
        let anthropic = model.contains("anthropic.");
        let mut features: Vec<(&str, ModelRequest)> = vec![
            ("plain", ask(model, "hi")),
            (
                "system prompt",
                ModelRequest {
                    system: Some("Be brief.".into()),
                    ..ask(model, "hi")
                },
            ),
            (
                "history",
                ModelRequest {
                    messages: configured(model).messages,
                    ..ask(model, "hi")
                },
            ),
            (
                "tools as names",
                ModelRequest {
                    tools: vec![ToolDef {
                        name: "get_weather".into(),
                        description: None,
                        parameters: json!({"type": "object"}),
                    }],
                    ..ask(model, "hi")
                },
            ),
            (
                "tools as schemas",
                ModelRequest {
                    tools: configured(model).tools,
                    ..ask(model, "hi")
                },
            ),
            ("judge", judge_request(model)),
        ];
        let mut every = configured(model);
        if !anthropic {
            every.sampling.top_k = None;
        }
        features.push(("every model_config field", every));
        for (feature, request) in features {
            fake.script(Reply::structured(
                json!({"verdict": "pass", "reason": "ok"}),
            ));
            provider
                .complete(&request)
                .await
                .unwrap_or_else(|e| panic!("{model} / {feature}: {e}"));
            let body = fake.last_body();
            ServiceModel::bedrock_runtime()
                .validate_input("Converse", &body)
                .unwrap_or_else(|e| panic!("{model} / {feature}: {e}: {body}"));
            captured += 1;
        }
    }
    assert_eq!(captured, models.len() * 7);
}

/// A 403 leads with the service's message; only a refused credential names the key.
#[tokio::test]
async fn a_403_says_what_bedrock_said() {
    let fake = FakeBedrock::start().await;
    fake.script(Reply::error(
        403,
        "You don't have access to the model with the specified model ID.",
    ));
    let e = bearer(&fake)
        .complete(&ask(CLAUDE, "hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("403") && text.contains(": You don't have access to the model"),
        "{text}"
    );
    assert!(text.contains("lack access"), "{text}");
    assert!(!text.contains("AWS_BEARER_TOKEN_BEDROCK"), "{text}");
    fake.expect_bearer("another-key");
    let e = bearer(&fake)
        .complete(&ask(CLAUDE, "hi"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("Authentication failed"), "{text}");
    assert!(text.contains("check AWS_BEARER_TOKEN_BEDROCK"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
}
