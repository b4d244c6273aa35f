//! [`StdioConnector`]: agents that are commands speaking JSON lines over stdin and
//! stdout (the `direct` connection for an agent with a `command` in `assay.toml`).
//!
//! The protocol is written down for agent authors in `docs/direct-agents.md`. In short:
//! the command is started once per conversation; each request is one line on its stdin
//! (the same `ChatRequest` JSON as the http body, plus a `metadata` object); it answers
//! with `ChatResponse` lines (`{"response": {...}}`) on stdout, and the answer ends with
//! the first line holding an `AGENT_FRAMEWORK` message. Its stderr is kept (the last
//! [`STDERR_KEPT`](crate::STDERR_KEPT) bytes) and shown in errors, with the values of
//! the variables that
//! hold keys ([`KEY_VARIABLES`](assay_spec::redact::KEY_VARIABLES),
//! [`StdioCommand::secret_variables`]) and of the
//! request's metadata blanked out: an agent that prints its environment leaks nothing.
//!
//! Nothing waits forever: an exchange whose request sets no timeout gets the command's
//! own ([`StdioCommand::timeout`], `timeout_in_seconds` of its `assay.toml` table), else
//! the connector's default ([`crate::DEFAULT_TIMEOUT`]); an optional idle limit ends an
//! exchange during which the command wrote no line for that long.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assay_spec::model::config::Config;
use assay_spec::redact::Redactor;
use serde_json::Value;

use crate::decode::{DEFAULT_MAX_BODY_BYTES, values_of_line};
use crate::error::{ConnectError, cut};
use crate::process::{Launch, Process, Read, secrets_of};
use crate::types::{AgentRequest, AgentResponse, Timings};
use crate::wire::{Collector, chat_request};
use crate::{BoxFuture, Connector, Conversation, with_timeout};

/// A command that speaks the direct protocol.
///
/// `Debug` shows the environment's keys, never its values.
#[derive(Clone, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: BTreeMap<String, String>,
    /// The working directory; the current one when `None`.
    pub cwd: Option<PathBuf>,
    /// The cap on one response, in bytes.
    pub max_body_bytes: u64,
    /// The limit on an exchange whose request sets none; `None` leaves it to the
    /// connector ([`StdioConnector::with_timeouts`]).
    pub timeout: Option<Duration>,
    /// How messages name the command, instead of its words (when those are long, as a
    /// program passed with `python -c` is).
    pub label: Option<String>,
    /// Variables besides [`KEY_VARIABLES`](assay_spec::redact::KEY_VARIABLES) whose values are keys (a provider's
    /// `api_key_env`): their values, from `env` or Assay's own environment (which the
    /// command inherits), are blanked out of the stderr tail that messages quote.
    pub secret_variables: Vec<String>,
}

impl fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioCommand")
            .field("command", &self.command)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("timeout", &self.timeout)
            .field("label", &self.label)
            .field("secret_variables", &self.secret_variables)
            .finish()
    }
}

impl StdioCommand {
    /// A command with no extra environment, run in the current directory.
    pub fn new<S: Into<String>>(command: impl IntoIterator<Item = S>) -> StdioCommand {
        StdioCommand {
            command: command.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            timeout: None,
            label: None,
            secret_variables: Vec::new(),
        }
    }

    /// What the command's stderr may hold that messages must not show: the values of
    /// [`KEY_VARIABLES`](assay_spec::redact::KEY_VARIABLES) and of `secret_variables`,
    /// as the command sees them.
    fn secrets(&self) -> Redactor {
        secrets_of(&self.env, &self.secret_variables)
    }

