//! neuro-san's own `direct` connection: [`NeuroSanDirect`] runs an agent network
//! in-process in neuro-san's Python library, and [`DirectConnector`] is what `direct`
//! means to Prill: the command agents of `prill.toml` first, then neuro-san networks.
//!
//! In neuro-san, `direct` (the default when a test file names no connection) runs the
//! network with no server, through `AgentSessionFactory().create_session("direct", ...)`.
//! Prill does the same through a bridge program shipped with it,
//! `integrations/neuro-san/direct_bridge.py` (built into this crate as [`BRIDGE_SOURCE`]
//! and passed to Python with `-c`, so nothing is written to disk). The bridge speaks the
//! JSON-lines protocol of `docs/direct-agents.md` on one side, so a conversation with it is
//! an ordinary [`StdioCommand`]: one process per conversation, with the same timeouts,
//! limits, stderr capture and kill-on-drop as any command agent. The request line carries
//! `use_direct`, `metadata`, `chat_filter`, `chat_context` and `sly_data`, and the bridge
//! hands them to neuro-san's session.
//!
//! neuro-san finds its networks from its usual variables: `AGENT_MANIFEST_FILE`,
//! `AGENT_TOOL_PATH`, `PYTHONPATH` and the model's keys. [`NeuroSanDirect::from_config`]
//! sets the first two from `[neuro_san]` in `prill.toml` when given there; everything
//! else is inherited from Prill's environment.
//!
//! With the run's cassettes ([`DirectConnector::with_cassettes`]), a bridge's exchanges
//! are recorded as [`NEURO_SAN_DIRECT_CONNECTOR`] under the network's name, or answered
//! from a recording without starting Python at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use prill_spec::model::config::NeuroSanConfig;

use crate::cassette::Cassettes;
use crate::error::ConnectError;
use crate::neuro_san_pool::{Warming, WorkerPool};
use crate::stdio::{StdioCommand, StdioConnector, StdioConversation};
use crate::stdio_cassette::{NEURO_SAN_DIRECT_CONNECTOR, RunCassettes};
use crate::{BoxFuture, Connector, Conversation};

/// The bridge program (Python), as shipped in `integrations/neuro-san/direct_bridge.py`.
pub const BRIDGE_SOURCE: &str = include_str!("../../../integrations/neuro-san/direct_bridge.py");

/// The Python used when none is configured.
pub const DEFAULT_PYTHON: &str = "python3";

/// The variable neuro-san reads its agent network manifest from.
pub const MANIFEST_ENV: &str = "AGENT_MANIFEST_FILE";

/// The variable neuro-san reads its coded tools' location from.
pub const TOOL_PATH_ENV: &str = "AGENT_TOOL_PATH";

/// neuro-san agent networks run in-process: on warm workers that load neuro-san once
/// ([`NeuroSanDirect::with_workers`], [`crate::neuro_san_pool`]), or in one bridge
/// process per conversation.
///
/// `Debug` shows the environment's keys, never its values. Clones share their workers.
#[derive(Clone)]
pub struct NeuroSanDirect {
    python: String,
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    cassettes: RunCassettes,
    /// How many warm workers; 0 for a process per conversation.
    workers: usize,
    /// The workers, made at first use (so that the settings before it are theirs).
    pool: Arc<OnceLock<Arc<WorkerPool>>>,
}

impl PartialEq for NeuroSanDirect {
    fn eq(&self, other: &NeuroSanDirect) -> bool {
        (
            &self.python,
            &self.env,
            &self.cwd,
            &self.cassettes,
            self.workers,
        ) == (
            &other.python,
            &other.env,
            &other.cwd,
            &other.cassettes,
            other.workers,
        )
    }
}

impl Eq for NeuroSanDirect {}

impl std::fmt::Debug for NeuroSanDirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeuroSanDirect")
            .field("python", &self.python)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("cassettes", &self.cassettes)
            .field("workers", &self.workers)
            .finish()
    }
}

impl NeuroSanDirect {
    /// Networks run by `python` (which must have neuro-san installed), with the
    /// environment Prill runs in.
    pub fn new(python: impl Into<String>) -> NeuroSanDirect {
        NeuroSanDirect {
            python: python.into(),
            env: BTreeMap::new(),
            cwd: None,
            cassettes: RunCassettes::default(),
            workers: 0,
            pool: Arc::default(),
        }
    }

