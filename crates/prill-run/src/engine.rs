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
//! - Fail fast ([`RunOptions::fail_fast`]): after the first unit that fails or errors,
//!   nothing new starts, what runs finishes, and every unit not started is reported
//!   skipped, as on Ctrl-C; the summary says the run stopped.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_check::{CheckResult, Judge, Response, run_checks};
use prill_spec::model::data_driven::{Connection, StockTest, SuccessRatio};
use prill_spec::model::framework::{FrameworkConfig, Problem, ProblemKind};
use prill_spec::model::sentinel::Framework;
use prill_spec::plan::{Case, Check, CheckKind, Part, Plan, Step, Target};
use prill_spec::{ProviderKind, ProviderName, infer_provider};
use prill_target::graph::GraphServer;
use prill_target::model::Provider;
use prill_target::tools::ToolLauncher;
use prill_target::{AgentRequest, AgentResponse, ConnectError, Connector, Conversation};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::events::{
    CallInfo, ErrorInfo, ErrorKind, Event, InteractionReport, SampleReport, Summary,
    TrajectoryStep, UnitId, UnitReport,
};
use crate::ratio::{Status, Tally};

pub use prill_target::SAMPLE_METADATA;
use prill_target::scope::{SampleScope, in_sample};

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
    /// `k/n` becomes `ceil(k * N / n) / N` ([`SuccessRatio::scaled_to`]).
    pub samples: Option<u32>,
    /// Overrides every case's connections.
    pub connections: Option<Vec<Connection>>,
    /// The gist judge, when there is one.
    pub judge: Option<Arc<dyn Judge>>,
    /// Cancels the run.
    pub cancel: CancellationToken,
    /// Run every sample even after the verdict is decided (the assessor needs them all).
    pub exhaustive: bool,
    /// Start no new unit after the first one that fails or errors (`--fail-fast`): the
    /// units in flight finish, the others are reported skipped.
    pub fail_fast: bool,
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
        let ratio = match options.samples {
            Some(n) => case.success_ratio.scaled_to(n),
            None => case.success_ratio,
        };
        let provider = provider_of(&case).and_then(|p| connectors.provider(&p).cloned());
        let ctx = UnitCtx {
            unit: unit_id(&case, connection),
            provider,
            named_providers: Arc::clone(&named_providers),
            frameworks: connectors.frameworks.clone(),
            connector: connection.and_then(|c| connectors.get(c).cloned()),
            connection,
            case,
            judge: options.judge.clone(),
            jobs: Arc::clone(&jobs),
            ratio,
            exhaustive: options.exhaustive,
            cancel: options.cancel.clone(),
            events: events.clone(),
        };
        let permit = tokio::select! {
            biased;
            () = options.cancel.cancelled() => None,
            () = stop.cancelled() => None,
            permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
        };
        while let Some(joined) = tasks.try_join_next() {
            summary.add(joined.unwrap_or(Status::Errored));
        }
        let Some(permit) = permit else {
            let report = skipped(&ctx);
            summary.add(report.verdict);
            let _ = ctx.events.send(Event::UnitFinished(report));
            continue;
        };
        let stop = options.fail_fast.then(|| stop.clone());
        tasks.spawn(async move {
            let report = run_unit(&ctx).await;
            if let Some(stop) = stop
                && matches!(report.verdict, Status::Failed | Status::Errored)
            {
                stop.cancel();
            }
            drop(permit);
            let verdict = report.verdict;
            let _ = ctx.events.send(Event::UnitFinished(report));
            verdict
        });
    }
    while let Some(joined) = tasks.join_next().await {
        summary.add(joined.unwrap_or(Status::Errored));
    }
    summary.cancelled = options.cancel.is_cancelled();
    summary.stopped = stop.is_cancelled() && summary.skipped > 0;
    summary.duration = started.elapsed();
    let _ = events.send(Event::RunFinished(summary));
    summary
}

/// Every unit of `plan`: each agent case over each of its connections (`connections`
/// when given, which replace every case's own), each model case once. Lazily: a case is
/// taken for its units only when the run comes to it, copied from a borrowed plan (so a
/// run holds the copies of the cases in flight, not a second copy of the plan) and
/// moved out of a given one.
fn units_of<'a>(
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

