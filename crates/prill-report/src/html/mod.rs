//! The HTML report: one self-contained page (no network, inline CSS, script and SVG)
//! of a run, or of a comparison of two runs.
//!
//! [`render`] makes the page from the report format's types (a stored run, read with
//! [`StoredRun`](crate::stored::StoredRun), or a comparison's head run), and
//! [`HtmlReport`] is the reporter that writes it at the end of `prill run --html FILE`.
//! The page shows the summary, the pass rate, the duration and the settings; a table of
//! the cases, filtered by status, dialect, connection, tag and text and sorted by any
//! column; each unit that did not pass with its failing checks (expected, found, and
//! `file:line:col`) and the failing sample's conversation turn by turn; the judges'
//! verdicts with their reasons; histograms of duration and tokens; and, for a
//! comparison, its changes, regressions first. The data is embedded as JSON in a
//! `<script type="application/json">` (every `<` escaped) and drawn by an inline script
//! a page of rows at a time, so a run of 10,000 cases stays usable.
//!
//! A comparison is given to the page as a [`CompareSection`]: the runs' names and one
//! [`CompareRow`] per case that changed, regressions first. `prill compare` builds it
//! from its own result, so this module does not depend on how the comparison is made.
//!
//! # Example
//!
//! ```
//! use prill_report::format::Report;
//! use prill_report::html::{CompareRow, CompareSection, render};
//!
//! let report: Report = serde_json::from_str(
//!     r#"{"schema_version": 1, "units": [],
//!         "summary": {"passed": 0, "failed": 0, "errored": 0, "skipped": 0,
//!                     "cancelled": false, "duration": 0.5}}"#,
//! )?;
//! let mut compare = CompareSection::new("base-run", "head-run");
//! compare.rows.push(CompareRow::new("regression", "greets", "3f9a", "http"));
//! let page = render(&report.units, Some(&report.summary), None, Some(&compare));
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! assert!(page.contains("1 regression"));
//! # Ok::<(), serde_json::Error>(())
//! ```

mod data;
mod page;
mod svg;

use std::io;
use std::sync::{Arc, OnceLock};

use prill_run::Event;
use serde::Serialize;

use crate::Reporter;
use crate::digest::Collected;
use crate::format::{Report, RunInfo, Summary, Unit};
use crate::output::Output;

/// What a comparison adds to the page: which runs, and the cases that changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct CompareSection {
    /// The base run: its id, or the file it was read from.
    pub base: String,
    /// The head run: its id, or the file it was read from.
    pub head: String,
    /// One row per change, regressions first.
    pub rows: Vec<CompareRow>,
}

/// One change between the two runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct CompareRow {
    /// `regression`, `fix`, `new`, `removed`, `inputs_changed`, `pass_rate`,
    /// `latency`, `tokens`, `cost`, `top_up` (samples `prill compare --top-up` added)
    /// or `judge`.
    pub kind: String,
    /// The case's name.
    pub case: String,
    /// The case's id.
    pub case_id: String,
    /// The connection or provider.
    pub connection: String,
    /// What it was in the base run (`passed 10/10`, `1.20 s`, ...).
    pub base: String,
    /// What it is in the head run.
    pub head: String,
    /// More: the p-value of a pass-rate change, a judge's reasons, ...
    pub detail: String,
}

impl CompareSection {
    /// An empty comparison of `base` and `head`.
    pub fn new(base: impl Into<String>, head: impl Into<String>) -> CompareSection {
        CompareSection {
            base: base.into(),
            head: head.into(),
            rows: Vec::new(),
        }
    }
}

impl CompareRow {
    /// A row of `kind` for the case `case` (`case_id`) over `connection`.
    pub fn new(kind: &str, case: &str, case_id: &str, connection: &str) -> CompareRow {
        CompareRow {
            kind: kind.to_owned(),
            case: case.to_owned(),
            case_id: case_id.to_owned(),
            connection: connection.to_owned(),
            ..CompareRow::default()
        }
    }
}

/// The page of a run: its `units` (in the order they finished), its `summary` (`None`
/// for a run that did not finish: the page counts the units and says so), what the
/// history knows of it (`run`: its id, commit and settings) and, for a comparison, its
/// changes. One self-contained HTML document.
pub fn render(
    units: &[Unit],
    summary: Option<&Summary>,
    run: Option<&RunInfo>,
    compare: Option<&CompareSection>,
) -> String {
    page::page(units, summary, run, compare, &Links::default())
}

/// [`render`]'s page with links to other pages of a site (`prill view`): a row of links
/// at the top, and each case's name linked to its history.
pub fn render_linked(
    units: &[Unit],
    summary: Option<&Summary>,
    run: Option<&RunInfo>,
    compare: Option<&CompareSection>,
    links: &Links,
) -> String {
    page::page(units, summary, run, compare, links)
}

/// The links of a page that is part of a site (`prill view`); a page written to a file
/// has none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct Links {
    /// The links at the top of the page, as (text, href).
    pub nav: Vec<(String, String)>,
    /// Where a case's history is: this followed by the case's id (percent-encoded).
    pub case: Option<String>,
}

impl Links {
    /// The links `nav` at the top, and cases linked to `case` + their id.
    pub fn new(nav: Vec<(String, String)>, case: Option<String>) -> Links {
        Links { nav, case }
    }
}

/// A page of a site with the report's style: `title` as its title and heading, the
/// `links` at the top, and `body` (HTML, put in as given) as its content. It loads
/// nothing.
pub fn document(title: &str, links: &Links, body: &str) -> String {
    page::document(title, links, body)
}

/// `text` as a part of a URL path or query: every byte but `A-Z a-z 0-9 - . _ ~` as
/// `%XX`.
pub fn url_part(text: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    const PART: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    utf8_percent_encode(text, PART).to_string()
}

/// `1.23 s`, `45 ms`, `<1 ms`: a duration as the page shows it.
pub fn seconds(s: f64) -> String {
    page::seconds(s)
}

/// The reporter of `--html FILE`: collects the run's units and writes [`render`]'s page
/// to its [`Output`] at [`Reporter::finish`]. A cancelled run still gets one, with the
/// units that finished.
#[derive(Debug)]
pub struct HtmlReport {
    output: Option<Output>,
    collected: Collected,
    run: Arc<OnceLock<RunInfo>>,
}

impl HtmlReport {
    /// A page written to `output` at the end.
    pub fn new(output: Output) -> HtmlReport {
        HtmlReport {
            output: Some(output),
            collected: Collected::default(),
            run: Arc::default(),
        }
    }

    /// Where to put what the history knows of this run (its id, commit and settings)
    /// once it is known, after the reporter has been handed to [`Reporters`](crate::Reporters):
    /// the page shows it when it is set before the run finishes.
    pub fn run_info(&self) -> Arc<OnceLock<RunInfo>> {
        Arc::clone(&self.run)
    }

    /// The page for what has been seen so far.
    pub fn render(&self) -> String {
        let report = Report::new(&self.collected.summary(), &self.collected.units);
        render(&report.units, Some(&report.summary), self.run.get(), None)
    }
}

impl Reporter for HtmlReport {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.collected.event(event);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.output.take() {
            Some(output) => output.commit(self.render().as_bytes()),
            None => Ok(()),
        }
    }
}

/// `text` as HTML text or an attribute's value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
