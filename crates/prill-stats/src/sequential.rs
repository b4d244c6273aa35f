//! A gate with stated error rates: a truncated sequential probability ratio test
//! (Wald, 1945) between "the agent passes at least `good` of the time" and "at most
//! `bad`", which decides as soon as the samples so far are enough, and whose real error
//! rates, truncation included, are computed exactly rather than taken from Wald's
//! approximations.
//!
//! After `n` samples with `s` passes the log-likelihood ratio is
//! `s ln(good / bad) + (n - s) ln((1 - good) / (1 - bad))`. The gate passes once it
//! reaches `ln(1 / false_pass)` and fails once it falls to `ln(false_fail)`; these
//! boundaries bound each error rate by its stated value exactly, not only
//! approximately (`P_bad[pass] <= e^-A P_good[pass] <= false_pass`, and the same for
//! failing). At `max_samples` without a decision the verdict is *inconclusive*, which
//! is never a pass: so an agent at `good` can also miss by being inconclusive, and
//! [`Sequential::new`] refuses a plan whose `max_samples` leaves it missing more often
//! than `false_fail`, and says how many samples would do.
//!
//! Exact rates come from walking the lattice of (samples, passes): the chance of
//! reaching each point without a decision, for any `p` ([`Sequential::outcomes`]).
//!
//! ```
//! use prill_stats::{Decision, Reliability, Sequential};
//!
//! let gate = Sequential::new(Reliability::default())?;
//! assert_eq!(gate.decide(19, 19), Some(Decision::Pass));
//! assert_eq!(gate.decide(2, 5), Some(Decision::Fail));
//! let at_good = gate.outcomes(0.95);
//! assert!(at_good.fail + at_good.inconclusive <= 0.05);
//! assert!(gate.outcomes(0.80).pass <= 0.05);
//! # Ok::<(), prill_stats::DesignError>(())
//! ```

use serde::Serialize;

use crate::Outcomes;

/// The most samples a plan may ask for.
pub const MAX_SAMPLES_LIMIT: u32 = 10_000;

/// What a `reliability` gate must tell apart, and how surely.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reliability {
    /// A success rate at least this high should pass...
    pub good: f64,
    /// ...and one at most this high should not.
    pub bad: f64,
    /// The most often an agent at `bad` (or worse) may pass.
    pub false_pass: f64,
    /// The most often an agent at `good` (or better) may fail or be inconclusive.
    pub false_fail: f64,
    /// The samples after which an undecided gate is inconclusive.
    pub max_samples: u32,
}

impl Default for Reliability {
    /// good 0.95, bad 0.80, 5% each way, at most 100 samples.
    fn default() -> Reliability {
        Reliability {
            good: 0.95,
            bad: 0.80,
            false_pass: 0.05,
            false_fail: 0.05,
            max_samples: 100,
        }
    }
}

/// Why a `reliability` plan cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DesignError {
    /// A rate outside `(0, 1)`.
    #[error("`{field}` must be between 0 and 1 (both excluded), found {value}")]
    Range {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// `bad` is not below `good`.
    #[error("`bad` ({bad}) must be below `good` ({good})")]
    Order {
        /// `good`.
        good: f64,
        /// `bad`.
        bad: f64,
    },
    /// `max_samples` outside `1..=MAX_SAMPLES_LIMIT`.
    #[error("`max_samples` must be from 1 to {MAX_SAMPLES_LIMIT}, found {0}")]
    Samples(u32),
    /// Too few samples to meet `false_fail` at `good` (an agent there would too often
    /// be inconclusive).
    #[error(
        "with max_samples = {max_samples}, an agent at good = {good} passes only {pass:.3} of the time (fails {fail:.3}, inconclusive {inconclusive:.3}), short of 1 - false_fail = {target:.3}; {advice}"
    )]
    TooFewSamples {
        /// The plan's `max_samples`.
        max_samples: u32,
        /// `good`.
        good: f64,
        /// Its pass probability at `good`.
        pass: f64,
        /// Its fail probability at `good`.
        fail: f64,
        /// Its inconclusive probability at `good`.
        inconclusive: f64,
        /// `1 - false_fail`.
        target: f64,
        /// The fewest samples that would do, if any within the limit.
        needed: Option<u32>,
        /// What to do, in words.
        advice: String,
    },
}

/// What a sequential gate has decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Enough evidence that the rate is at least `good`.
    Pass,
    /// Enough evidence that the rate is at most `bad`.
    Fail,
    /// `max_samples` ran out first.
    Inconclusive,
}

