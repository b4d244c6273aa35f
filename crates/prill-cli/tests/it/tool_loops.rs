//! The built-in tool loop, end to end through `prill run`, against the fake OpenAI,
//! Anthropic, Bedrock and Ollama servers on 127.0.0.1: each fake plays a model that
//! calls two tools at once, then a tool that fails, then answers; one that never stops
//! calling tools; and one that calls a tool nobody answers. The fakes refuse a turn
//! whose calls were not all answered, or a result that answers no call, so every run
//! that passes sent each provider its tool results in its own shape. `tool_sequence`
//! holds the loop's calls, over all its turns, to every mode, by each evaluator's names.

use std::path::Path;

use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::support::{self, interaction, output_text, run, runtime, unit, write};

/// The suite, for a framework, a model and the line that names the provider (or none).
fn suite(framework: &str, model: &str, provider: &str) -> String {
    format!(
        r#"name: loops
defaults:
  model: {model}
  {provider}
  framework: {framework}
  tools:
    - name: search
      parameters: {{type: object, properties: {{q: {{type: string}}}}}}
    - name: weather
      parameters: {{type: object, properties: {{city: {{type: string}}}}}}
    - lookup
    - delete_user
  framework_config:
    tool_results:
      search: {{hits: ["Paris guide"]}}
      weather: {{by_args: [{{args: {{city: Paris}}, result: {{sky: sunny}}}}]}}
      lookup: {{error: "lookup service is down"}}
tests:
  - name: a trip over three turns
    inputs: {{query: "Plan a trip"}}
    assertions:
      - must_call_tool: [search, weather, lookup]
      - tool_sequence: [search, lookup]
      - tool_args: {{tool: weather, args: {{city: Paris}}}}
      - max_iterations_used: 3
      - max_tool_calls: 3
      - min_tokens: 12
      - must_contain: sunny
  - name: a trip held to two turns
    inputs: {{query: "Plan a trip"}}
    assertions:
      - max_iterations_used: 2
  - name: the trip in every mode
    inputs: {{query: "Plan a trip"}}
    assertions:
      - tool_sequence:
          tools: [{{tool: search, args: {{q: Paris}}}}, {{tool: weather, args: {{city: Paris}}}}, {{tool: lookup, args: {{id: 7}}}}]
          mode: strict
          args_mode: exact
      - tool_sequence: {{tools: [lookup, weather, search], mode: unordered}}
      - tool_sequence: {{tools: [{{tool: weather, args: {{city: {{regex: "^Par"}}}}}}, lookup], mode: IN_ORDER}}
      - tool_sequence: {{tools: [search, weather, lookup, delete_user], mode: subset}}
      - tool_sequence: {{tools: [lookup, search], mode: ANY_ORDER}}
      - tool_sequence: {{tools: [search, lookup, delete_user], mode: strict, score: f1, threshold: 0.6}}
  - name: the trip with the wrong lookup
    inputs: {{query: "Plan a trip"}}
    assertions:
      - tool_sequence: {{tools: [search, {{tool: lookup, args: {{id: 8}}}}], mode: in_order}}
  - name: a trip with its steps
    inputs: {{query: "Plan a trip"}}
    framework_config:
      intermediate_steps: true
      tool_results:
        search: {{hits: ["Paris guide"]}}
        weather: {{sky: sunny}}
        lookup: {{value: [1, 2]}}
    assertions:
      - must_call_tool: lookup
  - name: a loop that does not end
    inputs: {{query: "Loop forever"}}
    framework_config: {{max_iterations: 2, tool_results: {{search: {{hits: []}}}}}}
    assertions: [{{must_contain: done}}]
  - name: a tool with no result
    inputs: {{query: "Delete the user"}}
    assertions: [{{must_contain: done}}]
"#
    )
}

