//! The Sentinel assertions, over a [`Response`]: one module per family, each holding
//! everything about its assertions (how they are evaluated, their messages, what they
//! look at), and here the one dispatch from an [`Assertion`] to its module.
//!
//! - `must_contain`, `must_not_contain` in [`contains`]
//! - `regex_match` in [`pattern`]
//! - `must_call_tool` in [`tools`]
//! - `output_type` in [`output_type`]
//! - `max_latency_ms` in [`latency`]
//! - `min_tokens`, `max_tokens` in [`tokens`]
//! - `tool_sequence`, `must_not_call_tool`, `tool_args`, `max_tool_calls`,
//!   `min_tool_calls`, `max_iterations_used` (Prill's extensions) in [`trajectory`]
//!
//! What a file may say is checked by `prill-spec` (`validate/sentinel/assertions.rs`),
//! which builds the [`Assertion`]s evaluated here.

use prill_spec::model::sentinel::Assertion;
use serde_json::Value;

use crate::evaluation::Evaluation;
use crate::response::Response;
use crate::text::{short, short_text};

pub mod contains;
pub mod latency;
mod matching;
pub mod output_type;
pub mod pattern;
mod sequence;
pub mod state;
pub mod tokens;
pub mod tools;
pub mod trajectory;

/// Why an assertion could not be evaluated. The check errors; it neither passes nor
/// fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssertionError {
    /// `max_latency_ms` on a response whose latency was never recorded.
    #[error("max_latency_ms: the response's latency was not recorded")]
    LatencyNotRecorded,
    /// `max_iterations_used` on a response that does not say how many model calls it
    /// took (an agent behind a connection).
    #[error(
        "max_iterations_used: the response does not say how many model calls it took; the check applies to specs that run a model"
    )]
    IterationsNotRecorded,
    /// `graph_steps` on a response that does not say which graph nodes ran.
    #[error(
        "graph_steps: the response does not say which graph nodes ran; the check applies to `framework: langgraph`"
    )]
    StepsNotRecorded,
    /// A check a judge decides (`trajectory_gist`), asked of [`evaluate`], which has none;
    /// [`crate::run_check`] runs it with the judge.
    #[error("{0}: needs a judge; run it with run_check")]
    NeedsJudge(&'static str),
    /// `expect_state` on a response that carries no end state.
    #[error(
        "expect_state: no end state was given; the check reads the state a `tool_command` program gives when the conversation is over"
    )]
    NoEndState,
    /// `expect_state: {replay}` whose calls were never replayed.
    #[error("expect_state: the reference calls of `replay` were not replayed")]
    NotReplayed,
    /// `expect_state: {replay}` whose reference calls could not be replayed.
    #[error("expect_state: the reference calls of `replay` could not be replayed: {0}")]
    Replay(String),
}

/// An assertion's evaluation and its message (which starts with the assertion's name),
/// or why it could not be evaluated.
pub fn evaluate(
    assertion: &Assertion,
    response: &Response,
) -> Result<(Evaluation, String), AssertionError> {
    let text = response.text.as_deref();
    let (evaluation, message) = match assertion {
        Assertion::MustContain(m) => contains::evaluate(m, text, true),
        Assertion::MustNotContain(m) => contains::evaluate(m, text, false),
        Assertion::RegexMatch(pattern) => pattern::evaluate(pattern, text),
        Assertion::MustCallTool(names) => tools::evaluate(names, &response.tool_calls),
        Assertion::OutputType(kind) => output_type::evaluate(*kind, text),
        Assertion::MaxLatencyMs(max) => latency::evaluate(*max, response.latency)?,
        Assertion::MinTokens(n) => tokens::evaluate(tokens::Bound::AtLeast, *n, response),
        Assertion::MaxTokens(n) => tokens::evaluate(tokens::Bound::AtMost, *n, response),
        Assertion::ToolSequence(seq) => sequence::sequence(seq, &response.tool_calls),
        Assertion::GraphSteps(seq) => sequence::graph_steps(seq, response.graph_steps.as_deref())?,
        Assertion::MustNotCallTool(names) => trajectory::must_not(names, &response.tool_calls),
        Assertion::ToolArgs(want) => trajectory::args(want, &response.tool_calls),
        Assertion::MaxToolCalls(n) => {
            trajectory::count(trajectory::Bound::AtMost, *n, &response.tool_calls)
        }
        Assertion::MinToolCalls(n) => {
            trajectory::count(trajectory::Bound::AtLeast, *n, &response.tool_calls)
        }
        Assertion::MaxIterationsUsed(max) => trajectory::iterations(*max, response.iterations)?,
        Assertion::TrajectoryGist(_) | Assertion::NotTrajectoryGist(_) => {
            return Err(AssertionError::NeedsJudge(assertion.name()));
        }
        Assertion::ExpectState(expect) => state::evaluate(expect, response.end_state.as_ref())?,
        Assertion::ExpectCalls(mock) => state::calls(mock, &response.tool_calls),
    };
    Ok((evaluation, format!("{}: {message}", assertion.name())))
}