    /// The connection on `workers` warm workers (0: a bridge process per
    /// conversation, as before), each loading neuro-san once and serving one
    /// conversation after another ([`crate::neuro_san_pool`]).
    pub fn with_workers(mut self, workers: usize) -> NeuroSanDirect {
        self.workers = workers;
        self.pool = Arc::default();
        self
    }

    /// How many warm workers run at once; 0 when each conversation starts its own.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Starts up to `count` warm workers now (at most [`NeuroSanDirect::workers`]), so
    /// that neuro-san loads while the caller does other things (inside a tokio
    /// runtime); [`Warming::wait`] says when they are ready. `None` without workers,
    /// when all are alive already, or with cassettes that replay (they need no worker).
    pub fn warm(&self, count: usize) -> Option<Warming> {
        if self.cassettes.0.as_ref().is_some_and(|c| !c.records()) {
            return None;
        }
        self.pool()?.warm(count)
    }

    /// The warm workers, when there are any.
    fn pool(&self) -> Option<&Arc<WorkerPool>> {
        (self.workers > 0).then(|| {
            self.pool
                .get_or_init(|| Arc::new(WorkerPool::new(self.worker_command(), self.workers)))
        })
    }

    /// The bridge as a warm worker, serving any agent.
    fn worker_command(&self) -> StdioCommand {
        let mut command = self.command("--worker");
        command.label = Some(format!(
            "`{} <prill's neuro-san direct bridge> --worker`",
            self.python
        ));
        command
    }

    /// The connection with the run's cassettes (`None`: none): every exchange with a
    /// bridge is recorded as [`NEURO_SAN_DIRECT_CONNECTOR`] under the network's name, or
    /// answered from a recording without starting the bridge, as their mode says.
    pub fn with_cassettes(mut self, cassettes: Option<Cassettes>) -> NeuroSanDirect {
        self.cassettes = RunCassettes(cassettes);
        self
    }

    /// Adds a variable to the bridge's environment.
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> NeuroSanDirect {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Runs the bridge in `dir`.
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> NeuroSanDirect {
        self.cwd = Some(dir.into());
        self
    }

    /// The connection `[neuro_san]` in `prill.toml` describes, its relative paths taken
    /// from `dir` (the folder of `prill.toml`); without that table, the one neuro-san's
    /// own variables describe when `manifest_env` (the value of `AGENT_MANIFEST_FILE`)
    /// is set; otherwise none.
    pub fn from_config(
        config: Option<&NeuroSanConfig>,
        dir: &Path,
        manifest_env: Option<&str>,
    ) -> Option<NeuroSanDirect> {
        let Some(config) = config else {
            return manifest_env
                .filter(|m| !m.is_empty())
                .map(|_| NeuroSanDirect::new(DEFAULT_PYTHON).with_cwd(dir));
        };
        let python = match config.python.as_deref() {
            None => DEFAULT_PYTHON.to_owned(),
            // A bare name (`python3.12`) is looked up on PATH; a path is the config's.
            Some(p) if !p.contains(['/', '\\']) => p.to_owned(),
            Some(p) => dir.join(p).display().to_string(),
        };
        let mut direct = NeuroSanDirect::new(python).with_cwd(dir);
        for (key, value) in &config.env {
            direct = direct.with_env(key, value);
        }
        if let Some(manifest) = &config.manifest {
            direct = direct.with_env(MANIFEST_ENV, dir.join(manifest).display().to_string());
        }
        if let Some(tools) = &config.tool_path {
            direct = direct.with_env(TOOL_PATH_ENV, dir.join(tools).display().to_string());
        }
        Some(direct)
    }

    /// The Python that runs the bridge.
    pub fn python(&self) -> &str {
        &self.python
    }

    /// The variables added to the bridge's environment.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// The bridge command for one conversation with `agent`.
    pub fn command(&self, agent: &str) -> StdioCommand {
        let mut command = StdioCommand::new([
            self.python.clone(),
            "-c".to_owned(),
            BRIDGE_SOURCE.to_owned(),
            agent.to_owned(),
        ]);
        command.env = self.env.clone();
        command.cwd = self.cwd.clone();
        command.label = Some(format!(
            "`{} <prill's neuro-san direct bridge> {agent}`",
            self.python
        ));
        command
    }

    /// One conversation with `agent`, held to `timeout` and `idle` unless the request
    /// says otherwise, on the cassettes when set up.
    fn start(
        &self,
        agent: &str,
        timeout: Option<std::time::Duration>,
        idle: Option<std::time::Duration>,
    ) -> Result<StdioConversation, ConnectError> {
        let tape = self.cassettes.tape(NEURO_SAN_DIRECT_CONNECTOR, agent);
        match self.pool() {
            // Leased at its first live request; the command only names it in messages.
            Some(pool) => {
                let mut command = self.command(agent);
                command.label = Some(format!(
                    "`{} <prill's neuro-san direct bridge> --worker` (agent `{agent}`)",
                    self.python
                ));
                Ok(command
                    .start_later(timeout, idle, tape)
                    .leasing(Arc::clone(pool), agent))
            }
            None => self.command(agent).start_with(timeout, idle, tape),
        }
    }
}

impl Connector for NeuroSanDirect {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        Box::pin(async move {
            let conversation = self.start(agent, Some(crate::DEFAULT_TIMEOUT), None)?;
            Ok(Box::new(conversation) as Box<dyn Conversation>)
        })
    }
}

