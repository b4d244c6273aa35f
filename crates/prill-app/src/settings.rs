//! [`Settings`]: `prill.toml`, the environment and explicit [`Overrides`], read once.
//!
//! `prill.toml` is the one given ([`Settings::load`] with a path), else the first found
//! by walking up from the working directory, as cargo and pytest find their files
//! ([`find_config`]). [`Settings::found`] says which file was used, or that none was.

use std::path::{Path, PathBuf};

use prill_spec::limits::Limits;
use prill_spec::load::{Document, Unrecognized};
use prill_spec::model::config::{Config, ProviderConfig};
use prill_spec::model::data_driven::Connection;
use prill_spec::model::quarantine::{Date, QUARANTINE_FILE, Quarantine, load_quarantine};
use prill_spec::{Env, ProviderKind, Report, load_file};

use crate::error::SettingsError;

/// The provider name of the demo model under `--demo`: an OpenAI-compatible endpoint of
/// the demo server that answers `You said: <the last user message>`, so that Sentinel
/// specs run without a key. It replaces a `[providers.demo]` of `prill.toml` for the run.
pub const DEMO_PROVIDER: &str = "demo";

/// The name of the project configuration file.
pub const CONFIG_FILE: &str = "prill.toml";

/// What the command line (or a Rust caller) sets over `prill.toml` and the environment.
/// `None` and empty mean "not set here".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The neuro-san server (`--server`), over `PRILL_SERVER` and `server`.
    pub server: Option<String>,
    /// An extra CA certificate (or the server's own certificate) to trust.
    pub ca_cert: Option<PathBuf>,
    /// Skip https certificate checks.
    pub insecure: bool,
    /// The judge (`provider:model` or `neuro-san:<agent>`), over `[judge] model`.
    pub judge: Option<String>,
    /// Do not read or write the judge's verdict cache, nor the model response cache
    /// (`--no-cache`).
    pub no_cache: bool,
    /// The most samples in flight across the run (default 32).
    pub jobs: Option<usize>,
    /// Every case's sample count, keeping its pass rate.
    pub samples: Option<u32>,
    /// Every case's gate, whatever its file states (`--reliability`), over
    /// `prill.toml`'s `reliability` (which only cases that state none take).
    pub reliability: Option<prill_spec::model::gate::Reliability>,
    /// Every case's connections.
    pub connections: Vec<Connection>,
    /// Make every warning of `prill.toml` an error (as its own `strict = true` does).
    pub strict: bool,
    /// Reach the built-in demo agents (a server started on 127.0.0.1) instead of a
    /// neuro-san server and `prill.toml`'s commands (the `demo` feature).
    pub demo: bool,
    /// Start no new unit after the first that fails or errors (`--fail-fast`).
    pub fail_fast: bool,
    /// Run only the units that failed or errored in the last run (`--rerun-failed`,
    /// read from [`Settings::last_run_path`]).
    pub rerun_failed: bool,
    /// Run only these units, each a case id (with `@model` on a `--model` run) and a
    /// connection (the provider of a model case), as `prill run --list` names them
    /// (`--units FILE`); the filters, tags and partition apply on top.
    pub units: Option<Vec<(String, String)>>,
    /// Run every Sentinel spec on each of these models instead of its own (`--model`):
    /// `model` or `provider:model`.
    pub models: Vec<String>,
    /// `--record`, `--replay`, `--replay-or-record` or `--re-record` with its folder,
    /// and `--replay-latency` ([`Settings::open_cassettes`]).
    pub cassettes: Option<crate::CassetteFlags>,
    /// `--otlp URL`: export the run as OpenTelemetry spans there (before `[otel]
    /// endpoint`).
    pub otlp: Option<String>,
    /// `--otlp-content`: the spans carry content (as `[otel] content = true`).
    pub otlp_content: bool,
}

/// Which `prill.toml` the settings came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// This file was read.
    File(PathBuf),
    /// None was found in the folder searched or any folder above it.
    None {
        /// Where the search started.
        from: PathBuf,
    },
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::File(path) => write!(f, "config: {}", path.display()),
            Found::None { from } => write!(
                f,
                "config: no {CONFIG_FILE} in {} or any folder above it",
                from.display()
            ),
        }
    }
}

