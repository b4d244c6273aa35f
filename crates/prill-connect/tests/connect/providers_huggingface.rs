//! The Hugging Face provider end to end: the router's OpenAI shape against the fake
//! OpenAI server, TGI's and Inference Endpoints' shape against the fake TGI server
//! (`prill-testkit`), on 127.0.0.1; the token read as `huggingface_hub` reads it.

use std::collections::HashMap;
use std::time::Duration;

use prill_connect::provider::huggingface::HuggingFace;
use prill_connect::provider::transport::Transport;
use prill_connect::provider::{
    ChatMessage, Limits, ModelRequest, Provider, ProviderKind, ProviderSettings, ResponseFormat,
    Role, Sampling, ToolDef,
};
use prill_connect::{ConnectError, HttpOptions, RetryPolicy};
use prill_spec::model::config::{ChatApi, ProviderConfig};
use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use prill_testkit::providers::tgi::FakeTgi;
use serde_json::{Value, json};

const TOKEN: &str = "hf_token_abcdef123456";

fn env(vars: &[(&str, &str)]) -> HashMap<String, String> {
    vars.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The provider at `base` with `vars` and `api`, if set.
fn hf(base: &str, vars: &[(&str, &str)], api: Option<ChatApi>) -> HuggingFace {
    let mut env = env(vars);
    env.insert("HF_BASE_URL".into(), base.to_owned());
    let config = ProviderConfig {
        api,
        ..ProviderConfig::default()
    };
    let settings = ProviderSettings::resolve(ProviderKind::Huggingface, &env, Some(&config))
        .expect("settings resolve");
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_secs(1),
        },
        ..HttpOptions::default()
    };
    let transport = Transport::new(ProviderKind::Huggingface, &options, Limits::none()).unwrap();
    HuggingFace::new(settings, transport)
}

fn verdict_format() -> ResponseFormat {
    ResponseFormat {
        name: "verdict".into(),
        schema: json!({"type": "object", "properties": {"pass": {"type": "boolean"}},
            "required": ["pass"], "additionalProperties": false}),
    }
}

/// A request with every feature: system prompt, history, tools with and without a
/// schema, every `model_config` field Hugging Face takes.
fn full_request() -> ModelRequest {
    ModelRequest {
        model: "meta-llama/Llama-3.1-8B-Instruct".into(),
        system: Some("You are terse.".into()),
        messages: vec![
            ChatMessage::text(Role::User, "hi"),
            ChatMessage::text(Role::Assistant, "hello"),
            ChatMessage::text(Role::User, "weather?"),
        ],
        tools: vec![
            ToolDef {
                name: "get_weather".into(),
                description: Some("Looks the weather up".into()),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            },
            ToolDef {
                name: "now".into(),
                description: None,
                parameters: json!({"type": "object"}),
            },
        ],
        sampling: Sampling {
            temperature: Some(0.3),
            max_tokens: Some(64),
            top_p: Some(0.9),
            top_k: None,
            stop_sequences: vec!["END".into()],
            seed: Some(11),
        },
        timeout: Some(Duration::from_secs(20)),
        response_format: None,
    }
}

/// A judge's request: a structured answer, no tools.
fn judge_request() -> ModelRequest {
    ModelRequest {
        tools: Vec::new(),
        response_format: Some(verdict_format()),
        ..full_request()
    }
}

/// Every feature, to TGI (streamed and whole) and to the router: each endpoint's fake
/// takes each captured request, and the body is exactly what was meant.
#[tokio::test]
async fn each_endpoint_takes_every_feature_in_its_own_shape() {
    let tgi = FakeTgi::start().await;
    tgi.script(Reply::text("sunny").usage(20, 2));
    let provider = hf(&tgi.base_url(), &[("HF_TOKEN", TOKEN)], None);
    let response = provider.complete(&full_request()).await.unwrap();
    assert_eq!(response.text, "sunny");
    let body = tgi.last_body();
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(body["seed"], 11);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are terse."})
    );
    assert_eq!(
        body["tools"][1],
        json!({"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}})
    );

    tgi.script(Reply::structured(json!({"pass": true})));
    let whole = provider.clone().streaming(false);
    let response = whole.complete(&judge_request()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&response.text).unwrap(),
        json!({"pass": true})
    );
    assert_eq!(
        tgi.last_body()["response_format"],
        json!({"type": "json", "value": verdict_format().schema})
    );

    let router = FakeOpenAi::start().await;
    router.expect_key(TOKEN);
    let provider = hf(
        &router.base_url(),
        &[("HF_TOKEN", TOKEN)],
        Some(ChatApi::Openai),
    );
    provider.complete(&full_request()).await.unwrap();
    router.script(Reply::structured(json!({"pass": false})));
    let response = provider.complete(&judge_request()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&response.text).unwrap(),
        json!({"pass": false})
    );
    assert_eq!(
        router.last_body()["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "verdict",
            "schema": verdict_format().schema, "strict": true}})
    );
}

