//! GitHub Actions annotations: workflow commands that GitHub shows on the pull request,
//! at the line of the spec that failed.
//!
//! [`Github`] prints, as each unit finishes, one `::error` line per distinct failing
//! check and per error of a unit that did not pass, once for all the units where it
//! says the same at the same place (a case that failed alike over two connections).
//! GitHub shows [`SHOWN_A_STEP`] error annotations of a step: past them, the last one
//! says how many more there were. [`diagnostics`] does the same for
//! the problems found while loading test files (`::error` for what makes a file
//! invalid, `::warning` for the rest):
//!
//! ```text
//! ::error file=tests/greet.hocon,line=8,col=13,title=greets [http] failed::text: expected to contain ["hello"], found "bye" (2 samples)%0A  at tests/greet.hocon:8:13, interaction 0, samples 0, 2%0A  expected: ["hello"]%0A  found: "bye"
//! ::error file=tests/lookup.yaml,title=looks up [http] errored::error: interaction 0: cannot reach http://127.0.0.1:9/: connection refused
//! ::error file=tests/bad.yaml,line=3,col=1,title=error[missing-field]::interactions: ...
//! ```
//!
//! An error with no place in the file (an agent that cannot be reached) names the file
//! alone; a Rust suite's units, which have no file, name none. Messages and property
//! values are escaped as GitHub's workflow commands require: `%`, `\r` and `\n`
//! everywhere, and `:` and `,` in property values, so an agent's answer or a file's name
//! can neither end a command early nor start another one. Every other control character
//! (ESC) is shown as `prill_spec::escape` shows it (`\u{1b}`), and the names a title or
//! a message shows (a case's, a file's) are shown on one line, as the human report shows
//! them (`a\n::error::x.yaml`); the `file` property keeps the file's real name, so that
//! GitHub finds it.
//!
//! `prill run --format github` writes these lines to stdout, and so does a run in
//! GitHub Actions (`GITHUB_ACTIONS=true`) unless told otherwise; the human report stays
//! on stderr.
//!
//! # Example
//!
//! ```
//! use prill_report::{Github, Reporter};
//! use prill_run::{Event, Summary};
//!
//! let mut out = Vec::new();
//! let mut github = Github::new(&mut out);
//! github.event(&Event::RunFinished(Summary::default()))?;
//! github.finish()?;
//! drop(github);
//! assert!(out.is_empty(), "a run where nothing failed annotates nothing");
//!
//! assert_eq!(
//!     prill_report::github::command("error", &[("file", "a,b.yaml"), ("line", "3")], "50% of\nit"),
//!     "::error file=a%2Cb.yaml,line=3::50%25 of%0Ait\n"
//! );
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use prill_run::{Event, Status, UnitReport};
use prill_spec::Report;
use prill_spec::diag::Severity;
use prill_spec::escape;

use crate::Reporter;
use crate::ci::{expected_found, in_a_file, relative};
use crate::digest::{Problem, problems};

/// The most error annotations GitHub shows for one step.
pub const SHOWN_A_STEP: usize = 10;

/// The GitHub annotations reporter. See the [module documentation](self).
#[derive(Debug)]
pub struct Github<W: Write> {
    out: W,
    base: Option<PathBuf>,
    /// The annotations written or held, by place and message: one that says the same
    /// at the same place (a case that failed alike over two connections) is not
    /// written again.
    seen: HashSet<String>,
    /// How many were written.
    written: usize,
    /// The last one GitHub would show, held until it is known whether more follow.
    held: Option<String>,
    /// How many more there were: one annotation says so at the end instead.
    more: usize,
}

impl<W: Write> Github<W> {
    /// Annotations written to `out` (stdout, for GitHub to read), each line flushed as
    /// its unit finishes.
    pub fn new(out: W) -> Github<W> {
        Github {
            out,
            base: None,
            seen: HashSet::new(),
            written: 0,
            held: None,
            more: 0,
        }
    }

    /// Names the files that lie under `base` (the run's directory, the repository's
    /// checkout) relative to it, as GitHub needs them.
    pub fn relative_to(mut self, base: impl Into<PathBuf>) -> Github<W> {
        self.base = Some(base.into());
        self
    }
}

impl Github<io::Stdout> {
    /// Annotations written to stdout.
    pub fn stdout() -> Github<io::Stdout> {
        Github::new(io::stdout())
    }
}

impl<W: Write> Reporter for Github<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        let Event::UnitFinished(unit) = event else {
            return Ok(());
        };
        let mut text = String::new();
        for (key, line) in annotations(unit, self.base.as_deref()) {
            if !self.seen.insert(key) {
                continue;
            }
            if self.written + 1 < SHOWN_A_STEP {
                self.written += 1;
                text.push_str(&line);
            } else if self.held.is_none() && self.more == 0 {
                self.held = Some(line);
            } else {
                self.more += 1 + usize::from(self.held.take().is_some());
            }
        }
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    /// Writes the annotation held back, or, when there were more than GitHub shows,
    /// one that says how many more there were.
    fn finish(&mut self) -> io::Result<()> {
        if let Some(line) = self.held.take() {
            self.out.write_all(line.as_bytes())?;
        } else if self.more > 0 {
            let message = format!(
                "{} more failures or errors are not annotated here: GitHub shows {SHOWN_A_STEP} annotations a step. The run's log and reports have them all.",
                self.more
            );
            let line = command("error", &[("title", "Prill: more failures")], &message);
            self.out.write_all(line.as_bytes())?;
        }
        self.out.flush()
    }
}

