//! The JSON, JSON Lines, JUnit and GitHub annotation outputs of the fixture run, byte for byte, against
//! the files under `tests/snapshots/`. The fixture events carry fixed durations and no
//! clock readings, so nothing in them depends on time. After a deliberate change,
//! `UPDATE_SNAPSHOTS=1 cargo test -p prill-report --test report snapshots` rewrites them
//! (review the diff: a change to the JSON shapes may need `SCHEMA_VERSION` raised).

use std::path::PathBuf;

use prill_report::{Github, JsonLines, JsonReport, Junit, Output};

use crate::fixtures::{Capture, feed, run};

const UPDATE: &str = "UPDATE_SNAPSHOTS=1 cargo test -p prill-report --test report snapshots";

/// Compares `actual` with `tests/snapshots/<name>`, or writes it there when
/// `UPDATE_SNAPSHOTS` is set.
pub(crate) fn assert_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = match std::fs::read_to_string(&path) {
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) => panic!(
            "cannot read {}: {e}; run `{UPDATE}` to create it",
            path.display()
        ),
    };
    if expected == actual {
        return;
    }
    let (line, want, got) = expected
        .lines()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(actual.lines().map(Some).chain(std::iter::repeat(None)))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a.unwrap_or("<end>"), b.unwrap_or("<end>")))
        .unwrap_or((0, "<trailing newline>", "<different>"));
    panic!(
        "{} differs from the output at line {line}:\n  snapshot: {want}\n  output:   {got}\n\
         if the change is intended, run `{UPDATE}` and review the diff",
        path.display()
    );
}

#[test]
fn the_json_report_matches_its_snapshot() {
    let capture = Capture::default();
    feed(
        &mut JsonReport::new(Output::writer(capture.clone())),
        &run(false),
    );
    assert_snapshot("report.json", &capture.text());
}

#[test]
fn the_json_lines_match_their_snapshot() {
    let capture = Capture::default();
    feed(&mut JsonLines::new(capture.clone()), &run(false));
    assert_snapshot("events.jsonl", &capture.text());
}

#[test]
fn the_junit_report_matches_its_snapshot() {
    let capture = Capture::default();
    feed(&mut Junit::new(Output::writer(capture.clone())), &run(true));
    assert_snapshot("junit.xml", &capture.text());
}

#[test]
fn the_github_annotations_match_their_snapshot() {
    let capture = Capture::default();
    feed(&mut Github::new(capture.clone()), &run(true));
    assert_snapshot("github.txt", &capture.text());
}
