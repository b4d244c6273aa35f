//! The run history: every `prill run` and `prill assess` is kept as one JSON Lines
//! file, `.prill/runs/<id>.jsonl` in the project's folder ([`Settings::project_dir`];
//! `[history] dir` of `prill.toml` moves it), in the
//! versioned report format: first a `run` line ([`RunInfo`]: the run's id, when it
//! started, the git commit and whether the work tree was dirty, the settings that chose
//! and shaped its units), then every event as `--jsonl` writes it, each line flushed as
//! it happens. A run that is killed keeps the units that finished.
//!
//! After each run the history is pruned ([`Settings::prune_history`]): the newest
//! `[history] keep` runs are kept (200 when not given), and with `max_age_days` the
//! runs that started longer ago than that are removed too. What the runs folder holds
//! that is not a run's regular file is not read, and is said ([`Pruned::skipped`]).
//!
//! The commit is read with the `git` program (`git rev-parse`, `git status`), with
//! optional locks off so that a run never blocks a git command in the same tree; a
//! folder outside a git work tree, or a machine without git, has no commit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use prill_history::{History, HistoryError, Recorder, Skipped};
use prill_report::format::{GitState, RunCassettes, RunInfo, RunSettings};
use prill_run::Selection;
use prill_spec::Plan;
use prill_spec::model::config::HistoryConfig;
use prill_spec::plan::{Case, Gate, repeated_ids};

use crate::settings::Settings;

/// What [`Settings::prune_history`] did.
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// The ids of the runs removed.
    pub removed: Vec<String>,
    /// The entries of the runs folder that were not read (a FIFO, a link to a device, a
    /// file over the size limit): each a warning to show.
    pub skipped: Vec<Skipped>,
}

/// The history's folder, under [`Settings::project_dir`], when `[history] dir` does not
/// say.
pub const RUNS_DIR: &str = ".prill/runs";

/// The history's index, under [`Settings::project_dir`].
pub const INDEX_FILE: &str = ".prill/history.sqlite";

/// How many runs the history keeps when `[history] keep` does not say: after each
/// run, older ones are removed.
pub const KEEP_RUNS: usize = 200;

impl Settings {
    /// `[history]` of `prill.toml`, when it has one.
    fn history_config(&self) -> Option<&HistoryConfig> {
        self.config.as_ref()?.history.as_ref()
    }

    /// Where runs are kept: `[history] dir` (relative to [`Settings::project_dir`]),
    /// else `.prill/runs` there.
    pub fn runs_dir(&self) -> PathBuf {
        let dir = self
            .history_config()
            .and_then(|h| h.dir.as_deref())
            .unwrap_or(RUNS_DIR);
        self.project_dir().join(dir)
    }

    /// How many runs are kept: `[history] keep`, else [`KEEP_RUNS`].
    pub fn history_keep(&self) -> usize {
        self.history_config()
            .and_then(|h| h.keep)
            .map_or(KEEP_RUNS, |n| n as usize)
    }

    /// How old a kept run may be: `[history] max_age_days`, else no limit.
    pub fn history_max_age(&self) -> Option<Duration> {
        let days = self.history_config()?.max_age_days?;
        Some(Duration::from_secs(u64::from(days) * 24 * 60 * 60))
    }

    /// Prunes the history as `[history]` says: the newest [`Settings::history_keep`]
    /// runs are kept, less those older than [`Settings::history_max_age`]. Says which
    /// runs were removed, and which entries of the runs folder were not read
    /// ([`History::skipped`]), for the caller to show as warnings.
    pub fn prune_history(&self) -> Result<Pruned, HistoryError> {
        let mut history = self.history()?;
        let mut removed = history.prune(self.history_keep())?;
        if let Some(age) = self.history_max_age() {
            removed.extend(history.prune_older_than(age)?);
        }
        Ok(Pruned {
            removed,
            skipped: history.skipped().to_vec(),
        })
    }

    /// The history of this project: its runs folder and its index, brought up to date.
    pub fn history(&self) -> Result<History, HistoryError> {
        History::open(&self.runs_dir(), &self.project_dir().join(INDEX_FILE))
    }

    /// The plan of `cases`, each with its own id: of cases with the same inputs, the
    /// one in the file that had an id in the newest kept run that has it keeps it, so
    /// adding a copy of a case elsewhere renames only the copy
    /// ([`Plan::claimed`]). Without a history, or when it cannot be read, they are
    /// numbered in the order they were found.
    ///
    /// Each case is held to its gate: `--reliability` for every case when given, else
    /// its own, else `prill.toml`'s `reliability`, else `1/1`.
    pub fn plan(&self, cases: Vec<Case>) -> Plan {
        let mut plan = self.plan_with_ids(cases);
        if let Some(default) = self.config.as_ref().and_then(|c| c.reliability) {
            plan.default_gate(Gate::Reliability(default));
        }
        if let Some(every) = self.overrides.reliability {
            plan.override_gate(Gate::Reliability(every));
        }
        self.mark_quarantined(&mut plan);
        plan
    }