/// The annotations of one finished unit, each with what identifies it (its place and
/// message, not its title, which names the connection): none when it passed or did
/// not run.
fn annotations(unit: &UnitReport, base: Option<&Path>) -> Vec<(String, String)> {
    let verdict = match unit.verdict {
        Status::Failed => "failed",
        Status::Errored => "errored",
        Status::Inconclusive => "inconclusive",
        Status::Passed | Status::Skipped | Status::Unscored => return Vec::new(),
    };
    let file = relative(&unit.unit.file, base);
    let shown_file = escape::controls(&file);
    let title = escape::controls(&format!("{} {verdict}", unit.unit.label())).into_owned();
    problems(unit)
        .iter()
        .map(|problem| {
            let line = problem.location.map(|at| at.line.to_string());
            let col = problem.location.map(|at| at.column.to_string());
            let mut properties = Vec::new();
            if in_a_file(unit) {
                properties.push(("file", file.as_str()));
                if let (Some(line), Some(col)) = (&line, &col) {
                    properties.push(("line", line));
                    properties.push(("col", col));
                }
            }
            let mut message = message(unit, problem, &shown_file);
            // A quarantined unit does not gate: a warning, saying why.
            let level = match &unit.quarantine {
                Some(entry) => {
                    message.push_str(&format!("\n  {}", crate::digest::quarantine_note(entry)));
                    "warning"
                }
                None => "error",
            };
            let key = command(level, &properties, &message);
            properties.push(("title", &title));
            (key, command(level, &properties, &message))
        })
        .collect()
}

/// A problem's message: what happened, then where, and what was expected and found.
fn message(unit: &UnitReport, problem: &Problem, file: &str) -> String {
    let mut text = problem.shown();
    let whereabouts = problem.whereabouts(Path::new(file));
    if !whereabouts.is_empty() {
        text.push_str(&format!("\n  {whereabouts}"));
    }
    let (expected, found) = expected_found(unit, problem);
    for (what, value) in [("expected", expected), ("found", found)] {
        if let Some(value) = value {
            text.push_str(&format!("\n  {what}: {value}"));
        }
    }
    text
}

/// The annotations of the problems found while loading test files: `::error` for each
/// that makes its file invalid, `::warning` for the others, at the problem's line and
/// column when it has a place. Files under `base` are named relative to it.
pub fn diagnostics(reports: &[Report], base: Option<&Path>) -> String {
    reports
        .iter()
        .map(|report| {
            let d = &report.diagnostic;
            let file = relative(&report.source.path, base);
            let place = d.span.map(|span| report.source.line_col(span.start));
            let (line, col) = match place {
                Some((line, col)) => (Some(line.to_string()), Some(col.to_string())),
                None => (None, None),
            };
            let mut properties = vec![("file", file.as_str())];
            if let (Some(line), Some(col)) = (&line, &col) {
                properties.push(("line", line));
                properties.push(("col", col));
            }
            let title = format!("{}[{}]", d.severity.name(), d.code);
            properties.push(("title", &title));
            // The plain form's first line is `file:line:col: error[code]: headline`:
            // the annotation has the place and the title already.
            let mut text = d.headline();
            for line in report.plain().lines().skip(1) {
                text.push('\n');
                text.push_str(line);
            }
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            command(level, &properties, &text)
        })
        .collect()
}

/// One workflow command, `::level key=value,...::message`, ending in a newline, with the
/// message and the values escaped as GitHub requires.
pub fn command(level: &str, properties: &[(&str, &str)], message: &str) -> String {
    let properties: Vec<String> = properties
        .iter()
        .map(|(key, value)| format!("{key}={}", escape_property(value)))
        .collect();
    let separator = if properties.is_empty() { "" } else { " " };
    format!(
        "::{level}{separator}{}::{}\n",
        properties.join(","),
        escape_data(message)
    )
}

/// A message: `%`, `\r` and `\n` escaped as GitHub reads them back, and every other
/// control character but the tab shown escaped (`\u{1b}`), as it would be left in the
/// log.
fn escape_data(text: &str) -> String {
    percent_escaped(text, false)
}

/// A property value: as a message, and `:` and `,` escaped too.
fn escape_property(text: &str) -> String {
    percent_escaped(text, true)
}

fn percent_escaped(text: &str, property: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            '\t' => out.push(c),
            c if escape::is_unsafe(c) => {
                out.push_str(&escape::controls(c.encode_utf8(&mut [0; 4])));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped() {
        assert_eq!(escape_data("100%\r\nnext"), "100%25%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // A message may hold `::` and `,`: only the properties' separators matter.
        assert_eq!(
            command("error", &[("title", "x::y")], "a::b, c"),
            "::error title=x%3A%3Ay::a::b, c\n"
        );
        assert_eq!(command("warning", &[], "w"), "::warning::w\n");
        // Other control characters never reach the log as they are.
        assert_eq!(
            escape_data("a\u{1b}[31m\tb\u{85}"),
            "a\\u{1b}[31m\tb\\u{85}"
        );
        assert_eq!(escape_property("x\u{1b}y:z"), "x\\u{1b}y%3Az");
    }
}
