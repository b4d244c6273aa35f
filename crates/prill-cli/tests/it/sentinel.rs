//! Sentinel specs as Sentinel's own users write them, run for real through `prill run`
//! against the fake OpenAI server on 127.0.0.1: the verdicts Sentinel's run time would
//! give (text checks in any letter case, multi-line regexes), the forms Prill adds
//! (lists of texts, `case_sensitive`), `category` as a tag, and a framework that
//! cannot run on the test's provider refused before anything is sent.

use std::path::Path;
use std::process::Output;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;

use crate::support::{expected, prill, run_args, runtime, verdicts};

const SUITE: &str = r#"# A quickstart-style suite, with the checks Sentinel users write.
x-model: &model
  model: gpt-4o-mini
  provider: openai

name: sentinel users
tests:
  - name: hello in any case
    <<: *model
    category: qa
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: "hello"
      - must_not_contain: "GOODBYE"
  - name: hello in its exact case
    <<: *model
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: {text: "hello", case_sensitive: true}
  - name: every text of a list
    <<: *model
    category: qa
    inputs: {query: "Price and shipping"}
    assertions:
      - must_contain: ["price", "SHIPPING"]
      - must_not_contain: ["refund", "out of stock"]
  - name: a list with one text missing
    <<: *model
    inputs: {query: "Price and shipping"}
    assertions:
      - must_contain: ["price", "returns"]
  - name: multi-line json
    <<: *model
    category: code-generation
    inputs: {query: "Give me JSON"}
    assertions:
      - regex_match: "\\{.*\\}"
  - name: code after the first line
    <<: *model
    category: code-generation
    inputs: {query: "Write add"}
    assertions:
      - regex_match: "^def \\w+"
  - name: tools offered
    <<: *model
    tools: [web_search]
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: hello
"#;

/// `prill run suite.yaml extra...` in `dir` against `fake`; its output and report.
fn run_suite(dir: &Path, fake: &FakeOpenAi, extra: &[&str]) -> (Output, serde_json::Value) {
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    run_args(dir, "suite.yaml", extra, &env)
}

fn fake() -> (tokio::runtime::Runtime, FakeOpenAi) {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    fake.on_message("Say hello", Reply::text("Hello from JSON"));
    fake.on_message(
        "Price and shipping",
        Reply::text("Price: $20. Shipping is free."),
    );
    fake.on_message(
        "Give me JSON",
        Reply::text("Here it is:\n{\n  \"city\": \"Paris\"\n}\n"),
    );
    fake.on_message(
        "Write add",
        Reply::text("Sure:\ndef add(a, b):\n    return a + b\n"),
    );
    (rt, fake)
}

#[test]
fn sentinel_specs_get_the_verdicts_sentinel_gives() {
    let (_rt, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SUITE).unwrap();
    let (out, report) = run_suite(dir.path(), &fake, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "two tests fail: {stderr}");
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("hello in any case", "passed"),
            ("hello in its exact case", "failed"),
            ("every text of a list", "passed"),
            ("a list with one text missing", "failed"),
            ("multi-line json", "passed"),
            ("code after the first line", "passed"),
            ("tools offered", "passed"),
        ]),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "expected the output to contain \"price\" and \"returns\"; missing \"returns\""
        ),
        "{stderr}"
    );
    // A file without mistakes: not one warning.
    assert!(!stderr.contains("warning["), "{stderr}");
    // The test with a tool ran as one model call, with its tool offered.
    let hello_with_tools = fake
        .requests()
        .into_iter()
        .map(|r| r.json())
        .filter(|b| b["tools"].is_array())
        .count();
    assert_eq!(hello_with_tools, 1);
}

#[test]
fn a_framework_on_another_provider_is_refused_before_anything_is_sent() {
    let (_rt, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let spec = "name: suite\ntests:\n  - name: the Agents SDK on Claude\n    model: claude-haiku-4-5\n    provider: anthropic\n    framework: openai-sdk\n    tools: [web_search]\n    inputs: {query: \"Say hello\"}\n    assertions: [{must_contain: hello}]\n";
    std::fs::write(dir.path().join("suite.yaml"), spec).unwrap();
    let (out, _) = run_suite(dir.path(), &fake, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("suite.yaml:5:15: error[framework-provider]: tests[0].provider: framework `openai-sdk` runs on OpenAI's API, and `provider` names `anthropic`"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn category_is_a_tag_to_select_by() {
    let (_rt, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SUITE).unwrap();
    let (out, report) = run_suite(dir.path(), &fake, &["--tag", "qa"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("hello in any case", "passed"),
            ("every text of a list", "passed"),
        ])
    );
    let list = prill(dir.path(), &["list", "--format", "json", "suite.yaml"]);
    let plan: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(plan["cases"][0]["category"], "qa");
    assert_eq!(plan["cases"][0]["tags"], serde_json::json!(["qa"]));
    assert!(plan["cases"][1].get("category").is_none());
}
