//! `trajectory: otel` through `prill run`: a command agent is told where the run's
//! OTLP receiver listens (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), is sent each
//! interaction's `traceparent`, and its spans become the interaction's trajectory;
//! they are recorded in the cassette, so a replay with no agent checks the same calls.
//! With `--otlp`, the agent's spans are forwarded there too, under the run's.
//!
//! Two agents play it: a few lines of Python that post hand-made spans as OTLP JSON
//! (always run), and, with `PRILL_OTEL_AGENT` (CI sets it), a real OpenAI Agents SDK
//! agent with OpenTelemetry's instrumentation (`fixtures/otel-agent/agent.py`) against
//! the fake OpenAI server, exporting protobuf.

use std::path::Path;

use opentelemetry_proto::tonic::trace::v1::Span;
use prill_testkit::otlp::FakeOtlp;
use serde_json::Value;

use crate::support::{prill_isolated, run_args, run_file, runtime, stderr, text, unit, write};

/// A command agent that posts, for each request, the spans a tool-calling agent would
/// (a root under the context it was sent, then `search` and `weather`, sent out of
/// order) as OTLP JSON, unless the text says `silent`, and answers with the context.
/// With `SPANS_FILE` it appends them to that file as a line instead.
const HANDMADE: &str = r#"import json, os, sys, urllib.request
url = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
to_file = os.environ.get("SPANS_FILE")
def span(sid, parent, start, name, attrs):
    return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": name,
            "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
def tool(sid, start, name, args):
    return span(sid, "00000000000000aa", start, "execute_tool " + name,
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                 "gen_ai.tool.call.arguments": json.dumps(args)})
for line in sys.stdin:
    request = json.loads(line)
    context = request["metadata"].get("traceparent", "")
    if "silent" not in request["user_message"]["text"] and context:
        _, trace, parent, _ = context.split("-")
        spans = [tool("00000000000000bb", 200, "weather", {"city": "Paris"}),
                 tool("00000000000000cc", 100, "search", {"q": "Paris"}),
                 span("00000000000000aa", parent, 0, "Agent workflow", {})]
        body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
        if to_file:
            with open(to_file, "a") as f:
                f.write(body + "\n")
        else:
            post = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
            urllib.request.urlopen(post).read()
    answer = {"type": "AGENT_FRAMEWORK", "text": context, "chat_context": {}}
    print(json.dumps({"response": answer}), flush=True)
"#;

/// Every mode over the calls `search` then `weather`, and one that must fail.
const CASE: &str = r#"{
  agent = handmade
  trajectory = otel
  interactions = [
    {
      text = "plan a trip"
      response {
        trajectory {
          tool_sequence = { tools = [search, weather], mode = strict }
          must_call_tool = [weather]
          tool_args = { tool = weather, args = { city = Paris } }
        }
      }
    }
    {
      text = "plan it again"
      response { trajectory { tool_sequence = { tools = [weather, search], mode = any_order } } }
    }
    {
      text = "and again"
      response { trajectory { tool_sequence = { tools = [search, weather, book], mode = subset } } }
    }
    {
      text = "once more"
      response { trajectory { tool_sequence = { tools = [weather], mode = superset } } }
    }
    {
      text = "last time"
      response { trajectory { tool_sequence = { tools = [weather, search], mode = in_order } } }
    }
  ]
}
"#;

fn project(dir: &Path, config_extra: &str) {
    write(dir, "handmade.py", HANDMADE);
    write(
        dir,
        "prill.toml",
        &format!("[agents.handmade]\ncommand = [\"python3\", \"handmade.py\"]\n{config_extra}"),
    );
    write(dir, "trip.hocon", CASE);
}

/// The project with one case of one interaction, `one.hocon`, that must call `search`.
fn one_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "");
    write(
        dir.path(),
        "one.hocon",
        "{ agent = handmade, trajectory = otel, interactions = [ { text = \"trip\", response { trajectory { must_call_tool = [search] } } } ] }\n",
    );
    dir
}

