//! A `cargo test` harness for spec files: one test per case, run by libtest-mimic, so
//! `cargo test` and `cargo nextest` run a directory of data-driven or Sentinel files
//! like any other tests (filters, `--list`, `--exact` and JUnit from nextest all work).
//!
//! The harness reads `prill.toml` (found by walking up from the working directory,
//! which `cargo test` sets to the crate's folder) and the environment like the CLI,
//! through the same [`Settings`]: a Sentinel folder runs against `OPENAI_BASE_URL` with
//! `OPENAI_API_KEY`, and a `gist` check gets the judge that `[judge]` or the environment
//! names. A [`Harness`] builder overrides the judge, samples, jobs and connections.
//!
//! In `Cargo.toml`:
//!
//! ```toml
//! [[test]]
//! name = "agents"
//! harness = false
//! ```
//!
//! and in `tests/agents.rs`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     prill_app::harness::Harness::new("tests/agents")
//!         .samples(5)
//!         .judge("openai:gpt-4o-mini")
//!         .main()
//! }
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use prill_report::human::unit_text;
use prill_report::{HumanOptions, Verbosity};
use prill_run::{Connectors, Event, RunOptions, Status, UnitReport, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use tokio::sync::mpsc;

use crate::error::SettingsError;
use crate::session::Session;
use crate::settings::{Overrides, Settings};

/// Where the harness reaches agents.
pub enum Agents {
    /// As the settings say: `prill.toml`'s server and commands, the environment.
    Configured,
    /// The built-in demo agents, started for the run.
    #[cfg(feature = "demo")]
    Demo,
    /// Connectors built by the caller (the providers and judge still come from the
    /// settings).
    Given(Connectors),
}

/// Runs every case under `dir` as a test against `agents`, with the settings of
/// `prill.toml` and the environment, and returns the exit code libtest would.
pub fn main(dir: impl AsRef<Path>, agents: Agents) -> ExitCode {
    Harness::new(dir.as_ref()).agents(agents).main()
}

/// The harness, with overrides over `prill.toml` and the environment.
pub struct Harness {
    dir: PathBuf,
    agents: Agents,
    config: Option<PathBuf>,
    env: Option<Env>,
    overrides: Overrides,
}

impl Harness {
    /// The spec files under `dir`, reached as the settings say.
    pub fn new(dir: impl Into<PathBuf>) -> Harness {
        Harness {
            dir: dir.into(),
            agents: Agents::Configured,
            config: None,
            env: None,
            overrides: Overrides::default(),
        }
    }

    /// Reach the agents this way.
    pub fn agents(mut self, agents: Agents) -> Harness {
        self.agents = agents;
        self
    }

    /// Read this `prill.toml` instead of the one found by walking up.
    pub fn config(mut self, path: impl Into<PathBuf>) -> Harness {
        self.config = Some(path.into());
        self
    }

    /// Read these variables instead of the process environment.
    pub fn env(mut self, env: Env) -> Harness {
        self.env = Some(env);
        self
    }

    /// The gist judge: `provider:model` or `neuro-san:<agent>`.
    pub fn judge(mut self, judge: impl Into<String>) -> Harness {
        self.overrides.judge = Some(judge.into());
        self
    }

    /// Every case's sample count, keeping its pass rate.
    pub fn samples(mut self, samples: u32) -> Harness {
        self.overrides.samples = Some(samples);
        self
    }

    /// The most samples in flight at once.
    pub fn jobs(mut self, jobs: usize) -> Harness {
        self.overrides.jobs = Some(jobs);
        self
    }

    /// Neither read nor write the judge's verdict cache.
    pub fn no_cache(mut self) -> Harness {
        self.overrides.no_cache = true;
        self
    }

    /// Run every case over these connections instead of its own.
    pub fn connections(mut self, connections: impl IntoIterator<Item = Connection>) -> Harness {
        self.overrides.connections = connections.into_iter().collect();
        self
    }

    /// The neuro-san server, over `PRILL_SERVER` and `prill.toml`.
    pub fn server(mut self, server: impl Into<String>) -> Harness {
        self.overrides.server = Some(server.into());
        self
    }

    /// Parses libtest's arguments, runs the cases and returns libtest's exit code.
    pub fn main(self) -> ExitCode {
        let args = Arguments::from_args();
        match self.trials() {
            Ok(trials) => {
                let code = libtest_mimic::run(&args, trials).exit_code();
                prill_connect::end_pending_groups();
                code
            }
            Err(e) => {
                eprintln!("error: {e}");
                if let SettingsError::InvalidConfig { reports, .. } = &e {
                    for report in reports {
                        eprintln!("{}", report.plain());
                    }
                }
                ExitCode::from(101)
            }
        }
    }

    /// One trial per case of every spec file under the folder; an invalid file is one
    /// failing trial.
    pub fn trials(self) -> Result<Vec<Trial>, SettingsError> {
        #[cfg(feature = "demo")]
        let demo = matches!(self.agents, Agents::Demo);
        #[cfg(not(feature = "demo"))]
        let demo = false;
        let overrides = Overrides {
            demo,
            ..self.overrides
        };
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let env = self.env.unwrap_or_else(Env::from_process);
        let settings = Settings::load_from(&cwd, self.config.as_deref(), env, overrides)?;
        for report in &settings.reports {
            eprintln!("{}", report.plain());
        }
        if let Some(warning) = crate::files::fit_open_files(settings.run_options(None).jobs) {
            eprintln!("{warning}");
        }
        let runtime = Arc::new(crate::runtime().map_err(|e| SettingsError::Demo(e.to_string()))?);
        let (mut trials, plan) = load(&self.dir, &settings);
        let mut session = runtime.block_on(Session::new(&settings, &plan))?;
        for note in &session.notes {
            eprintln!("{note}");
        }
        if let Agents::Given(mut connectors) = self.agents {
            // The caller's agents, with the run's tool programs unless it brought its own.
            if let Some(tools) = session.connectors.frameworks().tools.clone()
                && connectors.frameworks().tools.is_none()
            {
                connectors = connectors.with_tool_launcher(tools);
            }
            session.connectors = crate::parts::with_providers(connectors, &session.providers);
        }
        let session = Arc::new(session);
        let secrets = Arc::new(session.secrets_of(&plan));
        for case in plan.cases {
            let kind = case.dialect.name();
            let name = match case.dialect {
                prill_spec::Dialect::DataDriven => case.name.to_string(),
                _ => {
                    let file = case.file.strip_prefix(&self.dir).unwrap_or(&case.file);
                    format!("{}::{}", file.display(), case.name)
                }
            };
            let runtime = Arc::clone(&runtime);
            let session = Arc::clone(&session);
            let secrets = Arc::clone(&secrets);
            trials.push(
                Trial::test(name, move || {
                    let plan = Plan::new(vec![case]);
                    let mut reports =
                        runtime.block_on(run_one(&plan, &session.connectors, &session.options));
                    reports.iter_mut().for_each(|r| r.redact(&secrets));
                    verdict(&reports)
                })
                .with_kind(kind),
            );
        }
        Ok(trials)
    }
}

/// The cases of every valid spec file under `dir`, and a failing trial for each file
/// that is not valid.
fn load(dir: &Path, settings: &Settings) -> (Vec<Trial>, Plan) {
    let limits = settings.input_limits();
    let mut trials = Vec::new();
    let mut cases = Vec::new();
    let mut secrets = prill_spec::redact::Redactor::default();
    for found in prill_spec::load::discover(&[dir.to_path_buf()]) {
        let path = match found {
            Ok(path) => path,
            Err((path, e)) => {
                let message = format!("{}: {e}", path.display());
                trials.push(Trial::test(path.display().to_string(), move || {
                    Err(message.into())
                }));
                continue;
            }
        };
        let loaded = match prill_spec::load::load_file_with(
            &path,
            &settings.env,
            Unrecognized::Skip,
            &limits,
        ) {
            Ok(Some(loaded)) if settings.strict() => loaded.strict(),
            Ok(Some(loaded)) => loaded,
            Ok(None) => continue,
            Err(e) => {
                let message = format!("{}: {e}", path.display());
                trials.push(Trial::test(path.display().to_string(), move || {
                    Err(message.into())
                }));
                continue;
            }
        };
        if matches!(loaded.dialect, Some(prill_spec::Dialect::Config)) {
            continue;
        }
        if !loaded.is_valid() {
            let message: Vec<String> = loaded.reports().iter().map(|r| r.plain()).collect();
            let message = message.join("\n");
            trials.push(Trial::test(path.display().to_string(), move || {
                Err(message.into())
            }));
            continue;
        }
        secrets.extend(&loaded.redactor);
        cases.extend(loaded.cases());
    }
    let mut plan = Plan::new(cases);
    plan.secrets = secrets;
    (trials, plan)
}

async fn run_one(plan: &Plan, connectors: &Connectors, options: &RunOptions) -> Vec<UnitReport> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    run_plan(plan, connectors, options, tx).await;
    let mut reports = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::UnitFinished(report) = event {
            reports.push(report);
        }
    }
    reports
}

/// `Ok` when every unit passed; otherwise, for each unit that did not, its line and
/// each failure and error with where it happened (`at file:line:col, interaction 1,
/// samples 0, 2`), as `prill run` prints them.
fn verdict(reports: &[UnitReport]) -> Result<(), Failed> {
    let options = HumanOptions {
        verbosity: Verbosity::Normal,
        color: false,
        terminal: true,
        transcripts: false,
    };
    let text: String = reports
        .iter()
        .filter(|r| r.verdict != Status::Passed)
        .map(|r| unit_text(r, options))
        .collect();
    if text.is_empty() {
        Ok(())
    } else {
        Err(text.trim_end().into())
    }
}
