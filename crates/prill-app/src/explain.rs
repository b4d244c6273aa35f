//! `prill explain`: what each case's gate means in figures ([`prill_stats::explain`]),
//! and how many good cases a run of the whole plan fails on average.
//!
//! ```
//! use prill_app::explain::explain_plan;
//! use prill_spec::Plan;
//! use prill_stats::Reliability;
//!
//! let explained = explain_plan(&Plan::new(Vec::new()), &Reliability::default()).unwrap();
//! assert_eq!(explained.expected_false_failures, 0.0);
//! ```

use std::collections::HashMap;
use std::path::PathBuf;

use prill_spec::Plan;
use prill_spec::plan::Gate as SpecGate;
use prill_stats::explain::{Figures, Gate, expected_false_failures, explain};
use prill_stats::{DesignError, KOfN, Reliability, Sequential};
use serde::Serialize;

/// The version of [`Explained`]'s JSON.
pub const EXPLAIN_SCHEMA_VERSION: u32 = 1;

/// What the gates of a plan mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explained {
    /// The version of this document: 1.
    pub schema_version: u32,
    /// The `good` and `bad` rates (and error rates) a `success_ratio` is judged at.
    pub reference: Reliability,
    /// Every case, in the plan's order.
    pub cases: Vec<CaseGate>,
    /// How many good cases a run fails on average if every case were at its good rate.
    pub expected_false_failures: f64,
}

/// One case's gate and its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseGate {
    /// The case's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its file.
    pub file: PathBuf,
    /// The gate, as written: `success_ratio 4/5`, or `reliability good 0.95 bad 0.8
    /// (5%/5%, at most 100)`.
    pub gate: String,
    /// What it means.
    pub figures: Figures,
}

/// A case whose `reliability` gate cannot run (a plan given through the Rust API,
/// unchecked: a file's is checked when it is read).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the reliability gate of {name} ({}) cannot run: {source}", file.display())]
pub struct ExplainError {
    /// The case's name.
    pub name: String,
    /// Its file.
    pub file: PathBuf,
    /// What is wrong with its plan.
    #[source]
    pub source: Box<DesignError>,
}

/// The figures of every case of `plan`: a `success_ratio` judged at `reference`, a
/// `reliability` gate at its own `good` and `bad`. A `reliability` gate that cannot run
/// is the error, naming its case.
pub fn explain_plan(plan: &Plan, reference: &Reliability) -> Result<Explained, ExplainError> {
    // Figured once per distinct gate: a suite has many cases and few gates.
    let mut figured: HashMap<String, Figures> = HashMap::new();
    let cases: Vec<CaseGate> = plan
        .cases
        .iter()
        .map(|case| -> Result<CaseGate, ExplainError> {
            let gate = match case.gate {
                SpecGate::Ratio(r) => format!("success_ratio {r}"),
                SpecGate::Reliability(_) => case.gate.to_string(),
            };
            let figures = match figured.get(&gate) {
                Some(figures) => figures.clone(),
                None => {
                    let figures = match case.gate {
                        SpecGate::Ratio(r) => explain(
                            &Gate::Ratio(KOfN {
                                need: r.need,
                                of: r.of,
                            }),
                            reference,
                        ),
                        SpecGate::Reliability(r) => {
                            let test = Sequential::unchecked(r).map_err(|source| ExplainError {
                                name: case.name.to_string(),
                                file: case.file.to_path_buf(),
                                source: Box::new(source),
                            })?;
                            explain(&Gate::Reliability(test), &r)
                        }
                    };
                    figured.insert(gate.clone(), figures.clone());
                    figures
                }
            };
            Ok(CaseGate {
                id: case.id.to_string(),
                name: case.name.to_string(),
                file: case.file.to_path_buf(),
                gate,
                figures,
            })
        })
        .collect::<Result<_, _>>()?;
    let expected_false_failures = expected_false_failures(cases.iter().map(|c| &c.figures));
    Ok(Explained {
        schema_version: EXPLAIN_SCHEMA_VERSION,
        reference: *reference,
        cases,
        expected_false_failures,
    })
}

