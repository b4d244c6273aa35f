//! Tool turns against every provider's fake: the model asks for two tools at once,
//! their results go back in the provider's own shape (checked by the fake, against
//! the vendored OpenAPI definition for OpenAI and botocore's model for Bedrock) and the
//! fake's recorded body shows that shape; a failed tool's result; and a result that
//! answers no call, which the fake refuses as the real API does.

use std::collections::HashMap;
use std::time::Duration;

use prill_connect::provider::anthropic::Anthropic;
use prill_connect::provider::bedrock::Bedrock;
use prill_connect::provider::huggingface::HuggingFace;
use prill_connect::provider::ollama::Ollama;
use prill_connect::provider::openai::OpenAi;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, ModelResponse, Provider, ProviderKind, ProviderSettings,
    Sampling, ToolDef, ToolOutput, ToolResult,
};
use prill_connect::{HttpOptions, RetryPolicy};
use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use prill_testkit::providers::tgi::FakeTgi;
use serde_json::{Value, json};

/// The settings of `kind` from the variables `vars`, and a transport that retries fast.
fn parts(kind: ProviderKind, vars: &[(&str, &str)]) -> (ProviderSettings, Transport) {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let settings = ProviderSettings::resolve(kind, &env, None).unwrap();
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(1),
        },
        ..HttpOptions::default()
    };
    (
        settings,
        Transport::new(kind, &options, Limits::none()).unwrap(),
    )
}

