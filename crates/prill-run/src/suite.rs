//! The Rust testing API, shaped like the Autoblocks testing SDK: [`run_test_suite`]
//! runs a function over test cases and scores each output with evaluators.
//!
//! - Each [`TestCase`] has a [`TestCase::hash`]: unique within the suite and at most
//!   100 characters, both checked before anything runs.
//! - Two levels of concurrency: [`SuiteOptions::max_test_case_concurrency`] bounds the
//!   calls to `fn`, and each evaluator's [`Evaluator::max_concurrency`] bounds its own
//!   calls.
//! - When `fn` fails, that case errors and its evaluators are skipped; when an
//!   evaluator fails, only that evaluation errors.
//! - Grid search runs the whole suite once for every combination of the parameters'
//!   Cartesian product; `fn` reads the current one with [`grid_search_ctx`].
//! - A case's `duration` is `fn`'s own run time: the clock starts once the case holds
//!   its concurrency permit.
//! - The [`SuiteReport`] serializes in plain shapes: durations in seconds, an
//!   evaluator's result as `{"evaluation": {...}}`, `"skipped"` or `{"error": "..."}`.
//! - With [`SuiteOptions::events`], the suite also sends the engine's [`Event`]s, so the
//!   reporters of `prill-report` (human, JSON, JSON Lines, JUnit, Markdown) show it like
//!   any run: each case under each grid combination is a unit of dialect
//!   [`prill_spec::Dialect::RustSuite`] with one sample whose checks are the
//!   evaluations ([`unit_report`] says exactly how).

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use prill_check::{BoxFuture, Evaluation, Evaluator, EvaluatorError, Status};
use prill_target::scope::{SampleScope, in_sample};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::sync::mpsc::UnboundedSender;

use crate::events::{Event, Summary, UnitId};
use crate::gate::Progress;
use prill_spec::plan::Gate;
use prill_stats::{DesignError, Reliability, Sequential};

mod units;

use units::suite_unit;
pub use units::unit_report;

/// The longest a test case hash may be.
pub const MAX_HASH_LEN: usize = prill_spec::plan::MAX_ID_LEN;

/// A test case: any type with a stable identity.
pub trait TestCase: Send + Sync {
    /// Identifies the case for its lifetime: build it from the case's *inputs*, so that
    /// editing an expectation keeps it. Unique within a suite, at most 100 characters.
    fn hash(&self) -> String;
}

/// The error a test function or the suite returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The function under test, sync or async. Build one with [`sync_fn`] or [`async_fn`].
pub trait TestFn<C, O>: Send + Sync {
    /// Runs the function on one case.
    fn call<'a>(&'a self, case: &'a C) -> BoxFuture<'a, Result<O, BoxError>>;
}

struct SyncFn<F>(F);
struct AsyncFn<F>(F);

impl<C: Sync, O: Send, F> TestFn<C, O> for SyncFn<F>
where
    F: Fn(&C) -> Result<O, BoxError> + Send + Sync,
{
    fn call<'a>(&'a self, case: &'a C) -> BoxFuture<'a, Result<O, BoxError>> {
        Box::pin(async move { (self.0)(case) })
    }
}

impl<C: Sync, O, F, Fut> TestFn<C, O> for AsyncFn<F>
where
    F: Fn(&C) -> Fut + Send + Sync,
    Fut: Future<Output = Result<O, BoxError>> + Send + 'static,
{
    fn call<'a>(&'a self, case: &'a C) -> BoxFuture<'a, Result<O, BoxError>> {
        Box::pin((self.0)(case))
    }
}

/// A synchronous test function.
pub fn sync_fn<C: Sync, O: Send>(
    f: impl Fn(&C) -> Result<O, BoxError> + Send + Sync + 'static,
) -> Arc<dyn TestFn<C, O>> {
    Arc::new(SyncFn(f))
}