struct UnitCtx {
    unit: UnitId,
    case: Arc<Case>,
    provider: Option<Arc<dyn Provider>>,
    /// The named providers of `[providers]`, for the message when a case has none.
    named_providers: Arc<[String]>,
    frameworks: Frameworks,
    connection: Option<Connection>,
    connector: Option<Arc<dyn Connector>>,
    judge: Option<Arc<dyn Judge>>,
    jobs: Arc<Semaphore>,
    ratio: SuccessRatio,
    exhaustive: bool,
    cancel: CancellationToken,
    events: mpsc::UnboundedSender<Event>,
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

fn skipped(ctx: &UnitCtx) -> UnitReport {
    UnitReport {
        unit: ctx.unit.clone(),
        verdict: Status::Skipped,
        success_ratio: ctx.ratio,
        tally: Tally::default(),
        samples: Vec::new(),
        duration: Duration::ZERO,
    }
}

async fn run_unit(ctx: &UnitCtx) -> UnitReport {
    let started = Instant::now();
    let _ = ctx.events.send(Event::UnitStarted {
        unit: ctx.unit.clone(),
    });
    let mut tally = Tally::default();
    let mut samples = Vec::new();
    let mut verdict = tally.decided(ctx.ratio).filter(|_| !ctx.exhaustive);
    // Samples start lazily, one per `jobs` permit, so a unit holds at most as many
    // samples as can run: memory follows `jobs`, not `n`. The permit being waited for is
    // kept across turns of the loop, so the unit keeps its place in the semaphore's queue.
    let mut running = JoinSet::new();
    let mut next: u32 = 0;
    let mut permit = None;
    while verdict.is_none() || ctx.exhaustive {
        let more = next < ctx.ratio.of && (verdict.is_none() || ctx.exhaustive);
        if !more && running.is_empty() {
            break;
        }
        if more && permit.is_none() {
            permit = Some(Box::pin(Arc::clone(&ctx.jobs).acquire_owned()));
        }
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => break,
            Some(joined) = running.join_next(), if !running.is_empty() => {
                // The sample's permit is given back only once its outcome is counted:
                // with `-j 1` the samples run one after another and the same ones run
                // before the verdict each time.
                let (report, _permit) = joined.map_or_else(|e| (panicked(&e), None), |(r, p)| (r, Some(p)));
                tally.add(report.status);
                let _ = ctx.events.send(Event::SampleFinished {
                    unit: ctx.unit.clone(),
                    sample: report.clone(),
                });
                samples.push(report);
                if verdict.is_none() {
                    verdict = tally.decided(ctx.ratio);
                }
            }
            acquired = async { permit.as_mut().expect("armed above").await }, if more => {
                permit = None;
                let Ok(acquired) = acquired else { break };
                let sample = SampleCtx {
                    case: Arc::clone(&ctx.case),
                    provider: ctx.provider.clone(),
                    named_providers: Arc::clone(&ctx.named_providers),
                    frameworks: ctx.frameworks.clone(),
                    connector: ctx.connector.clone(),
                    connection: ctx.connection,
                    judge: ctx.judge.clone(),
                };
                let index = next;
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
        verdict: if ctx.exhaustive {
            tally.final_verdict(ctx.ratio)
        } else {
            verdict.unwrap_or_else(|| tally.final_verdict(ctx.ratio))
        },
        success_ratio: ctx.ratio,
        tally,
        samples,
        duration: started.elapsed(),
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
    }
}

pub(crate) struct SampleCtx {
    pub(crate) case: Arc<Case>,
    pub(crate) provider: Option<Arc<dyn Provider>>,
    pub(crate) named_providers: Arc<[String]>,
    pub(crate) frameworks: Frameworks,
    connector: Option<Arc<dyn Connector>>,
    connection: Option<Connection>,
    pub(crate) judge: Option<Arc<dyn Judge>>,
}

async fn run_sample(ctx: &SampleCtx, index: u32) -> SampleReport {
    let started = Instant::now();
    let mut interactions = Vec::new();
    // Every request of the sample (agents, models, the judge, tool loops) is sent in
    // this task and knows its case and sample: cassettes record and replay by them.
    let scope = SampleScope::new(&*ctx.case.id, &*ctx.case.name, index);
    let run = in_sample(scope, conversation(ctx, index, &mut interactions));
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
    SampleReport {
        index,
        status,
        duration: started.elapsed(),
        interactions,
        error,
    }
}

/// One sample's conversation with its agent (or its model call): the interactions in
/// order, each reported into `out`. `Err` is an error before any interaction could run.
async fn conversation(
    ctx: &SampleCtx,
    index: u32,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let case = &ctx.case;
    let Target::Agent {
        agent,
        metadata,
        use_direct,
        ..
    } = &case.target
    else {
        return model_call(ctx, out).await;
    };
    let Some(connector) = &ctx.connector else {
        let name = ctx.connection.map(|c| c.name()).unwrap_or("none");
        return Err(ErrorInfo {
            kind: ErrorKind::Config,
            message: format!(
                "no way to reach agents over `{name}`: configure it in prill.toml or pass --server"
            ),
        });
    };
    let headers = request_metadata(metadata.as_deref(), index);
    let mut session: Option<Box<dyn Conversation>> = None;
    let mut carry = Carry::default();
    for (index, step) in case.interactions.iter().enumerate() {
        let conv = match &mut session {
            Some(conv) => conv,
            None => session.insert(connector.open(agent).await.map_err(|e| error_info(&e))?),
        };
        let request = carry.request(case, step, &headers, *use_direct);
        // What goes on the wire: an empty sly_data is not sent.
        let sent_sly_data = request
            .sly_data
            .clone()
            .filter(|m| !m.is_empty())
            .map(Value::Object);
        let started = Instant::now();
        let response = match conv.send(&request).await {
            Ok(response) => response,
            Err(e) => {
                out.push(InteractionReport {
                    index,
                    sent: step.input.text.clone(),
                    sent_sly_data,
                    answer: None,
                    structure: None,
                    sly_data: None,
                    duration: started.elapsed(),
                    checks: Vec::new(),
                    error: Some(error_info(&e)),
                    call: CallInfo::default(),
                });
                return Ok(());
            }
        };
        let (response, returned_context, trajectory) = into_check_response(response);
        let extra = pattern_checks(&case.failure_patterns, index);
        let mut checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
        checks.extend(run_checks(&extra, &response, ctx.judge.as_deref()).await);
        if ctx.connection == Some(Connection::Mcp) {
            no_trajectory_over_mcp(&mut checks);
        }
        let call = CallInfo {
            trajectory,
            ..CallInfo::of(&response, Vec::new())
        };
        note_truncation(&mut checks, &call);
        if !carry.after(
            step,
            request.sly_data,
            returned_context,
            response.sly_data.as_ref(),
        ) {
            // A clean conversation: a stdio agent gets a fresh process.
            session = None;
        }
        out.push(InteractionReport {
            index,
            sent: step.input.text.clone(),
            sent_sly_data,
            answer: response.text,
            structure: response.structure,
            sly_data: response.sly_data,
            duration: started.elapsed(),
            checks,
            error: None,
            call,
        });
    }
    Ok(())
}

/// The metadata every request of a sample carries: the case's, and the sample index
/// (`x-prill-sample`), so that agents (the demo's `flaky`) can vary by sample and a run
/// can be repeated exactly.
fn request_metadata(
    metadata: Option<&serde_json::Map<String, Value>>,
    index: u32,
) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = metadata
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), prill_check::text::as_text(v)))
        .collect();
    headers
        .entry(SAMPLE_METADATA.to_owned())
        .or_insert_with(|| index.to_string());
    headers
}

