//! Structured answers (`ModelRequest::response_format`) through every provider against
//! its fake on 127.0.0.1: each request carries the provider's own structured-output
//! shape, the answer's text is the JSON object, the forced tool of Anthropic and Bedrock
//! is not one of the tool calls, a malformed answer comes back as text, and the fakes
//! refuse malformed `response_format`, `tool_choice`, `toolChoice` and `format` with the
//! real error shapes.

use std::collections::HashMap;
use std::time::Duration;

use prill_connect::provider::anthropic::Anthropic;
use prill_connect::provider::bedrock::Bedrock;
use prill_connect::provider::ollama::Ollama;
use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    ResponseFormat, Role, Sampling, ToolDef,
};
use prill_connect::{HttpOptions, RetryPolicy};
use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

const KEY: &str = "sk-structured-test-0123456789";

/// A schema strict mode takes: closed, every property required.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["pass", "reason"],
        "additionalProperties": false,
    })
}

fn verdict() -> Value {
    json!({"pass": true, "reason": "the answer names Paris"})
}

fn settings(kind: ProviderKind, vars: &[(&str, &str)]) -> ProviderSettings {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ProviderSettings::resolve(kind, &env, None).expect("settings resolve")
}

/// A transport without retries: a refusal is answered once.
fn transport(kind: ProviderKind) -> Transport {
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(1),
        },
        ..HttpOptions::default()
    };
    Transport::new(kind, &options, Limits::none()).expect("a transport")
}

fn ask(model: &str, tools: Vec<ToolDef>) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: Some("judge the answer".into()),
        messages: vec![ChatMessage::text(
            Role::User,
            "is Paris the capital of France?",
        )],
        tools,
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: Some(ResponseFormat {
            name: "verdict".into(),
            schema: schema(),
        }),
    }
}

fn lookup() -> ToolDef {
    ToolDef {
        name: "lookup".into(),
        description: Some("finds things".into()),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    }
}

fn lookup_call(id: &str) -> ModelToolCall {
    ModelToolCall {
        id: Some(id.into()),
        name: "lookup".into(),
        arguments: json!({"q": "capital of France"}),
    }
}

/// The response's text, parsed.
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn openai(fake: &FakeOpenAi) -> OpenAi {
    let base = fake.base_url();
    OpenAi::new(
        settings(
            ProviderKind::Openai,
            &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", KEY)],
        ),
        transport(ProviderKind::Openai),
    )
}

fn anthropic(fake: &FakeAnthropic) -> Anthropic {
    let base = fake.base_url();
    Anthropic::new(
        settings(
            ProviderKind::Anthropic,
            &[("ANTHROPIC_BASE_URL", &base), ("ANTHROPIC_API_KEY", KEY)],
        ),
        transport(ProviderKind::Anthropic),
    )
}

fn bedrock(fake: &FakeBedrock) -> Bedrock {
    let base = fake.base_url();
    Bedrock::new(
        settings(
            ProviderKind::Bedrock,
            &[
                ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &base),
                ("AWS_BEARER_TOKEN_BEDROCK", KEY),
                ("AWS_REGION", "us-east-1"),
            ],
        ),
        transport(ProviderKind::Bedrock),
    )
}

fn ollama(fake: &FakeOllama) -> Ollama {
    let base = fake.base_url();
    Ollama::new(
        settings(ProviderKind::Ollama, &[("OLLAMA_HOST", &base)]),
        transport(ProviderKind::Ollama),
    )
}

fn openai_shape() -> Value {
    json!({"type": "json_schema",
        "json_schema": {"name": "verdict", "schema": schema(), "strict": true}})
}

#[tokio::test]
async fn openai_sends_a_strict_json_schema_and_reads_the_json_text() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key(KEY);
    fake.script(Reply::structured(verdict()).pieces(7));
    fake.script(Reply::structured(verdict()));
    let provider = openai(&fake);
    let request = ask("gpt-4o-mini", Vec::new());
    let streamed = provider.complete(&request).await.unwrap();
    assert_eq!(parsed(&streamed.text), verdict());
    assert!(streamed.tool_calls.is_empty());
    assert_eq!(fake.last_body()["response_format"], openai_shape());
    let whole = provider.streaming(false).complete(&request).await.unwrap();
    assert_eq!(parsed(&whole.text), verdict());
    assert_eq!(fake.last_body()["response_format"], openai_shape());
}

#[tokio::test]
async fn a_malformed_openai_answer_stays_text() {
    let fake = FakeOpenAi::start().await;
    fake.script(Reply::text("I think it passes."));
    let response = openai(&fake)
        .complete(&ask("gpt-4o-mini", Vec::new()))
        .await
        .unwrap();
    assert_eq!(response.text, "I think it passes.");
}

