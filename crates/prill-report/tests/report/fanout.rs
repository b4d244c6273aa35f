//! Several reporters on one stream; one failing does not stop the others.

use std::io::{self, Write};

use prill_report::{
    Human, HumanOptions, JsonLines, JsonReport, Output, Reporter, Reporters, Stake,
};
use prill_run::Event;

use crate::fixtures::{Capture, run};

/// A writer that always fails.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(io::ErrorKind::BrokenPipe, "pipe closed"))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Counts what it is given.
#[derive(Default)]
struct Counter {
    events: std::sync::Arc<std::sync::Mutex<(usize, usize)>>,
}

impl Reporter for Counter {
    fn event(&mut self, _: &Event) -> io::Result<()> {
        self.events.lock().unwrap().0 += 1;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.events.lock().unwrap().1 += 1;
        Ok(())
    }
}

#[test]
fn every_reporter_gets_every_event() {
    let human = Capture::default();
    let json = Capture::default();
    let lines = Capture::default();
    let mut reporters = Reporters::new();
    reporters
        .push("human", Human::new(human.clone(), HumanOptions::default()))
        .push("json", JsonReport::new(Output::writer(json.clone())))
        .push("jsonl", JsonLines::new(lines.clone()));
    assert_eq!(reporters.len(), 3);
    let events = run(false);
    for event in &events {
        assert!(reporters.event(event).is_empty());
    }
    assert!(reporters.finish().is_empty());
    assert!(
        human
            .text()
            .contains("1 passed, 1 failed, 1 errored, 1 skipped in 1.23s")
    );
    assert!(json.text().contains("\"summary\""));
    assert_eq!(lines.text().lines().count(), events.len());
}

#[test]
fn a_failing_reporter_is_reported_once_and_the_others_carry_on() {
    let counter = Counter::default();
    let counts = counter.events.clone();
    let lines = Capture::default();
    let mut reporters = Reporters::new();
    reporters
        .push("jsonl", JsonLines::new(Broken))
        .push("count", counter)
        .push("lines", JsonLines::new(lines.clone()));
    let events = run(false);

    let errors = reporters.event(&events[0]);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].reporter, "jsonl");
    assert_eq!(
        errors[0].to_string(),
        "the jsonl reporter failed: pipe closed"
    );
    for event in &events[1..] {
        assert!(reporters.event(event).is_empty());
    }
    assert!(reporters.finish().is_empty());
    assert!(
        reporters.finish().is_empty(),
        "finishing twice does nothing"
    );

    assert_eq!(*counts.lock().unwrap(), (events.len(), 1));
    assert_eq!(lines.text().lines().count(), events.len());
}

#[test]
fn what_a_failure_means_is_set_when_the_reporter_is_added() {
    let mut reporters = Reporters::new();
    let lost = "the history keeps only what was written before";
    reporters
        .push("json", JsonLines::new(Broken))
        .push_with("human", JsonLines::new(Broken), Stake::Shown)
        .push_with("history", JsonLines::new(Broken), Stake::Kept { lost });
    let errors = reporters.event(&run(false)[0]);
    let stakes: Vec<(&str, Stake, bool)> = errors
        .iter()
        .map(|e| (e.reporter.as_str(), e.stake, e.fails_the_run()))
        .collect();
    assert_eq!(
        stakes,
        [
            ("json", Stake::Required, true),
            ("human", Stake::Shown, false),
            ("history", Stake::Kept { lost }, false),
        ]
    );
}
