//! A run read back from a file: a run kept in the history (`.prill/runs/<id>.jsonl`),
//! a `--jsonl` stream, or a JSON report (`--json`). `prill compare`, `prill report
//! --from`, `prill report merge` and the history's index all read runs through
//! [`StoredRun::read`], so they agree on what a file holds.
//!
//! A JSON Lines file may end in the middle of a line (a run killed while writing): that
//! last, unfinished line is dropped and [`StoredRun::torn`] says so. A line that does not
//! parse anywhere else is an error naming its line, and so is a document of a newer
//! `schema_version` than this Prill reads.
//!
//! ```
//! use prill_report::stored::StoredRun;
//!
//! let text = concat!(
//!     r#"{"schema_version":1,"event":"run_started","units":2}"#, "\n",
//!     r#"{"schema_version":1,"event":"unit_sta"#,
//! );
//! let run = StoredRun::parse(text)?;
//! assert_eq!(run.planned, Some(2));
//! assert!(run.torn && !run.finished());
//! # Ok::<(), prill_report::stored::StoredError>(())
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::format::{Line, Record, Report, RunInfo, SCHEMA_VERSION, Summary, Unit};

/// A run as a file holds it.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct StoredRun {
    /// The run's `run` line (a run kept in the history); a `--jsonl` stream or a JSON
    /// report has none.
    pub info: Option<RunInfo>,
    /// How many units the run planned (`run_started`), when the file says.
    pub planned: Option<u64>,
    /// Every unit that finished, in the order it finished.
    pub units: Vec<Unit>,
    /// The run's totals (`run_finished`); `None` when the run never finished (it was
    /// killed, or is still running).
    pub summary: Option<Summary>,
    /// Every record of a JSON Lines file, in order (a JSON report has none): what
    /// rebuilds the run's events.
    pub lines: Vec<Line>,
    /// Whether the file ended in the middle of a line, dropped.
    pub torn: bool,
}

/// Why a stored run could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoredError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line (or the whole JSON report) is not of the report format.
    #[error("{path}line {line}: not a record of Prill's report format: {message}")]
    Parse {
        /// The file, with `: ` after it, when known.
        path: String,
        /// The line, from 1 (1 for a JSON report).
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// The file was written by a newer Prill, in a format this one does not read.
    #[error(
        "{path}line {line}: schema_version {found} is newer than this Prill reads ({SCHEMA_VERSION}); update Prill"
    )]
    Newer {
        /// The file, with `: ` after it, when known.
        path: String,
        /// The line, from 1.
        line: usize,
        /// The version found.
        found: u64,
    },
    /// The file holds nothing of a run.
    #[error("{path}: the file is empty; no run was written to it")]
    Empty {
        /// The file.
        path: String,
    },
}

impl StoredRun {
    /// Reads the run in the file at `path`: JSON Lines or a JSON report.
    pub fn read(path: &Path) -> Result<StoredRun, StoredError> {
        let text = std::fs::read_to_string(path).map_err(|source| StoredError::Io {
            path: path.to_owned(),
            source,
        })?;
        StoredRun::parse(&text).map_err(|e| e.in_file(path))
    }

    /// The run in `text`: JSON Lines (a history file or a `--jsonl` stream), or a JSON
    /// report, told apart by their first record.
    pub fn parse(text: &str) -> Result<StoredRun, StoredError> {
        if text.trim().is_empty() {
            return Err(StoredError::Empty {
                path: String::new(),
            });
        }
        if let Some(report) = as_report(text)? {
            return Ok(StoredRun::from(report));
        }
        let mut run = StoredRun::default();
        let count = text.lines().count();
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let last_unended = i + 1 == count && !text.ends_with('\n');
            let line = match parse_line(raw, i + 1) {
                Ok(line) => line,
                Err(_) if last_unended => {
                    run.torn = true;
                    break;
                }
                Err(e) => return Err(e),
            };
            run.take(line);
        }
        Ok(run)
    }

    /// Whether the run finished: its file ends with `run_finished` (a JSON report
    /// always has its summary).
    pub fn finished(&self) -> bool {
        self.summary.is_some()
    }

    fn take(&mut self, line: Line) {
        match &line.record {
            Record::Run(info) => self.info = Some(info.clone()),
            Record::RunStarted { units } => self.planned = Some(*units),
            Record::UnitFinished(unit) => self.units.push(unit.clone()),
            Record::RunFinished(summary) => self.summary = Some(*summary),
            _ => {}
        }
        self.lines.push(line);
    }
}

