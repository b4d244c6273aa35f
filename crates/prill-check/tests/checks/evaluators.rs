//! The `Evaluator` API for code users: every built-in check as a `CheckEvaluator`
//! over a `Response` or a `String`, errors, metadata, concurrency and thresholds.

use std::time::Duration;

use prill_check::{
    BoxFuture, CheckEvaluator, Evaluation, Evaluator, EvaluatorError, Response, Status, Threshold,
    run_check,
};
use prill_spec::model::sentinel::{Assertion, OutputType};
use prill_spec::plan::{Check, CheckKind, Part};
use serde_json::{Value, json};

/// A test case, as a code user might define one.
struct Case {
    expected_city: String,
}

fn case() -> Case {
    Case {
        expected_city: "Paris".to_owned(),
    }
}

fn evaluate<O: prill_check::Output + Sync>(
    evaluator: &dyn Evaluator<Case, O>,
    output: &O,
) -> Result<Option<Evaluation>, EvaluatorError> {
    futures::executor::block_on(evaluator.evaluate(&case(), output))
}

/// The evaluation of a check evaluator that must evaluate.
fn evaluated<O: prill_check::Output + Sync>(evaluator: &CheckEvaluator, output: &O) -> Evaluation {
    evaluate(evaluator, output)
        .unwrap_or_else(|e| panic!("errored: {e}"))
        .expect("a built-in check always has something to evaluate")
}

fn status_and_message<O: prill_check::Output + Sync>(
    evaluator: &CheckEvaluator,
    output: &O,
) -> (Status, String) {
    let e = evaluated(evaluator, output);
    let message = e.metadata["message"]
        .as_str()
        .expect("the message is a string")
        .to_owned();
    (e.status(), message)
}

fn id(evaluator: &dyn Evaluator<Case, String>) -> &str {
    evaluator.id()
}

#[test]
fn must_contain_and_must_not_contain_over_responses_and_strings() {
    let text = "The capital of France is Paris.".to_owned();
    let response = Response::text(text.clone());
    let contains = CheckEvaluator::must_contain("Paris");
    assert_eq!(id(&contains), "must_contain");
    for (status, message) in [
        status_and_message(&contains, &text),
        status_and_message(&contains, &response),
    ] {
        assert_eq!(status, Status::Passed);
        assert_eq!(message, "must_contain: output contains \"Paris\"");
    }
    // As Sentinel's: both sides lowercased.
    let (status, message) = status_and_message(&CheckEvaluator::must_contain("paris"), &text);
    assert_eq!(status, Status::Passed);
    assert_eq!(message, "must_contain: output contains \"paris\"");
    let (status, message) = status_and_message(&CheckEvaluator::must_contain_exact("paris"), &text);
    assert_eq!(status, Status::Failed);
    assert_eq!(
        message,
        "must_contain: expected the output to contain \"paris\" (case-sensitive), found \"The capital of France is Paris.\""
    );
    let not = CheckEvaluator::must_not_contain("London");
    assert_eq!(status_and_message(&not, &text).0, Status::Passed);
    let not = CheckEvaluator::must_not_contain_exact("france");
    assert_eq!(status_and_message(&not, &text).0, Status::Passed);
    let not = CheckEvaluator::must_not_contain("FRANCE");
    let (status, message) = status_and_message(&not, &response);
    assert_eq!(status, Status::Failed);
    assert!(message.starts_with("must_not_contain: expected the output not to contain \"FRANCE\""));
    // A response with no text contains nothing.
    assert_eq!(
        status_and_message(&CheckEvaluator::must_contain("x"), &Response::default()).0,
        Status::Failed
    );
    assert_eq!(
        status_and_message(&CheckEvaluator::must_not_contain("x"), &Response::default()).0,
        Status::Passed
    );
}

