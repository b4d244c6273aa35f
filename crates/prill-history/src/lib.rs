//! The run history: the runs `prill run` and `prill assess` keep as JSON Lines files
//! (`.prill/runs/<id>.jsonl`, a `run` line then the run's events, in the versioned
//! report format `prill_report::format`), and an SQLite index of them
//! (`.prill/history.sqlite`) that lists runs and a case's history fast over thousands
//! of runs.
//!
//! The files are the record; the index is only a cache of them. [`History::open`]
//! brings it up to date (a new or changed file, by its size or its time of change, is
//! read again, a removed one dropped), and
//! an index that cannot be read (a process killed while writing it, a file that is not
//! SQLite) is thrown away and rebuilt from the files. Each update is one transaction
//! that holds the index's write lock from its start, so a reader never sees half a
//! run and processes that update it at once (runs ending together) take turns; a run
//! and its units are indexed once, however many processes index it and however many
//! files hold it (a copy beside the original is read, and adds nothing).
//!
//! Only regular files are read (a symbolic link is followed to one), each within
//! [`MAX_RUN_FILE_BYTES`], and nothing in the folder can make opening the history
//! block: a FIFO, a device or anything else named `*.jsonl` is not opened, and is
//! listed in [`History::skipped`] for the caller to show. Each unit is indexed with its metrics (the mean
//! latency and time to first token of its interactions, its tokens, its cost), which
//! [`History::case_history`] gives; [`History::prune`] and
//! [`History::prune_older_than`] remove runs by count and by age.
//!
//! ```
//! use prill_history::History;
//!
//! let dir = tempfile::tempdir()?;
//! let runs = dir.path().join("runs");
//! std::fs::create_dir_all(&runs)?;
//! std::fs::write(
//!     runs.join("20261125T001530.042Z-3f9a2c.jsonl"),
//!     concat!(
//!         r#"{"schema_version":1,"event":"run","id":"20261125T001530.042Z-3f9a2c","started_at":"2026-11-25T00:15:30.042Z","command":"run","git":null,"settings":{"paths":["."],"filters":[],"tags":[],"partition":null,"connections":[],"samples":null,"models":[],"judge":null,"fail_fast":false,"rerun_failed":false}}"#, "\n",
//!         r#"{"schema_version":1,"event":"run_started","units":1}"#, "\n",
//!     ),
//! )?;
//! let history = History::open(&runs, &dir.path().join("history.sqlite"))?;
//! let listed = history.runs()?;
//! assert_eq!(listed.len(), 1);
//! assert!(!listed[0].finished, "a run without its run_finished line did not finish");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod compare;
mod files;
mod index;
mod recorder;
pub mod render;
mod stability;
pub mod view;

use std::path::{Path, PathBuf};

pub use files::{MAX_RUN_FILE_BYTES, Skipped};
pub use index::{CaseRow, History, RunRow};
pub use recorder::Recorder;
pub use stability::{CaseStability, RECENT_RUNS};

/// What went wrong with the history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A file or folder of the history could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The index could not be used even after it was rebuilt.
    #[error("the history's index {path}: {source}")]
    Index {
        /// The index file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
}

impl HistoryError {
    fn io(path: &Path, source: std::io::Error) -> HistoryError {
        HistoryError::Io {
            path: path.to_owned(),
            source,
        }
    }
}
