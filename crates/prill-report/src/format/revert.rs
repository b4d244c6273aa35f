//! From the report formats back to the engine's events: the reverse of `convert.rs`, so
//! that a stored run (a history file, a `--jsonl` stream, a JSON report) can be fed to
//! every reporter as if it were running (`prill report --from`, `prill report merge`).
//!
//! What the format derives from other fields (a check's `status`, a usage's `answer`,
//! an interaction's `truncated`) is derived again by the engine's types; what the
//! engine does not carry (an interaction's `cost`) is left out. Durations come back
//! from seconds to the nanosecond the `f64` holds.

use std::path::PathBuf;
use std::time::Duration;

use prill_check::{CheckResult, Outcome, TokenUsage};
use prill_run::events::{
    CallInfo, ErrorInfo, ErrorKind, InteractionReport, SampleReport, TrajectoryStep, TurnInfo,
};
use prill_run::{Event, UnitReport};
use prill_spec::model::data_driven::SuccessRatio;
use prill_spec::model::gate::{Gate, Reliability};

use super::{
    Check, CheckOutcome, Dialect, Error, Evaluation, Interaction, Line, Record, ReliabilityPlan,
    Sample, Status, Summary, Threshold, Turn, Unit, UnitId, Usage,
};

/// Why a record of the report format cannot become an engine event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RevertError {
    /// An error kind this Prill does not know (a newer Prill wrote it).
    #[error(
        "the error kind `{0}` is not one this Prill knows; a newer Prill wrote this run, so update Prill to read it"
    )]
    ErrorKind(String),
    /// A unit's `success_ratio` is not `k/n`.
    #[error("the success ratio `{text}` is not of the form `k/n`: {reason}")]
    Ratio {
        /// What the file says.
        text: String,
        /// Why it was refused.
        reason: String,
    },
    /// A unit has both a `success_ratio` and a `reliability` gate, or neither.
    #[error("a unit has one gate, a `success_ratio` or a `reliability`; this one has {0}")]
    Gate(&'static str),
    /// A duration is negative, not a number, or too large.
    #[error("the duration {0} is not a number of seconds a run can take")]
    Duration(f64),
}

/// Every error kind, so that a kind's name finds its kind.
const ERROR_KINDS: [ErrorKind; 15] = [
    ErrorKind::Unreachable,
    ErrorKind::UnknownAgent,
    ErrorKind::Status,
    ErrorKind::Protocol,
    ErrorKind::Timeout,
    ErrorKind::TooLarge,
    ErrorKind::Tls,
    ErrorKind::Io,
    ErrorKind::Spawn,
    ErrorKind::Config,
    ErrorKind::MaxIterations,
    ErrorKind::Panic,
    ErrorKind::Function,
    ErrorKind::NoCassette,
    ErrorKind::Simulator,
];

impl Line {
    /// The engine event this line records; `None` for the `run` line, which says which
    /// run it is rather than what happened.
    pub fn to_event(&self) -> Result<Option<Event>, RevertError> {
        self.record.to_event()
    }
}

impl Record {
    /// The engine event this record records; `None` for [`Record::Run`].
    pub fn to_event(&self) -> Result<Option<Event>, RevertError> {
        Ok(Some(match self {
            Record::Run(_) => return Ok(None),
            Record::RunStarted { units } => Event::RunStarted {
                units: usize::try_from(*units).unwrap_or(usize::MAX),
            },
            Record::UnitStarted { unit } => Event::UnitStarted { unit: unit.into() },
            Record::SampleFinished { unit, sample } => Event::SampleFinished {
                unit: unit.into(),
                sample: sample.try_into()?,
            },
            Record::UnitFinished(unit) => Event::UnitFinished(unit.try_into()?),
            Record::WorkersReady {
                what,
                ready,
                failed,
                took,
            } => Event::WorkersReady(prill_run::WorkersReady {
                what: what.clone(),
                ready: count(*ready),
                failed: count(*failed),
                took: duration(*took)?,
            }),
            Record::RunFinished(summary) => Event::RunFinished(summary.try_into()?),
        }))
    }
}

fn duration(seconds: f64) -> Result<Duration, RevertError> {
    Duration::try_from_secs_f64(seconds).map_err(|_| RevertError::Duration(seconds))
}

fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl TryFrom<&Summary> for prill_run::Summary {
    type Error = RevertError;

    fn try_from(s: &Summary) -> Result<prill_run::Summary, RevertError> {
        Ok(prill_run::Summary {
            passed: count(s.passed),
            failed: count(s.failed),
            errored: count(s.errored),
            inconclusive: count(s.inconclusive),
            skipped: count(s.skipped),
            waived: s
                .waived
                .map_or_else(Default::default, |w| prill_run::Waived {
                    failed: count(w.failed),
                    errored: count(w.errored),
                    inconclusive: count(w.inconclusive),
                }),
            cancelled: s.cancelled,
            stopped: s.stopped,
            duration: duration(s.duration)?,
        })
    }
}

