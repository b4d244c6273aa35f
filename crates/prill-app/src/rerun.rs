//! `--rerun-failed` and the file it reads: every `prill run` writes its units' verdicts
//! to `.prill/last-run.json` in the project's folder ([`Settings::project_dir`]:
//! `prill.toml`'s, else the working directory); `--rerun-failed` keeps, of the cases
//! loaded, the units that failed or errored there.
//!
//! With no last run, or one where nothing failed, nothing runs: the run is empty with a
//! note and passes, as pytest's `--lf` says "no previously failed tests" (an explicit
//! `--no-tests` decides instead). A last run that cannot be read is the same, with a
//! warning: the next run writes it again.
//!
//! `--units FILE` narrows the cases the same way to the units a list names (as `prill
//! run --list` prints them; the pytest plugin writes the items pytest selected): when
//! none of them is among the cases loaded, the run is empty, which fails by default.

use std::path::PathBuf;

use prill_report::{LastRunReport, Output};
use prill_run::last_run::{LAST_RUN_FILE, LastRun, Rerun};
use prill_run::select::{EmptyRun, Level, NoTests};
use prill_spec::plan::{Case, Target};

use crate::settings::Settings;

impl Settings {
    /// Where the last run is kept: `.prill/last-run.json` in [`Settings::project_dir`].
    pub fn last_run_path(&self) -> PathBuf {
        self.project_dir().join(LAST_RUN_FILE)
    }

    /// The reporter that writes this run's verdicts to [`Settings::last_run_path`],
    /// creating `.prill/`. Make it after [`crate::prepare`] has read the last run: it
    /// removes the earlier file at once (the new one replaces it atomically at the end).
    pub fn last_run_report(&self) -> std::io::Result<LastRunReport> {
        let path = self.last_run_path();
        self.prill_dir()?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        Ok(LastRunReport::new(Output::file(&path)?))
    }
}

/// `cases` narrowed to the units that failed or errored in the last run, or what the
/// run being empty comes to when there are none (none failed, no last run, one that
/// cannot be read), under `no_tests`.
pub(crate) fn rerun_failed(
    settings: &Settings,
    cases: Vec<Case>,
    no_tests: Option<NoTests>,
) -> Result<(Vec<Case>, String), EmptyRun> {
    let path = settings.last_run_path();
    let shown = path.display();
    let empty = |default: Level, message: String| {
        let level = match no_tests {
            Some(NoTests::Pass) => Level::Silent,
            Some(NoTests::Warn) => Level::Warning,
            Some(NoTests::Fail) => Level::Error,
            None => default,
        };
        EmptyRun { level, message }
    };
    let last = match LastRun::read(&path) {
        Ok(Some(last)) => last,
        Ok(None) => {
            return Err(empty(
                Level::Note,
                format!(
                    "--rerun-failed: no earlier run is recorded ({shown} does not exist); nothing to rerun"
                ),
            ));
        }
        Err(e) => {
            return Err(empty(
                Level::Warning,
                format!("--rerun-failed: {e}; nothing to rerun (the next run writes it again)"),
            ));
        }
    };
    let failed = last.rerun().len();
    let (rerun, edited) = last.rerun_among(&cases);
    if rerun.is_empty() {
        return Err(empty(
            Level::Note,
            format!(
                "--rerun-failed: no unit failed or errored in the last run ({shown}); nothing to rerun"
            ),
        ));
    }
    let connections =
        (!settings.overrides.connections.is_empty()).then_some(&settings.overrides.connections);
    let kept = rerun.apply(cases, connections.map(Vec::as_slice));
    let units: usize = kept.iter().map(units_of).sum();
    if units == 0 {
        return Err(empty(
            Level::Note,
            format!(
                "--rerun-failed: none of the {failed} unit(s) that failed or errored in the last run ({shown}) is among the cases loaded (a case whose file or name changed is another case; give the same paths, --connection and --model); nothing to rerun"
            ),
        ));
    }
    let mut note = format!(
        "rerunning {units} of the {failed} unit(s) that failed or errored in the last run ({shown})"
    );
    if !edited.is_empty() {
        note.push_str(&format!(
            "; inputs changed since, rerun as the same case: {}",
            edited.join(", ")
        ));
    }
    Ok((kept, note))
}

/// `cases` narrowed to `units` (case id and connection, [`crate::Overrides::units`]),
/// with a note when some of them are not among the cases loaded; or what the run being
/// empty comes to when none is (an error unless `no_tests` says otherwise: the units
/// were asked for by name).
pub(crate) fn only_units(
    settings: &Settings,
    units: &[(String, String)],
    cases: Vec<Case>,
    no_tests: Option<NoTests>,
) -> Result<(Vec<Case>, Option<String>), EmptyRun> {
    let wanted: Rerun = units.iter().cloned().collect();
    // Under `--rerun-failed` the cases' own connections are already narrowed (and
    // `--connection` applied): keep to them.
    let connections = (!settings.overrides.connections.is_empty()
        && !settings.overrides.rerun_failed)
        .then_some(settings.overrides.connections.as_slice());
    let kept = wanted.apply(cases, connections);
    let found: usize = kept.iter().map(units_of).sum();
    let missing = wanted.len().saturating_sub(found);
    let why = "a changed case has another id; give the paths, --connection and --model the list was made with";
    if found == 0 {
        let level = match no_tests {
            Some(NoTests::Pass) => Level::Silent,
            Some(NoTests::Warn) => Level::Warning,
            Some(NoTests::Fail) | None => Level::Error,
        };
        return Err(EmptyRun {
            level,
            message: format!(
                "--units: none of the {} unit(s) asked for is among the cases loaded ({why}); nothing to run",
                wanted.len()
            ),
        });
    }
    let note = (missing > 0).then(|| {
        format!(
            "--units: {missing} of the {} unit(s) asked for are not among the cases loaded ({why}); running the other {found}",
            wanted.len()
        )
    });
    Ok((kept, note))
}

/// How many units `case` runs as: one per connection of an agent, one for a model.
fn units_of(case: &Case) -> usize {
    match &case.target {
        Target::Agent { connections, .. } => connections.len(),
        Target::Model { .. } => 1,
    }
}
