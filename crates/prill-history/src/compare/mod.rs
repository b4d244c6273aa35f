//! `prill compare`: what changed from one run to another.
//!
//! Units are matched by case id (the hash of the case's inputs, so an edited
//! expectation keeps its history) and connection. A unit that passed and now fails or
//! errors is a regression, and the reverse a fix; a sampled case (more than one sample
//! in either run) is judged on its pass rate instead, with Fisher's exact test (mid-p,
//! `prill_stats::two_sample`) corrected for the number of sampled cases: a change that
//! Holm's step-down rejects at `alpha` is a regression or a fix, another
//! Benjamini–Hochberg discovery is "probably changed", and the rest are within chance,
//! each with the smallest drop its samples could have shown ([`Change::detectable_drop`]).
//! Latency, time to first token,
//! tokens and cost are compared against [`Thresholds`]; the reasons of gist checks'
//! judges, where they changed, are listed.
//!
//! ```
//! use prill_history::compare::{Side, Thresholds, compare, render};
//! use prill_report::stored::StoredRun;
//!
//! let unit = |verdict: &str, passed: u32| format!(
//!     r#"{{"schema_version":1,"event":"unit_finished","unit":{{"case_id":"c1","name":"greets","file":"a.yaml","dialect":"sentinel-spec","connection":"direct","target":"echo"}},"verdict":"{verdict}","success_ratio":"1/1","tally":{{"passed":{passed},"failed":{},"errored":0}},"samples":[],"duration":0.1}}"#,
//!     1 - passed,
//! );
//! let base = Side::new("base", StoredRun::parse(&unit("passed", 1))?);
//! let head = Side::new("head", StoredRun::parse(&unit("failed", 0))?);
//! let comparison = compare(&base, &head, &Thresholds::default());
//! assert!(comparison.has_regression());
//! assert!(render::human(&comparison).contains("greets [direct]  passed 1/1 → failed 0/1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod model;
pub mod render;
mod top_up;

use std::path::PathBuf;

pub use model::{
    CaseRef, Change, Comparison, Edited, JudgeChange, LATENCY_FLOOR_SECONDS, Metric, MetricChange,
    Only, Outcome, POWER, RunRef, Side, Thresholds, compare,
};
pub use top_up::{
    Draw, Ended, FUTILE_POWER, TopUp, TopUpPlan, TopUpPlanError, TopUpReport, ToppedUp,
};

use crate::{HistoryError, RunRow};

/// Why two runs could not be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// Neither a kept run's id (or the start of one) nor a file.
    #[error(
        "no kept run has an id starting with `{query}` and there is no file `{query}`; `prill runs` lists the kept runs"
    )]
    NotFound {
        /// What was asked for.
        query: String,
    },
    /// The start of more than one kept run's id.
    #[error("`{query}` starts the ids of several kept runs ({ids}); give more of the id")]
    Ambiguous {
        /// What was asked for.
        query: String,
        /// The runs it could be, comma-separated.
        ids: String,
    },
    /// Too few runs are kept to pick two.
    #[error(
        "comparing needs two runs, and the history in {} keeps {found}{}; run `prill run` again, or name the runs or report files to compare",
        dir.display(),
        command.as_ref().map(|c| format!(" of `prill {c}`")).unwrap_or_default()
    )]
    TooFew {
        /// How many runs are kept (of the head's command, when known).
        found: usize,
        /// The head run's command, when the runs were counted for it.
        command: Option<String>,
        /// The runs folder.
        dir: PathBuf,
    },
    /// `--base-branch` named something git does not know.
    #[error(
        "git knows no branch or commit `{branch}` here; fetch it (`git fetch origin {branch}:{branch}`) or name the base run"
    )]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// No kept run is of the branch's commit.
    #[error(
        "no kept run is of `{branch}`'s tip {tip}{}; run the suite on `{branch}` first (its run must be in this history), or name the base run",
        merge_base.as_ref().map(|m| format!(" or of its merge base with HEAD {m}")).unwrap_or_default()
    )]
    NoBranchRun {
        /// The branch.
        branch: String,
        /// Its tip.
        tip: String,
        /// Its merge base with `HEAD`, when it differs from the tip.
        merge_base: Option<String>,
    },
    /// A run could not be read.
    #[error(transparent)]
    Stored(#[from] prill_report::stored::StoredError),
    /// The history could not be read.
    #[error(transparent)]
    History(#[from] HistoryError),
}

/// The kept run `query` names: its id, or the start of exactly one id.
pub fn pick<'a>(rows: &'a [RunRow], query: &str) -> Result<&'a RunRow, CompareError> {
    if let Some(row) = rows.iter().find(|r| r.id == query) {
        return Ok(row);
    }
    let matching: Vec<&RunRow> = rows.iter().filter(|r| r.id.starts_with(query)).collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(CompareError::NotFound {
            query: query.to_owned(),
        }),
        many => Err(CompareError::Ambiguous {
            query: query.to_owned(),
            ids: many
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The newest kept run (`rows` are newest first) of the first of `commits` any run is
/// of, other than the run `except`.
pub fn newest_on<'a>(
    rows: &'a [RunRow],
    commits: &[&str],
    except: Option<&str>,
) -> Option<&'a RunRow> {
    commits.iter().find_map(|commit| {
        rows.iter()
            .find(|r| r.commit.as_deref() == Some(*commit) && Some(r.id.as_str()) != except)
    })
}
