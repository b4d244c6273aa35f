//! Record and replay through the real binary (`docs/cassettes.md`): a run recorded
//! with `--record DIR` and replayed with `--replay DIR` gives the same JSON report,
//! timings aside, with every agent and provider URL pointing at a loopback port where
//! nothing listens (so the replay cannot have used the network); a `success_ratio` case
//! replays the same mix of passes and failures by sample index; a request with no
//! recording is an error (`no_cassette`) that shows how it differs; the flags are
//! checked before anything runs; the run line of `--jsonl` and `prill runs` say the
//! run was recorded or replayed.

use std::path::Path;
use std::process::Output;

use prill_testkit::providers::Reply;
use prill_testkit::providers::anthropic::FakeAnthropic;
use prill_testkit::providers::bedrock::FakeBedrock;
use prill_testkit::providers::ollama::FakeOllama;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::support::{fixtures, json_or_null, prill_isolated, runtime, text, verdicts};

/// A key distinctive enough to grep the cassettes for.
const OPENAI_KEY: &str = "sk-cassette-openai-7f3e9a1c";
/// Likewise for Anthropic.
const ANTHROPIC_KEY: &str = "sk-ant-cassette-5b2d8e4f";

/// `http://127.0.0.1:<port>` of a port that was free a moment ago and where nothing
/// listens now.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// `prill run <args>` in `dir` with only `env` of the provider variables; its output
/// and the JSON report it wrote to `report` (`null` when none was).
fn run_json(dir: &Path, report: &str, args: &[&str], env: &[(&str, String)]) -> (Output, Value) {
    let mut all = vec!["run", "--json", report];
    all.extend_from_slice(args);
    let out = prill_isolated(dir, &all, env);
    (out, json_or_null(&dir.join(report)))
}

/// The report with only what legitimately differs between a run and its replay taken
/// out: how long things took, and so the order in which units and samples finished
/// (units are sorted by case id and connection, samples by index), and where each
/// verdict came from (`source`, each sample's `cassettes` counts: checked apart by
/// [`replayed_whole`]). Everything else (verdicts, answers, checks, messages, sample
/// indices, errors) must be identical.
fn timeless(mut report: Value) -> Value {
    if let Some(units) = report["units"].as_array_mut() {
        for unit in units.iter_mut() {
            if let Some(unit) = unit.as_object_mut() {
                unit.remove("source");
            }
            for sample in unit["samples"].as_array_mut().into_iter().flatten() {
                if let Some(sample) = sample.as_object_mut() {
                    sample.remove("cassettes");
                }
            }
        }
        units.sort_by_key(|u| {
            (
                u["unit"]["case_id"].to_string(),
                u["unit"]["connection"].to_string(),
            )
        });
        for unit in units {
            if let Some(samples) = unit["samples"].as_array_mut() {
                samples.sort_by_key(|s| s["index"].as_u64());
            }
        }
    }
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["duration", "time_to_first_token"] {
                    if map.get(key).is_some_and(|v| v.is_number() || v.is_null()) {
                        map.remove(key);
                    }
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut report);
    report
}

/// Checks that every unit of `replayed` says it was replayed, with nothing recorded,
/// and that no unit of `recorded` says so.
fn replayed_whole(recorded: &Value, replayed: &Value) {
    for unit in recorded["units"].as_array().into_iter().flatten() {
        assert!(
            unit.get("source").is_none(),
            "a live unit has no source: {unit}"
        );
    }
    for unit in replayed["units"].as_array().into_iter().flatten() {
        assert_eq!(unit["source"], "replayed", "{unit}");
        for sample in unit["samples"].as_array().into_iter().flatten() {
            assert_eq!(sample["cassettes"]["recorded"], 0, "{sample}");
        }
    }
}