fn checks(report: &Value) -> Vec<(String, String)> {
    unit(report, "trip")["samples"][0]["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["checks"].as_array().unwrap().clone())
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_command_agents_spans_are_its_trajectory_and_replay_from_the_cassette() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "");
    let (out, report) = run_args(dir.path(), "trip.hocon", &["--record", "tapes"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "one mode fails: {err}");
    assert!(
        err.contains("spans: receiving agents' spans on http://127.0.0.1:"),
        "{err}"
    );
    let got = checks(&report);
    let failed: Vec<&str> = got
        .iter()
        .filter(|(_, s)| s != "passed")
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(
        failed,
        ["interactions[4].response.trajectory.tool_sequence"],
        "{got:?}"
    );
    let first = &unit(&report, "trip")["samples"][0]["interactions"][0];
    let tools: Vec<&str> = first["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["search", "weather"], "in the order they started");
    // Each interaction was sent a context of its own, in one trace.
    let contexts: Vec<String> = unit(&report, "trip")["samples"][0]["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["answer"].as_str().unwrap().to_owned())
        .collect();
    let traces: std::collections::BTreeSet<&str> = contexts
        .iter()
        .map(|c| c.split('-').nth(1).unwrap())
        .collect();
    let parents: std::collections::BTreeSet<&str> = contexts
        .iter()
        .map(|c| c.split('-').nth(2).unwrap())
        .collect();
    assert_eq!((traces.len(), parents.len()), (1, 5), "{contexts:?}");

    // The replay: no agent to run, the same verdicts from the recorded spans.
    write(
        dir.path(),
        "prill.toml",
        "[agents.handmade]\ncommand = [\"/nonexistent/agent\"]\n",
    );
    let (again, replayed) = run_args(dir.path(), "trip.hocon", &["--replay", "tapes"], &[]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert_eq!(checks(&replayed), got);
}

#[test]
fn spans_an_agent_appends_to_a_file_are_read_as_sent() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "[otel]\nspan_files = [\"spans/agent.jsonl\"]\n");
    let config = std::fs::read_to_string(dir.path().join("prill.toml")).unwrap();
    write(
        dir.path(),
        "prill.toml",
        &config.replace(
            "handmade.py\"]\n",
            "handmade.py\"]\nenv = { SPANS_FILE = \"spans/agent.jsonl\" }\n",
        ),
    );
    // What an earlier run left is not read again.
    write(
        dir.path(),
        "spans/agent.jsonl",
        "{\"resourceSpans\": []}\nnot otlp\n",
    );
    let (out, report) = run_file(dir.path(), "trip.hocon", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let failed: Vec<(String, String)> = checks(&report)
        .into_iter()
        .filter(|(_, s)| s != "passed")
        .collect();
    assert_eq!(
        failed,
        [(
            "interactions[4].response.trajectory.tool_sequence".to_owned(),
            "failed".to_owned()
        )]
    );
    let written = std::fs::read_to_string(dir.path().join("spans/agent.jsonl")).unwrap();
    assert_eq!(
        written.lines().count(),
        7,
        "the agent wrote there, not to the receiver"
    );
}

#[test]
fn an_agent_that_sends_no_spans_errors_naming_the_receiver() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "[otel]\nwait_in_seconds = 0.5\n");
    write(
        dir.path(),
        "quiet.hocon",
        "{ agent = handmade, trajectory = otel, interactions = [ { text = \"silent\", response { trajectory { must_not_call_tool = [delete_user] } } } ] }\n",
    );
    let (out, report) = run_file(dir.path(), "quiet.hocon", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "an error, not a pass: {err}");
    let interaction = &unit(&report, "quiet")["samples"][0]["interactions"][0];
    let message = interaction["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("no span under this interaction's trace context")
            && message.contains("/v1/traces")
            && message.contains("within 0.5 s"),
        "{message}"
    );
}

#[test]
fn the_agents_spans_hang_under_the_exported_interaction_span() {
    let rt = runtime();
    let fake = rt.block_on(FakeOtlp::start());
    let dir = one_case();
    let (out, report) = run_args(dir.path(), "one.hocon", &["--otlp", &fake.url()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let context = unit(&report, "one")["samples"][0]["interactions"][0]["answer"]
        .as_str()
        .unwrap()
        .to_owned();
    let spans: Vec<Span> = fake
        .batches()
        .into_iter()
        .flat_map(|b| b.resource_spans)
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect();
    let interaction = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .expect("an interaction span");
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        context,
        format!(
            "00-{}-{}-01",
            hex(&interaction.trace_id),
            hex(&interaction.span_id)
        ),
        "the context sent is the exported interaction span's"
    );
    // The agent's own spans were forwarded there too, under that span.
    let root = spans
        .iter()
        .find(|s| s.name == "Agent workflow")
        .expect("the agent's spans reach the run's receiver");
    assert_eq!(root.trace_id, interaction.trace_id);
    assert_eq!(root.parent_span_id, interaction.span_id);
    let tools = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool") && s.parent_span_id == root.span_id)
        .count();
    assert_eq!(tools, 2, "the agent's tool spans, under its root");
}

#[test]
fn agents_spans_that_cannot_be_forwarded_fail_the_run() {
    let rt = runtime();
    let fake = rt.block_on(FakeOtlp::start());
    // The agent's batch, forwarded during the run, is refused whenever it comes (and a
    // 400 is not retried); the run's own spans are taken.
    fake.refuse_batches_with("Agent workflow", 400);
    let dir = one_case();
    let out = prill_isolated(
        dir.path(),
        &["run", "one.hocon", "--otlp", &fake.url()],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("could not be forwarded to the run's receiver"),
        "{err}"
    );
}

/// The real OpenAI Agents SDK agent: a model (the fake OpenAI) that calls
/// `get_weather` and `add` at once, then answers; or calls `fail`, then answers.
#[test]
#[cfg_attr(
    not(prill_otel_agent),
    ignore = "needs the OpenAI Agents SDK venv: set PRILL_OTEL_AGENT to its python (.ci/otel-agent/venv makes it; .ci/run does)"
)]
fn a_real_openai_agents_sdk_agents_spans_are_checked_in_every_mode() {
    use prill_testkit::providers::Reply;
    use prill_testkit::providers::openai::FakeOpenAi;
    use serde_json::json;

    let python = std::env::var("PRILL_OTEL_AGENT").expect("PRILL_OTEL_AGENT");
    let agent = crate::support::fixtures("otel-agent").join("agent.py");
    let rt = runtime();
    let model = rt.block_on(FakeOpenAi::start());
    model.record_requests(true);
    model.respond_with(|body: &Value| {
        let text = body.to_string();
        let tool_results = body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        Some(if text.contains("please fail") {
            match tool_results {
                0 => Reply::tool_call("fail", json!({"reason": "boom"})).usage(9, 4),
                _ => Reply::text("It failed: boom.").usage(12, 4),
            }
        } else {
            match tool_results {
                0 => Reply::tool_call("get_weather", json!({"city": "Paris"}))
                    .with_tool_call("add", json!({"a": 2, "b": 3}))
                    .usage(11, 7),
                _ => Reply::text("It is sunny in Paris, and 2 + 3 = 5.").usage(20, 9),
            }
        })
    });
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "prill.toml",
        &format!(
            "[agents.sdk_agent]\ncommand = [{python:?}, {agent:?}]\nenv = {{ OPENAI_BASE_URL = \"{}\", OPENAI_API_KEY = \"sk-test\" }}\n",
            model.base_url(),
            agent = agent.display().to_string(),
        ),
    );
    write(
        dir.path(),
        "sdk.hocon",
        r#"{
  agent = sdk_agent
  trajectory = otel
  interactions = [
    {
      text = "weather in Paris, and 2 plus 3"
      response {
        text { keywords = ["sunny"] }
        trajectory {
          tool_sequence = { tools = [{ tool = get_weather, args = { city = Paris } }, { tool = add, args = { a = 2, b = 3 } }], mode = strict, args_mode = exact }
          must_not_call_tool = [fail]
          max_tool_calls = 2
        }
      }
    }
    { text = "weather in Paris, and 2 plus 3", response { trajectory { tool_sequence = { tools = [add, get_weather], mode = any_order } } } }
    { text = "weather in Paris, and 2 plus 3", response { trajectory { tool_sequence = { tools = [get_weather, add, fail], mode = subset } } } }
    { text = "weather in Paris, and 2 plus 3", response { trajectory { tool_sequence = { tools = [add], mode = superset } } } }
    { text = "weather in Paris, and 2 plus 3", response { trajectory { tool_sequence = { tools = [get_weather, add], mode = in_order, score = f1, threshold = 1 } } } }
    { text = "weather in Paris, and 2 plus 3", response { trajectory { tool_sequence = { tools = [add, get_weather], mode = strict } } } }
    { text = "please fail", response { trajectory { must_call_tool = [fail] } } }
  ]
}
"#,
    );
    let (out, report) = run_file(dir.path(), "sdk.hocon", &[]);
    let err = stderr(&out);
    let sample = &unit(&report, "sdk")["samples"][0];
    let interactions = sample["interactions"].as_array().unwrap();
    assert_eq!(interactions.len(), 7, "{err}");
    let statuses: Vec<String> = interactions
        .iter()
        .map(|i| {
            assert!(i["error"].is_null(), "{i:#}");
            let all: Vec<&str> = i["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["status"].as_str().unwrap())
                .collect();
            all.join(",")
        })
        .collect();
    assert_eq!(
        statuses,
        [
            "passed,passed,passed,passed",
            "passed",
            "passed",
            "passed",
            "passed",
            "failed",
            "passed"
        ],
        "{err}"
    );
    let first = &interactions[0];
    let tools: Vec<&str> = first["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["get_weather", "add"]);
    assert_eq!(first["trajectory"][0]["result"], "sunny in Paris");
    assert_eq!(
        first["usage"]["input"], 31,
        "the model calls' usage: {first:#}"
    );
    let failed = &interactions[6]["trajectory"][0];
    assert_eq!(failed["is_error"], true, "{failed:#}");
    // The model was called twice per interaction, and nothing went to OpenAI's tracing.
    assert_eq!(model.requests().len(), 14);
}