/// How many tool results a request carries, in any provider's shape: OpenAI's and
/// Ollama's `tool` messages, Anthropic's `tool_result` blocks, Bedrock's `toolResult`.
fn tool_results(body: &Value) -> usize {
    match body {
        Value::Object(map) => {
            let here = usize::from(
                map.get("role") == Some(&json!("tool"))
                    || map.get("type") == Some(&json!("tool_result"))
                    || map.contains_key("toolResult"),
            );
            here + map.values().map(tool_results).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(tool_results).sum(),
        _ => 0,
    }
}

/// The model every fake plays, by the user's message and the tool results so far.
fn script(body: &Value) -> Option<Reply> {
    let text = body.to_string();
    if text.contains("Plan a trip") {
        return Some(match tool_results(body) {
            0 => Reply::tool_call("search", json!({"q": "Paris"}))
                .with_tool_call("weather", json!({"city": "Paris"}))
                .usage(10, 5),
            2 => Reply::tool_call("lookup", json!({"id": 7})).usage(20, 5),
            _ => Reply::text("Paris is sunny: pack light.").usage(30, 5),
        });
    }
    if text.contains("Loop forever") {
        return Some(Reply::tool_call("search", json!({"q": "more"})));
    }
    if text.contains("Delete the user") {
        return Some(Reply::tool_call("delete_user", json!({"id": 42})));
    }
    None
}

/// Runs the suite and checks every verdict, the report's turns and trajectory, and
/// the errors; returns the bodies the fake received for the three-turn trip.
fn check_loops(dir: &Path, env: &[(&str, String)], connection: &str) {
    let (out, report) = run(dir, env);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let verdict = |name: &str| unit(&report, name)["verdict"].as_str().map(str::to_owned);
    assert_eq!(
        verdict("a trip over three turns").as_deref(),
        Some("passed"),
        "{all}"
    );
    assert_eq!(
        verdict("a trip held to two turns").as_deref(),
        Some("failed"),
        "{all}"
    );
    assert_eq!(
        verdict("the trip in every mode").as_deref(),
        Some("passed"),
        "{all}"
    );
    assert_eq!(
        verdict("the trip with the wrong lookup").as_deref(),
        Some("failed"),
        "{all}"
    );
    assert!(
        all.contains("tool_sequence: expected calls in the order search → lookup, found search → weather → lookup (no call to lookup after search); nearest: lookup call 1, argument `id` expected 8, found 7"),
        "{all}"
    );
    assert_eq!(
        verdict("a loop that does not end").as_deref(),
        Some("errored"),
        "{all}"
    );
    assert_eq!(
        verdict("a tool with no result").as_deref(),
        Some("errored"),
        "{all}"
    );
    assert_eq!(
        unit(&report, "a trip over three turns")["unit"]["connection"],
        connection
    );

    let trip = interaction(&report, "a trip over three turns");
    assert_eq!(trip["answer"], "Paris is sunny: pack light.");
    let turns = trip["turns"].as_array().expect("turns");
    let calls: Vec<(u64, u64)> = turns
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["tool_calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(calls, [(1, 2), (2, 1), (3, 0)]);
    assert_eq!(turns[1]["usage"]["input"], 20);
    assert_eq!(trip["usage"]["input"], 60, "the loop's total");
    assert_eq!(trip["usage"]["output"], 15, "the loop's total");
    let trajectory: Vec<(u64, &str, bool)> = trip["trajectory"]
        .as_array()
        .expect("trajectory")
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["tool"].as_str().unwrap(),
                t["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        trajectory,
        [
            (1, "search", false),
            (1, "weather", false),
            (2, "lookup", true)
        ]
    );
    assert_eq!(trip["trajectory"][1]["result"], json!({"sky": "sunny"}));
    assert_eq!(trip["trajectory"][1]["arguments"], json!({"city": "Paris"}));
    assert_eq!(trip["trajectory"][2]["result"], "lookup service is down");
    assert!(trip.get("steps").is_none(), "steps only when asked for");
    assert!(
        all.contains("trajectory of sample 0: turn 1: search, weather; turn 2: lookup (error) (3 model calls)"),
        "{all}"
    );

    let stepped = interaction(&report, "a trip with its steps");
    assert_eq!(
        verdict("a trip with its steps").as_deref(),
        Some("passed"),
        "{all}"
    );
    let steps = stepped["steps"].as_array().expect("steps");
    assert_eq!(
        roles(steps),
        [
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(steps[5]["content"], "[1,2]", "a list returned as one value");
    assert_eq!(steps[6]["content"], "Paris is sunny: pack light.");

    let looping = interaction(&report, "a loop that does not end");
    assert_eq!(looping["error"]["kind"], "max_iterations");
    let message = looping["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the model was still calling tools after 2 model calls (framework_config.max_iterations): turn 1: search({\"q\":\"more\"}), turn 2: search({\"q\":\"more\"})"),
        "{message}"
    );
    assert_eq!(
        looping["steps"].as_array().map(Vec::len),
        Some(5),
        "{looping}"
    );
    assert!(looping["checks"].as_array().unwrap().is_empty());

    let unanswered = interaction(&report, "a tool with no result");
    assert_eq!(unanswered["error"]["kind"], "config");
    let message = unanswered["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "the model called `delete_user` with {\"id\":42}, and no result is configured for it"
        ),
        "{message}"
    );
    assert!(all.contains("delete_user"), "{all}");
}

/// The messages of the last request that carried the failed lookup's result: the
/// third call of a trip of the shared `tool_results` (the trip with its steps answers
/// its lookup with a value).
fn last_trip(requests: Vec<prill_testkit::providers::RecordedRequest>) -> Vec<Value> {
    let last = requests
        .into_iter()
        .rev()
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .find(|b| b.to_string().contains("lookup service is down"))
        .expect("a third call");
    last["messages"].as_array().cloned().unwrap_or_default()
}

/// Each message's role.
fn roles(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn openai_sdk_runs_the_loop_on_openai() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    fake.respond_with(script);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        &suite("openai-sdk", "gpt-4o-mini", ""),
    );
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    check_loops(dir.path(), &env, "openai");
    let messages = last_trip(fake.requests());
    assert_eq!(
        roles(&messages),
        ["user", "assistant", "tool", "tool", "assistant", "tool"]
    );
    assert_eq!(
        messages[2]["tool_call_id"],
        messages[1]["tool_calls"][0]["id"]
    );
    assert_eq!(
        messages[5]["content"], "Error: lookup service is down",
        "OpenAI has no error flag: the text says so"
    );
}

#[test]
fn claude_sdk_runs_the_loop_on_anthropic() {
    let rt = runtime();
    let fake = rt.block_on(FakeAnthropic::start());
    fake.expect_key("sk-ant-fake");
    fake.respond_with(script);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        &suite("claude-sdk", "claude-3-5-haiku-latest", ""),
    );
    let env = [
        ("ANTHROPIC_BASE_URL", fake.base_url()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake".to_owned()),
    ];
    check_loops(dir.path(), &env, "anthropic");
    let messages = last_trip(fake.requests());
    assert_eq!(
        roles(&messages),
        ["user", "assistant", "user", "assistant", "user"]
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2, "both parallel results in one user turn");
    assert_eq!(
        results[0]["tool_use_id"],
        messages[1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "tool_use")
            .unwrap()["id"]
    );
    assert_eq!(messages[4]["content"][0]["is_error"], true);
}

#[test]
fn strands_runs_the_loop_on_bedrock_by_default() {
    let rt = runtime();
    let fake = rt.block_on(FakeBedrock::start());
    fake.expect_bearer("bedrock-fake-key");
    fake.respond_with(script);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        &suite("strands", "anthropic.claude-3-5-haiku-20241022-v1:0", ""),
    );
    let env = [
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.base_url()),
        ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-fake-key".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ];
    check_loops(dir.path(), &env, "bedrock");
    let messages = last_trip(fake.requests());
    let error = messages[4]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|b| b.get("toolResult"))
        .expect("a toolResult");
    assert_eq!(error["status"], "error");
}

