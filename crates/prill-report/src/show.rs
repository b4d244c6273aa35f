//! Transcripts from a saved JSON report (`prill show REPORT.json [CASE]`): read the
//! report, pick the units, and print each one's line and the transcript of its first
//! failing sample, as `--show-transcript` prints them during a run.
//!
//! Without a case, every unit that failed or errored is shown. A case is matched
//! against each unit's case id and name, exactly first; when nothing matches exactly,
//! as a part of the id, the name or `file::name` (ignoring case). A unit that passed
//! shows its first sample.
//!
//! ```
//! use prill_report::show;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("report.json");
//! std::fs::write(&path, r#"{"schema_version": 1, "summary": {"passed": 0, "failed": 0,
//!     "errored": 0, "skipped": 0, "cancelled": false, "duration": 0.0}, "units": []}"#)?;
//! let report = show::read(&path)?;
//! assert!(show::select(&report, None)?.is_empty());
//! let err = show::select(&report, Some("greets")).unwrap_err();
//! assert!(err.to_string().contains("no case matches `greets`"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::format::{Report, Status, Unit};
use crate::transcript::{first_failing_saved, render_saved};

/// Why there is nothing to show.
#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    /// The report could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The report's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a JSON report of Prill's.
    #[error(
        "{} is not a Prill JSON report ({source}); write one with `prill run --json {}`",
        path.display(),
        path.display()
    )]
    Parse {
        /// The report's path.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// No unit matches the case asked for.
    #[error("no case matches `{case}`{}", hint(suggestion.as_deref(), cases))]
    NoMatch {
        /// What was asked for.
        case: String,
        /// The closest case name, if one is close.
        suggestion: Option<String>,
        /// Every case name in the report, sorted, each once.
        cases: Vec<String>,
    },
}

fn hint(suggestion: Option<&str>, cases: &[String]) -> String {
    if let Some(s) = suggestion {
        return format!("; did you mean `{s}`?");
    }
    match cases.len() {
        0 => "; the report has no cases".to_owned(),
        1..=10 => format!("; the report has: {}", cases.join(", ")),
        n => format!("; the report has {n} cases (`prill list` names them)"),
    }
}

/// Reads the JSON report at `path`.
pub fn read(path: &Path) -> Result<Report, ShowError> {
    let text = std::fs::read_to_string(path).map_err(|source| ShowError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ShowError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// The units to show: those matching `case`, or without one every unit that failed or
/// errored (possibly none), in the report's order.
pub fn select<'a>(report: &'a Report, case: Option<&str>) -> Result<Vec<&'a Unit>, ShowError> {
    let Some(case) = case else {
        return Ok(report
            .units
            .iter()
            .filter(|u| matches!(u.verdict, Status::Failed | Status::Errored))
            .collect());
    };
    let exact: Vec<&Unit> = report
        .units
        .iter()
        .filter(|u| u.unit.case_id == case || u.unit.name == case)
        .collect();
    if !exact.is_empty() {
        return Ok(exact);
    }
    let wanted = case.to_lowercase();
    let part: Vec<&Unit> = report
        .units
        .iter()
        .filter(|u| {
            [
                u.unit.case_id.clone(),
                u.unit.name.clone(),
                format!("{}::{}", u.unit.file, u.unit.name),
            ]
            .iter()
            .any(|s| s.to_lowercase().contains(&wanted))
        })
        .collect();
    if !part.is_empty() {
        return Ok(part);
    }
    let mut cases: Vec<String> = report.units.iter().map(|u| u.unit.name.clone()).collect();
    cases.sort();
    cases.dedup();
    let suggestion = cases
        .iter()
        .map(|name| (strsim::jaro_winkler(&name.to_lowercase(), &wanted), name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name.clone());
    Err(ShowError::NoMatch {
        case: case.to_owned(),
        suggestion,
        cases,
    })
}

/// Each unit's line (`FAIL [0.52s] file::case [http] 1 passed, 2 failed (need 2/3)`)
/// and the transcript of its first failing sample (of its first sample when every
/// sample passed), a blank line between units.
pub fn render(units: &[&Unit]) -> String {
    let mut out = String::new();
    for (n, unit) in units.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", unit_line(unit));
        let sample =
            first_failing_saved(unit).or_else(|| unit.samples.iter().min_by_key(|s| s.index));
        match sample {
            Some(sample) => out.push_str(&render_saved(sample, Path::new(&unit.unit.file))),
            None => out.push_str("no sample ran\n"),
        }
    }
    out
}

/// `FAIL [0.52s] file::case [http] 1 passed, 2 failed (need 2/3)`, as the human
/// reporter writes a unit's line.
fn unit_line(unit: &Unit) -> String {
    let word = match unit.verdict {
        Status::Passed => "PASS",
        Status::Failed => "FAIL",
        Status::Errored => "ERROR",
        Status::Inconclusive => "INCONCLUSIVE",
        Status::Skipped | Status::Unscored => "SKIP",
    };
    let tally = &unit.tally;
    let ran = tally.passed + tally.failed + tally.errored;
    let gate = match (&unit.success_ratio, &unit.reliability) {
        (_, Some(r)) => crate::digest::GateText::Reliability(
            prill_spec::model::gate::Gate::Reliability((*r).into()).to_string(),
        ),
        (ratio, None) => {
            let text = ratio.clone().unwrap_or_default();
            crate::digest::GateText::Ratio {
                of: text
                    .split_once('/')
                    .and_then(|(_, n)| n.parse().ok())
                    .unwrap_or(ran),
                text,
            }
        }
    };
    let outcome = crate::digest::tally_text([tally.passed, tally.failed, tally.errored], &gate);
    let duration = std::time::Duration::try_from_secs_f64(unit.duration).unwrap_or_default();
    let label = crate::digest::unit_label(&unit.unit.file, &unit.unit.name, &unit.unit.connection);
    format!(
        "{word} [{}] {label} {outcome}",
        crate::digest::seconds(duration),
    )
}