/// An asynchronous test function; the future it returns must own what it needs
/// (clone from the case before the `async move` block).
pub fn async_fn<C: Sync, O, Fut>(
    f: impl Fn(&C) -> Fut + Send + Sync + 'static,
) -> Arc<dyn TestFn<C, O>>
where
    Fut: Future<Output = Result<O, BoxError>> + Send + 'static,
{
    Arc::new(AsyncFn(f))
}

/// Grid search parameters: each name takes each of its values in turn.
pub type GridSearchParams = BTreeMap<String, Vec<Value>>;

/// One combination of grid search parameters.
pub type GridCombination = BTreeMap<String, Value>;

tokio::task_local! {
    static GRID: Option<GridCombination>;
}

/// The grid search combination the current test function call runs under, or `None`
/// outside grid search. Available in the task that runs `fn` (not in tasks it spawns).
pub fn grid_search_ctx() -> Option<GridCombination> {
    GRID.try_with(Clone::clone).ok().flatten()
}

/// How a suite runs. Build it with `..SuiteOptions::default()`, so that new options
/// keep your code compiling.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// The most test cases in `fn` at once; `None` means no limit.
    pub max_test_case_concurrency: Option<usize>,
    /// Parameters whose Cartesian product the suite runs once per combination.
    pub grid_search_params: Option<GridSearchParams>,
    /// Where to send the engine's [`Event`]s as the suite runs, the same events
    /// [`crate::run_plan`] sends, for `prill-report`'s reporters; `None` sends nothing.
    pub events: Option<UnboundedSender<Event>>,
    /// Hold every case to a `reliability` gate (`docs/statistics.md`): `fn` runs on the
    /// case again and again, one sample after another, until a sequential test can
    /// tell a case that passes at least `good` of the time from one that passes at most
    /// `bad`; undecided after `max_samples`, the case is
    /// [`Status::Inconclusive`]. Errored samples are not counted either way (too many
    /// make the case errored: [`crate::gate::max_errors`]). `None` runs each case once.
    pub reliability: Option<Reliability>,
}

/// Why a suite could not start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SuiteError {
    /// Two cases share a hash.
    #[error(
        "test cases {first} and {second} share the hash `{hash}`; hashes must be unique within a suite"
    )]
    DuplicateHash {
        /// The hash.
        hash: String,
        /// The first case's index.
        first: usize,
        /// The second case's index.
        second: usize,
    },
    /// A hash is too long.
    #[error("test case {index} has a hash of {len} characters; the most is {MAX_HASH_LEN}")]
    HashTooLong {
        /// The case's index.
        index: usize,
        /// The hash's length.
        len: usize,
    },
    /// A hash is empty.
    #[error("test case {index} has an empty hash")]
    EmptyHash {
        /// The case's index.
        index: usize,
    },
    /// Two evaluators share an id.
    #[error("two evaluators share the id `{0}`")]
    DuplicateEvaluator(String),
    /// A grid parameter has no values.
    #[error("grid search parameter `{0}` has no values")]
    EmptyGridParameter(String),
    /// The `reliability` plan cannot meet its own error rates (or a field is out of
    /// range).
    #[error("the reliability plan cannot be used: {0}")]
    Reliability(#[from] DesignError),
}

/// What one evaluator gave one case. Serialized as
/// `{"evaluator": "id", "result": {"evaluation": {...}}}`, `... "result": "skipped"` or
/// `... "result": {"error": "why"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationReport {
    /// The evaluator's id.
    pub evaluator: String,
    /// The evaluation, nothing, or why the evaluator failed.
    pub result: EvaluationResult,
}

/// What an evaluator came back with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EvaluationResult {
    /// A score (and usually a threshold).
    Evaluation(Evaluation),
    /// The evaluator had nothing to evaluate (it returned `None`).
    Skipped,
    /// The evaluator failed; the message says why.
    Error(String),
}