/// The fake TGI refuses what TGI refuses, so the shapes above are checked: OpenAI's
/// `json_schema` spelling (422), a negative seed (422).
#[tokio::test]
async fn the_tgi_fake_refuses_openai_s_spelling_and_a_negative_seed() {
    let tgi = FakeTgi::start().await;
    let provider = hf(&tgi.base_url(), &[], Some(ChatApi::Openai));
    let e = provider.complete(&judge_request()).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 422, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("missing field `value`"), "{e}");

    let client = Transport::default_for(ProviderKind::Huggingface)
        .unwrap()
        .client()
        .clone();
    let url = format!("{}/chat/completions", tgi.base_url());
    let post = |body: Value| {
        client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let ask = |extra: Value| {
        let mut body = json!({"model": "tgi", "messages": [{"role": "user", "content": "hi"}]});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    let cases = [
        (json!({"seed": -1}), 422),
        (json!({"seed": 5}), 200),
        (
            json!({"response_format": {"type": "json_schema", "value": {"name": "v", "schema": {"type": "object"}}}}),
            200,
        ),
        (
            json!({"response_format": {"type": "json_schema", "value": {"type": "object"}}}),
            422,
        ),
        (
            json!({"response_format": {"type": "json_object", "value": {"type": "object"}}}),
            200,
        ),
        (
            json!({"response_format": {"type": "regex", "value": "a+"}}),
            200,
        ),
        (
            json!({"response_format": {"type": "json", "value": {}}, "tools": [{"type": "function", "function": {"name": "f"}}]}),
            422,
        ),
        (json!({"max_tokens": 5, "max_completion_tokens": 5}), 422),
    ];
    for (extra, want) in cases {
        let response = post(ask(extra.clone())).await.unwrap();
        assert_eq!(response.status().as_u16(), want, "{extra}");
    }
}

/// A negative seed, or tools with a structured answer, to TGI: an error naming it, and
/// nothing is sent.
#[tokio::test]
async fn what_tgi_cannot_take_is_an_error_before_anything_is_sent() {
    let tgi = FakeTgi::start().await;
    let provider = hf(&tgi.base_url(), &[], None);
    let mut request = full_request();
    request.sampling.seed = Some(-3);
    let e = provider.complete(&request).await.unwrap_err();
    assert!(e.to_string().contains("seed -3 is negative"), "{e}");
    let mut request = judge_request();
    request.tools = full_request().tools;
    let e = provider.complete(&request).await.unwrap_err();
    assert!(e.to_string().contains("response format when tools"), "{e}");
    let mut request = full_request();
    request.sampling.top_k = Some(5);
    let e = provider.complete(&request).await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("huggingface does not support `top_k`"),
        "{e}"
    );
    assert!(tgi.requests().is_empty());
}

/// The token: `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`, else the file of
/// `hf auth login` (`HF_TOKEN_PATH`, else `$HF_HOME/token`, else
/// `$XDG_CACHE_HOME/huggingface/token`, else `~/.cache/huggingface/token`), trimmed.
#[tokio::test]
async fn the_token_is_found_where_huggingface_hub_looks() {
    let dir = std::env::temp_dir().join(format!("prill-hf-token-{}", std::process::id()));
    let write = |path: &std::path::Path, token: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("{token}\n")).unwrap();
    };
    let home = dir.join("home");
    write(&home.join(".cache/huggingface/token"), "hf_from_home");
    let xdg = dir.join("xdg");
    write(&xdg.join("huggingface/token"), "hf_from_xdg");
    let hf_home = dir.join("hf-home");
    write(&hf_home.join("token"), "hf_from_hf_home");
    let path = dir.join("elsewhere/token");
    write(&path, "hf_from_token_path");
    let (home, xdg, hf_home, path) = (
        home.to_str().unwrap(),
        xdg.to_str().unwrap(),
        hf_home.to_str().unwrap(),
        path.to_str().unwrap(),
    );
    let all = [
        ("HF_TOKEN", "hf_from_env"),
        ("HUGGING_FACE_HUB_TOKEN", "hf_from_old_env"),
        ("HF_TOKEN_PATH", path),
        ("HF_HOME", hf_home),
        ("XDG_CACHE_HOME", xdg),
        ("HOME", home),
    ];
    let wants = [
        "hf_from_env",
        "hf_from_old_env",
        "hf_from_token_path",
        "hf_from_hf_home",
        "hf_from_xdg",
        "hf_from_home",
    ];
    let tgi = FakeTgi::start().await;
    for (i, want) in wants.iter().enumerate() {
        tgi.expect_key(want);
        let provider = hf(&tgi.base_url(), &all[i..], None);
        provider.complete(&full_request()).await.unwrap();
        let shown = format!("{provider:?}");
        assert!(!shown.contains(want), "{shown}");
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // Hugging Face's own hosts need one; the error says where it is looked for.
    let router = hf("https://router.huggingface.co/v1", &[], None);
    let e = router.complete(&full_request()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "huggingface needs a key: set HF_TOKEN (or log in with `hf auth login`)"
    );
}
