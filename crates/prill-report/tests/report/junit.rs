//! JUnit XML: suites per file, cases per unit, `<failure>` versus `<error>`, the
//! attributes CI tools read (`classname`, `file`, `line`), where a failure happened and
//! the transcript of the failing sample.

use prill_report::{Junit, Output};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::fixtures::{Capture, KEYWORD_FAILURE, UNREACHABLE, feed, run};

fn xml(cancelled: bool) -> String {
    let capture = Capture::default();
    let mut reporter = Junit::new(Output::writer(capture.clone()));
    feed(&mut reporter, &run(cancelled));
    capture.text()
}

fn property<'a>(case: &'a quick_junit::TestCase, name: &str) -> Option<&'a str> {
    case.properties
        .iter()
        .find(|p| p.name.as_str() == name)
        .map(|p| p.value.as_str())
}

#[test]
fn one_suite_per_file_and_one_case_per_unit() {
    let text = xml(false);
    let report = Report::deserialize_from_str(&text).unwrap();
    assert_eq!(report.name.as_deref(), Some("prill"));
    assert_eq!((report.tests, report.failures, report.errors), (4, 1, 1));
    let suites: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(suites, ["cases/a.hocon", "cases/b.yaml"]);

    let a = &report.test_suites[0];
    assert_eq!((a.tests, a.failures, a.errors, a.skipped), (2, 1, 0, 0));
    let names: Vec<&str> = a.test_cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["greets [direct]", "greets [http]"]);
    for case in &a.test_cases {
        assert_eq!(case.classname.as_deref(), Some("cases.a"));
        assert_eq!(case.time, Some(std::time::Duration::from_millis(300)));
    }
    let b = &report.test_suites[1];
    assert_eq!((b.tests, b.failures, b.errors, b.skipped), (2, 0, 1, 1));
}

#[test]
fn a_failed_unit_gets_a_failure_with_the_failing_checks() {
    let report = Report::deserialize_from_str(&xml(false)).unwrap();
    let case = &report.test_suites[0].test_cases[1];
    let TestCaseStatus::NonSuccess {
        kind,
        message,
        description,
        ..
    } = &case.status
    else {
        panic!("not a non-success: {:?}", case.status);
    };
    assert_eq!(*kind, NonSuccessKind::Failure);
    // The message is the reason (all junitparser and junit2html show); the tally
    // opens the body.
    let message = message.as_deref().unwrap();
    assert!(message.starts_with(KEYWORD_FAILURE), "{message}");
    assert!(message.ends_with("(2 samples)"), "{message}");
    let description = description.as_deref().unwrap();
    let mut lines = description.lines();
    assert_eq!(lines.next(), Some("1 passed, 2 failed (need 2/3)"));
    assert_eq!(lines.next(), Some(message), "{description}");

    assert_eq!(property(case, "success_ratio"), Some("2/3"));
    assert_eq!(property(case, "tally.passed"), Some("1"));
    assert_eq!(property(case, "tally.failed"), Some("2"));
    assert_eq!(property(case, "sample.0"), Some("failed"));
    assert_eq!(property(case, "sample.1"), Some("passed"));
    assert_eq!(property(case, "case_id"), Some("greets-id"));
}

#[test]
fn an_errored_unit_gets_an_error_and_never_a_failure() {
    let text = xml(false);
    let report = Report::deserialize_from_str(&text).unwrap();
    let case = &report.test_suites[1].test_cases[0];
    assert_eq!(case.name.as_str(), "looks up [http]");
    let TestCaseStatus::NonSuccess {
        kind,
        ty,
        message,
        description,
        ..
    } = &case.status
    else {
        panic!("not a non-success: {:?}", case.status);
    };
    assert_eq!(*kind, NonSuccessKind::Error);
    assert_eq!(ty.as_deref(), Some("unreachable"));
    let message = message.as_deref().unwrap();
    assert!(
        message.starts_with("error: ") && message.contains(UNREACHABLE),
        "the first error is the message: {message}"
    );
    let description = description.as_deref().unwrap();
    assert!(description.contains(UNREACHABLE), "{description}");
    assert!(description.contains("the judge failed"), "{description}");

    // By the text as well: exactly one <failure> and one <error>, in their cases.
    assert_eq!(text.matches("<failure").count(), 1, "{text}");
    assert_eq!(text.matches("<error").count(), 1, "{text}");
    let errored = &text[text.find("name=\"looks up [http]\"").unwrap()..];
    let errored = &errored[..errored.find("</testcase>").unwrap()];
    assert!(
        errored.contains("<error") && !errored.contains("<failure"),
        "{errored}"
    );
}