impl Explained {
    /// The figures as text for people: a block per case, then the plan's expected
    /// false failures.
    pub fn render(&self) -> String {
        let mut text = String::new();
        let percent = |x: f64| format!("{:.1}%", 100.0 * x);
        for case in &self.cases {
            let f = &case.figures;
            text.push_str(&format!(
                "{}  {}  {}\n",
                case.file.display(),
                case.name,
                case.gate
            ));
            let row = |label: &str, value: &dyn Fn(&prill_stats::explain::AtRate) -> String| {
                let cells: String = f.rates.iter().map(|r| format!("{:>7}", value(r))).collect();
                format!("  {label:<9}{cells}\n")
            };
            text.push_str(&row("rate", &|r| format!("{:.2}", r.p)));
            text.push_str(&row("passes", &|r| format!("{:.2}", r.outcomes.pass)));
            if f.rates.iter().any(|r| r.outcomes.inconclusive > 0.0) {
                text.push_str(&row("undecided", &|r| {
                    format!("{:.2}", r.outcomes.inconclusive)
                }));
            }
            text.push_str(&row("samples", &|r| {
                format!("{:.1}", r.outcomes.expected_samples)
            }));
            text.push_str(&format!(
                "  at good = {} it does not pass {} of the time; at bad = {} it passes {}\n",
                f.good,
                percent(f.false_fail),
                f.bad,
                percent(f.false_pass)
            ));
            if let Some(instead) = &f.instead {
                let r = &instead.reliability;
                text.push_str(&format!(
                    "  reliability {{ good = {}, bad = {}, false_pass = {}, false_fail = {}, max_samples = {} }} instead: does not pass {} at good, passes {} at bad, {:.1} samples on average at good and {:.1} at bad\n",
                    r.good,
                    r.bad,
                    r.false_pass,
                    r.false_fail,
                    r.max_samples,
                    percent(instead.false_fail),
                    percent(instead.false_pass),
                    instead.samples_at_good,
                    instead.samples_at_bad
                ));
            }
            text.push('\n');
        }
        let cases = self.cases.len();
        text.push_str(&format!(
            "{cases} case{}: if every case passed at its good rate, a run would fail {:.2} of them on average\n",
            if cases == 1 { "" } else { "s" },
            self.expected_false_failures
        ));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of one case `greets` held to `gate`.
    fn plan(gate: SpecGate) -> Plan {
        let loaded = prill_spec::load_str(
            std::path::Path::new("greets.hocon"),
            "agent = a, connections = [direct], interactions = [{ text = hi, response.text.keywords = hi }]",
            &prill_spec::Env::default(),
            prill_spec::Unrecognized::Error,
        )
        .unwrap();
        let mut plan = Plan::new(loaded.cases());
        plan.cases[0].gate = gate;
        plan
    }

    /// A `reliability` plan given unchecked (through the Rust API) that cannot run is
    /// the error, naming the case and what is wrong, not figures of a made-up gate.
    #[test]
    fn a_gate_that_cannot_run_is_the_error() {
        let upside_down = Reliability {
            good: 0.5,
            bad: 0.9,
            ..Reliability::default()
        };
        let e = explain_plan(
            &plan(SpecGate::Reliability(upside_down)),
            &Reliability::default(),
        )
        .unwrap_err();
        assert_eq!(e.name, "greets");
        assert!(
            e.to_string()
                .starts_with("the reliability gate of greets (greets.hocon) cannot run: "),
            "{e}"
        );
        let fine = explain_plan(
            &plan(SpecGate::Reliability(Reliability::default())),
            &Reliability::default(),
        )
        .unwrap();
        assert_eq!(fine.cases.len(), 1);
    }
}
