//! What the page's script is given: one compact row per unit, with what a person needs
//! to see of a unit that did not pass (its failing checks, with expected, found and
//! `file:line:col`, and the failing sample's conversation), its judges' verdicts, and
//! its metrics. Built from the report format's types, so a stored run and a live one
//! make the same page.

use serde::Serialize;
use serde_json::Value;

use crate::digest::shown_path;
use crate::format::{
    Check, CheckOutcome, Dialect, Error, Interaction, PassRates, RunInfo, Status, Tally, Unit,
};
use crate::html::{CompareSection, Links};
use crate::transcript::first_failing_saved;

/// The page's data, embedded as JSON.
#[derive(Debug, Serialize)]
pub(super) struct PageData<'a> {
    pub(super) run: Option<&'a RunInfo>,
    pub(super) units: Vec<UnitView<'a>>,
    pub(super) compare: Option<&'a CompareSection>,
    /// Where a case's history is, on a page that is part of a site (`prill view`).
    pub(super) case_href: Option<&'a str>,
}

/// One unit, as the table and the failures list show it.
#[derive(Debug, Serialize)]
pub(super) struct UnitView<'a> {
    name: &'a str,
    case_id: &'a str,
    file: &'a str,
    dialect: Dialect,
    connection: &'a str,
    target: &'a str,
    tags: &'a [String],
    verdict: Status,
    ratio: String,
    tally: Tally,
    /// Its pass rate's intervals, pass@k and pass^k, for more than one sample.
    rates: Option<&'a PassRates>,
    /// Seconds, from its first sample's start to its verdict.
    pub(super) duration: f64,
    /// The mean duration of its interactions, in seconds.
    pub(super) latency: Option<f64>,
    /// The mean time to first token of its interactions, in seconds.
    ttft: Option<f64>,
    /// Input and output tokens of every sample.
    pub(super) tokens: Option<u64>,
    /// USD, of every sample.
    cost: Option<f64>,
    judges: Vec<JudgeView<'a>>,
    failure: Option<FailureView<'a>>,
    /// In a comparison, how the unit changed (`regression`, `latency`, ...).
    changes: Vec<&'a str>,
}

/// A judge's verdict on one sample (a `gist` or `not_gist` check), with its reason.
#[derive(Debug, Serialize)]
struct JudgeView<'a> {
    sample: u32,
    check: &'a str,
    status: Status,
    reason: Option<&'a str>,
}

/// The first sample of a unit that did not pass.
#[derive(Debug, Serialize)]
struct FailureView<'a> {
    sample: u32,
    status: Status,
    /// An error outside any interaction.
    error: Option<&'a Error>,
    /// Every check of the sample that did not pass or score.
    checks: Vec<CheckView<'a>>,
    /// Its conversation, turn by turn.
    turns: Vec<&'a Interaction>,
}

/// A check that did not pass.
#[derive(Debug, Serialize)]
struct CheckView<'a> {
    interaction: u64,
    name: &'a str,
    path: &'a str,
    target: &'a str,
    status: Status,
    expected: Option<&'a Value>,
    found: Option<&'a Value>,
    message: &'a str,
    /// `file:line:col` in the unit's file, when the check came from one.
    at: Option<String>,
}

impl<'a> PageData<'a> {
    pub(super) fn new(
        units: &'a [Unit],
        run: Option<&'a RunInfo>,
        compare: Option<&'a CompareSection>,
        links: &'a Links,
    ) -> PageData<'a> {
        let mut units: Vec<UnitView<'a>> = units.iter().map(UnitView::new).collect();
        if let Some(compare) = compare {
            for unit in &mut units {
                unit.changes = compare
                    .rows
                    .iter()
                    .filter(|r| r.case_id == unit.case_id && r.connection == unit.connection)
                    .map(|r| r.kind.as_str())
                    .collect();
            }
        }
        PageData {
            run,
            units,
            compare,
            case_href: links.case.as_deref(),
        }
    }

    /// The JSON for a `<script type="application/json">`: every `<` escaped as
    /// `\u003c`, so no `</script>` or `<!--` in the data can end or change the element.
    pub(super) fn script_json(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| "{}".to_owned())
            .replace('<', "\\u003c")
    }
}

