//! The HTML report: one self-contained page (no network, inline assets) of a run, or
//! of a comparison of two runs.
//!
//! A comparison is given to the page as a [`CompareSection`]: the runs' names and one
//! [`CompareRow`] per case that changed, regressions first. `assay compare` builds it
//! from its own result, so this module does not depend on how the comparison is made.

use serde::Serialize;

/// What a comparison adds to the page: which runs, and the cases that changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct CompareSection {
    /// The base run: its id, or the file it was read from.
    pub base: String,
    /// The head run: its id, or the file it was read from.
    pub head: String,
    /// One row per change, regressions first.
    pub rows: Vec<CompareRow>,
}

/// One change between the two runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct CompareRow {
    /// `regression`, `fix`, `new`, `removed`, `pass_rate`, `latency`, `tokens`,
    /// `cost` or `judge`.
    pub kind: String,
    /// The case's name.
    pub case: String,
    /// The case's id.
    pub case_id: String,
    /// The connection or provider.
    pub connection: String,
    /// What it was in the base run (`passed 10/10`, `1.20 s`, ...).
    pub base: String,
    /// What it is in the head run.
    pub head: String,
    /// More: the p-value of a pass-rate change, a judge's reasons, ...
    pub detail: String,
}

impl CompareSection {
    /// An empty comparison of `base` and `head`.
    pub fn new(base: impl Into<String>, head: impl Into<String>) -> CompareSection {
        CompareSection {
            base: base.into(),
            head: head.into(),
            rows: Vec::new(),
        }
    }
}

impl CompareRow {
    /// A row of `kind` for the case `case` (`case_id`) over `connection`.
    pub fn new(kind: &str, case: &str, case_id: &str, connection: &str) -> CompareRow {
        CompareRow {
            kind: kind.to_owned(),
            case: case.to_owned(),
            case_id: case_id.to_owned(),
            connection: connection.to_owned(),
            ..CompareRow::default()
        }
    }
}
