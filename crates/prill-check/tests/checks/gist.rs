//! `gist` and `not_gist` through test judges: verdicts, inversion, judge errors, a
//! missing judge, what the judge receives, and what the evaluation carries back.

use std::sync::{Arc, Mutex};

use prill_check::{
    BoxFuture, CheckEvaluator, Evaluator, Judge, JudgeError, JudgeVerdict, Outcome, Response,
    Status, run_checks,
};
use prill_spec::plan::Part;
use serde_json::{Map, Value, json};

use crate::support::{MarkerJudge, run, stock};

/// A judge that always gives the same answer, and records what it was asked.
struct Fixed {
    answer: Result<JudgeVerdict, JudgeError>,
    seen: Mutex<Vec<(String, String)>>,
}

impl Fixed {
    fn verdict(pass: bool, reason: &str) -> Fixed {
        Fixed::answer(Ok(JudgeVerdict::new(pass, reason)))
    }

    fn failing(message: &str) -> Fixed {
        Fixed::answer(Err(JudgeError::new(message)))
    }

    fn answer(answer: Result<JudgeVerdict, JudgeError>) -> Fixed {
        Fixed {
            answer,
            seen: Mutex::new(Vec::new()),
        }
    }

    fn seen(&self) -> Vec<(String, String)> {
        self.seen.lock().expect("not poisoned").clone()
    }
}

impl Judge for Fixed {
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(async move {
            self.seen
                .lock()
                .expect("not poisoned")
                .push((criteria.to_owned(), sample.to_owned()));
            self.answer.clone()
        })
    }
}

const CRITERIA: &str = "The text sample should say hello.";

fn text_gist(name: &str) -> prill_spec::plan::Check {
    stock(Part::Text, &[], name, json!(CRITERIA))
}

#[test]
fn gist_follows_the_verdict_and_not_gist_inverts_it() {
    let response = Response::text("Hello, world");
    for (pass, name, want, message) in [
        (
            true,
            "gist",
            Status::Passed,
            "text: meets \"The text sample should say hello.\" as expected",
        ),
        (
            false,
            "gist",
            Status::Failed,
            "text: expected to meet \"The text sample should say hello.\", found \"Hello, world\"; judge: it says goodbye",
        ),
        (
            true,
            "not_gist",
            Status::Failed,
            "text: expected not to meet \"The text sample should say hello.\", found \"Hello, world\"; judge: it says goodbye",
        ),
        (
            false,
            "not_gist",
            Status::Passed,
            "text: does not meet \"The text sample should say hello.\" as expected",
        ),
    ] {
        let judge = Fixed::verdict(pass, "it says goodbye");
        let result = run(&text_gist(name), &response, Some(&judge));
        assert_eq!(result.status(), want, "{name} with verdict {pass}");
        assert_eq!(result.message(), message);
        assert_eq!(result.name, name);
        assert_eq!(result.target, "text");
        assert_eq!(result.expected, Some(json!(CRITERIA)));
        let Outcome::Evaluated { evaluation, .. } = &result.outcome else {
            panic!("{name} errored: {result:?}");
        };
        let passed = want == Status::Passed;
        assert_eq!(evaluation.score, if passed { 1.0 } else { 0.0 });
        assert_eq!(evaluation.metadata["reason"], json!("it says goodbye"));
        assert_eq!(
            judge.seen(),
            [(CRITERIA.to_owned(), "Hello, world".to_owned())]
        );
    }
}

#[test]
fn a_judge_that_errs_makes_both_forms_error() {
    let judge = Fixed::failing("rate limited by the provider");
    for name in ["gist", "not_gist"] {
        for response in [
            Response::text("Hello"),
            Response::text("").with_sly_data(json!({"x": 1})),
        ] {
            let result = run(&text_gist(name), &response, Some(&judge));
            assert_eq!(result.status(), Status::Errored, "{name}");
            assert_eq!(
                result.outcome,
                Outcome::Errored {
                    message: "text: the judge failed: rate limited by the provider".to_owned()
                }
            );
        }
    }
    // The other checks of the interaction still run and keep their own outcomes.
    let checks = [
        stock(Part::Text, &[], "keywords", json!("Hello")),
        text_gist("gist"),
        stock(Part::Text, &[], "keywords", json!("Goodbye")),
    ];
    let results =
        futures::executor::block_on(run_checks(&checks, &Response::text("Hello"), Some(&judge)));
    let statuses: Vec<Status> = results.iter().map(|r| r.status()).collect();
    assert_eq!(statuses, [Status::Passed, Status::Errored, Status::Failed]);
}

