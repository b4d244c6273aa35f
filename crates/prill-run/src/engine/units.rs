//! Scheduling: the units of a plan, and the samples of one unit, each started only when
//! a `jobs` permit is free and stopped once the unit's ratio is decided.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_check::Judge;
use prill_spec::model::data_driven::Connection;
use prill_spec::model::gate::Gate;
use prill_spec::model::sentinel::Framework;
use prill_spec::plan::under::Under;
use prill_spec::plan::{Case, Plan, Target};
use prill_target::Connector;
use prill_target::model::Provider;
use prill_target::scope::{SampleScope, in_sample};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::conversation::conversation;
use super::model_call::provider_of;
use super::{Frameworks, seconds};
use crate::events::{
    ErrorInfo, ErrorKind, Event, InteractionReport, SampleReport, UnitId, UnitReport,
};
use crate::gate::Progress;
use crate::ratio::{Status, Tally};
use crate::trace::Tracing;

/// Every unit of `plan`: each agent case over each of its connections (`connections`
/// when given, which replace every case's own), each model case once. Lazily: a case is
/// taken for its units only when the run comes to it, copied from a borrowed plan (so a
/// run holds the copies of the cases in flight, not a second copy of the plan) and
/// moved out of a given one.
pub(super) fn units_of<'a>(
    plan: Cow<'a, Plan>,
    connections: Option<&'a [Connection]>,
) -> impl Iterator<Item = (Arc<Case>, Option<Connection>)> + Send + 'a {
    let cases: Box<dyn Iterator<Item = Case> + Send + 'a> = match plan {
        Cow::Borrowed(plan) => Box::new(plan.cases.iter().cloned()),
        Cow::Owned(plan) => Box::new(plan.cases.into_iter()),
    };
    cases.flat_map(move |case| {
        let over = connections_of(&case, connections);
        let case = Arc::new(case);
        over.into_iter().map(move |c| (Arc::clone(&case), c))
    })
}

/// Every unit a run of `plan` would run, in the order it starts them: each agent case
/// over each of its connections (`connections` when given, which replace every case's
/// own), each model case once, as the run's events name them (the plan's secrets
/// hidden). This is what `prill run --list` prints, with nothing run.
pub fn plan_units(plan: &Plan, connections: Option<&[Connection]>) -> Vec<UnitId> {
    plan.cases
        .iter()
        .flat_map(|case| {
            connections_of(case, connections)
                .into_iter()
                .map(move |connection| {
                    let mut unit = unit_id(case, connection);
                    unit.redact(&plan.secrets);
                    unit
                })
        })
        .collect()
}

/// The connections `case` runs over: an agent case's own, or `connections` when given;
/// a model case's one unit has none.
pub(crate) fn connections_of(
    case: &Case,
    connections: Option<&[Connection]>,
) -> Vec<Option<Connection>> {
    match &case.target {
        Target::Agent {
            connections: own, ..
        } => connections
            .unwrap_or(own)
            .iter()
            .copied()
            .map(Some)
            .collect(),
        Target::Model { .. } => vec![None],
    }
}

pub(super) struct UnitCtx {
    pub(super) unit: UnitId,
    pub(super) case: Arc<Case>,
    pub(super) provider: Option<Arc<dyn Provider>>,
    /// The provider of the case's simulated user, when it has one and it is configured.
    pub(super) user_provider: Option<Arc<dyn Provider>>,
    /// The named providers of `[providers]`, for the message when a case has none.
    pub(super) named_providers: Arc<[String]>,
    pub(super) frameworks: Frameworks,
    pub(super) connection: Option<Connection>,
    pub(super) connector: Option<Arc<dyn Connector>>,
    pub(super) judge: Option<Arc<dyn Judge>>,
    pub(super) tracing: Option<Tracing>,
    pub(super) jobs: Arc<Semaphore>,
    pub(super) gate: Gate,
    pub(super) exhaustive: bool,
    pub(super) cancel: CancellationToken,
    /// Under fail fast, cancelled by the first unit that fails or errors: a unit still
    /// undecided then stops and is reported skipped.
    pub(super) stop: Option<CancellationToken>,
    pub(super) events: mpsc::UnboundedSender<Event>,
    /// What the case is made of, for the cassettes ([`RunOptions::recorded_under`](super::RunOptions::recorded_under)).
    pub(super) under: Option<Arc<Under>>,
}

pub(crate) fn unit_id(case: &Case, connection: Option<Connection>) -> UnitId {
    let target = match &case.target {
        Target::Agent { agent, .. } => agent.clone(),
        Target::Model { model, .. } => model.to_string(),
    };
    UnitId {
        case_id: case.id.to_string(),
        name: case.name.to_string(),
        file: case.file.to_path_buf(),
        dialect: case.dialect,
        connection: connection_name(case, connection).into_owned(),
        target,
        tags: case.tags.to_vec(),
    }
}

