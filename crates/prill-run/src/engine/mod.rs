//! Runs a plan: every case over every connection it lists, each as a *unit* that takes
//! samples until its success ratio is decided.
//!
//! - A sample is a fresh conversation. Interactions run in order; `chat_context` carries
//!   over while `continue_conversation` is true; an interaction with `false` still
//!   belongs to the conversation before it, and the *next* one starts clean.
//!   The sly_data sent is the interaction's own when it has one, else the carried one
//!   (each interaction's report records it, as it went on the wire: `sent_sly_data`);
//!   the sly_data returned is merged into the carried one on continue. Nothing mutable
//!   is shared between samples (upstream shares its dicts between parallel samples).
//! - Up to `n` samples of a unit run at once, within the global `jobs` limit and the
//!   limit on cases in flight; the unit stops as soon as `k` passed or `n - k + 1` did
//!   not, cancelling its samples still running.
//! - A timeout (per interaction, or per sample from the case's `timeout_in_seconds`) is
//!   an error for that sample, and counts against the ratio.
//! - Cancelling the run (Ctrl-C) starts nothing new, cancels what runs, and still ends
//!   with every unit's report and the run's summary.
//! - Fail fast ([`RunOptions::fail_fast`]): at the first unit that fails or errors,
//!   nothing new starts and the units still running stop, their samples cancelled;
//!   every unit not started or not decided is reported skipped, and the summary says
//!   the run stopped.

//!
//! The modules, in the order a run goes through them:
//! - `units`: scheduling. Which units a plan has, the units in flight within `jobs` and
//!   `max_cases`, the samples of a unit started lazily until its ratio is decided.
//! - `conversation`: one sample of an agent case. Interactions in order, what carries
//!   over between them, the checks on each answer.
//! - `model_call`: one sample of a model case. Which provider serves it, one call and its
//!   checks, or the framework's run (`crate::frameworks`).

mod conversation;
mod model_call;
mod simulated;
mod units;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_check::{CheckResult, Judge};
use prill_spec::ProviderName;
use prill_spec::model::data_driven::Connection;
use prill_spec::plan::Plan;
use prill_spec::plan::under::Under;
use prill_target::graph::GraphServer;
use prill_target::model::Provider;
use prill_target::tools::ToolLauncher;
use prill_target::{ConnectError, Connector};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::events::{CallInfo, ErrorInfo, ErrorKind, Event, Summary};
use crate::ratio::Status;

pub(crate) use model_call::provider_of;
pub use prill_target::SAMPLE_METADATA;
pub use units::plan_units;
pub(crate) use units::{SampleCtx, connection_name, connections_of, unit_id};
use units::{UnitCtx, run_unit, skipped, units_of};

/// How agents are reached, by connection, and models, by provider: a kind, or a
/// named provider of `prill.toml`'s `[providers]`.
#[derive(Clone, Default)]
pub struct Connectors {
    by_connection: HashMap<Connection, Arc<dyn Connector>>,
    providers: HashMap<ProviderName, Arc<dyn Provider>>,
    frameworks: Frameworks,
}

/// What a test's `framework` needs beyond a provider: a way to start `tool_command`
/// programs for the built-in tool loop, and the LangGraph server of `langgraph`.
#[derive(Clone, Default)]
pub struct Frameworks {
    /// Starts the programs of `framework_config.tool_command`.
    pub tools: Option<Arc<dyn ToolLauncher>>,
    /// The LangGraph server (`[frameworks.langgraph]` of `prill.toml`).
    pub langgraph: Option<Arc<dyn GraphServer>>,
}

impl Connectors {
    /// No connector at all.
    pub fn new() -> Connectors {
        Connectors::default()
    }

    /// Sets the connector of `connection`.
    pub fn with(mut self, connection: Connection, connector: Arc<dyn Connector>) -> Connectors {
        self.by_connection.insert(connection, connector);
        self
    }

    /// The connector of `connection`, if there is one.
    pub fn get(&self, connection: Connection) -> Option<&Arc<dyn Connector>> {
        self.by_connection.get(&connection)
    }

