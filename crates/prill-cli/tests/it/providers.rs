//! Sentinel specs run for real through `prill run`, against fake servers that speak each
//! provider's wire format on 127.0.0.1: OpenAI, Anthropic, Ollama, Hugging Face and
//! Bedrock. Every provider answers the same suite: a question, a tool call, and a
//! deliberately wrong expectation.
//!
//! The same suite runs against the real providers when asked: set
//! `PRILL_LIVE_PROVIDERS` to a comma-separated list (`openai,anthropic`) along with each
//! provider's usual key variable; see `docs/providers.md`. Without it no request leaves
//! the machine.

use std::path::Path;

use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::json;

use crate::support::{isolated, prill, run, runtime, verdicts};

const QUESTION: &str = "What is the capital of France? Answer in one word.";
const SEARCH: &str = "Find laptops under $1000";

/// The suite for one model: two specs that pass and one that fails.
fn write_suite(dir: &Path, provider: &str, model: &str) {
    std::fs::write(
        dir.join("suite.yaml"),
        format!(
            r#"name: provider suite
defaults:
  model: "{model}"
  provider: {provider}
  model_config: {{temperature: 0, max_tokens: 50}}
tests:
  - name: capital
    inputs: {{query: "{QUESTION}", system_prompt: "Answer briefly."}}
    assertions:
      - must_contain: Paris
      - output_type: text
      - max_tokens: 10
  - name: tool
    tools:
      - name: web_search
        description: Search the web
        parameters: {{type: object, properties: {{query: {{type: string}}}}, required: [query]}}
    inputs: {{query: "{SEARCH}"}}
    assertions:
      - must_call_tool: web_search
  - name: wrong on purpose
    inputs: {{query: "{QUESTION}"}}
    assertions:
      - must_contain: London
"#
        ),
    )
    .unwrap();
}

fn expected_verdicts() -> Vec<(String, String)> {
    vec![
        ("capital".to_owned(), "passed".to_owned()),
        ("tool".to_owned(), "passed".to_owned()),
        ("wrong on purpose".to_owned(), "failed".to_owned()),
    ]
}

fn replies() -> [(&'static str, Reply); 2] {
    [
        (QUESTION, Reply::text("Paris").usage(20, 1)),
        (
            SEARCH,
            Reply::tool_call("web_search", json!({"query": "laptops under $1000"})),
        ),
    ]
}

fn check(dir: &Path, env: &[(&str, String)]) -> serde_json::Value {
    let (out, report) = run(dir, env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "one spec fails on purpose: {stderr}"
    );
    assert_eq!(verdicts(&report), expected_verdicts(), "{stderr}");
    assert!(
        stderr.contains("expected the output to contain \"London\", found \"Paris\""),
        "{stderr}"
    );
    report
}

#[test]
fn openai_specs_run_through_prill_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    for (message, reply) in replies() {
        fake.on_message(message, reply);
    }
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), "openai", "gpt-4o-mini");
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let report = check(dir.path(), &env);
    // The spec's inputs and model_config reached the wire as documented.
    let first = fake
        .requests()
        .into_iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .find(|b| b.to_string().contains("Answer briefly."))
        .expect("the capital request");
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "Answer briefly."})
    );
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": QUESTION})
    );
    assert_eq!(first["temperature"], json!(0.0));
    assert_eq!(first["max_tokens"], json!(50));
    // Token usage from the provider decided `max_tokens: 10`.
    let capital = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["unit"]["name"] == "capital")
        .unwrap();
    let checks = &capital["samples"][0]["interactions"][0]["checks"];
    let tokens = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "max_tokens")
        .unwrap();
    assert_eq!(
        tokens["evaluation"]["metadata"]["token_count_source"],
        "provider"
    );
}

#[test]
fn anthropic_specs_run_through_prill_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeAnthropic::start());
    fake.expect_key("sk-ant-fake");
    for (message, reply) in replies() {
        fake.on_message(message, reply);
    }
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), "anthropic", "claude-3-5-haiku-latest");
    let env = [
        ("ANTHROPIC_BASE_URL", fake.base_url()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake".to_owned()),
    ];
    check(dir.path(), &env);
    let body = fake
        .requests()
        .into_iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .find(|b| b.to_string().contains("Answer briefly."))
        .unwrap();
    assert_eq!(body["system"], "Answer briefly.");
    assert_eq!(body["max_tokens"], 50);
}

