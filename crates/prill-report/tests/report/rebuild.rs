//! Stored runs rebuilt into events: events → JSON Lines → events gives the same events
//! and every reporter the same output; a killed run's units become a cancelled run;
//! shards of one suite merge into one run, and shards that are not are named.

use prill_report::format::{RunInfo, RunSettings, Suite};
use prill_report::rebuild::{MergeError, Shard, merge};
use prill_report::stored::StoredRun;
use prill_report::{
    Github, Human, HumanOptions, JsonLines, JsonReport, Junit, LastRunReport, Markdown, Output,
    Reporter, Verbosity,
};
use prill_run::Event;

use crate::fixtures::{Capture, feed, run};

/// The JSON Lines text of `events`, as `--jsonl` writes it.
fn lines(events: &[Event]) -> String {
    let capture = Capture::default();
    feed(&mut JsonLines::new(capture.clone()), events);
    capture.text()
}

/// What every reporter writes for `events`, by name.
fn outputs(events: &[Event]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut each = |name, mut reporter: Box<dyn Reporter>, capture: Capture| {
        feed(&mut reporter, events);
        out.push((name, capture.text()));
    };
    let c = Capture::default();
    let human = HumanOptions {
        verbosity: Verbosity::Verbose,
        color: false,
        terminal: false,
        transcripts: true,
    };
    each("human", Box::new(Human::new(c.clone(), human)), c);
    let c = Capture::default();
    each(
        "json",
        Box::new(JsonReport::new(Output::writer(c.clone()))),
        c,
    );
    let c = Capture::default();
    each("jsonl", Box::new(JsonLines::new(c.clone())), c);
    let c = Capture::default();
    each("junit", Box::new(Junit::new(Output::writer(c.clone()))), c);
    let c = Capture::default();
    each(
        "markdown",
        Box::new(Markdown::new(Output::writer(c.clone()))),
        c,
    );
    let c = Capture::default();
    each("github", Box::new(Github::new(c.clone())), c);
    let c = Capture::default();
    let last = LastRunReport::new(Output::writer(c.clone()));
    each("last-run", Box::new(last), c);
    out
}

#[test]
fn events_come_back_from_their_lines_and_every_report_is_the_same() {
    for cancelled in [false, true] {
        let events = run(cancelled);
        let stored = StoredRun::parse(&lines(&events)).unwrap();
        let rebuilt = stored.events().unwrap();
        assert_eq!(rebuilt, events, "the engine's events, field for field");
        for ((name, before), (_, after)) in outputs(&events).into_iter().zip(outputs(&rebuilt)) {
            assert!(
                !before.is_empty() || name == "github",
                "{name} wrote nothing"
            );
            assert_eq!(before, after, "the {name} report differs once rebuilt");
        }
    }
}

#[test]
fn a_json_report_becomes_its_units_and_summary() {
    let events = run(false);
    let capture = Capture::default();
    feed(
        &mut JsonReport::new(Output::writer(capture.clone())),
        &events,
    );
    let rebuilt = StoredRun::parse(&capture.text()).unwrap().events().unwrap();
    let finished: Vec<&Event> = events
        .iter()
        .filter(|e| !matches!(e, Event::UnitStarted { .. } | Event::SampleFinished { .. }))
        .collect();
    assert_eq!(rebuilt.iter().collect::<Vec<_>>(), finished);
}

#[test]
fn a_killed_run_is_its_finished_units_and_says_it_was_cancelled() {
    let events = run(false);
    let text = lines(&events);
    // Killed while writing the third unit's `unit_finished`: two units are whole.
    let whole: Vec<&str> = text.lines().collect();
    let third = whole
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"unit_finished\""))
        .nth(2)
        .map(|(i, _)| i)
        .unwrap();
    let torn = format!("{}\n{}", whole[..third].join("\n"), &whole[third][..40]);
    let stored = StoredRun::parse(&torn).unwrap();
    assert!(stored.torn);
    assert_eq!(stored.unfinished(), Some((2, 4)));
    let rebuilt = stored.events().unwrap();
    let Some(Event::RunFinished(summary)) = rebuilt.last() else {
        panic!("a rebuilt run ends with run_finished: {rebuilt:?}")
    };
    assert!(summary.cancelled);
    assert_eq!(
        (
            summary.passed,
            summary.failed,
            summary.errored,
            summary.skipped
        ),
        (1, 1, 0, 2)
    );
    // The longest unit's duration: all the file says of how long it ran.
    assert_eq!(summary.duration, std::time::Duration::from_millis(300));
    let json = &outputs(&rebuilt)[1].1;
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(json["summary"]["cancelled"], true);
    assert_eq!(json["units"].as_array().unwrap().len(), 2);
}

