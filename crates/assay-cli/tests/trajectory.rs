//! The trajectory assertions, run for real through `assay run` against the fake OpenAI
//! server on 127.0.0.1: a model answer with several tool calls in one turn, and
//! `tool_sequence`, `tool_args`, `must_not_call_tool`, the call counts and
//! `max_iterations_used` passing and failing on it.

use std::path::Path;
use std::process::{Command, Output};

use assay_testkit::providers::Reply;
use assay_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

const SUITE: &str = r#"name: trajectories
defaults:
  model: gpt-4o-mini
  provider: openai
  tools: [search, fetch, summarize, delete_user]
  inputs: {query: "Find a laptop"}
tests:
  - name: in order, others between
    assertions:
      - tool_sequence: [search, summarize]
  - name: strictly in order
    assertions:
      - tool_sequence: {tools: [search, fetch, summarize], strict: true}
  - name: strict with a call between
    assertions:
      - tool_sequence: {tools: [search, summarize], strict: true}
  - name: out of order
    assertions:
      - tool_sequence: [summarize, search]
  - name: arguments match
    assertions:
      - tool_args:
          tool: search
          args:
            query: {regex: "(?i)laptop"}
            limit: {schema: {type: integer, maximum: 10}}
            filters: {contains: "in_stock"}
  - name: arguments do not match
    assertions:
      - tool_args: {tool: search, args: {query: {contains: "phone"}}}
  - name: no forbidden call
    assertions:
      - must_not_call_tool: delete_user
  - name: a forbidden call
    assertions:
      - must_not_call_tool: [fetch]
  - name: counts
    assertions:
      - max_tool_calls: 3
      - min_tool_calls: 3
      - max_iterations_used: 1
  - name: too many calls
    assertions:
      - max_tool_calls: 2
"#;

fn run(dir: &Path, fake: &FakeOpenAi) -> (Output, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["run", "suite.yaml", "--json", "report.json"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", fake.base_url())
        .env("OPENAI_API_KEY", "sk-fake-openai")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let report = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, report)
}

/// Each unit's name and verdict, sorted by name.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["unit"]["name"].as_str().unwrap_or_default().to_owned(),
                u["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn trajectory_assertions_pass_and_fail_on_a_real_answer() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    fake.on_message(
        "Find a laptop",
        Reply::tool_call(
            "search",
            json!({"query": "Cheap LAPTOP", "limit": 5, "filters": ["in_stock", "new"]}),
        )
        .with_tool_call("fetch", json!({"url": "https://example.com/l1"}))
        .with_tool_call("summarize", json!({"text": "..."})),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SUITE).unwrap();
    let (out, report) = run(dir.path(), &fake);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let mut want: Vec<(String, String)> = [
        ("in order, others between", "passed"),
        ("strictly in order", "passed"),
        ("strict with a call between", "failed"),
        ("out of order", "failed"),
        ("arguments match", "passed"),
        ("arguments do not match", "failed"),
        ("no forbidden call", "passed"),
        ("a forbidden call", "failed"),
        ("counts", "passed"),
        ("too many calls", "failed"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    want.sort();
    assert_eq!(verdicts(&report), want, "{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    for message in [
        "tool_sequence: expected exactly the calls search → summarize, found search → fetch → summarize",
        "tool_sequence: expected calls in the order summarize → search, found search → fetch → summarize (no call to search after summarize)",
        r#"tool_args: expected a call to search with arguments matching {"query":{"contains":"phone"}}, found search({"query":"Cheap LAPTOP","limit":5,"filters":["in_stock","new"]})"#,
        "must_not_call_tool: expected no call to fetch, found search → fetch → summarize",
        "max_tool_calls: expected at most 2 tool calls, found 3: search → fetch → summarize",
    ] {
        assert!(all.contains(message), "missing {message:?} in:\n{all}");
    }
}
