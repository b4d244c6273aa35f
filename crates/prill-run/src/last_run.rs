//! The last run's verdicts (`.prill/last-run.json`), and rerunning what failed in it
//! (`--rerun-failed`, as pytest's `--lf` and promptfoo's `--filter-failing` do).
//!
//! [`LastRun`] is a small versioned document of its own, apart from the JSON report:
//! one entry per unit (case × connection, or case × model) with the case id, the file,
//! the name, the connection and the verdict. [`Rerun`] reads the units that failed or
//! errored and keeps, out of a plan's cases, those units only: a case that failed over
//! `http` but passed over `direct` runs again over `http` alone.
//!
//! # Example
//!
//! ```
//! use prill_run::last_run::{LastRun, LastUnit};
//!
//! let last = LastRun::new(vec![LastUnit {
//!     case_id: "0a1b2c3d4e5f".into(),
//!     file: "tests/echo.yaml".into(),
//!     name: "tests/echo".into(),
//!     connection: "http".into(),
//!     verdict: "failed".into(),
//! }]);
//! let again = LastRun::parse(&last.to_json()).unwrap();
//! assert_eq!(again.rerun().len(), 1);
//! // Written as it is made, it is the same document.
//! let mut written = Vec::new();
//! last.write_json(&mut written).unwrap();
//! assert_eq!(written, last.to_json().into_bytes());
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use prill_spec::model::data_driven::Connection;
use prill_spec::plan::{Case, Target};
use serde::{Deserialize, Serialize};

use crate::events::UnitReport;

/// Where a project keeps its last run, under its folder (`prill.toml`'s, else the
/// working directory).
pub const LAST_RUN_FILE: &str = ".prill/last-run.json";

/// The version of [`LastRun`]'s format; another version is read as no last run.
pub const LAST_RUN_VERSION: u32 = 1;

/// Why the last run could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LastRunError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a last run this version of Prill writes.
    #[error("{path} is not a last run Prill can read ({reason})")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// Every unit of a run and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    /// [`LAST_RUN_VERSION`].
    pub schema_version: u32,
    /// The units, in the order they finished.
    pub units: Vec<LastUnit>,
}

/// One unit of the last run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastUnit {
    /// The case's id (with `@model` for a case run on a `--model`).
    pub case_id: String,
    /// The file the case came from.
    pub file: PathBuf,
    /// The case's name.
    pub name: String,
    /// The connection, or the provider of a model case ([`crate::UnitId::connection`]).
    pub connection: String,
    /// `passed`, `failed`, `errored` or `skipped`.
    pub verdict: String,
}

/// A case's file as the last run names it, and as reports show it: without a leading
/// `./` (the files of `prill run .` or `prill run ./tests`).
pub fn shown_file(file: &Path) -> &Path {
    let mut file = file;
    while let Ok(rest) = file.strip_prefix(".") {
        if rest == file || rest.as_os_str().is_empty() {
            break;
        }
        file = rest;
    }
    file
}

impl LastUnit {
    /// The entry of a finished unit (its file as [`shown_file`] names it).
    pub fn of(unit: &UnitReport) -> LastUnit {
        LastUnit {
            case_id: unit.unit.case_id.clone(),
            file: shown_file(&unit.unit.file).to_owned(),
            name: unit.unit.name.clone(),
            connection: unit.unit.connection.clone(),
            verdict: unit.verdict.name().to_owned(),
        }
    }

    /// Whether it failed or errored (what `--rerun-failed` runs again).
    pub fn failed(&self) -> bool {
        matches!(self.verdict.as_str(), "failed" | "errored")
    }
}

impl LastRun {
    /// A last run of `units`, at the current version.
    pub fn new(units: Vec<LastUnit>) -> LastRun {
        LastRun {
            schema_version: LAST_RUN_VERSION,
            units,
        }
    }

