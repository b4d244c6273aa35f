//! The human reporter, for stderr: a live progress bar on a terminal naming the cases in
//! flight, a line for each unit as it finishes (on a terminal only for those that
//! failed or errored; in a CI log, where there is no bar, for every one, as nextest
//! does), and the summary line.
//!
//! ```text
//! PASS [0.42s] tests/suite.yaml::greets [openai]
//! FAIL [0.52s] tests/suite.yaml::farewell [openai] 1 passed, 2 failed (need 2/3)
//!     text: expected keywords ["hello"], found "bye" (2 samples)
//!       at tests/suite.yaml:12:22, interaction 0, samples 0, 2
//! ERROR [7ms] tests/lookup.yaml [http] 0 passed, 1 errored (need 1/1)
//!     error: interaction 0: connection refused
//!       interaction 0, sample 0
//! 3 passed, 1 failed, 1 errored, 0 skipped in 1.23s
//! ```
//!
//! Each failure or error says where it happened: the check's `file:line:col` in the
//! spec, the interaction (from 0, as the spec's `interactions[1]` counts) and the
//! samples that had it. [`Verbosity::Verbose`] adds every sample, in index order, with
//! its own failures and errors under it, and the transcript of the first failing sample
//! ([`transcript`](crate::transcript)), which [`HumanOptions::transcripts`] asks for
//! alone; [`Verbosity::Quiet`] prints only failures, errors and the summary, with no
//! bar.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//!
//! use prill_report::{Human, HumanOptions, Reporter};
//! use prill_run::{Event, Summary};
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

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use prill_run::{Event, Status, Summary, UnitId, UnitReport, WorkersReady};

use crate::Reporter;
use crate::ansi::{Colour, paint};
use crate::digest::{
    Problem, by_index, clean, outcome, problems, remarks, sample_problems, seconds, summary_line,
    turn_line, unit_label,
};

/// How much the human reporter says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verbosity {
    /// Only failures, errors and the summary; no progress bar.
    Quiet,
    /// Failures, errors, the summary, and a progress bar on a terminal; elsewhere (a CI
    /// log) a line for every unit as it finishes.
    #[default]
    Normal,
    /// Also a line for each unit that passed or was skipped, every sample's status and
    /// messages, and the transcript of each failure.
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
    /// Whether the output is a terminal: only then is there a progress bar, and
    /// without one every finished unit gets its line.
    pub terminal: bool,
    /// Whether to print the transcript of the first failing sample of every unit that
    /// failed or errored (`--show-transcript`; [`Verbosity::Verbose`] prints it too).
    pub transcripts: bool,
}

type Shared = Arc<Mutex<Box<dyn Write + Send>>>;

/// The in-flight cases the bar's message names at most; the rest are counted.
const NAMED_IN_FLIGHT: usize = 3;

/// The human reporter. See the [module documentation](self).
pub struct Human {
    out: Shared,
    options: HumanOptions,
    bar: Option<ProgressBar>,
    counted: Summary,
    in_flight: Vec<UnitId>,
    started: Option<Instant>,
    summarized: bool,
    /// How many answers came from the model response cache.
    cached: usize,
}

impl Human {
    /// A reporter writing to `out` (normally stderr).
    pub fn new(out: impl Write + Send + 'static, options: HumanOptions) -> Human {
        Human {
            out: Arc::new(Mutex::new(Box::new(out))),
            options,
            bar: None,
            counted: Summary::default(),
            in_flight: Vec::new(),
            started: None,
            cached: 0,
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
        // Two lines: the bar and the totals, then the cases in flight, cut to fit.
        let template = if self.options.color {
            "{spinner:.cyan} [{elapsed}] {bar:30.cyan/blue} {pos}/{len} {prefix}\n{wide_msg}"
        } else {
            "{spinner} [{elapsed}] {bar:30} {pos}/{len} {prefix}\n{wide_msg}"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(totals(&self.counted));
        bar.set_message(in_flight(&self.in_flight));
        bar.enable_steady_tick(Duration::from_millis(100));
        self.bar = Some(bar);
    }

    fn update_bar(&self) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(totals(&self.counted));
            bar.set_message(in_flight(&self.in_flight));
        }
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

    fn summarize(&mut self, summary: &Summary) -> io::Result<()> {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.summarized = true;
        let mut text = format!("{}\n", summary_line(summary));
        if self.cached > 0 {
            let answers = if self.cached == 1 {
                "answer"
            } else {
                "answers"
            };
            text.push_str(&format!(
                "{} {answers} from the model response cache (no tokens spent; --no-cache asks the providers)\n",
                self.cached
            ));
        }
        self.write(&text)
    }
}

/// The line that says warm workers are ready: `neuro-san: 2 warm workers ready after
/// 4.3s`, and how many could not start.
fn workers_line(workers: &WorkersReady) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let failed = if workers.failed > 0 {
        format!(
            "; {} could not start (the cases that need one say why)",
            workers.failed
        )
    } else {
        String::new()
    };
    format!(
        "{}: {} warm worker{} ready after {}{failed}\n",
        workers.what,
        workers.ready,
        plural(workers.ready),
        seconds(workers.took)
    )
}

