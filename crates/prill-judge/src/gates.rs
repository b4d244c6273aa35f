//! Gates on a [`Calibration`]: the least agreement and the most false passes and false
//! fails a judge may show, so that `prill judge check` can fail CI when the judge drifts.
//!
//! ```
//! use prill_judge::gates::Gates;
//! use prill_judge::Calibration;
//!
//! let calibration = Calibration {
//!     total: 10, agreed: 8, false_pass: 1, false_fail: 1,
//!     expected_pass: 5, expected_fail: 5,
//!     ..Calibration::default()
//! };
//! let gates = Gates { min_agreement: Some(0.9), max_false_pass: Some(0.2), ..Gates::default() };
//! let missed = gates.missed(&calibration);
//! assert_eq!(missed.len(), 1);
//! assert_eq!(missed[0].to_string(), "agreement 80.0% is below --min-agreement 90.0%");
//! ```

use std::fmt;

use crate::calibrate::Calibration;

/// The rates a calibration must meet; `None` sets no gate. Each is a rate in `0..=1`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// The least agreement.
    pub min_agreement: Option<f64>,
    /// The most false passes, over the items labeled fail.
    pub max_false_pass: Option<f64>,
    /// The most false fails, over the items labeled pass.
    pub max_false_fail: Option<f64>,
}

/// A gate a calibration missed.
#[derive(Debug, Clone, PartialEq)]
pub struct Missed {
    /// The flag that set the gate (`--min-agreement`, ...).
    pub flag: &'static str,
    /// What the rate measures (`agreement`, ...).
    pub rate: &'static str,
    /// The rate found; `None` when the set has no item to measure it on.
    pub found: Option<f64>,
    /// The gate.
    pub limit: f64,
    /// Whether the rate must be at least the limit (else at most).
    pub at_least: bool,
}

impl fmt::Display for Missed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = percent(self.limit);
        match self.found {
            Some(found) => {
                let side = if self.at_least { "below" } else { "above" };
                write!(
                    f,
                    "{} {} is {side} {} {limit}",
                    self.rate,
                    percent(found),
                    self.flag
                )
            }
            None => write!(
                f,
                "{} cannot be measured (the set has no item it counts over), so {} {limit} is not met",
                self.rate, self.flag
            ),
        }
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// Why a gate's value was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{0}` is not a rate: give a number from 0 to 1 (0.9 for 90%)")]
pub struct RateError(pub String);

/// Reads a rate: a number from 0 to 1.
pub fn parse_rate(text: &str) -> Result<f64, RateError> {
    match text.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(RateError(text.to_owned())),
    }
}

impl Gates {
    /// Whether any gate is set.
    pub fn any(&self) -> bool {
        self.min_agreement.is_some()
            || self.max_false_pass.is_some()
            || self.max_false_fail.is_some()
    }

    /// The gates `calibration` missed, in the order agreement, false pass, false fail.
    /// A rate the set cannot measure (no item labeled fail, for the false-pass rate)
    /// misses its gate.
    pub fn missed(&self, calibration: &Calibration) -> Vec<Missed> {
        let checks = [
            (
                self.min_agreement,
                "--min-agreement",
                "agreement",
                calibration.agreement_rate(),
                true,
            ),
            (
                self.max_false_pass,
                "--max-false-pass",
                "the false-pass rate",
                calibration.false_pass_rate(),
                false,
            ),
            (
                self.max_false_fail,
                "--max-false-fail",
                "the false-fail rate",
                calibration.false_fail_rate(),
                false,
            ),
        ];
        checks
            .into_iter()
            .filter_map(|(limit, flag, rate, found, at_least)| {
                let limit = limit?;
                let met = found.is_some_and(|f| if at_least { f >= limit } else { f <= limit });
                (!met).then_some(Missed {
                    flag,
                    rate,
                    found,
                    limit,
                    at_least,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(agreed: usize, false_pass: usize, false_fail: usize) -> Calibration {
        Calibration {
            total: 20,
            agreed,
            false_pass,
            false_fail,
            expected_pass: 10,
            expected_fail: 10,
            ..Calibration::default()
        }
    }

    #[test]
    fn each_gate_is_met_at_its_limit_and_missed_past_it() {
        let gates = Gates {
            min_agreement: Some(0.9),
            max_false_pass: Some(0.1),
            max_false_fail: Some(0.1),
        };
        assert!(gates.missed(&calibration(18, 1, 1)).is_empty());
        let missed = gates.missed(&calibration(17, 2, 1));
        let flags: Vec<_> = missed.iter().map(|m| m.flag).collect();
        assert_eq!(flags, ["--min-agreement", "--max-false-pass"]);
        assert_eq!(
            missed[1].to_string(),
            "the false-pass rate 20.0% is above --max-false-pass 10.0%"
        );
        let missed = gates.missed(&calibration(17, 1, 2));
        assert_eq!(missed[1].flag, "--max-false-fail");
        assert!(Gates::default().missed(&calibration(0, 10, 10)).is_empty());
    }

    #[test]
    fn a_rate_that_cannot_be_measured_misses_its_gate() {
        let gates = Gates {
            max_false_pass: Some(0.5),
            ..Gates::default()
        };
        let only_passes = Calibration {
            total: 3,
            agreed: 3,
            expected_pass: 3,
            ..Calibration::default()
        };
        let missed = gates.missed(&only_passes);
        assert_eq!(missed.len(), 1);
        assert!(
            missed[0].to_string().contains("cannot be measured"),
            "{}",
            missed[0]
        );
    }

    #[test]
    fn rates_run_from_zero_to_one() {
        assert_eq!(parse_rate("0.95"), Ok(0.95));
        assert_eq!(parse_rate("0"), Ok(0.0));
        assert_eq!(parse_rate("1"), Ok(1.0));
        for bad in ["1.5", "-0.1", "90%", "NaN", "x"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_rate("90%").unwrap_err().to_string(),
            "`90%` is not a rate: give a number from 0 to 1 (0.9 for 90%)"
        );
    }
}
