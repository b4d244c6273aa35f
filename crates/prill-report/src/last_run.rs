//! [`LastRunReport`]: writes the run's verdicts to `.prill/last-run.json`
//! ([`prill_run::last_run::LastRun`]), which `--rerun-failed` reads.
//!
//! It writes at [`Reporter::finish`] through an [`Output`], so the file is replaced
//! atomically, and a cancelled run (or one stopped by `--fail-fast`) still gets one,
//! with its units not run marked `skipped`.

use std::io;
use std::path::Path;
use std::sync::Arc;

use prill_run::Event;
use prill_run::last_run::LAST_RUN_VERSION;
use serde::Serialize;

use crate::Reporter;
use crate::output::Output;

/// Collects each unit's verdict and writes the last run at the end.
#[derive(Debug)]
pub struct LastRunReport {
    out: Option<Output>,
    units: Vec<Row>,
}

/// What is kept of a finished unit until the run ends: its
/// [`prill_run::last_run::LastUnit`], small (a report keeps one for every unit), its
/// file and connection shared with the row before when they are the same.
#[derive(Debug)]
struct Row {
    case_id: Box<str>,
    file: Arc<Path>,
    name: Box<str>,
    connection: Arc<str>,
    verdict: &'static str,
}

/// A [`prill_run::last_run::LastRun`] of the rows, written as it serializes: the same
/// fields in the same order.
#[derive(Serialize)]
struct Written<'a> {
    schema_version: u32,
    units: Units<'a>,
}

struct Units<'a>(&'a [Row]);

impl Serialize for Units<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|row| WrittenUnit {
            case_id: &row.case_id,
            file: &row.file,
            name: &row.name,
            connection: &row.connection,
            verdict: row.verdict,
        }))
    }
}

/// A [`prill_run::last_run::LastUnit`], borrowed.
#[derive(Serialize)]
struct WrittenUnit<'a> {
    case_id: &'a str,
    file: &'a Path,
    name: &'a str,
    connection: &'a str,
    verdict: &'a str,
}

impl LastRunReport {
    /// A report written to `out` (usually `Output::file(".prill/last-run.json")`).
    pub fn new(out: Output) -> LastRunReport {
        LastRunReport {
            out: Some(out),
            units: Vec::new(),
        }
    }
}

impl Reporter for LastRunReport {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            // Room for every unit at once, not doubled as they come.
            Event::RunStarted { units } => {
                let _ = self.units.try_reserve_exact(*units);
            }
            Event::UnitFinished(report) => {
                let unit = &report.unit;
                let previous = self.units.last();
                let shown = prill_run::last_run::shown_file(&unit.file);
                let file = match previous {
                    Some(p) if *p.file == *shown => Arc::clone(&p.file),
                    _ => Arc::from(shown),
                };
                let connection = match previous {
                    Some(p) if *p.connection == *unit.connection => Arc::clone(&p.connection),
                    _ => Arc::from(unit.connection.as_str()),
                };
                self.units.push(Row {
                    case_id: unit.case_id.as_str().into(),
                    file,
                    name: unit.name.as_str().into(),
                    connection,
                    verdict: report.verdict.name(),
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.out.take() {
            Some(out) => {
                let units = std::mem::take(&mut self.units);
                let written = Written {
                    schema_version: LAST_RUN_VERSION,
                    units: Units(&units),
                };
                out.commit_with(|w| {
                    serde_json::to_writer_pretty(&mut *w, &written)?;
                    w.write_all(b"\n")
                })
            }
            None => Ok(()),
        }
    }
}