#[test]
fn regex_match_compiles_once_and_reports_the_pattern() {
    assert!(CheckEvaluator::regex_match("(unclosed").is_err());
    let date = CheckEvaluator::regex_match(r"\d{4}-\d{2}-\d{2}").expect("a valid pattern");
    let e = evaluated(&date, &"due 2026-11-22, not later".to_owned());
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(e.metadata["pattern"], json!(r"\d{4}-\d{2}-\d{2}"));
    assert_eq!(
        e.metadata["message"],
        json!(r#"regex_match: output matches /\d{4}-\d{2}-\d{2}/ at "2026-11-22""#)
    );
    assert_eq!(
        evaluated(&date, &"due soon".to_owned()).status(),
        Status::Failed
    );
    let blind = CheckEvaluator::regex_match("(?i)^paris").expect("a valid pattern");
    assert_eq!(
        evaluated(&blind, &"PARIS it is".to_owned()).status(),
        Status::Passed
    );
    assert_eq!(
        evaluated(&blind, &"In Paris".to_owned()).status(),
        Status::Failed
    );
}

#[test]
fn must_call_tool_needs_every_tool_named() {
    let response = Response::text("done")
        .with_tool_call("web_search", json!({"q": "capital of France"}))
        .with_tool_call("calculator", json!({"expr": "1+1"}));
    let one = CheckEvaluator::must_call_tool(["web_search"]);
    assert_eq!(evaluated(&one, &response).status(), Status::Passed);
    let both = CheckEvaluator::must_call_tool(vec!["calculator".to_owned(), "web_search".into()]);
    let e = evaluated(&both, &response);
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(
        e.metadata["message"],
        json!("must_call_tool: called calculator, web_search")
    );
    let e = evaluated(
        &CheckEvaluator::must_call_tool(["translate", "web_search"]),
        &response,
    );
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(e.metadata["called"], json!(["web_search", "calculator"]));
    assert_eq!(e.metadata["missing"], json!(["translate"]));
    assert_eq!(
        e.metadata["message"],
        json!("must_call_tool: expected calls to translate, found calls to web_search, calculator")
    );
    // Plain text made no tool call.
    let e = evaluated(&one, &"I searched the web.".to_owned());
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        e.metadata["message"],
        json!("must_call_tool: expected calls to web_search, found calls to no tool")
    );
}

#[test]
fn output_type_classifies_the_text() {
    let cases = [
        (OutputType::Json, r#"{"city": "Paris"}"#, Status::Passed),
        (OutputType::Json, "The city is Paris.", Status::Failed),
        (OutputType::Text, "The city is Paris.", Status::Passed),
        (OutputType::Text, "[1, 2]", Status::Failed),
        (OutputType::Markdown, "# Cities\n- Paris", Status::Passed),
        (OutputType::Markdown, "Paris.", Status::Failed),
        (
            OutputType::Code,
            "fn main() {\n    run();\n}",
            Status::Passed,
        ),
        (
            OutputType::Code,
            "Paris is lovely in spring.",
            Status::Failed,
        ),
        (
            OutputType::Structured,
            "| city |\n|---|\n| Paris |",
            Status::Passed,
        ),
        (OutputType::Structured, "Paris, then Lyon.", Status::Failed),
    ];
    for (kind, text, want) in cases {
        let evaluator = CheckEvaluator::output_type(kind);
        let e = evaluated(&evaluator, &text.to_owned());
        assert_eq!(e.status(), want, "{kind:?} on {text:?}");
        let message = e.metadata["message"].as_str().expect("a message");
        assert!(message.starts_with("output_type: "), "{message}");
        let reason = e.metadata["reason"].as_str().expect("a reason");
        assert!(message.ends_with(reason), "{message} / {reason}");
    }
}

#[test]
fn max_latency_needs_a_recorded_latency() {
    let evaluator = CheckEvaluator::max_latency(Duration::from_millis(250));
    let at = |ms: u64| Response::text("x").with_latency(Duration::from_millis(ms));
    let e = evaluated(&evaluator, &at(250));
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(e.metadata["latency_ms"], json!(250.0));
    assert_eq!(
        e.metadata["message"],
        json!("max_latency_ms: took 250 ms, within 250 ms")
    );
    let e = evaluated(&evaluator, &at(251));
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        e.metadata["message"],
        json!("max_latency_ms: expected at most 250 ms, took 251 ms")
    );
    for error in [
        evaluate(&evaluator, &"no timing for plain text".to_owned()),
        evaluate(&evaluator, &Response::text("x")),
    ] {
        assert_eq!(
            error,
            Err(EvaluatorError::new(
                "max_latency_ms: the response's latency was not recorded"
            ))
        );
    }
}

