//! A suite case as the engine's events show it: one unit per case and grid
//! combination, with one sample whose checks are the evaluations.

use std::path::PathBuf;
use std::time::Duration;

use prill_check::{CheckResult, Evaluation, Outcome, Status, Threshold};
use prill_spec::Dialect;
use prill_spec::model::gate::Gate;

use super::{CaseReport, EvaluationReport, EvaluationResult, GridCombination};
use crate::events::{ErrorInfo, ErrorKind, InteractionReport, SampleReport, UnitId, UnitReport};
use crate::ratio::Tally;

/// The unit of case `hash` of suite `suite` under `grid`: dialect
/// [`Dialect::RustSuite`], connection `fn`, the suite's id as file and target; its name
/// is the hash, followed by the grid combination when there is one
/// (`2-2 (model="small", temperature=0.5)`).
pub(super) fn suite_unit(suite: &str, hash: &str, grid: Option<&GridCombination>) -> UnitId {
    let name = match grid {
        Some(grid) if !grid.is_empty() => {
            let values: Vec<String> = grid.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{hash} ({})", values.join(", "))
        }
        _ => hash.to_owned(),
    };
    UnitId {
        case_id: hash.to_owned(),
        name,
        file: PathBuf::from(suite),
        dialect: Dialect::RustSuite,
        connection: "fn".to_owned(),
        target: suite.to_owned(),
        tags: Vec::new(),
    }
}

/// The unit report of one suite case, as the suite sends it in
/// [`Event::UnitFinished`](crate::Event::UnitFinished): its verdict is the case's
/// status, held to `1/1`, with one sample of one interaction whose duration is `fn`'s;
/// `total` (from the permit to the last evaluation) is the unit's and the sample's.
/// Under a `reliability` gate, each of its samples is a sample of the unit, held to that
/// gate.
///
/// Each evaluation is a check named after its evaluator (path `evaluators.<id>`, target
/// `output`); an evaluator that had nothing to evaluate gives none; one that failed
/// gives an errored check. When `fn` itself failed (or panicked), the interaction has an
/// error of kind [`ErrorKind::Function`] with its message, and no check.
pub fn unit_report(unit: UnitId, case: &CaseReport, total: Duration) -> UnitReport {
    let samples: Vec<SampleReport> = match case.reliability {
        None => vec![sample_report(
            0,
            case.status,
            &case.error,
            &case.evaluations,
            case.duration,
            total,
        )],
        Some(_) => case
            .samples
            .iter()
            .zip(0..)
            .map(|(s, index)| {
                sample_report(
                    index,
                    s.status,
                    &s.error,
                    &s.evaluations,
                    s.duration,
                    s.duration,
                )
            })
            .collect(),
    };
    let mut tally = Tally::default();
    for sample in &samples {
        tally.add(sample.status);
    }
    UnitReport {
        unit,
        verdict: case.status,
        gate: case
            .reliability
            .map_or_else(Gate::default, Gate::Reliability),
        quarantine: None,
        tally,
        samples,
        duration: total,
    }
}

/// One run of `fn` as a sample of one interaction: `fn`'s own time on the interaction,
/// `total` on the sample.
fn sample_report(
    index: u32,
    status: Status,
    error: &Option<String>,
    evaluations: &[EvaluationReport],
    duration: Duration,
    total: Duration,
) -> SampleReport {
    let checks: Vec<CheckResult> = evaluations.iter().filter_map(check).collect();
    let error = error.as_ref().map(|message| ErrorInfo {
        kind: ErrorKind::Function,
        message: format!("fn: {message}"),
    });
    SampleReport {
        index,
        status,
        duration: total,
        interactions: vec![InteractionReport {
            duration,
            checks,
            error,
            ..InteractionReport::sent(0, None)
        }],
        error: None,
        taped: Default::default(),
    }
}

fn check(report: &EvaluationReport) -> Option<CheckResult> {
    let id = &report.evaluator;
    let outcome = match &report.result {
        EvaluationResult::Evaluation(e) => Outcome::Evaluated {
            evaluation: e.clone(),
            message: message(id, e),
        },
        EvaluationResult::Skipped => return None,
        EvaluationResult::Error(why) => Outcome::Errored {
            message: format!("{id}: {why}"),
        },
    };
    Some(CheckResult {
        path: format!("evaluators.{id}").into(),
        name: id.clone(),
        target: "output".to_owned(),
        expected: None,
        found: None,
        outcome,
        location: None,
    })
}

/// `accuracy: score 0.4, needs >= 0.5`, with the metadata after it when there is some.
fn message(id: &str, e: &Evaluation) -> String {
    let mut text = match (&e.threshold, e.status()) {
        (Some(t), Status::Failed) => format!("{id}: score {}, needs {}", e.score, bounds(t)),
        (Some(t), _) => format!("{id}: score {} meets {}", e.score, bounds(t)),
        (None, _) => format!("{id}: score {} (no threshold)", e.score),
    };
    if !e.metadata.is_empty() {
        text.push_str(&format!(
            " {}",
            serde_json::Value::Object(e.metadata.clone())
        ));
    }
    text
}

/// `>= 0.5 and < 0.9`.
fn bounds(t: &Threshold) -> String {
    let parts: Vec<String> = [("<", t.lt), ("<=", t.lte), (">", t.gt), (">=", t.gte)]
        .into_iter()
        .filter_map(|(op, b)| b.map(|b| format!("{op} {b}")))
        .collect();
    if parts.is_empty() {
        "any score".to_owned()
    } else {
        parts.join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_the_score_and_the_threshold() {
        assert_eq!(
            message("exact", &Evaluation::pass_fail(false)),
            "exact: score 0, needs >= 1"
        );
        let e = Evaluation::score(0.5)
            .with_threshold(Threshold {
                lt: Some(0.6),
                gt: Some(0.1),
                ..Threshold::default()
            })
            .with("why", "close");
        assert_eq!(
            message("near", &e),
            "near: score 0.5 meets < 0.6 and > 0.1 {\"why\":\"close\"}"
        );
        assert_eq!(
            message("raw", &Evaluation::score(0.25)),
            "raw: score 0.25 (no threshold)"
        );
    }

    #[test]
    fn a_grid_combination_names_the_unit() {
        let grid: GridCombination = [
            ("model".to_owned(), serde_json::json!("small")),
            ("t".to_owned(), serde_json::json!(0.5)),
        ]
        .into();
        let unit = suite_unit("s", "1-2", Some(&grid));
        assert_eq!(unit.name, "1-2 (model=\"small\", t=0.5)");
        assert_eq!(unit.case_id, "1-2");
        assert_eq!(unit.label(), "1-2 (model=\"small\", t=0.5) [fn]");
        assert_eq!(suite_unit("s", "1-2", None).name, "1-2");
    }
}
