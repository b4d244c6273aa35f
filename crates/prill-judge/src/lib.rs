//! `prill-judge` implements the [`Judge`](prill_check::Judge) trait that the `gist` and
//! `not_gist` checks use.
//!
//! Two backends:
//!
//! - [`ModelJudge`]: any model provider of `prill-connect` (`openai:gpt-4o-mini`,
//!   `anthropic:…`, `ollama:llama3.1`, …). Prill's own prompt ([`prompt`], versioned by
//!   [`PROMPT_VERSION`]) asks for a structured verdict `{"verdict": "pass"|"fail",
//!   "reason": "…"}` in the provider's structured-output mode, with the sampling the
//!   model takes ([`sampling`]: temperature 0 where it takes one, a larger token budget
//!   for reasoning models).
//! - [`NeuroSanJudge`]: a neuro-san agent (`neuro-san:<agent>`) over http, whose answer
//!   holds a bare `pass` or `fail` as a whole word.
//!
//! Both share the rest ([`voting`]): an answer that holds no verdict is asked for again,
//! twice at most, and then is a [`JudgeError`](prill_check::JudgeError), never a pass
//! or a fail; `votes = N` (odd) takes N verdicts and the majority, and the verdict's
//! metadata keeps every vote (`votes: [{verdict, reason}]`), the judge (`judge`), the
//! `prompt_version` and whether it came from the [`cache`] (`cached`).
//!
//! Values that are not text (a number, a structure) are judged as their JSON text: the
//! check engine turns them into text before it calls the judge.
//!
//! [`select`] names judges (`--judge`, `[judge] model`) and picks one from the
//! environment; [`calibrate()`] measures a judge against a labeled set.
//!
//! # Example
//!
//! Any [`Provider`](prill_connect::provider::Provider) can judge: here one written in
//! a few lines that always gives the same verdict; `prill_app` builds the real
//! ones (`openai:gpt-4o-mini`, ...) from `prill.toml` and the environment.
//!
//! ```
//! use std::sync::Arc;
//!
//! use prill_check::Judge;
//! use prill_connect::provider::{ModelRequest, ModelResponse, Provider, ProviderKind};
//! use prill_connect::{BoxFuture, ConnectError};
//! use prill_judge::{ModelJudge, Votes};
//!
//! /// A model that finds every sample good.
//! struct Lenient;
//!
//! impl Provider for Lenient {
//!     fn kind(&self) -> ProviderKind {
//!         ProviderKind::Openai
//!     }
//!
//!     fn complete<'a>(
//!         &'a self,
//!         _request: &'a ModelRequest,
//!     ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
//!         Box::pin(async {
//!             Ok(ModelResponse {
//!                 text: r#"{"verdict": "pass", "reason": "it names a band"}"#.into(),
//!                 ..ModelResponse::default()
//!             })
//!         })
//!     }
//! }
//!
//! let judge = ModelJudge::new(Arc::new(Lenient), "lenient-1").with_votes(Votes::new(3).unwrap());
//! let runtime = tokio::runtime::Runtime::new().unwrap();
//! let verdict = runtime.block_on(judge.judge("Names a band", "The Beatles")).unwrap();
//! assert!(verdict.pass);
//! assert_eq!(verdict.reason, "it names a band");
//! assert_eq!(verdict.metadata["votes"].as_array().map(Vec::len), Some(3));
//! ```

pub mod cache;
pub mod calibrate;
pub mod gates;
mod model;
pub mod namer;
mod neuro_san;
pub mod prompt;
pub mod record;
pub mod sampling;
pub mod select;
pub mod voting;

pub use cache::Cache;
pub use calibrate::{Calibration, LabeledItem, calibrate, load_labeled};
pub use gates::Gates;
pub use model::{DEFAULT_TIMEOUT, ModelJudge};
pub use namer::{ModeInput, ModeNamer, ModelNamer, NAMER_PROMPT_VERSION, NoNames};
pub use neuro_san::NeuroSanJudge;
pub use prompt::{NoVerdict, PROMPT_VERSION};
pub use sampling::{DEFAULT_MODELS, JudgeSampling};
pub use select::{HOW_TO_CONFIGURE, JudgeSpec, Picked, SpecError, key_vars, pick_from_env};
pub use voting::{Votes, VotesError};
