//! JUnit XML, for CI systems that show test results: one `<testsuite>` per file, one
//! `<testcase>` per unit (a case over one connection), written at the end.
//!
//! ```xml
//! <testsuites name="prill" tests="2" skipped="0" failures="1" errors="0" time="1.500">
//!     <testsuite name="tests/agents/greet.hocon" tests="2" skipped="0" errors="0" failures="1" time="1.400">
//!         <testcase name="greets [http]" classname="tests.agents.greet" time="1.200" file="tests/agents/greet.hocon" line="8">
//!             <properties>
//!                 <property name="case_id" value="..."/>
//!                 <property name="success_ratio" value="2/3"/>
//!                 <property name="sample.0" value="failed"/>
//!                 ...
//!             </properties>
//!             <failure message="text: expected to contain [&quot;hello&quot;], found &quot;bye&quot; (2 samples)" type="failed">1 passed, 2 failed (need 2/3)
//! text: expected to contain [&quot;hello&quot;], found &quot;bye&quot; (2 samples)
//!   at tests/agents/greet.hocon:8:13, interaction 0, samples 0, 2
//!   check: interactions[0].response.text.keywords
//!   expected: [&quot;hello&quot;]
//!   found: &quot;bye&quot;</failure>
//!             <system-out>sample 0 (failed, 0.10s)
//! interaction 0 (0.10s):
//!   sent: hi
//!   answer: bye
//!   ...</system-out>
//!         </testcase>
//!         <testcase name="greets [direct]" classname="tests.agents.greet" ...>...</testcase>
//!     </testsuite>
//! </testsuites>
//! ```
//!
//! What the common consumers read (Jenkins, GitLab, the GitHub annotation actions):
//!
//! - `classname` is the file as a dotted module path, without its extension
//!   (`tests/agents/greet.hocon` is `tests.agents.greet`), and `file` the file itself,
//!   both relative to the run's directory ([`Junit::relative_to`]) when the file lies
//!   under it (a Rust suite's cases, which have no file, have no `file` either);
//! - `line` is the line of the unit's first failing check (of its first erroring one,
//!   for a unit that errored; of its first check, for one that passed), left out when
//!   no check's place is known;
//! - a unit that failed gets `<failure>`: its `message` is the first failing check's
//!   reason on one line (what junitparser and junit2html show), and its body the
//!   tally, then each failing check's message, where it happened (`file:line:col`, the
//!   interaction, the samples), the check's path and its expected and found values,
//!   then any errors of its other samples; a unit that errored gets `<error>`, never
//!   `<failure>`, its first error as the `message`, the tally and every error in the
//!   body, and the first error's kind as its `type`; a unit that did not run gets
//!   `<skipped>`;
//! - a unit that did not pass carries the transcript of its first failing sample
//!   ([`transcript::render`]) in `<system-out>`.
//!
//! The file is valid under the JUnit schema Jenkins' xUnit plugin validates against
//! (`junit-10.xsd`) with three additions that the consumers above read: `file` and
//! `line` on `<testcase>`, `<properties>` in a `<testcase>` and `skipped` on
//! `<testsuites>`. The tests check it with `xmllint --schema`.
//!
//! # Example
//!
//! ```
//! use prill_report::{Junit, Output, Reporter};
//! use prill_run::{Event, Summary};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("junit.xml");
//! let mut junit = Junit::new(Output::file(&path)?);
//! junit.event(&Event::RunFinished(Summary::default()))?;
//! junit.finish()?;
//! assert!(std::fs::read_to_string(&path)?.contains("<testsuites name=\"prill\""));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::path::{Path, PathBuf};

use prill_run::{Event, Status, Summary, UnitReport};
use prill_spec::plan::Gate;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::Reporter;
use crate::ci::{expected_found, in_a_file, module_path, relative, unit_location};
use crate::digest::{Collected, Kind, Problem, outcome, problems};
use crate::output::Output;
use crate::transcript;

/// The JUnit reporter. See the [module documentation](self).
#[derive(Debug)]
pub struct Junit {
    output: Option<Output>,
    collected: Collected,
    name: String,
    base: Option<PathBuf>,
}

impl Junit {
    /// A report written to `output` at the end, named `prill`.
    pub fn new(output: Output) -> Junit {
        Junit {
            output: Some(output),
            collected: Collected::default(),
            name: "prill".to_owned(),
            base: None,
        }
    }

    /// Names the report (the `<testsuites name>`).
    pub fn named(mut self, name: impl Into<String>) -> Junit {
        self.name = name.into();
        self
    }

    /// Shows the files that lie under `base` (the run's directory) relative to it, in
    /// the suites' names and the cases' `classname` and `file`.
    pub fn relative_to(mut self, base: impl Into<PathBuf>) -> Junit {
        self.base = Some(base.into());
        self
    }

    /// The XML for what has been seen so far.
    pub fn render(&self) -> io::Result<String> {
        let summary = self.collected.summary();
        let report = build(
            &self.name,
            &self.collected.units,
            &summary,
            self.base.as_deref(),
        );
        report.to_string().map_err(io::Error::other)
    }
}

impl Reporter for Junit {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.collected.event(event);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.output.take() {
            Some(output) => output.commit(self.render()?.as_bytes()),
            None => Ok(()),
        }
    }
}