impl EvaluationResult {
    /// Passed, failed or unscored by the evaluation's threshold; skipped; or errored.
    pub fn status(&self) -> Status {
        match self {
            EvaluationResult::Evaluation(e) => e.status(),
            EvaluationResult::Skipped => Status::Skipped,
            EvaluationResult::Error(_) => Status::Errored,
        }
    }

    /// The evaluation, if there is one.
    pub fn evaluation(&self) -> Option<&Evaluation> {
        match self {
            EvaluationResult::Evaluation(e) => Some(e),
            _ => None,
        }
    }

    /// Why the evaluator failed, if it did.
    pub fn error(&self) -> Option<&str> {
        match self {
            EvaluationResult::Error(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Result<Option<Evaluation>, EvaluatorError>> for EvaluationResult {
    fn from(result: Result<Option<Evaluation>, EvaluatorError>) -> EvaluationResult {
        match result {
            Ok(Some(e)) => EvaluationResult::Evaluation(e),
            Ok(None) => EvaluationResult::Skipped,
            Err(e) => EvaluationResult::Error(e.to_string()),
        }
    }
}

/// One case's result. Run once, its fields are that run's; under a `reliability` gate
/// ([`SuiteOptions::reliability`]) `status` is the gate's verdict, `error`,
/// `evaluations` and `duration` are those of its first sample that did not pass (else
/// its last), and `samples` holds every sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// The case's hash.
    pub hash: String,
    /// How it came out.
    pub status: Status,
    /// Why `fn` failed, when it did.
    pub error: Option<String>,
    /// Every evaluator's result, in the order the evaluators were given.
    pub evaluations: Vec<EvaluationReport>,
    /// How long `fn` itself ran (not the wait for a concurrency permit), serialized as
    /// seconds.
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
    /// The `reliability` gate the case was held to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliability: Option<Reliability>,
    /// Under a `reliability` gate, every sample in order; empty for a case run once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<CaseSample>,
}

/// One run of `fn` on a case under a `reliability` gate, and its evaluations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseSample {
    /// How it came out: passed, failed or errored.
    pub status: Status,
    /// Why `fn` failed, when it did.
    pub error: Option<String>,
    /// Every evaluator's result.
    pub evaluations: Vec<EvaluationReport>,
    /// How long `fn` ran, serialized as seconds.
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
}

/// One run of the suite (one grid combination, or the only run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteRun {
    /// The grid combination, when grid search is on.
    pub grid: Option<GridCombination>,
    /// Every case, in the order given.
    pub cases: Vec<CaseReport>,
}

/// The whole suite's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteReport {
    /// The suite's id.
    pub id: String,
    /// One run per grid combination (one run without grid search).
    pub runs: Vec<SuiteRun>,
}

