//! What a fixed `k/n` gate (`success_ratio`) does: its operating characteristic (the
//! chance it passes an agent whose samples pass with probability `p`) and how many
//! samples it takes on average with Prill's early stop.

use crate::Outcomes;
use crate::binomial::{binomial_tail, solve_rising};

/// A fixed gate: at least `need` of `of` samples pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KOfN {
    /// How many must pass.
    pub need: u32,
    /// How many run at most.
    pub of: u32,
}

impl KOfN {
    /// The chance the gate passes when each sample passes with probability `p`:
    /// `P[X >= need]`, `X ~ Binomial(of, p)`.
    pub fn pass_probability(&self, p: f64) -> f64 {
        binomial_tail(self.of, self.need, p)
    }

    /// Pass and fail probabilities and the expected samples with Prill's early stop,
    /// when no sample errors: a unit stops once `need` passes are in, or once more
    /// than `of - need` samples failed. The verdict is that of all `of` samples.
    pub fn outcomes(&self, p: f64) -> Outcomes {
        let p = p.clamp(0.0, 1.0);
        let (need, of) = (self.need.min(self.of), self.of);
        let allowed_failures = of - need;
        // mass[s] after n samples, with s passes, for the units still running.
        let mut mass = vec![1.0_f64];
        let (mut pass, mut fail, mut samples) = (0.0, 0.0, 0.0);
        if need == 0 {
            return Outcomes {
                pass: 1.0,
                fail: 0.0,
                inconclusive: 0.0,
                expected_samples: 0.0,
            };
        }
        for n in 1..=of {
            let mut next = vec![0.0_f64; n as usize + 1];
            for (s, m) in mass.iter().enumerate() {
                if *m > 0.0 {
                    next[s + 1] += m * p;
                    next[s] += m * (1.0 - p);
                }
            }
            for (s, m) in next.iter_mut().enumerate() {
                let failures = n - s as u32;
                if s as u32 >= need {
                    pass += *m;
                } else if failures > allowed_failures {
                    fail += *m;
                } else {
                    continue;
                }
                samples += *m * f64::from(n);
                *m = 0.0;
            }
            mass = next;
        }
        Outcomes {
            pass,
            fail,
            inconclusive: 0.0,
            expected_samples: samples,
        }
    }

    /// The rate `p` at which the gate passes with probability `chance`.
    pub fn rate_passing_with(&self, chance: f64) -> f64 {
        solve_rising(|p| self.pass_probability(p), chance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operating_characteristic_is_the_binomial_tail() {
        // The table of docs/statistics.md.
        let four_of_five = KOfN { need: 4, of: 5 };
        for (p, expected) in [
            (0.5, 0.19),
            (0.7, 0.53),
            (0.8, 0.74),
            (0.9, 0.92),
            (0.95, 0.98),
        ] {
            let got = four_of_five.pass_probability(p);
            assert!((got - expected).abs() < 0.005, "4/5 at {p}: {got}");
        }
        let nine = KOfN { need: 9, of: 10 };
        assert!((nine.pass_probability(0.7) - 0.149).abs() < 0.001);
    }

    #[test]
    fn early_stop_never_changes_the_pass_probability_and_saves_samples() {
        for (need, of) in [(1, 1), (4, 5), (9, 10), (45, 50), (3, 3)] {
            let gate = KOfN { need, of };
            for p in [0.0, 0.3, 0.5, 0.8, 0.95, 1.0] {
                let o = gate.outcomes(p);
                assert!(
                    (o.pass - gate.pass_probability(p)).abs() < 1e-9,
                    "{need}/{of} at {p}"
                );
                assert!((o.pass + o.fail - 1.0).abs() < 1e-9);
                assert!(o.expected_samples <= f64::from(of) + 1e-9);
            }
        }
        // 1/1 always takes one sample; 3/3 at p = 0.5 takes 1 + 0.5 + 0.25.
        assert!((KOfN { need: 1, of: 1 }.outcomes(0.5).expected_samples - 1.0).abs() < 1e-12);
        assert!((KOfN { need: 3, of: 3 }.outcomes(0.5).expected_samples - 1.75).abs() < 1e-12);
    }

    #[test]
    fn the_rate_a_gate_passes_at_is_found() {
        let gate = KOfN { need: 4, of: 5 };
        let p = gate.rate_passing_with(0.5);
        assert!((gate.pass_probability(p) - 0.5).abs() < 1e-9);
    }
}
