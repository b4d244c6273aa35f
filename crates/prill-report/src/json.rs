//! Machine-readable reports: one JSON document at the end ([`JsonReport`]), or one JSON
//! object per event as it happens ([`JsonLines`]).
//!
//! Both are built from the engine's events through the stable, versioned types of
//! [`crate::format`] ([`Report`] and [`Line`]), never by serializing the engine's own
//! types; each carries `schema_version` (now 1), and their JSON Schemas are
//! `schemas/report.schema.json` and `schemas/report-line.schema.json`.
//!
//! The document is `{"schema_version": 1, "summary": Summary, "units": [Unit, ...]}` with
//! the units in the order they finished; durations are seconds:
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "summary": {"passed": 1, "failed": 1, "errored": 0, "skipped": 0, "cancelled": false, "duration": 1.5},
//!   "units": [
//!     {"unit": {"case_id": "...", "name": "greets", "file": "cases/a.hocon", "dialect": "data-driven",
//!               "connection": "http", "target": "hello"},
//!      "verdict": "failed", "success_ratio": "2/3", "tally": {"passed": 1, "failed": 2, "errored": 0},
//!      "samples": [{"index": 0, "status": "failed", "duration": 0.4, "interactions": [...], "error": null}],
//!      "duration": 1.2}
//!   ]
//! }
//! ```
//!
//! A JSON Lines stream has one [`Line`] per event, tagged by `event` (`run_started`,
//! `unit_started`, `sample_finished`, `unit_finished`, `run_finished`):
//!
//! ```json
//! {"schema_version":1,"event":"run_started","units":2}
//! {"schema_version":1,"event":"unit_finished","unit":{...},"verdict":"passed",...}
//! {"schema_version":1,"event":"run_finished","passed":2,"failed":0,"errored":0,"skipped":0,"cancelled":false,"duration":0.8}
//! ```
//!
//! # Example
//!
//! ```
//! use std::io::Read;
//!
//! use prill_report::{JsonLines, Reporter};
//! use prill_run::Event;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("events.jsonl");
//! let mut lines = JsonLines::create(&path)?;
//! lines.event(&Event::RunStarted { units: 2 })?;
//! // Already on disk, before the run goes on.
//! assert_eq!(
//!     std::fs::read_to_string(&path)?,
//!     "{\"schema_version\":1,\"event\":\"run_started\",\"units\":2}\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

use prill_run::Event;

use crate::Reporter;
use crate::digest::Collected;
use crate::format::{Line, Report};
use crate::output::{Output, Resolved, annotate, open_stream, resolve};
use crate::splice::Splicer;

/// One JSON document, `{"schema_version": 1, "summary": ..., "units": [...]}`, a
/// [`Report`], written at
/// [`Reporter::finish`]. A cancelled run still gets one, with the units that finished.
#[derive(Debug)]
pub struct JsonReport {
    output: Option<Output>,
    collected: Collected,
}

impl JsonReport {
    /// A report written to `output` at the end.
    pub fn new(output: Output) -> JsonReport {
        JsonReport {
            output: Some(output),
            collected: Collected::default(),
        }
    }

    /// The document for what has been seen so far.
    pub fn document(&self) -> Report {
        Report::new(&self.collected.summary(), &self.collected.units)
    }

