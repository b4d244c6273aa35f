//! Every JSON report and every JSON Lines record validates against the checked-in
//! schemas (`schemas/report.schema.json`, `schemas/report-line.schema.json`, kept in
//! step with the types by `cargo xtask schemas --check`), and reads back into the types.

use std::path::PathBuf;

use prill_report::format::{Line, Report, SCHEMA_VERSION};
use prill_report::{JsonLines, JsonReport, Output};
use serde_json::Value;

use crate::fixtures::{Capture, feed, run};

fn validator(file: &str) -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo xtask schemas` to write it",
            path.display()
        )
    });
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

/// The problems `validator` finds in `instance`, one line each.
pub(crate) fn problems(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Checks JSON report text against `schemas/report.schema.json`.
pub(crate) fn assert_valid_report(text: &str) {
    let report: Value = serde_json::from_str(text).unwrap();
    let found = problems(&validator("report.schema.json"), &report);
    assert!(found.is_empty(), "{}\n{text}", found.join("\n"));
    let read: Report = serde_json::from_str(text).expect("reads back into Report");
    assert_eq!(read.schema_version, SCHEMA_VERSION);
}

/// Checks JSON Lines text against `schemas/report-line.schema.json`, line by line.
pub(crate) fn assert_valid_lines(text: &str) {
    let validator = validator("report-line.schema.json");
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let found = problems(&validator, &record);
        assert!(found.is_empty(), "{}\n{line}", found.join("\n"));
        let read: Line = serde_json::from_str(line).expect("reads back into Line");
        assert_eq!(serde_json::to_value(&read).unwrap(), record, "round trip");
    }
}

#[test]
fn every_report_validates_against_its_schema() {
    // A complete run, a cancelled one, and one whose stream ended early.
    let mut short = run(false);
    short.truncate(short.len() - 3);
    for events in [run(false), run(true), short] {
        let capture = Capture::default();
        feed(
            &mut JsonReport::new(Output::writer(capture.clone())),
            &events,
        );
        assert_valid_report(&capture.text());
    }
}

#[test]
fn every_line_validates_against_its_schema() {
    let capture = Capture::default();
    feed(&mut JsonLines::new(capture.clone()), &run(false));
    assert_eq!(capture.text().lines().count(), run(false).len());
    assert_valid_lines(&capture.text());
}

#[test]
fn the_schemas_reject_what_is_not_a_report() {
    let report = validator("report.schema.json");
    let capture = Capture::default();
    feed(
        &mut JsonReport::new(Output::writer(capture.clone())),
        &run(false),
    );
    let good: Value = serde_json::from_str(&capture.text()).unwrap();
    assert!(problems(&report, &good).is_empty());

    let mut wrong_version = good.clone();
    wrong_version["schema_version"] = 2.into();
    assert!(!problems(&report, &wrong_version).is_empty());
    let mut bad_verdict = good.clone();
    bad_verdict["units"][0]["verdict"] = "ok".into();
    assert!(!problems(&report, &bad_verdict).is_empty());
    let mut bad_ratio = good;
    bad_ratio["units"][0]["success_ratio"] = "most".into();
    assert!(!problems(&report, &bad_ratio).is_empty());

    let line = validator("report-line.schema.json");
    let unknown = serde_json::json!({"schema_version": 1, "event": "run_paused"});
    assert!(!problems(&line, &unknown).is_empty());
    let started = serde_json::json!({"schema_version": 1, "event": "run_started", "units": 3});
    assert!(problems(&line, &started).is_empty());
}
