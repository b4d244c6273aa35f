//! What a run keeps beside the reports the user asked for, and what each one's failure
//! means ([`Stake`]): the last run (`.prill/last-run.json`, for `--rerun-failed`) and
//! the run in the history are bookkeeping, so a failure to write either is a warning;
//! the `--jsonl` stream is a report the user asked for, so it fails the run.
//!
//! [`Settings::keep_run`] adds them to the run's reporters, in the order the run needs:
//! the history first, so that `--jsonl` starts with the history's own `run` line.

use std::path::{Path, PathBuf};

use prill_report::format::{RunInfo, Suite};
use prill_report::{JsonLines, Reporters, Stake};
use prill_run::Selection;

use crate::drive::Prepared;
use crate::history::git_state;
use crate::settings::Settings;

/// What is lost when the last run cannot be written.
pub const LAST_RUN_LOST: &str = "--rerun-failed will not know this run";

/// What is lost when the history cannot be written to after the run started.
pub const HISTORY_LOST: &str = "the history keeps only what was written before";

/// What [`Settings::keep_run`] set up.
#[derive(Debug, Default)]
pub struct Kept {
    /// The run's `run` line, as the history keeps it (else as `--jsonl` starts with it):
    /// which run this is, for the HTML page. `None` when neither is written.
    pub info: Option<RunInfo>,
    /// What will not be kept and why, in words, each starting `warning:`.
    pub warnings: Vec<String>,
}

impl Settings {
    /// Adds what a run keeps to `reporters`: the last run and the history (when `prepared`
    /// runs something), then the `--jsonl` stream given as `jsonl` (its path and the
    /// stream), which starts with the run's `run` line. `selection` is the one that
    /// chose the units (`None` when it could not be read, which leaves the filters out
    /// of the `run` line).
    ///
    /// A last run or a history that cannot be started is a warning in [`Kept`]; a
    /// `--jsonl` stream that cannot be written is the error.
    pub fn keep_run(
        &self,
        paths: &[PathBuf],
        selection: Option<&Selection>,
        prepared: &Prepared,
        reporters: &mut Reporters,
        jsonl: Option<(PathBuf, JsonLines)>,
    ) -> std::io::Result<Kept> {
        let mut kept = Kept::default();
        let runs_something = !prepared.plan.cases.is_empty();
        // After `prepare` has read the last run (`--rerun-failed`): this replaces it. A
        // run of nothing leaves it as it is.
        if runs_something {
            match self.last_run_report() {
                Ok(report) => {
                    reporters.push_with(
                        "last-run",
                        report,
                        Stake::Kept {
                            lost: LAST_RUN_LOST,
                        },
                    );
                }
                Err(e) => kept.warnings.push(format!("warning: {e}; {LAST_RUN_LOST}")),
            }
        }
        // What chose the units, with the suite they came from (the same in every shard
        // of it): the `run` line of the history's file and of `--jsonl`.
        let run = selection.map(|selection| {
            let mut run = self.run_settings(paths, selection);
            run.suite = prepared
                .suite
                .as_ref()
                .map(|s| Suite::new(s.fingerprint.clone(), s.units as u64));
            run
        });
        if runs_something && let Some(run) = &run {
            match self.history_report(run.clone()) {
                Ok((report, info)) => {
                    reporters.push_with("history", report, Stake::Kept { lost: HISTORY_LOST });
                    kept.info = Some(info);
                }
                Err(e) => kept
                    .warnings
                    .push(format!("warning: this run is not kept in the history: {e}")),
            }
        }
        if let Some((path, lines)) = jsonl {
            let info = kept.info.clone().unwrap_or_else(|| {
                RunInfo::starting(
                    "run",
                    git_state(&self.project_dir()),
                    run.unwrap_or_default(),
                )
            });
            let lines = lines.with_run(&info).map_err(|e| unwritable(&path, &e))?;
            reporters.push("jsonl", lines.batched());
            kept.info = Some(info);
        }
        Ok(kept)
    }

    /// The reporter that keeps an assessment in the history, as [`Settings::keep_run`]
    /// keeps a run, or the warning that says why it is not kept.
    pub fn keep_assessment(
        &self,
        paths: &[PathBuf],
        selection: &Selection,
        reporters: &mut Reporters,
    ) -> Option<String> {
        let run = self.run_settings(paths, selection);
        match self.history_report_for("assess", run) {
            Ok((report, _)) => {
                reporters.push_with("history", report, Stake::Kept { lost: HISTORY_LOST });
                None
            }
            Err(e) => Some(format!(
                "warning: this assessment is not kept in the history: {e}"
            )),
        }
    }
}

fn unwritable(path: &Path, e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
}
