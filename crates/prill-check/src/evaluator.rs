//! The [`Evaluator`] trait for code users, shaped like the Autoblocks SDK's
//! `BaseTestEvaluator`, and [`CheckEvaluator`], which offers every built-in check
//! (stock tests, gist, Sentinel assertions) as an evaluator.

use std::sync::Arc;
use std::time::Duration;

use prill_spec::model::data_driven::StockTest;
use prill_spec::model::sentinel::{
    ArgMatcher, Assertion, OutputType, Pattern, TextMatch, ToolArgs, ToolSequence,
};
use prill_spec::plan::{Check, CheckKind, Part};

use crate::engine::{Outcome, run_check};
use crate::evaluation::Evaluation;
use crate::judge::{BoxFuture, Judge};
use crate::response::Output;

/// Why an evaluator could not evaluate. Only that evaluation errors; the test case and
/// its other evaluations go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EvaluatorError {
    /// What went wrong.
    pub message: String,
}

impl EvaluatorError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> EvaluatorError {
        EvaluatorError {
            message: message.into(),
        }
    }
}

/// Scores the output of a test case. `C` is the test case type, `O` the output type.
pub trait Evaluator<C, O>: Send + Sync {
    /// A unique identifier for the evaluator.
    fn id(&self) -> &str;

    /// The most calls to [`Evaluator::evaluate`] that may run at once.
    fn max_concurrency(&self) -> usize {
        10
    }

    /// Evaluates one case's output. `Ok(None)` means there is nothing to evaluate for it.
    fn evaluate<'a>(
        &'a self,
        case: &'a C,
        output: &'a O,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>>;
}

/// A built-in check as an evaluator. Its evaluation's metadata carries the check's
/// message under `message`.
#[derive(Clone)]
pub struct CheckEvaluator {
    id: String,
    check: Check,
    judge: Option<Arc<dyn Judge>>,
    max_concurrency: usize,
}

impl std::fmt::Debug for CheckEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckEvaluator")
            .field("id", &self.id)
            .field("check", &self.check)
            .field("judge", &self.judge.is_some())
            .finish()
    }
}

impl CheckEvaluator {
    /// An evaluator for any plan check.
    pub fn new(id: impl Into<String>, check: Check) -> CheckEvaluator {
        CheckEvaluator {
            id: id.into(),
            check,
            judge: None,
            max_concurrency: 10,
        }
    }

    fn assertion(assertion: Assertion) -> CheckEvaluator {
        let id = assertion.name().to_owned();
        CheckEvaluator::new(
            id.clone(),
            Check {
                location: None,
                path: id.into(),
                kind: CheckKind::Assertion(assertion),
            },
        )
    }