#[test]
fn without_a_judge_gist_errors_and_says_how_to_configure_one() {
    for name in ["gist", "not_gist"] {
        let check = stock(
            Part::SlyData,
            &["agent_reservations"],
            name,
            json!(CRITERIA),
        );
        let response = Response::default().with_sly_data(json!({"agent_reservations": []}));
        let result = run(&check, &response, None);
        assert_eq!(result.status(), Status::Errored, "{name}");
        assert_eq!(
            result.message(),
            format!(
                "sly_data.agent_reservations: `{name}` needs a judge and none is configured; set one with `--judge provider:model` or `[judge]` in prill.toml"
            )
        );
    }
}

#[test]
fn a_missing_field_fails_without_asking_the_judge() {
    let judge = Fixed::verdict(true, "would pass");
    for name in ["gist", "not_gist"] {
        let check = stock(Part::Structure, &["answer"], name, json!(CRITERIA));
        let result = run(&check, &Response::text("hi"), Some(&judge));
        assert_eq!(result.status(), Status::Failed, "{name}");
        assert_eq!(
            result.message(),
            "structure.answer is missing: the response has no structure"
        );
    }
    assert!(judge.seen().is_empty(), "{:?}", judge.seen());
}

#[test]
fn non_string_values_reach_the_judge_as_json_text() {
    let reservations = json!([
        {"reservation_id": "r-1", "lifetime_in_seconds": 300, "expiration_time_in_seconds": 1.5e9}
    ]);
    let sly = json!({
        "agent_reservations": reservations,
        "count": 42,
        "ratio": 0.25,
        "whole": 3.0,
        "flag": true,
        "nothing": null,
        "name": "plain \"quoted\" text",
        "nested": {"b": [1, {"c": "d"}], "a": 2},
    });
    let response = Response::default().with_sly_data(sly.clone());
    let judge = Fixed::verdict(true, "fine");
    let fields = [
        "agent_reservations",
        "count",
        "ratio",
        "whole",
        "flag",
        "name",
        "nested",
    ];
    for field in fields {
        let r = run(
            &stock(Part::SlyData, &[field], "gist", json!(CRITERIA)),
            &response,
            Some(&judge),
        );
        assert_eq!(r.status(), Status::Passed, "{}", r.message());
    }
    let samples: Vec<String> = judge.seen().into_iter().map(|(_, s)| s).collect();
    assert_eq!(
        samples,
        [
            r#"[{"reservation_id":"r-1","lifetime_in_seconds":300,"expiration_time_in_seconds":1500000000.0}]"#,
            "42",
            "0.25",
            "3.0",
            "true",
            "plain \"quoted\" text",
            r#"{"b":[1,{"c":"d"}],"a":2}"#,
        ]
    );
    // A null value is no value: the check fails as missing and the judge is not asked.
    let r = run(
        &stock(Part::SlyData, &["nothing"], "gist", json!(CRITERIA)),
        &response,
        Some(&judge),
    );
    assert_eq!(r.status(), Status::Failed);
    assert_eq!(r.message(), "sly_data.nothing is missing: it is null");
    assert_eq!(judge.seen().len(), samples.len());
    // The JSON text is the value itself, not a lossy rendering of it.
    for (field, sample) in fields.iter().zip(&samples) {
        if !sly[field].is_string() {
            let parsed: Value = serde_json::from_str(sample).expect("JSON text");
            assert_eq!(&parsed, &sly[field]);
        }
    }
}

#[test]
fn the_judge_sees_long_criteria_whole_while_the_message_cuts_them() {
    let criteria = format!("The sample should {}", "really ".repeat(40));
    let judge = Fixed::verdict(false, "it does not");
    let r = run(
        &stock(Part::Text, &[], "gist", json!(criteria)),
        &Response::text("x".repeat(300)),
        Some(&judge),
    );
    assert_eq!(r.status(), Status::Failed);
    assert_eq!(judge.seen()[0].0, criteria);
    assert_eq!(judge.seen()[0].1, "x".repeat(300));
    assert_eq!(r.message().matches('…').count(), 2, "{}", r.message());
    assert!(
        r.message().ends_with("; judge: it does not"),
        "{}",
        r.message()
    );
    assert!(r.message().chars().count() < 250, "{}", r.message());
}