impl From<Status> for prill_check::Status {
    fn from(status: Status) -> prill_check::Status {
        match status {
            Status::Passed => prill_check::Status::Passed,
            Status::Failed => prill_check::Status::Failed,
            Status::Errored => prill_check::Status::Errored,
            Status::Inconclusive => prill_check::Status::Inconclusive,
            Status::Unscored => prill_check::Status::Unscored,
            Status::Skipped => prill_check::Status::Skipped,
        }
    }
}

impl From<Dialect> for prill_spec::plan::Dialect {
    fn from(dialect: Dialect) -> prill_spec::plan::Dialect {
        use prill_spec::plan::Dialect as D;
        match dialect {
            Dialect::DataDriven => D::DataDriven,
            Dialect::SentinelSpec => D::SentinelSpec,
            Dialect::SentinelSuite => D::SentinelSuite,
            Dialect::Config => D::Config,
            Dialect::RustSuite => D::RustSuite,
        }
    }
}

impl From<&UnitId> for prill_run::UnitId {
    fn from(id: &UnitId) -> prill_run::UnitId {
        prill_run::UnitId {
            case_id: id.case_id.clone(),
            name: id.name.clone(),
            file: PathBuf::from(&id.file),
            dialect: id.dialect.into(),
            connection: id.connection.clone(),
            target: id.target.clone(),
            tags: id.tags.clone(),
        }
    }
}

impl From<ReliabilityPlan> for Reliability {
    fn from(r: ReliabilityPlan) -> Reliability {
        Reliability {
            good: r.good,
            bad: r.bad,
            false_pass: r.false_pass,
            false_fail: r.false_fail,
            max_samples: r.max_samples,
        }
    }
}

impl Unit {
    /// The gate the unit was held to, from its `success_ratio` or its `reliability`.
    pub fn gate(&self) -> Result<Gate, RevertError> {
        gate_of(self)
    }
}

fn gate_of(unit: &Unit) -> Result<Gate, RevertError> {
    match (&unit.success_ratio, &unit.reliability) {
        (Some(text), None) => {
            SuccessRatio::parse(text)
                .map(Gate::Ratio)
                .map_err(|e| RevertError::Ratio {
                    text: text.clone(),
                    reason: e.to_string(),
                })
        }
        (None, Some(r)) => Ok(Gate::Reliability((*r).into())),
        (Some(_), Some(_)) => Err(RevertError::Gate("both")),
        (None, None) => Err(RevertError::Gate("neither")),
    }
}

impl TryFrom<&Unit> for UnitReport {
    type Error = RevertError;

    fn try_from(unit: &Unit) -> Result<UnitReport, RevertError> {
        let gate = gate_of(unit)?;
        Ok(UnitReport {
            unit: (&unit.unit).into(),
            verdict: unit.verdict.into(),
            gate,
            quarantine: unit.quarantine.as_ref().and_then(|q| {
                Some(std::sync::Arc::new(prill_spec::model::quarantine::Entry {
                    file: q.file.clone(),
                    case: q.case.clone(),
                    reason: q.reason.clone(),
                    owner: q.owner.clone(),
                    expires: prill_spec::model::quarantine::Date::parse(&q.expires)?,
                    at: (0, 0),
                }))
            }),
            tally: prill_run::Tally {
                passed: unit.tally.passed,
                failed: unit.tally.failed,
                errored: unit.tally.errored,
            },
            samples: unit
                .samples
                .iter()
                .map(SampleReport::try_from)
                .collect::<Result<_, _>>()?,
            duration: duration(unit.duration)?,
        })
    }
}

impl TryFrom<&Sample> for SampleReport {
    type Error = RevertError;

    fn try_from(sample: &Sample) -> Result<SampleReport, RevertError> {
        Ok(SampleReport {
            index: sample.index,
            status: sample.status.into(),
            duration: duration(sample.duration)?,
            interactions: sample
                .interactions
                .iter()
                .map(InteractionReport::try_from)
                .collect::<Result<_, _>>()?,
            error: sample.error.as_ref().map(ErrorInfo::try_from).transpose()?,
            taped: sample
                .cassettes
                .map(|c| prill_run::events::Taped {
                    replayed: c.replayed,
                    recorded: c.recorded,
                })
                .unwrap_or_default(),
        })
    }
}

impl TryFrom<&Interaction> for InteractionReport {
    type Error = RevertError;

