//! How well a judge agrees with labels: Cohen's κ (agreement beyond what chance gives),
//! sensitivity and specificity.
//!
//! ```
//! use prill_stats::agreement::Confusion;
//!
//! // 45 of 50 passes judged pass, 40 of 50 fails judged fail.
//! let c = Confusion { pass_pass: 45, pass_fail: 5, fail_pass: 10, fail_fail: 40 };
//! assert_eq!(c.sensitivity(), Some(0.9));
//! assert_eq!(c.specificity(), Some(0.8));
//! assert!((c.kappa().unwrap() - 0.7).abs() < 1e-12);
//! ```

use serde::Serialize;

/// Labels against a judge's verdicts: `label_verdict` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Confusion {
    /// Labeled pass, judged pass.
    pub pass_pass: u64,
    /// Labeled pass, judged fail (false fails).
    pub pass_fail: u64,
    /// Labeled fail, judged pass (false passes).
    pub fail_pass: u64,
    /// Labeled fail, judged fail.
    pub fail_fail: u64,
}

fn ratio(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

impl Confusion {
    /// Items judged.
    pub fn total(&self) -> u64 {
        self.pass_pass + self.pass_fail + self.fail_pass + self.fail_fail
    }

    /// Of the items labeled pass, the share judged pass.
    pub fn sensitivity(&self) -> Option<f64> {
        ratio(self.pass_pass, self.pass_pass + self.pass_fail)
    }

    /// Of the items labeled fail, the share judged fail.
    pub fn specificity(&self) -> Option<f64> {
        ratio(self.fail_fail, self.fail_pass + self.fail_fail)
    }

    /// Cohen's κ (Cohen, 1960): `(p_o − p_e) / (1 − p_e)`, the agreement beyond what two
    /// raters with these margins would reach by chance. 1 is perfect, 0 is chance. `None`
    /// when it is undefined (no items, or both raters always say the same word).
    pub fn kappa(&self) -> Option<f64> {
        let n = self.total() as f64;
        if n == 0.0 {
            return None;
        }
        let observed = (self.pass_pass + self.fail_fail) as f64 / n;
        let label_pass = (self.pass_pass + self.pass_fail) as f64 / n;
        let judged_pass = (self.pass_pass + self.fail_pass) as f64 / n;
        let chance = label_pass * judged_pass + (1.0 - label_pass) * (1.0 - judged_pass);
        (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_is_cohen_s() {
        // Cohen's textbook-style table: p_o = 0.7, p_e = 0.5 gives 0.4.
        let c = Confusion {
            pass_pass: 20,
            pass_fail: 5,
            fail_pass: 10,
            fail_fail: 15,
        };
        assert!((c.kappa().unwrap() - 0.4).abs() < 1e-12, "{:?}", c.kappa());
        // A judge that always says pass agrees 90% of the time on a 90% pass set, and
        // κ says that is chance.
        let yes_man = Confusion {
            pass_pass: 90,
            fail_pass: 10,
            ..Confusion::default()
        };
        assert_eq!(yes_man.kappa(), Some(0.0));
        assert_eq!(Confusion::default().kappa(), None);
        assert_eq!(yes_man.specificity(), Some(0.0));
    }
}
