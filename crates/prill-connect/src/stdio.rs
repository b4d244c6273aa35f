//! [`StdioConnector`]: agents that are commands speaking JSON lines over stdin and
//! stdout (the `direct` connection for an agent with a `command` in `prill.toml`).
//!
//! The protocol is written down for agent authors in `docs/direct-agents.md`. In short:
//! the command is started once per conversation; each request is one line on its stdin
//! (the same `ChatRequest` JSON as the http body, plus a `metadata` object); it answers
//! with `ChatResponse` lines (`{"response": {...}}`) on stdout, and the answer ends with
//! the first line holding an `AGENT_FRAMEWORK` message. Its stderr is kept (the last
//! [`STDERR_KEPT`](crate::STDERR_KEPT) bytes) and shown in errors, with the values of
//! the variables that
//! hold keys ([`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES),
//! [`StdioCommand::secret_variables`]) and of the
//! request's metadata blanked out: an agent that prints its environment leaks nothing.
//!
//! Nothing waits forever: an exchange whose request sets no timeout gets the command's
//! own ([`StdioCommand::timeout`], `timeout_in_seconds` of its `prill.toml` table), else
//! the connector's default ([`crate::DEFAULT_TIMEOUT`]); an optional idle limit ends an
//! exchange during which the command wrote no line for that long.
//!
//! With the run's cassettes ([`StdioConnector::with_cassettes`]), each exchange is
//! recorded, or answered from a recording without starting the command at all
//! ([`crate::stdio_cassette`] says how it is keyed).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_spec::model::config::Config;
use prill_spec::redact::Redactor;
use serde_json::Value;

use crate::cassette::{Cassettes, Chunk};
use crate::decode::{DEFAULT_MAX_BODY_BYTES, values_of_line};
use crate::error::{ConnectError, cut};
use crate::neuro_san_pool::{Lease, WorkerPool};
use crate::process::{Launch, Process, Read, secrets_of};
use crate::stdio_cassette::{RunCassettes, STDIO_CONNECTOR, Tape};
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
    /// Variables besides [`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES) whose values are keys (a provider's
    /// `api_key_env`): their values, from `env` or Prill's own environment (which the
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
    /// [`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES) and of `secret_variables`,
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
        self.start_with(Some(crate::DEFAULT_TIMEOUT), None, None)
    }

    /// Starts the command with `default` as the limit on an exchange whose request and
    /// command set none, and `idle` as the longest wait for a line; with a `tape`, its
    /// exchanges are recorded or replayed, and the command is started only when one is
    /// not answered from the cassettes.
    pub(crate) fn start_with(
        &self,
        default: Option<Duration>,
        idle: Option<Duration>,
        tape: Option<Tape>,
    ) -> Result<StdioConversation, ConnectError> {
        let process = match &tape {
            Some(tape) if !tape.starts_at_once() => None,
            _ => Some(self.spawn()?),
        };
        Ok(self.conversation(process, default, idle, tape))
    }

    /// A conversation whose process comes later: started, or leased from warm workers
    /// ([`StdioConversation::leasing`]), at its first live request.
    pub(crate) fn start_later(
        &self,
        default: Option<Duration>,
        idle: Option<Duration>,
        tape: Option<Tape>,
    ) -> StdioConversation {
        self.conversation(None, default, idle, tape)
    }

    fn conversation(
        &self,
        process: Option<Process>,
        default: Option<Duration>,
        idle: Option<Duration>,
        tape: Option<Tape>,
    ) -> StdioConversation {
        StdioConversation {
            peer: format!("command {}", self.display()),
            command: self.clone(),
            process,
            busy: false,
            broken: None,
            max_body_bytes: self.max_body_bytes,
            timeout: self.timeout.or(default),
            idle,
            tape,
            heard: Vec::new(),
            replayed: 0,
            pool: None,
            lease: None,
        }
    }

    pub(crate) fn spawn(&self) -> Result<Process, ConnectError> {
        let process = Process::spawn(Launch {
            argv: &self.command,
            env: &self.env,
            cwd: self.cwd.as_ref(),
            display: self.display(),
            secrets: self.secrets(),
        })?;
        Ok(process)
    }
}