    /// Marks each case `prill-quarantine.toml` lists (by its file, from the project
    /// folder, and its name): it runs and is reported, but does not gate.
    fn mark_quarantined(&self, plan: &mut Plan) {
        if self.quarantine.entries.is_empty() {
            return;
        }
        let project =
            std::fs::canonicalize(self.project_dir()).unwrap_or_else(|_| self.project_dir());
        let mut relative: std::collections::HashMap<*const std::path::Path, Option<String>> =
            std::collections::HashMap::new();
        for case in &mut plan.cases {
            let rel = relative
                .entry(std::sync::Arc::as_ptr(&case.file))
                .or_insert_with(|| {
                    let file = std::fs::canonicalize(&case.file).ok()?;
                    let rel = file.strip_prefix(&project).ok()?;
                    Some(rel.to_string_lossy().replace('\\', "/"))
                });
            let Some(rel) = rel.as_deref() else { continue };
            case.quarantine = self
                .quarantine
                .entries
                .iter()
                .find(|e| e.file == rel && e.case == *case.name)
                .map(|e| std::sync::Arc::new(e.clone()));
        }
    }

    fn plan_with_ids(&self, cases: Vec<Case>) -> Plan {
        let ids = repeated_ids(&cases);
        if ids.is_empty() || !self.runs_dir().is_dir() {
            return Plan::new(cases);
        }
        let claims = self
            .history()
            .and_then(|h| h.claims(&ids))
            .unwrap_or_default();
        Plan::claimed(cases, &claims)
    }

    /// What chose and shaped a run of `paths` under `selection` with these settings.
    pub fn run_settings(&self, paths: &[PathBuf], selection: &Selection) -> RunSettings {
        let o = &self.overrides;
        RunSettings {
            paths: paths.iter().map(|p| p.display().to_string()).collect(),
            filters: selection.filter_patterns(),
            tags: selection.tags().to_vec(),
            partition: selection.bucket().map(|p| p.to_string()),
            // The caller knows the suite, from `Prepared::suite`.
            suite: None,
            connections: o.connections.iter().map(|c| c.to_string()).collect(),
            samples: o.samples,
            models: o.models.clone(),
            judge: o.judge.clone(),
            fail_fast: o.fail_fast,
            rerun_failed: o.rerun_failed,
            cassettes: o.cassettes.as_ref().map(|c| RunCassettes {
                mode: c.flag().to_owned(),
                dir: c.dir.display().to_string(),
            }),
            top_up: None,
        }
    }

    /// The reporter that keeps this run in the history: `<id>.jsonl` in
    /// [`Settings::runs_dir`] (created), its `run` line already written. The
    /// [`RunInfo`] says which run it is.
    pub fn history_report(&self, run: RunSettings) -> std::io::Result<(Recorder, RunInfo)> {
        self.history_report_for("run", run)
    }

    /// [`Settings::history_report`] for a run of `command` (`run`, `assess`).
    pub fn history_report_for(
        &self,
        command: &str,
        run: RunSettings,
    ) -> std::io::Result<(Recorder, RunInfo)> {
        self.prill_dir()?;
        let dir = self.runs_dir();
        std::fs::create_dir_all(&dir).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
        let info = RunInfo::starting(command, git_state(&self.project_dir()), run);
        let index = self.project_dir().join(INDEX_FILE);
        let recorder = Recorder::create(&dir, &index, &info)?;
        Ok((recorder, info))
    }
}

impl Settings {
    /// The folder of what runs keep (`.prill` in [`Settings::project_dir`]: the history,
    /// the last run, the judge's cache), created when missing. A folder created here
    /// gets a `.gitignore` that ignores everything in it, so that what runs keep never
    /// shows up in `git status` of the project (a CI cache carries the history instead).
    pub fn prill_dir(&self) -> std::io::Result<PathBuf> {
        let dir = self.project_dir().join(PRILL_DIR);
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
            })?;
            let ignore = dir.join(".gitignore");
            std::fs::write(&ignore, GITIGNORE).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot write {}: {e}", ignore.display()))
            })?;
        }
        Ok(dir)
    }
}

/// What runs keep, under [`Settings::project_dir`].
pub const PRILL_DIR: &str = ".prill";

/// The `.gitignore` of a new [`PRILL_DIR`].
const GITIGNORE: &str = "# Written by Prill: what runs keep (the run history, the last run, caches) is not\n# committed. CI carries the history in its cache (docs/ci.md).\n*\n";

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