/// A unit's [`UnitId::connection`]: the connection an agent case runs over, or the
/// provider of a model case (`langgraph` for a LangGraph graph, `model` when none can be
/// told), borrowed from the case where it can be.
pub(crate) fn connection_name(case: &Case, connection: Option<Connection>) -> Cow<'_, str> {
    match &case.target {
        Target::Agent { .. } => Cow::Borrowed(connection.map_or("", Connection::name)),
        Target::Model {
            framework: Some(Framework::Langgraph),
            ..
        } => Cow::Borrowed("langgraph"),
        Target::Model {
            provider: Some(provider),
            ..
        } => Cow::Borrowed(provider.as_str()),
        Target::Model { .. } => {
            Cow::Owned(provider_of(case).map_or_else(|| "model".to_owned(), |k| k.to_string()))
        }
    }
}

pub(super) fn skipped(ctx: &UnitCtx) -> UnitReport {
    UnitReport {
        unit: ctx.unit.clone(),
        verdict: Status::Skipped,
        gate: ctx.gate,
        quarantine: ctx.case.quarantine.clone(),
        tally: Tally::default(),
        samples: Vec::new(),
        duration: Duration::ZERO,
    }
}

pub(super) async fn run_unit(ctx: &UnitCtx) -> UnitReport {
    let started = Instant::now();
    let _ = ctx.events.send(Event::UnitStarted {
        unit: ctx.unit.clone(),
    });
    let mut progress = match Progress::new(ctx.gate) {
        Ok(progress) => progress,
        Err(why) => return unusable_gate(ctx, &why, started),
    };
    let mut samples = Vec::new();
    let mut verdict = progress.decided().filter(|_| !ctx.exhaustive);
    // Samples start lazily, one per `jobs` permit and only as the gate may read them
    // (`Progress::may_start`), so a unit holds at most as many samples as can run:
    // memory follows `jobs`, not `n`. The permit being waited for is kept across turns
    // of the loop, so the unit keeps its place in the semaphore's queue.
    let mut running = JoinSet::new();
    let mut next: u32 = 0;
    let mut permit = None;
    let mut stopped = false;
    while verdict.is_none() || ctx.exhaustive {
        let more = (verdict.is_none() || ctx.exhaustive)
            && progress.may_start(next, running.len() as u32, ctx.exhaustive);
        if !more && running.is_empty() {
            break;
        }
        if more && permit.is_none() {
            permit = Some(Box::pin(Arc::clone(&ctx.jobs).acquire_owned()));
        }
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => break,
            () = stop_of(ctx.stop.as_ref()) => {
                stopped = true;
                break;
            }
            Some(joined) = running.join_next(), if !running.is_empty() => {
                // The sample's permit is given back only once its outcome is counted:
                // with `-j 1` the samples run one after another and the same ones run
                // before the verdict each time.
                let (report, _permit) = joined.map_or_else(|e| (panicked(&e), None), |(r, p)| (r, Some(p)));
                progress.add(report.index.saturating_sub(ctx.case.first_sample), report.status);
                let _ = ctx.events.send(Event::SampleFinished {
                    unit: ctx.unit.clone(),
                    sample: report.clone(),
                });
                samples.push(report);
                if verdict.is_none() {
                    verdict = progress.decided();
                }
            }
            acquired = async { permit.as_mut().expect("armed above").await }, if more => {
                permit = None;
                let Ok(acquired) = acquired else { break };
                let sample = SampleCtx {
                    case: Arc::clone(&ctx.case),
                    provider: ctx.provider.clone(),
                    user_provider: ctx.user_provider.clone(),
                    named_providers: Arc::clone(&ctx.named_providers),
                    frameworks: ctx.frameworks.clone(),
                    connector: ctx.connector.clone(),
                    connection: ctx.connection,
                    judge: ctx.judge.clone(),
                    tracing: ctx.tracing.clone().map(|t| (t, ctx.unit.clone())),
                    under: ctx.under.clone(),
                };
                // The gate counts from 0; the sample is known by its place among all
                // of its case's samples (`Case::first_sample`).
                let index = ctx.case.first_sample.saturating_add(next);
                next += 1;
                running.spawn(async move {
                    let report = run_sample(&sample, index).await;
                    (report, acquired)
                });
            }
        }
    }
    // Decided (or cancelled): the samples still running do not count.
    running.abort_all();
    UnitReport {
        unit: ctx.unit.clone(),
        // Stopped by another unit's failure: what it did so far decides nothing.
        verdict: if stopped {
            Status::Skipped
        } else if ctx.exhaustive {
            progress
                .decided()
                .unwrap_or_else(|| progress.final_verdict())
        } else {
            verdict.unwrap_or_else(|| progress.final_verdict())
        },
        gate: ctx.gate,
        quarantine: ctx.case.quarantine.clone(),
        tally: progress.tally,
        samples,
        duration: started.elapsed(),
    }
}