#[test]
fn a_latency_exactly_at_the_bound_passes_and_one_millisecond_more_fails() {
    let mut wrong = Vec::new();
    for max in (1..=5_000).chain([60_000, 1_000_000]) {
        let evaluator = CheckEvaluator::max_latency(Duration::from_millis(max));
        let at = |d: Duration| evaluated(&evaluator, &Response::text("x").with_latency(d));
        let e = at(Duration::from_millis(max));
        if e.status() != Status::Passed || e.metadata["latency_ms"] != json!(max as f64) {
            wrong.push(format!("{max} ms at {max} ms: {:?}", e.metadata));
        }
        let e = at(Duration::from_millis(max + 1));
        if e.status() != Status::Failed {
            wrong.push(format!("{} ms at {max} ms: {:?}", max + 1, e.metadata));
        }
        let e = at(Duration::from_millis(max) + Duration::from_nanos(1));
        if e.status() != Status::Failed {
            wrong.push(format!("{max} ms + 1 ns at {max} ms: {:?}", e.metadata));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(3)]
    );
}

#[test]
fn token_bounds_count_offline_or_use_the_providers_count() {
    let text = "one two three four".to_owned();
    let e = evaluated(&CheckEvaluator::min_tokens(4), &text);
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(e.metadata["tokens"], json!(4));
    assert_eq!(e.metadata["token_count_source"], json!("tiktoken-o200k"));
    assert_eq!(
        evaluated(&CheckEvaluator::min_tokens(5), &text).status(),
        Status::Failed
    );
    assert_eq!(
        evaluated(&CheckEvaluator::max_tokens(4), &text).status(),
        Status::Passed
    );
    let e = evaluated(&CheckEvaluator::max_tokens(3), &text);
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        e.metadata["message"],
        json!("max_tokens: expected at most 3 output tokens, found 4 (tiktoken-o200k)")
    );
    let reported = Response::text(text).with_usage(Some(12), Some(40));
    let e = evaluated(&CheckEvaluator::min_tokens(40), &reported);
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(e.metadata["tokens"], json!(40));
    assert_eq!(e.metadata["token_count_source"], json!("provider"));
    assert_eq!(
        evaluated(&CheckEvaluator::max_tokens(39), &reported).status(),
        Status::Failed
    );
}

#[test]
fn stock_tests_by_name() {
    let response = Response::text("The Beatles")
        .with_structure(json!({"answer": "The Beatles", "running_cost": 3.0}));
    let keywords =
        CheckEvaluator::stock(Part::Structure, &["answer"], "keywords", json!("Beatles"))
            .expect("a stock test");
    assert_eq!(
        Evaluator::<Case, Response>::id(&keywords),
        "structure.answer.keywords"
    );
    let e = evaluated(&keywords, &response);
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(
        e.metadata["message"],
        json!("structure.answer: found \"Beatles\" as expected")
    );
    let cost = CheckEvaluator::stock(Part::Structure, &["running_cost"], "Value", json!(6.0))
        .expect("names match in any case");
    let (status, message) = status_and_message(&cost, &response);
    assert_eq!(status, Status::Failed);
    assert_eq!(
        message,
        "structure.running_cost: expected value 6.0, found 3.0"
    );
    // Plain text has only a text part.
    let text = CheckEvaluator::stock(Part::Text, &[], "not_keywords", json!("Stones"))
        .expect("a stock test");
    assert_eq!(
        status_and_message(&text, &"The Beatles".to_owned()).0,
        Status::Passed
    );
    let (status, message) = status_and_message(&cost, &"3.0".to_owned());
    assert_eq!(status, Status::Failed);
    assert_eq!(
        message,
        "structure.running_cost is missing: the response has no structure"
    );
    assert!(CheckEvaluator::stock(Part::Text, &[], "keyword", json!("x")).is_none());
    assert!(CheckEvaluator::stock(Part::Text, &[], "not_present", json!("x")).is_none());
}