fn build(name: &str, units: &[UnitReport], summary: &Summary, base: Option<&Path>) -> Report {
    // Files in the order their first unit finished.
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    for unit in units {
        let file = relative(&unit.unit.file, base);
        let index = match suites.iter().position(|(f, _)| *f == file) {
            Some(i) => i,
            None => {
                suites.push((file.clone(), TestSuite::new(file.as_str())));
                suites.len() - 1
            }
        };
        let suite = &mut suites[index].1;
        let case = test_case(unit, &file, summary.cancelled);
        let time = suite.time.unwrap_or_default() + unit.duration;
        suite.set_time(time);
        suite.add_test_case(case);
    }
    let mut report = Report::new(name);
    report.set_time(summary.duration);
    report.add_test_suites(suites.into_iter().map(|(_, suite)| suite));
    report
}

fn test_case(unit: &UnitReport, file: &str, cancelled: bool) -> TestCase {
    let problems = problems(unit);
    let description = |only: Option<Kind>| {
        problems
            .iter()
            .filter(|p| only.is_none_or(|k| p.kind == k))
            .map(|p| described(unit, p, file))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // What a viewer shows of a failure is its message (junitparser and junit2html show
    // only that): the first problem's reason on one line; the tally opens the body.
    let headline = |only: Option<Kind>| {
        problems
            .iter()
            .find(|p| only.is_none_or(|k| p.kind == k))
            .map_or_else(|| outcome(unit), |p| one_line(&p.shown()))
    };
    let body = |only: Option<Kind>| format!("{}\n{}", outcome(unit), description(only));
    let status = match (unit.verdict, &unit.quarantine) {
        // A quarantined unit that did not pass does not gate: a skip that says why, and
        // what it came to, so that a CI that reads the JUnit agrees with the exit code.
        (Status::Failed | Status::Errored | Status::Inconclusive, Some(entry)) => {
            let mut status = TestCaseStatus::skipped();
            status
                .set_message(format!(
                    "{}; {}: {}",
                    crate::digest::quarantine_note(entry),
                    unit.verdict,
                    headline(None)
                ))
                .set_type("quarantined")
                .set_description(body(None));
            status
        }
        _ => junit_status(unit, cancelled, &problems, headline, body),
    };
    let mut case = TestCase::new(unit.unit.label(), status);
    case.set_classname(module_path(file));
    case.set_time(unit.duration);
    if in_a_file(unit) {
        case.extra.insert("file".into(), file.into());
        if let Some(at) = unit_location(unit, &problems) {
            case.extra.insert("line".into(), at.line.to_string().into());
        }
    }
    if unit.verdict != Status::Passed
        && let Some(sample) = transcript::first_failing(unit)
    {
        case.set_system_out(transcript::render(sample, Path::new(file)));
    }
    case.add_properties(properties(unit));
    case
}

/// The JUnit status of a unit that gates: its verdict.
fn junit_status(
    unit: &UnitReport,
    cancelled: bool,
    problems: &[Problem],
    headline: impl Fn(Option<Kind>) -> String,
    body: impl Fn(Option<Kind>) -> String,
) -> TestCaseStatus {
    match unit.verdict {
        Status::Passed => TestCaseStatus::success(),
        Status::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(headline(None))
                .set_type("failed")
                .set_description(body(None));
            status
        }
        Status::Errored => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            let ty = problems
                .iter()
                .find_map(|p| p.error_kind.clone())
                .unwrap_or_else(|| "errored".to_owned());
            status
                .set_message(headline(Some(Kind::Error)))
                .set_type(ty)
                .set_description(body(Some(Kind::Error)));
            status
        }
        // JUnit has no third outcome: a failure of its own type, never a pass.
        Status::Inconclusive => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(format!("inconclusive: {}", outcome(unit)))
                .set_type("inconclusive")
                .set_description(body(None));
            status
        }
        Status::Skipped | Status::Unscored => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(if cancelled {
                "not run: the run was cancelled"
            } else {
                "not run"
            });
            status
        }
    }
}

/// The most a failure's message holds, in characters.
const MESSAGE_CHARS: usize = 200;

/// `text`'s first line, cut to [`MESSAGE_CHARS`] with `…`.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// One problem as the failure body shows it: the message, then where it happened, the
/// check's path, and what it expected and found, each on an indented line.
fn described(unit: &UnitReport, problem: &Problem, file: &str) -> String {
    let mut text = problem.shown();
    let whereabouts = problem.whereabouts(Path::new(file));
    if !whereabouts.is_empty() {
        text.push_str(&format!("\n  {whereabouts}"));
    }
    // Without a place in a file the whereabouts already name the check by its path.
    if let Some(path) = problem
        .check_path
        .as_ref()
        .filter(|_| problem.location.is_some())
    {
        text.push_str(&format!("\n  check: {path}"));
    }
    let (expected, found) = expected_found(unit, problem);
    if let Some(expected) = expected {
        text.push_str(&format!("\n  expected: {expected}"));
    }
    if let Some(found) = found {
        text.push_str(&format!("\n  found: {found}"));
    }
    text
}

fn properties(unit: &UnitReport) -> Vec<Property> {
    let id = &unit.unit;
    let mut out = vec![
        Property::new("case_id", id.case_id.as_str()),
        Property::new("target", id.target.as_str()),
        Property::new("dialect", id.dialect.name()),
        match unit.gate {
            Gate::Ratio(r) => Property::new("success_ratio", r.to_string()),
            Gate::Reliability(_) => Property::new("reliability", unit.gate.to_string()),
        },
        Property::new("tally.passed", unit.tally.passed.to_string()),
        Property::new("tally.failed", unit.tally.failed.to_string()),
        Property::new("tally.errored", unit.tally.errored.to_string()),
    ];
    for sample in &unit.samples {
        let status = sample.status.name();
        out.push(Property::new(format!("sample.{}", sample.index), status));
    }
    out
}