    /// Sets the provider called `name` (a kind, or a name of `[providers]`).
    pub fn with_provider(
        mut self,
        name: impl Into<ProviderName>,
        provider: Arc<dyn Provider>,
    ) -> Connectors {
        self.providers.insert(name.into(), provider);
        self
    }

    /// The provider called `name`, if there is one.
    pub fn provider(&self, name: &ProviderName) -> Option<&Arc<dyn Provider>> {
        self.providers.get(name)
    }

    /// Sets how `tool_command` programs are started.
    pub fn with_tool_launcher(mut self, launcher: Arc<dyn ToolLauncher>) -> Connectors {
        self.frameworks.tools = Some(launcher);
        self
    }

    /// Sets the LangGraph server that `framework: langgraph` runs on.
    pub fn with_graph_server(mut self, server: Arc<dyn GraphServer>) -> Connectors {
        self.frameworks.langgraph = Some(server);
        self
    }

    /// What frameworks need.
    pub fn frameworks(&self) -> &Frameworks {
        &self.frameworks
    }

    /// The names of the named providers (not the kinds), sorted.
    fn named_providers(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .providers
            .keys()
            .filter(|p| p.kind().is_none())
            .map(ToString::to_string)
            .collect();
        names.sort_unstable();
        names
    }
}

/// How a run goes.
#[derive(Clone)]
pub struct RunOptions {
    /// The most samples in flight across the run.
    pub jobs: usize,
    /// The most cases in flight at once; `None` means no limit beyond `jobs`.
    pub max_cases: Option<usize>,
    /// Overrides every case's sample count `n`, keeping its pass rate:
    /// `k/n` becomes `ceil(k * N / n) / N` ([`SuccessRatio::scaled_to`](prill_spec::model::data_driven::SuccessRatio::scaled_to)).
    pub samples: Option<u32>,
    /// Overrides every case's connections.
    pub connections: Option<Vec<Connection>>,
    /// The gist judge, when there is one.
    pub judge: Option<Arc<dyn Judge>>,
    /// Cancels the run.
    pub cancel: CancellationToken,
    /// Run every sample even after the verdict is decided (the assessor needs them all).
    pub exhaustive: bool,
    /// Stop at the first unit that fails or errors (`--fail-fast`, `-x`): no unit
    /// starts after it, the units in flight stop, and all of those are reported skipped.
    pub fail_fast: bool,
    /// The run's trace: with one, every request to an agent carries its interaction's
    /// trace context (`traceparent`), and `trajectory: otel` cases read the agent's
    /// spans from it.
    pub tracing: Option<crate::trace::Tracing>,
    /// Work out what each case is made of ([`Under::of`]) and give it to its samples'
    /// [`SampleScope`](prill_target::scope::SampleScope)s: set when the run records or
    /// replays cassettes, which keep it on every exchange and compare it with what a
    /// replayed one was recorded under.
    pub recorded_under: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: 32,
            max_cases: None,
            samples: None,
            connections: None,
            judge: None,
            cancel: CancellationToken::new(),
            exhaustive: false,
            fail_fast: false,
            tracing: None,
            recorded_under: false,
        }
    }
}

