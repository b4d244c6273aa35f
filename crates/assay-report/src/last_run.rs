//! [`LastRunReport`]: writes the run's verdicts to `.assay/last-run.json`
//! ([`assay_run::last_run::LastRun`]), which `--rerun-failed` reads.
//!
//! It writes at [`Reporter::finish`] through an [`Output`], so the file is replaced
//! atomically, and a cancelled run (or one stopped by `--fail-fast`) still gets one,
//! with its units not run marked `skipped`.

use std::io;

use assay_run::Event;
use assay_run::last_run::{LastRun, LastUnit};

use crate::Reporter;
use crate::output::Output;

/// Collects each unit's verdict and writes the last run at the end.
#[derive(Debug)]
pub struct LastRunReport {
    out: Option<Output>,
    units: Vec<LastUnit>,
}

impl LastRunReport {
    /// A report written to `out` (usually `Output::file(".assay/last-run.json")`).
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
            Event::UnitFinished(unit) => self.units.push(LastUnit::of(unit)),
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.out.take() {
            Some(out) => {
                let run = LastRun::new(std::mem::take(&mut self.units));
                out.commit_with(|w| run.write_json(w))
            }
            None => Ok(()),
        }
    }
}
