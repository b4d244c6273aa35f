//! Simulated users end to end, against the fake OpenAI server playing all three parts:
//! the agent (a tool loop over the retail domain of `fixtures/retail/`), the simulated
//! customer (a request that offers `end_conversation`), and the judge (a structured
//! verdict). A conversation the customer ends as done, with the database as its
//! reference actions leave it, passes; the planted simulator faults (a customer that
//! states a fact outside its brief, one that never calls `end_conversation`) are
//! errors of kind `simulator` in `prill run` and the `simulator` mode in `prill assess`,
//! never failures of the agent.

use std::path::{Path, PathBuf};

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::support::{
    expected, judge_verdict, output_text, prill_isolated, run_args, runtime, unit, verdicts, write,
};

fn retail() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/retail")
}

/// The tests: one customer of each kind, on the retail tools. The fake plays each
/// kind by the marker of its first message; a real model (`PRILL_LIVE_PROVIDERS`) by
/// its persona, which plants the same fault.
const TESTS: &str = r##"
tests:
  - name: a customer who gets the order cancelled
    inputs: {system_prompt: "You are the shop's support agent."}
    user:
      goal: Get order #W2611340 cancelled because you no longer need it, and learn the refund.
      persona: Mia Garcia, polite and brief.
      facts: {email: mia.garcia@example.com, order: "#W2611340", reason: no longer needed}
      model: gpt-4o-mini
      max_turns: 4
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W2611340", reason: no longer needed}}]
      - trajectory_gist: the agent cancels the order the customer asked about
  - name: a customer who invents a phone number
    inputs: {query: "[phone] I want to cancel #W2611340"}
    user:
      goal: Get order #W2611340 cancelled.
      persona: "In your first message, and unasked, give your phone number: 555-0100."
      facts: {order: "#W2611340"}
      model: gpt-4o-mini
    assertions: [{must_contain: cancel}]
  - name: a customer who never says goodbye
    inputs: {query: "[chatty] I want to cancel #W2611340"}
    user:
      goal: Get order #W2611340 cancelled.
      persona: "You never end the conversation and never call end_conversation: after every answer, ask one more question about the order."
      facts: {order: "#W2611340"}
      model: gpt-4o-mini
      max_turns: 3
    assertions: [{must_contain: cancel}]
"##;

/// The fake OpenAI server playing `parts`, and the environment that points Prill at it.
fn serve(
    parts: fn(&Value) -> Option<Reply>,
) -> (
    tokio::runtime::Runtime,
    FakeOpenAi,
    Vec<(&'static str, String)>,
) {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.respond_with(parts);
    let env = vec![
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake".to_owned()),
    ];
    (rt, fake, env)
}

/// The fake playing every part, and a folder with the retail tools and the customers.
pub(crate) fn setup() -> (
    tokio::runtime::Runtime,
    FakeOpenAi,
    tempfile::TempDir,
    Vec<(&'static str, String)>,
) {
    let (rt, fake, env) = serve(prill_testkit::providers::shop::play);
    let dir = tempfile::tempdir().unwrap();
    for name in ["tools.py", "db.json"] {
        std::fs::copy(retail().join(name), dir.path().join(name)).unwrap();
    }
    let fixture = std::fs::read_to_string(retail().join("retail.yaml")).unwrap();
    let defaults = &fixture[..fixture.find("\ntests:").unwrap()];
    write(dir.path(), "customers.yaml", &format!("{defaults}{TESTS}"));
    (rt, fake, dir, env)
}

#[test]
fn planted_simulator_faults_are_the_simulators_errors_and_a_good_conversation_passes() {
    let (_rt, _fake, dir, env) = setup();
    let judge = [
        "--judge",
        "openai:gpt-4o-mini",
        "--no-cache",
        "--show-transcript",
    ];
    let (out, report) = run_args(dir.path(), "customers.yaml", &judge, &env);
    let all = output_text(&out);
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("a customer who gets the order cancelled", "passed"),
            ("a customer who invents a phone number", "errored"),
            ("a customer who never says goodbye", "errored"),
        ]),
        "{all}"
    );
    let good = &unit(&report, "a customer who gets the order cancelled")["samples"][0];
    let turns = good["interactions"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{good}");
    assert_eq!(turns[0]["user"]["simulated"], true);
    assert_eq!(turns[0]["user"]["stop"]["reason"], "done");
    assert_eq!(
        turns[0]["sent"],
        "Hi, please cancel my order #W2611340, I no longer need it."
    );
    for name in [
        "a customer who invents a phone number",
        "a customer who never says goodbye",
    ] {
        let sample = &unit(&report, name)["samples"][0];
        assert_eq!(sample["error"]["kind"], "simulator", "{sample}");
    }
    let phone = &unit(&report, "a customer who invents a phone number")["samples"][0];
    assert!(
        phone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("broke its brief (a simulator fault, not the agent's): the user states a phone number it was not given"),
        "{phone}"
    );
    assert!(
        all.contains("error (simulator): the simulated user did not call `end_conversation` within max_turns (3)"),
        "the transcript of a failing sample says whose fault it was: {all}"
    );
    assert!(
        all.contains("sent (scripted user): [chatty] I want to cancel #W2611340")
            && all.contains("sent (simulated user): Also, one more question."),
        "the transcript says who wrote each message: {all}"
    );
}

