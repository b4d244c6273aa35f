//! [`Recorder`]: the reporter that keeps a run in the history. It writes the run's
//! file (`<id>.jsonl`, its `run` line first, then one line per event, written out
//! whenever the run has no event waiting: [`JsonLines::batched`]) and, when the run ends, adds the run to the index
//! from what it saw, so that the index never reads back a file this process just
//! wrote. It keeps one small row per finished unit (no samples), so its memory grows
//! with the units, not with what they reported.

use std::io;
use std::path::{Path, PathBuf};

use prill_report::format::{Line, Record, RunInfo};
use prill_report::{JsonLines, Reporter};
use prill_run::Event;

use crate::History;
use crate::index::{Parsed, UnitRow};

/// Writes a run's file in the history's folder and indexes the run when it ends.
pub struct Recorder {
    lines: JsonLines,
    runs_dir: PathBuf,
    db_path: PathBuf,
    file: String,
    run: Parsed,
    finished: bool,
}

impl Recorder {
    /// A recorder of the run `info` into `runs_dir/<id>.jsonl` (emptied first, its
    /// `run` line written now), indexed into `db_path` when the run ends.
    ///
    /// # Errors
    ///
    /// When the file cannot be created or written.
    pub fn create(runs_dir: &Path, db_path: &Path, info: &RunInfo) -> io::Result<Recorder> {
        let file = format!("{}.jsonl", info.id);
        let lines = JsonLines::create(runs_dir.join(&file))?
            .with_run(info)?
            .batched();
        Ok(Recorder {
            lines,
            runs_dir: runs_dir.to_owned(),
            db_path: db_path.to_owned(),
            file,
            run: Parsed {
                run: info.clone(),
                units: Vec::new(),
                summary: None,
            },
            finished: false,
        })
    }
}

impl Reporter for Recorder {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        let line = Line::from(event);
        self.lines.line(&line)?;
        match line.record {
            // One row per unit: the room for all of them is taken once, not doubled
            // as they come (a doubled vector keeps up to twice the rows' memory).
            Record::RunStarted { units } => {
                let units = usize::try_from(units).unwrap_or(usize::MAX);
                let _ = self.run.units.try_reserve_exact(units);
            }
            Record::UnitFinished(unit) => {
                let row = UnitRow::of(&unit, self.run.units.last());
                self.run.units.push(row);
            }
            Record::RunFinished(summary) => self.run.summary = Some(summary),
            _ => {}
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lines.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.lines.finish()?;
        if !std::mem::replace(&mut self.finished, true) {
            // The index is a cache of the files: when it cannot take the run now, the
            // next `History::open` reads the file instead.
            let _ = History::index_written(&self.runs_dir, &self.db_path, &self.file, &self.run);
        }
        Ok(())
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("file", &self.file)
            .finish()
    }
}
