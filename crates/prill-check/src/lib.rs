//! The Prill assertion engine: every check yields an [`Evaluation`].
//!
//! A check is one of the data-driven stock tests (`value`, `less`, `greater`,
//! `keywords`, `gist`, their `not_` forms, and `{}` presence), or a Sentinel assertion
//! (`must_contain`, `regex_match`, `must_call_tool`, `output_type`, `max_latency_ms`,
//! `min_tokens`, `max_tokens`). Each returns an [`Evaluation`] as the Autoblocks SDK
//! defines it (a score in `0..=1`, an optional [`Threshold`], metadata) and a message
//! that says what was checked, what was expected and what was found. Pass/fail checks
//! score 1 or 0 with threshold `gte: 1`.
//!
//! A check that cannot be evaluated *errors* (a [`Judge`] that failed, a latency never
//! recorded); an error is never a pass or a fail.
//!
//! The crate does no I/O and needs no async runtime: `gist` goes through the [`Judge`]
//! trait, which `prill-judge` implements over real models.
//!
//! Code users get the same checks as [`Evaluator`]s through [`CheckEvaluator`].
//!
//! # Example
//!
//! ```
//! use prill_check::{Status, Response, run_check};
//! use prill_spec::plan::{Check, CheckKind, Part};
//! use prill_spec::model::data_driven::StockTest;
//! use serde_json::json;
//!
//! let check = Check {
//!     location: None,
//!     path: "interactions[1].response.structure.running_cost.value".into(),
//!     kind: CheckKind::Stock {
//!         part: Part::Structure,
//!         field: vec!["running_cost".into()],
//!         test: StockTest::Value,
//!         negated: false,
//!         expected: Box::new(json!(6.0)),
//!     },
//! };
//! let response = Response::text("Liverpool").with_structure(json!({"running_cost": 3.0}));
//! let result = futures::executor::block_on(run_check(&check, &response, None));
//! assert_eq!(result.status(), Status::Failed);
//! assert_eq!(result.message(), "structure.running_cost: expected value 6.0, found 3.0");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod assertions;
pub mod engine;
pub mod evaluation;
pub mod evaluator;
pub mod judge;
pub mod response;
pub mod status;
pub mod stock;
pub mod text;

pub use assertions::AssertionError;
pub use engine::{CheckResult, Outcome, run_check, run_checks};
pub use evaluation::{Evaluation, Threshold};
pub use evaluator::{CheckEvaluator, Evaluator, EvaluatorError};
pub use judge::{BoxFuture, Judge, JudgeError, JudgeVerdict};
pub use response::{EndState, Output, Replayed, Response, Said, TokenUsage, ToolCall};
pub use status::Status;