#[test]
fn the_reason_is_in_the_failure_message_and_the_metadata_is_merged() {
    let mut metadata = Map::new();
    metadata.insert("model".to_owned(), json!("judge-model-1"));
    metadata.insert("votes".to_owned(), json!([true, false, false]));
    metadata.insert("cache_hit".to_owned(), json!(false));
    let judge = Fixed::answer(Ok(JudgeVerdict {
        pass: false,
        reason: "2 of 3 votes say the answer never mentions Liverpool".to_owned(),
        metadata,
    }));
    let r = run(
        &stock(
            Part::Structure,
            &["answer"],
            "gist",
            json!("mentions Liverpool"),
        ),
        &Response::default().with_structure(json!({"answer": "The Beatles"})),
        Some(&judge),
    );
    assert_eq!(r.status(), Status::Failed);
    assert_eq!(
        r.message(),
        "structure.answer: expected to meet \"mentions Liverpool\", found \"The Beatles\"; judge: 2 of 3 votes say the answer never mentions Liverpool"
    );
    let Outcome::Evaluated { evaluation, .. } = &r.outcome else {
        panic!("errored: {r:?}");
    };
    let mut want = Map::new();
    want.insert(
        "reason".to_owned(),
        json!("2 of 3 votes say the answer never mentions Liverpool"),
    );
    want.insert("model".to_owned(), json!("judge-model-1"));
    want.insert("votes".to_owned(), json!([true, false, false]));
    want.insert("cache_hit".to_owned(), json!(false));
    assert_eq!(evaluation.metadata, want);
}

#[test]
fn a_marker_judge_decides_on_the_sample() {
    let judge = MarkerJudge::new("Liverpool");
    let check = stock(
        Part::Structure,
        &["answer"],
        "gist",
        json!("mentions the city"),
    );
    for (answer, want) in [
        (json!("from Liverpool"), Status::Passed),
        (json!("from London"), Status::Failed),
        (json!({"city": "Liverpool"}), Status::Passed),
        (json!(["London", "Liverpool"]), Status::Passed),
        (json!(["London"]), Status::Failed),
    ] {
        let response = Response::default().with_structure(json!({"answer": answer}));
        let r = run(&check, &response, Some(&judge));
        assert_eq!(r.status(), want, "{answer}: {}", r.message());
    }
}

#[test]
fn gist_as_an_evaluator_carries_the_verdict_or_the_error() {
    let output = Response::text("Hello, world");
    let evaluator = CheckEvaluator::stock(Part::Text, &[], "gist", json!(CRITERIA))
        .expect("a stock test")
        .with_judge(Arc::new(Fixed::verdict(true, "it greets")));
    let evaluation = futures::executor::block_on(evaluator.evaluate(&(), &output))
        .expect("evaluated")
        .expect("something to evaluate");
    assert_eq!(evaluation.score, 1.0);
    assert_eq!(evaluation.metadata["reason"], json!("it greets"));
    assert_eq!(
        evaluation.metadata["message"],
        json!("text: meets \"The text sample should say hello.\" as expected")
    );

    let evaluator = CheckEvaluator::stock(Part::Text, &[], "NOT_GIST", json!(CRITERIA))
        .expect("names match in any case")
        .with_judge(Arc::new(Fixed::failing("timed out")));
    let error = futures::executor::block_on(evaluator.evaluate(&(), &output))
        .expect_err("a judge error is an evaluator error");
    assert_eq!(error.message, "text: the judge failed: timed out");

    let evaluator =
        CheckEvaluator::stock(Part::Text, &[], "gist", json!(CRITERIA)).expect("a stock test");
    let error = futures::executor::block_on(evaluator.evaluate(&(), &output))
        .expect_err("no judge is an evaluator error");
    assert!(error.message.contains("needs a judge"), "{}", error.message);
}

/// A check on the whole trajectory, written as a spec writes it.
fn trajectory_gist(negated: bool, criteria: &str) -> prill_spec::plan::Check {
    use prill_spec::model::sentinel::Assertion;
    let assertion = if negated {
        Assertion::NotTrajectoryGist(criteria.to_owned())
    } else {
        Assertion::TrajectoryGist(criteria.to_owned())
    };
    prill_spec::plan::Check {
        location: None,
        path: format!("assertions[0].{}", assertion.name()).into(),
        kind: prill_spec::plan::CheckKind::Assertion(assertion),
    }
}

