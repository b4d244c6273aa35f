//! A unit's gate as it runs: which samples to start, and when the verdict is decided.
//!
//! A `k/n` gate follows [`crate::ratio`]: samples start as permits allow and a verdict
//! is decided however they finish, always the verdict of running all `n`.
//!
//! A `reliability` gate is a sequential test (`prill_stats::Sequential`), and is read
//! in sample order: it decides on the samples `0..m` once all of them are in, one at a
//! time, so its verdict is a function of the outcomes in index order, whatever order
//! they finish in and however many run at once. Along that order:
//!
//! - a passed or failed sample is a trial; the test decides *passed* or *failed* as
//!   soon as the trials so far are enough, and at `max_samples` trials undecided the
//!   verdict is *inconclusive*;
//! - an errored sample is not a trial (it is censored: neither a pass nor a failure,
//!   and another sample takes its place), but at [`max_errors`] errored samples the
//!   unit is *errored*: the agent is too broken for its rate to be measured.
//!
//! It never starts a sample the verdict could not read: at most as many run at once as
//! the fewest more samples any verdict needs from where the test stands (all passing,
//! all failing, all erroring, or reaching `max_samples`). A unit therefore draws
//! samples in waves of at most that many, within `jobs`, and every sample started is
//! counted (the calls a verdict costs are the samples it reads).

use std::collections::BTreeMap;

use prill_spec::model::gate::{Gate, Reliability};
use prill_stats::{Decision, Sequential};

use crate::ratio::{Status, Tally};

/// The errored samples at which a `reliability` unit is errored:
/// `max(3, ceil(max_samples / 10))`, 10 for the default 100.
pub fn max_errors(reliability: &Reliability) -> u32 {
    reliability.max_samples.div_ceil(10).max(3)
}

/// A unit's samples so far, held to its gate.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    /// Every sample that finished, in any order.
    pub(crate) tally: Tally,
    rule: Rule,
}

#[derive(Debug, Clone)]
enum Rule {
    Ratio(prill_spec::model::data_driven::SuccessRatio),
    Sequential(Box<InOrder>),
}

/// A sequential test read in sample order.
#[derive(Debug, Clone)]
struct InOrder {
    test: Sequential,
    max_errors: u32,
    /// Samples finished past the first one not yet in, by index.
    waiting: BTreeMap<u32, Status>,
    /// Samples `0..read` are read, and these are their counts.
    read: u32,
    prefix: Tally,
    /// The verdict, once read.
    verdict: Option<Status>,
}

impl InOrder {
    fn trials(&self) -> u32 {
        self.prefix.passed + self.prefix.failed
    }

    /// Reads the samples that now follow the prefix without a gap, up to a verdict.
    fn advance(&mut self) {
        while self.verdict.is_none() {
            let Some(status) = self.waiting.remove(&self.read) else {
                return;
            };
            self.read += 1;
            self.prefix.add(status);
            self.verdict = if self.prefix.errored >= self.max_errors {
                Some(Status::Errored)
            } else {
                self.test
                    .decide(self.prefix.passed, self.trials())
                    .map(|d| match d {
                        Decision::Pass => Status::Passed,
                        Decision::Fail => Status::Failed,
                        Decision::Inconclusive => Status::Inconclusive,
                    })
            };
        }
    }

    /// The fewest more samples after the prefix before any verdict.
    fn fewest_to_verdict(&self) -> u32 {
        let passes = (0..).find(|more| {
            self.test
                .decide(self.prefix.passed + more, self.trials() + more)
                .is_some()
        });
        let failures = (0..).find(|more| {
            self.test
                .decide(self.prefix.passed, self.trials() + more)
                .is_some()
        });
        [
            passes.unwrap_or(u32::MAX),
            failures.unwrap_or(u32::MAX),
            self.max_errors.saturating_sub(self.prefix.errored),
        ]
        .into_iter()
        .min()
        .unwrap_or(1)
        .max(1)
    }
}

/// Why a `reliability` gate cannot run (a plan that was never validated, from the Rust
/// API).
pub(crate) type GateError = prill_stats::DesignError;

impl Progress {
    /// Nothing run yet under `gate`.
    pub(crate) fn new(gate: Gate) -> Result<Progress, GateError> {
        let rule = match gate {
            Gate::Ratio(ratio) => Rule::Ratio(ratio),
            Gate::Reliability(r) => Rule::Sequential(Box::new(InOrder {
                test: Sequential::unchecked(r)?,
                max_errors: max_errors(&r),
                waiting: BTreeMap::new(),
                read: 0,
                prefix: Tally::default(),
                verdict: None,
            })),
        };
        Ok(Progress {
            tally: Tally::default(),
            rule,
        })
    }

    /// Counts sample `index`, finished with `status`.
    pub(crate) fn add(&mut self, index: u32, status: Status) {
        self.tally.add(status);
        if let Rule::Sequential(s) = &mut self.rule {
            s.waiting.insert(index, status);
            s.advance();
        }
    }

    /// The verdict once decided.
    pub(crate) fn decided(&self) -> Option<Status> {
        match &self.rule {
            Rule::Ratio(ratio) => self.tally.decided(*ratio),
            Rule::Sequential(s) => s.verdict,
        }
    }