#[test]
fn strands_runs_the_loop_on_the_provider_the_spec_names() {
    let rt = runtime();
    let fake = rt.block_on(FakeOllama::start());
    fake.models(&["llama3.1:8b"]);
    fake.respond_with(script);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        &suite("strands", "llama3.1:8b", "provider: ollama"),
    );
    check_loops(dir.path(), &[("OLLAMA_HOST", fake.base_url())], "ollama");
    assert_eq!(
        roles(&last_trip(fake.requests())),
        ["user", "assistant", "tool", "tool", "assistant", "tool"]
    );
}

/// `retry_policy` retries a model call the provider's own retries gave up on.
#[test]
fn retry_policy_retries_a_model_call_that_failed_for_a_while() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    for _ in 0..3 {
        fake.script(Reply::error(503, "overloaded"));
    }
    fake.default_reply(Reply::text("done"));
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        "name: flaky\nmodel: gpt-4o-mini\nframework: openai-sdk\ntools: [search]\nframework_config: {retry_policy: {max_retries: 1, backoff: constant}}\ninputs: {query: Hi}\nassertions: [{must_contain: done}]\n",
    );
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = run(dir.path(), &env);
    let all = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{all}\n{report}");
    assert_eq!(
        fake.requests().len(),
        4,
        "3 attempts, then the policy's retry"
    );

    for _ in 0..3 {
        fake.script(Reply::error(503, "overloaded"));
    }
    write(
        dir.path(),
        "suite.yaml",
        "name: flaky\nmodel: gpt-4o-mini\nframework: openai-sdk\ntools: [search]\ninputs: {query: Hi}\nassertions: [{must_contain: done}]\n",
    );
    let (out, report) = run(dir.path(), &env);
    assert_eq!(
        out.status.code(),
        Some(3),
        "without a policy the sample errors"
    );
    let message = interaction(&report, "flaky")["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("after 3 attempts"), "{message}");
}

