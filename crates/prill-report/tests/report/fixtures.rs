//! Hand-built events: units that pass, fail, error and get skipped, and a shared
//! in-memory writer to capture what reporters write.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prill_check::{CheckResult, Evaluation, Outcome, Response, run_check};
use prill_run::events::{
    CallInfo, ErrorInfo, InteractionReport, SampleReport, TrajectoryStep, TurnInfo,
};
use prill_run::{Event, Status, Summary, Tally, UnitId, UnitReport};
use prill_spec::model::data_driven::{StockTest, SuccessRatio};
use prill_spec::plan::{Check, CheckKind, Dialect, Gate, Location, Part};
use serde_json::json;

/// The message of the keyword check that fails in [`failed_unit`].
pub(crate) const KEYWORD_FAILURE: &str = "text: expected to contain [\"hello\"], found \"bye\"";
/// The message of the connection error in [`errored_unit`].
pub(crate) const UNREACHABLE: &str = "cannot reach http://127.0.0.1:9/: connection refused";

/// A writer whose bytes stay readable after it is handed over.
#[derive(Debug, Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub(crate) fn unit_id(name: &str, file: &str, connection: &str) -> UnitId {
    UnitId {
        case_id: format!("{name}-id"),
        name: name.to_owned(),
        file: PathBuf::from(file),
        dialect: Dialect::DataDriven,
        connection: connection.to_owned(),
        target: "hello_world".to_owned(),
        tags: Vec::new(),
    }
}

pub(crate) fn passed_check() -> CheckResult {
    CheckResult {
        path: "interactions[0].response.text.value".into(),
        name: "value".into(),
        target: "text".into(),
        expected: Some(json!("hi")),
        found: Some(json!("hi")),
        outcome: Outcome::Evaluated {
            evaluation: Evaluation::pass_fail(true),
            message: "text: equals \"hi\" as expected".into(),
        },
        location: Some(Location {
            line: std::num::NonZeroU32::new(7).unwrap(),
            column: 13,
        }),
    }
}

/// A real failing check: `keywords ["hello"]` against the answer `bye`.
pub(crate) fn failed_check() -> CheckResult {
    let check = Check {
        path: "interactions[0].response.text.keywords".into(),
        kind: CheckKind::Stock {
            part: Part::Text,
            field: vec![],
            test: StockTest::Keywords,
            negated: false,
            expected: Box::new(json!(["hello"])),
        },
        location: Some(Location {
            line: std::num::NonZeroU32::new(8).unwrap(),
            column: 13,
        }),
    };
    let result = futures::executor::block_on(run_check(&check, &Response::text("bye"), None));
    assert_eq!(result.status(), prill_check::Status::Failed);
    assert!(
        result.message().starts_with(KEYWORD_FAILURE),
        "{}",
        result.message()
    );
    result
}

pub(crate) fn errored_check(message: &str) -> CheckResult {
    CheckResult {
        path: "interactions[0].response.text.gist".into(),
        name: "gist".into(),
        target: "text".into(),
        expected: Some(json!("a greeting")),
        found: Some(json!("hello there")),
        outcome: Outcome::Errored {
            message: message.to_owned(),
        },
        location: None,
    }
}

pub(crate) fn sample(
    index: u32,
    status: Status,
    checks: Vec<CheckResult>,
    error: Option<ErrorInfo>,
) -> SampleReport {
    SampleReport {
        index,
        status,
        duration: Duration::from_millis(100),
        interactions: vec![InteractionReport {
            index: 0,
            sent: Some("hi".into()),
            sent_sly_data: None,
            answer: error.is_none().then(|| "bye".to_owned()),
            answer_bytes: None,
            structure: None,
            sly_data: None,
            duration: Duration::from_millis(90),
            checks,
            error,
            call: CallInfo::default(),
            user: None,
        }],
        error: None,
        taped: Default::default(),
    }
}

