//! What a model call says beyond its answer reaches the reports: the stop reason, the
//! token usage and the time to first token of every call in the JSON report, and a
//! truncated answer named next to the check that failed on it, in the JSON report and on
//! stderr. The model is Ollama's fake on 127.0.0.1, answering as Ollama does.

use prill_testkit::providers::Reply;
use prill_testkit::providers::ollama::FakeOllama;

use crate::support::{command, json, runtime};

const QUESTION: &str = "Name the capital of France and describe it.";

#[test]
fn a_truncated_answer_says_so_in_every_report() {
    let rt = runtime();
    let fake = rt.block_on(FakeOllama::start());
    fake.models(&["llama3.1:8b"]);
    fake.on_message(
        QUESTION,
        Reply::text("The capital of France is")
            .usage(14, 6)
            .finish_reason("length"),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        format!(
            "name: cut short\nmodel: llama3.1:8b\nprovider: ollama\nmodel_config: {{max_tokens: 6}}\n\
             inputs: {{query: \"{QUESTION}\"}}\nassertions:\n  - must_contain: Paris\n"
        ),
    )
    .unwrap();
    let out = command(dir.path(), &["run", "spec.yaml", "--json", "report.json"])
        .env("OLLAMA_HOST", fake.base_url())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the check fails: {stderr}");
    let note = "the answer was cut short by a token limit (stop reason `length`): raise max_tokens";
    assert!(stderr.contains(note), "{stderr}");
    let report = json(&dir.path().join("report.json"));
    let call = &report["units"][0]["samples"][0]["interactions"][0];
    assert_eq!(call["stop_reason"], "length", "{call}");
    assert_eq!(call["truncated"], true);
    assert_eq!(call["usage"]["input"], 14);
    assert_eq!(call["usage"]["output"], 6);
    assert_eq!(call["usage"]["answer"], 6);
    assert!(call["time_to_first_token"].as_f64().is_some(), "{call}");
    let message = call["checks"][0]["message"].as_str().unwrap();
    assert!(message.ends_with(&format!("({note})")), "{message}");
}