/// What one interaction hands the next: the `chat_context` and the sly_data, by
/// upstream's carry rules.
#[derive(Default)]
struct Carry {
    chat_context: Option<Value>,
    sly_data: Option<serde_json::Map<String, Value>>,
}

impl Carry {
    /// The request of `step`: its own sly_data, else the carried one; the carried
    /// context.
    fn request(
        &self,
        case: &Case,
        step: &Step,
        headers: &BTreeMap<String, String>,
        use_direct: bool,
    ) -> AgentRequest {
        AgentRequest {
            text: step.input.text.clone(),
            sly_data: step
                .input
                .sly_data
                .as_deref()
                .or(self.sly_data.as_ref())
                .cloned(),
            chat_context: self.chat_context.clone(),
            chat_filter: step.chat_filter,
            metadata: headers.clone(),
            // A case with a limit of its own is bounded by it (the sample's timeout):
            // the connector's default must not cut short what the case allows.
            timeout: step.timeout.or(case.timeout.map(|_| Duration::MAX)),
            use_direct,
        }
    }

    /// Takes in what `step` got back. On `continue_conversation` the returned context
    /// carries on and the returned sly_data merges into the sent one; otherwise the next
    /// interaction starts clean, and this returns `false`.
    fn after(
        &mut self,
        step: &Step,
        sent: Option<serde_json::Map<String, Value>>,
        returned_context: Option<Value>,
        returned_sly: Option<&Value>,
    ) -> bool {
        if step.continue_conversation {
            self.chat_context = returned_context;
            self.sly_data = merge(sent, returned_sly);
            true
        } else {
            self.chat_context = None;
            self.sly_data = step.input.sly_data.as_deref().cloned();
            false
        }
    }
}