    /// The command as messages show it: `` `python3 agent.py` ``, or its `label`.
    pub fn display(&self) -> String {
        if let Some(label) = &self.label {
            return label.clone();
        }
        let words: Vec<String> = self
            .command
            .iter()
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("'{w}'")
                } else {
                    w.clone()
                }
            })
            .collect();
        format!("`{}`", words.join(" "))
    }

    /// Starts the command: one conversation, with the command's timeout (else
    /// [`crate::DEFAULT_TIMEOUT`]) and no idle limit.
    pub fn start(&self) -> Result<StdioConversation, ConnectError> {
        self.start_with(Some(crate::DEFAULT_TIMEOUT), None)
    }

    /// Starts the command with `default` as the limit on an exchange whose request and
    /// command set none, and `idle` as the longest wait for a line.
    pub(crate) fn start_with(
        &self,
        default: Option<Duration>,
        idle: Option<Duration>,
    ) -> Result<StdioConversation, ConnectError> {
        let process = Process::spawn(Launch {
            argv: &self.command,
            env: &self.env,
            cwd: self.cwd.as_ref(),
            display: self.display(),
            secrets: self.secrets(),
        })?;
        tracing::debug!(command = %self.display(), "started an agent command");
        Ok(StdioConversation {
            peer: format!("command {}", self.display()),
            process,
            busy: false,
            broken: None,
            max_body_bytes: self.max_body_bytes,
            timeout: self.timeout.or(default),
            idle,
        })
    }
}

/// Agents that are commands, by name.
#[derive(Debug, Clone)]
pub struct StdioConnector {
    agents: BTreeMap<String, StdioCommand>,
    timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
}

impl Default for StdioConnector {
    fn default() -> Self {
        StdioConnector {
            agents: BTreeMap::new(),
            timeout: Some(crate::DEFAULT_TIMEOUT),
            idle_timeout: None,
        }
    }
}

impl StdioConnector {
    /// No agents.
    pub fn new() -> StdioConnector {
        StdioConnector::default()
    }

    /// The limit on an exchange whose request and command set none, and the idle limit.
    pub(crate) fn limits(&self) -> (Option<Duration>, Option<Duration>) {
        (self.timeout, self.idle_timeout)
    }

    /// The connector with `timeout` as the limit on an exchange whose request and
    /// command set none ([`crate::DEFAULT_TIMEOUT`] unless changed; `None` waits as long
    /// as it takes), and `idle` as the longest wait for a line of an answer (none unless
    /// set).
    pub fn with_timeouts(
        mut self,
        timeout: Option<Duration>,
        idle: Option<Duration>,
    ) -> StdioConnector {
        self.timeout = timeout;
        self.idle_timeout = idle;
        self
    }

    /// Every agent of `config` that has a `command`, run in `dir` (the folder of
    /// `assay.toml`, so that relative paths in the command mean the same from anywhere),
    /// with its `env` and its `timeout_in_seconds`; every provider's `api_key_env` is
    /// one of its [`StdioCommand::secret_variables`].
    pub fn from_config(config: &Config, dir: Option<&Path>) -> StdioConnector {
        let mut connector = StdioConnector::new();
        let key_variables: Vec<String> = config
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .collect();
        for (name, agent) in &config.agents {
            if let Some(words) = &agent.command {
                let mut command = StdioCommand::new(words.iter().cloned());
                command.env = agent.env.clone();
                command.secret_variables = key_variables.clone();
                command.cwd = dir.map(Path::to_path_buf);
                command.timeout = agent
                    .timeout_in_seconds
                    .and_then(|s| Duration::try_from_secs_f64(s).ok());
                connector.insert(name.clone(), command);
            }
        }
        connector
    }

    /// The connector with `command` added as `name`.
    pub fn with(mut self, name: impl Into<String>, command: StdioCommand) -> StdioConnector {
        self.insert(name, command);
        self
    }

    /// Adds `command` as `name`, replacing any command of that name.
    pub fn insert(&mut self, name: impl Into<String>, command: StdioCommand) {
        self.agents.insert(name.into(), command);
    }

    /// The command of the agent `name`.
    pub fn get(&self, name: &str) -> Option<&StdioCommand> {
        self.agents.get(name)
    }
}

impl Connector for StdioConnector {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        Box::pin(async move {
            let command = self
                .agents
                .get(agent)
                .ok_or_else(|| ConnectError::UnknownAgent {
                    agent: agent.to_owned(),
                    server: "assay.toml's agent commands".to_owned(),
                })?;
            let conversation = command.start_with(self.timeout, self.idle_timeout)?;
            Ok(Box::new(conversation) as Box<dyn Conversation>)
        })
    }
}

/// One running agent command: one conversation.
///
/// Dropping it kills the command.
#[derive(Debug)]
pub struct StdioConversation {
    peer: String,
    /// The command, in its own process group; ended when the conversation is dropped.
    process: Process,
    /// An exchange began and has not ended (it was dropped if a new one finds this set).
    busy: bool,
    /// Why the conversation cannot go on.
    broken: Option<String>,
    max_body_bytes: u64,
    /// The limit on an exchange whose request sets none.
    timeout: Option<Duration>,
    /// The longest wait for a line.
    idle: Option<Duration>,
}