#[test]
fn ids_and_concurrency_can_be_set() {
    let e = CheckEvaluator::must_contain("Paris");
    assert_eq!(Evaluator::<Case, String>::max_concurrency(&e), 10);
    let e = e.with_id("mentions-paris").with_max_concurrency(3);
    assert_eq!(id(&e), "mentions-paris");
    assert_eq!(Evaluator::<Case, String>::max_concurrency(&e), 3);
    let e = e.with_max_concurrency(0);
    assert_eq!(
        Evaluator::<Case, String>::max_concurrency(&e),
        1,
        "at least one evaluation runs"
    );
}

/// A user's evaluator that implements only `id` and `evaluate`.
struct MentionsExpectedCity;

impl Evaluator<Case, String> for MentionsExpectedCity {
    fn id(&self) -> &str {
        "mentions-expected-city"
    }

    fn evaluate<'a>(
        &'a self,
        case: &'a Case,
        output: &'a String,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            if output.is_empty() {
                return Ok(None);
            }
            if output == "ERROR" {
                return Err(EvaluatorError::new("the output is an error marker"));
            }
            let found = output.contains(&case.expected_city);
            Ok(Some(
                Evaluation::pass_fail(found).with("city", case.expected_city.clone()),
            ))
        })
    }
}

/// A user's evaluator that scores, with or without a threshold.
struct Scored {
    score: f64,
    threshold: Option<Threshold>,
}

impl Evaluator<Case, String> for Scored {
    fn id(&self) -> &str {
        "scored"
    }

    fn evaluate<'a>(
        &'a self,
        _case: &'a Case,
        _output: &'a String,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            let e = Evaluation::score(self.score);
            Ok(Some(match self.threshold {
                Some(t) => e.with_threshold(t),
                None => e,
            }))
        })
    }
}

#[test]
fn a_user_evaluator_gets_the_default_concurrency_and_its_own_verdicts() {
    let user = MentionsExpectedCity;
    assert_eq!(user.max_concurrency(), 10);
    assert_eq!(id(&user), "mentions-expected-city");
    let e = evaluate(&user, &"It is Paris.".to_owned())
        .expect("evaluated")
        .expect("something to evaluate");
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(e.metadata["city"], json!("Paris"));
    let e = evaluate(&user, &"It is Lyon.".to_owned())
        .expect("evaluated")
        .expect("something to evaluate");
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(evaluate(&user, &String::new()), Ok(None));
    assert_eq!(
        evaluate(&user, &"ERROR".to_owned()),
        Err(EvaluatorError::new("the output is an error marker"))
    );
}