/// The same customers against a real model (the agent, the simulated customer and the
/// judge) for each provider of `PRILL_LIVE_PROVIDERS`, with its key: the customer
/// whose persona makes it state a phone number outside its facts, and the one whose
/// persona keeps it from ending the conversation, are simulator faults, never failures
/// of the agent. Built ignored without the variable (`build.rs`).
#[test]
#[cfg_attr(
    not(prill_live_providers),
    ignore = "reaches real providers: set PRILL_LIVE_PROVIDERS=openai,anthropic,... with their keys"
)]
fn planted_simulator_faults_are_the_simulators_errors_against_a_real_model() {
    let list = std::env::var("PRILL_LIVE_PROVIDERS").unwrap_or_default();
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    assert!(
        !names.is_empty(),
        "PRILL_LIVE_PROVIDERS names no provider: nothing would be tested"
    );
    let fixture = std::fs::read_to_string(retail().join("retail.yaml")).unwrap();
    let defaults = &fixture[..fixture.find("\ntests:").unwrap()];
    let env: Vec<(&str, String)> = crate::support::LIVE_KEYS
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (*k, v)))
        .collect();
    for name in names {
        let model = crate::support::live_model(name);
        let dir = tempfile::tempdir().unwrap();
        for file in ["tools.py", "db.json"] {
            std::fs::copy(retail().join(file), dir.path().join(file)).unwrap();
        }
        let suite = format!("{defaults}{TESTS}")
            .replace("model: gpt-4o-mini", &format!("model: {model}"))
            .replace("provider: openai", &format!("provider: {name}"));
        write(dir.path(), "customers.yaml", &suite);
        let judge = format!("{name}:{model}");
        let (out, report) = run_args(
            dir.path(),
            "customers.yaml",
            &["--judge", &judge, "--no-cache", "--show-transcript"],
            &env,
        );
        let all = output_text(&out);
        for planted in [
            "a customer who invents a phone number",
            "a customer who never says goodbye",
        ] {
            let unit = unit(&report, planted);
            assert_eq!(unit["verdict"], "errored", "{name}: {planted}\n{all}");
            assert_eq!(
                unit["samples"][0]["error"]["kind"], "simulator",
                "{name}: {planted}\n{all}"
            );
        }
    }
}

#[test]
fn prill_assess_gives_simulator_faults_a_mode_of_their_own() {
    let (_rt, _fake, dir, env) = setup();
    let out = prill_isolated(
        dir.path(),
        &[
            "assess",
            "customers.yaml",
            "--samples",
            "2",
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
            "--json",
            "assessment.json",
        ],
        &env,
    );
    let all = output_text(&out);
    let assessment: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("assessment.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {all}"));
    let cases = assessment["cases"].as_array().unwrap();
    let modes = |name: &str| -> Vec<String> {
        cases
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .unwrap_or_else(|| panic!("{name} in {assessment}"))["modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["label"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    for name in [
        "a customer who invents a phone number",
        "a customer who never says goodbye",
    ] {
        let found = modes(name);
        assert!(
            found
                .iter()
                .any(|m| m.contains("the simulated user broke its contract")),
            "{name}: {found:?}"
        );
    }
    assert!(modes("a customer who gets the order cancelled").is_empty());
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/conversations")
        .join(name)
        .display()
        .to_string()
}