/// Every cassette file's text under `dir`, joined.
fn cassette_text(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            all.push_str(&std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    all
}

/// Records `args` with `--demo` into `cassettes`, then replays them (with
/// `replay_only` too) with the neuro-san server at a dead port: both reports, and the
/// replay's output.
fn demo_round_trip(dir: &Path, args: &[&str], replay_only: &[&str]) -> (Value, Value, Output) {
    let cassettes = dir.join("cassettes");
    let cassettes = cassettes.to_str().unwrap();
    let mut record = vec!["--demo", "--record", cassettes];
    record.extend_from_slice(args);
    let (out, recorded) = run_json(dir, "recorded.json", &record, &[]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "the recording runs: {}",
        text(&out.stderr)
    );
    assert!(
        !cassette_text(&dir.join("cassettes")).is_empty(),
        "the recording wrote cassettes: {}",
        text(&out.stderr)
    );
    let server = dead_url();
    let mut replay = vec!["--server", &server, "--replay", cassettes];
    replay.extend_from_slice(replay_only);
    replay.extend_from_slice(args);
    let (out, replayed) = run_json(dir, "replayed.json", &replay, &[]);
    (recorded, replayed, out)
}

#[test]
fn the_quickstart_replays_with_no_server_and_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = fixtures("quickstart");
    let quickstart = quickstart.to_str().unwrap();
    let (recorded, replayed, out) = demo_round_trip(
        dir.path(),
        // One sample at a time: `math`'s 2/3 stops after the same two samples in both.
        &["-j", "1", "--connection", "http,https,mcp", quickstart],
        &[],
    );
    assert_eq!(recorded["summary"]["passed"], 9, "{recorded}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the replay passes as the recording did: {}",
        text(&out.stderr)
    );
    assert_eq!(timeless(replayed), timeless(recorded));
}

