//! How well a judge agrees with labels: Cohen's κ (agreement beyond what chance gives),
//! sensitivity and specificity; and a pass rate the judge measured, corrected for its
//! errors (Rogan and Gladen, 1978) with an interval that carries the uncertainty of the
//! calibration too ([`corrected_rate`]).
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

use serde::{Deserialize, Serialize};

/// Labels against a judge's verdicts: `label_verdict` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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

/// Rogan–Gladen: the true pass rate behind an `observed` one, for a judge that passes
/// a true pass with probability `sensitivity` and fails a true failure with
/// probability `specificity`: `(observed + specificity − 1) / (sensitivity +
/// specificity − 1)`, clipped to `[0, 1]`. `None` when the judge is no better than a
/// coin (`sensitivity + specificity <= 1`): its verdicts say nothing to correct.
pub fn rogan_gladen(observed: f64, sensitivity: f64, specificity: f64) -> Option<f64> {
    let youden = sensitivity + specificity - 1.0;
    (youden > 0.0).then(|| ((observed + specificity - 1.0) / youden).clamp(0.0, 1.0))
}

/// A corrected pass rate and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Corrected {
    /// The Rogan–Gladen estimate.
    pub rate: f64,
    /// The 2.5th percentile of the bootstrap.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
}

/// The pass rate behind `passed` of `judged` verdicts of a judge calibrated as
/// `calibration`, with a 95% interval from a seeded parametric bootstrap that redraws
/// the observed rate, the sensitivity and the specificity from their own counts, so the
/// interval is as wide as both the run and the calibration warrant. `None` without
/// verdicts, or when the calibration has no item of one label or says the judge is no
/// better than a coin.
pub fn corrected_rate(
    passed: u64,
    judged: u64,
    calibration: &Confusion,
    resamples: usize,
    seed: u64,
) -> Option<Corrected> {
    let positives = calibration.pass_pass + calibration.pass_fail;
    let negatives = calibration.fail_pass + calibration.fail_fail;
    if judged == 0 || positives == 0 || negatives == 0 {
        return None;
    }
    let observed = passed as f64 / judged as f64;
    let rate = rogan_gladen(
        observed,
        calibration.sensitivity()?,
        calibration.specificity()?,
    )?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut draws: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            let p = draw(&mut rng, judged, observed);
            let se = draw(&mut rng, positives, calibration.sensitivity()?);
            let sp = draw(&mut rng, negatives, calibration.specificity()?);
            // A resample where the judge looks no better than a coin says the rate
            // could be anything.
            Some(rogan_gladen(p, se, sp).unwrap_or(f64::NAN))
        })
        .map(|r| if r.is_nan() { 0.5 } else { r })
        .collect();
    if draws.is_empty() {
        return None;
    }
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (draws.len() - 1) as f64).round() as usize).min(draws.len() - 1)];
    Some(Corrected {
        rate,
        low: at(0.025).min(rate),
        high: at(0.975).max(rate),
    })
}

/// A share of `n` Bernoulli(`p`) draws: exact up to 1,000, a normal approximation
/// beyond.
fn draw(rng: &mut fastrand::Rng, n: u64, p: f64) -> f64 {
    if n <= 1000 {
        (0..n).filter(|_| rng.f64() < p).count() as f64 / n as f64
    } else {
        // Box–Muller.
        let z =
            (-2.0 * (1.0 - rng.f64()).ln()).sqrt() * (2.0 * std::f64::consts::PI * rng.f64()).cos();
        (p + z * (p * (1.0 - p) / n as f64).sqrt()).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rogan_gladen_undoes_a_known_judge_s_errors() {
        // A true rate of 0.6 seen through sensitivity 0.9 and specificity 0.8:
        // 0.6 * 0.9 + 0.4 * 0.2 = 0.62 observed.
        let r = rogan_gladen(0.62, 0.9, 0.8).unwrap();
        assert!((r - 0.6).abs() < 1e-12, "{r}");
        assert_eq!(rogan_gladen(0.5, 0.5, 0.5), None);
        assert_eq!(rogan_gladen(0.99, 0.9, 0.8), Some(1.0));
    }

    #[test]
    fn the_corrected_interval_widens_with_a_smaller_calibration() {
        let big = Confusion {
            pass_pass: 900,
            pass_fail: 100,
            fail_pass: 200,
            fail_fail: 800,
        };
        let small = Confusion {
            pass_pass: 9,
            pass_fail: 1,
            fail_pass: 2,
            fail_fail: 8,
        };
        let wide = corrected_rate(620, 1000, &small, 2000, 7).unwrap();
        let narrow = corrected_rate(620, 1000, &big, 2000, 7).unwrap();
        assert!((narrow.rate - 0.6).abs() < 1e-9 && (wide.rate - 0.6).abs() < 1e-9);
        assert!(narrow.low < 0.6 && 0.6 < narrow.high);
        assert!(
            wide.high - wide.low > 2.0 * (narrow.high - narrow.low),
            "{wide:?} {narrow:?}"
        );
        // Seeded: the same every time.
        assert_eq!(corrected_rate(620, 1000, &small, 2000, 7), Some(wide));
        assert_eq!(corrected_rate(0, 0, &big, 10, 1), None);
    }

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
