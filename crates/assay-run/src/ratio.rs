//! Success ratios: `k/n` means at least `k` of `n` samples must pass. Samples stop as
//! soon as the verdict is decided either way: `k` passes, or `n - k + 1` samples that
//! did not pass (failures and errors alike count against the ratio).

use assay_spec::model::data_driven::SuccessRatio;
use serde::Serialize;

/// How one sample came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleStatus {
    /// Every check passed.
    Passed,
    /// A check failed: the agent answered wrongly.
    Failed,
    /// The sample could not be judged: the agent could not be reached, timed out or
    /// broke the protocol, or a check could not be evaluated.
    Errored,
}

/// A unit's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Enough samples passed.
    Passed,
    /// Too few passed, and at least one of the others failed.
    Failed,
    /// Too few passed, and every other one errored.
    Errored,
    /// Not run (cancelled or filtered out).
    Skipped,
}

/// Counts of samples so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Tally {
    /// Samples that passed.
    pub passed: u32,
    /// Samples that failed.
    pub failed: u32,
    /// Samples that errored.
    pub errored: u32,
}

impl Tally {
    /// Counts one more sample.
    pub fn add(&mut self, status: SampleStatus) {
        match status {
            SampleStatus::Passed => self.passed += 1,
            SampleStatus::Failed => self.failed += 1,
            SampleStatus::Errored => self.errored += 1,
        }
    }

    /// How many samples ran.
    pub fn total(&self) -> u32 {
        self.passed + self.failed + self.errored
    }

    /// The verdict once it is decided for `ratio`, or `None` while more samples could
    /// still change it.
    pub fn decided(&self, ratio: SuccessRatio) -> Option<Verdict> {
        if self.passed >= ratio.need {
            return Some(Verdict::Passed);
        }
        let not_passed = self.failed + self.errored;
        // Once more than n - k samples did not pass, k passes are out of reach.
        if not_passed > ratio.of - ratio.need {
            return Some(if self.failed > 0 {
                Verdict::Failed
            } else {
                Verdict::Errored
            });
        }
        None
    }

    /// The verdict after every sample that was going to run has run.
    pub fn final_verdict(&self, ratio: SuccessRatio) -> Verdict {
        self.decided(ratio).unwrap_or(if self.failed > 0 {
            Verdict::Failed
        } else if self.errored > 0 {
            Verdict::Errored
        } else {
            Verdict::Skipped
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(need: u32, of: u32) -> SuccessRatio {
        SuccessRatio { need, of }
    }

    fn run(statuses: &[SampleStatus], r: SuccessRatio) -> (usize, Option<Verdict>) {
        let mut t = Tally::default();
        for (i, s) in statuses.iter().enumerate() {
            t.add(*s);
            if let Some(v) = t.decided(r) {
                return (i + 1, Some(v));
            }
        }
        (statuses.len(), None)
    }

    use SampleStatus::{Errored as E, Failed as F, Passed as P};

    #[test]
    fn stops_at_k_passes() {
        assert_eq!(
            run(&[P, F, P, P, P], ratio(2, 5)),
            (3, Some(Verdict::Passed))
        );
        assert_eq!(run(&[P], ratio(1, 1)), (1, Some(Verdict::Passed)));
    }

    #[test]
    fn stops_at_n_minus_k_plus_one_non_passes() {
        assert_eq!(run(&[F, E, P, F], ratio(3, 5)), (4, Some(Verdict::Failed)));
        assert_eq!(run(&[E, E, E], ratio(3, 5)), (3, Some(Verdict::Errored)));
        assert_eq!(run(&[F], ratio(1, 1)), (1, Some(Verdict::Failed)));
        assert_eq!(run(&[E], ratio(1, 1)), (1, Some(Verdict::Errored)));
    }

    #[test]
    fn zero_needed_passes_at_once() {
        assert_eq!(Tally::default().decided(ratio(0, 3)), Some(Verdict::Passed));
    }

    #[test]
    fn a_failure_among_errors_makes_it_a_failure() {
        assert_eq!(run(&[E, F], ratio(2, 2)), (1, Some(Verdict::Errored)));
        assert_eq!(run(&[E, F, E], ratio(1, 3)), (3, Some(Verdict::Failed)));
    }
}
