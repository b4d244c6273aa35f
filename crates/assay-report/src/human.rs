//! The human reporter, for stderr: a live progress bar on a terminal, a line for each
//! unit that failed or errored as it finishes, and the summary line.
//!
//! ```text
//! FAIL greets [http] 1 passed, 2 failed (need 2/3) in 0.52s
//!     text: expected keywords ["hello"], found "bye" (2 samples)
//!     error: interaction 0: connection refused
//! ERROR lookup [direct] 0 passed, 1 errored (need 1/1) in 0.01s
//!     error: interaction 0: connection refused
//! 3 passed, 1 failed, 1 errored, 0 skipped in 1.23s
//! ```
//!
//! [`Verbosity::Verbose`] adds a `PASS` line for each unit that passed, a `SKIP` line
//! for each that did not run, and every sample's status under each unit;
//! [`Verbosity::Quiet`] prints only failures, errors and the summary, with no bar.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//!
//! use assay_report::{Human, HumanOptions, Reporter};
//! use assay_run::{Event, Summary};
//!
//! let mut human = Human::new(std::io::sink(), HumanOptions { color: false, ..HumanOptions::default() });
//! human.event(&Event::RunStarted { units: 0 })?;
//! human.event(&Event::RunFinished(Summary { duration: Duration::from_secs(1), ..Summary::default() }))?;
//! human.finish()?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use assay_run::{Event, Status, Summary, UnitReport};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

use crate::Reporter;
use crate::ansi::{Colour, paint};
use crate::digest::{clean, outcome, problems, remarks, seconds, summary_line, turn_line};

/// How much the human reporter says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verbosity {
    /// Only failures, errors and the summary; no progress bar.
    Quiet,
    /// Failures, errors, the summary, and a progress bar on a terminal.
    #[default]
    Normal,
    /// Also a line for each unit that passed or was skipped, and every sample's status.
    Verbose,
}

/// How the human reporter writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HumanOptions {
    /// How much to say.
    pub verbosity: Verbosity,
    /// Whether to colour `PASS`, `FAIL` and `ERROR`. The caller decides, from
    /// `NO_COLOR` and whether the output is a terminal.
    pub color: bool,
    /// Whether the output is a terminal: only then is there a progress bar.
    pub terminal: bool,
}

type Shared = Arc<Mutex<Box<dyn Write + Send>>>;

/// The human reporter. See the [module documentation](self).
pub struct Human {
    out: Shared,
    options: HumanOptions,
    bar: Option<ProgressBar>,
    counted: Summary,
    started: Option<Instant>,
    summarized: bool,
}

impl Human {
    /// A reporter writing to `out` (normally stderr).
    pub fn new(out: impl Write + Send + 'static, options: HumanOptions) -> Human {
        Human {
            out: Arc::new(Mutex::new(Box::new(out))),
            options,
            bar: None,
            counted: Summary::default(),
            started: None,
            summarized: false,
        }
    }

    /// A reporter writing to stderr.
    pub fn stderr(options: HumanOptions) -> Human {
        Human::new(io::stderr(), options)
    }

