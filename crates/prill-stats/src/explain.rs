//! What a case's gate means, in figures: its operating characteristic at the usual
//! rates, the samples it takes, its error rates at a `good` and a `bad` rate, and what
//! a `reliability` gate telling the same two rates apart would cost.
//!
//! ```
//! use prill_stats::explain::{Gate, explain};
//! use prill_stats::{KOfN, Reliability};
//!
//! let figures = explain(&Gate::Ratio(KOfN { need: 4, of: 5 }), &Reliability::default());
//! // At good = 0.95 it fails 2% of the time; at bad = 0.80 it passes 74% of the time.
//! assert!((figures.false_fail - 0.023).abs() < 0.001);
//! assert!((figures.false_pass - 0.737).abs() < 0.001);
//! ```

use serde::Serialize;

use crate::{KOfN, Outcomes, Reliability, Sequential};

/// The rates a gate's operating characteristic is shown at.
pub const RATES: [f64; 6] = [0.5, 0.7, 0.8, 0.9, 0.95, 0.99];

/// A case's gate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate {
    /// `success_ratio`: at least `need` of `of`.
    Ratio(KOfN),
    /// `reliability`: a sequential test.
    Reliability(Sequential),
}

impl Gate {
    /// What it does at rate `p`.
    pub fn outcomes(&self, p: f64) -> Outcomes {
        match self {
            Gate::Ratio(ratio) => ratio.outcomes(p),
            Gate::Reliability(gate) => gate.outcomes(p),
        }
    }
}

/// One rate of the operating characteristic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AtRate {
    /// The rate each sample passes at.
    pub p: f64,
    /// What the gate does there.
    #[serde(flatten)]
    pub outcomes: Outcomes,
}

/// What a gate means. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// The operating characteristic at [`RATES`].
    pub rates: Vec<AtRate>,
    /// The rate it is judged at as good (the gate's own `good`, else the one given).
    pub good: f64,
    /// The rate it is judged at as bad.
    pub bad: f64,
    /// How often an agent at `good` does not pass (fails, or is inconclusive).
    pub false_fail: f64,
    /// How often an agent at `bad` passes.
    pub false_pass: f64,
    /// The samples it takes on average at `good` and at `bad`.
    pub samples_at_good: f64,
    /// See `samples_at_good`.
    pub samples_at_bad: f64,
    /// For a `success_ratio`: the `reliability` gate with the same `good` and `bad`
    /// and the error rates of `reference`, and its average samples at both; `None`
    /// for a `reliability` gate, or when no plan within the sample limit exists.
    pub instead: Option<Instead>,
}

/// A `reliability` gate in place of a `success_ratio`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Instead {
    /// Its plan, with the fewest `max_samples` that meets its error rates.
    pub reliability: Reliability,
    /// How often an agent at `good` does not pass.
    pub false_fail: f64,
    /// How often an agent at `bad` passes.
    pub false_pass: f64,
    /// Its average samples at `good`.
    pub samples_at_good: f64,
    /// Its average samples at `bad`.
    pub samples_at_bad: f64,
}

/// The figures of `gate`; a `success_ratio` is judged at `reference`'s `good` and
/// `bad` and set beside a `reliability` gate of `reference`'s error rates.
pub fn explain(gate: &Gate, reference: &Reliability) -> Figures {
    let (good, bad) = match gate {
        Gate::Reliability(g) => (g.reliability.good, g.reliability.bad),
        Gate::Ratio(_) => (reference.good, reference.bad),
    };
    let at_good = gate.outcomes(good);
    let at_bad = gate.outcomes(bad);
    let instead = match gate {
        Gate::Reliability(_) => None,
        Gate::Ratio(_) => instead(reference),
    };
    Figures {
        rates: RATES
            .iter()
            .map(|&p| AtRate {
                p,
                outcomes: gate.outcomes(p),
            })
            .collect(),
        good,
        bad,
        false_fail: 1.0 - at_good.pass,
        false_pass: at_bad.pass,
        samples_at_good: at_good.expected_samples,
        samples_at_bad: at_bad.expected_samples,
        instead,
    }
}

/// The cheapest `reliability` plan of `reference`'s rates that meets its error rates.
fn instead(reference: &Reliability) -> Option<Instead> {
    let draft = Sequential::unchecked(Reliability {
        max_samples: crate::MAX_SAMPLES_LIMIT,
        ..*reference
    })
    .ok()?;
    let reliability = Reliability {
        max_samples: draft.samples_needed()?,
        ..*reference
    };
    let gate = Sequential::new(reliability).ok()?;
    let (at_good, at_bad) = (gate.outcomes(reference.good), gate.outcomes(reference.bad));
    Some(Instead {
        reliability,
        false_fail: 1.0 - at_good.pass,
        false_pass: at_bad.pass,
        samples_at_good: at_good.expected_samples,
        samples_at_bad: at_bad.expected_samples,
    })
}

/// How many good cases a run of a suite fails on average if every case were at its
/// `good` rate: the sum of their false-fail rates (a suite of 200 cases at 5% each
/// fails about 10 good cases per run).
pub fn expected_false_failures<'f>(figures: impl IntoIterator<Item = &'f Figures>) -> f64 {
    figures.into_iter().map(|f| f.false_fail).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_set_beside_the_reliability_gate_that_tells_the_same_rates_apart() {
        let figures = explain(
            &Gate::Ratio(KOfN { need: 4, of: 5 }),
            &Reliability::default(),
        );
        assert_eq!(figures.rates.len(), RATES.len());
        assert!((figures.rates[1].outcomes.pass - 0.528).abs() < 0.001);
        let instead = figures.instead.unwrap();
        assert!(
            instead.false_fail <= 0.05 && instead.false_pass <= 0.05,
            "{instead:?}"
        );
        assert!(instead.samples_at_good > 5.0, "{instead:?}");
    }

    #[test]
    fn a_reliability_gate_is_judged_at_its_own_rates() {
        let gate = Sequential::new(Reliability::default()).unwrap();
        let figures = explain(
            &Gate::Reliability(gate),
            &Reliability {
                good: 0.99,
                bad: 0.5,
                ..Reliability::default()
            },
        );
        assert_eq!((figures.good, figures.bad), (0.95, 0.80));
        assert!(figures.false_fail <= 0.05 && figures.false_pass <= 0.05);
        assert!(figures.instead.is_none());
    }

    #[test]
    fn a_suite_of_two_hundred_at_five_percent_fails_about_ten_good_cases() {
        // 1/1 at good = 0.95 fails 5% of the time.
        let one = explain(
            &Gate::Ratio(KOfN { need: 1, of: 1 }),
            &Reliability::default(),
        );
        let suite = vec![one; 200];
        assert!((expected_false_failures(&suite) - 10.0).abs() < 1e-9);
    }
}
