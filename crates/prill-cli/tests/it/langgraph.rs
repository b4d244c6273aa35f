//! `framework: langgraph` run for real through `prill run` against the fake LangGraph
//! server on 127.0.0.1, which `prill.toml`'s `[frameworks.langgraph]` points at: a
//! ReAct run whose trajectory and `graph_steps` assertions pass and fail (its nodes
//! read from the run's `updates` stream), a run whose graph raises, an
//! assistant the server does not have, `max_iterations` exceeded, and a refused key.

use std::path::Path;
use std::process::Output;

use prill_testkit::langgraph::{Call, FakeLanggraph, GraphScript};
use serde_json::{Value, json};

use crate::support::{command, json_or_null, output_text};

const SUITE: &str = r#"name: langgraph agents
defaults:
  model: gpt-4o
  framework: langgraph
  tools: [search, price, stock]
  inputs: {system_prompt: "You sell laptops.", query: "Find a laptop"}
tests:
  - name: the researcher's trajectory
    framework_config: {assistant_id: researcher, max_iterations: 3, intermediate_steps: true}
    assertions:
      - tool_sequence: [search, price]
      - tool_args: {tool: search, args: {query: {regex: "(?i)laptop"}}}
      - must_call_tool: stock
      - max_iterations_used: 3
      - max_tool_calls: 3
      - must_contain: "999"
      - graph_steps: [agent, tools, agent, tools, agent]
      - graph_steps: {tools: [tools, agent], mode: superset}
  - name: the researcher's nodes out of order
    framework_config: {assistant_id: researcher}
    assertions:
      - graph_steps: {tools: [agent, agent, tools], mode: strict}
  - name: a forbidden call
    framework_config: {assistant_id: researcher, config: {model: openai/gpt-4.1, user: u1}}
    assertions:
      - must_not_call_tool: stock
  - name: a graph that raises
    framework_config: {assistant_id: broken}
    assertions: [{must_contain: "999"}]
  - name: a missing assistant
    framework_config: {assistant_id: reseacher}
    assertions: [{must_contain: "999"}]
  - name: too many model calls
    framework_config: {assistant_id: researcher, max_iterations: 1}
    assertions: [{must_contain: "999"}]
"#;

fn researcher() -> GraphScript {
    GraphScript::default()
        .call(vec![Call::new(
            "search",
            json!({"query": "cheap LAPTOP"}),
            json!({"hits": [{"id": 1}]}),
        )])
        .call(vec![
            Call::new("price", json!({"id": 1}), json!(999)),
            Call::failing("stock", json!({"id": 1}), "warehouse offline"),
        ])
        .answer("The X1 costs 999.")
}

/// `prill run suite.yaml` in `dir`, cleared of every provider variable and with
/// `LG_TEST_KEY` set to `key`; its output and JSON report (`null` when none).
fn run_suite(dir: &Path, key: &str) -> (Output, Value) {
    let mut cmd = command(dir, &["run", "suite.yaml", "--json", "report.json"]);
    prill_testkit::env::isolate(&mut cmd, &dir.join("scratch"));
    let out = cmd.env("LG_TEST_KEY", key).output().unwrap();
    (out, json_or_null(&dir.join("report.json")))
}

/// Each unit by name: its verdict, and its first sample's report.
fn units(report: &Value) -> Vec<(String, String, Value)> {
    let mut v: Vec<(String, String, Value)> = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["unit"]["name"].as_str().unwrap_or_default().to_owned(),
                u["verdict"].as_str().unwrap_or_default().to_owned(),
                u["samples"][0].clone(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn langgraph_assistants_run_on_the_configured_server() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeLanggraph::start());
    fake.expect_key("lg-secret-key-123")
        .graph("researcher", researcher())
        .graph(
            "broken",
            researcher().raise("ValueError", "the price API is down"),
        );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SUITE).unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!(
            "[frameworks.langgraph]\nurl = \"{}\"\napi_key_env = \"LG_TEST_KEY\"\n",
            fake.url()
        ),
    )
    .unwrap();
    let (out, report) = run_suite(dir.path(), "lg-secret-key-123");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}\n{stderr}");
    let units = units(&report);
    let verdicts: Vec<(&str, &str)> = units
        .iter()
        .map(|(n, v, _)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("a forbidden call", "failed"),
            ("a graph that raises", "errored"),
            ("a missing assistant", "errored"),
            ("the researcher's nodes out of order", "failed"),
            ("the researcher's trajectory", "passed"),
            ("too many model calls", "errored"),
        ],
        "{all}\n{report:#}"
    );
    for message in [
        "must_not_call_tool: expected no call to stock",
        "the LangGraph run of `broken` failed: ValueError: the price API is down",
        "has no assistant or graph `reseacher`",
        "did you mean `researcher`?",
        "did not answer within `max_iterations: 1` (sent as recursion_limit 3",
        "graph_steps: expected exactly the steps agent → agent → tools, found agent → tools → agent → tools → agent",
    ] {
        assert!(all.contains(message), "{message}\n{all}");
    }
    let kind = |name: &str| {
        report["units"]
            .as_array()
            .and_then(|units| units.iter().find(|u| u["unit"]["name"] == name))
            .map(|u| u["samples"][0]["interactions"][0]["error"]["kind"].clone())
    };
    assert_eq!(kind("too many model calls"), Some(json!("max_iterations")));
    assert_eq!(kind("a graph that raises"), Some(json!("protocol")));
    assert!(!all.contains("lg-secret-key-123"), "{all}");
    // What was sent: the inputs as messages, the model as `configurable.model`, the
    // recursion limit from max_iterations.
    let runs = fake.runs();
    let first = runs
        .iter()
        .find(|r| r["config"]["recursion_limit"] == 7)
        .expect("the run with max_iterations: 3");
    assert_eq!(first["assistant_id"], "researcher");
    assert_eq!(first["config"]["configurable"], json!({"model": "gpt-4o"}));
    assert_eq!(
        first["input"]["messages"],
        json!([
            {"type": "system", "content": "You sell laptops."},
            {"type": "human", "content": "Find a laptop"}
        ])
    );
    assert!(
        runs.iter().any(
            |r| r["config"]["configurable"] == json!({"model": "openai/gpt-4.1", "user": "u1"})
        ),
        "framework_config.config is the configurable, its own model kept: {runs:#?}"
    );

    // A refused key says which variable was read, never the key.
    let (out, _) = run_suite(dir.path(), "the-wrong-key-456");
    let all = output_text(&out);
    assert!(all.contains("check LG_TEST_KEY"), "{all}");
    assert!(!all.contains("the-wrong-key-456"), "{all}");
    drop(fake);
    rt.shutdown_background();
}

#[test]
fn no_langgraph_server_is_a_config_error_that_says_what_to_add() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.yaml"),
        "name: t\nmodel: gpt-4o\nframework: langgraph\ntools: [search]\ninputs: {query: hi}\nassertions: [{must_contain: x}]\n",
    )
    .unwrap();
    let (out, _) = run_suite(dir.path(), "");
    let all = output_text(&out);
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("add `[frameworks.langgraph]` with the server's `url` to prill.toml"),
        "{all}"
    );
}