/// The response as the checks see it, the `chat_context` it returned, and its
/// trajectory for the report. The checks see the agents and tools the agent invoked
/// (its trajectory, read from a `MAXIMAL` stream) as its tool calls, in order.
fn into_check_response(response: AgentResponse) -> (Response, Option<Value>, Vec<TrajectoryStep>) {
    let AgentResponse {
        text,
        structure,
        sly_data,
        chat_context,
        messages,
        timings,
        usage,
        trajectory,
    } = response;
    let tool_calls = trajectory
        .iter()
        .map(|i| prill_check::ToolCall {
            name: i.tool.clone(),
            arguments: i.arguments.clone(),
        })
        .collect();
    let steps = trajectory
        .into_iter()
        .map(|i| TrajectoryStep {
            turn: u32::try_from(i.position).unwrap_or(u32::MAX),
            tool: i.tool,
            arguments: i.arguments,
            result: i.result,
            is_error: false,
        })
        .collect();
    let response = Response {
        text,
        sly_data,
        structure,
        tool_calls,
        latency: Some(timings.total),
        time_to_first_byte: timings.first_byte,
        usage: usage.map(|u| prill_check::TokenUsage {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
        }),
        stop_reason: None,
        iterations: None,
        refusal: false,
        messages,
    };
    (response, chat_context, steps)
}

/// One `not_keywords` check on the text per failure pattern, as neuro-san's load tests
/// apply them.
fn pattern_checks(failure_patterns: &[String], index: usize) -> Vec<Check> {
    failure_patterns
        .iter()
        .enumerate()
        .map(|(i, pattern)| Check {
            location: None,
            path: format!("interactions[{index}] failure_patterns[{i}]").into(),
            kind: CheckKind::Stock {
                part: Part::Text,
                field: Vec::new(),
                test: StockTest::Keywords,
                negated: true,
                expected: Box::new(Value::String(pattern.clone())),
            },
        })
        .collect()
}