/// What an assertion looks at, as reports name it: `output`, `tool_calls`, `latency`
/// or `output_tokens`.
pub fn target(assertion: &Assertion) -> &'static str {
    match assertion {
        Assertion::MustContain(_) | Assertion::MustNotContain(_) => contains::TARGET,
        Assertion::RegexMatch(_) => pattern::TARGET,
        Assertion::MustCallTool(_) => tools::TARGET,
        Assertion::OutputType(_) => output_type::TARGET,
        Assertion::MaxLatencyMs(_) => latency::TARGET,
        Assertion::MinTokens(_) | Assertion::MaxTokens(_) => tokens::TARGET,
        Assertion::ToolSequence(_)
        | Assertion::MustNotCallTool(_)
        | Assertion::ToolArgs(_)
        | Assertion::MaxToolCalls(_)
        | Assertion::MinToolCalls(_) => trajectory::TARGET,
        Assertion::MaxIterationsUsed(_) => trajectory::ITERATIONS_TARGET,
        Assertion::GraphSteps(_) => sequence::STEPS_TARGET,
        Assertion::TrajectoryGist(_) | Assertion::NotTrajectoryGist(_) => {
            trajectory::TRANSCRIPT_TARGET
        }
        Assertion::ExpectState(_) => state::TARGET,
        Assertion::ExpectCalls(_) => trajectory::TARGET,
    }
}

/// The value an assertion was given, as the file wrote it (`{must_contain: x}` gives `x`).
pub fn expected(assertion: &Assertion) -> Option<Value> {
    serde_json::to_value(assertion)
        .ok()
        .and_then(|v| v.get(assertion.name()).cloned())
}