    fn start_bar(&mut self, units: usize) {
        if !self.options.terminal || self.options.verbosity == Verbosity::Quiet {
            return;
        }
        let target = ProgressDrawTarget::term_like(Box::new(BarTerm {
            out: Arc::clone(&self.out),
        }));
        let bar = ProgressBar::with_draw_target(Some(units as u64), target);
        let template = if self.options.color {
            "{spinner:.cyan} [{elapsed}] {bar:30.cyan/blue} {pos}/{len} {msg}"
        } else {
            "{spinner} [{elapsed}] {bar:30} {pos}/{len} {msg}"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(self.bar_message());
        bar.enable_steady_tick(Duration::from_millis(100));
        self.bar = Some(bar);
    }

    fn bar_message(&self) -> String {
        format!(
            "{} passed, {} failed, {} errored",
            self.counted.passed, self.counted.failed, self.counted.errored
        )
    }

    /// Writes `text` with the bar out of the way.
    fn write(&self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let write = || {
            let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
            out.write_all(text.as_bytes())?;
            out.flush()
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    fn unit_text(&self, unit: &UnitReport) -> String {
        let verbose = self.options.verbosity == Verbosity::Verbose;
        let color = self.options.color;
        let (word, colour) = match unit.verdict {
            Status::Passed => ("PASS", Colour::Green),
            Status::Failed => ("FAIL", Colour::Red),
            Status::Errored => ("ERROR", Colour::Yellow),
            Status::Skipped | Status::Unscored => ("SKIP", Colour::Dim),
        };
        let shown = matches!(unit.verdict, Status::Failed | Status::Errored) || verbose;
        if !shown {
            return String::new();
        }
        let mut text = format!(
            "{} {} {}",
            paint(word, colour, color),
            clean(&unit.unit.label()),
            outcome(unit)
        );
        if unit.verdict != Status::Skipped || unit.tally.total() > 0 {
            text.push_str(&format!(" in {}", seconds(unit.duration)));
        }
        text.push('\n');
        if verbose {
            for sample in &unit.samples {
                let colour = match sample.status {
                    Status::Passed => Colour::Green,
                    Status::Failed => Colour::Red,
                    Status::Errored => Colour::Yellow,
                    Status::Unscored | Status::Skipped => Colour::Dim,
                };
                let status = sample.status.name();
                text.push_str(&format!(
                    "    sample {}: {} in {}\n",
                    sample.index,
                    paint(status, colour, color),
                    seconds(sample.duration)
                ));
                for turn in sample.interactions.iter().flat_map(|i| &i.call.turns) {
                    text.push_str(&format!("      {}\n", turn_line(turn)));
                }
            }
        }
        for problem in problems(unit) {
            let shown = problem.shown();
            let mut lines = shown.lines();
            if let Some(first) = lines.next() {
                text.push_str(&format!("    {}\n", clean(first)));
            }
            for more in lines {
                text.push_str(&format!("      {}\n", clean(more)));
            }
            let whereabouts = problem.whereabouts(&unit.unit.file);
            if !whereabouts.is_empty() {
                text.push_str(&format!("      {}\n", clean(&whereabouts)));
            }
        }
        for remark in remarks(unit) {
            text.push_str(&format!("    {}\n", clean(&remark)));
        }
        text
    }

    fn summarize(&mut self, summary: &Summary) -> io::Result<()> {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.summarized = true;
        self.write(&format!("{}\n", summary_line(summary)))
    }
}

impl Reporter for Human {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::RunStarted { units } => {
                self.started = Some(Instant::now());
                self.start_bar(*units);
                Ok(())
            }
            Event::UnitStarted { .. } | Event::SampleFinished { .. } => Ok(()),
            Event::UnitFinished(unit) => {
                self.counted.add(unit.verdict);
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    bar.set_message(self.bar_message());
                }
                self.write(&self.unit_text(unit))
            }
            Event::RunFinished(summary) => self.summarize(summary),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.summarized && self.started.is_some() {
            // The stream ended without a summary: the run did not complete.
            let summary = Summary {
                cancelled: true,
                duration: self.started.map(|s| s.elapsed()).unwrap_or_default(),
                ..self.counted
            };
            self.summarize(&summary)?;
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush()
    }
}

impl fmt::Debug for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Human")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The progress bar's terminal: the reporter's own writer, with ANSI cursor moves.
struct BarTerm {
    out: Shared,
}

impl BarTerm {
    fn put(&self, text: &str) -> io::Result<()> {
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_all(text.as_bytes())
    }

    fn cursor(&self, n: usize, code: char) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.put(&format!("\x1b[{n}{code}"))
    }
}

impl TermLike for BarTerm {
    fn width(&self) -> u16 {
        console::Term::stderr()
            .size_checked()
            .map_or(80, |(_, width)| width)
    }

    fn height(&self) -> u16 {
        console::Term::stderr()
            .size_checked()
            .map_or(20, |(height, _)| height)
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'D')
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.put(&format!("{s}\n"))
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.put(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.put("\r\x1b[2K")
    }

    fn flush(&self) -> io::Result<()> {
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush()
    }
}

impl fmt::Debug for BarTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BarTerm")
    }
}
