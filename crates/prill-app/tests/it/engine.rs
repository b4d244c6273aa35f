//! The engine against the real demo server on 127.0.0.1: the quickstart passes, the
//! failing examples fail or error as they should, ratios stop early, timeouts error,
//! cancellation ends cleanly, and events arrive in order.

use std::path::{Path, PathBuf};
use std::time::Duration;

use prill_run::events::{Event, UnitReport};
use prill_run::ratio::Status;
use prill_run::{RunOptions, Summary, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use tokio::sync::mpsc;

fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(dir)
}

fn plan_of(paths: &[PathBuf]) -> Plan {
    let mut cases = Vec::new();
    for found in prill_spec::load::discover(paths) {
        let path = found.expect("fixture paths exist");
        let loaded = prill_spec::load_file(&path, &Env::default(), Unrecognized::Error)
            .unwrap()
            .unwrap();
        assert!(
            loaded.is_valid(),
            "{}: {:?}",
            path.display(),
            loaded.outcome
        );
        cases.extend(loaded.cases());
    }
    Plan::new(cases)
}

fn plan_of_text(name: &str, text: &str) -> Plan {
    let loaded =
        prill_spec::load_str(Path::new(name), text, &Env::default(), Unrecognized::Error).unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    Plan::new(loaded.cases())
}

async fn run(plan: &Plan, options: RunOptions) -> (Summary, Vec<Event>) {
    let demo = prill_app::demo::start(0).await.expect("the demo starts");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = run_plan(plan, &demo.connectors, &options, tx).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    demo.server.shutdown().await;
    (summary, events)
}

fn units(events: &[Event]) -> Vec<&UnitReport> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::UnitFinished(u) => Some(u),
            _ => None,
        })
        .collect()
}

