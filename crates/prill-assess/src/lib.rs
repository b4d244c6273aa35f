//! The assessor's pure half: over many samples of a case, how often it passes (with a
//! Wilson 95% interval), how likely it is to meet its gate (the binomial tail of its
//! `success_ratio`, or its `reliability` test's exact pass chance), a sounder ratio when
//! it is not, and how it fails (deterministic failure
//! modes). No I/O: the CLI gathers the samples through `prill-run`.
//!
//! # Example
//!
//! ```
//! use prill_assess::{Status, SampleOutcome, assess};
//! use prill_spec::model::data_driven::SuccessRatio;
//! use prill_spec::plan::Gate;
//!
//! let outcomes: Vec<SampleOutcome> = (0..10)
//!     .map(|i| SampleOutcome { outcome: if i < 7 { Status::Passed } else { Status::Failed }, first_failure: None, gist_passed: 0, gist_judged: 0 })
//!     .collect();
//! let a = assess("c1", "t.hocon", "case", &Gate::Ratio(SuccessRatio { need: 3, of: 5 }), &outcomes);
//! assert_eq!((a.passed, a.failed, a.samples), (7, 3, 10));
//! assert!((a.pass_rate - 0.7).abs() < 1e-12);
//! assert!(a.ci_low < 0.7 && 0.7 < a.ci_high);
//! assert!(a.p_meets_ratio > 0.8);
//! // pass^3 of 7 passes in 10: C(7,3) / C(10,3).
//! assert!((a.pass_k[2].pass_hat_k - 35.0 / 120.0).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod modes;
pub mod stats;

use prill_spec::plan::Gate;
use prill_stats::curve_points;
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
    /// Its `gist` and `trajectory_gist` checks that the judge passed (the `not_` forms
    /// are left out: their verdict is the other way round).
    pub gist_passed: u32,
    /// Its `gist` and `trajectory_gist` checks the judge gave a verdict on.
    pub gist_judged: u32,
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
    /// The Clopper–Pearson ("exact") 95% interval of the pass rate: never narrower than
    /// it should be.
    pub exact_low: f64,
    /// Its upper end.
    pub exact_high: f64,
    /// pass@k and pass^k, unbiased (`docs/statistics.md`), for every `k` up to 20 and
    /// then 25, 50, 100, 200, 500, ... up to the samples; an errored sample counts as
    /// not passing.
    pub pass_k: Vec<PassK>,
    /// The case's gate: its ratio, `k/n`, or its `reliability` plan (as
    /// `reliability good 0.95 bad 0.8 (5%/5%, at most 100)`).
    pub success_ratio: String,
    /// The chance that the case meets its gate at the observed rate.
    pub p_meets_ratio: f64,
    /// A sounder ratio, when this one is met less than 90% of the time.
    pub suggestion: Option<String>,
    /// How it fails, most common first.
    pub modes: Vec<Mode>,
    /// Its gist checks' verdicts over all samples; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gist: Option<GistRate>,
}

/// How often a case's gist checks passed, as judged, and corrected for the judge's own
/// errors when its calibration is on record.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GistRate {
    /// Verdicts that passed.
    pub passed: u64,
    /// Verdicts given.
    pub judged: u64,
    /// The rate behind them, corrected with the judge's calibration on record
    /// (Rogan–Gladen), with a 95% interval that carries the calibration's uncertainty
    /// too; absent without a usable calibration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrected: Option<prill_stats::agreement::Corrected>,
}

impl CaseAssessment {
    /// Corrects the gist pass rate for a judge calibrated as `calibration`
    /// (`docs/statistics.md`).
    pub fn correct_gist(&mut self, calibration: &prill_stats::agreement::Confusion) {
        if let Some(gist) = &mut self.gist {
            gist.corrected = prill_stats::agreement::corrected_rate(
                gist.passed,
                gist.judged,
                calibration,
                RESAMPLES,
                SEED,
            );
        }
    }
}

/// pass@k and pass^k at one `k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PassK {
    /// `k`.
    pub k: u32,
    /// The chance at least one of `k` samples passes.
    pub pass_at_k: f64,
    /// The chance all `k` pass.
    pub pass_hat_k: f64,
}

/// The resamples of [`suite_pass_hat_k`]'s bootstrap, and its seed.
const RESAMPLES: usize = 2000;
const SEED: u64 = 0x5eed_2026;

/// The suite's pass^k (the mean of its cases'), with a case-bootstrap 95% interval,
/// at the `k` of a case's curve up to the fewest samples a case has.
pub fn suite_pass_hat_k(cases: &[CaseAssessment]) -> Vec<prill_stats::SuitePassHatK> {
    let counts: Vec<(u32, u32)> = cases
        .iter()
        .filter(|c| c.samples > 0)
        .map(|c| (c.samples as u32, c.passed as u32))
        .collect();
    let fewest = counts.iter().map(|(n, _)| *n).min().unwrap_or(0);
    let ks: Vec<u32> = curve_points(fewest).collect();
    prill_stats::suite_pass_hat_k(&counts, &ks, RESAMPLES, SEED)
}

/// Assesses one case from its samples.
pub fn assess(
    id: &str,
    file: &str,
    name: &str,
    gate: &Gate,
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
    let (exact_low, exact_high) = prill_stats::clopper_pearson(passed as u32, samples as u32, 0.05);
    let (n, c) = (samples as u32, passed as u32);
    let pass_k = prill_stats::curve(n, c)
        .into_iter()
        .map(|(k, pass_at_k, pass_hat_k)| PassK {
            k,
            pass_at_k,
            pass_hat_k,
        })
        .collect();
    let advice = match gate {
        Gate::Ratio(r) => advise(r.need, r.of, pass_rate),
        // A sequential gate's chance of passing at the observed rate, exactly; what
        // would do instead is `prill explain`'s to say.
        Gate::Reliability(r) => RatioAdvice {
            p_meets: prill_stats::Sequential::unchecked(*r)
                .map_or(0.0, |test| test.outcomes(pass_rate).pass),
            suggestion: None,
        },
    };
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
        exact_low,
        exact_high,
        pass_k,
        success_ratio: gate.to_string(),
        p_meets_ratio: advice.p_meets,
        suggestion: advice.suggestion,
        modes: classify(&firsts, samples),
        gist: gist(outcomes),
    }
}

/// The gist verdicts of `outcomes`, when there are some.
fn gist(outcomes: &[SampleOutcome]) -> Option<GistRate> {
    let judged: u64 = outcomes.iter().map(|o| u64::from(o.gist_judged)).sum();
    (judged > 0).then(|| GistRate {
        passed: outcomes.iter().map(|o| u64::from(o.gist_passed)).sum(),
        judged,
        corrected: None,
    })
}