/// The totals so far, beside the bar: `2 passed, 1 failed, 0 errored`, and `, 1
/// inconclusive` once there is one.
pub(crate) fn totals(counted: &Summary) -> String {
    let inconclusive = match counted.inconclusive {
        0 => String::new(),
        n => format!(", {n} inconclusive"),
    };
    format!(
        "{} passed, {} failed, {} errored{inconclusive}",
        counted.passed, counted.failed, counted.errored
    )
}

/// The line under the bar: the cases in flight, the longest-running first (`running:
/// greets [http], lookup [direct] +4`); empty when none is.
pub(crate) fn in_flight(units: &[UnitId]) -> String {
    if units.is_empty() {
        return String::new();
    }
    let names: Vec<String> = units
        .iter()
        .take(NAMED_IN_FLIGHT)
        .map(|u| clean(&u.label()).into_owned())
        .collect();
    let mut line = format!("running: {}", names.join(", "));
    if units.len() > NAMED_IN_FLIGHT {
        line.push_str(&format!(" +{}", units.len() - NAMED_IN_FLIGHT));
    }
    line
}

/// What the human reporter prints for one finished unit, as `options` ask: its line
/// (`FAIL [0.52s] file::case [http] 1 passed, 2 failed (need 2/3)`), each failure and
/// error with where it happened, what the calls said beyond their answers, and the
/// transcript asked for. Empty for a unit these options do not show (a pass on a
/// terminal, without `-v`). The `cargo test` harness prints it for its failures.
pub fn unit_text(unit: &UnitReport, options: HumanOptions) -> String {
    let verbose = options.verbosity == Verbosity::Verbose;
    let color = options.color;
    let failing = matches!(
        unit.verdict,
        Status::Failed | Status::Errored | Status::Inconclusive
    );
    let every_unit = options.verbosity == Verbosity::Normal && !options.terminal;
    if !(failing || verbose || every_unit) {
        return String::new();
    }
    let (word, colour) = match unit.verdict {
        Status::Passed => ("PASS", Colour::Green),
        Status::Failed => ("FAIL", Colour::Red),
        Status::Errored => ("ERROR", Colour::Yellow),
        Status::Inconclusive => ("INCONCLUSIVE", Colour::Yellow),
        Status::Skipped | Status::Unscored => ("SKIP", Colour::Dim),
    };
    let ran = unit.verdict != Status::Skipped || unit.tally.total() > 0;
    let mut text = paint(word, colour, color);
    if ran {
        text.push_str(&format!(" [{}]", seconds(unit.duration)));
    }
    let id = &unit.unit;
    text.push(' ');
    text.push_str(&unit_label(
        &id.file.to_string_lossy(),
        &id.name,
        &id.connection,
    ));
    if failing || verbose || !ran {
        text.push_str(&format!(" {}", outcome(unit)));
    }
    if let Some(entry) = &unit.quarantine {
        text.push_str(&format!(" [{}]", crate::digest::quarantine_note(entry)));
    }
    match prill_run::events::Taped::source(&unit.samples) {
        prill_run::events::Source::Live => {}
        prill_run::events::Source::Replayed => text.push_str(" (replayed)"),
        prill_run::events::Source::Mixed => text.push_str(" (partly replayed)"),
    }
    text.push('\n');
    if !(failing || verbose) {
        // A pass or a skip in a CI log: its line alone.
        return text;
    }
    if verbose {
        samples_text(&mut text, unit, color);
    } else {
        for problem in problems(unit) {
            problem_text(&mut text, &problem, unit, "    ");
        }
    }
    for remark in remarks(unit) {
        text.push_str(&format!("    {}\n", clean(&remark)));
    }
    if failing
        && (options.transcripts || verbose)
        && let Some(sample) = crate::transcript::first_failing(unit)
    {
        text.push_str("    transcript:\n");
        for line in crate::transcript::render(sample, &unit.unit.file).lines() {
            text.push_str(&format!("      {line}\n"));
        }
    }
    text
}