/// A truncated SPRT for a [`Reliability`]. See the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sequential {
    /// What it tells apart.
    pub reliability: Reliability,
    /// The log-likelihood ratio at which it passes: `ln(1 / false_pass)`.
    pub pass_at: f64,
    /// The log-likelihood ratio at which it fails: `ln(false_fail)`.
    pub fail_at: f64,
    step_pass: f64,
    step_fail: f64,
}

impl Sequential {
    /// The gate for `reliability`, refused when a rate is out of range, `bad` is not
    /// below `good`, or `max_samples` is too few to meet `false_fail` at `good`.
    pub fn new(reliability: Reliability) -> Result<Sequential, DesignError> {
        let gate = Sequential::unchecked(reliability)?;
        let at_good = gate.outcomes(reliability.good);
        let target = 1.0 - reliability.false_fail;
        if at_good.pass >= target - 1e-12 {
            return Ok(gate);
        }
        let needed = gate.samples_needed();
        let advice = match needed {
            Some(n) => format!("max_samples = {n} would meet it"),
            None => format!(
                "not even {MAX_SAMPLES_LIMIT} samples would: widen the gap between good and bad, or allow more errors"
            ),
        };
        Err(DesignError::TooFewSamples {
            max_samples: reliability.max_samples,
            good: reliability.good,
            pass: at_good.pass,
            fail: at_good.fail,
            inconclusive: at_good.inconclusive,
            target,
            needed,
            advice,
        })
    }

    /// The gate for `reliability` with its ranges checked but not whether
    /// `max_samples` is enough.
    pub fn unchecked(reliability: Reliability) -> Result<Sequential, DesignError> {
        let Reliability {
            good,
            bad,
            false_pass,
            false_fail,
            max_samples,
        } = reliability;
        for (field, value) in [
            ("good", good),
            ("bad", bad),
            ("false_pass", false_pass),
            ("false_fail", false_fail),
        ] {
            if !(value > 0.0 && value < 1.0) {
                return Err(DesignError::Range { field, value });
            }
        }
        if bad >= good {
            return Err(DesignError::Order { good, bad });
        }
        if max_samples == 0 || max_samples > MAX_SAMPLES_LIMIT {
            return Err(DesignError::Samples(max_samples));
        }
        Ok(Sequential {
            reliability,
            pass_at: (1.0 / false_pass).ln(),
            fail_at: false_fail.ln(),
            step_pass: (good / bad).ln(),
            step_fail: ((1.0 - good) / (1.0 - bad)).ln(),
        })
    }

    /// The decision after `trials` samples of which `passes` passed (errored samples
    /// are not counted in either), or `None` while it needs more.
    pub fn decide(&self, passes: u32, trials: u32) -> Option<Decision> {
        let passes = passes.min(trials);
        let llr = f64::from(passes) * self.step_pass + f64::from(trials - passes) * self.step_fail;
        if llr >= self.pass_at {
            Some(Decision::Pass)
        } else if llr <= self.fail_at {
            Some(Decision::Fail)
        } else if trials >= self.reliability.max_samples {
            Some(Decision::Inconclusive)
        } else {
            None
        }
    }

    /// The exact chances of each decision, and the expected samples, when each sample
    /// passes with probability `p`.
    pub fn outcomes(&self, p: f64) -> Outcomes {
        outcomes_capped(self, p, self.reliability.max_samples)
    }