#[tokio::test]
async fn anthropic_forces_a_tool_whose_input_is_the_text() {
    let fake = FakeAnthropic::start().await;
    fake.expect_key(KEY);
    for _ in 0..2 {
        fake.script(
            Reply::structured(verdict())
                .with_tool_call("lookup", json!({"q": "capital of France"})),
        );
    }
    let request = ask("claude-3-5-haiku-latest", vec![lookup()]);
    for stream in [true, false] {
        let response = anthropic(&fake)
            .streaming(stream)
            .complete(&request)
            .await
            .unwrap();
        assert_eq!(parsed(&response.text), verdict(), "stream: {stream}");
        assert_eq!(
            response.tool_calls,
            vec![lookup_call("toolu_fake_0")],
            "stream: {stream}"
        );
        assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
        let body = fake.last_body();
        assert_eq!(
            body["tools"],
            json!([
                {"name": "lookup", "description": "finds things",
                    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}},
                {"name": "verdict", "description": "Record the answer.", "input_schema": schema()},
            ])
        );
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "verdict"})
        );
    }
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].json()["stream"], true);
}

#[tokio::test]
async fn a_malformed_anthropic_answer_is_the_forced_input_as_is() {
    let fake = FakeAnthropic::start().await;
    fake.script(Reply::text("I think it passes."));
    fake.script(Reply::text("{\"pass\": tru"));
    let provider = anthropic(&fake);
    let request = ask("claude-3-5-haiku-latest", Vec::new());
    let response = provider.complete(&request).await.unwrap();
    assert_eq!(response.text, "I think it passes.");
    assert!(response.tool_calls.is_empty());
    let response = provider.streaming(false).complete(&request).await.unwrap();
    assert_eq!(response.text, "{\"pass\": tru");
    assert!(response.tool_calls.is_empty());
    // The fake answered with a call of the forced tool, as the API does.
    assert_eq!(response.raw.values()[0]["content"][0]["type"], "tool_use");
    assert_eq!(response.raw.values()[0]["content"][0]["name"], "verdict");
}

#[tokio::test]
async fn a_format_named_like_a_tool_is_refused_before_sending() {
    let fake = FakeAnthropic::start().await;
    let mut request = ask("claude-3-5-haiku-latest", vec![lookup()]);
    request.tools[0].name = "verdict".into();
    let e = anthropic(&fake).complete(&request).await.unwrap_err();
    assert!(e.to_string().contains("name of one of the tools"), "{e}");
    let bedrock_fake = FakeBedrock::start().await;
    let e = bedrock(&bedrock_fake).complete(&request).await.unwrap_err();
    assert!(e.to_string().contains("name of one of the tools"), "{e}");
    assert!(fake.requests().is_empty() && bedrock_fake.requests().is_empty());
}

#[tokio::test]
async fn bedrock_forces_a_tool_whose_input_is_the_text() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer(KEY);
    fake.script(
        Reply::structured(verdict()).with_tool_call("lookup", json!({"q": "capital of France"})),
    );
    fake.script(Reply::text("I think it passes."));
    let provider = bedrock(&fake);
    let request = ask("anthropic.claude-3-haiku-20240307-v1:0", vec![lookup()]);
    let response = provider.complete(&request).await.unwrap();
    assert_eq!(parsed(&response.text), verdict());
    assert_eq!(response.tool_calls, vec![lookup_call("tooluse_fake_0")]);
    assert_eq!(response.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        fake.last_body()["toolConfig"],
        json!({
            "tools": [
                {"toolSpec": {"name": "lookup", "description": "finds things",
                    "inputSchema": {"json": {"type": "object",
                        "properties": {"q": {"type": "string"}}}}}},
                {"toolSpec": {"name": "verdict", "description": "Record the answer.",
                    "inputSchema": {"json": schema()}}},
            ],
            "toolChoice": {"tool": {"name": "verdict"}},
        })
    );
    let malformed = provider.complete(&request).await.unwrap();
    assert_eq!(malformed.text, "I think it passes.");
    assert_eq!(malformed.tool_calls, vec![]);
}

#[tokio::test]
async fn ollama_sends_the_schema_as_format() {
    let fake = FakeOllama::start().await;
    fake.script(Reply::structured(verdict()).pieces(5));
    fake.script(Reply::structured(verdict()));
    let provider = ollama(&fake);
    let request = ask("llama3.1:8b", Vec::new());
    let streamed = provider.complete(&request).await.unwrap();
    assert_eq!(parsed(&streamed.text), verdict());
    assert_eq!(fake.last_body()["format"], schema());
    let whole = provider.streaming(false).complete(&request).await.unwrap();
    assert_eq!(parsed(&whole.text), verdict());
    assert_eq!(fake.last_body()["format"], schema());
}

/// Posts `body` to `url` with `headers`; returns the status, the JSON body (`null` if
/// not JSON) and the `x-amzn-errortype` header.
async fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value, String) {
    let client = Transport::default_for(ProviderKind::Openai)
        .unwrap()
        .client()
        .clone();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        kind,
    )
}

