//! The verdict of a unit against in-process agents whose answers and timing the test
//! controls per sample: early stopping never changes a verdict, a wrong answer wins over
//! an error, `--samples` keeps the pass rate, samples start lazily, and sly_data carries
//! over between interactions.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use prill_run::engine::SAMPLE_METADATA;
use prill_run::events::{Event, UnitReport};
use prill_run::ratio::Status;
use prill_run::{Connectors, RunOptions, Summary, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::{AgentRequest, AgentResponse, ConnectError};
use prill_target::{Registry, from_fn};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn plan_of_text(name: &str, text: &str) -> Plan {
    let loaded =
        prill_spec::load_str(Path::new(name), text, &Env::default(), Unrecognized::Error).unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    Plan::new(loaded.cases())
}

async fn run(plan: &Plan, registry: Registry, options: RunOptions) -> (Summary, Vec<UnitReport>) {
    let connectors = Connectors::new().with(Connection::Direct, Arc::new(registry));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = run_plan(plan, &connectors, &options, tx).await;
    let mut units = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::UnitFinished(u) = e {
            units.push(u);
        }
    }
    (summary, units)
}

fn sample_of(request: &AgentRequest) -> u32 {
    request.metadata[SAMPLE_METADATA].parse().unwrap()
}

fn answer(text: &str) -> Result<AgentResponse, ConnectError> {
    Ok(AgentResponse {
        text: Some(text.to_owned()),
        ..AgentResponse::default()
    })
}