fn merge(
    sent: Option<serde_json::Map<String, Value>>,
    returned: Option<&Value>,
) -> Option<serde_json::Map<String, Value>> {
    match (sent, returned) {
        (sent, Some(Value::Object(returned))) => {
            let mut merged = sent.unwrap_or_default();
            for (k, v) in returned {
                merged.insert(k.clone(), v.clone());
            }
            Some(merged)
        }
        (sent, _) => sent,
    }
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

/// The provider a model case calls: the one it names (a kind, or a named provider of
/// `[providers]`); else its framework's (`openai-sdk`: OpenAI, `claude-sdk`: Anthropic,
/// `strands`: Bedrock, as Strands does); else the one its model name implies. A
/// `langgraph` case calls a LangGraph server, not a provider.
pub(crate) fn provider_of(case: &Case) -> Option<ProviderName> {
    let Target::Model {
        model,
        provider,
        framework,
        ..
    } = &case.target
    else {
        return None;
    };
    match (framework, provider) {
        (Some(Framework::Langgraph), _) => None,
        (_, Some(p)) => Some(p.clone()),
        (Some(f), None) => f.default_provider().map(ProviderName::Kind),
        (None, None) => infer_provider(model).map(ProviderName::Kind),
    }
}

/// Why a model case has no provider to call: none can be told from the model, or the
/// one named is not configured. `named` are the configured names beyond the kinds.
fn no_provider(model: &str, wanted: Option<&ProviderName>, named: &[String]) -> String {
    let kinds = format!(
        "{} or {}",
        ProviderKind::NAMES[..4].join(", "),
        ProviderKind::NAMES[4]
    );
    let choices = if named.is_empty() {
        format!("{kinds}, or a provider of your own in `[providers]` of prill.toml")
    } else {
        format!(
            "{kinds}, or one of prill.toml's `[providers]`: {}",
            named.join(", ")
        )
    };
    match wanted {
        None => format!("cannot tell which provider serves `{model}`: set `provider` ({choices})"),
        Some(ProviderName::Named(name)) => format!(
            "no provider named `{name}` is configured: add `[providers.{name}]` with its `kind` to prill.toml, or set `provider` to one that is ({choices})"
        ),
        Some(ProviderName::Kind(kind)) => format!("no {kind} provider is configured"),
    }
}

/// A model case: one call, then the assertions; or, with a `framework`, its tool loop
/// or its LangGraph run.
async fn model_call(ctx: &SampleCtx, out: &mut Vec<InteractionReport>) -> Result<(), ErrorInfo> {
    let case = &ctx.case;
    let Target::Model {
        model,
        framework,
        framework_config,
        ..
    } = &case.target
    else {
        return Ok(());
    };
    let framework = match framework {
        Some(f) => Some(
            FrameworkConfig::parse(*f, framework_config.as_deref())
                .map_err(|problems| config_error(framework_problems(*f, &problems)))?,
        ),
        None => None,
    };
    if let Some(FrameworkConfig::Langgraph(config)) = &framework {
        return Box::pin(crate::frameworks::langgraph::call(ctx, config, out)).await;
    }
    let Some(provider) = &ctx.provider else {
        let wanted = provider_of(case);
        return Err(config_error(no_provider(
            model,
            wanted.as_ref(),
            &ctx.named_providers,
        )));
    };
    if let Some(FrameworkConfig::Loop(config)) = &framework {
        // Validated files were checked already; a plan built in Rust was not.
        prill_spec::model::family::tool_support(provider.kind(), model)
            .map_err(|e| config_error(e.to_string()))?;
        return Box::pin(crate::frameworks::tool_loop::call(
            ctx, provider, config, out,
        ))
        .await;
    }
    let request = crate::model::model_request(case).map_err(|e| config_error(e.to_string()))?;
    let step = &case.interactions[0];
    let started = Instant::now();
    let response = match provider.complete(&request).await {
        Ok(response) => response,
        Err(e) => {
            out.push(InteractionReport {
                index: 0,
                sent: step.input.text.clone(),
                sent_sly_data: None,
                answer: None,
                structure: None,
                sly_data: None,
                duration: started.elapsed(),
                checks: Vec::new(),
                error: Some(error_info(&e)),
                call: CallInfo::default(),
            });
            return Ok(());
        }
    };
    let notes = response.notes.clone();
    let cached = response.cached;
    let response = crate::model::answer_of(response);
    let mut checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
    let call = CallInfo {
        cached,
        ..CallInfo::of(&response, notes)
    };
    note_truncation(&mut checks, &call);
    out.push(InteractionReport {
        index: 0,
        sent: step.input.text.clone(),
        sent_sly_data: None,
        answer: response.text,
        structure: None,
        sly_data: None,
        duration: started.elapsed(),
        checks,
        error: None,
        call,
    });
    Ok(())
}

/// Makes every check of a data-driven `trajectory` part an error: neuro-san's MCP
/// endpoint sends only the agent's final message, so nothing shows which agents and
/// tools it invoked, and a `must_not_call_tool` would pass on nothing (a file that
/// names `mcp` among its connections is refused by `prill validate`; this is for
/// `--connection mcp`).
fn no_trajectory_over_mcp(checks: &mut [CheckResult]) {
    for check in checks
        .iter_mut()
        .filter(|c| c.path.contains(".response.trajectory."))
    {
        check.outcome = prill_check::Outcome::Errored {
            message: format!(
                "{}: the mcp connection carries only the agent's final message, so no trajectory can be read: check it over direct, http or https",
                check.name
            ),
        };
    }
}

/// An error of the configuration.
pub(crate) fn config_error(message: String) -> ErrorInfo {
    ErrorInfo {
        kind: ErrorKind::Config,
        message,
    }
}

/// `framework_config` problems in one sentence (a validated file has none; a plan built
/// by hand may).
fn framework_problems(framework: Framework, problems: &[Problem]) -> String {
    let each: Vec<String> = problems
        .iter()
        .map(|p| {
            let at = format!("framework_config.{}", p.path.join("."));
            match &p.kind {
                ProblemKind::UnknownKey { allowed, .. } => format!(
                    "`{at}` is not a setting of `{}` (it takes {})",
                    framework.name(),
                    allowed.join(", ")
                ),
                ProblemKind::Expected { expected, found } => {
                    format!("`{at}` must be {expected}, not {found}")
                }
            }
        })
        .collect();
    each.join("; ")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of a case with no provider names every value `provider` may take,
    /// the named providers of `[providers]` included.
    #[test]
    fn no_provider_lists_the_named_providers() {
        let named = ["lmstudio".to_owned(), "vllm".to_owned()];
        assert_eq!(
            no_provider("llama3.1", None, &named),
            "cannot tell which provider serves `llama3.1`: set `provider` (openai, anthropic, ollama, huggingface or bedrock, or one of prill.toml's `[providers]`: lmstudio, vllm)"
        );
        let message = no_provider("m", Some(&ProviderName::new("gpu")), &named);
        assert!(
            message.starts_with(
                "no provider named `gpu` is configured: add `[providers.gpu]` with its `kind` to prill.toml"
            ),
            "{message}"
        );
        assert_eq!(
            no_provider("m", Some(&ProviderName::new("ollama")), &[]),
            "no ollama provider is configured"
        );
        assert!(
            no_provider("m", None, &[])
                .ends_with("or a provider of your own in `[providers]` of prill.toml)")
        );
    }
}
