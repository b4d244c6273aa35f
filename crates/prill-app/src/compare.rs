//! What `prill compare` compares: two runs picked from the history (by id, the start
//! of one, the newest, or the newest of a branch's commit) or read from report files,
//! and the thresholds of `[compare]` in `prill.toml`. A kept run is read with the
//! samples `prill compare --top-up` added to it (its `top-up` runs), and a run picked
//! for either side is never a `top-up` run itself.

use prill_history::compare::{CompareError, Side, Thresholds, newest_on, pick};
use prill_history::{MAX_RUN_FILE_BYTES, RunRow};
use prill_report::format::RunInfo;
use prill_report::stored::{StoredError, StoredRun};

/// The most of a kept run's first line read to learn its command: the `run` record.
const FIRST_LINE_BYTES: u64 = 64 * 1024;

use crate::history::git;
use crate::settings::Settings;
use crate::top_up::TOP_UP_COMMAND;

/// Which runs to compare, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// The base run: a kept run's id (or the start of one) or a report file; the
    /// newest kept run other than the head when not given.
    pub base: Option<String>,
    /// The head run, likewise; the newest kept run when not given.
    pub head: Option<String>,
    /// Take as the base the newest kept run of this branch's tip commit, else of its
    /// merge base with `HEAD` (`--base-branch`).
    pub base_branch: Option<String>,
}

impl Settings {
    /// The thresholds of `[compare]`, each defaulted ([`Thresholds::default`]).
    pub fn compare_thresholds(&self) -> Thresholds {
        let mut t = Thresholds::default();
        if let Some(c) = self.config.as_ref().and_then(|c| c.compare) {
            t.latency_percent = c.latency_percent.unwrap_or(t.latency_percent);
            t.tokens_percent = c.tokens_percent.unwrap_or(t.tokens_percent);
            t.cost_percent = c.cost_percent.unwrap_or(t.cost_percent);
            t.alpha = c.alpha.unwrap_or(t.alpha);
        }
        t
    }

    /// The base and head runs `query` names, read.
    pub fn compare_sides(&self, query: &RunQuery) -> Result<(Side, Side), CompareError> {
        self.sides(query, true)
    }

    /// [`Settings::compare_sides`] with runs named only by their ids in the history,
    /// never by a file (`prill view`).
    pub fn compare_kept(&self, query: &RunQuery) -> Result<(Side, Side), CompareError> {
        self.sides(query, false)
    }

    /// A kept run, read: the one whose id is `id` (or starts with it, when only one
    /// does).
    pub fn kept_run(&self, id: &str) -> Result<Side, CompareError> {
        let mut kept = Kept {
            settings: self,
            rows: None,
            files: false,
        };
        kept.side(id)
    }

    fn sides(&self, query: &RunQuery, files: bool) -> Result<(Side, Side), CompareError> {
        let mut kept = Kept {
            settings: self,
            rows: None,
            files,
        };
        let too_few = |found, command: Option<&str>| CompareError::TooFew {
            found,
            command: command.map(str::to_owned),
            dir: self.runs_dir(),
        };
        let head = match &query.head {
            Some(q) => kept.side(q)?,
            None => {
                let rows = kept.rows()?;
                let newest = rows
                    .iter()
                    .find(|r| r.command != TOP_UP_COMMAND)
                    .ok_or_else(|| too_few(0, None))?
                    .clone();
                kept.read(&newest)?
            }
        };
        let head_id = head.info.as_ref().map(|i| i.id.clone());
        // A base picked for the head is a run of the same command (`run`, `assess`).
        let command = head.info.as_ref().map(|i| i.command.clone());
        let base = match (&query.base_branch, &query.base) {
            (Some(branch), _) => {
                let rows = kept.of_command(command.as_deref())?;
                let row = self.branch_run(branch, &rows, head_id.as_deref())?;
                kept.read(&row)?
            }
            (None, Some(q)) => kept.side(q)?,
            (None, None) => {
                let rows = kept.of_command(command.as_deref())?;
                let row = rows
                    .iter()
                    .find(|r| Some(r.id.as_str()) != head_id.as_deref())
                    .cloned()
                    .ok_or_else(|| too_few(rows.len(), command.as_deref()))?;
                kept.read(&row)?
            }
        };
        let (mut base, mut head) = (base, head);
        for side in [&mut base, &mut head] {
            kept.add_top_ups(side)?;
        }
        Ok((base, head))
    }

    /// The newest kept run of `branch`'s tip, else of its merge base with `HEAD`.
    fn branch_run(
        &self,
        branch: &str,
        rows: &[RunRow],
        except: Option<&str>,
    ) -> Result<RunRow, CompareError> {
        let dir = self.project_dir();
        let tip = git(
            &dir,
            &["rev-parse", "--verify", &format!("{branch}^{{commit}}")],
        )
        .map(|s| s.trim().to_owned())
        .ok_or_else(|| CompareError::NoBranch {
            branch: branch.to_owned(),
        })?;
        let merge_base = git(&dir, &["merge-base", &tip, "HEAD"])
            .map(|s| s.trim().to_owned())
            .filter(|m| *m != tip);
        let mut commits = vec![tip.as_str()];
        commits.extend(merge_base.as_deref());
        newest_on(rows, &commits, except)
            .cloned()
            .ok_or_else(|| CompareError::NoBranchRun {
                branch: branch.to_owned(),
                tip: tip.clone(),
                merge_base: merge_base.clone(),
            })
    }
}

/// The kept runs, listed from the index only when needed.
struct Kept<'s> {
    settings: &'s Settings,
    rows: Option<Vec<RunRow>>,
    /// Whether a run may be named by a report file.
    files: bool,
}