/// Agents that are commands, by name.
#[derive(Debug, Clone)]
pub struct StdioConnector {
    agents: BTreeMap<String, StdioCommand>,
    timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    cassettes: RunCassettes,
}

impl Default for StdioConnector {
    fn default() -> Self {
        StdioConnector {
            agents: BTreeMap::new(),
            timeout: Some(crate::DEFAULT_TIMEOUT),
            idle_timeout: None,
            cassettes: RunCassettes::default(),
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

    /// The connector with the run's cassettes (`None`: none): every exchange is
    /// recorded as [`STDIO_CONNECTOR`] under the agent's name, or answered from a
    /// recording without starting the command, as their mode says.
    pub fn with_cassettes(mut self, cassettes: Option<Cassettes>) -> StdioConnector {
        self.cassettes = RunCassettes(cassettes);
        self
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
    /// `prill.toml`, so that relative paths in the command mean the same from anywhere),
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

    /// Tells every command to send its OpenTelemetry spans to `url` (an OTLP/HTTP
    /// traces url), as OpenTelemetry's SDKs read it: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// and `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf` in its environment, unless
    /// its own `env` says where its spans go (either variable, or the general
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn with_spans_to(mut self, url: Option<&str>) -> StdioConnector {
        let Some(url) = url else {
            return self;
        };
        const SET_BY_AGENT: [&str; 3] = [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        ];
        for command in self.agents.values_mut() {
            if SET_BY_AGENT.iter().any(|k| command.env.contains_key(*k)) {
                continue;
            }
            command
                .env
                .insert(SET_BY_AGENT[0].to_owned(), url.to_owned());
            command
                .env
                .insert(SET_BY_AGENT[2].to_owned(), "http/protobuf".to_owned());
        }
        self
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
                    server: "prill.toml's agent commands".to_owned(),
                })?;
            let tape = self.cassettes.tape(STDIO_CONNECTOR, agent);
            let conversation = command.start_with(self.timeout, self.idle_timeout, tape)?;
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
    /// The command, to start when an exchange goes live.
    command: StdioCommand,
    /// The command, in its own process group, once started; ended when the
    /// conversation is dropped.
    process: Option<Process>,
    /// An exchange began and has not ended (it was dropped if a new one finds this set).
    busy: bool,
    /// Why the conversation cannot go on.
    broken: Option<String>,
    max_body_bytes: u64,
    /// The limit on an exchange whose request sets none.
    timeout: Option<Duration>,
    /// The longest wait for a line.
    idle: Option<Duration>,
    /// The run's cassettes, and how this conversation's exchanges are keyed.
    tape: Option<Tape>,
    /// The lines of the current live exchange, with their times, for its recording.
    heard: Vec<Chunk>,
    /// How many exchanges were answered from the cassettes.
    replayed: u32,
    /// The warm workers its process is leased from, and the agent it opens them for,
    /// instead of starting `command` ([`crate::neuro_san_pool`]).
    pool: Option<(Arc<WorkerPool>, String)>,
    /// The lease of its worker, given back when the conversation ends.
    lease: Option<Lease>,
}

impl Drop for StdioConversation {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            // Only a conversation that ended cleanly leaves a worker fit for the next.
            let reusable = !self.busy && self.broken.is_none();
            lease.give_back(self.process.take(), reusable);
        }
    }
}

