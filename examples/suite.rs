//! `run_test_suite`, shaped like the Autoblocks testing SDK: a test case type of your
//! own, two evaluators (one scored against a threshold, one that reports metadata), grid
//! search over two parameters, both concurrency limits, and the engine's events into the
//! human reporter, as `prill run` prints them. No network, no server, no HTTP client.
//!
//! `cargo run -p prill-examples --example suite`

use std::sync::Arc;

use prill_check::{BoxFuture, Evaluation, Evaluator, EvaluatorError, Threshold};
use prill_report::{Human, HumanOptions, Reporters, Verbosity};
use prill_run::{
    GridSearchParams, Status, SuiteOptions, TestCase, async_fn, grid_search_ctx, run_test_suite,
};
use serde_json::json;

/// A question and the words a good answer contains.
struct Question {
    text: &'static str,
    expected: &'static [&'static str],
}

impl TestCase for Question {
    /// Built from the inputs only: editing `expected` keeps the case's history.
    fn hash(&self) -> String {
        self.text.to_owned()
    }
}

/// The share of expected words the answer has; passes at 0.5 or more.
struct Recall;

impl Evaluator<Question, String> for Recall {
    fn id(&self) -> &str {
        "recall"
    }

    /// At most two of these at once, whatever the suite's own limit.
    fn max_concurrency(&self) -> usize {
        2
    }

    fn evaluate<'a>(
        &'a self,
        case: &'a Question,
        output: &'a String,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            let found = case.expected.iter().filter(|w| output.contains(*w)).count();
            let score = found as f64 / case.expected.len().max(1) as f64;
            Ok(Some(Evaluation::score(score).with_threshold(Threshold {
                gte: Some(0.5),
                ..Threshold::default()
            })))
        })
    }
}

/// The answer's length, as metadata: scored, never failing.
struct Length;

impl Evaluator<Question, String> for Length {
    fn id(&self) -> &str {
        "length"
    }

    fn evaluate<'a>(
        &'a self,
        _case: &'a Question,
        output: &'a String,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            let mut evaluation = Evaluation::score(1.0);
            evaluation
                .metadata
                .insert("characters".into(), json!(output.chars().count()));
            Ok(Some(evaluation))
        })
    }
}

#[tokio::main]
async fn main() {
    let cases = vec![
        Question {
            text: "capital of France",
            expected: &["Paris"],
        },
        Question {
            text: "primary colours",
            expected: &["red", "blue", "yellow"],
        },
    ];
    // The function under test: it reads the grid combination it runs under.
    let answer = async_fn(|q: &Question| {
        let text = q.text;
        async move {
            let grid = grid_search_ctx().unwrap_or_default();
            let style = grid
                .get("style")
                .and_then(|v| v.as_str())
                .unwrap_or("plain");
            let reply = match text {
                "capital of France" => "Paris".to_owned(),
                _ if style == "full" => "red, blue and yellow".to_owned(),
                _ => "red".to_owned(),
            };
            Ok::<_, prill_run::BoxError>(reply)
        }
    });
    let grid: GridSearchParams = [
        ("style".to_owned(), vec![json!("plain"), json!("full")]),
        ("temperature".to_owned(), vec![json!(0.0)]),
    ]
    .into();

    // The human reporter, fed by the suite's events on a thread of its own.
    let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut reporters = Reporters::new();
    reporters.push(
        "human",
        Human::new(
            std::io::stdout(),
            HumanOptions {
                verbosity: Verbosity::Verbose,
                ..HumanOptions::default()
            },
        ),
    );
    let printer = tokio::task::spawn_blocking(move || {
        while let Some(event) = rx.blocking_recv() {
            reporters.event(&event);
        }
        reporters.finish();
    });

    let evaluators: Vec<Arc<dyn Evaluator<Question, String>>> =
        vec![Arc::new(Recall), Arc::new(Length)];
    let report = run_test_suite(
        "questions",
        cases,
        evaluators,
        answer,
        SuiteOptions {
            max_test_case_concurrency: Some(4),
            grid_search_params: Some(grid),
            events: Some(events),
            ..SuiteOptions::default()
        },
    )
    .await
    .expect("a valid suite");
    printer.await.expect("the reporter thread");
    println!(
        "{} runs: {} passed, {} failed, {} errored",
        report.runs.len(),
        report.count(Status::Passed),
        report.count(Status::Failed),
        report.count(Status::Errored)
    );
}
