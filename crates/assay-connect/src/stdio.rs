//! [`StdioConnector`]: agents that are commands speaking JSON lines over stdin and
//! stdout (the `direct` connection for an agent with a `command` in `assay.toml`).
//!
//! The protocol is written down for agent authors in `docs/direct-agents.md`. In short:
//! the command is started once per conversation; each request is one line on its stdin
//! (the same `ChatRequest` JSON as the http body, plus a `metadata` object); it answers
//! with `ChatResponse` lines (`{"response": {...}}`) on stdout, and the answer ends with
//! the first line holding an `AGENT_FRAMEWORK` message. Its stderr is kept (the last
//! [`STDERR_KEPT`] bytes) and shown in errors, with the values of the variables that
//! hold keys ([`KEY_VARIABLES`], [`StdioCommand::secret_variables`]) and of the
//! request's metadata blanked out: an agent that prints its environment leaks nothing.
//!
//! Nothing waits forever: an exchange whose request sets no timeout gets the command's
//! own ([`StdioCommand::timeout`], `timeout_in_seconds` of its `assay.toml` table), else
//! the connector's default ([`crate::DEFAULT_TIMEOUT`]); an optional idle limit ends an
//! exchange during which the command wrote no line for that long.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assay_spec::model::config::Config;
use assay_spec::redact::{KEY_VARIABLES, Redactor};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use crate::decode::{DEFAULT_MAX_BODY_BYTES, values_of_line};
use crate::error::{ConnectError, cut};
use crate::types::{AgentRequest, AgentResponse, Timings};
use crate::wire::{Collector, chat_request};
use crate::{BoxFuture, Connector, Conversation, with_timeout};

/// How much of a command's stderr is kept for error messages.
pub const STDERR_KEPT: usize = 8 * 1024;

/// How long to wait, after a command closed its stdout, for it to exit and for the rest
/// of its stderr, before reporting without them.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long an ended command's process group has between `SIGTERM` and `SIGKILL`.
pub const GROUP_GRACE: Duration = Duration::from_secs(2);