impl SuiteReport {
    /// How many cases, across every run, came out with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.runs
            .iter()
            .flat_map(|r| &r.cases)
            .filter(|c| c.status == status)
            .count()
    }

    /// Whether every case of every run passed.
    pub fn all_passed(&self) -> bool {
        self.runs
            .iter()
            .flat_map(|r| &r.cases)
            .all(|c| c.status == Status::Passed)
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Runs `f` over every case and scores each output with every evaluator.
///
/// With [`SuiteOptions::events`], it also sends the engine's [`Event`]s as it runs,
/// so any reporter of `prill-report` can show the run (see [`unit_report`]).
pub async fn run_test_suite<C, O>(
    id: &str,
    test_cases: Vec<C>,
    evaluators: Vec<Arc<dyn Evaluator<C, O>>>,
    f: Arc<dyn TestFn<C, O>>,
    options: SuiteOptions,
) -> Result<SuiteReport, SuiteError>
where
    C: TestCase + 'static,
    O: Send + Sync + 'static,
{
    let hashes = check_hashes(&test_cases)?;
    if let Some(r) = options.reliability {
        Sequential::new(r)?;
    }
    let mut ids = HashSet::new();
    for e in &evaluators {
        if !ids.insert(e.id().to_owned()) {
            return Err(SuiteError::DuplicateEvaluator(e.id().to_owned()));
        }
    }
    let combinations = match &options.grid_search_params {
        None => vec![None],
        Some(params) => cartesian(params)?.into_iter().map(Some).collect(),
    };
    let started = Instant::now();
    let events = Emitter(options.events.clone());
    events.send(Event::RunStarted {
        units: test_cases.len() * combinations.len(),
    });
    let shared = Shared {
        suite: id.to_owned(),
        cases: Arc::new(test_cases),
        hashes: Arc::new(hashes),
        limits: Arc::new(
            evaluators
                .iter()
                .map(|e| Arc::new(Semaphore::new(e.max_concurrency().max(1))))
                .collect(),
        ),
        evaluators: Arc::new(evaluators),
        case_limit: Arc::new(Semaphore::new(
            options
                .max_test_case_concurrency
                .unwrap_or(Semaphore::MAX_PERMITS)
                .max(1),
        )),
        f,
        events,
        gate: options
            .reliability
            .map_or_else(Gate::default, Gate::Reliability),
    };
    let mut summary = Summary::default();
    let mut runs = Vec::new();
    for grid in combinations {
        let cases = run_combination(&shared, &grid).await;
        for case in &cases {
            summary.add(case.status);
        }
        runs.push(SuiteRun { grid, cases });
    }
    summary.duration = started.elapsed();
    shared.events.send(Event::RunFinished(summary));
    Ok(SuiteReport {
        id: id.to_owned(),
        runs,
    })
}

/// What every case of a suite shares.
struct Shared<C, O> {
    suite: String,
    cases: Arc<Vec<C>>,
    hashes: Arc<Vec<String>>,
    evaluators: Arc<Vec<Arc<dyn Evaluator<C, O>>>>,
    limits: Arc<Vec<Arc<Semaphore>>>,
    case_limit: Arc<Semaphore>,
    f: Arc<dyn TestFn<C, O>>,
    events: Emitter,
    gate: Gate,
}

/// Sends events when there is somewhere to send them; a receiver that has gone away
/// stops nothing.
#[derive(Clone)]
struct Emitter(Option<UnboundedSender<Event>>);

impl Emitter {
    fn send(&self, event: Event) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(event);
        }
    }
}

/// Runs every case under one grid combination, at once up to the limits.
async fn run_combination<C, O>(
    shared: &Shared<C, O>,
    grid: &Option<GridCombination>,
) -> Vec<CaseReport>
where
    C: TestCase + 'static,
    O: Send + Sync + 'static,
{
    let tasks = (0..shared.cases.len()).map(|i| {
        let run = Sampled {
            shared: shared.clone(),
            index: i,
            unit: suite_unit(&shared.suite, &shared.hashes[i], grid.as_ref()),
        };
        tokio::spawn(GRID.scope(grid.clone(), async move { run.run().await }))
    });
    let mut reports = Vec::with_capacity(shared.cases.len());
    for (i, joined) in join_all(tasks).await.into_iter().enumerate() {
        reports.push(joined.unwrap_or_else(|e| {
            let report = CaseReport {
                hash: shared.hashes[i].clone(),
                status: Status::Errored,
                error: Some(format!("the test case panicked: {e}")),
                evaluations: Vec::new(),
                duration: Duration::ZERO,
                reliability: None,
                samples: Vec::new(),
            };
            let unit = suite_unit(&shared.suite, &shared.hashes[i], grid.as_ref());
            finished(&shared.events, unit, &report, Duration::ZERO);
            report
        }));
    }
    reports
}

/// Sends a finished case's samples and verdict.
fn finished(events: &Emitter, unit: UnitId, case: &CaseReport, total: Duration) {
    if events.0.is_none() {
        return;
    }
    let report = unit_report(unit, case, total);
    for sample in &report.samples {
        events.send(Event::SampleFinished {
            unit: report.unit.clone(),
            sample: sample.clone(),
        });
    }
    events.send(Event::UnitFinished(report));
}