#[test]
fn a_skipped_unit_is_skipped() {
    let report = Report::deserialize_from_str(&xml(true)).unwrap();
    let case = &report.test_suites[1].test_cases[1];
    assert_eq!(case.name.as_str(), "farewell [direct]");
    let TestCaseStatus::Skipped { message, .. } = &case.status else {
        panic!("not skipped: {:?}", case.status);
    };
    assert_eq!(message.as_deref(), Some("not run: the run was cancelled"));
}

#[test]
fn the_file_appears_whole_at_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    let mut reporter = Junit::new(Output::file(&path).unwrap());
    let events = run(false);
    for event in &events {
        prill_report::Reporter::event(&mut reporter, event).unwrap();
    }
    assert!(!path.exists());
    prill_report::Reporter::finish(&mut reporter).unwrap();
    let report = Report::deserialize_from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(report.tests, 4);
    assert_eq!(report.time, Some(std::time::Duration::from_millis(1234)));
}

fn attribute<'a>(case: &'a quick_junit::TestCase, name: &str) -> Option<&'a str> {
    case.extra
        .iter()
        .find(|(k, _)| k.as_str() == name)
        .map(|(_, v)| v.as_str())
}

/// A case's name, `classname`, `file` and `line`.
type Shown<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);

#[test]
fn each_case_names_its_file_and_line() {
    let report = Report::deserialize_from_str(&xml(false)).unwrap();
    let cases: Vec<&quick_junit::TestCase> = report
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .collect();
    let shown: Vec<Shown<'_>> = cases
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.classname.as_deref(),
                attribute(c, "file"),
                attribute(c, "line"),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            // A passing case: its first check's line.
            (
                "greets [direct]",
                Some("cases.a"),
                Some("cases/a.hocon"),
                Some("7")
            ),
            // A failing case: its failing check's line, not the first check's.
            (
                "greets [http]",
                Some("cases.a"),
                Some("cases/a.hocon"),
                Some("8")
            ),
            // No check with a known place: no line.
            (
                "looks up [http]",
                Some("cases.b"),
                Some("cases/b.yaml"),
                None
            ),
            (
                "farewell [direct]",
                Some("cases.b"),
                Some("cases/b.yaml"),
                None
            ),
        ]
    );
}

#[test]
fn files_under_the_run_directory_are_named_relative_to_it() {
    let mut events = run(false);
    for event in &mut events {
        if let prill_run::Event::UnitFinished(unit) = event {
            unit.unit.file = std::path::Path::new("/repo/tests/agents").join(&unit.unit.file);
        }
    }
    let capture = Capture::default();
    let mut reporter = Junit::new(Output::writer(capture.clone())).relative_to("/repo");
    feed(&mut reporter, &events);
    let report = Report::deserialize_from_str(&capture.text()).unwrap();
    let case = &report.test_suites[0].test_cases[0];
    assert_eq!(
        report.test_suites[0].name.as_str(),
        "tests/agents/cases/a.hocon"
    );
    assert_eq!(case.classname.as_deref(), Some("tests.agents.cases.a"));
    assert_eq!(attribute(case, "file"), Some("tests/agents/cases/a.hocon"));
}

#[test]
fn a_failure_says_where_and_what_was_expected_and_found() {
    let report = Report::deserialize_from_str(&xml(false)).unwrap();
    let case = &report.test_suites[0].test_cases[1];
    let TestCaseStatus::NonSuccess { description, .. } = &case.status else {
        panic!("not a non-success: {:?}", case.status);
    };
    let lines: Vec<&str> = description.as_deref().unwrap().lines().collect();
    assert_eq!(
        lines[2..],
        [
            "  at cases/a.hocon:8:13, interaction 0, samples 0, 2",
            "  check: interactions[0].response.text.keywords",
            "  expected: [\"hello\"]",
            "  found: \"bye\"",
        ]
    );
}

#[test]
fn a_case_that_did_not_pass_carries_its_first_failing_transcript() {
    let report = Report::deserialize_from_str(&xml(false)).unwrap();
    let cases = |suite: usize, case: usize| &report.test_suites[suite].test_cases[case];
    let failed = cases(0, 1).system_out.as_ref().map(|s| s.as_str()).unwrap();
    assert!(failed.starts_with("sample 0 (failed"), "{failed}");
    assert!(
        failed.contains("sent: hi") && failed.contains("answer: bye"),
        "{failed}"
    );
    assert!(failed.contains("at cases/a.hocon:8:13"), "{failed}");
    let errored = cases(1, 0).system_out.as_ref().map(|s| s.as_str()).unwrap();
    assert!(errored.contains("cannot reach"), "{errored}");
    // Passing and skipped cases have none.
    assert!(cases(0, 0).system_out.is_none());
    assert!(cases(1, 1).system_out.is_none());
}
