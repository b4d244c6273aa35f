//! JUnit XML, for CI systems that show test results: one `<testsuite>` per file, one
//! `<testcase>` per unit (a case over one connection), written at the end.
//!
//! ```xml
//! <testsuites name="assay" tests="2" skipped="0" failures="1" errors="0" time="1.500">
//!     <testsuite name="cases/a.hocon" tests="2" skipped="0" errors="0" failures="1" time="1.400">
//!         <testcase name="greets [http]" classname="cases/a.hocon" time="1.200">
//!             <failure message="1 passed, 2 failed (need 2/3)" type="failed">text: expected keywords [&quot;hello&quot;], found &quot;bye&quot; (2 samples)</failure>
//!             <properties>
//!                 <property name="case_id" value="..."/>
//!                 <property name="success_ratio" value="2/3"/>
//!                 <property name="tally.passed" value="1"/>
//!                 <property name="sample.0" value="failed"/>
//!                 ...
//!             </properties>
//!         </testcase>
//!         <testcase name="greets [direct]" classname="cases/a.hocon" time="0.200">...</testcase>
//!     </testsuite>
//! </testsuites>
//! ```
//!
//! A unit that failed gets `<failure>` with its failing checks' messages (and any
//! errors of its other samples); a unit that errored gets `<error>`, never `<failure>`,
//! with its error messages and the first error's kind as its `type`; a unit that did
//! not run gets `<skipped>`.
//!
//! # Example
//!
//! ```
//! use assay_report::{Junit, Output, Reporter};
//! use assay_run::{Event, Summary};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("junit.xml");
//! let mut junit = Junit::new(Output::file(&path)?);
//! junit.event(&Event::RunFinished(Summary::default()))?;
//! junit.finish()?;
//! assert!(std::fs::read_to_string(&path)?.contains("<testsuites name=\"assay\""));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

use assay_run::{Event, Status, Summary, UnitReport};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::Reporter;
use crate::digest::{Collected, Kind, outcome, problems};
use crate::output::Output;

/// The JUnit reporter. See the [module documentation](self).
#[derive(Debug)]
pub struct Junit {
    output: Option<Output>,
    collected: Collected,
    name: String,
}

impl Junit {
    /// A report written to `output` at the end, named `assay`.
    pub fn new(output: Output) -> Junit {
        Junit {
            output: Some(output),
            collected: Collected::default(),
            name: "assay".to_owned(),
        }
    }

    /// Names the report (the `<testsuites name>`).
    pub fn named(mut self, name: impl Into<String>) -> Junit {
        self.name = name.into();
        self
    }

    /// The XML for what has been seen so far.
    pub fn render(&self) -> io::Result<String> {
        let summary = self.collected.summary();
        let report = build(&self.name, &self.collected.units, &summary);
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

fn build(name: &str, units: &[UnitReport], summary: &Summary) -> Report {
    // Files in the order their first unit finished.
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    for unit in units {
        let file = unit.unit.file.display().to_string();
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
            .map(|p| p.shown())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let status = match unit.verdict {
        Status::Passed => TestCaseStatus::success(),
        Status::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(outcome(unit))
                .set_type("failed")
                .set_description(description(None));
            status
        }
        Status::Errored => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            let ty = problems
                .iter()
                .find_map(|p| p.error_kind.clone())
                .unwrap_or_else(|| "errored".to_owned());
            status
                .set_message(outcome(unit))
                .set_type(ty)
                .set_description(description(Some(Kind::Error)));
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
    };
    let mut case = TestCase::new(unit.unit.label(), status);
    case.set_classname(file);
    case.set_time(unit.duration);
    case.add_properties(properties(unit));
    case
}

fn properties(unit: &UnitReport) -> Vec<Property> {
    let id = &unit.unit;
    let mut out = vec![
        Property::new("case_id", id.case_id.as_str()),
        Property::new("target", id.target.as_str()),
        Property::new("dialect", id.dialect.name()),
        Property::new("success_ratio", unit.success_ratio.to_string()),
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
