//! From the engine's events to the report formats: the one place that decides how an
//! engine type appears in a report.

use prill_check::{CheckResult, Outcome};
use prill_run::events::{ErrorInfo, InteractionReport, SampleReport, TurnInfo};
use prill_run::{Event, UnitReport};

use super::{
    Check, CheckOutcome, Dialect, Error, Evaluation, GateAtRate, Gates, Interaction, Line,
    Location, PassRates, Quarantine, RatioGate, Record, ReliabilityPlan, Report, SCHEMA_VERSION,
    Sample, Status, Summary, Tally, Threshold, TrajectoryCall, Turn, Unit, UnitId, Usage, UserStop,
    UserTurn, Waived,
};

impl Report {
    /// The report of a run: its summary and the units that finished, in that order.
    pub fn new(summary: &prill_run::Summary, units: &[UnitReport]) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            summary: summary.into(),
            units: units.iter().map(Unit::from).collect(),
            gates: gates(units),
        }
    }
}

/// The figures of every distinct `success_ratio` of `units` (skipped ones left out).
fn gates(units: &[UnitReport]) -> Option<Gates> {
    gates_of(
        units
            .iter()
            .filter(|u| u.verdict != prill_check::Status::Skipped)
            .filter_map(|u| u.gate.ratio().map(|r| (r.need, r.of))),
    )
}

/// The figures of every distinct `success_ratio` of `ratios` (`(need, of)`, one per
/// unit), judged at `prill explain`'s default rates; `None` without any.
pub(crate) fn gates_of(ratios: impl Iterator<Item = (u32, u32)>) -> Option<Gates> {
    use prill_stats::explain::{Gate, explain};
    let reference = prill_stats::Reliability::default();
    let mut counts: std::collections::BTreeMap<(u32, u32), u64> = Default::default();
    for ratio in ratios {
        *counts.entry(ratio).or_default() += 1;
    }
    if counts.is_empty() {
        return None;
    }
    let mut ratios: Vec<RatioGate> = counts
        .into_iter()
        .map(|((need, of), units)| {
            let f = explain(&Gate::Ratio(prill_stats::KOfN { need, of }), &reference);
            RatioGate {
                success_ratio: format!("{need}/{of}"),
                units,
                rates: f
                    .rates
                    .iter()
                    .map(|r| GateAtRate {
                        p: r.p,
                        pass: six(r.outcomes.pass),
                        expected_samples: six(r.outcomes.expected_samples),
                    })
                    .collect(),
                false_fail: six(f.false_fail),
                false_pass: six(f.false_pass),
            }
        })
        .collect();
    // Strictest first: the least likely to pass a bad agent.
    ratios.sort_by(|a, b| a.false_pass.total_cmp(&b.false_pass));
    Some(Gates {
        good: reference.good,
        bad: reference.bad,
        expected_false_failures: six(ratios.iter().map(|r| r.false_fail * r.units as f64).sum()),
        ratios,
    })
}