impl<C, O> Clone for Shared<C, O> {
    fn clone(&self) -> Self {
        Shared {
            suite: self.suite.clone(),
            cases: Arc::clone(&self.cases),
            hashes: Arc::clone(&self.hashes),
            evaluators: Arc::clone(&self.evaluators),
            limits: Arc::clone(&self.limits),
            case_limit: Arc::clone(&self.case_limit),
            f: Arc::clone(&self.f),
            events: self.events.clone(),
            gate: self.gate,
        }
    }
}

/// One case (the `index`th) under one grid combination, sampled until its gate decides.
struct Sampled<C, O> {
    shared: Shared<C, O>,
    index: usize,
    unit: UnitId,
}

impl<C: TestCase + 'static, O: Send + Sync + 'static> Sampled<C, O> {
    /// Runs the case's samples one after another, each in its own sample scope (the
    /// agents and models `fn` calls record and replay by case and sample), until the
    /// gate decides; sends its events; returns its report.
    async fn run(self) -> CaseReport {
        let s = &self.shared;
        let case = &s.cases[self.index];
        // `1/1` without a gate; a plan checked by `run_test_suite`.
        let mut progress = Progress::new(s.gate).unwrap_or_else(|_| {
            Progress::new(Gate::default()).expect("1/1 is always a usable gate")
        });
        let mut ran: Vec<Ran> = Vec::new();
        let mut total = Duration::ZERO;
        let mut started = false;
        let mut next = 0;
        while progress.decided().is_none() && progress.may_start(next, 0, false) {
            let scope = SampleScope::new(self.unit.case_id.as_str(), self.unit.name.as_str(), next);
            let events = s.events.clone();
            let unit = self.unit.clone();
            let first = !std::mem::replace(&mut started, true);
            let sample = in_sample(
                scope,
                run_case(
                    case,
                    s.hashes[self.index].clone(),
                    &*s.f,
                    &s.evaluators,
                    &s.limits,
                    &s.case_limit,
                    move || {
                        if first {
                            events.send(Event::UnitStarted { unit });
                        }
                    },
                ),
            )
            .await;
            progress.add(next, sample.report.status);
            total += sample.total;
            ran.push(sample);
            next += 1;
        }
        let verdict = progress
            .decided()
            .unwrap_or_else(|| progress.final_verdict());
        let report = case_report(verdict, s.gate.reliability(), ran);
        finished(&s.events, self.unit, &report, total);
        report
    }
}

/// A case's report from its samples: the verdict, and the first sample that did not
/// pass (else the last) at the top.
fn case_report(verdict: Status, reliability: Option<Reliability>, ran: Vec<Ran>) -> CaseReport {
    let shown = ran
        .iter()
        .position(|r| r.report.status != Status::Passed)
        .unwrap_or(ran.len().saturating_sub(1));
    let samples: Vec<CaseSample> = match reliability {
        Some(_) => ran
            .iter()
            .map(|r| CaseSample {
                status: r.report.status,
                error: r.report.error.clone(),
                evaluations: r.report.evaluations.clone(),
                duration: r.report.duration,
            })
            .collect(),
        None => Vec::new(),
    };
    let mut report = ran
        .into_iter()
        .nth(shown)
        .map(|r| r.report)
        .unwrap_or_else(|| CaseReport {
            hash: String::new(),
            status: Status::Skipped,
            error: None,
            evaluations: Vec::new(),
            duration: Duration::ZERO,
            reliability: None,
            samples: Vec::new(),
        });
    report.status = verdict;
    report.reliability = reliability;
    report.samples = samples;
    report
}

/// A case and how long it took from holding its permit to its last evaluation.
struct Ran {
    report: CaseReport,
    total: Duration,
}