#[tokio::test]
async fn the_openai_fake_refuses_malformed_response_formats() {
    let fake = FakeOpenAi::start().await;
    let url = format!("{}/chat/completions", fake.base_url());
    let with = |format: Value| {
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
            "response_format": format})
    };
    let (status, body, _) = post(&url, &[], &with(openai_shape())).await;
    assert_eq!(status, 200, "{body}");
    let cases = [
        (
            json!({"type": "xml"}),
            "response_format.type",
            Some("invalid_value"),
        ),
        (
            json!({"type": "json_schema", "json_schema": {"schema": schema()}}),
            "response_format.json_schema.name",
            Some("missing_required_parameter"),
        ),
        (
            json!({"type": "json_schema", "json_schema": {"name": "verdict"}}),
            "response_format.json_schema.schema",
            Some("missing_required_parameter"),
        ),
        (
            json!({"type": "json_schema", "json_schema": {"name": "verdict", "strict": true,
                "schema": {"type": "object", "properties": {"pass": {"type": "boolean"}}}}}),
            "response_format",
            None,
        ),
        (json!({"type": "json_object"}), "messages", None),
        (json!("json"), "response_format", Some("invalid_type")),
    ];
    for (format, param, code) in cases {
        let (status, body, _) = post(&url, &[], &with(format.clone())).await;
        assert_eq!(status, 400, "{format}: {body}");
        let error = &body["error"];
        assert_eq!(error["type"], "invalid_request_error", "{format}");
        assert_eq!(error["param"], param, "{format}: {body}");
        assert_eq!(error["code"], json!(code), "{format}: {body}");
        assert!(error["message"].is_string(), "{format}");
    }
}

#[tokio::test]
async fn the_anthropic_fake_refuses_malformed_tool_choices() {
    let fake = FakeAnthropic::start().await;
    let url = format!("{}/v1/messages", fake.base_url());
    let headers = [("x-api-key", KEY), ("anthropic-version", "2023-06-01")];
    let tool = json!({"name": "verdict", "input_schema": schema()});
    let with = |tools: Value, choice: Value| {
        json!({"model": "claude-3-5-haiku-latest", "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": tools, "tool_choice": choice})
    };
    let forced = json!({"type": "tool", "name": "verdict"});
    let (status, body, _) = post(&url, &headers, &with(json!([tool]), forced.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["content"][0]["type"], "tool_use",
        "a forced tool is called"
    );
    let cases = [
        (
            with(json!([tool]), json!({"type": "tool", "name": "other"})),
            "tool_choice.tool.name: Tool 'other' not found in tools",
        ),
        (
            with(json!([]), forced.clone()),
            "tool_choice may only be specified while providing tools.",
        ),
        (
            with(json!([tool]), json!({"type": "required"})),
            "tool_choice: Input tag 'required' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
        ),
        (
            with(json!([tool, tool]), forced),
            "tools: Tool names must be unique.",
        ),
    ];
    for (request, message) in cases {
        let (status, body, _) = post(&url, &headers, &request).await;
        assert_eq!(status, 400, "{request}");
        assert_eq!(
            body,
            json!({"type": "error",
                "error": {"type": "invalid_request_error", "message": message}})
        );
    }
}

#[tokio::test]
async fn the_bedrock_fake_refuses_malformed_tool_choices() {
    let fake = FakeBedrock::start().await;
    let url = format!(
        "{}/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
        fake.base_url()
    );
    let bearer = format!("Bearer {KEY}");
    let headers = [("authorization", bearer.as_str())];
    let with = |choice: Value| {
        json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "verdict",
                "inputSchema": {"json": schema()}}}], "toolChoice": choice}})
    };
    let (status, body, _) = post(&url, &headers, &with(json!({"tool": {"name": "verdict"}}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["output"]["message"]["content"][0]["toolUse"]["name"],
        "verdict"
    );
    for (choice, says) in [
        (
            json!({"tool": {"name": "other"}}),
            "not defined in toolConfig.tools",
        ),
        (
            json!({"auto": {}, "tool": {"name": "verdict"}}),
            "exactly one of its members set",
        ),
        (json!({"required": {}}), "Unknown field 'required'"),
    ] {
        let (status, body, kind) = post(&url, &headers, &with(choice.clone())).await;
        assert_eq!(status, 400, "{choice}");
        assert!(kind.starts_with("ValidationException"), "{kind}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{choice}: {message}");
    }
}

#[tokio::test]
async fn the_ollama_fake_refuses_malformed_formats() {
    let fake = FakeOllama::start().await;
    let url = format!("{}/api/chat", fake.base_url());
    let with = |format: Value| {
        json!({"model": "llama3.1:8b", "stream": false,
            "messages": [{"role": "user", "content": "hi"}], "format": format})
    };
    for format in [json!("json"), schema()] {
        let (status, body, _) = post(&url, &[], &with(format)).await;
        assert_eq!(status, 200, "{body}");
    }
    for format in [json!("xml"), json!(["json"]), json!(1)] {
        let (status, body, _) = post(&url, &[], &with(format.clone())).await;
        assert_eq!(status, 400, "{format}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("invalid format: "), "{error}");
    }
}
