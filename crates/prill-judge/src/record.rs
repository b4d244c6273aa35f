//! Calibrations on record: `prill judge check --record` keeps each judge's measured
//! agreement with a labeled set in `prill-judge-calibration.json` beside `prill.toml`
//! (committed, so that CI reads the same record), and `[judge] min_kappa` holds the
//! run's judge to it: below the minimum, or with no record for this judge and its
//! votes, every gist check errors ([`Refusing`]) rather than pass or fail on a judge
//! nobody has measured.
//!
//! ```
//! use prill_judge::record::{OnRecord, Records, refusal};
//!
//! let mut records = Records::default();
//! records.judges.insert("openai:gpt-4o-mini".into(), OnRecord {
//!     votes: 1, kappa: Some(0.52), sensitivity: Some(0.9), specificity: Some(0.6),
//!     confusion: Default::default(),
//!     judged: 40, agreed: 31, set: "the built-in labeled set".into(), checked_on: "2026-11-29".into(),
//! });
//! let why = refusal(&records, "openai:gpt-4o-mini", 1, 0.6).unwrap();
//! assert!(why.contains("κ = 0.52"));
//! assert!(refusal(&records, "openai:gpt-4o-mini", 1, 0.5).is_none());
//! assert!(refusal(&records, "openai:gpt-4o", 1, 0.5).unwrap().contains("no calibration on record"));
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use prill_check::{BoxFuture, Judge, JudgeError, JudgeVerdict};
use prill_stats::agreement::Confusion;
use serde::{Deserialize, Serialize};

/// The record's file name, beside `prill.toml`.
pub const RECORD_FILE: &str = "prill-judge-calibration.json";

/// The version of the record's format.
pub const RECORD_VERSION: u32 = 1;

/// The most the record may hold.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// Every judge's newest calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Records {
    /// The version of this format: 1.
    pub schema_version: u32,
    /// By judge, as `prill judge check` names it (`openai:gpt-4o-mini`).
    pub judges: BTreeMap<String, OnRecord>,
}

impl Default for Records {
    fn default() -> Records {
        Records {
            schema_version: RECORD_VERSION,
            judges: BTreeMap::new(),
        }
    }
}

/// One judge's calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnRecord {
    /// The votes it took per verdict.
    pub votes: u32,
    /// Cohen's κ against the labels, when it can be figured.
    pub kappa: Option<f64>,
    /// How often it passed what was labeled pass.
    pub sensitivity: Option<f64>,
    /// How often it failed what was labeled fail.
    pub specificity: Option<f64>,
    /// The labels against its verdicts, which correct a pass rate it measured
    /// (`prill_stats::agreement::corrected_rate`).
    pub confusion: Confusion,
    /// The items it judged (errors left out).
    pub judged: u64,
    /// The items it agreed on.
    pub agreed: u64,
    /// The labeled set.
    pub set: String,
    /// The day of the calibration, `YYYY-MM-DD`.
    pub checked_on: String,
}

/// Why the record cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// It could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a record this Prill reads.
    #[error("{path}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}

impl Records {
    /// The records in `path`; none when there is no such file.
    pub fn read(path: &Path) -> Result<Records, RecordError> {
        let shown = path.display().to_string();
        let io = |source| RecordError::Io {
            path: shown.clone(),
            source,
        };
        let invalid = |why: String| RecordError::Invalid {
            path: shown.clone(),
            why,
        };
        let meta = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Records::default()),
            Err(e) => return Err(io(e)),
            Ok(meta) => meta,
        };
        if !meta.is_file() || meta.len() > MAX_RECORD_BYTES {
            return Err(invalid(format!(
                "not a regular file of at most {MAX_RECORD_BYTES} bytes"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let records: Records = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if records.schema_version > RECORD_VERSION {
            return Err(invalid(format!(
                "schema_version {} is newer than this Prill reads ({RECORD_VERSION}); update Prill",
                records.schema_version
            )));
        }
        Ok(records)
    }

    /// Writes the records to `path` whole (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<(), RecordError> {
        let io = |source| RecordError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text).map_err(io)?;
        std::fs::rename(&partial, path).map_err(io)
    }
}

/// Why gist checks judged by `judge` (with `votes`) must error under `min_kappa`, or
/// `None` when its record meets it.
pub fn refusal(records: &Records, judge: &str, votes: u32, min_kappa: f64) -> Option<String> {
    let record = records.judges.get(judge).filter(|r| r.votes == votes);
    match record {
        None => Some(format!(
            "the judge {judge} ({votes} vote{}) has no calibration on record, and [judge] min_kappa = {min_kappa} asks for one: run `prill judge check --record`",
            if votes == 1 { "" } else { "s" }
        )),
        Some(r) => match r.kappa {
            Some(k) if k >= min_kappa => None,
            Some(k) => Some(format!(
                "the judge {judge} has κ = {k:.2} on record ({} of {} agreed on {}, {}), below [judge] min_kappa = {min_kappa}: its verdicts would not say much",
                r.agreed, r.judged, r.set, r.checked_on
            )),
            None => Some(format!(
                "the judge {judge}'s calibration on record ({}, {}) has no κ (a set labeled all one way, or nothing judged), and [judge] min_kappa = {min_kappa} asks for one",
                r.set, r.checked_on
            )),
        },
    }
}

/// A judge that answers every call with the same error: what a gist check gets when
/// its judge is held back by [`refusal`].
pub struct Refusing {
    /// Why.
    pub reason: String,
}

impl Judge for Refusing {
    fn judge<'a>(
        &'a self,
        _sample: &'a str,
        _criteria: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(async move { Err(JudgeError::new(self.reason.clone())) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FILE);
        assert_eq!(Records::read(&path).unwrap(), Records::default());
        let mut records = Records::default();
        records.judges.insert(
            "j".into(),
            OnRecord {
                votes: 3,
                kappa: Some(0.8),
                sensitivity: None,
                specificity: None,
                confusion: Confusion::default(),
                judged: 10,
                agreed: 9,
                set: "s".into(),
                checked_on: "2026-11-29".into(),
            },
        );
        records.write(&path).unwrap();
        assert_eq!(Records::read(&path).unwrap(), records);
        // The votes are part of the judge: one vote has no record.
        assert!(refusal(&records, "j", 1, 0.5).is_some());
        assert!(refusal(&records, "j", 3, 0.5).is_none());
        std::fs::write(&path, r#"{"schema_version": 9, "judges": {}}"#).unwrap();
        assert!(
            Records::read(&path)
                .unwrap_err()
                .to_string()
                .contains("update Prill")
        );
    }
}