/// A shard of the suite `fingerprint` (of 4 units): `partition` and the units of
/// `events` whose index modulo `count` is `index - 1`.
fn shard(path: &str, id: &str, fingerprint: &str, partition: Option<(u32, u32)>) -> Shard {
    let events = run(false);
    let units: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::UnitFinished(_)))
        .collect();
    let (index, count) = partition.unwrap_or((1, 1));
    let mine: Vec<Event> = units
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as u32 % count == index - 1)
        .map(|(_, e)| (*e).clone())
        .collect();
    let mut summary = prill_run::Summary::default();
    for e in &mine {
        if let Event::UnitFinished(u) = e {
            summary.add(u.verdict);
        }
    }
    summary.duration = std::time::Duration::from_millis(100 * u64::from(index));
    let mut stream = vec![Event::RunStarted { units: mine.len() }];
    stream.extend(mine);
    stream.push(Event::RunFinished(summary));
    let mut info = RunInfo::starting(
        "run",
        None,
        RunSettings {
            partition: partition.map(|(i, n)| format!("hash:{i}/{n}")),
            suite: Some(Suite::new(fingerprint, 4)),
            ..RunSettings::default()
        },
    );
    info.id = id.to_owned();
    let capture = Capture::default();
    let mut writer = JsonLines::new(capture.clone()).with_run(&info).unwrap();
    feed(&mut writer, &stream);
    Shard {
        path: path.into(),
        run: StoredRun::parse(&capture.text()).unwrap(),
    }
}

#[test]
fn the_parts_of_a_suite_merge_into_one_run() {
    let merged = merge(&[
        shard("b.jsonl", "b", "f00d", Some((2, 2))),
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
    ])
    .unwrap();
    let s = merged.summary;
    assert_eq!((s.passed, s.failed, s.errored, s.skipped), (1, 1, 1, 1));
    assert!(!s.cancelled && merged.warnings.is_empty());
    assert_eq!(
        s.duration,
        std::time::Duration::from_millis(200),
        "the longest shard"
    );
    assert_eq!(merged.events.first(), Some(&Event::RunStarted { units: 4 }));
    assert_eq!(merged.events.last(), Some(&Event::RunFinished(s)));
    // Part 1's units first.
    let names: Vec<String> = merged
        .events
        .iter()
        .filter_map(|e| match e {
            Event::UnitFinished(u) => Some(u.unit.label()),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        [
            "greets [direct]",
            "looks up [http]",
            "greets [http]",
            "farewell [direct]"
        ]
    );
    // As a stored run, it reads back to the same events.
    let stored = merged.stored();
    assert_eq!(stored.units.len(), 4);
    assert_eq!(stored.events().unwrap(), merged.events);
    assert_eq!(merged.info.command, "merge");
    assert_eq!(merged.info.settings.partition, None);
    assert_eq!(merged.info.settings.suite, Some(Suite::new("f00d", 4)));
}

#[test]
fn shards_that_do_not_make_one_suite_are_named() {
    let e = merge(&[shard("a.jsonl", "a", "f00d", Some((1, 3)))]).unwrap_err();
    assert!(matches!(&e, MergeError::Missing { missing, .. } if missing == &["2/3", "3/3"]));
    assert_eq!(
        e.to_string(),
        "the shards cover 1 of the 3 parts of the suite: 2/3, 3/3 missing; merge every part"
    );

    let e = merge(&[
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
        shard("b.jsonl", "b", "beef", Some((2, 2))),
        shard("c.jsonl", "c", "f00d", Some((2, 2))),
    ])
    .unwrap_err();
    let MergeError::OtherSuite { path, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(path.to_str(), Some("b.jsonl"), "the odd file out: {e}");

    let e = merge(&[
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
    ])
    .unwrap_err();
    assert!(matches!(e, MergeError::Twice { .. }), "{e}");

    let e = merge(&[
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
        shard("b.jsonl", "b", "f00d", Some((1, 2))),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("are both part 1/2"), "{e}");

    let e = merge(&[
        shard("a.jsonl", "a", "f00d", Some((1, 2))),
        shard("b.jsonl", "b", "f00d", Some((2, 3))),
    ])
    .unwrap_err();
    assert!(matches!(e, MergeError::OtherSplit { .. }), "{e}");

    let mut bare = shard("a.jsonl", "a", "f00d", None);
    bare.run.info = None;
    let e = merge(&[bare]).unwrap_err();
    assert!(matches!(e, MergeError::NoSuite { .. }), "{e}");
    assert!(matches!(merge(&[]).unwrap_err(), MergeError::NoShards));
}

#[test]
fn a_whole_run_merges_alone_and_an_unfinished_shard_is_a_warning() {
    let merged = merge(&[shard("a.jsonl", "a", "f00d", None)]).unwrap();
    assert_eq!(merged.summary.total(), 4);
    let mut killed = shard("b.jsonl", "b", "f00d", Some((2, 2)));
    killed.run.summary = None;
    killed.run.planned = Some(3);
    let merged = merge(&[shard("a.jsonl", "a", "f00d", Some((1, 2))), killed]).unwrap();
    assert!(merged.summary.cancelled);
    assert_eq!(merged.warnings.len(), 2, "{:?}", merged.warnings);
    assert!(merged.warnings[0].contains("b.jsonl did not finish (2 of 3 units finished)"));
    assert!(
        merged.warnings[1].contains("the parts planned 5 units but the suite has 4"),
        "{:?}",
        merged.warnings
    );
}
