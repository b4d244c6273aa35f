//! `prill show`'s library half: a saved JSON report read back, units picked by case,
//! and their transcripts, the same text the human reporter prints during the run.

use prill_report::format::Report;
use prill_report::show::{self, ShowError};
use prill_report::transcript;
use prill_run::Event;

use crate::fixtures::{failed_unit, run, summary};
use crate::snapshots::assert_snapshot;

/// The fixture run's JSON report, written to a file and read back.
fn saved() -> (tempfile::TempDir, Report) {
    let units: Vec<_> = run(false)
        .into_iter()
        .filter_map(|e| match e {
            Event::UnitFinished(u) => Some(u),
            _ => None,
        })
        .collect();
    let report = Report::new(&summary(false), &units);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    let read = show::read(&path).unwrap();
    assert_eq!(read.units.len(), report.units.len());
    (dir, read)
}

#[test]
fn without_a_case_every_failure_and_error_is_shown() {
    let (_dir, report) = saved();
    let units = show::select(&report, None).unwrap();
    let names: Vec<String> = units
        .iter()
        .map(|u| format!("{} [{}]", u.unit.name, u.unit.connection))
        .collect();
    assert_eq!(names, ["greets [http]", "looks up [http]"]);
    let text = show::render(&units);
    assert_snapshot("show.txt", &text);
    assert!(
        text.starts_with("FAIL [0.30s] cases/a.hocon::greets [http] 1 passed, 2 failed (need 2/3)\nsample 0 (failed, 0.10s)\n"),
        "{text}"
    );
}

#[test]
fn a_saved_transcript_reads_as_the_live_one() {
    let (_dir, report) = saved();
    let live = failed_unit();
    let sample = transcript::first_failing(&live).unwrap();
    let saved = &report.units[1];
    assert_eq!(saved.unit.name, "greets");
    let from_file = transcript::first_failing_saved(saved).unwrap();
    assert_eq!(
        transcript::render_saved(from_file, std::path::Path::new(&saved.unit.file)),
        transcript::render(sample, &live.unit.file)
    );
}

#[test]
fn a_case_is_matched_by_id_name_or_part_and_a_passing_one_shows_its_first_sample() {
    let (_dir, report) = saved();
    let by_id = show::select(&report, Some("looks up-id")).unwrap();
    assert_eq!(by_id.len(), 1);
    // Exact names first: both connections of `greets`.
    assert_eq!(show::select(&report, Some("greets")).unwrap().len(), 2);
    // A part, ignoring case, of the name or of `file::name`.
    assert_eq!(show::select(&report, Some("LOOKS")).unwrap().len(), 1);
    assert_eq!(show::select(&report, Some("b.yaml::")).unwrap().len(), 2);
    let passing: Vec<_> = show::select(&report, Some("greets"))
        .unwrap()
        .into_iter()
        .filter(|u| u.unit.connection == "direct")
        .collect();
    let text = show::render(&passing);
    assert!(
        text.starts_with("PASS [0.30s] cases/a.hocon::greets [direct] 2 passed, 1 not run (need 2/3)\nsample 0 (passed, 0.10s)\n"),
        "{text}"
    );
    let skipped = show::select(&report, Some("farewell")).unwrap();
    assert!(show::render(&skipped).ends_with("not run (need 1/1)\nno sample ran\n"));
}

#[test]
fn no_match_suggests_the_closest_case() {
    let (_dir, report) = saved();
    let err = show::select(&report, Some("greats")).unwrap_err();
    assert!(matches!(err, ShowError::NoMatch { .. }));
    assert_eq!(
        err.to_string(),
        "no case matches `greats`; did you mean `greets`?"
    );
    let err = show::select(&report, Some("zzzz")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no case matches `zzzz`; the report has: farewell, greets, looks up"
    );
}

#[test]
fn an_unreadable_report_says_what_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let missing = show::read(&dir.path().join("nope.json")).unwrap_err();
    assert!(matches!(missing, ShowError::Read { .. }), "{missing}");
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, "<testsuites/>").unwrap();
    let err = show::read(&path).unwrap_err();
    assert!(
        err.to_string().contains("is not a Prill JSON report"),
        "{err}"
    );
}