async fn run_case<C, O>(
    case: &C,
    hash: String,
    f: &dyn TestFn<C, O>,
    evaluators: &[Arc<dyn Evaluator<C, O>>],
    limits: &[Arc<Semaphore>],
    case_limit: &Semaphore,
    on_start: impl FnOnce(),
) -> Ran
where
    C: TestCase,
    O: Send + Sync,
{
    let (output, duration, started) = {
        // The semaphore is never closed, so acquiring cannot fail.
        let _permit = case_limit.acquire().await.ok();
        // The clock starts once the permit is held: waiting for one is not `fn`'s time.
        let started = Instant::now();
        on_start();
        let output = f.call(case).await;
        (output, started.elapsed(), started)
    };
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            let report = CaseReport {
                hash,
                status: Status::Errored,
                error: Some(e.to_string()),
                evaluations: Vec::new(),
                duration,
                reliability: None,
                samples: Vec::new(),
            };
            return Ran {
                report,
                total: started.elapsed(),
            };
        }
    };
    let evaluations = join_all(evaluators.iter().zip(limits).map(|(e, limit)| {
        let output = &output;
        async move {
            let _permit = limit.acquire().await.ok();
            EvaluationReport {
                evaluator: e.id().to_owned(),
                result: e.evaluate(case, output).await.into(),
            }
        }
    }))
    .await;
    let status = case_status(&evaluations);
    Ran {
        report: CaseReport {
            hash,
            status,
            error: None,
            evaluations,
            duration,
            reliability: None,
            samples: Vec::new(),
        },
        total: started.elapsed(),
    }
}

/// Failed if any evaluation failed; else errored if any evaluator failed; else passed.
fn case_status(evaluations: &[EvaluationReport]) -> Status {
    let statuses = || evaluations.iter().map(|r| r.result.status());
    if statuses().any(|s| s == Status::Failed) {
        Status::Failed
    } else if statuses().any(|s| s == Status::Errored) {
        Status::Errored
    } else {
        Status::Passed
    }
}

fn check_hashes<C: TestCase>(cases: &[C]) -> Result<Vec<String>, SuiteError> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(cases.len());
    for (index, case) in cases.iter().enumerate() {
        let hash = case.hash();
        let len = hash.chars().count();
        if len == 0 {
            return Err(SuiteError::EmptyHash { index });
        }
        if len > MAX_HASH_LEN {
            return Err(SuiteError::HashTooLong { index, len });
        }
        if let Some(first) = seen.insert(hash.clone(), index) {
            return Err(SuiteError::DuplicateHash {
                hash,
                first,
                second: index,
            });
        }
        out.push(hash);
    }
    Ok(out)
}

/// Every combination of the parameters, in name order, the last name varying fastest.
pub fn cartesian(params: &GridSearchParams) -> Result<Vec<GridCombination>, SuiteError> {
    let mut combos = vec![GridCombination::new()];
    for (name, values) in params {
        if values.is_empty() {
            return Err(SuiteError::EmptyGridParameter(name.clone()));
        }
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                values.iter().map(move |v| {
                    let mut next = combo.clone();
                    next.insert(name.clone(), v.clone());
                    next
                })
            })
            .collect();
    }
    Ok(combos)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cartesian_product_in_name_order() {
        let params: GridSearchParams = [
            ("b".to_owned(), vec![json!(1), json!(2)]),
            ("a".to_owned(), vec![json!("x"), json!("y"), json!("z")]),
        ]
        .into_iter()
        .collect();
        let combos = cartesian(&params).unwrap();
        assert_eq!(combos.len(), 6);
        assert_eq!(
            combos[0],
            [("a".to_owned(), json!("x")), ("b".to_owned(), json!(1))].into()
        );
        assert_eq!(
            combos[1],
            [("a".to_owned(), json!("x")), ("b".to_owned(), json!(2))].into()
        );
        let empty: GridSearchParams = [("a".to_owned(), vec![])].into_iter().collect();
        assert_eq!(
            cartesian(&empty),
            Err(SuiteError::EmptyGridParameter("a".into()))
        );
    }
}