impl From<Report> for StoredRun {
    fn from(report: Report) -> StoredRun {
        StoredRun {
            // Every unit is in the report, those that never ran as skipped.
            planned: Some(report.units.len() as u64),
            units: report.units,
            summary: Some(report.summary),
            ..StoredRun::default()
        }
    }
}

impl StoredError {
    /// The error of [`StoredRun::parse`] on the text of the file at `path`, naming it.
    pub fn in_file(self, path: &Path) -> StoredError {
        let named = format!("{}: ", path.display());
        match self {
            StoredError::Parse { line, message, .. } => StoredError::Parse {
                path: named,
                line,
                message,
            },
            StoredError::Newer { line, found, .. } => StoredError::Newer {
                path: named,
                line,
                found,
            },
            StoredError::Empty { .. } => StoredError::Empty {
                path: path.display().to_string(),
            },
            e @ StoredError::Io { .. } => e,
        }
    }
}

/// The JSON report in `text`, when it is one: a single JSON document with `summary`
/// and `units` (a JSON Lines file's records each have `event`).
fn as_report(text: &str) -> Result<Option<Report>, StoredError> {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    if value.get("event").is_some() || value.get("units").is_none() {
        return Ok(None);
    }
    newer(&value, 1)?;
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| StoredError::Parse {
            path: String::new(),
            line: 1,
            message: e.to_string(),
        })
}

fn parse_line(raw: &str, line: usize) -> Result<Line, StoredError> {
    let parse = |message: String| StoredError::Parse {
        path: String::new(),
        line,
        message,
    };
    let value: Value = serde_json::from_str(raw).map_err(|e| parse(e.to_string()))?;
    newer(&value, line)?;
    serde_json::from_value(value).map_err(|e| parse(e.to_string()))
}

/// An error when `value`'s `schema_version` is newer than [`SCHEMA_VERSION`].
fn newer(value: &Value, line: usize) -> Result<(), StoredError> {
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(found) if found > u64::from(SCHEMA_VERSION) => Err(StoredError::Newer {
            path: String::new(),
            line,
            found,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STARTED: &str = r#"{"schema_version":1,"event":"run_started","units":1}"#;
    const FINISHED: &str = r#"{"schema_version":1,"event":"run_finished","passed":0,"failed":0,"errored":0,"skipped":1,"cancelled":false,"duration":0.5}"#;

    #[test]
    fn a_finished_stream_has_its_summary() {
        let run = StoredRun::parse(&format!("{STARTED}\n{FINISHED}\n")).unwrap();
        assert!(run.finished() && !run.torn);
        assert_eq!(run.lines.len(), 2);
        assert_eq!(run.summary.unwrap().skipped, 1);
    }

    #[test]
    fn a_bad_line_before_the_end_is_an_error_naming_it() {
        let e = StoredRun::parse(&format!("{STARTED}\nnot json\n{FINISHED}\n")).unwrap_err();
        assert!(matches!(e, StoredError::Parse { line: 2, .. }), "{e}");
        // Even the last line, once it ended with a newline, was written whole.
        let e = StoredRun::parse(&format!("{STARTED}\n{{\"sch\n")).unwrap_err();
        assert!(matches!(e, StoredError::Parse { line: 2, .. }), "{e}");
    }

    #[test]
    fn a_newer_format_asks_for_a_newer_prill() {
        let newer = STARTED.replace(":1,", ":2,");
        let e = StoredRun::parse(&format!("{newer}\n")).unwrap_err();
        assert!(e.to_string().contains("update Prill"), "{e}");
    }

    #[test]
    fn a_json_report_is_a_finished_run() {
        let report = r#"{"schema_version":1,"summary":{"passed":0,"failed":0,"errored":0,"skipped":0,"cancelled":false,"duration":0.0},"units":[]}"#;
        let run = StoredRun::parse(report).unwrap();
        assert!(run.finished() && run.lines.is_empty() && run.info.is_none());
        let e = StoredRun::parse("  \n").unwrap_err();
        assert!(matches!(e, StoredError::Empty { .. }));
    }
}
