//! The JSON, JSON Lines, JUnit and GitHub annotation outputs of the fixture run against
//! insta snapshots in `snapshots/` beside this file (the human reporter's and `prill
//! show`'s texts use the same helper). The fixture events carry fixed durations and no
//! clock readings, so nothing in them depends on time. After a deliberate change,
//! `cargo insta review` accepts the `.snap.new` files the failing run left (or
//! `INSTA_UPDATE=always cargo test -p prill-report --test report` rewrites the snapshots);
//! read the diff: a change to the JSON shapes may need `SCHEMA_VERSION` raised.

use prill_report::{Github, JsonLines, JsonReport, Junit, Output};

use crate::fixtures::{Capture, feed, run};

/// Compares `actual` with the snapshot `snapshots/<name>.snap`.
pub(crate) fn assert_snapshot(name: &str, actual: &str) {
    // insta compares without trailing whitespace, so the end is checked here: every
    // output ends in exactly one newline.
    assert!(
        actual.ends_with('\n') && !actual.ends_with("\n\n"),
        "{name} does not end in exactly one newline:\n{actual:?}"
    );
    insta::with_settings!({prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!(name, actual);
    });
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