impl Kept<'_> {
    fn rows(&mut self) -> Result<&[RunRow], CompareError> {
        if self.rows.is_none() {
            self.rows = Some(self.settings.history()?.runs()?);
        }
        Ok(self.rows.as_deref().unwrap_or_default())
    }

    /// The run `query` names: a file when one is there (and files may be named), else a
    /// kept run's id or the start of one.
    fn side(&mut self, query: &str) -> Result<Side, CompareError> {
        let path = std::path::Path::new(query);
        if self.files && path.is_file() {
            return Ok(Side::new(query, StoredRun::read(path)?));
        }
        let row = pick(self.rows()?, query)?.clone();
        self.read(&row)
    }

    /// The kept runs of `command` (all of them when it is not known), newest first.
    fn of_command(&mut self, command: Option<&str>) -> Result<Vec<RunRow>, CompareError> {
        let rows: Vec<RunRow> = self
            .rows()?
            .iter()
            .filter(|r| r.command != TOP_UP_COMMAND)
            .cloned()
            .collect();
        let Some(command) = command else {
            return Ok(rows);
        };
        Ok(rows
            .into_iter()
            .filter(|r| self.command(r).is_none_or(|c| c == command))
            .collect())
    }

    /// Adds to `side`, a kept run, the samples of its `top-up` runs, oldest first. A
    /// side read from a file has none.
    fn add_top_ups(&mut self, side: &mut Side) -> Result<(), CompareError> {
        let Some(id) = side.info.as_ref().map(|i| i.id.clone()) else {
            return Ok(());
        };
        let mut top_ups: Vec<RunRow> = self
            .rows()?
            .iter()
            .filter(|r| r.command == TOP_UP_COMMAND)
            .cloned()
            .collect();
        top_ups.reverse();
        for row in top_ups {
            let of = self.first_line(&row).and_then(|i| i.settings.top_up);
            if of.is_some_and(|of| of.head == id) {
                side.add(self.read(&row)?);
            }
        }
        Ok(())
    }

    /// The command of a kept run, from its first line alone (at most 64 KiB of it),
    /// read as the history reads its files: a regular file, opened without blocking.
    fn command(&self, row: &RunRow) -> Option<String> {
        Some(self.first_line(row)?.command)
    }

    /// The `run` line of a kept run, from its first line alone (at most 64 KiB of it),
    /// read as the history reads its files: a regular file, opened without blocking.
    fn first_line(&self, row: &RunRow) -> Option<RunInfo> {
        use std::io::{BufRead as _, Read as _};
        let path = self.settings.runs_dir().join(format!("{}.jsonl", row.id));
        let (_, file) = prill_spec::files::open_within(&path, MAX_RUN_FILE_BYTES).ok()?;
        let mut line = String::new();
        std::io::BufReader::new(file.take(FIRST_LINE_BYTES))
            .read_line(&mut line)
            .ok()?;
        StoredRun::parse(&line).ok()?.info
    }

    /// A kept run, read whole within the history's limit: a regular file, opened
    /// without blocking, never more than [`MAX_RUN_FILE_BYTES`].
    fn read(&self, row: &RunRow) -> Result<Side, CompareError> {
        let path = self.settings.runs_dir().join(format!("{}.jsonl", row.id));
        let unreadable = |e: prill_spec::files::Unread| StoredError::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let (_, bytes) =
            prill_spec::files::read_within(&path, MAX_RUN_FILE_BYTES).map_err(unreadable)?;
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let run = StoredRun::parse(&text).map_err(|e| e.in_file(&path))?;
        Ok(Side::new(row.id.clone(), run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> RunRow {
        RunRow {
            id: id.to_owned(),
            started_at: String::new(),
            command: "run".to_owned(),
            commit: None,
            dirty: false,
            branch: None,
            passed: 0,
            failed: 0,
            errored: 0,
            skipped: 0,
            duration: None,
            finished: true,
            cost: None,
            cassettes: None,
        }
    }

    /// An empty project's settings, its runs folder made.
    #[cfg(unix)]
    fn project() -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prill.toml"), "").unwrap();
        let settings = Settings::load_from(
            dir.path(),
            None,
            prill_spec::Env::default(),
            crate::Overrides::default(),
        )
        .unwrap();
        std::fs::create_dir_all(settings.runs_dir()).unwrap();
        (dir, settings)
    }

    /// What reading the kept run `r1` says: its command, and the error reading it.
    #[cfg(unix)]
    fn read_r1(settings: &Settings) -> (Option<String>, String) {
        let kept = Kept {
            settings,
            rows: Some(vec![row("r1")]),
            files: false,
        };
        let error = kept.read(&row("r1")).unwrap_err().to_string();
        (kept.command(&row("r1")), error)
    }

    /// A kept run's file replaced by a named pipe after the index listed it: reading
    /// it, or its first line, neither blocks nor reads forever.
    #[cfg(unix)]
    #[test]
    fn a_kept_run_that_became_a_fifo_is_refused_without_blocking() {
        let (_dir, settings) = project();
        let fifo = settings.runs_dir().join("r1.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (command, e) = read_r1(&settings);
        assert_eq!(command, None);
        assert!(e.contains("named pipe"), "{e}");
    }

    /// A link to `/dev/zero` is refused, not read until memory runs out.
    #[cfg(unix)]
    #[test]
    fn a_kept_run_that_links_to_a_device_is_refused() {
        let (_dir, settings) = project();
        std::os::unix::fs::symlink("/dev/zero", settings.runs_dir().join("r1.jsonl")).unwrap();
        let (command, e) = read_r1(&settings);
        assert_eq!(command, None);
        assert!(e.contains("character device"), "{e}");
    }
}