/// The process groups sent `SIGTERM` whose `SIGKILL` is still to come.
#[cfg(unix)]
fn pending_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    static PENDING: Mutex<Vec<i32>> = Mutex::new(Vec::new());
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends `SIGKILL` now to every process group that was sent `SIGTERM` and is still
/// within its [`GROUP_GRACE`]: a program calls this before it exits, so that an agent
/// that ignores `SIGTERM` does not outlive it (the delayed kill dies with the program).
pub fn end_pending_groups() {
    #[cfg(unix)]
    for raw in std::mem::take(&mut *pending_groups()) {
        if let Some(pid) = rustix::process::Pid::from_raw(raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

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
    /// Variables besides [`KEY_VARIABLES`] whose values are keys (a provider's
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
    /// [`KEY_VARIABLES`] and of `secret_variables`, as the command sees them.
    fn secrets(&self) -> Redactor {
        let mut secrets = Redactor::default();
        let names = KEY_VARIABLES
            .iter()
            .copied()
            .chain(self.secret_variables.iter().map(String::as_str));
        secrets.secret_variables(names, |name| {
            self.env
                .get(name)
                .cloned()
                .or_else(|| std::env::var(name).ok())
        });
        secrets
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
        let spawn_error = |reason: String| ConnectError::Spawn {
            command: self.display(),
            reason,
        };
        let Some((program, args)) = self.command.split_first() else {
            return Err(spawn_error("the command is empty".to_owned()));
        };
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .envs(&self.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Elsewhere the command alone is killed when its conversation ends; on unix its
            // whole process group is ended (`StdioConversation::end`).
            .kill_on_drop(cfg!(not(unix)));
        // Its own process group, so that what it starts (a wrapper's real agent: `sh -c`,
        // `npm run`, `uv run`) ends with it.
        #[cfg(unix)]
        command.process_group(0);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        let mut child = command
            .spawn()
            .map_err(|e| spawn_error(crate::http::root_cause(&e)))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error(
                "its standard streams are not available".to_owned(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_task = tokio::spawn(keep_tail(stderr, tail.clone()));
        tracing::debug!(command = %self.display(), "started an agent command");
        Ok(StdioConversation {
            peer: format!("command {}", self.display()),
            group: child.id(),
            child,
            stdin,
            stdout: BufReader::new(stdout),
            tail,
            stderr_task: Some(stderr_task),
            secrets: self.secrets(),
            busy: false,
            broken: None,
            max_body_bytes: self.max_body_bytes,
            timeout: self.timeout.or(default),
            idle,
        })
    }
}

/// Reads a stream to its end, keeping the last [`STDERR_KEPT`] bytes.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tail.extend(&chunk[..n]);
        let excess = tail.len().saturating_sub(STDERR_KEPT);
        tail.drain(..excess);
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
    /// The process group the command leads (its pid), while it may still run.
    group: Option<u32>,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    tail: Arc<Mutex<VecDeque<u8>>>,
    stderr_task: Option<JoinHandle<()>>,
    /// The keys the command may print (its environment's), blanked out of messages.
    secrets: Redactor,
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

/// How reading one line ended.
enum Read {
    /// A line ending in `\n`.
    Line,
    /// The end of the stream (the buffer may hold a last unterminated line).
    End,
    /// More than the budget.
    TooLarge,
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

impl Drop for StdioConversation {
    fn drop(&mut self) {
        self.end();
    }
}

impl StdioConversation {
    /// Ends the command and everything it started: `SIGTERM` to its process group,
    /// then `SIGKILL` after [`GROUP_GRACE`] to whatever is left of it (elsewhere than
    /// unix: the command alone is killed).
    fn end(&mut self) {
        #[cfg(not(unix))]
        let _ = self.child.start_kill();
        #[cfg(unix)]
        if let Some(pid) = self
            .group
            .take()
            .and_then(|id| rustix::process::Pid::from_raw(i32::try_from(id).ok()?))
        {
            use rustix::process::{Signal, kill_process_group};
            // An error means the group is gone already: nothing is left to end.
            if kill_process_group(pid, Signal::TERM).is_err() {
                return;
            }
            pending_groups().push(pid.as_raw_nonzero().get());
            let kill = move || {
                let raw = pid.as_raw_nonzero().get();
                let mut pending = pending_groups();
                if let Some(at) = pending.iter().position(|p| *p == raw) {
                    pending.swap_remove(at);
                    let _ = kill_process_group(pid, Signal::KILL);
                }
            };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        tokio::time::sleep(GROUP_GRACE).await;
                        kill();
                    });
                }
                Err(_) => {
                    std::thread::spawn(move || {
                        std::thread::sleep(GROUP_GRACE);
                        kill();
                    });
                }
            }
        }
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
            let next = read_line(&mut self.stdout, &mut buf, &mut budget);
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
        self.stdin.write_all(bytes).await?;
        self.stdin.flush().await
    }

    /// A protocol error with how the command ended and its stderr.
    async fn protocol(&mut self, message: String, ended: bool) -> ConnectError {
        let message = self.with_stderr(message, ended).await;
        ConnectError::protocol(&self.peer, message)
    }

    /// `message`, then the command's exit status if it has ended (waiting a little for
    /// it when it has `ended` its output), then the end of its stderr.
    async fn with_stderr(&mut self, message: String, ended: bool) -> String {
        let status = if ended {
            tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        } else {
            self.child.try_wait().ok().flatten()
        };
        let mut text = message;
        if let Some(status) = status {
            text.push_str(&format!(" (it exited with {status})"));
            // It has ended, so its stderr ends too: wait for the rest of it.
            if let Some(task) = self.stderr_task.take() {
                let _ = tokio::time::timeout(EXIT_GRACE, task).await;
            }
        }
        let tail = {
            let tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
            let bytes: Vec<u8> = tail.iter().copied().collect();
            self.secrets
                .string(String::from_utf8_lossy(&bytes).trim().to_owned())
        };
        if tail.is_empty() {
            text.push_str("; it wrote nothing to stderr");
        } else {
            text.push_str(&format!("; its stderr ends with:\n{tail}"));
        }
        text
    }
}

/// Reads up to and including the next `\n` into `buf`, spending at most `budget` bytes.
async fn read_line(
    reader: &mut BufReader<ChildStdout>,
    buf: &mut Vec<u8>,
    budget: &mut u64,
) -> std::io::Result<Read> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Read::End);
        }
        let (take, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if take as u64 > *budget {
            return Ok(Read::TooLarge);
        }
        *budget -= take as u64;
        buf.extend_from_slice(&available[..take]);
        reader.consume(take);
        if ended {
            return Ok(Read::Line);
        }
    }
}
