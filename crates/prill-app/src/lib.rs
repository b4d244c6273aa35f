//! `prill-app` is Prill's application layer: it resolves everything a run needs, once,
//! in one place (settings are its [`Settings`] module), for every way Prill is driven:
//! the `prill` CLI, the `cargo test` [`harness`], and Rust code that embeds the crates.
//!
//! - [`Settings`]: `prill.toml` (the one given, else the first found by walking up from
//!   the working directory, as cargo and pytest do: [`Settings::found`] says which, or
//!   that none was), the environment, and explicit [`Overrides`] (what the command line
//!   sets).
//! - [`Providers`]: the five model providers, each built once with its
//!   `[providers.<name>]` limits. The model cases and the judge call the same provider,
//!   so `requests_per_minute` is the rate the provider sees for the whole run.
//! - [`Session`]: the settings resolved for one plan: connectors by connection
//!   (neuro-san http, https and mcp, `prill.toml`'s commands and neuro-san networks on
//!   `direct`, or the built-in demo agents), providers, the gist judge, time limits and
//!   concurrency; [`Session::run`] runs the plan and sends the engine's events.
//! - [`Settings::open_cassettes`]: the run's cassettes (`--record DIR`, `--replay DIR`,
//!   ..., with `[cassettes]` and every secret of the run), opened once by
//!   [`Session::new`] and given to every connection it builds (`docs/cassettes.md`).
//! - [`cassette_check`]: `prill cassettes check`, which recordings of a cassette folder
//!   still answer the cases as they are now, and what changed since the others.
//! - [`prepare`]: the files loaded and the cases selected, after `--model` (each
//!   Sentinel spec on each model, [`with_models`]) and `--rerun-failed` (the units that
//!   failed in `.prill/last-run.json`, [`Settings::last_run_path`]).
//! - [`harness`]: `cargo test` runs a folder of spec files, reading `prill.toml` and the
//!   environment like the CLI.
//! - [`demo`] (feature `demo`, on by default): the built-in demo agents as connectors.
//! - [`watch`]: what `prill watch` waits for (a changed test file or `prill.toml`).
//! - [`init`]: the files `prill init` writes (a commented `prill.toml`, example tests
//!   that pass against the demo, a CI workflow).
//!
//! Nothing here prints: what is worth telling the user is in [`Session::notes`] and
//! [`Settings::reports`].
//!
//! # Example
//!
//! Run a folder of spec files against the demo agents and count the verdicts:
//!
//! ```
//! use prill_run::Selection;
//! use prill_app::{Overrides, Session, Settings, prepare};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let overrides = Overrides { demo: true, ..Overrides::default() };
//! let settings = Settings::load(None, overrides).unwrap();
//! let folder = "../../fixtures/quickstart".into();
//! let prepared = prepare(&settings, &[folder], &Selection::all(), None);
//! assert!(prepared.inputs.reports().is_empty());
//! let session = Session::new(&settings, &prepared.plan).await.unwrap();
//! let (events, _rx) = tokio::sync::mpsc::unbounded_channel();
//! let summary = session.run(&prepared.plan, events).await;
//! session.shutdown().await;
//! // Three cases, each over two connections.
//! assert_eq!((summary.passed, summary.failed, summary.errored), (6, 0, 0));
//! # });
//! ```

mod cache;
pub mod cassette_check;
mod cassettes;
mod compare;
#[cfg(feature = "demo")]
pub mod demo;
mod drive;
mod error;
pub mod explain;
mod files;
pub mod harness;
pub mod history;
pub mod init;
mod judge;
mod keep;
mod models;
pub mod otel;
mod parts;
mod prices;
mod rerun;
mod runtime;
mod session;
mod settings;
#[cfg(feature = "demo")]
mod span_files;
mod top_up;
pub mod view;
pub mod watch;

pub use cache::MODELS_CACHE_DIR;
pub use cassettes::{CassetteFlags, mode_name};
pub use compare::RunQuery;
pub use drive::{Prepared, Ran, assess_unit, name_modes, prepare};
pub use error::SettingsError;
pub use files::{FILES_BASE, FILES_PER_JOB, files_needed, fit_open_files};
pub use judge::{Chosen, plan_needs_judge};
pub use keep::{HISTORY_LOST, Kept, LAST_RUN_LOST};
pub use models::{ModelChoice, with_models};
pub use parts::{Providers, seconds, with_providers};
pub use prices::Prices;
pub use runtime::runtime;
pub use session::Session;
pub use settings::{CONFIG_FILE, DEMO_PROVIDER, Found, Overrides, Settings, find_config};
pub use top_up::{TOP_UP_COMMAND, TopUpError, ToppedUp};
