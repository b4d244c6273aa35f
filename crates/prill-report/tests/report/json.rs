//! The JSON document and the JSON Lines stream.

use prill_report::format::Line;
use prill_report::{JsonLines, JsonReport, Output, Reporter};
use serde_json::Value;

use crate::fixtures::{Capture, feed, run};

#[test]
fn the_document_has_the_summary_and_every_unit_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut reporter = JsonReport::new(Output::file(&path).unwrap());
    let events = run(false);
    for event in &events {
        reporter.event(event).unwrap();
        assert!(!path.exists(), "the report appears only when complete");
    }
    reporter.finish().unwrap();

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let summary = &doc["summary"];
    assert_eq!(summary["passed"], 1);
    assert_eq!(summary["failed"], 1);
    assert_eq!(summary["errored"], 1);
    assert_eq!(summary["skipped"], 1);
    assert_eq!(summary["cancelled"], false);
    assert_eq!(summary["duration"], 1.234);
    let units = doc["units"].as_array().unwrap();
    let verdicts: Vec<&str> = units
        .iter()
        .map(|u| u["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["passed", "failed", "errored", "skipped"]);
    assert_eq!(units[1]["unit"]["name"], "greets");
    assert_eq!(units[1]["unit"]["connection"], "http");
    assert_eq!(units[1]["success_ratio"], "2/3");
    assert_eq!(units[1]["tally"]["failed"], 2);
    assert_eq!(
        units[1]["samples"][0]["interactions"][0]["checks"][1]["outcome"],
        "evaluated"
    );
    assert_eq!(
        units[1]["samples"][0]["interactions"][0]["checks"][1]["name"],
        "keywords"
    );
    assert_eq!(
        units[1]["samples"][0]["interactions"][0]["checks"][1]["status"],
        "failed"
    );
    assert_eq!(
        units[2]["samples"][0]["interactions"][0]["error"]["kind"],
        "unreachable"
    );

    // Nothing but the report is left in the directory.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["report.json"]);
}

#[test]
fn a_cancelled_run_still_gets_a_document() {
    let capture = Capture::default();
    let mut reporter = JsonReport::new(Output::writer(capture.clone()));
    let mut events = run(true);
    // Cancelled before the last two units finished.
    events.drain(events.len() - 5..events.len() - 1);
    feed(&mut reporter, &events);
    let doc: Value = serde_json::from_str(&capture.text()).unwrap();
    assert_eq!(doc["summary"]["cancelled"], true);
    assert_eq!(doc["units"].as_array().unwrap().len(), 2);
}

#[test]
fn without_a_run_finished_the_units_are_counted_and_marked_cancelled() {
    let capture = Capture::default();
    let mut reporter = JsonReport::new(Output::writer(capture.clone()));
    let mut events = run(false);
    events.pop();
    feed(&mut reporter, &events);
    let doc: Value = serde_json::from_str(&capture.text()).unwrap();
    assert_eq!(doc["summary"]["passed"], 1);
    assert_eq!(doc["summary"]["skipped"], 1);
    assert_eq!(doc["summary"]["cancelled"], true);
}

#[test]
fn an_existing_report_is_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    std::fs::write(&path, "old").unwrap();
    let mut reporter = JsonReport::new(Output::file(&path).unwrap());
    feed(&mut reporter, &run(false));
    assert!(std::fs::read_to_string(&path).unwrap().starts_with('{'));
}

#[test]
fn a_bad_path_fails_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let err = Output::file(dir.path().join("a-file/report.json")).unwrap_err();
    assert!(err.to_string().starts_with("cannot "), "{err}");
    let err = Output::file(dir.path()).unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
}

#[test]
fn every_event_is_a_line_on_disk_before_the_next_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut reporter = JsonLines::create(&path).unwrap();
    let events = run(false);
    for (i, event) in events.iter().enumerate() {
        reporter.event(event).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), i + 1, "one line per event so far");
        let last: Value = serde_json::from_str(lines[i]).unwrap();
        assert_eq!(last, serde_json::to_value(Line::from(event)).unwrap());
        assert_eq!(last["schema_version"], 1);
    }
    reporter.finish().unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let tags: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(tags.first().unwrap(), "run_started");
    assert_eq!(tags.last().unwrap(), "run_finished");
    assert_eq!(tags.iter().filter(|t| *t == "unit_finished").count(), 4);
    assert_eq!(tags.iter().filter(|t| *t == "sample_finished").count(), 7);
    let finished: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(finished["passed"], 1);
}