/// `trajectory_gist` shows the judge every call with its arguments and result (a failed
/// one marked), then the answer; its verdict and inversion work as gist's do.
#[test]
fn trajectory_gist_shows_the_judge_the_calls_their_results_and_the_answer() {
    let mut response = Response::text("Paris is sunny: pack light.");
    response.tool_calls = vec![
        prill_check::ToolCall::new("search", json!({"q": "Paris"}))
            .with_result(json!({"hits": ["Paris guide"]}), false),
        prill_check::ToolCall::new("lookup", json!({"id": 7}))
            .with_result(json!("lookup service is down"), true),
        prill_check::ToolCall::new("weather", json!("{\"city\": \"Paris\"}")),
    ];
    let criteria = "Searches before it answers, and says when a tool failed.";
    let judge = Fixed::verdict(false, "it hides the failed lookup");
    let result = run(&trajectory_gist(false, criteria), &response, Some(&judge));
    assert_eq!(result.status(), Status::Failed);
    assert_eq!(result.name, "trajectory_gist");
    assert_eq!(result.target, "trajectory");
    assert_eq!(result.expected, Some(json!(criteria)));
    assert_eq!(result.found, Some(json!(["search", "lookup", "weather"])));
    assert!(
        result.message().starts_with(
            "trajectory_gist: the trajectory: expected to meet \"Searches before it answers, and says when a tool failed.\", found \"Tool calls, in the order they were made:"
        ),
        "{}",
        result.message()
    );
    assert!(
        result
            .message()
            .ends_with("; judge: it hides the failed lookup"),
        "{}",
        result.message()
    );
    assert_eq!(
        judge.seen(),
        [(
            criteria.to_owned(),
            "Tool calls, in the order they were made:\n\
             1. search {\"q\":\"Paris\"} → {\"hits\":[\"Paris guide\"]}\n\
             2. lookup {\"id\":7} → error: \"lookup service is down\"\n\
             3. weather {\"city\":\"Paris\"}\n\
             Final answer:\n\
             Paris is sunny: pack light."
                .to_owned()
        )]
    );
    let passing = Fixed::verdict(true, "fine");
    let result = run(&trajectory_gist(true, criteria), &response, Some(&passing));
    assert_eq!(result.status(), Status::Failed, "not_ inverts");
    assert_eq!(result.name, "not_trajectory_gist");
    let result = run(&trajectory_gist(true, criteria), &response, Some(&judge));
    assert_eq!(result.status(), Status::Passed);
    assert_eq!(
        result.message(),
        "not_trajectory_gist: the trajectory: does not meet \"Searches before it answers, and says when a tool failed.\" as expected"
    );
}

/// No calls and no answer are said, not left blank; a runaway agent's calls are cut.
#[test]
fn a_trajectory_with_nothing_or_too_much_is_shown_within_bounds() {
    let judge = MarkerJudge::new("never");
    run(
        &trajectory_gist(false, "x"),
        &Response::default(),
        Some(&judge),
    );
    assert_eq!(
        judge.seen()[0].1,
        "No tool calls were made.\nNo final answer."
    );
    let mut response = Response::text("y".repeat(10_000));
    for i in 0..150 {
        response = response.with_tool_call("t", json!({"blob": "z".repeat(5_000), "i": i}));
    }
    let judge = MarkerJudge::new("never");
    run(&trajectory_gist(false, "x"), &response, Some(&judge));
    let sample = &judge.seen()[0].1;
    assert!(sample.contains("\n100. t "), "the first hundred calls");
    assert!(!sample.contains("\n101. t "));
    assert!(sample.contains("… and 50 more calls\n"));
    assert!(sample.len() < 120_000, "bounded: {} bytes", sample.len());
}

/// Without a judge, or with one that fails, `trajectory_gist` errors, never passes.
#[test]
fn trajectory_gist_errors_without_a_judge_or_when_the_judge_fails() {
    let response = Response::text("done").with_tool_call("search", json!({}));
    let result = run(&trajectory_gist(false, "x"), &response, None);
    assert_eq!(result.status(), Status::Errored);
    assert!(
        result
            .message()
            .starts_with("trajectory: `trajectory_gist` needs a judge and none is configured"),
        "{}",
        result.message()
    );
    let failing = Fixed::failing("the judge model timed out");
    let result = run(&trajectory_gist(true, "x"), &response, Some(&failing));
    assert_eq!(result.status(), Status::Errored);
    assert_eq!(
        result.message(),
        "not_trajectory_gist: the trajectory: the judge failed: the judge model timed out"
    );
}