/// What a reasoning model's tool loop that hit its token limit reports: 509 output
/// tokens over two model calls, 500 of them hidden reasoning, the temperature it was
/// not sent, and its one tool call, made in the first turn.
pub(crate) fn truncated_call() -> CallInfo {
    CallInfo {
        usage: Some(prill_check::TokenUsage {
            input: Some(12),
            output: Some(509),
            reasoning: Some(500),
        }),
        time_to_first_byte: Some(Duration::from_millis(40)),
        stop_reason: Some("length".into()),
        refusal: false,
        cached: false,
        cost: None,
        notes: vec!["temperature 0.2 not sent: gpt-5.1 is a reasoning model and takes only its default temperature, 1".into()],
        turns: vec![
            TurnInfo {
                turn: 1,
                usage: Some(prill_check::TokenUsage {
                    input: Some(5),
                    output: Some(9),
                    reasoning: None,
                }),
                latency: Duration::from_millis(30),
                time_to_first_byte: Some(Duration::from_millis(40)),
                stop_reason: Some("tool_calls".into()),
                tool_calls: 1,
            },
            TurnInfo {
                turn: 2,
                usage: Some(prill_check::TokenUsage {
                    input: Some(7),
                    output: Some(500),
                    reasoning: Some(500),
                }),
                latency: Duration::from_millis(50),
                time_to_first_byte: None,
                stop_reason: Some("length".into()),
                tool_calls: 0,
            },
        ],
        trajectory: vec![TrajectoryStep {
            turn: 1,
            tool: "search".into(),
            arguments: json!({"q": "hello"}),
            result: Some(json!({"hits": 0})),
            is_error: false,
        }],
        steps: Vec::new(),
    }
}

fn report(unit: UnitId, ratio: (u32, u32), samples: Vec<SampleReport>) -> UnitReport {
    let success_ratio = SuccessRatio {
        need: ratio.0,
        of: ratio.1,
    };
    let mut tally = Tally::default();
    for s in &samples {
        tally.add(s.status);
    }
    let verdict = if samples.is_empty() {
        Status::Skipped
    } else {
        tally.final_verdict(success_ratio)
    };
    UnitReport {
        unit,
        verdict,
        gate: Gate::Ratio(success_ratio),
        quarantine: None,
        tally,
        samples,
        duration: Duration::from_millis(300),
    }
}

/// `greets [direct]`: 2 of 2 passed, 2/3 needed.
pub(crate) fn passed_unit() -> UnitReport {
    let s = |i| sample(i, Status::Passed, vec![passed_check()], None);
    report(
        unit_id("greets", "cases/a.hocon", "direct"),
        (2, 3),
        vec![s(0), s(1)],
    )
}

/// `greets [http]`: 1 of 3 passed, 2/3 needed; the same keyword check failed twice.
pub(crate) fn failed_unit() -> UnitReport {
    let failing = |i| {
        let mut s = sample(
            i,
            Status::Failed,
            vec![passed_check(), failed_check()],
            None,
        );
        s.interactions[0].call = truncated_call();
        s.interactions[0].sent_sly_data = Some(json!({"user": "ringo"}));
        s
    };
    let samples = vec![
        failing(0),
        sample(1, Status::Passed, vec![passed_check()], None),
        failing(2),
    ];
    report(unit_id("greets", "cases/a.hocon", "http"), (2, 3), samples)
}

/// `looks up [http]`: the agent was unreachable, and a judge failed.
pub(crate) fn errored_unit() -> UnitReport {
    let unreachable = Some(ErrorInfo {
        kind: prill_run::events::ErrorKind::Unreachable,
        message: UNREACHABLE.into(),
    });
    let samples = vec![
        sample(0, Status::Errored, vec![], unreachable),
        sample(
            1,
            Status::Errored,
            vec![errored_check("text: the judge failed: timed out")],
            None,
        ),
    ];
    report(unit_id("looks up", "cases/b.yaml", "http"), (1, 2), samples)
}

/// `farewell [direct]`: never ran.
pub(crate) fn skipped_unit() -> UnitReport {
    report(
        unit_id("farewell", "cases/b.yaml", "direct"),
        (1, 1),
        vec![],
    )
}

pub(crate) fn summary(cancelled: bool) -> Summary {
    Summary {
        passed: 1,
        failed: 1,
        errored: 1,
        inconclusive: 0,
        waived: prill_run::Waived::default(),
        skipped: 1,
        cancelled,
        stopped: false,
        duration: Duration::from_millis(1234),
    }
}

/// A whole run: each unit starts, its samples finish, it finishes; then the summary.
pub(crate) fn run(cancelled: bool) -> Vec<Event> {
    let units = [passed_unit(), failed_unit(), errored_unit(), skipped_unit()];
    let mut events = vec![Event::RunStarted { units: units.len() }];
    for unit in units {
        if !unit.samples.is_empty() {
            events.push(Event::UnitStarted {
                unit: unit.unit.clone(),
            });
        }
        for sample in &unit.samples {
            events.push(Event::SampleFinished {
                unit: unit.unit.clone(),
                sample: sample.clone(),
            });
        }
        events.push(Event::UnitFinished(unit));
    }
    events.push(Event::RunFinished(summary(cancelled)));
    events
}

/// Feeds `events` to `reporter` and finishes it.
pub(crate) fn feed(reporter: &mut impl prill_report::Reporter, events: &[Event]) {
    for event in events {
        reporter.event(event).unwrap();
    }
    reporter.finish().unwrap();
}