#[test]
fn ollama_specs_run_through_prill_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeOllama::start());
    fake.models(&["llama3.1:8b"]);
    for (message, reply) in replies() {
        fake.on_message(message, reply);
    }
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), "ollama", "llama3.1:8b");
    check(dir.path(), &[("OLLAMA_HOST", fake.base_url())]);
    let body = fake
        .requests()
        .into_iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .find(|b| b.to_string().contains("Answer briefly."))
        .unwrap();
    assert_eq!(body["options"]["num_predict"], 50);
}

#[test]
fn huggingface_specs_run_through_prill_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("hf_fake");
    for (message, reply) in replies() {
        fake.on_message(message, reply);
    }
    let dir = tempfile::tempdir().unwrap();
    write_suite(
        dir.path(),
        "huggingface",
        "meta-llama/Llama-3.1-8B-Instruct",
    );
    check(
        dir.path(),
        &[
            ("HF_BASE_URL", fake.base_url()),
            ("HF_TOKEN", "hf_fake".to_owned()),
        ],
    );
}

#[test]
fn bedrock_specs_run_through_prill_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeBedrock::start());
    fake.expect_bearer("bedrock-fake-key");
    for (message, reply) in replies() {
        fake.on_message(message, reply);
    }
    let dir = tempfile::tempdir().unwrap();
    write_suite(
        dir.path(),
        "bedrock",
        "anthropic.claude-3-haiku-20240307-v1:0",
    );
    let env = [
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
        ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-fake-key".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ];
    check(dir.path(), &env);
}

#[test]
fn a_missing_key_errors_and_names_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), "openai", "gpt-4o-mini");
    let (out, report) = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(3), "errors and no failures");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
    assert_eq!(report["summary"]["errored"], 3);
}

#[test]
fn an_unsupported_parameter_errors_before_anything_is_sent() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.yaml"),
        format!("name: t\nmodel: gpt-4o-mini\ninputs: {{query: \"{QUESTION}\"}}\nassertions: [{{must_contain: Paris}}]\nmodel_config: {{top_k: 5}}\n"),
    )
    .unwrap();
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, _) = run(dir.path(), &env);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("top_k"));
    assert!(fake.requests().is_empty(), "nothing was sent");
}

/// The opt-in switch: `PRILL_LIVE_PROVIDERS=openai,anthropic,...` runs the capital and
/// tool specs against the real APIs with the keys in the environment. Without it the
/// test is built ignored (see `build.rs`), so it shows as ignored, never as passed; run
/// with `--include-ignored` and no list, it fails.
#[test]
#[cfg_attr(
    not(prill_live_providers),
    ignore = "reaches real providers: set PRILL_LIVE_PROVIDERS=openai,anthropic,... with their keys"
)]
fn live_providers_when_asked() {
    let list = std::env::var("PRILL_LIVE_PROVIDERS").unwrap_or_default();
    assert!(
        list.split(',').any(|n| !n.trim().is_empty()),
        "PRILL_LIVE_PROVIDERS names no provider: nothing would be tested"
    );
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let model = crate::support::live_model(name);
        let dir = tempfile::tempdir().unwrap();
        write_suite(dir.path(), name, model);
        let out = prill(
            dir.path(),
            &[
                "run",
                "suite.yaml",
                "--filter",
                "capital",
                "--filter",
                "tool",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `prill validate` reads the names of `[providers]` from the `prill.toml` at hand: a
/// spec's `provider` may name one, and a name that is none is an error with its
/// file, line and column and the closest name. `prill run` refuses the same file.
#[test]
fn validate_checks_a_spec_provider_against_the_named_providers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[providers.vllm]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let spec = |provider: &str| {
        format!(
            "name: t\nmodel: mistral-7b\nprovider: {provider}\ninputs: {{query: hi}}\nassertions: [{{must_contain: a}}]\n"
        )
    };
    std::fs::write(dir.path().join("good.yaml"), spec("vllm")).unwrap();
    std::fs::write(dir.path().join("typo.yaml"), spec("vlm")).unwrap();
    let prill = |args: &[&str]| isolated(dir.path(), args).output().unwrap();
    let out = prill(&["validate", "good.yaml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = prill(&["validate", "--format", "short", "typo.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("typo.yaml:3:11: error[invalid-value]: provider: unknown value `vlm`"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("typo.yaml:").count(), 1, "{stderr}");
    let out = prill(&["validate", "--format", "json", "typo.yaml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("did you mean `vllm`?"), "{stdout}");
    let out = prill(&["run", "typo.yaml"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