    /// The fewest `max_samples` at which an agent at `good` passes at least
    /// `1 - false_fail` of the time, if any up to [`MAX_SAMPLES_LIMIT`].
    pub fn samples_needed(&self) -> Option<u32> {
        let r = self.reliability;
        let meets =
            |cap: u32| outcomes_capped(self, r.good, cap).pass >= 1.0 - r.false_fail - 1e-12;
        if !meets(MAX_SAMPLES_LIMIT) {
            return None;
        }
        // More samples never lower the pass probability: the decisions before the cap
        // stay, and undecided paths only gain a chance to pass.
        let (mut low, mut high) = (1, MAX_SAMPLES_LIMIT);
        while low < high {
            let mid = low + (high - low) / 2;
            if meets(mid) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        Some(low)
    }
}

/// [`Sequential::outcomes`] as if `max_samples` were `cap`.
fn outcomes_capped(gate: &Sequential, p: f64, cap: u32) -> Outcomes {
    let p = p.clamp(0.0, 1.0);
    // mass[s - low]: the chance of s passes after n samples with no decision yet. The
    // undecided points lie in a narrow band, so only it is kept.
    let mut low = 0_usize;
    let mut mass = vec![1.0_f64];
    let (mut pass, mut fail, mut samples) = (0.0, 0.0, 0.0);
    let open = |passes: u32, trials: u32| {
        let llr = f64::from(passes) * gate.step_pass + f64::from(trials - passes) * gate.step_fail;
        if llr >= gate.pass_at {
            Some(Decision::Pass)
        } else if llr <= gate.fail_at {
            Some(Decision::Fail)
        } else {
            None
        }
    };
    for n in 1..=cap {
        let mut next = vec![0.0_f64; mass.len() + 1];
        for (i, m) in mass.iter().enumerate() {
            next[i + 1] += m * p;
            next[i] += m * (1.0 - p);
        }
        for (i, m) in next.iter_mut().enumerate() {
            if *m == 0.0 {
                continue;
            }
            match open((low + i) as u32, n) {
                Some(Decision::Pass) => pass += *m,
                Some(_) => fail += *m,
                None => continue,
            }
            samples += *m * f64::from(n);
            *m = 0.0;
        }
        // Trim the decided ends of the band.
        let first = next.iter().position(|m| *m != 0.0);
        let Some(first) = first else {
            mass = Vec::new();
            break;
        };
        let last = next.iter().rposition(|m| *m != 0.0).unwrap_or(first);
        low += first;
        mass = next[first..=last].to_vec();
    }
    let inconclusive: f64 = mass.iter().sum();
    samples += inconclusive * f64::from(cap);
    Outcomes {
        pass,
        fail,
        inconclusive,
        expected_samples: samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_plan_meets_its_error_rates_exactly() {
        let gate = Sequential::new(Reliability::default()).unwrap();
        let at_good = gate.outcomes(0.95);
        let at_bad = gate.outcomes(0.80);
        assert!(at_good.pass >= 0.95, "{at_good:?}");
        assert!(at_bad.pass <= 0.05, "{at_bad:?}");
        for p in [0.0, 0.5, 0.8, 0.9, 0.95, 1.0] {
            let o = gate.outcomes(p);
            assert!(
                (o.pass + o.fail + o.inconclusive - 1.0).abs() < 1e-9,
                "{p}: {o:?}"
            );
        }
        // The expected samples the issue quotes for a capped SPRT: about 12, 22, 42, 31.
        let expected: Vec<f64> = [0.70, 0.80, 0.90, 0.95]
            .iter()
            .map(|p| gate.outcomes(*p).expected_samples)
            .collect();
        for (got, quoted) in expected.iter().zip([12.0, 22.0, 42.0, 31.0]) {
            assert!((got - quoted).abs() < 3.0, "{expected:?}");
        }
    }

    #[test]
    fn the_pass_probability_rises_with_the_rate() {
        let gate = Sequential::new(Reliability::default()).unwrap();
        let mut before = 0.0;
        for i in 0..=100 {
            let pass = gate.outcomes(f64::from(i) / 100.0).pass;
            assert!(pass >= before - 1e-12, "at {i}%: {pass} < {before}");
            before = pass;
        }
    }

    #[test]
    fn too_few_samples_are_refused_with_the_number_that_would_do() {
        let tight = Reliability {
            max_samples: 20,
            ..Reliability::default()
        };
        let Err(DesignError::TooFewSamples { needed, .. }) = Sequential::new(tight) else {
            panic!("20 samples cannot tell 0.95 from 0.80 at 5%/5%");
        };
        let needed = needed.unwrap();
        assert!(needed > 20 && needed <= 100, "{needed}");
        let enough = Reliability {
            max_samples: needed,
            ..Reliability::default()
        };
        assert!(Sequential::new(enough).is_ok());
        let one_less = Reliability {
            max_samples: needed - 1,
            ..Reliability::default()
        };
        assert!(Sequential::new(one_less).is_err());
    }

    #[test]
    fn nonsense_is_refused() {
        let with = |f: fn(&mut Reliability)| {
            let mut r = Reliability::default();
            f(&mut r);
            Sequential::new(r).unwrap_err().to_string()
        };
        assert!(with(|r| r.bad = 0.96).contains("must be below"));
        assert!(with(|r| r.good = 1.0).contains("`good` must be between 0 and 1"));
        assert!(with(|r| r.false_pass = 0.0).contains("false_pass"));
        assert!(with(|r| r.max_samples = 0).contains("max_samples"));
    }

    #[test]
    fn decisions_follow_the_boundaries() {
        let gate = Sequential::new(Reliability::default()).unwrap();
        // 18 straight passes: 18 ln(0.95/0.80) = 3.09 >= ln 20 = 3.00; 17 give 2.92.
        assert_eq!(gate.decide(17, 17), None);
        assert_eq!(gate.decide(18, 18), Some(Decision::Pass));
        // Each failure weighs ln(0.05/0.20) = -1.39: three at once fail it.
        assert_eq!(gate.decide(0, 2), None);
        assert_eq!(gate.decide(0, 3), Some(Decision::Fail));
        assert_eq!(gate.decide(90, 100), Some(Decision::Inconclusive));
    }
}