#[test]
fn thresholds_decide_a_scored_evaluation() {
    let status = |score: f64, threshold: Option<Threshold>| {
        evaluate(&Scored { score, threshold }, &"anything".to_owned())
            .expect("evaluated")
            .expect("something to evaluate")
            .status()
    };
    let t = Threshold::default;
    // The SDK's example: a score of 0.5 under `lt: 0.6` passes.
    assert_eq!(
        status(
            0.5,
            Some(Threshold {
                lt: Some(0.6),
                ..t()
            })
        ),
        Status::Passed
    );
    assert_eq!(status(0.5, None), Status::Unscored);
    // Each bound on both sides of its edge.
    let cases = [
        (
            0.6,
            Threshold {
                lt: Some(0.6),
                ..t()
            },
            Status::Failed,
        ),
        (
            0.6,
            Threshold {
                lte: Some(0.6),
                ..t()
            },
            Status::Passed,
        ),
        (
            0.61,
            Threshold {
                lte: Some(0.6),
                ..t()
            },
            Status::Failed,
        ),
        (
            0.5,
            Threshold {
                gt: Some(0.5),
                ..t()
            },
            Status::Failed,
        ),
        (
            0.51,
            Threshold {
                gt: Some(0.5),
                ..t()
            },
            Status::Passed,
        ),
        (
            0.5,
            Threshold {
                gte: Some(0.5),
                ..t()
            },
            Status::Passed,
        ),
        (
            0.49,
            Threshold {
                gte: Some(0.5),
                ..t()
            },
            Status::Failed,
        ),
        (
            0.5,
            Threshold {
                gt: Some(0.4),
                lte: Some(0.5),
                ..t()
            },
            Status::Passed,
        ),
        (
            0.3,
            Threshold {
                gt: Some(0.4),
                lte: Some(0.5),
                ..t()
            },
            Status::Failed,
        ),
        (0.0, t(), Status::Passed),
    ];
    for (score, threshold, want) in cases {
        assert_eq!(
            status(score, Some(threshold)),
            want,
            "{score} under {threshold:?}"
        );
    }
    for (given, clamped) in [(1.7, 1.0), (-0.2, 0.0)] {
        let e = evaluate(
            &Scored {
                score: given,
                threshold: None,
            },
            &String::new(),
        )
        .expect("evaluated")
        .expect("something to evaluate");
        assert_eq!(e.score, clamped, "scores are clamped to 0..=1");
    }
}

#[test]
fn a_sentinel_assertion_runs_as_a_plan_check() {
    let check = Check {
        location: None,
        path: "assertions[1].must_call_tool".into(),
        kind: CheckKind::Assertion(Assertion::MustCallTool(vec!["web_search".to_owned()])),
    };
    let response = Response::text("x").with_tool_call("web_search", json!({}));
    let result = futures::executor::block_on(run_check(&check, &response, None));
    assert_eq!(result.status(), Status::Passed);
    assert_eq!(result.path, check.path);
    assert_eq!(result.name, "must_call_tool");
    assert_eq!(result.target, "tool_calls");
    assert_eq!(result.expected, Some(json!(["web_search"])));
    let check = Check {
        location: None,
        path: "assertions[0].max_latency_ms".into(),
        kind: CheckKind::Assertion(Assertion::MaxLatencyMs(10)),
    };
    let result = futures::executor::block_on(run_check(&check, &response, None));
    assert_eq!(result.status(), Status::Errored);
    assert_eq!(result.expected, Some(json!(10)));
}

#[test]
fn a_str_is_an_output_too() {
    let e = evaluate(&CheckEvaluator::must_contain("Paris"), &"Paris")
        .expect("evaluated")
        .expect("something to evaluate");
    assert_eq!(e.status(), Status::Passed);
}

