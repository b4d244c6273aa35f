//! Whether a case is stable, flaky or broken, from its samples over recent runs.
//!
//! A case is **flaky** when the Wilson 95% interval of its pass rate excludes both 0
//! and 1: it is neither "always passes" nor "never passes" on the evidence.
//! Otherwise it is **stable** when every sample passed and **broken** when none did.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_in_many_is_flaky_and_the_interval_says_how_much() {
        let (state, (low, high)) = stability(199, 200);
        assert_eq!(state, Stability::Flaky);
        assert!(low > 0.97 && high < 1.0, "{low} {high}");
        assert_eq!(stability(1, 1).0, Stability::Stable);
        assert_eq!(stability(0, 1).0, Stability::Broken);
    }
}