/// A turn cut short by the token limit while it calls tools errors: the calls'
/// arguments may be cut too, so they are not run.
#[test]
fn a_turn_cut_short_while_calling_tools_errors() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    fake.default_reply(Reply::tool_call("search", json!({"q": "par"})).finish_reason("length"));
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "suite.yaml",
        "name: cut\nmodel: gpt-4o-mini\nframework: openai-sdk\ntools: [search]\nframework_config: {tool_results: {search: 1}}\ninputs: {query: Hi}\nassertions: [{must_call_tool: search}]\n",
    );
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = run(dir.path(), &env);
    assert_eq!(out.status.code(), Some(3), "{}", output_text(&out));
    let cut = interaction(&report, "cut");
    assert_eq!(cut["error"]["kind"], "config");
    assert!(
        cut["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("model call 1 was cut short by its token limit (stop reason `length`) while it was calling tools"),
        "{cut}"
    );
    assert_eq!(fake.requests().len(), 1, "no tool ran, no second call");
}

/// `tool_command` answers the calls `tool_results` does not: one program per sample,
/// started in the spec file's folder, every call of the loop on its stdin.
#[test]
fn a_tool_program_answers_what_tool_results_does_not() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake-openai");
    fake.respond_with(|body: &Value| {
        Some(match tool_results(body) {
            0 => {
                Reply::tool_call("search", json!({"q": "Paris"})).with_tool_call("clock", json!({}))
            }
            2 => Reply::tool_call("clock", json!({"zone": "CET"})),
            _ => Reply::text("It is noon in Paris."),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).unwrap();
    std::fs::write(specs.join("tools.sh"), "n=0\nwhile IFS= read -r line; do\n  n=$((n+1))\n  case \"$line\" in\n    *'\"tool\":\"clock\"'*) echo \"{\\\"result\\\": {\\\"time\\\": \\\"12:00\\\", \\\"call\\\": $n}}\" ;;\n    *) echo '{\"error\": \"no such tool\"}' ;;\n  esac\ndone\n")
    .unwrap();
    std::fs::write(specs.join("suite.yaml"), "name: clock\nmodel: gpt-4o-mini\nframework: openai-sdk\ntools: [search, clock]\nframework_config:\n  tool_results: {search: {hits: 1}}\n  tool_command: sh tools.sh\ninputs: {query: What time is it?}\nassertions:\n  - tool_sequence: {tools: [search, clock, clock], strict: true}\n  - must_contain: noon\n")
    .unwrap();
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake-openai".to_owned()),
    ];
    let (out, report) = support::run_file(dir.path(), "specs/suite.yaml", &env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{report}",
        output_text(&out)
    );
    let results: Vec<Value> = interaction(&report, "clock")["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["result"].clone())
        .collect();
    assert_eq!(
        results,
        [
            json!({"hits": 1}),
            json!({"time": "12:00", "call": 1}),
            json!({"time": "12:00", "call": 2}),
        ],
        "one program answered both calls of clock, in order"
    );
}