    /// Whether sample `next` may start now, with `running` samples started and not yet
    /// counted. `exhaustive` runs every sample the gate could read (a ratio's `n`, a
    /// `reliability` gate's `max_samples`), whatever the verdict.
    pub(crate) fn may_start(&self, next: u32, running: u32, exhaustive: bool) -> bool {
        match &self.rule {
            Rule::Ratio(ratio) => next < ratio.of && (exhaustive || self.decided().is_none()),
            Rule::Sequential(s) if exhaustive => next < s.test.reliability.max_samples,
            Rule::Sequential(s) => {
                // Samples started past the prefix: running, or in and waiting.
                let ahead = running + s.waiting.len() as u32;
                s.verdict.is_none() && ahead < s.fewest_to_verdict()
            }
        }
    }

    /// The verdict after every sample that was going to run has run.
    pub(crate) fn final_verdict(&self) -> Status {
        match &self.rule {
            Rule::Ratio(ratio) => self.tally.final_verdict(*ratio),
            // Only a cancelled unit ends undecided; what it did decides nothing.
            Rule::Sequential(s) => s.verdict.unwrap_or(Status::Skipped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::{Errored as E, Failed as F, Passed as P};

    fn default_gate() -> Progress {
        Progress::new(Gate::Reliability(Reliability::default())).unwrap()
    }

    /// Feeds `outcomes` in index order, one at a time as `may_start` allows, and
    /// returns the verdict and how many samples were started.
    fn run_in_order(mut progress: Progress, outcomes: impl Fn(u32) -> Status) -> (Status, u32) {
        let mut next = 0;
        while progress.decided().is_none() {
            assert!(progress.may_start(next, 0, false), "stalled at {next}");
            progress.add(next, outcomes(next));
            next += 1;
        }
        (progress.decided().unwrap(), next)
    }

    #[test]
    fn a_perfect_agent_passes_once_the_test_can_tell() {
        // ln(20) / ln(0.95 / 0.80) = 17.4: 18 passes in a row.
        assert_eq!(run_in_order(default_gate(), |_| P), (P, 18));
    }

    #[test]
    fn three_failures_in_a_row_fail_at_once() {
        // Each failure moves the ratio by ln(0.05 / 0.20); three reach ln(0.05).
        assert_eq!(run_in_order(default_gate(), |_| F), (F, 3));
    }

    #[test]
    fn errors_are_not_trials_until_there_are_too_many() {
        // Every third sample errs: 18 passes take 27 samples, 9 of them errors (10
        // would make the unit errored).
        let (verdict, started) = run_in_order(default_gate(), |i| if i % 3 == 0 { E } else { P });
        assert_eq!((verdict, started), (P, 27));
        let mut all_errors = default_gate();
        assert_eq!(run_in_order(all_errors.clone(), |_| E), (E, 10));
        all_errors.add(0, E);
        assert_eq!(all_errors.decided(), None);
    }

    #[test]
    fn undecided_at_max_samples_is_inconclusive() {
        // Alternating 19 passes and one failure keeps the ratio near the middle.
        let plan = Reliability {
            max_samples: 60,
            ..Reliability::default()
        };
        let progress = Progress::new(Gate::Reliability(plan)).unwrap();
        let (verdict, started) = run_in_order(progress, |i| if i % 7 == 6 { F } else { P });
        assert_eq!(verdict, Status::Inconclusive);
        assert_eq!(started, 60);
    }

    #[test]
    fn it_reads_samples_in_index_order_whatever_order_they_finish_in() {
        let mut p = default_gate();
        // Three failures would decide, but sample 0 is still running: nothing is.
        for i in 1..=3 {
            p.add(i, F);
        }
        assert_eq!(p.decided(), None);
        // Sample 0 is in: one pass and three failures fail, read in order.
        p.add(0, P);
        assert_eq!(p.decided(), Some(F));
        assert_eq!(p.tally.total(), 4);
    }

    #[test]
    fn it_never_starts_a_sample_the_verdict_could_not_read() {
        let p = default_gate();
        // Three failures could decide: at most three at once.
        assert!(p.may_start(0, 2, false));
        assert!(!p.may_start(3, 3, false));
        // Exhaustive runs every sample up to max_samples.
        assert!(p.may_start(99, 50, true));
        assert!(!p.may_start(100, 0, true));
    }

    #[test]
    fn the_error_cap_follows_max_samples() {
        let cap = |max_samples| {
            max_errors(&Reliability {
                max_samples,
                ..Reliability::default()
            })
        };
        assert_eq!((cap(1), cap(30), cap(100), cap(101)), (3, 3, 10, 11));
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whatever order samples finish in, and however many run at once, the verdict
        /// and the samples read are those of reading them one at a time in order.
        #[test]
        fn finishing_order_never_changes_the_verdict(
            outcomes in proptest::collection::vec(prop_oneof![Just(P), Just(F), Just(E)], 120),
            seed in any::<u64>(),
            width in 1_u32..8,
        ) {
            let at = |i: u32| outcomes[i as usize % outcomes.len()];
            let (expected, read) = run_in_order(default_gate(), at);
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut p = default_gate();
            let mut running: Vec<u32> = Vec::new();
            let mut next = 0;
            while p.decided().is_none() {
                while running.len() < width as usize && p.may_start(next, running.len() as u32, false) {
                    running.push(next);
                    next += 1;
                }
                prop_assert!(!running.is_empty(), "stalled");
                let done = running.swap_remove(rng.usize(..running.len()));
                p.add(done, at(done));
            }
            prop_assert_eq!(p.decided(), Some(expected));
            // Every sample started was one the verdict read.
            prop_assert!(next <= read, "started {next}, read {read}");
        }
    }
}
