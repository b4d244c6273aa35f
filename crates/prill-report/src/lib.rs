//! Reporters: views of the engine's event stream.
//!
//! The engine ([`prill_run::engine`]) sends [`Event`]s as it runs: the run starts, units
//! start, samples finish, units get their verdicts, the run finishes. A [`Reporter`]
//! consumes those events in order; [`Reporters`] feeds one stream to several at once,
//! and an error in one of them is returned to the caller without stopping the others.
//!
//! | reporter | output | written |
//! |---|---|---|
//! | [`Human`] | progress bar naming the cases in flight (a line per finished unit where there is no terminal), `FAIL` lines with where each failure happened, transcripts, and the summary line, for stderr | as events happen |
//! | [`JsonReport`] | one JSON document: `{"schema_version": 1, "summary": ..., "units": [...]}` | at [`Reporter::finish`] |
//! | [`JsonLines`] | one JSON object per event, tagged by `event` | each line flushed at once |
//! | [`Junit`] | JUnit XML: a `<testsuite>` per file, a `<testcase>` per unit with its `file`, `line` and, when it did not pass, the transcript of its first failing sample | at [`Reporter::finish`] |
//! | [`Github`] | GitHub Actions annotations: an `::error file=...,line=...,col=...::` line per failing check or error, for stdout ([`github::diagnostics`] does the same for invalid test files) | as each unit finishes |
//! | [`HtmlReport`] | one self-contained HTML page: summary, settings, a filterable and sortable table of cases, failures with their transcripts, judges' verdicts, charts ([`html`]) | at [`Reporter::finish`] |
//! | [`Markdown`] | a summary for `$GITHUB_STEP_SUMMARY` | at [`Reporter::finish`] |
//! | [`LastRunReport`] | `.prill/last-run.json`, each unit's verdict for `--rerun-failed` | at [`Reporter::finish`] |
//! | [`MatrixReport`] | the `--model a,b` table: one row per case, one column per model | at [`Reporter::finish`] |
//!
//! The JSON and JSON Lines reports are a stable, versioned format of their own,
//! [`format`](mod@format): the reporters convert the engine's events into its types, so a change
//! inside the engine cannot change what CI reads; each document carries
//! `schema_version`, and `schemas/report.schema.json` and `schemas/report-line.schema.json`
//! are their JSON Schemas. Every reporter works on any event stream: `prill run`'s, and
//! a Rust suite's (`prill_run::run_test_suite` with `SuiteOptions::events`).
//!
//! The reporters that write at the end take an [`Output`]: an in-memory or other
//! writer, a file that is written to a temporary file beside it and renamed into place
//! (so a partial file never looks complete, and an earlier report is removed when the
//! run starts), a FIFO or device written through (`/dev/stdout`), or a file appended
//! to. [`JsonLines`] streams instead, so that nothing already reported is lost if the
//! process dies. Every error writing a report is returned, so the caller can make the
//! run fail: a report that could not be written never passes silently.
//!
//! A stored run (a history file, a `--jsonl` stream, a JSON report, read by
//! [`stored::StoredRun`]) becomes the engine's events again ([`rebuild`]), so every
//! reporter writes its report from a file as it would during the run; the shards of a
//! suite split with `--shard` are merged into one run the same way.
//!
//! [`show`] prints the transcripts of a saved JSON report, with the same renderer as
//! the human reporter's ([`transcript`]).
//!
//! Every human-facing total is phrased by [`summary_line`]:
//! `3 passed, 1 failed, 0 errored, 0 skipped in 1.23s`, with ` (cancelled)` after a
//! cancelled run and ` (stopped after the first failure)` after one `--fail-fast`
//! stopped. CI tooling reads the `N passed, N failed` part, so it never changes.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//!
//! use prill_report::{Human, HumanOptions, JsonReport, Output, Reporters};
//! use prill_run::{Event, Summary};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("report.json");
//!
//! let mut reporters = Reporters::new();
//! reporters
//!     .push("human", Human::new(std::io::sink(), HumanOptions::default()))
//!     .push("json", JsonReport::new(Output::file(&path)?));
//!
//! let summary = Summary { duration: Duration::from_millis(20), ..Summary::default() };
//! for event in [Event::RunStarted { units: 0 }, Event::RunFinished(summary)] {
//!     for error in reporters.event(&event) {
//!         eprintln!("{error}");
//!     }
//! }
//! for error in reporters.finish() {
//!     eprintln!("{error}");
//! }
//!
//! let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
//! assert_eq!(report["schema_version"], 1);
//! assert_eq!(report["summary"]["passed"], 0);
//! assert_eq!(report["units"], serde_json::json!([]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ansi;
mod ci;
mod digest;
pub mod format;
pub mod github;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod last_run;
pub mod markdown;
pub mod matrix;
pub mod output;
pub mod rebuild;
pub mod show;
mod splice;
pub mod stored;
pub mod transcript;

use std::fmt;
use std::io;

use prill_run::Event;

pub mod assess;
pub mod otel;