impl Conversation for StdioConversation {
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let limit = request.timeout.or(self.timeout);
            let line = request_line(request);
            let taped = self.tape.as_ref().map(|t| (t.clone(), t.key(&line)));
            if let Some((tape, key)) = &taped
                && let Some(exchange) = tape.cassettes.replay(key)?
            {
                self.replayed += 1;
                let replay = replay(tape, &exchange, &peer);
                return with_timeout(&peer, limit, replay).await;
            }
            if self.replayed > 0 && self.process.is_none() {
                return Err(ConnectError::NoCassette {
                    message: format!(
                        "no recorded exchange answers turn {} of agent `{}`, and the turns before it were replayed, \
                         so its command cannot be started in the middle of the conversation; record the case again with --re-record",
                        self.replayed + 1,
                        taped.as_ref().map_or("", |(t, _)| t.agent.as_str()),
                    ),
                });
            }
            self.heard.clear();
            // A worker is leased outside the request's time limit: waiting for a free
            // one, or for neuro-san to load, is not the agent's time.
            if let Err(e) = self.lease_worker().await {
                self.broken = Some("its worker could not be opened".to_owned());
                return Err(e);
            }
            let result = with_timeout(&peer, limit, self.exchange(&line))
                .await
                .map_err(|e| e.redacted(&request.secrets()));
            if result.is_err() && self.broken.is_none() {
                // The command is somewhere in the middle of an answer: nothing after
                // this can be trusted to line up.
                self.broken = Some("an earlier request failed".to_owned());
                self.end();
            }
            // A command that could not start answered nothing: there is nothing to keep.
            let started = !matches!(&result, Err(ConnectError::Spawn { .. }));
            if let Some((tape, key)) = taped
                && tape.cassettes.records()
                && started
            {
                let heard = std::mem::take(&mut self.heard);
                tape.record(key, heard, result.as_ref().err())?;
            }
            result
        })
    }
}

impl StdioConversation {
    /// The conversation with its process leased from `pool`'s warm workers and opened
    /// for `agent`, instead of starting its command.
    pub(crate) fn leasing(mut self, pool: Arc<WorkerPool>, agent: &str) -> StdioConversation {
        self.pool = Some((pool, agent.to_owned()));
        self
    }

    /// Leases a worker when the conversation has a pool and no process yet.
    async fn lease_worker(&mut self) -> Result<(), ConnectError> {
        if self.process.is_some() || self.broken.is_some() {
            return Ok(());
        }
        let Some((pool, agent)) = &self.pool else {
            return Ok(());
        };
        let (process, lease) = pool.lease(agent).await?;
        self.process = Some(process);
        self.lease = Some(lease);
        Ok(())
    }

    /// Ends the command and everything it started ([`Process::end`]).
    fn end(&mut self) {
        if let Some(process) = &mut self.process {
            process.end();
        }
    }

