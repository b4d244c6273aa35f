//! `assay-judge` implements the [`Judge`](assay_check::Judge) trait that the `gist` and
//! `not_gist` checks use.
//!
//! Two backends:
//!
//! - [`ModelJudge`]: any model provider of `assay-connect` (`openai:gpt-4o-mini`,
//!   `anthropic:…`, `ollama:llama3.1`, …). Assay's own prompt ([`prompt`], versioned by
//!   [`PROMPT_VERSION`]) asks for a structured verdict `{"verdict": "pass"|"fail",
//!   "reason": "…"}` in the provider's structured-output mode, at temperature 0.
//! - [`NeuroSanJudge`]: a neuro-san agent (`neuro-san:<agent>`) over http, whose answer
//!   holds a bare `pass` or `fail` as a whole word.
//!
//! Both share the rest ([`voting`]): an answer that holds no verdict is asked for again,
//! twice at most, and then is a [`JudgeError`](assay_check::JudgeError), never a pass
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
//! ```no_run
//! use std::collections::HashMap;
//!
//! use assay_check::Judge;
//! use assay_connect::HttpOptions;
//! use assay_connect::provider::{self, Limits, ProviderSettings};
//! use assay_judge::{Cache, JudgeSpec, ModelJudge, Votes, pick_from_env};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let env: HashMap<String, String> = std::env::vars().collect();
//! let picked = pick_from_env(&env, false).ok_or("no judge")?;
//! eprintln!("judge: {} (picked because {})", picked.spec, picked.because);
//! let JudgeSpec::Model { provider: kind, model } = picked.spec else { unreachable!() };
//! let settings = ProviderSettings::resolve(kind, &env, None)?;
//! let provider = provider::build(kind, settings, &HttpOptions::default(), Limits::default())?;
//! let judge = ModelJudge::new(provider, model)
//!     .with_votes(Votes::new(3)?)
//!     .with_cache(Cache::default_dir());
//! let verdict = judge.judge("Names the band", "The Beatles").await?;
//! println!("{}: {}", verdict.pass, verdict.reason);
//! # Ok(())
//! # }
//! ```

pub mod cache;
pub mod calibrate;
mod model;
pub mod namer;
mod neuro_san;
pub mod prompt;
pub mod select;
pub mod voting;

pub use cache::Cache;
pub use calibrate::{Calibration, LabeledItem, calibrate, load_labeled};
pub use model::{DEFAULT_TIMEOUT, ModelJudge};
pub use namer::{ModeInput, ModeNamer, ModelNamer, NAMER_PROMPT_VERSION, NoNames};
pub use neuro_san::NeuroSanJudge;
pub use prompt::{NoVerdict, PROMPT_VERSION};
pub use select::{HOW_TO_CONFIGURE, JudgeSpec, Picked, SpecError, pick_from_env};
pub use voting::{Votes, VotesError};
