//! The trajectory assertions, run for real through `prill run` against the fake OpenAI
//! server on 127.0.0.1: a model answer with several tool calls in one turn, and
//! `tool_sequence`, `tool_args`, `must_not_call_tool`, the call counts and
//! `max_iterations_used` passing and failing on it.

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::json;

use crate::support::{expected, run, runtime, verdicts};

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

#[test]
fn trajectory_assertions_pass_and_fail_on_a_real_answer() {
    let rt = runtime();
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
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = run(dir.path(), &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let want = expected(&[
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
    ]);
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
