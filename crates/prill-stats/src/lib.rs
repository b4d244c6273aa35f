//! The statistics of pass rates, for gates whose verdicts mean what they say
//! (`docs/statistics.md` explains them for users):
//!
//! - [`agreement`]: a judge against labels: Cohen's κ, sensitivity and specificity;
//! - [`binomial`]: binomial tails, and the Wilson and Clopper–Pearson intervals;
//! - [`gate`]: what a fixed `k/n` gate (`success_ratio`) does at each rate;
//! - [`sequential`]: the `reliability` gate, a truncated sequential test whose error
//!   rates are computed exactly;
//! - [`estimate`]: unbiased pass@k and pass^k;
//! - [`explain`]: what a case's gate means, in figures (`prill explain`);
//! - [`stability`]: whether a case is stable, flaky or broken over recent runs;
//! - [`two_sample`]: two pass rates compared: Fisher's mid-p, the smallest detectable
//!   drop, Holm and Benjamini–Hochberg.
//!
//! Pure arithmetic: no I/O, no clock.
//!
//! ```
//! use prill_stats::{KOfN, Reliability, Sequential};
//!
//! // 4 of 5 passes a 70%-reliable agent about half the time...
//! let ratio = KOfN { need: 4, of: 5 };
//! assert!((ratio.pass_probability(0.7) - 0.528).abs() < 0.001);
//! // ...while the sequential gate passes it at most 5% of the time.
//! let gate = Sequential::new(Reliability::default())?;
//! assert!(gate.outcomes(0.7).pass < 0.05);
//! # Ok::<(), prill_stats::DesignError>(())
//! ```

pub mod agreement;
pub mod binomial;
pub mod estimate;
pub mod explain;
pub mod gate;
pub mod sequential;
pub mod stability;
pub mod two_sample;

pub use binomial::{Z95, binomial_tail, clopper_pearson, wilson};
pub use estimate::{
    SuitePassHatK, curve, curve_points, curves, pass_at_k, pass_hat_k, suite_pass_hat_k,
};
pub use gate::KOfN;
pub use sequential::{Decision, DesignError, MAX_SAMPLES_LIMIT, Reliability, Sequential};

use serde::Serialize;

/// What a gate does to an agent whose samples pass with a given probability.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcomes {
    /// The chance it passes.
    pub pass: f64,
    /// The chance it fails.
    pub fail: f64,
    /// The chance it ends undecided (a sequential gate at its cap).
    pub inconclusive: f64,
    /// The samples it takes on average.
    pub expected_samples: f64,
}
