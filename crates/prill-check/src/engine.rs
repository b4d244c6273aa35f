//! Runs plan checks against a response: every check yields an [`Evaluation`] and a
//! message, or an error when it could not be evaluated (a judge that failed, a latency
//! that was never recorded). An error is never a pass or a fail.

use prill_spec::model::data_driven::StockTest;
use prill_spec::model::sentinel::Assertion;
use prill_spec::plan::{Check, CheckKind, Location};
use serde::Serialize;
use serde_json::Value;

use crate::assertions;
use crate::evaluation::Evaluation;
use crate::judge::Judge;
use crate::response::Response;
use crate::status::Status;
use crate::stock::{self, field_path, lookup};
use crate::text::{as_text, preview, short};

/// What one check gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The check ran.
    Evaluated {
        /// The score and threshold.
        evaluation: Evaluation,
        /// What was checked, expected and found.
        message: String,
    },
    /// The check could not run.
    Errored {
        /// Why.
        message: String,
    },
}

/// One check's result, with what identifies it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// Where the check is written in its case, e.g.
    /// `interactions[0].response.text.keywords[1]` ([`Check::path`], shared with it).
    pub path: std::sync::Arc<str>,
    /// The check's name: `keywords`, `not_gist`, `present`, `must_contain`, ...
    pub name: String,
    /// What it looked at: `text`, `structure.answer`, `output`, `tool_calls`, `latency`, `output_tokens`
    pub target: String,
    /// The value it was given, if any.
    pub expected: Option<Value>,
    /// The value it looked at, when there was one (cut to a short preview for long
    /// text), so that assessments can group failures by what was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Value>,
    /// How it came out.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The check's place in its test file (`line:column`), when it was loaded from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl CheckResult {
    /// Passed, failed, unscored or errored.
    pub fn status(&self) -> Status {
        match &self.outcome {
            Outcome::Errored { .. } => Status::Errored,
            Outcome::Evaluated { evaluation, .. } => evaluation.status(),
        }
    }

    /// The message, whatever the outcome.
    pub fn message(&self) -> &str {
        match &self.outcome {
            Outcome::Evaluated { message, .. } | Outcome::Errored { message } => message,
        }
    }

    /// Adds `note` to the message, after what the check found (e.g. that the answer it
    /// looked at was cut short).
    pub fn add_note(&mut self, note: &str) {
        match &mut self.outcome {
            Outcome::Evaluated { message, .. } | Outcome::Errored { message } => {
                message.push_str(" (");
                message.push_str(note);
                message.push(')');
            }
        }
    }

    /// Hides every value `secrets` holds in what the result says: its message, what was
    /// expected and found, the evaluation's metadata.
    pub fn redact(&mut self, secrets: &prill_spec::redact::Redactor) {
        if secrets.is_empty() {
            return;
        }
        for value in [&mut self.expected, &mut self.found].into_iter().flatten() {
            secrets.json(value);
        }
        match &mut self.outcome {
            Outcome::Evaluated {
                evaluation,
                message,
            } => {
                secrets.in_place(message);
                evaluation
                    .metadata
                    .values_mut()
                    .for_each(|v| secrets.json(v));
            }
            Outcome::Errored { message } => secrets.in_place(message),
        }
    }
}

