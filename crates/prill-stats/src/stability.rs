//! Whether a case is stable, flaky or broken, from its samples over recent runs.
//!
//! A case is **flaky** when the Wilson 95% interval of its pass rate excludes both 0
//! and 1: it is neither "always passes" nor "never passes" on the evidence.
//! Otherwise it is **stable** when every sample passed and **broken** when none did.
//!
//! A case held to a `reliability` gate is judged against its own rates instead
//! ([`stability_between`]): **flaky** when the interval lies wholly between `bad` and
//! `good` (the rate is where the gate is least sure), **broken** when the pass rate is
//! at most `bad`, **stable** otherwise.
//!
//! ```
//! use prill_stats::stability::{Stability, stability};
//!
//! assert_eq!(stability(17, 20).0, Stability::Flaky);
//! assert_eq!(stability(20, 20).0, Stability::Stable);
//! assert_eq!(stability(0, 5).0, Stability::Broken);
//! ```

use serde::Serialize;

use crate::binomial::{Z95, wilson};

/// What a case's recent samples say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stability {
    /// Every sample passed.
    Stable,
    /// Some passed and some did not.
    Flaky,
    /// None passed.
    Broken,
}

impl Stability {
    /// `stable`, `flaky` or `broken`.
    pub fn name(self) -> &'static str {
        match self {
            Stability::Stable => "stable",
            Stability::Flaky => "flaky",
            Stability::Broken => "broken",
        }
    }
}

/// The stability of `passed` of `samples` (at least one), with the Wilson 95%
/// interval of the pass rate that decides it.
pub fn stability(passed: u64, samples: u64) -> (Stability, (f64, f64)) {
    let (low, high) = wilson(passed, samples, Z95);
    let state = if low > 0.0 && high < 1.0 {
        Stability::Flaky
    } else if passed == 0 {
        Stability::Broken
    } else {
        Stability::Stable
    };
    (state, (low, high))
}

/// The stability of `passed` of `samples` for a case whose gate tells `good` from
/// `bad`, with the Wilson 95% interval that decides it.
pub fn stability_between(
    passed: u64,
    samples: u64,
    bad: f64,
    good: f64,
) -> (Stability, (f64, f64)) {
    let (low, high) = wilson(passed, samples, Z95);
    let rate = if samples == 0 {
        0.0
    } else {
        passed as f64 / samples as f64
    };
    let state = if low > bad && high < good {
        Stability::Flaky
    } else if rate <= bad {
        Stability::Broken
    } else {
        Stability::Stable
    };
    (state, (low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reliability_case_is_flaky_between_its_own_rates() {
        // 88 of 100: the interval (0.80, 0.93) lies between 0.80 and 0.95.
        assert_eq!(stability_between(88, 100, 0.8, 0.95).0, Stability::Flaky);
        // 99 of 100 clears good; 19 of 20 is too few to say it is below good.
        assert_eq!(stability_between(99, 100, 0.8, 0.95).0, Stability::Stable);
        assert_eq!(stability_between(19, 20, 0.8, 0.95).0, Stability::Stable);
        assert_eq!(stability_between(70, 100, 0.8, 0.95).0, Stability::Broken);
        // The k/n rule calls 99 of 100 flaky; against 0.80 / 0.95 it is not.
        assert_eq!(stability(99, 100).0, Stability::Flaky);
    }

    #[test]
    fn one_failure_in_many_is_flaky_and_the_interval_says_how_much() {
        let (state, (low, high)) = stability(199, 200);
        assert_eq!(state, Stability::Flaky);
        assert!(low > 0.97 && high < 1.0, "{low} {high}");
        assert_eq!(stability(1, 1).0, Stability::Stable);
        assert_eq!(stability(0, 1).0, Stability::Broken);
    }
}
