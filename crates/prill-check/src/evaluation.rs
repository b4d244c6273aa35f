//! The verdict model, as the Autoblocks testing SDK defines it: a score in `0..=1`, an
//! optional [`Threshold`] that says which scores pass, and metadata.

use serde::{Deserialize, Serialize};

use crate::status::Status;

/// The range a score must fall in to pass. Every bound that is set must hold.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Threshold {
    /// The score must be less than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    /// The score must be less than or equal to this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lte: Option<f64>,
    /// The score must be greater than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<f64>,
    /// The score must be greater than or equal to this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gte: Option<f64>,
}

impl Threshold {
    /// `gte: 1`: the threshold of every pass/fail check.
    pub fn all_or_nothing() -> Threshold {
        Threshold {
            gte: Some(1.0),
            ..Threshold::default()
        }
    }

    /// Whether `score` satisfies every bound that is set.
    pub fn holds(&self, score: f64) -> bool {
        self.lt.is_none_or(|b| score < b)
            && self.lte.is_none_or(|b| score <= b)
            && self.gt.is_none_or(|b| score > b)
            && self.gte.is_none_or(|b| score >= b)
    }
}

/// The outcome of one evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// A number from 0 to 1.
    pub score: f64,
    /// Which scores pass; without one the check is neither passed nor failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Threshold>,
    /// Context, typically why the evaluation failed.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

impl Evaluation {
    /// A score with no threshold and no metadata.
    pub fn score(score: f64) -> Evaluation {
        Evaluation {
            score: score.clamp(0.0, 1.0),
            threshold: None,
            metadata: serde_json::Map::new(),
        }
    }

    /// A pass/fail evaluation: score 1 or 0, threshold `gte: 1`.
    pub fn pass_fail(passed: bool) -> Evaluation {
        Evaluation {
            score: if passed { 1.0 } else { 0.0 },
            threshold: Some(Threshold::all_or_nothing()),
            metadata: serde_json::Map::new(),
        }
    }

    /// Sets the threshold.
    pub fn with_threshold(mut self, threshold: Threshold) -> Evaluation {
        self.threshold = Some(threshold);
        self
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> Evaluation {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }

    /// Passed, failed, or unscored when there is no threshold.
    pub fn status(&self) -> Status {
        match &self.threshold {
            None => Status::Unscored,
            Some(t) if t.holds(self.score) => Status::Passed,
            Some(_) => Status::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_that_is_set_must_hold() {
        let t = Threshold {
            gte: Some(0.4),
            lt: Some(0.6),
            ..Threshold::default()
        };
        assert!(t.holds(0.4));
        assert!(t.holds(0.59));
        assert!(!t.holds(0.6));
        assert!(!t.holds(0.39));
        let t = Threshold {
            gt: Some(0.5),
            lte: Some(0.7),
            ..Threshold::default()
        };
        assert!(!t.holds(0.5));
        assert!(t.holds(0.7));
        assert!(!t.holds(0.71));
        assert!(
            Threshold::default().holds(0.0),
            "no bound, nothing to break"
        );
    }

    #[test]
    fn status_follows_the_threshold() {
        assert_eq!(Evaluation::pass_fail(true).status(), Status::Passed);
        assert_eq!(Evaluation::pass_fail(false).status(), Status::Failed);
        assert_eq!(Evaluation::score(0.5).status(), Status::Unscored);
        let e = Evaluation::score(0.5).with_threshold(Threshold {
            lt: Some(0.6),
            ..Threshold::default()
        });
        assert_eq!(e.status(), Status::Passed);
    }

    #[test]
    fn serializes_like_the_sdk() {
        let e = Evaluation::pass_fail(false).with("reason", "missing");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"score": 0.0, "threshold": {"gte": 1.0}, "metadata": {"reason": "missing"}})
        );
    }
}
