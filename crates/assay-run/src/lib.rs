//! The Assay engine and the Rust testing API.
//!
//! - [`suite`]: `run_test_suite`, shaped like the Autoblocks testing SDK, for Rust code
//!   that tests its own functions with evaluators, concurrency limits and grid search.
//! - [`engine`]: runs a [`assay_spec::Plan`] against agents: units, samples, success
//!   ratios with early stopping, timeouts, concurrency limits, cancellation.
//! - [`events`]: what the engine reports as it runs, for reporters to consume.
//! - [`ratio`]: success ratios and early stopping.
//! - [`select`]: choosing cases (`--filter`, `--tag`, `--partition`) and judging an
//!   empty run (`--no-tests`).

pub mod engine;
pub mod events;
pub mod model;
pub mod ratio;
pub mod select;
pub mod suite;

pub use engine::{Connectors, RunOptions, run_plan};
pub use events::{Event, Summary, UnitId, UnitReport};
pub use ratio::{Status, Tally};
pub use select::{NoTests, Partition, Selected, Selection};
pub use suite::{
    BoxError, CaseReport, EvaluationReport, EvaluationResult, GridCombination, GridSearchParams,
    SuiteError, SuiteOptions, SuiteReport, SuiteRun, TestCase, TestFn, async_fn, grid_search_ctx,
    run_test_suite, sync_fn,
};