#[test]
fn built_in_and_user_evaluators_run_side_by_side() {
    let evaluators: Vec<Box<dyn Evaluator<Case, String>>> = vec![
        Box::new(CheckEvaluator::must_contain("Paris")),
        Box::new(CheckEvaluator::regex_match(r"^\w+").expect("a valid pattern")),
        Box::new(CheckEvaluator::max_latency(Duration::from_secs(1))),
        Box::new(MentionsExpectedCity),
        Box::new(Scored {
            score: 0.5,
            threshold: None,
        }),
    ];
    let output = "Paris, of course.".to_owned();
    let outcomes: Vec<(String, Result<Option<Status>, String>)> = evaluators
        .iter()
        .map(|e| {
            let outcome = futures::executor::block_on(e.evaluate(&case(), &output))
                .map(|o| o.map(|ev| ev.status()))
                .map_err(|err| err.to_string());
            (e.id().to_owned(), outcome)
        })
        .collect();
    let want: Vec<(String, Result<Option<Status>, String>)> = vec![
        ("must_contain".into(), Ok(Some(Status::Passed))),
        ("regex_match".into(), Ok(Some(Status::Passed))),
        (
            "max_latency_ms".into(),
            Err("max_latency_ms: the response's latency was not recorded".into()),
        ),
        ("mentions-expected-city".into(), Ok(Some(Status::Passed))),
        ("scored".into(), Ok(Some(Status::Unscored))),
    ];
    assert_eq!(outcomes, want);
}

#[test]
fn evaluations_serialize_with_their_message() {
    let e = evaluated(&CheckEvaluator::must_contain("Lyon"), &"Paris".to_owned());
    let v: Value = serde_json::to_value(&e).expect("serializable");
    assert_eq!(
        v,
        json!({
            "score": 0.0,
            "threshold": {"gte": 1.0},
            "metadata": {"message": "must_contain: expected the output to contain \"Lyon\", found \"Paris\""}
        })
    );
}

#[test]
fn trajectory_evaluators_pass_and_fail_on_the_calls_in_order() {
    use prill_spec::model::sentinel::{ArgMatcher, Pattern};
    let response = Response::text("done")
        .with_tool_call("search", json!({"query": "cheap laptop"}))
        .with_tool_call("summarize", json!({}))
        .with_iterations(1);
    let ok = [
        CheckEvaluator::tool_sequence(["search", "summarize"], true),
        CheckEvaluator::must_not_call_tool(["delete_user"]),
        CheckEvaluator::tool_args(
            "search",
            [(
                "query".to_owned(),
                ArgMatcher::Regex(Pattern::new("laptop$").unwrap()),
            )],
        ),
        CheckEvaluator::max_tool_calls(2),
        CheckEvaluator::min_tool_calls(2),
        CheckEvaluator::max_iterations_used(1),
    ];
    for e in &ok {
        assert_eq!(evaluated(e, &response).status(), Status::Passed);
    }
    let e = evaluated(
        &CheckEvaluator::tool_sequence(["search", "fetch"], false),
        &response,
    );
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        e.metadata["message"],
        json!(
            "tool_sequence: expected calls in the order search → fetch, found search → summarize (no call to fetch after search)"
        )
    );
    let e = evaluated(
        &CheckEvaluator::must_not_call_tool(["summarize"]),
        &response,
    );
    assert_eq!(e.status(), Status::Failed);
}

/// `graph_steps` as an evaluator: the nodes a response says ran, in the sequence's mode;
/// a response that does not say errors.
#[test]
fn graph_steps_as_an_evaluator_matches_the_nodes_that_ran() {
    use prill_spec::model::sentinel::{SequenceMode, ToolSequence};
    let mut sequence = ToolSequence::in_order(vec!["agent".into(), "tools".into()]);
    sequence.mode = SequenceMode::Superset;
    let evaluator = CheckEvaluator::graph_steps(sequence);
    let mut response = Response::text("done");
    response.graph_steps = Some(vec!["agent".into(), "tools".into(), "agent".into()]);
    let evaluation = futures::executor::block_on(Evaluator::<(), Response>::evaluate(
        &evaluator,
        &(),
        &response,
    ))
    .unwrap()
    .unwrap();
    assert_eq!(evaluation.status(), prill_check::Status::Passed);
    let unsaid = futures::executor::block_on(Evaluator::<(), Response>::evaluate(
        &evaluator,
        &(),
        &Response::text("done"),
    ));
    assert!(
        unsaid
            .unwrap_err()
            .message
            .contains("does not say which graph nodes ran")
    );
}