#[test]
fn create_empties_and_append_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    std::fs::write(&path, "{\"event\":\"old\"}\n").unwrap();
    let events = run(false);

    let mut appending = JsonLines::append(&path).unwrap();
    feed(&mut appending, &events[..1]);
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);

    let mut creating = JsonLines::create(&path).unwrap();
    feed(&mut creating, &events[..1]);
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
}

/// The stream writes a unit's samples into its `unit_finished` line from their own
/// `sample_finished` lines rather than serializing them again: every line must still be
/// byte for byte what serializing its event writes, whatever the order of the events,
/// however many samples a unit has, and when the stream saw only some of them.
#[test]
fn every_line_is_its_event_serialized_however_the_samples_came() {
    use prill_run::{Event, Status};

    use crate::fixtures::{failed_unit, passed_check, passed_unit, sample};

    let mut events = run(false);
    // Two units in flight at once, their samples finishing out of order.
    let mut a = failed_unit();
    a.unit.name = "interleaved a".into();
    a.samples.swap(0, 2);
    let mut b = passed_unit();
    b.unit.name = "interleaved b".into();
    for i in 0..3 {
        if let Some(s) = a.samples.get(i) {
            events.push(Event::SampleFinished {
                unit: a.unit.clone(),
                sample: s.clone(),
            });
        }
        if let Some(s) = b.samples.get(i) {
            events.push(Event::SampleFinished {
                unit: b.unit.clone(),
                sample: s.clone(),
            });
        }
    }
    events.push(Event::UnitFinished(b));
    events.push(Event::UnitFinished(a));
    // More samples than are kept for a unit in flight.
    let mut many = passed_unit();
    many.unit.name = "many".into();
    many.samples = (0..40)
        .map(|i| sample(i, Status::Passed, vec![passed_check()], None))
        .collect();
    for s in &many.samples {
        events.push(Event::SampleFinished {
            unit: many.unit.clone(),
            sample: s.clone(),
        });
    }
    events.push(Event::UnitFinished(many));
    // A stream that saw a sample the unit's line does not hold, and one that saw none.
    let mut partial = passed_unit();
    partial.unit.name = "partial".into();
    events.push(Event::SampleFinished {
        unit: partial.unit.clone(),
        sample: partial.samples[0].clone(),
    });
    partial.samples.remove(0);
    events.push(Event::UnitFinished(partial.clone()));
    partial.unit.name = "unseen".into();
    events.push(Event::UnitFinished(partial));
    // A unit whose long answer its own line quotes: the sample's line keeps it whole.
    let mut long = passed_unit();
    long.unit.name = "long".into();
    long.samples[0].interactions[0].answer = Some("ab".repeat(100_000));
    events.push(Event::SampleFinished {
        unit: long.unit.clone(),
        sample: long.samples[0].clone(),
    });
    long.quote_answers();
    assert_eq!(long.samples[0].interactions[0].answer_bytes, Some(200_000));
    events.push(Event::UnitFinished(long));

    let capture = Capture::default();
    feed(&mut JsonLines::new(capture.clone()), &events);
    let written = capture.text();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), events.len());
    for (line, event) in lines.iter().zip(&events) {
        let expected = serde_json::to_string(&Line::from(event)).unwrap();
        assert_eq!(*line, expected);
    }
    // The whole answer is written once: in the sample's line, not again in the unit's.
    let whole = "ab".repeat(100_000);
    let holding: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains(&whole))
        .copied()
        .collect();
    assert_eq!(holding.len(), 1);
    assert!(holding[0].contains("\"sample_finished\""));
    let unit_line = lines.last().unwrap();
    assert!(unit_line.len() < 70_000, "{}", unit_line.len());
    assert!(unit_line.contains("\"answer_bytes\":200000"));
}