/// Runs one check. `judge` is needed only for `gist` and `not_gist`.
pub async fn run_check(
    check: &Check,
    response: &Response,
    judge: Option<&dyn Judge>,
) -> CheckResult {
    let (name, target, expected, found, outcome) = match &check.kind {
        CheckKind::Stock {
            part,
            field,
            test,
            negated,
            expected,
        } => {
            let target = field_path(*part, field);
            let looked_up = lookup(response, *part, field);
            let found = looked_up.as_deref().ok().map(short);
            let outcome = match looked_up {
                Err(why) => evaluated(false, why.to_string()),
                Ok(found) if *test == StockTest::Gist => {
                    let name = StockTest::Gist.spelled(*negated);
                    let asked = Asked {
                        name: &name,
                        negated: *negated,
                        target: &target,
                        label: &target,
                    };
                    gist(&asked, &found, expected, judge).await
                }
                Ok(found) => {
                    let verdict = stock::evaluate(*test, *negated, &target, &found, expected);
                    evaluated(verdict.passed, verdict.message)
                }
            };
            let name = test.spelled(*negated);
            (name, target, Some((**expected).clone()), found, outcome)
        }
        CheckKind::Present { part, field } => {
            let target = field_path(*part, field);
            let found = lookup(response, *part, field);
            let verdict = stock::presence(&target, found.as_deref());
            let outcome = evaluated(verdict.passed, verdict.message);
            ("present".to_owned(), target, None, None, outcome)
        }
        CheckKind::Assertion(
            assertion @ (Assertion::TrajectoryGist(criteria)
            | Assertion::NotTrajectoryGist(criteria)),
        ) => {
            let name = assertion.name();
            let target = assertions::target(assertion);
            let label = format!("{name}: the {target}");
            let asked = Asked {
                name,
                negated: matches!(assertion, Assertion::NotTrajectoryGist(_)),
                target,
                label: &label,
            };
            let transcript = Value::String(assertions::trajectory::transcript(response));
            let criteria = Value::String(criteria.clone());
            let outcome = gist(&asked, &transcript, &criteria, judge).await;
            (
                name.to_owned(),
                target.to_owned(),
                Some(criteria),
                assertions::found(assertion, response),
                outcome,
            )
        }
        CheckKind::Assertion(assertion) => {
            let outcome = match assertions::evaluate(assertion, response) {
                Ok((evaluation, message)) => Outcome::Evaluated {
                    evaluation,
                    message,
                },
                Err(e) => Outcome::Errored {
                    message: e.to_string(),
                },
            };
            (
                assertion.name().to_owned(),
                assertions::target(assertion).to_owned(),
                assertions::expected(assertion),
                assertions::found(assertion, response),
                outcome,
            )
        }
    };
    CheckResult {
        path: check.path.clone(),
        name,
        target,
        expected,
        found,
        outcome,
        location: check.location,
    }
}

/// Runs every check, in order.
pub async fn run_checks(
    checks: &[Check],
    response: &Response,
    judge: Option<&dyn Judge>,
) -> Vec<CheckResult> {
    let mut out = Vec::with_capacity(checks.len());
    for check in checks {
        out.push(run_check(check, response, judge).await);
    }
    out
}

fn evaluated(passed: bool, message: String) -> Outcome {
    Outcome::Evaluated {
        evaluation: Evaluation::pass_fail(passed),
        message,
    }
}

/// A check the judge decides: `gist` and `not_gist` on a part of the response,
/// `trajectory_gist` and `not_trajectory_gist` on the whole trajectory.
struct Asked<'a> {
    /// The check's name as written.
    name: &'a str,
    /// Whether it passes when the judge finds the criteria unmet.
    negated: bool,
    /// What it looks at.
    target: &'a str,
    /// How its messages begin.
    label: &'a str,
}

/// Asks the judge whether `found` meets `criteria`.
async fn gist(
    asked: &Asked<'_>,
    found: &Value,
    criteria: &Value,
    judge: Option<&dyn Judge>,
) -> Outcome {
    let Asked {
        name,
        negated,
        target,
        label,
    } = *asked;
    let Some(judge) = judge else {
        return Outcome::Errored {
            message: format!(
                "{target}: `{name}` needs a judge and none is configured; set one with `--judge provider:model` or `[judge]` in prill.toml"
            ),
        };
    };
    let criteria_text = as_text(criteria);
    let sample = as_text(found);
    match judge.judge(&criteria_text, &sample).await {
        Err(e) => Outcome::Errored {
            message: format!("{label}: the judge failed: {e}"),
        },
        Ok(verdict) => {
            let passed = verdict.pass != negated;
            // JSON-quoted, so multi-line criteria stay on one line and quotes are escaped.
            let shown_criteria = preview(&Value::String(criteria_text.clone()));
            let meets = if verdict.pass {
                "meets"
            } else {
                "does not meet"
            };
            let message = if passed {
                format!("{label}: {meets} {shown_criteria} as expected")
            } else {
                let wanted = if negated { "not to meet" } else { "to meet" };
                format!(
                    "{label}: expected {wanted} {shown_criteria}, found {}; judge: {}",
                    preview(found),
                    verdict.reason
                )
            };
            let mut evaluation =
                Evaluation::pass_fail(passed).with("reason", verdict.reason.clone());
            for (k, v) in verdict.metadata {
                evaluation.metadata.insert(k, v);
            }
            Outcome::Evaluated {
                evaluation,
                message,
            }
        }
    }
}