    fn try_from(i: &Interaction) -> Result<InteractionReport, RevertError> {
        let call = CallInfo {
            usage: i.usage.as_ref().map(usage),
            cost: i.cost,
            time_to_first_byte: i.time_to_first_token.map(duration).transpose()?,
            stop_reason: i.stop_reason.clone(),
            refusal: i.refusal,
            cached: i.cached,
            notes: i.notes.clone(),
            turns: i
                .turns
                .iter()
                .map(TurnInfo::try_from)
                .collect::<Result<_, _>>()?,
            trajectory: i
                .trajectory
                .iter()
                .map(|t| TrajectoryStep {
                    turn: t.turn,
                    tool: t.tool.clone(),
                    arguments: t.arguments.clone(),
                    result: t.result.clone(),
                    is_error: t.is_error,
                })
                .collect(),
            steps: i.steps.clone(),
        };
        Ok(InteractionReport {
            index: usize::try_from(i.index).unwrap_or(usize::MAX),
            sent: i.sent.clone(),
            sent_sly_data: i.sent_sly_data.clone(),
            answer: i.answer.clone(),
            answer_bytes: i.answer_bytes,
            structure: i.structure.clone(),
            sly_data: i.sly_data.clone(),
            duration: duration(i.duration)?,
            checks: i.checks.iter().map(CheckResult::from).collect(),
            error: i.error.as_ref().map(ErrorInfo::try_from).transpose()?,
            call,
            user: i.user.as_ref().map(|u| prill_run::events::UserTurn {
                simulated: u.simulated,
                stop: u.stop.as_ref().map(|s| prill_run::events::UserStop {
                    reason: s.reason,
                    said: s.said.clone(),
                }),
            }),
        })
    }
}

fn usage(u: &Usage) -> TokenUsage {
    TokenUsage {
        input: u.input,
        output: u.output,
        reasoning: u.reasoning,
    }
}

impl TryFrom<&Turn> for TurnInfo {
    type Error = RevertError;

    fn try_from(t: &Turn) -> Result<TurnInfo, RevertError> {
        Ok(TurnInfo {
            turn: t.turn,
            usage: t.usage.as_ref().map(usage),
            latency: duration(t.duration)?,
            time_to_first_byte: t.time_to_first_token.map(duration).transpose()?,
            stop_reason: t.stop_reason.clone(),
            tool_calls: count(t.tool_calls),
        })
    }
}

impl TryFrom<&Error> for ErrorInfo {
    type Error = RevertError;

    fn try_from(e: &Error) -> Result<ErrorInfo, RevertError> {
        let kind = ERROR_KINDS
            .into_iter()
            .find(|k| k.name() == e.kind)
            .ok_or_else(|| RevertError::ErrorKind(e.kind.clone()))?;
        Ok(ErrorInfo {
            kind,
            message: e.message.clone(),
        })
    }
}

impl From<&Check> for CheckResult {
    fn from(c: &Check) -> CheckResult {
        let outcome = match &c.outcome {
            CheckOutcome::Evaluated {
                evaluation,
                message,
            } => Outcome::Evaluated {
                evaluation: evaluation.into(),
                message: message.clone(),
            },
            CheckOutcome::Errored { message } => Outcome::Errored {
                message: message.clone(),
            },
        };
        CheckResult {
            path: c.path.as_str().into(),
            name: c.name.clone(),
            target: c.target.clone(),
            expected: c.expected.clone(),
            found: c.found.clone(),
            outcome,
            location: c.location.and_then(|l| {
                Some(prill_spec::plan::Location {
                    line: std::num::NonZeroU32::new(l.line)?,
                    column: l.column,
                })
            }),
        }
    }
}

impl From<&Evaluation> for prill_check::Evaluation {
    fn from(e: &Evaluation) -> prill_check::Evaluation {
        prill_check::Evaluation {
            score: e.score,
            threshold: e.threshold.as_ref().map(prill_check::Threshold::from),
            metadata: e.metadata.clone(),
        }
    }
}

impl From<&Threshold> for prill_check::Threshold {
    fn from(t: &Threshold) -> prill_check::Threshold {
        prill_check::Threshold {
            lt: t.lt,
            lte: t.lte,
            gt: t.gt,
            gte: t.gte,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_kind_comes_back_by_its_name() {
        for kind in ERROR_KINDS {
            let e = Error {
                kind: kind.name().to_owned(),
                message: "m".to_owned(),
            };
            assert_eq!(ErrorInfo::try_from(&e).unwrap().kind, kind);
        }
        let newer = Error {
            kind: "quantum".to_owned(),
            message: "m".to_owned(),
        };
        let e = ErrorInfo::try_from(&newer).unwrap_err();
        assert!(e.to_string().contains("update Prill"), "{e}");
    }

    #[test]
    fn a_negative_duration_is_refused_not_a_panic() {
        let summary = Summary {
            passed: 0,
            failed: 0,
            errored: 0,
            inconclusive: 0,
            skipped: 0,
            waived: None,
            cancelled: false,
            stopped: false,
            duration: -1.0,
        };
        assert_eq!(
            prill_run::Summary::try_from(&summary).unwrap_err(),
            RevertError::Duration(-1.0)
        );
        let nan = Summary {
            duration: f64::NAN,
            ..summary
        };
        assert!(prill_run::Summary::try_from(&nan).is_err());
    }
}
