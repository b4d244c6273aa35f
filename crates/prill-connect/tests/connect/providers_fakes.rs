//! The fake OpenAI and Ollama servers of `prill-testkit` refuse malformed requests as the
//! real APIs do, with their error shapes: raw requests, sent over loopback.

use serde_json::{Value, json};

use prill_connect::provider::ProviderKind;
use prill_connect::provider::transport::Transport;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;

/// Posts `body` to `url`; returns the status and the JSON body (`null` if not JSON).
async fn post(url: &str, bearer: Option<&str>, body: &Value) -> (u16, Value) {
    let client = Transport::default_for(ProviderKind::Openai)
        .unwrap()
        .client()
        .clone();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(bearer) = bearer {
        request = request.header("authorization", format!("Bearer {bearer}"));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_openai_fake_validates_like_the_real_api() {
    let fake = FakeOpenAi::start().await;
    fake.expect_key("sk-good");
    let url = format!("{}/chat/completions", fake.base_url());
    let ok = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]});

    let (status, body) = post(&url, Some("sk-bad"), &ok).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "invalid_api_key");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Incorrect API key provided")
    );
    let (status, body) = post(&url, None, &ok).await;
    assert_eq!(status, 401);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("You didn't provide an API key")
    );

    let (status, body) = post(&url, Some("sk-good"), &ok).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "ok");

    let cases = [
        (
            json!({"messages": [{"role": "user", "content": "hi"}]}),
            "you must provide a model parameter",
        ),
        (
            json!({"model": "gpt-4o"}),
            "Missing required parameter: 'messages'.",
        ),
        (
            json!({"model": "gpt-4o", "messages": []}),
            "Invalid 'messages': empty array",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "robot", "content": "hi"}]}),
            "Invalid value: 'robot'",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user"}]}),
            "Missing required parameter: 'messages[0].content'.",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"description": "x"}}]}),
            "Missing required parameter: 'tools[0].function.name'.",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "top_k": 3}),
            "Unrecognized request argument supplied: top_k",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": true}}),
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ),
        (
            json!({"model": "o1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}),
            "Unsupported parameter: 'max_tokens'",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "seed": 1.5}),
            "Invalid type for 'seed'",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stop": ["a", "b", "c", "d", "e"]}),
            "Invalid 'stop': array too long",
        ),
        // OpenAI's model rules, which the published definition cannot say.
        (
            json!({"model": "gpt-5.1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}),
            "Unsupported parameter: 'max_tokens'",
        ),
        (
            json!({"model": "gpt-5-mini", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}),
            "Unsupported value: 'temperature'",
        ),
        // The published definition: TGI's grammar is not OpenAI's `response_format`.
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json", "value": {}}}),
            "Invalid value: 'json'",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": "yes"}, "stream": true}),
            "Invalid 'stream_options'",
        ),
        (
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "extreme"}),
            "Invalid 'reasoning_effort'",
        ),
    ];
    for (request, message) in cases {
        let (status, body) = post(&url, Some("sk-good"), &request).await;
        assert_eq!(status, 400, "{request}: {body}");
        let got = body["error"]["message"].as_str().unwrap_or_default();
        assert!(got.starts_with(message), "{request}: {got}");
        assert_eq!(body["error"]["type"], "invalid_request_error");
    }

    let (status, body) = post(
        &format!("http://{}/v1/completions", fake.addr()),
        Some("sk-good"),
        &ok,
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid URL")
    );
    // Every request is recorded, the refused ones too.
    assert_eq!(fake.requests().len(), 3 + 16 + 1);
}

#[tokio::test]
async fn the_ollama_fake_validates_like_ollama() {
    let fake = FakeOllama::start().await;
    fake.models(&["llama3.1:8b"]);
    let url = format!("{}/api/chat", fake.base_url());
    let (status, body) = post(
        &url,
        None,
        &json!({"model": "llama3.1:8b", "messages": [{"role": "user", "content": "hi"}], "stream": false}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["message"]["content"], "ok");
    assert_eq!(body["done"], true);

    let cases = [
        (
            400,
            json!({"messages": [{"role": "user", "content": "hi"}]}),
            "model is required",
        ),
        (
            404,
            json!({"model": "phi3:mini", "messages": []}),
            "model 'phi3:mini' not found",
        ),
        (
            400,
            json!({"model": "llama3.1:8b", "messages": [], "options": {"max_tokens": 5}}),
            "invalid option provided: \"max_tokens\"",
        ),
        (
            400,
            json!({"model": "llama3.1:8b", "messages": [], "options": {"temperature": "hot"}}),
            "option \"temperature\" has the wrong type",
        ),
        (
            400,
            json!({"model": "llama3.1:8b", "messages": [], "temperature": 0.5}),
            "unknown field \"temperature\"",
        ),
        (
            400,
            json!({"model": "llama3.1:8b", "messages": [{"role": "robot", "content": "hi"}]}),
            "invalid role",
        ),
        (
            400,
            json!({"model": "llama3.1:8b", "messages": [], "tools": [{"type": "function", "function": {}}]}),
            "invalid tool",
        ),
    ];
    for (want, request, message) in cases {
        let (status, body) = post(&url, None, &request).await;
        assert_eq!(status, want, "{request}: {body}");
        let got = body["error"].as_str().unwrap_or_default();
        assert!(got.starts_with(message), "{request}: {got}");
    }

    let (status, body) = post(&url, None, &json!({"model": "llama3.1:8b"})).await;
    assert_eq!(status, 200);
    assert_eq!(body["done_reason"], "load");
}