    /// The document for what has been seen so far, as the pretty JSON written at the
    /// end.
    pub fn render(&self) -> io::Result<Vec<u8>> {
        let document = self.document();
        let mut bytes = serde_json::to_vec_pretty(&document)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

impl Reporter for JsonReport {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.collected.event(event);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.output.take() {
            Some(output) => output.commit(&self.render()?),
            None => Ok(()),
        }
    }
}

/// One JSON object per event, a [`Line`], each line written and flushed as the event arrives, so a
/// crash loses nothing already reported.
///
/// [`JsonLines::batched`] lines are kept in a buffer until [`Reporter::flush`] (which a
/// run calls whenever no event is waiting), so a busy run writes many lines at once
/// instead of one system call each; a line is still never written in part.
pub struct JsonLines {
    out: io::BufWriter<Box<dyn Write + Send>>,
    batched: bool,
    splicer: Splicer,
    scratch: Vec<u8>,
}

impl JsonLines {
    /// Lines written to `writer`, which is flushed after each.
    pub fn new(writer: impl Write + Send + 'static) -> JsonLines {
        let out: Box<dyn Write + Send> = Box::new(writer);
        JsonLines {
            out: io::BufWriter::with_capacity(64 * 1024, out),
            batched: false,
            splicer: Splicer::default(),
            scratch: Vec::new(),
        }
    }

    /// These lines, written out at [`Reporter::flush`] and [`Reporter::finish`] rather
    /// than after each event.
    pub fn batched(mut self) -> JsonLines {
        self.batched = true;
        self
    }

    /// Lines written to the file at `path`: a regular file (through its symlinks, its
    /// parent directories created) is emptied first, so no line of an earlier run
    /// remains; a FIFO or a device (`/dev/stdout`) is written through.
    pub fn create(path: impl AsRef<Path>) -> io::Result<JsonLines> {
        Ok(JsonLines::new(open_stream(path.as_ref())?))
    }

    /// Writes `run` as the first line (`{"event": "run", ...}`): what a run kept in the
    /// history and `prill run --jsonl` start with, so that the file says which run (and
    /// which suite, for `prill report merge`) it is on its own.
    pub fn with_run(mut self, run: &crate::format::RunInfo) -> io::Result<JsonLines> {
        let mut line = serde_json::to_vec(&Line {
            schema_version: crate::format::SCHEMA_VERSION,
            record: crate::format::Record::Run(run.clone()),
        })?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()?;
        Ok(self)
    }

    /// Lines added to the end of the file at `path`, created if missing.
    pub fn append(path: impl AsRef<Path>) -> io::Result<JsonLines> {
        let path = path.as_ref();
        let mut options = OpenOptions::new();
        options.append(true);
        if matches!(resolve(path)?, Resolved::File(_)) {
            options.create(true);
        }
        let file = options
            .open(path)
            .map_err(|e| annotate(e, "cannot open", path))?;
        Ok(JsonLines::new(file))
    }
}

/// The most room [`JsonLines`] keeps from one line to the next.
const SCRATCH_KEPT: usize = 1024 * 1024;

/// The bytes of the answers a `sample_finished` line holds: most of such a line, when
/// they are long.
fn answers_len(line: &Line) -> usize {
    match &line.record {
        crate::format::Record::SampleFinished { sample, .. } => sample
            .interactions
            .iter()
            .filter_map(|i| i.answer.as_ref().map(String::len))
            .sum(),
        _ => 0,
    }
}

impl JsonLines {
    /// Writes `line` and flushes: what [`Reporter::event`] does with an event, for a
    /// caller that has made the line already.
    pub fn line(&mut self, line: &Line) -> io::Result<()> {
        // One write per line, so a reader never sees half a line followed by another.
        // A unit's samples are serialized once, for their `sample_finished` lines, and
        // every line into the same buffer, which keeps its room from line to line.
        self.scratch.clear();
        // Room for a sample's long answers at once, rather than by doubling (which
        // holds the old and the new buffer together, and half of the new one unused).
        self.scratch.reserve(answers_len(line).saturating_add(4096));
        self.splicer.write(line, &mut self.scratch)?;
        self.scratch.push(b'\n');
        self.out.write_all(&self.scratch)?;
        // A long answer's room is not kept for the lines after it.
        if self.scratch.capacity() > SCRATCH_KEPT {
            self.scratch = Vec::new();
        }
        if self.batched {
            Ok(())
        } else {
            self.out.flush()
        }
    }
}

impl Reporter for JsonLines {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.line(&Line::from(event))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl fmt::Debug for JsonLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JsonLines")
    }
}
