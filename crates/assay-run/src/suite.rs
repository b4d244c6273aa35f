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

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay_check::{BoxFuture, Evaluation, Evaluator, Status};
use futures_util::future::join_all;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Semaphore;

/// The longest a test case hash may be.
pub const MAX_HASH_LEN: usize = assay_spec::plan::MAX_ID_LEN;

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

/// How a suite runs.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// The most test cases in `fn` at once; `None` means no limit.
    pub max_test_case_concurrency: Option<usize>,
    /// Parameters whose Cartesian product the suite runs once per combination.
    pub grid_search_params: Option<GridSearchParams>,
}

/// Why a suite could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}

/// What one evaluator gave one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluationReport {
    /// The evaluator's id.
    pub evaluator: String,
    /// The evaluation (`None`: nothing to evaluate), or why the evaluator failed.
    pub result: Result<Option<Evaluation>, String>,
}

/// One case's result.
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
    /// How long `fn` took.
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

/// Runs `f` over every case and scores each output with every evaluator.
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
    let cases = Arc::new(test_cases);
    let evaluators = Arc::new(evaluators);
    let limits: Arc<Vec<Arc<Semaphore>>> = Arc::new(
        evaluators
            .iter()
            .map(|e| Arc::new(Semaphore::new(e.max_concurrency().max(1))))
            .collect(),
    );
    let case_limit = Arc::new(Semaphore::new(
        options
            .max_test_case_concurrency
            .unwrap_or(Semaphore::MAX_PERMITS)
            .max(1),
    ));
    let mut runs = Vec::new();
    for grid in combinations {
        let tasks = (0..cases.len()).map(|i| {
            let cases = Arc::clone(&cases);
            let evaluators = Arc::clone(&evaluators);
            let limits = Arc::clone(&limits);
            let case_limit = Arc::clone(&case_limit);
            let f = Arc::clone(&f);
            let grid = grid.clone();
            let hash = hashes[i].clone();
            tokio::spawn(GRID.scope(grid, async move {
                run_case(&cases[i], hash, &*f, &evaluators, &limits, &case_limit).await
            }))
        });
        let mut reports = Vec::with_capacity(cases.len());
        for (i, joined) in join_all(tasks).await.into_iter().enumerate() {
            reports.push(joined.unwrap_or_else(|e| CaseReport {
                hash: hashes[i].clone(),
                status: Status::Errored,
                error: Some(format!("the test case panicked: {e}")),
                evaluations: Vec::new(),
                duration: Duration::ZERO,
            }));
        }
        runs.push(SuiteRun {
            grid,
            cases: reports,
        });
    }
    Ok(SuiteReport {
        id: id.to_owned(),
        runs,
    })
}

async fn run_case<C, O>(
    case: &C,
    hash: String,
    f: &dyn TestFn<C, O>,
    evaluators: &[Arc<dyn Evaluator<C, O>>],
    limits: &[Arc<Semaphore>],
    case_limit: &Semaphore,
) -> CaseReport
where
    C: TestCase,
    O: Send + Sync,
{
    let started = Instant::now();
    let output = {
        // The semaphore is never closed, so acquiring cannot fail.
        let _permit = case_limit.acquire().await.ok();
        f.call(case).await
    };
    let duration = started.elapsed();
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            return CaseReport {
                hash,
                status: Status::Errored,
                error: Some(e.to_string()),
                evaluations: Vec::new(),
                duration,
            };
        }
    };
    let evaluations = join_all(evaluators.iter().zip(limits).map(|(e, limit)| {
        let output = &output;
        async move {
            let _permit = limit.acquire().await.ok();
            EvaluationReport {
                evaluator: e.id().to_owned(),
                result: e
                    .evaluate(case, output)
                    .await
                    .map_err(|err| err.to_string()),
            }
        }
    }))
    .await;
    let failed = evaluations
        .iter()
        .any(|r| matches!(&r.result, Ok(Some(e)) if e.status() == Status::Failed));
    let errored = evaluations.iter().any(|r| r.result.is_err());
    let status = if failed {
        Status::Failed
    } else if errored {
        Status::Errored
    } else {
        Status::Passed
    };
    CaseReport {
        hash,
        status,
        error: None,
        evaluations,
        duration,
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
