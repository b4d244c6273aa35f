//! A Rust suite (`prill_run::run_test_suite`) sends the engine's events, and every
//! reporter shows it: a case that passes, one that fails its evaluator's threshold, and
//! one whose function errors.

use std::sync::Arc;

use prill_check::{BoxFuture, Evaluation, Evaluator, EvaluatorError, Threshold};
use prill_report::{
    Human, HumanOptions, JsonLines, JsonReport, Junit, Markdown, Output, Reporters,
};
use prill_run::{
    BoxError, Event, GridSearchParams, SuiteOptions, SuiteReport, TestCase, async_fn,
    run_test_suite,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::fixtures::Capture;
use crate::schema::{assert_valid_lines, assert_valid_report};

struct Question(&'static str);

impl TestCase for Question {
    fn hash(&self) -> String {
        self.0.to_owned()
    }
}

/// Scores the output as is; at least 0.5 passes.
struct Accuracy;

impl Evaluator<Question, f64> for Accuracy {
    fn id(&self) -> &str {
        "accuracy"
    }

    fn evaluate<'a>(
        &'a self,
        _: &'a Question,
        output: &'a f64,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            Ok(Some(Evaluation::score(*output).with_threshold(Threshold {
                gte: Some(0.5),
                ..Threshold::default()
            })))
        })
    }
}

/// Runs the suite `good`, `poor`, `broken` with `options`, returning its report and
/// every event it sent.
async fn run_suite(options: SuiteOptions) -> (SuiteReport, Vec<Event>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let f = async_fn(|q: &Question| {
        let name = q.0;
        async move {
            match name {
                "good" => Ok(0.9),
                "poor" => Ok(0.2),
                _ => Err::<f64, BoxError>("the model is offline".into()),
            }
        }
    });
    let cases = vec![Question("good"), Question("poor"), Question("broken")];
    let options = SuiteOptions {
        events: Some(tx),
        ..options
    };
    let report = run_test_suite("scores", cases, vec![Arc::new(Accuracy)], f, options)
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (report, events)
}

/// Every duration in a JSON value set to 0, so that outputs can be compared.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "duration" && v.is_number() {
                    *v = json!(0.0);
                } else {
                    normalize(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

#[tokio::test]
async fn a_suite_run_shows_in_every_reporter() {
    let (report, events) = run_suite(SuiteOptions::default()).await;
    assert_eq!(report.runs[0].cases.len(), 3);
    assert!(matches!(
        events.first(),
        Some(Event::RunStarted { units: 3 })
    ));
    assert!(matches!(events.last(), Some(Event::RunFinished(s)) if s.total() == 3));

    let (json, lines, junit, markdown, human) = (
        Capture::default(),
        Capture::default(),
        Capture::default(),
        Capture::default(),
        Capture::default(),
    );
    let mut reporters = Reporters::new();
    reporters
        .push("json", JsonReport::new(Output::writer(json.clone())))
        .push("jsonl", JsonLines::new(lines.clone()))
        .push("junit", Junit::new(Output::writer(junit.clone())))
        .push("markdown", Markdown::new(Output::writer(markdown.clone())))
        .push("human", Human::new(human.clone(), HumanOptions::default()));
    for event in &events {
        assert!(reporters.event(event).is_empty());
    }
    assert!(reporters.finish().is_empty());

    assert_valid_report(&json.text());
    assert_valid_lines(&lines.text());
    let mut doc: Value = serde_json::from_str(&json.text()).unwrap();
    normalize(&mut doc);
    let summary = &doc["summary"];
    assert_eq!(
        (&summary["passed"], &summary["failed"], &summary["errored"]),
        (&json!(1), &json!(1), &json!(1))
    );
    let unit = |name: &str| -> Value {
        doc["units"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["unit"]["name"] == name)
            .unwrap_or_else(|| panic!("no unit {name}"))
            .clone()
    };
    let good = unit("good");
    assert_eq!(good["verdict"], "passed");
    assert_eq!(
        good["unit"],
        json!({"case_id": "good", "name": "good", "file": "scores", "dialect": "rust-suite",
               "connection": "fn", "target": "scores"})
    );
    assert_eq!(good["success_ratio"], "1/1");
    let poor = unit("poor");
    assert_eq!(poor["verdict"], "failed");
    assert_eq!(
        poor["samples"][0]["interactions"][0]["checks"][0],
        json!({"path": "evaluators.accuracy", "name": "accuracy", "target": "output",
               "expected": null, "status": "failed", "outcome": "evaluated",
               "evaluation": {"score": 0.2, "threshold": {"gte": 0.5}},
               "message": "accuracy: score 0.2, needs >= 0.5"})
    );
    let broken = unit("broken");
    assert_eq!(broken["verdict"], "errored");
    let interaction = &broken["samples"][0]["interactions"][0];
    assert_eq!(interaction["checks"], json!([]));
    assert_eq!(interaction["error"]["kind"], "function");
    assert_eq!(interaction["error"]["message"], "fn: the model is offline");

    let xml = junit.text();
    for part in [
        r#"<testsuite name="scores" tests="3" skipped="0" errors="1" failures="1""#,
        r#"<testcase name="good [fn]" classname="scores""#,
        // The reason is the message a viewer shows; the tally opens the body.
        "<failure message=\"accuracy: score 0.2, needs &gt;= 0.5\" type=\"failed\">0 passed, 1 failed (need 1/1)\naccuracy: score 0.2, needs &gt;= 0.5\n  at evaluators.accuracy, interaction 0, sample 0</failure>",
        "<error message=\"error: interaction 0: fn: the model is offline\" type=\"function\">0 passed, 1 errored (need 1/1)\nerror: interaction 0: fn: the model is offline\n  interaction 0, sample 0</error>",
        r#"<property name="dialect" value="rust-suite"/>"#,
    ] {
        assert!(xml.contains(part), "{part}\nnot in\n{xml}");
    }
    // A suite has no file for CI tools to point at.
    assert!(!xml.contains(" file=") && !xml.contains(" line="), "{xml}");
    assert!(
        markdown
            .text()
            .contains("1 passed, 1 failed, 1 errored, 0 skipped"),
        "{}",
        markdown.text()
    );
    assert!(
        human
            .text()
            .contains("1 passed, 1 failed, 1 errored, 0 skipped in "),
        "{}",
        human.text()
    );
}

#[tokio::test]
async fn each_grid_combination_is_a_unit_of_its_own() {
    let params: GridSearchParams = [("model".to_owned(), vec![json!("small"), json!("large")])]
        .into_iter()
        .collect();
    let options = SuiteOptions {
        grid_search_params: Some(params),
        ..SuiteOptions::default()
    };
    let (_, events) = run_suite(options).await;
    assert!(matches!(
        events.first(),
        Some(Event::RunStarted { units: 6 })
    ));
    let mut names: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::UnitFinished(u) => Some(u.unit.label()),
            _ => None,
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "broken (model=\"large\") [fn]",
            "broken (model=\"small\") [fn]",
            "good (model=\"large\") [fn]",
            "good (model=\"small\") [fn]",
            "poor (model=\"large\") [fn]",
            "poor (model=\"small\") [fn]",
        ]
    );
    // Every unit starts, has one sample, and finishes.
    let count = |f: fn(&Event) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, Event::UnitStarted { .. })), 6);
    assert_eq!(count(|e| matches!(e, Event::SampleFinished { .. })), 6);
}