/// A unit whose `reliability` plan cannot run (given through the Rust API unchecked):
/// errored, saying why, with no sample run.
fn unusable_gate(ctx: &UnitCtx, why: &crate::gate::GateError, started: Instant) -> UnitReport {
    let sample = SampleReport {
        index: 0,
        status: Status::Errored,
        duration: Duration::ZERO,
        interactions: Vec::new(),
        error: Some(ErrorInfo {
            kind: ErrorKind::Config,
            message: format!("the reliability gate cannot run: {why}"),
        }),
        taped: Default::default(),
    };
    let _ = ctx.events.send(Event::SampleFinished {
        unit: ctx.unit.clone(),
        sample: sample.clone(),
    });
    let mut tally = Tally::default();
    tally.add(Status::Errored);
    UnitReport {
        unit: ctx.unit.clone(),
        verdict: Status::Errored,
        gate: ctx.gate,
        quarantine: ctx.case.quarantine.clone(),
        tally,
        samples: vec![sample],
        duration: started.elapsed(),
    }
}

/// Resolves when `stop` is cancelled; never without one.
async fn stop_of(stop: Option<&CancellationToken>) {
    match stop {
        Some(stop) => stop.cancelled().await,
        None => std::future::pending().await,
    }
}

fn panicked(e: &tokio::task::JoinError) -> SampleReport {
    SampleReport {
        index: u32::MAX,
        status: Status::Errored,
        duration: Duration::ZERO,
        interactions: Vec::new(),
        error: Some(ErrorInfo {
            kind: ErrorKind::Panic,
            message: format!("the sample panicked: {e}"),
        }),
        taped: Default::default(),
    }
}

pub(crate) struct SampleCtx {
    pub(crate) case: Arc<Case>,
    pub(crate) provider: Option<Arc<dyn Provider>>,
    pub(crate) user_provider: Option<Arc<dyn Provider>>,
    pub(crate) named_providers: Arc<[String]>,
    pub(crate) frameworks: Frameworks,
    pub(super) connector: Option<Arc<dyn Connector>>,
    pub(super) connection: Option<Connection>,
    pub(crate) judge: Option<Arc<dyn Judge>>,
    /// The run's trace, and the unit whose spans the sample's are (only with a trace:
    /// a sample holds no copy of its unit's names otherwise).
    pub(super) tracing: Option<(Tracing, UnitId)>,
    /// What the case is made of, for the cassettes.
    pub(super) under: Option<Arc<Under>>,
}

async fn run_sample(ctx: &SampleCtx, index: u32) -> SampleReport {
    let started = Instant::now();
    let mut interactions = Vec::new();
    // Every request of the sample (agents, models, the judge, tool loops) is sent in
    // this task and knows its case and sample: cassettes record and replay by them.
    let mut scope = SampleScope::new(&*ctx.case.id, &*ctx.case.name, index);
    if let Some(under) = &ctx.under {
        scope = scope.under(Arc::clone(under));
    }
    let run = in_sample(scope.clone(), conversation(ctx, index, &mut interactions));
    let error = match ctx.case.timeout {
        None => run.await,
        Some(limit) => match tokio::time::timeout(limit, run).await {
            Ok(result) => result,
            Err(_) => Err(ErrorInfo {
                kind: ErrorKind::Timeout,
                message: format!("the sample timed out after {}", seconds(limit)),
            }),
        },
    }
    .err();
    let failed = interactions
        .iter()
        .flat_map(|i: &InteractionReport| &i.checks)
        .any(|c| c.status() == prill_check::Status::Failed);
    let errored = error.is_some()
        || interactions.iter().any(|i| {
            i.error.is_some()
                || i.checks
                    .iter()
                    .any(|c| c.status() == prill_check::Status::Errored)
        });
    // A wrong answer is the more telling outcome: it wins over an error in the same sample.
    let status = if failed {
        Status::Failed
    } else if errored {
        Status::Errored
    } else {
        Status::Passed
    };
    let (replayed, recorded) = scope.taped();
    SampleReport {
        index,
        status,
        duration: started.elapsed(),
        interactions,
        error,
        taped: crate::events::Taped { replayed, recorded },
    }
}
