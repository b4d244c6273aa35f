//! The built-in tool loop's own rules, run by the engine against an in-process model
//! (a [`Provider`] the test scripts, as an embedder would plug in its own): the loop
//! stops at `max_iterations` model calls and errors, a loop that finishes within the
//! limit passes, and a spec's `retry_policy` retries only the errors worth retrying.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use prill_run::events::{Event, InteractionReport};
use prill_run::{Connectors, RunOptions, Summary, run_plan};
use prill_spec::{Env, Plan, ProviderKind, Unrecognized};
use prill_target::model::{ModelRequest, ModelResponse, ModelToolCall, Provider};
use prill_target::{BoxFuture, ConnectError, ErrorKind};
use serde_json::json;
use tokio::sync::mpsc;

/// A model that answers call `n` (from 1) with `script(n)`, and counts its calls.
struct Scripted<F> {
    calls: AtomicU32,
    script: F,
}

impl<F> Provider for Scripted<F>
where
    F: Fn(u32) -> Result<ModelResponse, ConnectError> + Send + Sync,
{
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = (self.script)(n);
        Box::pin(async move { answer })
    }
}

fn calls_search() -> Result<ModelResponse, ConnectError> {
    Ok(ModelResponse {
        tool_calls: vec![ModelToolCall {
            id: Some("call-1".into()),
            name: "search".into(),
            arguments: json!({"q": "more"}),
        }],
        stop_reason: Some("tool_calls".into()),
        ..ModelResponse::default()
    })
}

fn says_done() -> Result<ModelResponse, ConnectError> {
    Ok(ModelResponse {
        text: "done".into(),
        stop_reason: Some("stop".into()),
        ..ModelResponse::default()
    })
}

fn status(status: u16) -> Result<ModelResponse, ConnectError> {
    Err(ConnectError::Status {
        server: "the test model".into(),
        status,
        body: String::new(),
        attempts: 1,
    })
}

/// Runs one Sentinel spec with `framework_config` against `model`: the summary, the
/// first sample's last interaction, and how many calls the model got.
async fn run<F>(framework_config: &str, script: F) -> (Summary, InteractionReport, u32)
where
    F: Fn(u32) -> Result<ModelResponse, ConnectError> + Send + Sync + 'static,
{
    let text = format!(
        "name: loop\nmodel: gpt-4o-mini\nframework: openai-sdk\ntools: [search]\n\
         framework_config: {framework_config}\ninputs: {{query: Hi}}\n\
         assertions: [{{must_contain: done}}]\n"
    );
    let loaded = prill_spec::load_str(
        Path::new("loop.yaml"),
        &text,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    let plan = Plan::new(loaded.cases());
    let model = Arc::new(Scripted {
        calls: AtomicU32::new(0),
        script,
    });
    let connectors = Connectors::new().with_provider(ProviderKind::Openai, model.clone());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let summary = run_plan(&plan, &connectors, &RunOptions::default(), tx).await;
    let mut last = None;
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(unit) = event {
            last = unit.samples[0].interactions.last().cloned();
        }
    }
    let calls = model.calls.load(Ordering::SeqCst);
    (summary, last.expect("one interaction"), calls)
}

const SEARCH: &str = "tool_results: {search: {hits: []}}";

#[tokio::test]
async fn a_loop_that_does_not_end_errors_after_max_iterations_calls() {
    let config = format!("{{max_iterations: 2, {SEARCH}}}");
    let (summary, interaction, calls) = run(&config, |_| calls_search()).await;
    assert_eq!(calls, 2, "no model call past the limit");
    assert_eq!(summary.errored, 1, "{summary:?}");
    let error = interaction.error.expect("an error");
    assert_eq!(error.kind, ErrorKind::MaxIterations);
    assert!(
        error.message.starts_with(
            "the model was still calling tools after 2 model calls (framework_config.max_iterations)"
        ),
        "{}",
        error.message
    );
    assert!(interaction.checks.is_empty(), "no check runs on no answer");
}

#[tokio::test]
async fn a_loop_that_answers_on_its_last_allowed_call_passes() {
    let config = format!("{{max_iterations: 2, {SEARCH}}}");
    let script = |n| if n < 2 { calls_search() } else { says_done() };
    let (summary, interaction, calls) = run(&config, script).await;
    assert_eq!(calls, 2);
    assert_eq!(summary.passed, 1, "{interaction:?}");
    assert_eq!(interaction.call.turns.len(), 2);
}

// Paused time: the policy's one-second waits pass at once.
#[tokio::test(start_paused = true)]
async fn retry_policy_retries_only_errors_worth_retrying() {
    let policy = |extra: &str| {
        format!("{{retry_policy: {{max_retries: 2, backoff: constant}}, {SEARCH}{extra}}}")
    };
    // Overloaded twice, then an answer: two retries are enough.
    let script = |n| if n <= 2 { status(503) } else { says_done() };
    let (summary, _, calls) = run(&policy(""), script).await;
    assert_eq!((summary.passed, calls), (1, 3));

    // A bad request is not worth a second call.
    let (summary, interaction, calls) = run(&policy(""), |_| status(400)).await;
    assert_eq!((summary.errored, calls), (1, 1));
    assert_eq!(interaction.error.unwrap().kind, ErrorKind::Status);

    // Retries run out: the last error stands.
    let (summary, _, calls) = run(&policy(""), |_| status(529)).await;
    assert_eq!((summary.errored, calls), (1, 3));
}

#[tokio::test]
async fn without_a_retry_policy_a_failed_call_errors_at_once() {
    let (summary, interaction, calls) = run(&format!("{{{SEARCH}}}"), |_| status(503)).await;
    assert_eq!((summary.errored, calls), (1, 1));
    assert_eq!(interaction.error.unwrap().kind, ErrorKind::Status);
}