    /// The document, as written to [`LAST_RUN_FILE`].
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// [`LastRun::to_json`], written to `out` as it is made.
    ///
    /// # Errors
    ///
    /// When `out` cannot be written.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        out.write_all(b"\n")
    }

    /// Reads a document; `Err` holds why it is not one.
    pub fn parse(text: &str) -> Result<LastRun, String> {
        let run: LastRun = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if run.schema_version != LAST_RUN_VERSION {
            return Err(format!(
                "schema_version {} where {LAST_RUN_VERSION} is read",
                run.schema_version
            ));
        }
        Ok(run)
    }

    /// The last run at `path`; `Ok(None)` when there is none yet.
    pub fn read(path: &Path) -> Result<Option<LastRun>, LastRunError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(LastRunError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        LastRun::parse(&text)
            .map(Some)
            .map_err(|reason| LastRunError::Format {
                path: path.to_path_buf(),
                reason,
            })
    }

    /// The units that failed or errored, to run again.
    pub fn rerun(&self) -> Rerun {
        Rerun {
            units: self
                .units
                .iter()
                .filter(|u| u.failed())
                .map(|u| (u.case_id.clone(), u.connection.clone()))
                .collect(),
        }
    }
}

impl LastRun {
    /// [`LastRun::rerun`] among `cases`, following edits: a unit that failed or errored
    /// whose case is not among `cases` under its id (its inputs were edited since,
    /// which changes the id) is run again as the case of the same file and name whose
    /// id the last run does not know. Also returns those cases, as `name (file)`.
    pub fn rerun_among(&self, cases: &[Case]) -> (Rerun, Vec<String>) {
        let mut rerun = self.rerun();
        let key = |case: &Case| crate::engine::unit_id(case, None).case_id;
        let loaded: HashSet<String> = cases.iter().map(key).collect();
        let lost: Vec<&LastUnit> = self
            .units
            .iter()
            .filter(|u| u.failed() && !loaded.contains(&u.case_id))
            .collect();
        if lost.is_empty() {
            return (rerun, Vec::new());
        }
        let known: HashSet<&str> = self.units.iter().map(|u| u.case_id.as_str()).collect();
        let mut by_place: HashMap<(&str, &Path), Vec<String>> = HashMap::new();
        for case in cases {
            let id = key(case);
            if !known.contains(id.as_str()) {
                by_place
                    .entry((&case.name, shown_file(&case.file)))
                    .or_default()
                    .push(id);
            }
        }
        let mut edited = Vec::new();
        for unit in lost {
            let Some(ids) = by_place.get(&(unit.name.as_str(), shown_file(&unit.file))) else {
                continue;
            };
            for id in ids {
                rerun.units.insert((id.clone(), unit.connection.clone()));
            }
            edited.push(format!("{} ({})", unit.name, unit.file.display()));
        }
        edited.sort();
        edited.dedup();
        (rerun, edited)
    }
}

/// The units to run again: each by its case id and connection. Made from the last run
/// ([`LastRun::rerun`]) or from any list of units (`prill run --units FILE`), by
/// collecting `(case_id, connection)` pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rerun {
    units: HashSet<(String, String)>,
}

impl FromIterator<(String, String)> for Rerun {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(units: I) -> Rerun {
        Rerun {
            units: units.into_iter().collect(),
        }
    }
}

impl Rerun {
    /// How many units.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether there is nothing to run again.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The cases of `cases` with a unit to run again, in their order, each narrowed to
    /// those units: an agent case keeps only the connections it failed over, out of
    /// `connections` when given (`--connection`, which replaces every case's own) else
    /// its own. A case whose id or connections changed since is left out.
    pub fn apply(&self, cases: Vec<Case>, connections: Option<&[Connection]>) -> Vec<Case> {
        cases
            .into_iter()
            .filter_map(|mut case| {
                let id = case.id.clone();
                if let Target::Agent {
                    connections: own, ..
                } = &mut case.target
                {
                    let kept: Vec<Connection> = connections
                        .unwrap_or(own)
                        .iter()
                        .copied()
                        .filter(|c| self.units.contains(&(id.to_string(), c.name().to_owned())))
                        .collect();
                    if kept.is_empty() {
                        return None;
                    }
                    *own = kept;
                    return Some(case);
                }
                let unit = crate::engine::unit_id(&case, None);
                self.units
                    .contains(&(unit.case_id, unit.connection))
                    .then_some(case)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_without_a_leading_dot() {
        for (given, shown) in [
            ("./tests/x.yaml", "tests/x.yaml"),
            ("././x.yaml", "x.yaml"),
            ("tests/x.yaml", "tests/x.yaml"),
            ("../x.yaml", "../x.yaml"),
            ("/abs/x.yaml", "/abs/x.yaml"),
            (".", "."),
        ] {
            assert_eq!(shown_file(Path::new(given)), Path::new(shown), "{given}");
        }
    }
}
