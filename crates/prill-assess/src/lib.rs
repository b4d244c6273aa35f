//! The assessor's pure half: over many samples of a case, how often it passes (with a
//! Wilson 95% interval), how likely it is to meet its `success_ratio` (the binomial
//! tail), a sounder ratio when it is not, and how it fails (deterministic failure
//! modes). No I/O: the CLI gathers the samples through `prill-run`.
//!
//! # Example
//!
//! ```
//! use prill_assess::{Status, SampleOutcome, assess};
//!
//! let outcomes: Vec<SampleOutcome> = (0..10)
//!     .map(|i| SampleOutcome { outcome: if i < 7 { Status::Passed } else { Status::Failed }, first_failure: None })
//!     .collect();
//! let a = assess("c1", "t.hocon", "case", (3, 5), &outcomes);
//! assert_eq!((a.passed, a.failed, a.samples), (7, 3, 10));
//! assert!((a.pass_rate - 0.7).abs() < 1e-12);
//! assert!(a.ci_low < 0.7 && 0.7 < a.ci_high);
//! assert!(a.p_meets_ratio > 0.8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod modes;
pub mod stats;

use serde::Serialize;

pub use modes::{Failure, Mode, classify, merge_named, normalize};
pub use stats::{RatioAdvice, advise, binomial_tail, wilson};

pub use prill_check::Status;

/// One sample, as the assessor needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleOutcome {
    /// How it came out.
    pub outcome: Status,
    /// Its first failure (or its error), which names its mode.
    pub first_failure: Option<Failure>,
}

/// One case's assessment; the field names are the JSON format's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseAssessment {
    /// The case's id.
    pub id: String,
    /// Its file.
    pub file: String,
    /// Its name.
    pub name: String,
    /// Samples taken.
    pub samples: u64,
    /// Samples that passed.
    pub passed: u64,
    /// Samples that failed.
    pub failed: u64,
    /// Samples that errored.
    pub errored: u64,
    /// `passed / samples`.
    pub pass_rate: f64,
    /// The Wilson 95% interval of the pass rate.
    pub ci_low: f64,
    /// Its upper end.
    pub ci_high: f64,
    /// The case's ratio, `k/n`.
    pub success_ratio: String,
    /// The chance that the case meets its ratio at the observed rate.
    pub p_meets_ratio: f64,
    /// A sounder ratio, when this one is met less than 90% of the time.
    pub suggestion: Option<String>,
    /// How it fails, most common first.
    pub modes: Vec<Mode>,
}

/// Assesses one case from its samples.
pub fn assess(
    id: &str,
    file: &str,
    name: &str,
    ratio: (u32, u32),
    outcomes: &[SampleOutcome],
) -> CaseAssessment {
    let count = |o: Status| outcomes.iter().filter(|s| s.outcome == o).count() as u64;
    let (passed, failed, errored) = (
        count(Status::Passed),
        count(Status::Failed),
        count(Status::Errored),
    );
    let samples = outcomes.len() as u64;
    let pass_rate = if samples == 0 {
        0.0
    } else {
        passed as f64 / samples as f64
    };
    let (ci_low, ci_high) = wilson(passed, samples, stats::Z95);
    let advice = advise(ratio.0, ratio.1, pass_rate);
    let firsts: Vec<Failure> = outcomes
        .iter()
        .filter_map(|s| s.first_failure.clone())
        .collect();
    CaseAssessment {
        id: id.to_owned(),
        file: file.to_owned(),
        name: name.to_owned(),
        samples,
        passed,
        failed,
        errored,
        pass_rate,
        ci_low,
        ci_high,
        success_ratio: format!("{}/{}", ratio.0, ratio.1),
        p_meets_ratio: advice.p_meets,
        suggestion: advice.suggestion,
        modes: classify(&firsts, samples),
    }
}