/// `x` to six decimals: a probability's last digits are rounding, not information.
fn six(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl From<&Event> for Line {
    fn from(event: &Event) -> Line {
        Line {
            schema_version: SCHEMA_VERSION,
            record: event.into(),
        }
    }
}

impl From<&Event> for Record {
    fn from(event: &Event) -> Record {
        match event {
            Event::RunStarted { units } => Record::RunStarted {
                units: *units as u64,
            },
            Event::UnitStarted { unit } => Record::UnitStarted { unit: unit.into() },
            Event::SampleFinished { unit, sample } => Record::SampleFinished {
                unit: unit.into(),
                sample: sample.into(),
            },
            Event::UnitFinished(unit) => Record::UnitFinished(unit.into()),
            Event::WorkersReady(w) => Record::WorkersReady {
                what: w.what.clone(),
                ready: w.ready as u64,
                failed: w.failed as u64,
                took: w.took.as_secs_f64(),
            },
            Event::RunFinished(summary) => Record::RunFinished(summary.into()),
        }
    }
}

impl From<&prill_run::Summary> for Summary {
    fn from(s: &prill_run::Summary) -> Summary {
        Summary {
            passed: s.passed as u64,
            failed: s.failed as u64,
            errored: s.errored as u64,
            inconclusive: s.inconclusive as u64,
            skipped: s.skipped as u64,
            waived: (s.waived.total() > 0).then_some(Waived {
                failed: s.waived.failed as u64,
                errored: s.waived.errored as u64,
                inconclusive: s.waived.inconclusive as u64,
            }),
            cancelled: s.cancelled,
            stopped: s.stopped,
            duration: s.duration.as_secs_f64(),
        }
    }
}

impl From<prill_check::Status> for Status {
    fn from(status: prill_check::Status) -> Status {
        match status {
            prill_check::Status::Passed => Status::Passed,
            prill_check::Status::Failed => Status::Failed,
            prill_check::Status::Errored => Status::Errored,
            prill_check::Status::Inconclusive => Status::Inconclusive,
            prill_check::Status::Unscored => Status::Unscored,
            prill_check::Status::Skipped => Status::Skipped,
        }
    }
}

impl From<prill_spec::plan::Dialect> for Dialect {
    fn from(dialect: prill_spec::plan::Dialect) -> Dialect {
        use prill_spec::plan::Dialect as D;
        match dialect {
            D::DataDriven => Dialect::DataDriven,
            D::SentinelSpec => Dialect::SentinelSpec,
            D::SentinelSuite => Dialect::SentinelSuite,
            D::Config => Dialect::Config,
            D::RustSuite => Dialect::RustSuite,
        }
    }
}

impl From<&prill_run::UnitId> for UnitId {
    fn from(id: &prill_run::UnitId) -> UnitId {
        UnitId {
            case_id: id.case_id.clone(),
            name: id.name.clone(),
            file: id.file.to_string_lossy().into_owned(),
            dialect: id.dialect.into(),
            connection: id.connection.clone(),
            target: id.target.clone(),
            tags: id.tags.clone(),
        }
    }
}

impl From<&UnitReport> for Unit {
    fn from(unit: &UnitReport) -> Unit {
        Unit {
            unit: (&unit.unit).into(),
            verdict: unit.verdict.into(),
            success_ratio: unit.gate.ratio().map(|r| r.to_string()),
            reliability: unit.gate.reliability().map(|r| ReliabilityPlan {
                good: r.good,
                bad: r.bad,
                false_pass: r.false_pass,
                false_fail: r.false_fail,
                max_samples: r.max_samples,
            }),
            quarantine: unit.quarantine.as_ref().map(|q| Quarantine {
                file: q.file.clone(),
                case: q.case.clone(),
                reason: q.reason.clone(),
                owner: q.owner.clone(),
                expires: q.expires.to_string(),
            }),
            tally: Tally {
                passed: unit.tally.passed,
                failed: unit.tally.failed,
                errored: unit.tally.errored,
            },
            rates: PassRates::of(&Tally {
                passed: unit.tally.passed,
                failed: unit.tally.failed,
                errored: unit.tally.errored,
            }),
            samples: unit.samples.iter().map(Sample::from).collect(),
            duration: unit.duration.as_secs_f64(),
            source: prill_run::events::Taped::source(&unit.samples).into(),
        }
    }
}

impl From<&SampleReport> for Sample {
    fn from(sample: &SampleReport) -> Sample {
        Sample {
            index: sample.index,
            status: sample.status.into(),
            duration: sample.duration.as_secs_f64(),
            interactions: sample.interactions.iter().map(Interaction::from).collect(),
            error: sample.error.as_ref().map(Error::from),
            cassettes: (sample.taped != prill_run::events::Taped::default()).then_some(
                super::SampleCassettes {
                    replayed: sample.taped.replayed,
                    recorded: sample.taped.recorded,
                },
            ),
        }
    }
}

impl From<&InteractionReport> for Interaction {
    fn from(i: &InteractionReport) -> Interaction {
        Interaction {
            index: i.index as u64,
            sent: i.sent.clone(),
            sent_sly_data: i.sent_sly_data.clone(),
            answer: i.answer.clone(),
            answer_bytes: i.answer_bytes,
            structure: i.structure.clone(),
            sly_data: i.sly_data.clone(),
            duration: i.duration.as_secs_f64(),
            checks: i.checks.iter().map(Check::from).collect(),
            error: i.error.as_ref().map(Error::from),
            usage: i.call.usage.as_ref().map(usage),
            cost: i.call.cost,
            time_to_first_token: i.call.time_to_first_byte.map(|d| d.as_secs_f64()),
            stop_reason: i.call.stop_reason.clone(),
            truncated: i.call.truncated(),
            refusal: i.call.refusal,
            cached: i.call.cached,
            notes: i.call.notes.clone(),
            turns: i.call.turns.iter().map(Turn::from).collect(),
            trajectory: i
                .call
                .trajectory
                .iter()
                .map(|t| TrajectoryCall {
                    turn: t.turn,
                    tool: t.tool.clone(),
                    arguments: t.arguments.clone(),
                    result: t.result.clone(),
                    is_error: t.is_error,
                })
                .collect(),
            steps: i.call.steps.clone(),
            user: i.user.as_ref().map(|u| UserTurn {
                simulated: u.simulated,
                stop: u.stop.as_ref().map(|s| UserStop {
                    reason: s.reason,
                    said: s.said.clone(),
                }),
            }),
        }
    }
}

fn usage(u: &prill_check::TokenUsage) -> Usage {
    Usage {
        input: u.input,
        output: u.output,
        reasoning: u.reasoning,
        answer: u.answer(),
    }
}

impl From<&TurnInfo> for Turn {
    fn from(t: &TurnInfo) -> Turn {
        Turn {
            turn: t.turn,
            usage: t.usage.as_ref().map(usage),
            duration: t.latency.as_secs_f64(),
            time_to_first_token: t.time_to_first_byte.map(|d| d.as_secs_f64()),
            stop_reason: t.stop_reason.clone(),
            tool_calls: t.tool_calls as u64,
        }
    }
}

impl From<&ErrorInfo> for Error {
    fn from(e: &ErrorInfo) -> Error {
        Error {
            kind: e.kind.name().to_owned(),
            message: e.message.clone(),
        }
    }
}

impl From<&CheckResult> for Check {
    fn from(c: &CheckResult) -> Check {
        let outcome = match &c.outcome {
            Outcome::Evaluated {
                evaluation,
                message,
            } => CheckOutcome::Evaluated {
                evaluation: evaluation.into(),
                message: message.clone(),
            },
            Outcome::Errored { message } => CheckOutcome::Errored {
                message: message.clone(),
            },
        };
        Check {
            path: c.path.to_string(),
            name: c.name.clone(),
            target: c.target.clone(),
            expected: c.expected.clone(),
            found: c.found.clone(),
            status: c.status().into(),
            outcome,
            location: c.location.map(|l| Location {
                line: l.line.get(),
                column: l.column,
            }),
        }
    }
}

impl From<&prill_check::Evaluation> for Evaluation {
    fn from(e: &prill_check::Evaluation) -> Evaluation {
        Evaluation {
            score: e.score,
            threshold: e.threshold.as_ref().map(Threshold::from),
            metadata: e.metadata.clone(),
        }
    }
}

impl From<&prill_check::Threshold> for Threshold {
    fn from(t: &prill_check::Threshold) -> Threshold {
        Threshold {
            lt: t.lt,
            lte: t.lte,
            gt: t.gt,
            gte: t.gte,
        }
    }
}