/// The fan of `fixtures/conversations/music_fan.hocon`, and the judge.
fn fan(body: &Value) -> Option<Reply> {
    if body.get("response_format").is_some() {
        return Some(judge_verdict(true, "within its brief"));
    }
    let own = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .count();
    Some(match own {
        // Its own turns: the scripted question is the first.
        1 => Reply::text("Where were they from?"),
        _ => Reply::tool_call("end_conversation", json!({"reason": "done"})),
    })
}

#[test]
fn a_data_driven_case_carries_on_with_a_simulated_user_after_its_scripted_turns() {
    let (_rt, _fake, env) = serve(fan);
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("music_fan.hocon");
    let args = ["--demo", "--judge", "openai:gpt-4o-mini", "--no-cache"];
    let (out, report) = run_args(dir.path(), &file, &args, &env);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let sample = &report["units"][0]["samples"][0];
    let turns = sample["interactions"].as_array().unwrap();
    let who: Vec<(&str, bool)> = turns
        .iter()
        .map(|t| {
            (
                t["sent"].as_str().unwrap(),
                t["user"]["simulated"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("Who did Yellow Submarine?", false),
            ("Where were they from?", true)
        ]
    );
    assert_eq!(turns[1]["user"]["stop"]["reason"], "done");
    let checks: Vec<&str> = turns[1]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["user.response.text.keywords"], "{sample}");
    assert_eq!(
        turns[0]["checks"][0]["path"],
        "interactions[0].response.structure.answer.keywords"
    );
}

/// The support agent and the customer of `fixtures/conversations/shop_customer.yaml`.
fn shop(body: &Value) -> Option<Reply> {
    let text = body.to_string();
    if body.get("response_format").is_some() {
        return Some(judge_verdict(true, "as asked"));
    }
    let own = |role: &str| {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .count()
    };
    if text.contains("\"end_conversation\"") {
        return Some(match own("assistant") {
            0 => Reply::text("Hi, please cancel my order #W1."),
            1 => Reply::text("Yes, I confirm."),
            _ => Reply::tool_call("end_conversation", json!({"reason": "done"})),
        });
    }
    Some(match (text.contains("I confirm"), own("tool")) {
        (false, 0) => Reply::tool_call("find_order", json!({"order_id": "#W1"})),
        (false, _) => Reply::text("Order #W1 is pending. Shall I cancel it?"),
        (true, 1) => Reply::tool_call("cancel_order", json!({"order_id": "#W1"})),
        (true, _) => Reply::text("Order #W1 is cancelled."),
    })
}

#[test]
fn a_simulated_customer_opens_the_conversation_and_a_mock_checks_what_it_received() {
    let (_rt, _fake, env) = serve(shop);
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("shop_customer.yaml");
    let args = ["--judge", "openai:gpt-4o-mini", "--no-cache"];
    let (out, report) = run_args(dir.path(), &file, &args, &env);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let turns = report["units"][0]["samples"][0]["interactions"]
        .as_array()
        .unwrap();
    let sent: Vec<&str> = turns.iter().map(|t| t["sent"].as_str().unwrap()).collect();
    assert_eq!(sent, ["Hi, please cancel my order #W1.", "Yes, I confirm."]);
    let trajectory: Vec<(u64, &str)> = turns
        .iter()
        .flat_map(|t| t["trajectory"].as_array().unwrap())
        .map(|c| (c["turn"].as_u64().unwrap(), c["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        trajectory,
        [(1, "find_order"), (3, "cancel_order")],
        "model calls are numbered over the whole conversation"
    );
    let checks: Vec<(&str, &str)> = turns[1]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        checks,
        [
            ("tool_sequence", "passed"),
            ("trajectory_gist", "passed"),
            ("expect_calls", "passed"),
        ],
        "the assertions, then the mock's expectation, each passed"
    );
}

/// The verdict and error kind of each unit, sorted by name.
fn outcomes(report: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["unit"]["name"].as_str().unwrap_or_default().to_owned(),
                u["verdict"].as_str().unwrap_or_default().to_owned(),
                u["samples"][0]["error"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_recorded_conversation_replays_with_no_model_no_judge_and_no_tool_program() {
    let (rt, fake, dir, env) = setup();
    let recorded = run_args(
        dir.path(),
        "customers.yaml",
        &[
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
            "--record",
            "tapes",
        ],
        &env,
    );
    let live = outcomes(&recorded.1);
    assert_eq!(live.len(), 3, "{}", output_text(&recorded.0));
    // Nothing left to answer: no model server, and no tool program to start.
    drop(fake);
    drop(rt);
    std::fs::remove_file(dir.path().join("tools.py")).unwrap();
    std::fs::remove_file(dir.path().join("report.json")).unwrap();
    let replayed = run_args(
        dir.path(),
        "customers.yaml",
        &[
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
            "--replay",
            "tapes",
        ],
        &env,
    );
    let all = output_text(&replayed.0);
    assert_eq!(outcomes(&replayed.1), live, "{all}");
    let good = &unit(&replayed.1, "a customer who gets the order cancelled")["samples"][0];
    assert_eq!(
        good["interactions"][0]["user"]["stop"]["reason"], "done",
        "{good}"
    );
    let tapes = std::fs::read_dir(dir.path().join("tapes"))
        .unwrap()
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        tapes.contains("\"connector\":\"tool\""),
        "the tool program's exchanges are on tape"
    );
}

/// A recorded suite of 100 conversations, each with a simulated customer, the retail
/// tool program and its end state checked, replays with no model server and no tool
/// program, with the verdict and error kind of every case as recorded.
#[test]
fn a_hundred_recorded_conversations_replay_with_identical_verdicts() {
    let (rt, fake, dir, env) = setup();
    let fixture = std::fs::read_to_string(retail().join("retail.yaml")).unwrap();
    let defaults = &fixture[..fixture.find("\ntests:").unwrap()];
    write(
        dir.path(),
        "hundred.yaml",
        &format!(
            "{defaults}{}",
            prill_testkit::providers::shop::customers(100)
        ),
    );
    let judged = ["--judge", "openai:gpt-4o-mini", "--no-cache", "-j", "8"];
    let mut record = judged.to_vec();
    record.extend(["--record", "tapes"]);
    let started = std::time::Instant::now();
    let (out, live) = run_args(dir.path(), "hundred.yaml", &record, &env);
    let live_time = started.elapsed();
    let recorded = outcomes(&live);
    assert_eq!(recorded.len(), 100, "{}", output_text(&out));
    let count = |verdict: &str, kind: &str| {
        recorded
            .iter()
            .filter(|(_, v, k)| v == verdict && k == kind)
            .count()
    };
    assert_eq!(count("passed", ""), 34, "{recorded:?}");
    assert_eq!(count("errored", "simulator"), 66, "{recorded:?}");
    drop(fake);
    drop(rt);
    std::fs::remove_file(dir.path().join("tools.py")).unwrap();
    let mut replay = judged.to_vec();
    replay.extend(["--replay", "tapes", "--replay-latency", "zero"]);
    let started = std::time::Instant::now();
    let (out, replayed) = run_args(dir.path(), "hundred.yaml", &replay, &env);
    let replay_time = started.elapsed();
    assert_eq!(outcomes(&replayed), recorded, "{}", output_text(&out));
    let units = replayed["units"].as_array().unwrap();
    assert!(units.iter().all(|u| u["source"] == "replayed"));
    // The times are reported, not asserted: a timed test measures the machine.
    eprintln!("100 conversations: live {live_time:?}, replayed {replay_time:?}");
}
