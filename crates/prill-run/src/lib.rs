//! The Prill engine and the Rust testing API.
//!
//! - [`suite`]: `run_test_suite`, shaped like the Autoblocks testing SDK, for Rust code
//!   that tests its own functions with evaluators, concurrency limits and grid search.
//! - [`engine`]: runs a [`prill_spec::Plan`] against agents: units, samples, success
//!   ratios with early stopping, timeouts, concurrency limits, cancellation.
//! - [`events`]: what the engine reports as it runs, for reporters to consume.
//! - [`ratio`]: success ratios and early stopping.
//! - [`gate`]: a unit's gate as it runs, `k/n` or a sequential `reliability` test.
//! - [`select`]: choosing cases (`--filter`, `--tag`, `--partition`) and judging an
//!   empty run (`--no-tests`).
//! - [`last_run`]: the last run's verdicts (`.prill/last-run.json`) and rerunning the
//!   units that failed in it (`--rerun-failed`).
//!
//! It reaches agents and models only through `prill-target`'s traits, so a program that
//! uses it builds no HTTP client, TLS stack or server; `prill-app` builds the real
//! connectors and providers.
//!
//! # Example
//!
//! A function under test, scored by a built-in check used as an evaluator:
//!
//! ```
//! use std::sync::Arc;
//!
//! use prill_check::{CheckEvaluator, Evaluator};
//! use prill_run::{Status, SuiteOptions, TestCase, run_test_suite, sync_fn};
//!
//! struct Word(&'static str);
//!
//! impl TestCase for Word {
//!     fn hash(&self) -> String {
//!         self.0.to_owned()
//!     }
//! }
//!
//! let shout = sync_fn(|w: &Word| Ok(w.0.to_uppercase()));
//! let loud = CheckEvaluator::must_contain_exact("HELLO").with_id("loud");
//! let evaluators: Vec<Arc<dyn Evaluator<Word, String>>> = vec![Arc::new(loud)];
//! let runtime = tokio::runtime::Runtime::new().unwrap();
//! let report = runtime
//!     .block_on(run_test_suite(
//!         "shouting",
//!         vec![Word("hello"), Word("bye")],
//!         evaluators,
//!         shout,
//!         SuiteOptions::default(),
//!     ))
//!     .unwrap();
//! assert_eq!(report.count(Status::Passed), 1);
//! assert_eq!(report.count(Status::Failed), 1);
//! ```

pub mod engine;
pub mod events;
pub mod frameworks;
pub mod gate;
pub mod last_run;
pub mod model;
pub mod ratio;
pub mod select;
pub mod simulator;
pub mod suite;
pub mod trace;

pub use engine::{Connectors, Frameworks, RunOptions, plan_units, run_plan};
pub use events::{
    CallInfo, Event, Summary, TrajectoryStep, TurnInfo, UnitId, UnitReport, Waived, WorkersReady,
};
pub use ratio::{Status, Tally};
pub use select::{NoTests, Partition, Selected, Selection};
pub use suite::{
    BoxError, CaseReport, CaseSample, EvaluationReport, EvaluationResult, GridCombination,
    GridSearchParams, SuiteError, SuiteOptions, SuiteReport, SuiteRun, TestCase, TestFn, async_fn,
    grid_search_ctx, run_test_suite, sync_fn,
};