/// The first turn: a question, with two tools offered.
fn ask(model: &str) -> ModelRequest {
    let tool = |name: &str| ToolDef {
        name: name.into(),
        description: None,
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    };
    ModelRequest {
        model: model.into(),
        system: None,
        messages: vec![ChatMessage::user("Weather and time in Paris?")],
        tools: vec![tool("weather"), tool("clock")],
        sampling: Sampling::default(),
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

/// The model's two calls at once, then its final answer.
fn script_two_turns(script: impl Fn(Reply)) {
    script(
        Reply::text("Let me look.")
            .with_tool_call("weather", json!({"city": "Paris"}))
            .with_tool_call("clock", json!({"city": "Paris"})),
    );
    script(Reply::text("Sunny; the clock tool failed."));
}

/// The second turn: the first, the model's calls, and their results (the weather's as
/// JSON, the clock's a failure), each answering its call's id.
fn answer(first: &ModelRequest, response: &ModelResponse) -> ModelRequest {
    let mut next = first.clone();
    next.messages.push(ChatMessage::tool_calls(
        response.text.clone(),
        response.tool_calls.clone(),
    ));
    let weather = &response.tool_calls[0];
    let clock = &response.tool_calls[1];
    next.messages.push(ChatMessage::ToolResult(ToolResult {
        call_id: weather.id.clone(),
        name: weather.name.clone(),
        output: ToolOutput::Json(json!({"sky": "sunny", "celsius": 21})),
        is_error: false,
    }));
    next.messages.push(ChatMessage::ToolResult(ToolResult {
        call_id: clock.id.clone(),
        name: clock.name.clone(),
        output: ToolOutput::Text("clock service unavailable".into()),
        is_error: true,
    }));
    next
}

/// `request` with its last tool result answering the call id `id` instead.
fn stray(mut request: ModelRequest, id: &str) -> ModelRequest {
    if let Some(ChatMessage::ToolResult(result)) = request.messages.last_mut() {
        result.call_id = Some(id.into());
        result.name = "clock".into();
    }
    request
}

#[tokio::test]
async fn openai_tool_calls_and_results_are_tool_call_ids_and_tool_messages() {
    let fake = FakeOpenAi::start().await;
    let (settings, transport) = parts(
        ProviderKind::Openai,
        &[
            ("OPENAI_BASE_URL", &fake.base_url()),
            ("OPENAI_API_KEY", "sk-test-key-0123456789"),
        ],
    );
    let provider = OpenAi::new(settings, transport);
    script_two_turns(|r| {
        fake.script(r);
    });
    let first = ask("gpt-4o-mini");
    let response = provider.complete(&first).await.unwrap();
    let ids: Vec<_> = response.tool_calls.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, [Some("call_0".into()), Some("call_1".into())]);
    let second = answer(&first, &response);
    let last = provider.complete(&second).await.unwrap();
    assert_eq!(last.text, "Sunny; the clock tool failed.");
    assert_eq!(
        fake.last_body()["messages"],
        json!([
            {"role": "user", "content": "Weather and time in Paris?"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_0", "type": "function",
                 "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_1", "type": "function",
                 "function": {"name": "clock", "arguments": "{\"city\":\"Paris\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_0", "content": "{\"sky\":\"sunny\",\"celsius\":21}"},
            {"role": "tool", "tool_call_id": "call_1", "content": "Error: clock service unavailable"},
        ])
    );
    let e = provider
        .complete(&stray(second.clone(), "call_nope"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"
        ),
        "{e}"
    );
    let mut unanswered = second;
    unanswered.messages.pop();
    let e = provider
        .complete(&unanswered)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("The following tool_call_ids did not have response messages: call_1"),
        "{e}"
    );
}

#[tokio::test]
async fn anthropic_results_of_one_turn_go_in_one_user_message() {
    let fake = FakeAnthropic::start().await;
    fake.expect_key("sk-ant-test-0123456789");
    let (settings, transport) = parts(
        ProviderKind::Anthropic,
        &[
            ("ANTHROPIC_BASE_URL", &fake.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-0123456789"),
        ],
    );
    let provider = Anthropic::new(settings, transport);
    script_two_turns(|r| {
        fake.script(r);
    });
    let first = ask("claude-3-5-haiku-latest");
    let response = provider.complete(&first).await.unwrap();
    let ids: Vec<_> = response.tool_calls.iter().map(|c| c.id.clone()).collect();
    assert_eq!(
        ids,
        [Some("toolu_fake_0".into()), Some("toolu_fake_1".into())]
    );
    let second = answer(&first, &response);
    let last = provider.complete(&second).await.unwrap();
    assert_eq!(last.text, "Sunny; the clock tool failed.");
    assert_eq!(
        fake.last_body()["messages"],
        json!([
            {"role": "user", "content": "Weather and time in Paris?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_fake_0", "name": "weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_fake_1", "name": "clock", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_fake_0",
                 "content": "{\"sky\":\"sunny\",\"celsius\":21}"},
                {"type": "tool_result", "tool_use_id": "toolu_fake_1",
                 "content": "clock service unavailable", "is_error": true},
            ]},
        ])
    );
    let e = provider
        .complete(&stray(second, "toolu_nope"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unexpected `tool_use_id` found in `tool_result` blocks: toolu_nope"),
        "{e}"
    );
}

#[tokio::test]
async fn bedrock_tool_use_and_tool_result_blocks_pass_botocore_s_model() {
    let fake = FakeBedrock::start().await;
    fake.expect_bearer("bedrock-api-key-0123456789");
    let (settings, transport) = parts(
        ProviderKind::Bedrock,
        &[
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &fake.base_url()),
            ("AWS_EC2_METADATA_DISABLED", "true"),
            ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-0123456789"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    let provider = Bedrock::new(settings, transport);
    script_two_turns(|r| {
        fake.script(r);
    });
    let first = ask("anthropic.claude-3-haiku-20240307-v1:0");
    let response = provider.complete(&first).await.unwrap();
    let ids: Vec<_> = response.tool_calls.iter().map(|c| c.id.clone()).collect();
    assert_eq!(
        ids,
        [Some("tooluse_fake_0".into()), Some("tooluse_fake_1".into())]
    );
    let second = answer(&first, &response);
    let last = provider.complete(&second).await.unwrap();
    assert_eq!(last.text, "Sunny; the clock tool failed.");
    assert!(last.notes.is_empty(), "{:?}", last.notes);
    assert_eq!(
        fake.last_body()["messages"],
        json!([
            {"role": "user", "content": [{"text": "Weather and time in Paris?"}]},
            {"role": "assistant", "content": [
                {"text": "Let me look."},
                {"toolUse": {"toolUseId": "tooluse_fake_0", "name": "weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "tooluse_fake_1", "name": "clock", "input": {"city": "Paris"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_fake_0",
                                "content": [{"json": {"sky": "sunny", "celsius": 21}}]}},
                {"toolResult": {"toolUseId": "tooluse_fake_1",
                                "content": [{"text": "clock service unavailable"}], "status": "error"}},
            ]},
        ])
    );
    let e = provider
        .complete(&stray(second.clone(), "tooluse_nope"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("tooluse_nope"), "{e}");
    let mut unanswered = second;
    unanswered.messages.pop();
    let e = provider
        .complete(&unanswered)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_fake_1"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn ollama_results_are_tool_messages_matched_by_name() {
    let fake = FakeOllama::start().await;
    let host = fake.base_url();
    let (settings, transport) = parts(ProviderKind::Ollama, &[("OLLAMA_HOST", &host)]);
    let provider = Ollama::new(settings, transport);
    script_two_turns(|r| {
        fake.script(r);
    });
    let first = ask("llama3.1:8b");
    let response = provider.complete(&first).await.unwrap();
    assert!(response.tool_calls.iter().all(|c| c.id.is_none()));
    let second = answer(&first, &response);
    let last = provider.complete(&second).await.unwrap();
    assert_eq!(last.text, "Sunny; the clock tool failed.");
    let messages: Vec<Value> = fake.last_body()["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages[1..],
        [
            json!({"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "clock", "arguments": {"city": "Paris"}}},
            ]}),
            json!({"role": "tool", "tool_name": "weather", "content": "{\"sky\":\"sunny\",\"celsius\":21}"}),
            json!({"role": "tool", "tool_name": "clock", "content": "Error: clock service unavailable"}),
        ]
    );
    let mut wrong = second;
    if let Some(ChatMessage::ToolResult(result)) = wrong.messages.last_mut() {
        result.name = "search".into();
    }
    let e = provider.complete(&wrong).await.unwrap_err().to_string();
    assert!(e.contains("answers no call"), "{e}");
}

#[tokio::test]
async fn a_result_without_a_call_id_is_an_error_before_sending_where_ids_match() {
    let fake = FakeOpenAi::start().await;
    let (settings, transport) = parts(
        ProviderKind::Openai,
        &[
            ("OPENAI_BASE_URL", &fake.base_url()),
            ("OPENAI_API_KEY", "sk-test-key-0123456789"),
        ],
    );
    let provider = OpenAi::new(settings, transport);
    let mut request = ask("gpt-4o-mini");
    request.messages.push(ChatMessage::ToolResult(ToolResult {
        call_id: None,
        name: "weather".into(),
        output: ToolOutput::Text("sunny".into()),
        is_error: false,
    }));
    let e = provider.complete(&request).await.unwrap_err().to_string();
    assert!(
        e.contains("the result of tool `weather` names no call id"),
        "{e}"
    );
    assert!(fake.requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn huggingface_sends_openai_s_tool_messages_to_tgi() {
    let fake = FakeTgi::start().await;
    let (settings, transport) = parts(
        ProviderKind::Huggingface,
        &[
            ("HF_BASE_URL", &fake.base_url()),
            ("HF_TOKEN", "hf_test_0123456789"),
        ],
    );
    let provider = HuggingFace::new(settings, transport);
    script_two_turns(|r| {
        fake.script(r);
    });
    let first = ask("meta-llama/Llama-3.1-8B-Instruct");
    let response = provider.complete(&first).await.unwrap();
    assert!(response.tool_calls.iter().all(|c| c.id.is_some()));
    let second = answer(&first, &response);
    let last = provider.complete(&second).await.unwrap();
    assert_eq!(last.text, "Sunny; the clock tool failed.");
    let messages = fake.last_body()["messages"].clone();
    assert_eq!(
        messages[1]["tool_calls"][1]["id"],
        json!(response.tool_calls[1].id)
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": response.tool_calls[1].id,
               "content": "Error: clock service unavailable"})
    );
}
