//! The run history: every `assay run` is kept as one JSON Lines file,
//! `.assay/runs/<id>.jsonl` in the project's folder ([`Settings::project_dir`]), in the
//! versioned report format: first a `run` line ([`RunInfo`]: the run's id, when it
//! started, the git commit and whether the work tree was dirty, the settings that chose
//! and shaped its units), then every event as `--jsonl` writes it, each line flushed as
//! it happens. A run that is killed keeps the units that finished.
//!
//! The commit is read with the `git` program (`git rev-parse`, `git status`), with
//! optional locks off so that a run never blocks a git command in the same tree; a
//! folder outside a git work tree, or a machine without git, has no commit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assay_history::{History, HistoryError};
use assay_report::JsonLines;
use assay_report::format::{GitState, RunInfo, RunSettings};
use assay_run::Selection;

use crate::settings::Settings;

/// The history's folder, under [`Settings::project_dir`].
pub const RUNS_DIR: &str = ".assay/runs";

/// The history's index, under [`Settings::project_dir`].
pub const INDEX_FILE: &str = ".assay/history.sqlite";

/// How many runs the history keeps: after each run, older ones are removed.
pub const KEEP_RUNS: usize = 200;

impl Settings {
    /// Where runs are kept: `.assay/runs` in [`Settings::project_dir`].
    pub fn runs_dir(&self) -> PathBuf {
        self.project_dir().join(RUNS_DIR)
    }

    /// The history of this project: its runs folder and its index, brought up to date.
    pub fn history(&self) -> Result<History, HistoryError> {
        History::open(&self.runs_dir(), &self.project_dir().join(INDEX_FILE))
    }

    /// What chose and shaped a run of `paths` under `selection` with these settings.
    pub fn run_settings(&self, paths: &[PathBuf], selection: &Selection) -> RunSettings {
        let o = &self.overrides;
        RunSettings {
            paths: paths.iter().map(|p| p.display().to_string()).collect(),
            filters: selection.filter_patterns(),
            tags: selection.tags().to_vec(),
            partition: selection.bucket().map(|p| p.to_string()),
            connections: o.connections.iter().map(|c| c.to_string()).collect(),
            samples: o.samples,
            models: o.models.clone(),
            judge: o.judge.clone(),
            fail_fast: o.fail_fast,
            rerun_failed: o.rerun_failed,
        }
    }

    /// The reporter that keeps this run in the history: `<id>.jsonl` in
    /// [`Settings::runs_dir`] (created), its `run` line already written. The
    /// [`RunInfo`] says which run it is.
    pub fn history_report(&self, run: RunSettings) -> std::io::Result<(JsonLines, RunInfo)> {
        let dir = self.runs_dir();
        std::fs::create_dir_all(&dir).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
        let info = RunInfo::starting("run", git_state(&self.project_dir()), run);
        let path = dir.join(format!("{}.jsonl", info.id));
        let lines = JsonLines::create(&path)?.with_run(&info)?;
        Ok((lines, info))
    }
}

/// The git state of the work tree `dir` is in, or `None` outside one (or without git).
pub fn git_state(dir: &Path) -> Option<GitState> {
    let commit = git(dir, &["rev-parse", "--verify", "HEAD"])?;
    let status = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    let branch = git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]);
    Some(GitState {
        commit: commit.trim().to_owned(),
        dirty: !status.trim().is_empty(),
        branch: branch
            .map(|b| b.trim().to_owned())
            .filter(|b| !b.is_empty()),
    })
}

/// What `git args...` prints in `dir`, when it succeeds.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