/// Runs every case of `plan` and sends events to `events` as things happen. Returns
/// the summary (also sent as the last event).
///
/// `plan` is borrowed (`&Plan`) or given (`Plan`). A borrowed plan's cases are copied
/// as their units start; a given plan's are moved, each freed when its last unit ends,
/// so a long run holds less and less of its plan.
pub async fn run_plan<'p>(
    plan: impl Into<Cow<'p, Plan>>,
    connectors: &Connectors,
    options: &RunOptions,
    events: mpsc::UnboundedSender<Event>,
) -> Summary {
    let started = Instant::now();
    let plan = plan.into();
    let connections = options.connections.as_deref();
    let count = plan
        .cases
        .iter()
        .map(|case| connections_of(case, connections).len())
        .sum();
    let _ = events.send(Event::RunStarted { units: count });
    let jobs = Arc::new(Semaphore::new(options.jobs.max(1)));
    // Units in flight: never more than can make progress (each holds at least one of the
    // `jobs` permits while it runs), and never more than `max_cases`. Units are started
    // lazily, so a 10,000-case plan does not hold 10,000 tasks.
    let slots = Arc::new(Semaphore::new(
        options
            .jobs
            .max(1)
            .min(options.max_cases.unwrap_or(usize::MAX).max(1)),
    ));
    let mut summary = Summary::default();
    let mut tasks = JoinSet::new();
    // Set by the first unit that fails or errors under `fail_fast`, before it gives its
    // slot back: the next unit waiting for that slot sees it first.
    let stop = CancellationToken::new();
    let named_providers: Arc<[String]> = connectors.named_providers().into();
    for (case, connection) in units_of(plan, connections) {
        let gate = match options.samples {
            Some(n) => case.gate.scaled_to(n),
            None => case.gate,
        };
        let provider = provider_of(&case).and_then(|p| connectors.provider(&p).cloned());
        let user_provider =
            model_call::user_provider_of(&case).and_then(|p| connectors.provider(&p).cloned());
        let under = options.recorded_under.then(|| Arc::new(Under::of(&case)));
        let ctx = UnitCtx {
            unit: unit_id(&case, connection),
            provider,
            user_provider,
            named_providers: Arc::clone(&named_providers),
            frameworks: connectors.frameworks.clone(),
            connector: connection.and_then(|c| connectors.get(c).cloned()),
            connection,
            case,
            judge: options.judge.clone(),
            tracing: options.tracing.clone(),
            jobs: Arc::clone(&jobs),
            gate,
            exhaustive: options.exhaustive,
            cancel: options.cancel.clone(),
            stop: options.fail_fast.then(|| stop.clone()),
            events: events.clone(),
            under,
        };
        let permit = tokio::select! {
            biased;
            () = options.cancel.cancelled() => None,
            () = stop.cancelled() => None,
            permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
        };
        while let Some(joined) = tasks.try_join_next() {
            let (verdict, quarantined) = joined.unwrap_or((Status::Errored, false));
            summary.add(verdict);
            if quarantined {
                summary.waive(verdict);
            }
        }
        let Some(permit) = permit else {
            let report = skipped(&ctx);
            summary.add(report.verdict);
            let _ = ctx.events.send(Event::UnitFinished(report));
            continue;
        };
        tasks.spawn(async move {
            let report = run_unit(&ctx).await;
            let quarantined = report.quarantine.is_some();
            // A quarantined unit does not gate: its failure stops nothing.
            if let Some(stop) = &ctx.stop
                && !quarantined
                && matches!(
                    report.verdict,
                    Status::Failed | Status::Errored | Status::Inconclusive
                )
            {
                stop.cancel();
            }
            drop(permit);
            let verdict = report.verdict;
            let _ = ctx.events.send(Event::UnitFinished(report));
            (verdict, quarantined)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let (verdict, quarantined) = joined.unwrap_or((Status::Errored, false));
        summary.add(verdict);
        if quarantined {
            summary.waive(verdict);
        }
    }
    summary.cancelled = options.cancel.is_cancelled();
    summary.stopped = stop.is_cancelled() && summary.skipped > 0;
    summary.duration = started.elapsed();
    let _ = events.send(Event::RunFinished(summary));
    summary
}

pub(crate) fn error_info(e: &ConnectError) -> ErrorInfo {
    ErrorInfo {
        kind: e.kind(),
        message: e.to_string(),
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

/// An error of the configuration.
pub(crate) fn config_error(message: String) -> ErrorInfo {
    ErrorInfo {
        kind: ErrorKind::Config,
        message,
    }
}

/// Says, next to every check that failed, that the answer it looked at was cut short
/// by a token limit, when it was.
pub(crate) fn note_truncation(checks: &mut [CheckResult], call: &CallInfo) {
    if !call.truncated() {
        return;
    }
    let reason = call.stop_reason.as_deref().unwrap_or_default();
    let note = format!(
        "the answer was cut short by a token limit (stop reason `{reason}`): raise max_tokens"
    );
    checks
        .iter_mut()
        .filter(|c| c.status() == prill_check::Status::Failed)
        .for_each(|c| c.add_note(&note));
}