/// Everything a run is configured by, read once: the project configuration, the
/// environment and the overrides. [`crate::Session`] turns it into connectors,
/// providers, the judge and run options.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `prill.toml`, when there is one.
    pub config: Option<Config>,
    /// Which file that was.
    pub found: Found,
    /// The warnings `prill.toml` gave (errors make [`Settings::load`] fail).
    pub reports: Vec<Report>,
    /// The environment (the process's, unless a caller gives another).
    pub env: Env,
    /// What the command line sets.
    pub overrides: Overrides,
    /// The run's cassettes once opened ([`Settings::open_cassettes`], which
    /// [`crate::Session::new`] calls): every connection built from these settings
    /// records into them or replays from them. `None` until then, and without a
    /// cassette flag.
    pub cassettes: Option<prill_connect::cassette::Cassettes>,
    /// The `${VAR}` values of the plan being run (`Plan::secrets`), once
    /// [`crate::Session::new`] knows it ([`Settings::with_plan_secrets`]): the model
    /// cache blanks them with the keys of [`Settings::secrets`]. Empty until then.
    pub plan_secrets: prill_spec::redact::Redactor,
    /// `prill-quarantine.toml`, beside `prill.toml` (or in the folder searched from,
    /// without one): the cases that run and are reported but do not gate. Empty
    /// without the file.
    pub quarantine: Quarantine,
    /// The run's trace id, random: the trace of the spans `--otlp` exports, and of the
    /// context every interaction is sent when there is a trace ([`Settings::tracing`]).
    pub trace_id: [u8; 16],
    /// The url of the run's OTLP receiver once [`crate::Session::new`] started one:
    /// command agents are told to send their spans there.
    pub(crate) receiver_url: Option<String>,
}

/// The first `prill.toml` in `start` or a folder above it.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|candidate| candidate.is_file())
}

impl Settings {
    /// No configuration file, the process environment, no overrides.
    pub fn empty() -> Settings {
        Settings {
            config: None,
            found: Found::None {
                from: PathBuf::from("."),
            },
            reports: Vec::new(),
            env: Env::from_process(),
            overrides: Overrides::default(),
            cassettes: None,
            plan_secrets: prill_spec::redact::Redactor::default(),
            quarantine: Quarantine::default(),
            trace_id: crate::otel::new_trace_id(),
            receiver_url: None,
        }
    }

    /// Settings from `config` when given, else from the `prill.toml` found by walking
    /// up from the working directory, with the process environment and `overrides`.
    pub fn load(config: Option<&Path>, overrides: Overrides) -> Result<Settings, SettingsError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Settings::load_from(&cwd, config, Env::from_process(), overrides)
    }

    /// As [`Settings::load`], searching from `start` and reading `env`.
    pub fn load_from(
        start: &Path,
        config: Option<&Path>,
        env: Env,
        overrides: Overrides,
    ) -> Result<Settings, SettingsError> {
        let path = match config {
            Some(path) => path.to_path_buf(),
            None => match find_config(start) {
                Some(path) => path,
                None => {
                    return Ok(Settings {
                        config: None,
                        found: Found::None {
                            from: start.to_path_buf(),
                        },
                        reports: Vec::new(),
                        env,
                        overrides,
                        cassettes: None,
                        plan_secrets: prill_spec::redact::Redactor::default(),
                        quarantine: read_quarantine(start, today())?,
                        trace_id: crate::otel::new_trace_id(),
                        receiver_url: None,
                    });
                }
            },
        };
        let (config, reports) = read_config(&path, &env, overrides.strict)?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Settings {
            config: Some(config),
            found: Found::File(path),
            reports,
            env,
            overrides,
            cassettes: None,
            plan_secrets: prill_spec::redact::Redactor::default(),
            quarantine: read_quarantine(&dir, today())?,
            trace_id: crate::otel::new_trace_id(),
            receiver_url: None,
        })
    }

    /// With another environment (tests build one by hand).
    pub fn with_env(self, env: Env) -> Settings {
        Settings { env, ..self }
    }

    /// With these cassettes: every connection built from the settings records into
    /// them or replays from them.
    pub fn with_cassettes(self, cassettes: Option<prill_connect::cassette::Cassettes>) -> Settings {
        Settings { cassettes, ..self }
    }

    /// With the `${VAR}` values of the plan being run, which the model cache blanks.
    pub fn with_plan_secrets(self, plan_secrets: prill_spec::redact::Redactor) -> Settings {
        Settings {
            plan_secrets,
            ..self
        }
    }

    /// With these overrides.
    pub fn with_overrides(self, overrides: Overrides) -> Settings {
        Settings { overrides, ..self }
    }

    /// The agents `prill.toml` runs as commands (`[agents.X] command = [...]`), by name,
    /// with the program and its arguments.
    pub fn command_agents(&self) -> Vec<(&str, &[String])> {
        self.config
            .iter()
            .flat_map(|c| &c.agents)
            .filter_map(|(name, agent)| Some((name.as_str(), agent.command.as_deref()?)))
            .collect()
    }

    /// The file the settings came from, when one was found.
    pub fn config_path(&self) -> Option<&Path> {
        match &self.found {
            Found::File(path) => Some(path),
            Found::None { .. } => None,
        }
    }

    /// The project's folder: `prill.toml`'s, else the working directory. Relative
    /// paths in `prill.toml` and the judge's cache are under it.
    pub fn project_dir(&self) -> PathBuf {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        self.config_path()
            .and_then(Path::parent)
            .map(|dir| {
                if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                }
            })
            .and_then(|dir| std::path::absolute(dir).ok())
            .unwrap_or(cwd)
    }

    /// Whether every spec warning is an error: `--strict` or `strict = true`.
    pub fn strict(&self) -> bool {
        self.overrides.strict || self.config.as_ref().and_then(|c| c.strict) == Some(true)
    }

    /// How test files are read (`max_input_bytes`, `includes`).
    /// With `--demo`, a test's `provider` may also name [`DEMO_PROVIDER`], the demo
    /// model.
    pub fn input_limits(&self) -> Limits {
        let mut limits = match &self.config {
            Some(config) => config.limits(&self.project_dir()),
            None => Limits::default(),
        };
        if self.overrides.demo {
            limits
                .providers
                .entry(DEMO_PROVIDER.to_owned())
                .or_insert(ProviderKind::Openai);
        }
        limits
    }

    /// `[providers.<kind>]`, the table of `kind`'s own provider (a named provider of
    /// that kind has its own table, under its own name).
    pub fn provider_table(&self, kind: ProviderKind) -> Option<&ProviderConfig> {
        self.config
            .as_ref()
            .and_then(|c| c.providers.get(kind.name()))
    }

    /// The most cases in flight: `[concurrency] max_test_case_concurrency`.
    pub fn max_cases(&self) -> Option<usize> {
        self.config
            .as_ref()
            .and_then(|c| c.concurrency.as_ref())
            .and_then(|c| c.max_test_case_concurrency)
            .map(|n| n as usize)
    }
}