fn unit<'a>(events: &'a [Event], name: &str, connection: &str) -> &'a UnitReport {
    units(events)
        .into_iter()
        .find(|u| u.unit.name.ends_with(name) && u.unit.connection == connection)
        .unwrap_or_else(|| panic!("no unit {name} [{connection}]"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_passes_over_direct_and_http() {
    let plan = plan_of(&[fixtures("quickstart")]);
    let (summary, events) = run(&plan, RunOptions::default()).await;
    for u in units(&events) {
        assert_eq!(
            u.verdict,
            Status::Passed,
            "{}: {:#?}",
            u.unit.label(),
            u.samples
        );
    }
    assert_eq!(summary.passed, 6, "3 files over 2 connections");
    assert_eq!(
        (summary.failed, summary.errored, summary.skipped),
        (0, 0, 0)
    );
    // 2/3: decided after two passes; the third sample does not count.
    let math = unit(&events, "math", "http");
    assert_eq!((math.tally.passed, math.tally.total()), (2, 2));
    // The second music turn saw the first one's context: cost 6.0 and Liverpool.
    let music = unit(&events, "music_trivia", "direct");
    let second = &music.samples[0].interactions[1];
    assert_eq!(second.structure.as_ref().unwrap()["running_cost"], 6.0);
    assert!(second.answer.as_deref().unwrap().contains("Liverpool"));
    // Events: the run starts first and ends last, with a verdict for every unit.
    assert!(matches!(
        events.first(),
        Some(Event::RunStarted { units: 6 })
    ));
    assert!(matches!(events.last(), Some(Event::RunFinished(s)) if *s == summary));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_and_errors_are_kept_apart() {
    let plan = plan_of(&[fixtures("examples/failing")]);
    let (summary, events) = run(&plan, RunOptions::default()).await;

    let wrong = unit(&events, "wrong_answers", "direct");
    assert_eq!(wrong.verdict, Status::Failed);
    let messages: Vec<&str> = wrong.samples[0].failures().map(|c| c.message()).collect();
    assert_eq!(
        messages,
        [
            "structure.answer: expected to contain \"Rolling Stones\", found \"Yellow Submarine was recorded by The Beatles.\"",
            "structure.running_cost: expected value 4.0, found 3.0",
        ]
    );

    // 2/2 cannot pass after one failure: one sample is enough.
    let math = unit(&events, "math_off_by_one", "http");
    assert_eq!(math.verdict, Status::Failed);
    assert_eq!(math.tally.total(), 1);

    let unknown = unit(&events, "unknown_agent", "http");
    assert_eq!(unknown.verdict, Status::Errored);
    let error = unknown.samples[0].interactions[0].error.as_ref().unwrap();
    assert_eq!(error.kind.name(), "unknown_agent");
    assert!(error.message.contains("no_such_agent"), "{}", error.message);

    let slow = unit(&events, "too_slow", "http");
    assert_eq!(slow.verdict, Status::Errored);
    assert_eq!(
        slow.samples[0].interactions[0].error.as_ref().unwrap().kind,
        prill_run::events::ErrorKind::Timeout
    );

    let broken = unit(&events, "server_error", "http");
    assert_eq!(broken.verdict, Status::Errored);
    let error = broken.samples[0].interactions[0].error.as_ref().unwrap();
    assert_eq!(error.kind.name(), "status");
    assert!(error.message.contains("500"), "{}", error.message);

    assert_eq!((summary.failed, summary.errored, summary.passed), (2, 3, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_timeout_is_an_error_that_counts_against_the_ratio() {
    let plan = plan_of_text(
        "slow.yaml",
        "agent: slow\nconnections: direct\nsuccess_ratio: \"1/2\"\ntimeout_in_seconds: 0.3\n\
         interactions:\n  - text: wait\n    sly_data: {delay_ms: 10000}\n",
    );
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!(summary.errored, 1);
    let u = unit(&events, "slow", "direct");
    assert_eq!(u.tally.errored, 2, "both samples timed out");
    let error = u.samples[0].error.as_ref().unwrap();
    assert_eq!(error.kind.name(), "timeout");
    assert_eq!(error.message, "the sample timed out after 0.3s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_that_does_not_continue_starts_clean() {
    let plan = plan_of_text(
        "music.hocon",
        r#"agent = music_nerd_pro
           connections = [direct, http]
           interactions = [
             { text = "Who did Yellow Submarine?", continue_conversation = false }
             { text = "Where were they from?", response.structure.running_cost.value = 3.0 }
           ]"#,
    );
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!(summary.passed, 2, "{events:#?}");
    let second = &unit(&events, "music", "http").samples[0].interactions[1];
    assert!(!second.answer.as_deref().unwrap_or("").contains("Liverpool"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_of_connections_and_samples() {
    let plan = plan_of(&[fixtures("quickstart/echo.yaml")]);
    let options = RunOptions {
        connections: Some(vec![Connection::Https, Connection::Mcp]),
        samples: Some(3),
        ..RunOptions::default()
    };
    let (summary, events) = run(&plan, options).await;
    assert_eq!(summary.passed, 2, "{events:#?}");
    let https = unit(&events, "echo", "https");
    assert_eq!(
        https.gate.ratio().map(|r| (r.need, r.of)),
        Some((3, 3)),
        "1/1 over 3 samples keeps its pass rate"
    );
    assert_eq!(https.tally.passed, 3, "3/3 needs every sample to pass");
    assert_eq!(unit(&events, "echo", "mcp").verdict, Status::Passed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_case_without_its_provider_errors_and_says_so() {
    let plan = plan_of(&[fixtures("sentinel/minimal.yaml")]);
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!((summary.errored, summary.passed, summary.failed), (1, 0, 0));
    let u = &units(&events)[0];
    let error = u.samples[0].error.as_ref().unwrap();
    assert_eq!(error.message, "no openai provider is configured");
    assert_eq!(
        u.unit.connection, "openai",
        "the provider the model name implies"
    );
}

/// A case that names a provider of `[providers]` that this run does not have, or whose
/// provider cannot be told, is a configuration error that says how to set one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_case_naming_an_unconfigured_provider_is_a_config_error() {
    let limits = prill_spec::limits::Limits {
        providers: [("vllm".to_owned(), prill_spec::ProviderKind::Openai)].into(),
        ..prill_spec::limits::Limits::default()
    };
    let text = "name: s\ndefaults:\n  inputs: {query: hi}\n  assertions: [{must_contain: a}]\ntests:\n  - {name: named, model: mistral-7b, provider: vllm}\n  - {name: untold, model: llama3.1}\n";
    let loaded = prill_spec::load::load_str_with(
        Path::new("named.yaml"),
        text,
        &Env::default(),
        Unrecognized::Error,
        &limits,
    )
    .unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    let plan = Plan::new(loaded.cases());
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!((summary.errored, summary.passed), (2, 0));
    let error = |name: &str| {
        let u = units(&events)
            .into_iter()
            .find(|u| u.unit.name == name)
            .unwrap();
        u.samples[0].error.clone().unwrap()
    };
    let named = error("named");
    assert_eq!(named.kind, prill_run::events::ErrorKind::Config);
    assert!(
        named
            .message
            .starts_with("no provider named `vllm` is configured: add `[providers.vllm]`"),
        "{}",
        named.message
    );
    let untold = error("untold");
    assert_eq!(untold.kind, prill_run::events::ErrorKind::Config);
    assert!(
        untold
            .message
            .starts_with("cannot tell which provider serves `llama3.1`: set `provider`"),
        "{}",
        untold.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_run_and_still_reports_every_unit() {
    let text = "agent: slow\nconnections: [direct, http]\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 60000}\n";
    let plan = plan_of_text("slow.yaml", text);
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    let demo = prill_app::demo::start(0).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let run = run_plan(&plan, &demo.connectors, &options, tx);
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    };
    let (summary, ()) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(run, canceller)
    })
    .await
    .expect("cancelling ends the run promptly");
    assert!(summary.cancelled);
    assert_eq!(summary.total(), 2);
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    assert_eq!(units(&events).len(), 2, "every unit still gets its report");
    assert!(matches!(events.last(), Some(Event::RunFinished(s)) if s.cancelled));
    // The http stream was closed when its sample was cancelled.
    tokio::time::timeout(Duration::from_secs(10), async {
        while demo.server.active_streams() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server sees the disconnect");
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_patterns_fail_an_answer_that_holds_one() {
    let plan = plan_of_text(
        "echo.hocon",
        r#"agent = echo
           connections = [direct]
           failure_patterns = ["API key"]
           interactions = [{ text = "no API key set" }, { text = "all good" }]"#,
    );
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!(summary.failed, 1);
    let sample = &units(&events)[0].samples[0];
    assert_eq!(sample.status, Status::Failed);
    let failed: Vec<&str> = sample.failures().map(|c| &*c.path).collect();
    assert_eq!(failed, ["interactions[0] failure_patterns[0]"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neuro_san_s_own_music_nerd_pro_http_case_passes_unchanged_against_the_demo() {
    let plan = plan_of(&[fixtures(
        "conformance/neuro-san/fixtures-2026-02/music_nerd_pro/combination_responses_with_history_http.hocon",
    )]);
    let (summary, events) = run(&plan, RunOptions::default()).await;
    assert_eq!(summary.passed, 1, "{events:#?}");
    let u = unit(&events, "combination_responses_with_history_http", "http");
    let checks: usize = u.samples[0]
        .interactions
        .iter()
        .map(|i| i.checks.len())
        .sum();
    assert_eq!(checks, 4, "two structure checks in each of two turns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_fast_starts_nothing_after_the_first_failure_and_reports_the_rest_skipped() {
    let plan = plan_of(&[fixtures("examples/failing")]);
    let options = RunOptions {
        jobs: 1,
        fail_fast: true,
        ..RunOptions::default()
    };
    let (summary, events) = run(&plan, options).await;
    let units = units(&events);
    assert_eq!(units.len(), 5, "every unit is reported");
    let ran: Vec<_> = units.iter().filter(|u| u.tally.total() > 0).collect();
    assert_eq!(ran.len(), 1, "one unit ran: {summary:?}");
    assert!(matches!(ran[0].verdict, Status::Failed | Status::Errored));
    assert_eq!(summary.skipped, 4);
    assert!(summary.stopped && !summary.cancelled, "{summary:?}");
    let started = events
        .iter()
        .filter(|e| matches!(e, Event::UnitStarted { .. }))
        .count();
    assert_eq!(started, 1, "the skipped units never started");
}
