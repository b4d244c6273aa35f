//! Success ratios: `k/n` means at least `k` of `n` samples must pass.
//!
//! The verdict of all `n` samples: *passed* with `k` passes; otherwise *failed* if any
//! sample failed, and *errored* if every sample that did not pass errored. Early stopping
//! never changes it ([`Tally::decided`]): a unit stops as soon as `k` passes are in, and
//! once `k` passes are out of reach it stops only when the verdict is known, that is when
//! a failure has been seen (it can only end *failed*) or every sample is done. Errors
//! alone never stop it early, because a later sample's wrong answer would make it *failed*.

pub use prill_check::Status;
use prill_spec::model::data_driven::SuccessRatio;
use serde::Serialize;

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
    pub fn add(&mut self, status: Status) {
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Errored => self.errored += 1,
            // A sample is never unscored nor inconclusive, and a skipped one did not run.
            Status::Unscored | Status::Inconclusive | Status::Skipped => {}
        }
    }

    /// How many samples ran.
    pub fn total(&self) -> u32 {
        self.passed + self.failed + self.errored
    }

    /// The verdict once it is decided for `ratio`, or `None` while the samples not yet
    /// run could still change it. Whatever order samples finish in, a decided verdict is
    /// the verdict of running all `n`.
    pub fn decided(&self, ratio: SuccessRatio) -> Option<Status> {
        if self.passed >= ratio.need {
            return Some(Status::Passed);
        }
        let not_passed = self.failed + self.errored;
        // Once more than n - k samples did not pass, k passes are out of reach; the
        // verdict is known once a failure is in, or when nothing is left to run.
        if not_passed > ratio.of - ratio.need {
            if self.failed > 0 {
                return Some(Status::Failed);
            }
            if self.total() >= ratio.of {
                return Some(Status::Errored);
            }
        }
        None
    }

    /// Samples of `ratio` that did not run (the unit stopped early, or was cancelled).
    pub fn not_run(&self, ratio: SuccessRatio) -> u32 {
        ratio.of.saturating_sub(self.total())
    }

    /// The verdict after every sample that was going to run has run.
    pub fn final_verdict(&self, ratio: SuccessRatio) -> Status {
        self.decided(ratio).unwrap_or(if self.failed > 0 {
            Status::Failed
        } else if self.errored > 0 {
            Status::Errored
        } else {
            Status::Skipped
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(need: u32, of: u32) -> SuccessRatio {
        SuccessRatio { need, of }
    }

    fn run(statuses: &[Status], r: SuccessRatio) -> (usize, Option<Status>) {
        let mut t = Tally::default();
        for (i, s) in statuses.iter().enumerate() {
            t.add(*s);
            if let Some(v) = t.decided(r) {
                return (i + 1, Some(v));
            }
        }
        (statuses.len(), None)
    }

    use Status::{Errored as E, Failed as F, Passed as P};

    #[test]
    fn stops_at_k_passes() {
        assert_eq!(
            run(&[P, F, P, P, P], ratio(2, 5)),
            (3, Some(Status::Passed))
        );
        assert_eq!(run(&[P], ratio(1, 1)), (1, Some(Status::Passed)));
    }

    #[test]
    fn a_failure_out_of_reach_stops_at_n_minus_k_plus_one_non_passes() {
        assert_eq!(run(&[F, E, P, F], ratio(3, 5)), (4, Some(Status::Failed)));
        assert_eq!(run(&[E, F, E], ratio(3, 5)), (3, Some(Status::Failed)));
        assert_eq!(run(&[F], ratio(1, 1)), (1, Some(Status::Failed)));
        assert_eq!(run(&[E], ratio(1, 1)), (1, Some(Status::Errored)));
    }

    #[test]
    fn errors_alone_never_stop_a_unit_early() {
        // 3/5 is out of reach after three errors, but a later failure would make the
        // unit failed, so every sample runs.
        assert_eq!(run(&[E, E, E, E], ratio(3, 5)), (4, None));
        assert_eq!(
            run(&[E, E, E, E, E], ratio(3, 5)),
            (5, Some(Status::Errored))
        );
        assert_eq!(
            run(&[E, E, E, E, F], ratio(3, 5)),
            (5, Some(Status::Failed))
        );
    }

    #[test]
    fn zero_needed_passes_at_once() {
        assert_eq!(Tally::default().decided(ratio(0, 3)), Some(Status::Passed));
    }

    #[test]
    fn a_failure_among_errors_makes_it_a_failure() {
        assert_eq!(run(&[E, F], ratio(2, 2)), (2, Some(Status::Failed)));
        assert_eq!(run(&[E, F, E], ratio(1, 3)), (3, Some(Status::Failed)));
        assert_eq!(run(&[E, E], ratio(2, 2)), (2, Some(Status::Errored)));
    }

    #[test]
    fn not_run_counts_what_an_early_stop_left_out() {
        let mut t = Tally::default();
        for s in [P, P, F, P] {
            t.add(s);
        }
        assert_eq!(t.not_run(ratio(3, 10)), 6);
    }

    /// The verdict of running every sample, by the rule itself (not by `decided`).
    fn verdict_of_all(statuses: &[Status], need: u32) -> Status {
        let passed = statuses.iter().filter(|s| **s == P).count() as u32;
        if passed >= need {
            Status::Passed
        } else if statuses.contains(&F) {
            Status::Failed
        } else {
            Status::Errored
        }
    }

    fn status() -> impl Strategy<Value = Status> {
        prop_oneof![Just(P), Just(F), Just(E)]
    }

    use proptest::prelude::*;

    /// Outcomes drawn per sample, `k`, and a random order in which they finish.
    fn case() -> impl Strategy<Value = (Vec<Status>, u32, Vec<Status>)> {
        proptest::collection::vec(status(), 1..12).prop_flat_map(|outcomes| {
            let of = outcomes.len() as u32;
            (
                Just(outcomes.clone()),
                0..=of,
                Just(outcomes).prop_shuffle(),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Stopping at the first decided verdict, whatever order samples finish in,
        /// gives the verdict of running all n.
        #[test]
        fn early_stopping_never_changes_the_verdict((outcomes, need, finished) in case()) {
            let r = ratio(need, outcomes.len() as u32);
            let (_, decided) = run(&finished, r);
            prop_assert_eq!(decided, Some(verdict_of_all(&outcomes, need)));
        }
    }
}