    /// The output contains `text`, in any letter case (as Sentinel's `must_contain`).
    pub fn must_contain(text: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustContain(TextMatch::new(text)))
    }

    /// The output contains `text` with exactly its letter case.
    pub fn must_contain_exact(text: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustContain(
            TextMatch::new(text).case_sensitive(true),
        ))
    }

    /// The output does not contain `text`, in any letter case.
    pub fn must_not_contain(text: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustNotContain(TextMatch::new(text)))
    }

    /// The output does not contain `text` with exactly its letter case.
    pub fn must_not_contain_exact(text: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustNotContain(
            TextMatch::new(text).case_sensitive(true),
        ))
    }

    /// The output matches `pattern` (multi-line, `.` matching newlines, as Sentinel).
    pub fn regex_match(pattern: &str) -> Result<CheckEvaluator, regex::Error> {
        Ok(CheckEvaluator::assertion(Assertion::RegexMatch(
            Pattern::new(pattern)?,
        )))
    }

    /// Every tool named was called.
    pub fn must_call_tool<S: Into<String>>(tools: impl IntoIterator<Item = S>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustCallTool(
            tools.into_iter().map(Into::into).collect(),
        ))
    }

    /// The output is of this kind.
    pub fn output_type(kind: OutputType) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::OutputType(kind))
    }

    /// The response took at most `max`.
    pub fn max_latency(max: Duration) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MaxLatencyMs(
            max.as_millis().try_into().unwrap_or(u64::MAX),
        ))
    }

    /// At least `n` output tokens.
    pub fn min_tokens(n: u64) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MinTokens(n))
    }

    /// At most `n` output tokens.
    pub fn max_tokens(n: u64) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MaxTokens(n))
    }

    /// These tools were called in this order; `strict`, the calls were exactly these.
    pub fn tool_sequence<S: Into<String>>(
        tools: impl IntoIterator<Item = S>,
        strict: bool,
    ) -> CheckEvaluator {
        let mut sequence = ToolSequence::in_order(tools.into_iter().map(Into::into).collect());
        if strict {
            sequence.mode = prill_spec::model::sentinel::SequenceMode::Strict;
        }
        CheckEvaluator::assertion(Assertion::ToolSequence(sequence))
    }

    /// These tools matched to the calls made as `sequence.mode` says (strict, in order,
    /// any order, subset, superset), or scored by F1 against its threshold.
    pub fn tool_sequence_with(sequence: ToolSequence) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::ToolSequence(sequence))
    }

    /// None of the tools named was called.
    pub fn must_not_call_tool<S: Into<String>>(
        tools: impl IntoIterator<Item = S>,
    ) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MustNotCallTool(
            tools.into_iter().map(Into::into).collect(),
        ))
    }

    /// Some call of `tool` had arguments matching every matcher of `args`.
    pub fn tool_args(
        tool: impl Into<String>,
        args: impl IntoIterator<Item = (String, ArgMatcher)>,
    ) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::ToolArgs(Box::new(ToolArgs {
            tool: tool.into(),
            args: args.into_iter().collect(),
        })))
    }

    /// At most `n` tool calls.
    pub fn max_tool_calls(n: u64) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MaxToolCalls(n))
    }

    /// At least `n` tool calls.
    pub fn min_tool_calls(n: u64) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MinToolCalls(n))
    }

    /// At most `n` model calls.
    pub fn max_iterations_used(n: u64) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::MaxIterationsUsed(n))
    }

    /// A graph's nodes ran as `sequence` says (its names matched to
    /// [`Response::graph_steps`](crate::Response::graph_steps) in its mode); a response
    /// that does not say which nodes ran errors.
    pub fn graph_steps(sequence: ToolSequence) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::GraphSteps(sequence))
    }

    /// The response's end state ([`Response::end_state`](crate::Response::end_state),
    /// which the code under test fills) holds as `expect` says; a response without one
    /// errors. `expect.replay` reads the reference state from `end_state.replayed`.
    pub fn expect_state(expect: prill_spec::model::state::ExpectState) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::ExpectState(Box::new(expect)))
    }

    /// The judge finds that the whole trajectory (each tool call with its arguments and
    /// result, then the final answer) meets `criteria`; needs [`with_judge`](Self::with_judge).
    pub fn trajectory_gist(criteria: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::TrajectoryGist(criteria.into()))
    }

    /// The judge finds that the whole trajectory does not meet `criteria`.
    pub fn not_trajectory_gist(criteria: impl Into<String>) -> CheckEvaluator {
        CheckEvaluator::assertion(Assertion::NotTrajectoryGist(criteria.into()))
    }

    /// A stock test by name (`value`, `not_keywords`, `Gist`, ...) on a part of the
    /// response and a field path inside it. `None` for an unknown name.
    pub fn stock(
        part: Part,
        field: &[&str],
        name: &str,
        expected: serde_json::Value,
    ) -> Option<CheckEvaluator> {
        let (test, negated) = StockTest::from_name(name)?;
        let field: Vec<String> = field.iter().map(|s| (*s).to_owned()).collect();
        let path = format!(
            "{}.{}",
            crate::stock::field_path(part, &field),
            test.spelled(negated)
        );
        Some(CheckEvaluator::new(
            path.clone(),
            Check {
                location: None,
                path: path.into(),
                kind: CheckKind::Stock {
                    part,
                    field,
                    test,
                    negated,
                    expected: Box::new(expected),
                },
            },
        ))
    }

    /// Gives the evaluator a judge, for `gist`, `not_gist` and the trajectory's.
    pub fn with_judge(mut self, judge: Arc<dyn Judge>) -> CheckEvaluator {
        self.judge = Some(judge);
        self
    }

    /// Renames the evaluator.
    pub fn with_id(mut self, id: impl Into<String>) -> CheckEvaluator {
        self.id = id.into();
        self
    }

    /// Sets how many evaluations may run at once.
    pub fn with_max_concurrency(mut self, n: usize) -> CheckEvaluator {
        self.max_concurrency = n.max(1);
        self
    }
}

impl<C: Sync, O: Output + Sync> Evaluator<C, O> for CheckEvaluator {
    fn id(&self) -> &str {
        &self.id
    }

    fn max_concurrency(&self) -> usize {
        self.max_concurrency
    }

    fn evaluate<'a>(
        &'a self,
        _case: &'a C,
        output: &'a O,
    ) -> BoxFuture<'a, Result<Option<Evaluation>, EvaluatorError>> {
        Box::pin(async move {
            let response = output.to_response();
            let result = run_check(&self.check, &response, self.judge.as_deref()).await;
            match result.outcome {
                Outcome::Evaluated {
                    mut evaluation,
                    message,
                } => {
                    evaluation
                        .metadata
                        .insert("message".to_owned(), message.into());
                    Ok(Some(evaluation))
                }
                Outcome::Errored { message } => Err(EvaluatorError::new(message)),
            }
        })
    }
}