    async fn exchange(&mut self, line: &Value) -> Result<AgentResponse, ConnectError> {
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
        if self.process.is_none() {
            self.process = Some(self.command.spawn()?);
        }
        self.busy = true;
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

        // The lines are kept only for a recording: an answer is otherwise held once.
        let recording = self.tape.as_ref().is_some_and(|t| t.cassettes.records());
        let mut collector = Collector::default();
        let mut budget = self.max_body_bytes;
        let mut first_byte = None;
        let mut number = 0;
        let mut buf = Vec::new();
        while !collector.saw_final() {
            buf.clear();
            let read = self.read_line(&mut buf, &mut budget).await?;
            if first_byte.is_none() && !buf.is_empty() {
                first_byte = Some(start.elapsed());
            }
            if recording && !buf.is_empty() && !matches!(read, Read::TooLarge) {
                let at_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.heard.push(Chunk::new(at_ms, buf.clone()));
            }
            if matches!(read, Read::TooLarge) {
                return Err(ConnectError::TooLarge {
                    peer: self.peer.clone(),
                    limit: self.max_body_bytes,
                });
            }
            number += 1;
            if let Err(message) = take_line(&mut collector, &buf, number) {
                return Err(self.protocol(message, false).await);
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

    /// Reads the next line of the answer into `buf`, within the idle limit.
    async fn read_line(
        &mut self,
        buf: &mut Vec<u8>,
        budget: &mut u64,
    ) -> Result<Read, ConnectError> {
        let Some(process) = self.process.as_mut() else {
            return Err(ConnectError::protocol(
                &self.peer,
                "the command is not running",
            ));
        };
        let next = process.read_line(buf, budget);
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
        match read {
            Ok(read) => Ok(read),
            Err(e) => {
                let reason = self
                    .with_stderr(format!("cannot read its answer: {e}"), true)
                    .await;
                Err(ConnectError::Io {
                    peer: self.peer.clone(),
                    reason,
                })
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.process {
            Some(process) => process.write(bytes).await,
            None => Err(std::io::Error::other("the command is not running")),
        }
    }

    /// A protocol error with how the command ended and its stderr.
    async fn protocol(&mut self, message: String, ended: bool) -> ConnectError {
        let message = self.with_stderr(message, ended).await;
        ConnectError::protocol(&self.peer, message)
    }

    /// `message`, then the command's exit status if it has ended (waiting a little for
    /// it when it has `ended` its output), then the end of its stderr.
    async fn with_stderr(&mut self, message: String, ended: bool) -> String {
        match &mut self.process {
            Some(process) => process.with_stderr(message, ended).await,
            None => message,
        }
    }
}

/// The line sent for `request`: its `ChatRequest`, its `metadata` and `use_direct`.
fn request_line(request: &AgentRequest) -> Value {
    let mut line = chat_request(request);
    let metadata = request
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    line["metadata"] = Value::Object(metadata);
    line["use_direct"] = Value::Bool(request.use_direct);
    line
}

/// Takes line `number` of an answer (live or replayed) into `collector`; the error is
/// the protocol message.
fn take_line(collector: &mut Collector, buf: &[u8], number: usize) -> Result<(), String> {
    let values = values_of_line(buf).map_err(|e| {
        format!(
            "line {number} of its answer is not JSON ({e}): {}",
            cut(String::from_utf8_lossy(buf).trim(), 200)
        )
    })?;
    for value in values {
        collector.accept_line(value).map_err(|e| e.0)?;
    }
    Ok(())
}

/// The answer recorded in `exchange`, read as a live one is: each line through the
/// same decoder, at its recorded time; a recording that broke off errs as it did.
async fn replay(
    tape: &Tape,
    exchange: &crate::cassette::Exchange,
    peer: &str,
) -> Result<AgentResponse, ConnectError> {
    let start = Instant::now();
    let mut collector = Collector::default();
    let mut first_byte = None;
    let mut number = 0;
    tape.lines(exchange, start, peer, |buf| {
        if first_byte.is_none() && !buf.is_empty() {
            first_byte = Some(start.elapsed());
        }
        number += 1;
        take_line(&mut collector, buf, number).map_err(|m| ConnectError::protocol(peer, m))
    })
    .await?;
    if !collector.saw_final() {
        return Err(ConnectError::protocol(
            peer,
            "its recorded answer ends before the final AGENT_FRAMEWORK message; record it again with --re-record",
        ));
    }
    Ok(collector.finish(Timings {
        first_byte,
        total: start.elapsed(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_told_where_spans_go_unless_their_env_says() {
        let mut own = StdioCommand::new(["agent"]);
        own.env.insert(
            "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
            "http://collector:4318".into(),
        );
        let connector = StdioConnector::new()
            .with("plain", StdioCommand::new(["agent"]))
            .with("own", own)
            .with_spans_to(Some("http://127.0.0.1:9/v1/traces"));
        let plain = &connector.get("plain").unwrap().env;
        assert_eq!(
            plain["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"],
            "http://127.0.0.1:9/v1/traces"
        );
        assert_eq!(plain["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"], "http/protobuf");
        let own = &connector.get("own").unwrap().env;
        assert_eq!(own.len(), 1, "{own:?}");
        let untouched = StdioConnector::new()
            .with("plain", StdioCommand::new(["agent"]))
            .with_spans_to(None);
        assert!(untouched.get("plain").unwrap().env.is_empty());
    }
}