/// The `direct` connection: an agent that is a command of `prill.toml` runs as that
/// command; any other runs as a neuro-san network when [`NeuroSanDirect`] is set up.
#[derive(Debug, Clone, Default)]
pub struct DirectConnector {
    commands: StdioConnector,
    neuro_san: Option<NeuroSanDirect>,
    /// Which `prill.toml` the commands came from, for the unknown-agent error.
    config: ConfigSource,
}

/// Where the command agents of [`DirectConnector`] came from, as the error for an
/// unknown agent names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConfigSource {
    /// Not said (a connector built by hand).
    #[default]
    Unknown,
    /// This `prill.toml` was read.
    File(PathBuf),
    /// No `prill.toml` was found in this folder or any folder above it.
    NotFound(PathBuf),
}

impl DirectConnector {
    /// Commands first, then neuro-san networks when `neuro_san` is given.
    pub fn new(commands: StdioConnector, neuro_san: Option<NeuroSanDirect>) -> DirectConnector {
        DirectConnector {
            commands,
            neuro_san,
            config: ConfigSource::Unknown,
        }
    }

    /// Says which `prill.toml` the commands came from (or that none was found), so
    /// that an unknown agent's error names it.
    pub fn with_config(mut self, config: ConfigSource) -> DirectConnector {
        self.config = config;
        self
    }

    /// The error for an agent that is neither a command nor (with no neuro-san set up)
    /// a network: which configuration was read, and the three ways to reach the agent.
    fn unknown(&self, agent: &str) -> ConnectError {
        let read = match &self.config {
            ConfigSource::Unknown => "prill.toml has no command for it".to_owned(),
            ConfigSource::File(path) => {
                format!("{} has no `[agents.{agent}]` command", path.display())
            }
            ConfigSource::NotFound(from) => format!(
                "no prill.toml was found in {} or any folder above it, so there are no agent commands",
                from.display()
            ),
        };
        ConnectError::UnknownAgent {
            agent: agent.to_owned(),
            server: format!(
                "the direct connection ({read}, and no neuro-san networks are set up by `[neuro_san]` in prill.toml or {MANIFEST_ENV}); \
                 to reach it, run with `--demo` for the built-in demo agents, add `[agents.{agent}] command = [\"program\", \"arg\"]` to prill.toml, \
                 or use `--connection http` with a neuro-san server that hosts it"
            ),
        }
    }

    /// The connection with the run's cassettes (`None`: none), for the command agents
    /// ([`StdioConnector::with_cassettes`]) and the neuro-san networks
    /// ([`NeuroSanDirect::with_cassettes`]) alike.
    pub fn with_cassettes(mut self, cassettes: Option<Cassettes>) -> DirectConnector {
        self.neuro_san = self.neuro_san.map(|n| n.with_cassettes(cassettes.clone()));
        self.commands = self.commands.with_cassettes(cassettes);
        self
    }

    /// The neuro-san connection, when set up.
    pub fn neuro_san(&self) -> Option<&NeuroSanDirect> {
        self.neuro_san.as_ref()
    }
}

impl Connector for DirectConnector {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        if self.commands.get(agent).is_some() {
            return self.commands.open(agent);
        }
        match &self.neuro_san {
            // The bridge is held to the same limits as the commands.
            Some(neuro_san) => Box::pin(async move {
                let (timeout, idle) = self.commands.limits();
                let conversation = neuro_san.start(agent, timeout, idle)?;
                Ok(Box::new(conversation) as Box<dyn Conversation>)
            }),
            None => Box::pin(async move { Err(self.unknown(agent)) }),
        }
    }
}