/// What a report shows the assertion found: the names of the tools called, in order,
/// for `must_call_tool` and the trajectory assertions; the calls of the tool with their
/// arguments for `tool_args`; the number of model calls for `max_iterations_used`;
/// the output text (cut when long) for every other one.
pub fn found(assertion: &Assertion, response: &Response) -> Option<Value> {
    match assertion {
        Assertion::MustCallTool(_)
        | Assertion::ToolSequence(_)
        | Assertion::MustNotCallTool(_)
        | Assertion::MaxToolCalls(_)
        | Assertion::MinToolCalls(_)
        | Assertion::TrajectoryGist(_)
        | Assertion::NotTrajectoryGist(_) => Some(tools::found(&response.tool_calls)),
        Assertion::ToolArgs(want) => Some(short(&Value::Array(
            response
                .tool_calls
                .iter()
                .filter(|c| c.name == want.tool)
                .map(|c| c.arguments.clone())
                .collect(),
        ))),
        Assertion::MaxIterationsUsed(_) => response.iterations.map(Value::from),
        Assertion::GraphSteps(_) => response.graph_steps.as_ref().map(|s| serde_json::json!(s)),
        Assertion::ExpectState(_) => response.end_state.as_ref().map(|e| short(&e.state)),
        Assertion::ExpectCalls(mock) => Some(short(&Value::Array(
            response
                .tool_calls
                .iter()
                .filter(|c| c.name == mock.tool)
                .map(|c| c.arguments.clone())
                .collect(),
        ))),
        _ => response.text.as_deref().map(short_text),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use prill_spec::model::sentinel::{
        ArgMatcher, OutputType, Pattern, TextMatch, ToolArgs, ToolSequence,
    };
    use serde_json::json;

    use super::*;
    use crate::status::Status;

    /// One of each assertion, with what the dispatch must say of it.
    fn every_kind() -> Vec<(Assertion, &'static str, Value)> {
        vec![
            (
                Assertion::MustContain(TextMatch::new("Paris")),
                "output",
                json!("Paris"),
            ),
            (
                Assertion::MustNotContain(TextMatch::new("x")),
                "output",
                json!("x"),
            ),
            (
                Assertion::RegexMatch(Pattern::new("P.r").unwrap()),
                "output",
                json!("P.r"),
            ),
            (
                Assertion::MustCallTool(vec!["search".into()]),
                "tool_calls",
                json!(["search"]),
            ),
            (
                Assertion::OutputType(OutputType::Text),
                "output",
                json!("text"),
            ),
            (Assertion::MaxLatencyMs(100), "latency", json!(100)),
            (Assertion::MinTokens(1), "output_tokens", json!(1)),
            (Assertion::MaxTokens(50), "output_tokens", json!(50)),
            (
                Assertion::ToolSequence(ToolSequence {
                    mode: prill_spec::model::sentinel::SequenceMode::Strict,
                    ..ToolSequence::in_order(vec!["search".into()])
                }),
                "tool_calls",
                json!({"tools": ["search"], "mode": "strict"}),
            ),
            (
                Assertion::MustNotCallTool(vec!["delete_user".into()]),
                "tool_calls",
                json!(["delete_user"]),
            ),
            (
                Assertion::ToolArgs(Box::new(ToolArgs {
                    tool: "search".into(),
                    args: vec![("q".into(), ArgMatcher::Contains(json!("lap")))],
                })),
                "tool_calls",
                json!({"tool": "search", "args": {"q": {"contains": "lap"}}}),
            ),
            (Assertion::MaxToolCalls(1), "tool_calls", json!(1)),
            (Assertion::MinToolCalls(1), "tool_calls", json!(1)),
            (Assertion::MaxIterationsUsed(1), "iterations", json!(1)),
            (
                Assertion::GraphSteps(ToolSequence::in_order(vec!["agent".into()])),
                "graph_steps",
                json!(["agent"]),
            ),
            (
                Assertion::TrajectoryGist("searches first".into()),
                "trajectory",
                json!("searches first"),
            ),
            (
                Assertion::NotTrajectoryGist("deletes data".into()),
                "trajectory",
                json!("deletes data"),
            ),
            (
                Assertion::ExpectState(Box::new(prill_spec::model::state::ExpectState {
                    equals: Some(json!({"n": 1})),
                    ..Default::default()
                })),
                "end_state",
                json!({"equals": {"n": 1}}),
            ),
        ]
    }

    #[test]
    fn every_assertion_is_dispatched_and_its_message_starts_with_its_name() {
        let mut r = Response::text("Paris")
            .with_tool_call("search", json!({"q": "laptop"}))
            .with_latency(Duration::from_millis(5))
            .with_iterations(1);
        r.graph_steps = Some(vec!["agent".into()]);
        r.end_state = Some(crate::response::EndState {
            state: json!({"n": 1.0}),
            replayed: Vec::new(),
        });
        for (a, target_name, given) in every_kind() {
            match evaluate(&a, &r) {
                Ok((e, m)) => {
                    assert_eq!(e.status(), Status::Passed, "{m}");
                    assert!(m.starts_with(&format!("{}: ", a.name())), "{m}");
                }
                // The judge's checks run in `run_check`, with the judge.
                Err(e) => assert_eq!(e, AssertionError::NeedsJudge(a.name())),
            }
            assert_eq!(target(&a), target_name, "{}", a.name());
            assert_eq!(expected(&a), Some(given), "{}", a.name());
        }
        assert_eq!(Assertion::NAMES.len(), every_kind().len());
    }

    #[test]
    fn found_is_the_tools_called_or_the_output() {
        let r = Response::text("x".repeat(600)).with_tool_call("search", json!({}));
        let tools = Assertion::MustCallTool(vec!["calc".into()]);
        assert_eq!(found(&tools, &r), Some(json!(["search"])));
        let text = found(&Assertion::MaxTokens(3), &r).unwrap();
        assert_eq!(
            text.as_str().unwrap().chars().count(),
            500,
            "long output is cut"
        );
        assert_eq!(found(&Assertion::MaxTokens(3), &Response::default()), None);
    }

    #[test]
    fn trajectory_failures_show_the_calls_made_and_found_is_what_was_looked_at() {
        let r = Response::text("done")
            .with_tool_call("search", json!({"q": "phones"}))
            .with_tool_call("summarize", json!({}));
        let seq = Assertion::ToolSequence(ToolSequence::in_order(vec![
            "search".into(),
            "fetch".into(),
            "summarize".into(),
        ]));
        let (e, m) = evaluate(&seq, &r).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert!(
            m.starts_with(
                "tool_sequence: expected calls in the order search → fetch → summarize, found search → summarize"
            ),
            "{m}"
        );
        assert_eq!(found(&seq, &r), Some(json!(["search", "summarize"])));
        let args = Assertion::ToolArgs(Box::new(ToolArgs {
            tool: "search".into(),
            args: vec![("q".into(), ArgMatcher::Contains(json!("lap")))],
        }));
        assert_eq!(found(&args, &r), Some(json!([{"q": "phones"}])));
        let e = evaluate(&Assertion::MaxIterationsUsed(3), &r).unwrap_err();
        assert_eq!(e, AssertionError::IterationsNotRecorded);
        assert_eq!(found(&Assertion::MaxIterationsUsed(3), &r), None);
        let r = r.with_iterations(2);
        assert_eq!(found(&Assertion::MaxIterationsUsed(3), &r), Some(json!(2)));
    }

    #[test]
    fn an_unrecorded_latency_errors_with_the_assertion_named() {
        let e = evaluate(&Assertion::MaxLatencyMs(100), &Response::text("x")).unwrap_err();
        assert_eq!(e, AssertionError::LatencyNotRecorded);
        assert_eq!(
            e.to_string(),
            "max_latency_ms: the response's latency was not recorded"
        );
    }

    #[test]
    fn failures_name_the_assertion_and_what_was_found() {
        let r = Response::text("due 2026-11-22").with_tool_call("web_search", json!({"q": "x"}));
        let tools = Assertion::MustCallTool(vec!["web_search".into(), "calculator".into()]);
        let (e, m) = evaluate(&tools, &r).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert_eq!(
            m,
            "must_call_tool: expected calls to calculator, found calls to web_search"
        );
        let (_, m) = evaluate(&Assertion::OutputType(OutputType::Json), &r).unwrap();
        assert!(
            m.starts_with("output_type: expected json output: the output is not JSON"),
            "{m}"
        );
    }
}