/// Today, in UTC.
pub(crate) fn today() -> Date {
    Date::from(time::OffsetDateTime::now_utc().date())
}

/// The most a quarantine file may hold.
const MAX_QUARANTINE_BYTES: u64 = 1024 * 1024;

/// `prill-quarantine.toml` in `dir`: its entries, nothing without the file, or its
/// errors, an entry past its date among them (naming its owner).
pub(crate) fn read_quarantine(dir: &Path, today: Date) -> Result<Quarantine, SettingsError> {
    let path = dir.join(QUARANTINE_FILE);
    let invalid = |reports: Vec<Report>| SettingsError::InvalidConfig {
        path: path.display().to_string(),
        reports,
    };
    let problem = |message: String| {
        let source = prill_spec::Source::new(&path, "");
        invalid(vec![Report::new(
            prill_spec::Diagnostic::new("quarantine", "", message),
            &source,
        )])
    };
    let text = match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Quarantine::default()),
        Err(e) => return Err(problem(format!("cannot read the file: {e}"))),
        Ok(m) if !m.is_file() => return Err(problem("not a regular file".to_owned())),
        Ok(m) if m.len() > MAX_QUARANTINE_BYTES => {
            return Err(problem(format!(
                "{} bytes, more than the {MAX_QUARANTINE_BYTES} a quarantine file may hold",
                m.len()
            )));
        }
        Ok(_) => std::fs::read_to_string(&path)
            .map_err(|e| problem(format!("cannot read the file: {e}")))?,
    };
    let quarantine = load_quarantine(&path, &text).map_err(invalid)?;
    let source = prill_spec::Source::new(&path, text.as_str());
    let expired: Vec<Report> = quarantine
        .entries
        .iter()
        .filter(|e| e.expired(today))
        .map(|e| {
            let d = prill_spec::Diagnostic::new(
                "quarantine-expired",
                "quarantine",
                format!(
                    "line {}: the quarantine of `{}` in {} ended on {}; its owner, {}, should fix the case, or renew `expires`, or remove the entry",
                    e.at.0, e.case, e.file, e.expires, e.owner
                ),
            );
            Report::new(d, &source)
        })
        .collect();
    if expired.is_empty() {
        Ok(quarantine)
    } else {
        Err(invalid(expired))
    }
}

/// Reads `prill.toml` at `path`: the configuration and its warnings, or its errors.
fn read_config(
    path: &Path,
    env: &Env,
    strict: bool,
) -> Result<(Config, Vec<Report>), SettingsError> {
    let invalid = |reports: Vec<Report>| SettingsError::InvalidConfig {
        path: path.display().to_string(),
        reports,
    };
    let unreadable = |message: String| {
        let source = prill_spec::Source::new(path, "");
        invalid(vec![Report::new(
            prill_spec::Diagnostic::new("unreadable", "", message),
            &source,
        )])
    };
    let loaded = match load_file(path, env, Unrecognized::Error) {
        Ok(Some(loaded)) => loaded,
        Ok(None) => return Err(unreadable("not a configuration file".to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unreadable("no such file or directory".to_owned()));
        }
        Err(e) => return Err(unreadable(format!("cannot read the file: {e}"))),
    };
    let own_strict = matches!(&loaded.outcome, Ok(Document::Config(c)) if c.strict == Some(true));
    let loaded = if strict || own_strict {
        loaded.strict()
    } else {
        loaded
    };
    let reports = loaded.reports();
    match loaded.outcome {
        Ok(Document::Config(config)) => Ok((config, reports)),
        Ok(_) => Err(unreadable(format!(
            "this is a test file, not an {CONFIG_FILE}"
        ))),
        Err(_) => Err(invalid(reports)),
    }
}