/// Every sample in index order: its status, its own failures and errors with where
/// they happened, and each model call of its tool loops.
fn samples_text(text: &mut String, unit: &UnitReport, color: bool) {
    for sample in by_index(unit) {
        let colour = match sample.status {
            Status::Passed => Colour::Green,
            Status::Failed => Colour::Red,
            Status::Errored => Colour::Yellow,
            Status::Unscored | Status::Inconclusive | Status::Skipped => Colour::Dim,
        };
        text.push_str(&format!(
            "    sample {}: {} in {}\n",
            sample.index,
            paint(sample.status.name(), colour, color),
            seconds(sample.duration)
        ));
        for problem in sample_problems(sample) {
            problem_text(text, &problem, unit, "      ");
        }
        for turn in sample.interactions.iter().flat_map(|i| &i.call.turns) {
            text.push_str(&format!("      {}\n", turn_line(turn)));
        }
    }
}

/// A problem's message at `indent`, its further lines and where it happened under it.
fn problem_text(text: &mut String, problem: &Problem, unit: &UnitReport, indent: &str) {
    let shown = problem.shown();
    let mut lines = shown.lines();
    if let Some(first) = lines.next() {
        text.push_str(&format!("{indent}{}\n", clean(first)));
    }
    for more in lines {
        text.push_str(&format!("{indent}  {}\n", clean(more)));
    }
    let whereabouts = problem.whereabouts(&unit.unit.file);
    if !whereabouts.is_empty() {
        text.push_str(&format!("{indent}  {}\n", clean(&whereabouts)));
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
            Event::UnitStarted { unit } => {
                if self.bar.is_some() {
                    self.in_flight.push(unit.clone());
                    self.update_bar();
                }
                Ok(())
            }
            Event::SampleFinished { .. } => Ok(()),
            Event::UnitFinished(unit) => {
                self.counted.add(unit.verdict);
                self.cached += unit
                    .samples
                    .iter()
                    .flat_map(|s| &s.interactions)
                    .filter(|i| i.call.cached)
                    .count();
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    if let Some(at) = self.in_flight.iter().position(|u| *u == unit.unit) {
                        self.in_flight.remove(at);
                    }
                    self.update_bar();
                }
                self.write(&unit_text(unit, self.options))
            }
            Event::WorkersReady(workers) => {
                if self.options.verbosity == Verbosity::Quiet {
                    return Ok(());
                }
                self.write(&workers_line(workers))
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use prill_spec::plan::Dialect;

    use super::*;

    fn unit(name: &str, connection: &str) -> UnitId {
        UnitId {
            case_id: name.into(),
            name: name.into(),
            file: PathBuf::from("a.hocon"),
            dialect: Dialect::DataDriven,
            connection: connection.into(),
            target: "agent".into(),
            tags: Vec::new(),
        }
    }

    /// What a [`Human`] at `verbosity` writes for `events`.
    fn written(verbosity: Verbosity, events: &[Event]) -> String {
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl Write for Sink {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let mut human = Human::new(
            sink.clone(),
            HumanOptions {
                verbosity,
                ..HumanOptions::default()
            },
        );
        for event in events {
            human.event(event).unwrap();
        }
        String::from_utf8(sink.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn the_run_says_when_warm_workers_are_ready_and_how_many_could_not_start() {
        let ready = |ready, failed| {
            Event::WorkersReady(WorkersReady {
                what: "neuro-san".into(),
                ready,
                failed,
                took: Duration::from_millis(4300),
            })
        };
        let started = Event::RunStarted { units: 3 };
        assert_eq!(
            written(Verbosity::Normal, &[started.clone(), ready(2, 0)]),
            "neuro-san: 2 warm workers ready after 4.30s\n"
        );
        assert_eq!(
            written(Verbosity::Normal, &[started.clone(), ready(0, 1)]),
            "neuro-san: 0 warm workers ready after 4.30s; 1 could not start (the cases that need one say why)\n"
        );
        assert_eq!(written(Verbosity::Quiet, &[started, ready(1, 0)]), "");
    }

    #[test]
    fn the_bar_names_the_cases_in_flight() {
        let counted = Summary {
            passed: 2,
            ..Summary::default()
        };
        assert_eq!(totals(&counted), "2 passed, 0 failed, 0 errored");
        assert_eq!(in_flight(&[]), "");
        let two = [unit("greets", "http"), unit("looks up", "direct")];
        assert_eq!(in_flight(&two), "running: greets [http], looks up [direct]");
        let five: Vec<UnitId> = (0..5).map(|i| unit(&format!("c{i}"), "http")).collect();
        assert_eq!(
            in_flight(&five),
            "running: c0 [http], c1 [http], c2 [http] +2"
        );
    }
}