fn broken() -> Result<AgentResponse, ConnectError> {
    Err(ConnectError::protocol("the test agent", "a broken answer"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_that_comes_first_does_not_hide_a_later_wrong_answer() {
    // Sample 0 errors at once; sample 1 answers wrongly 200 ms later. Running both, the
    // unit failed; stopping at the error (2/2 is out of reach) would call it errored.
    let agent = from_fn(|request: AgentRequest| async move {
        match sample_of(&request) {
            0 => broken(),
            _ => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                answer("wrong")
            }
        }
    });
    let plan = plan_of_text(
        "two.hocon",
        r#"agent = a, connections = [direct], success_ratio = "2/2"
           interactions = [{ text = hi, response.text.keywords = right }]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let (summary, units) = run(&plan, registry, RunOptions::default()).await;
    assert_eq!(units[0].verdict, Status::Failed, "{:#?}", units[0]);
    assert_eq!((units[0].tally.failed, units[0].tally.errored), (1, 1));
    assert_eq!((summary.failed, summary.errored), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_alone_run_every_sample_and_error() {
    let agent = from_fn(|_request: AgentRequest| async move { broken() });
    let plan = plan_of_text(
        "three.hocon",
        r#"agent = a, connections = [direct], success_ratio = "3/5"
           interactions = [{ text = hi, response.text.keywords = right }]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let (_, units) = run(&plan, registry, RunOptions::default()).await;
    assert_eq!(units[0].verdict, Status::Errored);
    assert_eq!(units[0].tally.errored, 5, "no early stop on errors alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn within_a_sample_a_wrong_answer_wins_over_a_later_error() {
    // Turn 1 answers wrongly, turn 2 breaks the protocol: the sample failed.
    let agent = from_fn(|request: AgentRequest| async move {
        match request.text.as_deref() {
            Some("first") => answer("wrong"),
            _ => broken(),
        }
    });
    let plan = plan_of_text(
        "turns.hocon",
        r#"agent = a, connections = [direct]
           interactions = [
             { text = first, response.text.keywords = right }
             { text = second, response.text.keywords = right }
           ]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let (summary, units) = run(&plan, registry, RunOptions::default()).await;
    let sample = &units[0].samples[0];
    assert_eq!(sample.status, Status::Failed, "{sample:#?}");
    assert!(sample.interactions[1].error.is_some(), "the error is kept");
    assert_eq!(units[0].verdict, Status::Failed);
    assert_eq!((summary.failed, summary.errored), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_samples_keep_the_pass_rate() {
    // 3/3 over 10 samples needs 10/10: one wrong answer in ten fails the unit (with the
    // numerator merely capped, 3/10 would pass it).
    let agent = from_fn(|request: AgentRequest| async move {
        if sample_of(&request) == 7 {
            answer("wrong")
        } else {
            answer("right")
        }
    });
    let plan = plan_of_text(
        "rate.hocon",
        r#"agent = a, connections = [direct], success_ratio = "3/3"
           interactions = [{ text = hi, response.text.keywords = right }]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let options = RunOptions {
        samples: Some(10),
        ..RunOptions::default()
    };
    let (_, units) = run(&plan, registry, options).await;
    let u = &units[0];
    assert_eq!(u.gate.ratio().map(|r| (r.need, r.of)), Some((10, 10)));
    assert_eq!(u.verdict, Status::Failed, "{u:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_start_lazily_within_the_jobs_limit() {
    // 1/100000 is decided by its first pass: only as many samples as `jobs` allows ever
    // start, and no task waits for the other 99,996.
    let started = Arc::new(AtomicUsize::new(0));
    let most_tasks = Arc::new(AtomicUsize::new(0));
    let (counter, tasks) = (Arc::clone(&started), Arc::clone(&most_tasks));
    let agent = from_fn(move |_request: AgentRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        let alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        tasks.fetch_max(alive, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            answer("right")
        }
    });
    let plan = plan_of_text(
        "many.hocon",
        r#"agent = a, connections = [direct], success_ratio = "1/100000"
           interactions = [{ text = hi, response.text.keywords = right }]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let options = RunOptions {
        jobs: 4,
        ..RunOptions::default()
    };
    let (summary, units) = run(&plan, registry, options).await;
    assert_eq!(summary.passed, 1);
    let n = started.load(Ordering::SeqCst);
    assert!((1..=4).contains(&n), "{n} samples started with jobs = 4");
    let tasks = most_tasks.load(Ordering::SeqCst);
    assert!(tasks <= 16, "{tasks} tasks alive for a unit with jobs = 4");
    assert_eq!(units[0].tally.passed, 1);
    let ratio = units[0].gate.ratio().unwrap();
    assert_eq!(units[0].tally.not_run(ratio), 99_999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sly_data_carries_over_while_the_conversation_continues() {
    // The agent returns a token on the first turn and reports the sly_data it was sent
    // on the second; the case checks that the token came back.
    let agent = from_fn(|request: AgentRequest| async move {
        let sent = Value::Object(request.sly_data.clone().unwrap_or_default());
        Ok(AgentResponse {
            text: Some("ok".to_owned()),
            sly_data: Some(match request.text.as_deref() {
                Some("login") => json!({"token": "t-123"}),
                _ => json!({"seen": sent}),
            }),
            ..AgentResponse::default()
        })
    });
    let plan = plan_of_text(
        "carry.hocon",
        r#"agent = a, connections = [direct]
           interactions = [
             { text = login, sly_data = { user = ann } }
             { text = next, response.sly_data.seen = { user.value = ann, token.value = "t-123" } }
           ]"#,
    );
    let registry = Registry::new().with("a", Arc::new(agent));
    let (summary, units) = run(&plan, registry, RunOptions::default()).await;
    assert_eq!(summary.passed, 1, "{:#?}", units[0].samples);
}

/// A plan given to the run (moved, each case freed once it has run) runs as the same
/// plan lent to it (each case copied): the same units, verdicts and samples.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_given_to_the_run_runs_as_one_lent_to_it() {
    let agent = || {
        from_fn(|request: AgentRequest| async move {
            match request.text.as_deref() {
                Some("good") => answer("right"),
                Some("bad") => answer("wrong"),
                _ => broken(),
            }
        })
    };
    let text = |input: &str| {
        format!(
            r#"agent = a, connections = [direct], success_ratio = "2/3"
               interactions = [{{ text = {input}, response.text.keywords = right }}]"#
        )
    };
    let mut cases = Vec::new();
    for (i, input) in ["good", "bad", "broken", "good"].iter().enumerate() {
        cases.extend(plan_of_text(&format!("c{i}.hocon"), &text(input)).cases);
    }
    let plan = Plan::new(cases);
    let outcome = |(summary, mut units): (Summary, Vec<UnitReport>)| {
        units.sort_by(|a, b| a.unit.file.cmp(&b.unit.file));
        let units: Vec<_> = units
            .into_iter()
            .map(|u| (u.unit, u.verdict, u.tally, u.samples.len()))
            .collect();
        ((summary.passed, summary.failed, summary.errored), units)
    };
    let registry = || Registry::new().with("a", Arc::new(agent()));
    let lent = outcome(run(&plan, registry(), RunOptions::default()).await);

    let connectors = Connectors::new().with(Connection::Direct, Arc::new(registry()));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = run_plan(plan, &connectors, &RunOptions::default(), tx).await;
    let mut units = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::UnitFinished(u) = e {
            units.push(u);
        }
    }
    let given = outcome((summary, units));
    assert_eq!(given, lent);
    assert_eq!(given.0, (2, 1, 1), "{given:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_fast_stops_the_units_in_flight_and_reports_them_skipped() {
    // 17 units start at once (jobs 32): the one that answers wrongly at once stops the
    // 16 others, which would wait a minute for their answers.
    let agent = from_fn(|request: AgentRequest| async move {
        if request.text.as_deref() == Some("fail") {
            return answer("wrong");
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
        answer("right")
    });
    let mut cases = Vec::new();
    for i in 0..17 {
        let text = if i == 8 { "fail" } else { "wait" };
        let plan = plan_of_text(
            &format!("case{i}.hocon"),
            &format!(
                "agent = a, connections = [direct]\n\
                 interactions = [{{ text = {text}, response.text.keywords = right }}]"
            ),
        );
        cases.extend(plan.cases);
    }
    let plan = Plan::new(cases);
    let registry = Registry::new().with("a", Arc::new(agent));
    let options = RunOptions {
        jobs: 32,
        fail_fast: true,
        ..RunOptions::default()
    };
    let (summary, units) =
        tokio::time::timeout(Duration::from_secs(30), run(&plan, registry, options))
            .await
            .expect("the run stops at the first failure, not when the others answer");
    assert_eq!(units.len(), 17);
    assert_eq!(
        (
            summary.passed,
            summary.failed,
            summary.errored,
            summary.skipped
        ),
        (0, 1, 0, 16),
        "{summary:?}"
    );
    assert!(summary.stopped && !summary.cancelled, "{summary:?}");
    let failed: Vec<_> = units
        .iter()
        .filter(|u| u.verdict == Status::Failed)
        .collect();
    assert_eq!(failed[0].unit.name, "case8", "{failed:?}");
}

/// A case whose samples continue another run's (`Case::first_sample`): the agent and
/// the report see the indices from there on, and the gate still reads every sample, a
/// sequential one included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_numbered_after_another_runs_are_still_read_by_the_gate() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let agent = Arc::new(from_fn(move |request: AgentRequest| {
        let log = Arc::clone(&log);
        async move {
            log.lock().unwrap().push(sample_of(&request));
            answer("right")
        }
    }));
    for (gate, samples) in [
        (r#"success_ratio = "3/3""#, 3),
        ("reliability { good = 0.9, bad = 0.5 }", 0),
    ] {
        let mut plan = plan_of_text(
            "more.hocon",
            &format!(
                r#"agent = a, connections = [direct], {gate}
                   interactions = [{{ text = hi, response.text.keywords = right }}]"#
            ),
        );
        plan.cases[0].first_sample = 40;
        seen.lock().unwrap().clear();
        let registry = Registry::new().with("a", agent.clone());
        let (_, units) = run(&plan, registry, RunOptions::default()).await;
        assert_eq!(units[0].verdict, Status::Passed, "{gate}: {:#?}", units[0]);
        let mut indices: Vec<u32> = units[0].samples.iter().map(|s| s.index).collect();
        indices.sort_unstable();
        let mut asked = seen.lock().unwrap().clone();
        asked.sort_unstable();
        assert_eq!(indices, asked, "{gate}");
        assert_eq!(indices[0], 40, "{gate}");
        let n = indices.len() as u32;
        assert_eq!(indices, (40..40 + n).collect::<Vec<_>>(), "{gate}");
        if samples > 0 {
            assert_eq!(n, samples);
        }
    }
}