pub use digest::{summary_line, summary_phrase};
pub use github::Github;
pub use html::HtmlReport;
pub use human::{Human, HumanOptions, Verbosity};
pub use json::{JsonLines, JsonReport};
pub use junit::Junit;
pub use last_run::LastRunReport;
pub use markdown::Markdown;
pub use matrix::MatrixReport;
pub use output::Output;

/// Something that consumes the engine's events.
pub trait Reporter {
    /// Takes one event, in the order the engine sent it.
    fn event(&mut self, event: &Event) -> io::Result<()>;

    /// No event is waiting: push out what [`Reporter::event`] has buffered, so that
    /// what is on disk is never behind more than the events handled since the engine
    /// last paused. A reporter that writes each event through, or only at the end,
    /// has nothing to do (the default).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// The stream is over: write whatever is written at the end, and flush. Calling it
    /// again does nothing.
    fn finish(&mut self) -> io::Result<()>;
}

impl<R: Reporter + ?Sized> Reporter for Box<R> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        (**self).event(event)
    }

    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
}

/// A reporter that failed, and why.
#[derive(Debug, thiserror::Error)]
#[error("the {reporter} reporter failed: {error}")]
pub struct ReportError {
    /// The name the reporter was given in [`Reporters::push`].
    pub reporter: String,
    /// What its failure means for the run.
    pub stake: Stake,
    /// What went wrong.
    pub error: io::Error,
}

impl ReportError {
    /// Whether this failure fails the run whatever the tests did: a report the user
    /// asked for ([`Stake::Required`]) is missing.
    pub fn fails_the_run(&self) -> bool {
        self.stake == Stake::Required
    }
}

/// What a reporter's failure means for the run, set when it is added
/// ([`Reporters::push_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stake {
    /// A report the user asked for (a file, `--jsonl`, stdout for a tool): if it cannot
    /// be written the run fails, whatever the tests did.
    Required,
    /// Output for a person watching (the terminal on stderr): a failure, such as a
    /// closed pipe, is an error message, not a failed run.
    Shown,
    /// Bookkeeping beside the run (the last run, the history): a failure is a warning
    /// that says what is lost, here `lost` ("--rerun-failed will not know this run").
    Kept {
        /// What the user loses, in words.
        lost: &'static str,
    },
}

/// Several reporters fed one event stream.
///
/// A reporter that returns an error is reported once, in the list the call returns,
/// and gets no further events and no `finish` (a file reporter's temporary file is
/// then removed, so no partial report is left behind). The others carry on.
#[derive(Default)]
pub struct Reporters {
    entries: Vec<Entry>,
}

struct Entry {
    name: String,
    stake: Stake,
    reporter: Box<dyn Reporter + Send>,
    broken: bool,
    finished: bool,
}

impl Reporters {
    /// No reporters yet.
    pub fn new() -> Reporters {
        Reporters::default()
    }

    /// Adds a reporter whose failure fails the run ([`Stake::Required`]); `name`
    /// (`json`, `junit`, ...) names it in errors.
    pub fn push(
        &mut self,
        name: impl Into<String>,
        reporter: impl Reporter + Send + 'static,
    ) -> &mut Reporters {
        self.push_with(name, reporter, Stake::Required)
    }

    /// Adds a reporter, with what its failure means for the run.
    pub fn push_with(
        &mut self,
        name: impl Into<String>,
        reporter: impl Reporter + Send + 'static,
        stake: Stake,
    ) -> &mut Reporters {
        self.entries.push(Entry {
            name: name.into(),
            stake,
            reporter: Box::new(reporter),
            broken: false,
            finished: false,
        });
        self
    }

    /// How many reporters there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Feeds `event` to every working reporter; returns the errors of those that failed.
    pub fn event(&mut self, event: &Event) -> Vec<ReportError> {
        self.each(|reporter| reporter.event(event))
    }

    /// Flushes every working reporter ([`Reporter::flush`]); returns the errors of those
    /// that failed.
    pub fn flush(&mut self) -> Vec<ReportError> {
        self.each(|reporter| reporter.flush())
    }

    /// Finishes every working reporter; returns the errors of those that failed.
    /// Calling it again does nothing.
    pub fn finish(&mut self) -> Vec<ReportError> {
        let errors = self.each(|reporter| reporter.finish());
        for entry in &mut self.entries {
            entry.finished = true;
        }
        errors
    }

    fn each(
        &mut self,
        mut f: impl FnMut(&mut (dyn Reporter + Send)) -> io::Result<()>,
    ) -> Vec<ReportError> {
        let mut errors = Vec::new();
        for entry in &mut self.entries {
            if entry.broken || entry.finished {
                continue;
            }
            if let Err(error) = f(entry.reporter.as_mut()) {
                entry.broken = true;
                errors.push(ReportError {
                    reporter: entry.name.clone(),
                    stake: entry.stake,
                    error,
                });
            }
        }
        errors
    }
}

impl fmt::Debug for Reporters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.name))
            .finish()
    }
}