impl Conversation for StdioConversation {
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let limit = request.timeout.or(self.timeout);
            let result = with_timeout(&peer, limit, self.exchange(request))
                .await
                .map_err(|e| e.redacted(&request.secrets()));
            if result.is_err() && self.broken.is_none() {
                // The command is somewhere in the middle of an answer: nothing after
                // this can be trusted to line up.
                self.broken = Some("an earlier request failed".to_owned());
                self.end();
            }
            result
        })
    }
}

impl StdioConversation {
    /// Ends the command and everything it started ([`Process::end`]).
    fn end(&mut self) {
        self.process.end();
    }

    async fn exchange(&mut self, request: &AgentRequest) -> Result<AgentResponse, ConnectError> {
        if self.busy {
            self.broken = Some("an earlier request was abandoned mid-answer".to_owned());
            self.end();
        }
        if let Some(why) = &self.broken {
            return Err(ConnectError::protocol(
                &self.peer,
                format!("the conversation cannot go on: {why}"),
            ));
        }
        self.busy = true;
        let mut line = chat_request(request);
        let metadata = request
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        line["metadata"] = Value::Object(metadata);
        line["use_direct"] = Value::Bool(request.use_direct);
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        let start = Instant::now();
        if let Err(e) = self.write(&bytes).await {
            let reason = self
                .with_stderr(format!("cannot write the request: {e}"), true)
                .await;
            return Err(ConnectError::Io {
                peer: self.peer.clone(),
                reason,
            });
        }

        let mut collector = Collector::default();
        let mut budget = self.max_body_bytes;
        let mut first_byte = None;
        let mut number = 0;
        let mut buf = Vec::new();
        while !collector.saw_final() {
            buf.clear();
            let next = self.process.read_line(&mut buf, &mut budget);
            let read = match self.idle {
                None => next.await,
                Some(limit) => {
                    tokio::time::timeout(limit, next)
                        .await
                        .map_err(|_| ConnectError::Idle {
                            peer: self.peer.clone(),
                            limit,
                        })?
                }
            };
            let read = match read {
                Ok(read) => read,
                Err(e) => {
                    let reason = self
                        .with_stderr(format!("cannot read its answer: {e}"), true)
                        .await;
                    return Err(ConnectError::Io {
                        peer: self.peer.clone(),
                        reason,
                    });
                }
            };
            if first_byte.is_none() && !buf.is_empty() {
                first_byte = Some(start.elapsed());
            }
            if matches!(read, Read::TooLarge) {
                return Err(ConnectError::TooLarge {
                    peer: self.peer.clone(),
                    limit: self.max_body_bytes,
                });
            }
            number += 1;
            let values = match values_of_line(&buf) {
                Ok(values) => values,
                Err(e) => {
                    let message = format!(
                        "line {number} of its answer is not JSON ({e}): {}",
                        cut(String::from_utf8_lossy(&buf).trim(), 200)
                    );
                    return Err(self.protocol(message, false).await);
                }
            };
            for value in values {
                if let Err(e) = collector.accept_line(value) {
                    return Err(self.protocol(e.0, false).await);
                }
            }
            if matches!(read, Read::End) && !collector.saw_final() {
                let message = if number == 1 && buf.is_empty() {
                    "it closed its output without answering".to_owned()
                } else {
                    "it closed its output before the final AGENT_FRAMEWORK message".to_owned()
                };
                return Err(self.protocol(message, true).await);
            }
        }
        self.busy = false;
        Ok(collector.finish(Timings {
            first_byte,
            total: start.elapsed(),
        }))
    }

    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.process.write(bytes).await
    }

    /// A protocol error with how the command ended and its stderr.
    async fn protocol(&mut self, message: String, ended: bool) -> ConnectError {
        let message = self.with_stderr(message, ended).await;
        ConnectError::protocol(&self.peer, message)
    }

    /// `message`, then the command's exit status if it has ended (waiting a little for
    /// it when it has `ended` its output), then the end of its stderr.
    async fn with_stderr(&mut self, message: String, ended: bool) -> String {
        self.process.with_stderr(message, ended).await
    }
}