impl<'a> UnitView<'a> {
    fn new(unit: &'a Unit) -> UnitView<'a> {
        let interactions = || unit.samples.iter().flat_map(|s| &s.interactions);
        let mean = |values: Vec<f64>| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let tokens: Vec<u64> = interactions()
            .filter_map(|i| i.usage)
            .map(|u| u.input.unwrap_or(0) + u.output.unwrap_or(0))
            .collect();
        let costs: Vec<f64> = interactions().filter_map(|i| i.cost).collect();
        let judges = unit
            .samples
            .iter()
            .flat_map(|s| {
                s.interactions
                    .iter()
                    .flat_map(|i| &i.checks)
                    .filter(|c| is_judge(c))
                    .map(move |c| JudgeView {
                        sample: s.index,
                        check: &c.name,
                        status: c.status,
                        reason: reason(c),
                    })
            })
            .collect();
        UnitView {
            name: &unit.unit.name,
            case_id: &unit.unit.case_id,
            file: shown_path(&unit.unit.file),
            dialect: unit.unit.dialect,
            connection: &unit.unit.connection,
            target: &unit.unit.target,
            tags: &unit.unit.tags,
            verdict: unit.verdict,
            ratio: unit.gate().map(|g| g.to_string()).unwrap_or_default(),
            tally: unit.tally,
            rates: unit.rates.as_ref(),
            duration: unit.duration,
            latency: mean(interactions().map(|i| i.duration).collect()),
            ttft: mean(
                interactions()
                    .filter_map(|i| i.time_to_first_token)
                    .collect(),
            ),
            tokens: (!tokens.is_empty()).then(|| tokens.iter().sum()),
            cost: (!costs.is_empty()).then(|| costs.iter().sum()),
            judges,
            failure: FailureView::new(unit),
            changes: Vec::new(),
        }
    }
}

impl<'a> FailureView<'a> {
    fn new(unit: &'a Unit) -> Option<FailureView<'a>> {
        let sample = first_failing_saved(unit)?;
        let file = shown_path(&unit.unit.file);
        let checks = sample
            .interactions
            .iter()
            .flat_map(|i| i.checks.iter().map(move |c| (i.index, c)))
            .filter(|(_, c)| matches!(c.status, Status::Failed | Status::Errored))
            .map(|(interaction, c)| CheckView {
                interaction,
                name: &c.name,
                path: &c.path,
                target: &c.target,
                status: c.status,
                expected: c.expected.as_ref(),
                found: c.found.as_ref(),
                message: match &c.outcome {
                    CheckOutcome::Evaluated { message, .. } | CheckOutcome::Errored { message } => {
                        message
                    }
                },
                at: c
                    .location
                    .map(|l| format!("{file}:{}:{}", l.line, l.column)),
            })
            .collect();
        Some(FailureView {
            sample: sample.index,
            status: sample.status,
            error: sample.error.as_ref(),
            checks,
            turns: sample.interactions.iter().collect(),
        })
    }
}

/// Whether `check` is a judge's: `gist`, `not_gist`, or any check whose evaluation
/// gives a reason and whose name says it is judged.
fn is_judge(check: &Check) -> bool {
    check.name.ends_with("gist") || (check.name.contains("judge") && reason(check).is_some())
}

/// The judge's reason recorded in the check's evaluation.
fn reason(check: &Check) -> Option<&str> {
    match &check.outcome {
        CheckOutcome::Evaluated { evaluation, .. } => {
            evaluation.metadata.get("reason").and_then(Value::as_str)
        }
        CheckOutcome::Errored { message } => Some(message),
    }
}
