//! GitHub annotations: one `::error` per failing check and per error of a unit that did
//! not pass, at the check's line and column, escaped as workflow commands require; and
//! the same for the problems of invalid test files.

use prill_report::{Github, Reporter, github};
use prill_spec::node::Span;
use prill_spec::{Diagnostic, Report, Source};

use crate::fixtures::{Capture, failed_unit, feed, run};

fn annotations(events: &[prill_run::Event]) -> String {
    let capture = Capture::default();
    feed(&mut Github::new(capture.clone()), events);
    capture.text()
}

#[test]
fn a_failing_check_is_annotated_at_its_place() {
    let text = annotations(&run(false));
    let lines: Vec<&str> = text.lines().collect();
    // The failed unit's one distinct failure, and the errored unit's two errors; the
    // passed and skipped units say nothing.
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with(
            "::error file=cases/a.hocon,line=8,col=13,title=greets [http] failed::text: expected to contain"
        ),
        "{text}"
    );
    assert!(
        lines[0].contains("%0A  at cases/a.hocon:8:13, interaction 0, samples 0, 2%0A"),
        "{text}"
    );
    assert!(lines[0].contains("%0A  found: \"bye\""), "{text}");
    // An error without a place names the file alone.
    assert!(
        lines[1].starts_with(
            "::error file=cases/b.yaml,title=looks up [http] errored::error: interaction 0: cannot reach"
        ),
        "{text}"
    );
    for line in &lines {
        assert!(!line.contains('\r'), "{line}");
    }
}

#[test]
fn annotations_are_written_as_each_unit_finishes() {
    let capture = Capture::default();
    let mut reporter = Github::new(capture.clone());
    reporter
        .event(&prill_run::Event::UnitFinished(failed_unit()))
        .unwrap();
    assert!(capture.text().starts_with("::error file=cases/a.hocon"));
}

#[test]
fn the_same_annotation_of_two_connections_is_written_once() {
    let mut direct = failed_unit();
    direct.unit.connection = "direct".into();
    let events = [
        prill_run::Event::UnitFinished(failed_unit()),
        prill_run::Event::UnitFinished(direct),
    ];
    let text = annotations(&events);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("title=greets [http] failed::"), "{text}");
}

#[test]
fn past_what_github_shows_one_annotation_says_how_many_more() {
    let unit = |i: usize| {
        let mut unit = failed_unit();
        unit.unit.file = format!("cases/{i}.hocon").into();
        prill_run::Event::UnitFinished(unit)
    };
    // Exactly as many as GitHub shows: all of them.
    let events: Vec<_> = (0..github::SHOWN_A_STEP).map(unit).collect();
    let text = annotations(&events);
    assert_eq!(text.lines().count(), github::SHOWN_A_STEP, "{text}");
    assert!(!text.contains("more failures"), "{text}");
    // Three more: nine of them, then one that says how many are not shown.
    let events: Vec<_> = (0..github::SHOWN_A_STEP + 3).map(unit).collect();
    let text = annotations(&events);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), github::SHOWN_A_STEP, "{text}");
    assert!(lines[8].contains("file=cases/8.hocon"), "{text}");
    assert!(
        lines[9].starts_with("::error title=Prill%3A more failures::4 more failures or errors"),
        "{text}"
    );
}

#[test]
fn files_under_the_run_directory_are_named_relative_to_it() {
    let mut unit = failed_unit();
    unit.unit.file = "/repo/tests/agents/a.hocon".into();
    let capture = Capture::default();
    let mut reporter = Github::new(capture.clone()).relative_to("/repo");
    reporter
        .event(&prill_run::Event::UnitFinished(unit))
        .unwrap();
    assert!(
        capture
            .text()
            .starts_with("::error file=tests/agents/a.hocon,line=8,col=13,"),
        "{}",
        capture.text()
    );
}

#[test]
fn invalid_files_are_annotated_at_their_line_and_column() {
    let text = "agent: echo\ninteractions:\n  - txt: hi\n";
    let source = Source::new("tests/bad, really.yaml", text);
    let at = text.find("txt").unwrap();
    let error = Diagnostic::new(
        "unknown-key",
        "interactions[0].txt",
        "unknown key `txt`: 100% wrong",
    )
    .at(Span::new(at, at + 3))
    .help("did you mean `text`?");
    let warning = Diagnostic::new("unused", "", "a warning without a place").warning();
    let reports = [Report::new(error, &source), Report::new(warning, &source)];
    assert_eq!(
        github::diagnostics(&reports, None),
        "::error file=tests/bad%2C really.yaml,line=3,col=5,title=error[unknown-key]::\
         interactions[0].txt: unknown key `txt`: 100%25 wrong%0A  help: did you mean `text`?\n\
         ::warning file=tests/bad%2C really.yaml,title=warning[unused]::a warning without a place\n"
    );
}

/// The file name of issue 41: git keeps a name with a newline, and printed raw its
/// second line was a workflow command of its own.
const NEWLINE_FILE: &str = "cases/a\n::error::pwned.yaml";

#[test]
fn a_file_name_with_a_newline_stays_in_its_annotation() {
    let text = "agent: echo\ninteractions:\n  - txt: hi\n";
    let at = text.find("txt").unwrap();
    let error = Diagnostic::new("unknown-key", "interactions[0].txt", "unknown key `txt`")
        .at(Span::new(at, at + 3))
        .found("txt\u{1b}[2J");
    let report = Report::new(error, &Source::new(NEWLINE_FILE, text));
    // One line: the `file` property keeps the real name, escaped as GitHub reads it
    // back; the message shows nothing of the name's second line as a line.
    assert_eq!(
        github::diagnostics(&[report], None),
        "::error file=cases/a%0A%3A%3Aerror%3A%3Apwned.yaml,line=3,col=5,title=error[unknown-key]::\
         interactions[0].txt: unknown key `txt`%0A  found: txt\\u{1b}[2J\n"
    );
}

#[test]
fn names_and_answers_in_a_unit_cannot_become_workflow_commands() {
    let mut unit = failed_unit();
    unit.unit.file = NEWLINE_FILE.into();
    unit.unit.name = "greets\u{1b}[2J\r::add-mask::x".into();
    let text = annotations(&[prill_run::Event::UnitFinished(unit)]);
    // The runner splits lines at `\r` too.
    let lines: Vec<&str> = text.split(['\n', '\r']).filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with(
            "::error file=cases/a%0A%3A%3Aerror%3A%3Apwned.yaml,line=8,col=13,\
             title=greets\\u{1b}[2J\\r%3A%3Aadd-mask%3A%3Ax [http] failed::"
        ),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        lines[0].contains("%0A  at cases/a\\n::error::pwned.yaml:8:13, interaction 0"),
        "{text}"
    );
}