/// `prill init`'s project recorded with `--demo` replays every connection, the demo's
/// in-process `direct` included: without `--demo` (no demo agent at all, where it
/// exited 3), and with it, its `direct` answered from the cassettes and not live (an
/// answer edited in the cassette is the answer the check sees).
#[test]
fn an_init_project_records_and_replays_every_connection_the_demo_included() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill_isolated(dir.path(), &["init"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // One sample at a time: the flaky case stops after the same samples in both.
    let (recorded, replayed, out) =
        demo_round_trip(dir.path(), &["-j", "1"], &["--replay-latency", "zero"]);
    assert_eq!(recorded["summary"]["failed"], 0, "{recorded}");
    assert!(
        recorded["units"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["unit"]["connection"] == "direct"),
        "the project has a direct case"
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(timeless(replayed), timeless(recorded.clone()));

    // The demo's own answers, edited in the cassette: a replay with `--demo` reads them.
    let cassettes = dir.path().join("cassettes");
    let mut edited = 0;
    for entry in std::fs::read_dir(&cassettes).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text
            .lines()
            .map(|line| {
                if line.contains("\"connector\":\"demo\"") && line.contains("Beatles") {
                    edited += 1;
                    line.replace("Beatles", "Monkees")
                } else {
                    line.to_owned()
                }
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    assert!(edited > 0, "the direct exchanges are in the cassettes");
    let cassettes = cassettes.to_str().unwrap();
    let (out, report) = run_json(
        dir.path(),
        "edited.json",
        &["--demo", "--replay", cassettes, "--replay-latency", "zero"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed: Vec<&Value> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["verdict"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert_eq!(failed[0]["unit"]["connection"], "direct");
}

#[test]
fn samples_replay_by_index_with_the_same_mix_of_passes_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("flaky.hocon"),
        r#"{
  agent = flaky
  connections = [http]
  success_ratio = "3/6"
  interactions = [
    {
      text = "roll"
      sly_data { seed = 11, modes { wrong = 0.5 } }
      response { text { keywords = "ok" } }
    }
  ]
}
"#,
    )
    .unwrap();
    // One sample at a time: the samples that run before the verdict is decided are the
    // same in both runs.
    let (recorded, replayed, out) = demo_round_trip(dir.path(), &["-j", "1", "flaky.hocon"], &[]);
    let statuses = |report: &Value| -> Vec<(u64, String)> {
        report["units"][0]["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    s["index"].as_u64().unwrap(),
                    s["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect()
    };
    let mix = statuses(&recorded);
    assert!(
        mix.iter().any(|(_, s)| s == "passed") && mix.iter().any(|(_, s)| s == "failed"),
        "the seed gives a mix: {mix:?}"
    );
    assert_eq!(statuses(&replayed), mix, "{}", text(&out.stderr));
    assert_eq!(timeless(replayed), timeless(recorded));
}

const SUITE: &str = r#"name: cassettes
tests:
  - name: openai says hello
    model: gpt-4o-mini
    provider: openai
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: "hello"
  - name: openai prices
    model: gpt-4o-mini
    provider: openai
    inputs: {query: "Price and shipping"}
    assertions:
      - must_contain: ["price", "returns"]
  - name: anthropic says hello
    model: claude-3-5-haiku-latest
    provider: anthropic
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: "hello"
"#;

#[test]
fn a_sentinel_suite_replays_its_providers_with_no_network_and_no_key_in_the_cassettes() {
    let rt = runtime();
    let openai = rt.block_on(FakeOpenAi::start());
    openai.expect_key(OPENAI_KEY);
    openai.on_message("Say hello", Reply::text("Hello from the recording"));
    openai.on_message(
        "Price and shipping",
        Reply::text("Price: $20. Shipping is free."),
    );
    let anthropic = rt.block_on(FakeAnthropic::start());
    anthropic.expect_key(ANTHROPIC_KEY);
    anthropic.on_message("Say hello", Reply::text("Hello from Claude's recording"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SUITE).unwrap();
    let live = [
        ("OPENAI_BASE_URL", openai.base_url()),
        ("OPENAI_API_KEY", OPENAI_KEY.to_owned()),
        ("ANTHROPIC_BASE_URL", anthropic.base_url()),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.to_owned()),
    ];
    let (out, recorded) = run_json(
        dir.path(),
        "recorded.json",
        &["--record", "cassettes", "suite.yaml"],
        &live,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "one test fails: {}",
        text(&out.stderr)
    );
    let cassettes = cassette_text(&dir.path().join("cassettes"));
    // The answers stream in pieces: each piece is in the cassette as it came.
    assert!(
        cassettes.contains(r#"\"content\":\"recording\""#),
        "{cassettes}"
    );
    assert!(
        cassettes.contains(r#"\"text\":\"Claude's \""#),
        "{cassettes}"
    );
    assert!(!cassettes.contains(OPENAI_KEY) && !cassettes.contains(ANTHROPIC_KEY));
    let sent = openai.requests().len() + anthropic.requests().len();
    // The replay: every provider at a dead port, and keys that were never recorded.
    let dead = [
        ("OPENAI_BASE_URL", format!("{}/v1", dead_url())),
        ("OPENAI_API_KEY", "sk-replay-only".to_owned()),
        ("ANTHROPIC_BASE_URL", dead_url()),
        ("ANTHROPIC_API_KEY", "sk-ant-replay-only".to_owned()),
    ];
    let (out, replayed) = run_json(
        dir.path(),
        "replayed.json",
        &[
            "--replay",
            "cassettes",
            "--replay-latency",
            "zero",
            "suite.yaml",
        ],
        &dead,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(timeless(replayed), timeless(recorded));
    assert_eq!(
        openai.requests().len() + anthropic.requests().len(),
        sent,
        "the replay sent nothing"
    );
}

#[test]
fn a_gist_check_replays_its_judge() {
    let rt = runtime();
    let judge = rt.block_on(FakeOpenAi::start());
    judge.expect_key(OPENAI_KEY);
    judge.default_reply(Reply::structured(
        json!({"verdict": "pass", "reason": "it names the Beatles"}),
    ));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("trivia.hocon"),
        r#"{
  agent = music_nerd_pro
  connections = [http]
  interactions = [
    {
      text = "Who did Yellow Submarine?"
      response { text { gist = "Names the band that recorded Yellow Submarine" } }
    }
  ]
}
"#,
    )
    .unwrap();
    let cassettes = dir.path().join("cassettes");
    let cassettes = cassettes.to_str().unwrap();
    let judged = [
        "--judge",
        "openai:gpt-4o-mini",
        "--no-cache",
        "trivia.hocon",
    ];
    let live = [
        ("OPENAI_BASE_URL", judge.base_url()),
        ("OPENAI_API_KEY", OPENAI_KEY.to_owned()),
    ];
    let mut record = vec!["--demo", "--record", cassettes];
    record.extend_from_slice(&judged);
    let (out, recorded) = run_json(dir.path(), "recorded.json", &record, &live);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let server = dead_url();
    let dead = [
        ("OPENAI_BASE_URL", format!("{}/v1", dead_url())),
        ("OPENAI_API_KEY", "sk-replay-only".to_owned()),
    ];
    let mut replay = vec!["--server", &server, "--replay", cassettes];
    replay.extend_from_slice(&judged);
    let (out, replayed) = run_json(dir.path(), "replayed.json", &replay, &dead);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    replayed_whole(&recorded, &replayed);
    assert_eq!(timeless(replayed), timeless(recorded));
}

#[test]
fn a_request_with_no_recording_is_an_error_that_shows_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let case = |text: &str| {
        format!(
            "agent: echo\nconnections: [http]\ninteractions:\n  - text: \"{text}\"\n    response:\n      text: {{keywords: \"{text}\"}}\n"
        )
    };
    std::fs::write(
        dir.path().join("echo.yaml"),
        case("Hello from the recording"),
    )
    .unwrap();
    let (out, _) = run_json(
        dir.path(),
        "recorded.json",
        &["--demo", "--record", "cassettes", "echo.yaml"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The test changes its prompt: the recording no longer answers it.
    std::fs::write(dir.path().join("echo.yaml"), case("Hello after the change")).unwrap();
    let server = dead_url();
    let (out, replayed) = run_json(
        dir.path(),
        "replayed.json",
        &["--server", &server, "--replay", "cassettes", "echo.yaml"],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "an error, not a failure: {stderr}"
    );
    let unit = &replayed["units"][0];
    assert_eq!(unit["verdict"], "errored", "{replayed}");
    let error = unit["samples"][0]["interactions"][0]["error"].clone();
    let error = if error.is_null() {
        unit["samples"][0]["error"].clone()
    } else {
        error
    };
    assert_eq!(error["kind"], "no_cassette", "{replayed}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Hello from the recording") && message.contains("Hello after the change"),
        "the message shows the recorded and the asked text: {message}"
    );
}

#[test]
fn replay_latency_zero_runs() {
    let dir = tempfile::tempdir().unwrap();
    let echo = fixtures("quickstart/echo.yaml");
    let echo = echo.to_str().unwrap();
    let (recorded, replayed, out) = demo_round_trip(
        dir.path(),
        &["--connection", "http", echo],
        &["--replay-latency", "zero"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(timeless(replayed), timeless(recorded));
}

#[test]
fn cassettes_that_cannot_be_used_stop_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let echo = fixtures("quickstart/echo.yaml");
    let echo = echo.to_str().unwrap();
    // A folder that is not there.
    let (out, report) = run_json(dir.path(), "r.json", &["--replay", "missing", echo], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--replay missing: there is no such folder"),
        "{stderr}"
    );
    assert!(
        report["units"].as_array().is_none_or(Vec::is_empty),
        "{report}"
    );
    // A line that is not an exchange names its file and line.
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("case.jsonl"), "{\"cassette_version\": 1}\n").unwrap();
    let (out, _) = run_json(dir.path(), "r.json", &["--replay", "broken", echo], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("case.jsonl:1: not a cassette exchange"),
        "{stderr}"
    );
    // `--record` into a folder that holds cassettes, which it would mix with.
    let held = dir.path().join("held");
    std::fs::create_dir(&held).unwrap();
    let exchange = json!({
        "cassette_version": 1,
        "request": {"connector": "neuro-san-http", "endpoint": "POST /x", "body": null},
        "response": {"status": 200, "chunks": []}
    });
    std::fs::write(held.join("case.jsonl"), format!("{exchange}\n")).unwrap();
    let (out, _) = run_json(
        dir.path(),
        "r.json",
        &["--demo", "--record", "held", echo],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("already holds cassettes"), "{stderr}");
    assert!(stderr.contains("--re-record"), "{stderr}");
    // Two modes at once, and a pace without a replay, are usage errors.
    let (out, _) = run_json(
        dir.path(),
        "r.json",
        &["--record", "a", "--replay", "b", echo],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let (out, _) = run_json(
        dir.path(),
        "r.json",
        &["--record", "a", "--replay-latency", "zero", echo],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn the_run_line_says_where_the_cassettes_are_and_how_they_were_used() {
    let dir = tempfile::tempdir().unwrap();
    let echo = fixtures("quickstart/echo.yaml");
    let echo = echo.to_str().unwrap();
    let out = prill_isolated(
        dir.path(),
        &[
            "run",
            "--demo",
            "--record",
            "tapes",
            "--jsonl",
            "run.jsonl",
            "--connection",
            "http",
            echo,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stream = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    let run_line: Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
    assert_eq!(
        run_line["settings"]["cassettes"],
        json!({"mode": "record", "dir": "tapes"}),
        "{run_line}"
    );
    // `prill runs` shows it too.
    let listed = prill_isolated(dir.path(), &["runs"], &[]);
    let listed = text(&listed.stdout);
    assert_eq!(
        listed.matches("cassettes: record tapes").count(),
        1,
        "{listed}"
    );
    // A run with no cassette flag has none.
    let out = prill_isolated(
        dir.path(),
        &[
            "run",
            "--demo",
            "--jsonl",
            "plain.jsonl",
            "--connection",
            "http",
            echo,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stream = std::fs::read_to_string(dir.path().join("plain.jsonl")).unwrap();
    let run_line: Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
    assert!(
        run_line["settings"].get("cassettes").is_none(),
        "{run_line}"
    );
}

/// A command agent (`docs/direct-agents.md`): it counts the turns of its conversation
/// in `chat_context` and answers with an intermediate line first.
const COMMAND_AGENT: &str = r#"import json, sys
for line in sys.stdin:
    request = json.loads(line)
    turn = (request.get("chat_context") or {}).get("turn", 0) + 1
    text = request["user_message"]["text"]
    print(json.dumps({"response": {"type": "AI", "text": "thinking about " + text}}), flush=True)
    print(json.dumps({"response": {"type": "AGENT_FRAMEWORK", "text": "turn %d: %s" % (turn, text),
                                    "chat_context": {"turn": turn}, "sly_data": {"turns": turn}}}), flush=True)
"#;

#[test]
fn a_command_agent_replays_without_being_started() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.py"), COMMAND_AGENT).unwrap();
    let config = |command: &str| {
        std::fs::write(
            dir.path().join("prill.toml"),
            format!("[agents.counter]\ncommand = {command}\n"),
        )
        .unwrap();
    };
    std::fs::write(
        dir.path().join("counter.hocon"),
        r#"{
  agent = counter
  connections = [direct]
  success_ratio = "2/2"
  interactions = [
    { text = "hello", response { text { keywords = "turn 1" }, sly_data { turns { value = 1 } } } }
    { text = "again", response { text { keywords = "turn 2: again" }, sly_data { turns { value = 2 } } } }
    { text = "third", response { text { keywords = "turn 9" } } }
  ]
}
"#,
    )
    .unwrap();
    config(r#"["python3", "agent.py"]"#);
    let (out, recorded) = run_json(
        dir.path(),
        "recorded.json",
        // One sample at a time: the first fails and decides the verdict, so the second
        // never runs, in the recording and in the replay alike.
        &["-j", "1", "--record", "cassettes", "counter.hocon"],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the third turn fails: {}",
        text(&out.stderr)
    );
    assert!(cassette_text(&dir.path().join("cassettes")).contains("turn 2: again"));
    // The replay: a command that cannot be started, so any answer is the recording's.
    config(r#"["/nonexistent/prill-agent"]"#);
    let (out, replayed) = run_json(
        dir.path(),
        "replayed.json",
        &[
            "-j",
            "1",
            "--replay",
            "cassettes",
            "--replay-latency",
            "zero",
            "counter.hocon",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(timeless(replayed), timeless(recorded));
}

/// Environment variables for one run.
type Env<'a> = Vec<(&'a str, String)>;

/// One spec per provider's way of answering: text with usage, and a tool call.
fn provider_suite(provider: &str, model: &str) -> String {
    format!(
        r#"name: {provider} round trip
defaults:
  model: "{model}"
  provider: {provider}
  model_config: {{temperature: 0, max_tokens: 50}}
tests:
  - name: capital
    inputs: {{query: "Capital of France?", system_prompt: "Answer briefly."}}
    assertions:
      - must_contain: Paris
  - name: tool
    tools:
      - name: web_search
        description: Search the web
        parameters: {{type: object, properties: {{query: {{type: string}}}}, required: [query]}}
    inputs: {{query: "Find laptops"}}
    assertions:
      - must_call_tool: web_search
  - name: wrong on purpose
    inputs: {{query: "Capital of France?"}}
    assertions:
      - must_contain: London
"#
    )
}

/// Records `suite` with `live`, replays it with `dead`: the two reports, and what the
/// replay printed.
fn provider_round_trip(
    provider: &str,
    model: &str,
    live: &[(&str, String)],
    dead: &[(&str, String)],
    sent: &dyn Fn() -> usize,
) -> (Value, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.yaml"),
        provider_suite(provider, model),
    )
    .unwrap();
    let (out, recorded) = run_json(
        dir.path(),
        "recorded.json",
        &["--record", "cassettes", "suite.yaml"],
        live,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{provider}: {}",
        text(&out.stderr)
    );
    let cassettes = cassette_text(&dir.path().join("cassettes"));
    for (name, value) in live {
        if name.contains("KEY") || name.contains("TOKEN") {
            assert!(
                !cassettes.contains(value.as_str()),
                "{provider}: {name} in a cassette"
            );
        }
    }
    let before = sent();
    let (out, replayed) = run_json(
        dir.path(),
        "replayed.json",
        &[
            "--replay",
            "cassettes",
            "--replay-latency",
            "zero",
            "suite.yaml",
        ],
        dead,
    );
    assert_eq!(sent(), before, "{provider}: the replay sent nothing");
    (recorded, replayed, text(&out.stderr))
}

#[test]
fn every_provider_replays_its_suite_with_the_same_report_and_no_network() {
    let rt = runtime();
    let answer = |fake_on: &dyn Fn(&str, Reply)| {
        fake_on("Capital of France?", Reply::text("Paris").usage(20, 1));
        fake_on(
            "Find laptops",
            Reply::tool_call("web_search", json!({"query": "laptops"})),
        );
    };
    let openai = rt.block_on(FakeOpenAi::start());
    answer(&|m, r| {
        openai.on_message(m, r);
    });
    let anthropic = rt.block_on(FakeAnthropic::start());
    answer(&|m, r| {
        anthropic.on_message(m, r);
    });
    let ollama = rt.block_on(FakeOllama::start());
    ollama.models(&["llama3.1:8b"]);
    answer(&|m, r| {
        ollama.on_message(m, r);
    });
    let tgi = rt.block_on(FakeOpenAi::start());
    answer(&|m, r| {
        tgi.on_message(m, r);
    });
    let bedrock = rt.block_on(FakeBedrock::start());
    bedrock.expect_bearer("bedrock-cassette-key-31f7");
    answer(&|m, r| {
        bedrock.on_message(m, r);
    });
    let dead = dead_url();
    let cases: Vec<(&str, &str, Env, Env)> = vec![
        (
            "openai",
            "gpt-4o-mini",
            vec![
                ("OPENAI_BASE_URL", openai.base_url()),
                ("OPENAI_API_KEY", OPENAI_KEY.into()),
            ],
            vec![
                ("OPENAI_BASE_URL", format!("{dead}/v1")),
                ("OPENAI_API_KEY", "sk-replay".into()),
            ],
        ),
        (
            "anthropic",
            "claude-3-5-haiku-latest",
            vec![
                ("ANTHROPIC_BASE_URL", anthropic.base_url()),
                ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.into()),
            ],
            vec![
                ("ANTHROPIC_BASE_URL", dead.clone()),
                ("ANTHROPIC_API_KEY", "sk-ant-replay".into()),
            ],
        ),
        (
            "ollama",
            "llama3.1:8b",
            vec![("OLLAMA_HOST", ollama.base_url())],
            vec![("OLLAMA_HOST", dead.clone())],
        ),
        (
            "huggingface",
            "meta-llama/Llama-3.1-8B-Instruct",
            vec![
                ("HF_BASE_URL", tgi.base_url()),
                ("HF_TOKEN", "hf_cassette_token_8c1d".into()),
            ],
            vec![
                ("HF_BASE_URL", format!("{dead}/v1")),
                ("HF_TOKEN", "hf_replay".into()),
            ],
        ),
        (
            "bedrock",
            "anthropic.claude-3-haiku-20240307-v1:0",
            vec![
                ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.base_url()),
                (
                    "AWS_BEARER_TOKEN_BEDROCK",
                    "bedrock-cassette-key-31f7".into(),
                ),
                ("AWS_REGION", "us-east-1".into()),
            ],
            vec![
                ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", dead.clone()),
                ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-replay".into()),
                ("AWS_REGION", "us-east-1".into()),
            ],
        ),
    ];
    let sent = || {
        openai.requests().len()
            + anthropic.requests().len()
            + ollama.requests().len()
            + tgi.requests().len()
            + bedrock.requests().len()
    };
    for (provider, model, live, replay) in cases {
        let (recorded, replayed, stderr) =
            provider_round_trip(provider, model, &live, &replay, &sent);
        assert_eq!(
            verdicts(&recorded),
            vec![
                ("capital".to_owned(), "passed".to_owned()),
                ("tool".to_owned(), "passed".to_owned()),
                ("wrong on purpose".to_owned(), "failed".to_owned()),
            ],
            "{provider}"
        );
        assert_eq!(
            timeless(replayed),
            timeless(recorded),
            "{provider}: {stderr}"
        );
    }
}
