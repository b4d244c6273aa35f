//! [`CommandTools`]: programs that answer a tool loop's calls (the `tool_command` of a
//! spec's `framework_config`), one JSON line in and one JSON line out per call.
//!
//! The protocol is written down for tool authors in `docs/tools.md`. In short: the
//! program is started once per sample, in the spec file's folder, with Prill's
//! environment (plus [`CommandTools::env`]); for each call Prill writes one line
//! `{"type": "call", "tool": ..., "arguments": {...}, "id": ..., "turn": n}` to its stdin
//! and reads one line back from its stdout: `{"result": <any JSON>}`, or
//! `{"error": "message"}` for a tool that failed (the model is told, and the loop goes
//! on). Blank lines are skipped; anything else (a line that is not JSON, an object with
//! neither key or both, a line over the cap, a line already waiting before a call is
//! sent, the program closing its output or exiting, no answer within the time limit) is
//! an error of the sample, whose message names the program and the tool and quotes
//! the end of its stderr, keys blanked out. After such an error the session cannot go
//! on.
//!
//! The process rules are the direct agents' (the same code runs both): a process group
//! of its own, `SIGTERM` then `SIGKILL` after [`crate::GROUP_GRACE`] when the session
//! ends or breaks, the last [`crate::STDERR_KEPT`] bytes of stderr kept.

use std::collections::BTreeMap;
use std::time::Duration;

use prill_spec::redact::Redactor;
use prill_target::tools::{
    ToolAnswer, ToolCallRequest, ToolLauncher, ToolProgram, ToolProtocol, ToolSession,
};
use serde_json::{Map, Value, json};

use crate::decode::values_of_line;
use crate::error::{ConnectError, cut};
use crate::process::{Launch, Process, Read, secrets_of};
use crate::stdio_cassette::RunCassettes;
use crate::{BoxFuture, with_timeout};

mod mcp;

/// The default cap on one answer of a tool program: 1 MiB.
pub const DEFAULT_MAX_LINE_BYTES: u64 = 1024 * 1024;

/// Starts `tool_command` programs.
///
/// `Debug` shows the names of the secret variables, never their values.
#[derive(Clone, PartialEq, Eq)]
pub struct CommandTools {
    /// Variables added to the environment the programs inherit from Prill (none by
    /// default). `Debug` shows their names only.
    pub env: BTreeMap<String, String>,
    /// Variables besides [`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES) whose
    /// values are keys (every provider's `api_key_env`): blanked out of the stderr tail
    /// that messages quote.
    pub secret_variables: Vec<String>,
    /// The cap on one answer line, in bytes.
    pub max_line_bytes: u64,
    /// The limit on a call the loop gives none.
    pub timeout: Option<Duration>,
    /// The run's cassettes: every call and state request recorded, or answered without
    /// starting the program ([`crate::tools_cassette`]).
    cassettes: RunCassettes,
}

impl Default for CommandTools {
    fn default() -> Self {
        CommandTools::new(
            Vec::new(),
            DEFAULT_MAX_LINE_BYTES,
            Some(crate::DEFAULT_TIMEOUT),
        )
    }
}

impl CommandTools {
    /// A launcher whose programs inherit Prill's environment, whose stderr hides `secret_variables` (with
    /// [`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES)), whose answers are capped
    /// at `max_line_bytes`, and whose calls wait at most `timeout` when the loop sets no
    /// limit (`None`: as long as it takes).
    pub fn new(
        secret_variables: Vec<String>,
        max_line_bytes: u64,
        timeout: Option<Duration>,
    ) -> CommandTools {
        CommandTools {
            env: BTreeMap::new(),
            secret_variables,
            max_line_bytes,
            timeout,
            cassettes: RunCassettes::default(),
        }
    }

    /// The launcher with the run's cassettes (`None`: none).
    pub fn with_cassettes(mut self, cassettes: Option<crate::cassette::Cassettes>) -> CommandTools {
        self.cassettes = RunCassettes(cassettes);
        self
    }

    /// Starts `program` for one sample. It must be called within a Tokio runtime.
    pub fn start_session(&self, program: &ToolProgram) -> Result<CommandSession, ConnectError> {
        let name = shown(&program.label);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ConnectError::Spawn {
                command: name,
                reason: "it was asked for outside an async runtime".to_owned(),
            });
        }
        let secrets = secrets_of(&self.env, &self.secret_variables);
        let process = Process::spawn(Launch {
            argv: &program.argv,
            env: &self.env,
            cwd: program.cwd.as_ref(),
            display: name.clone(),
            secrets: secrets.clone(),
        })?;
        Ok(CommandSession {
            peer: match program.protocol {
                ToolProtocol::Mcp => format!("MCP tool server {name}"),
                _ => format!("tool program {name}"),
            },
            process,
            secrets,
            busy: false,
            broken: None,
            max_line_bytes: self.max_line_bytes,
            timeout: self.timeout,
            mcp: (program.protocol == ToolProtocol::Mcp).then(mcp::McpState::default),
        })
    }
}

impl std::fmt::Debug for CommandTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandTools")
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("secret_variables", &self.secret_variables)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ToolLauncher for CommandTools {
    fn start(&self, program: &ToolProgram) -> Result<Box<dyn ToolSession>, ConnectError> {
        let tape = self.cassettes.tape(
            crate::tools_cassette::TOOL_CONNECTOR,
            crate::tools_cassette::TOOL_ENDPOINT,
        );
        match tape {
            Some(tape) => Ok(Box::new(crate::tools_cassette::TapedTools::start(
                self, program, tape,
            )?)),
            None => Ok(Box::new(self.start_session(program)?)),
        }
    }
}

/// A label in backticks, unless it has them.
fn shown(label: &str) -> String {
    if label.starts_with('`') {
        label.to_owned()
    } else {
        format!("`{label}`")
    }
}

/// One running tool program: the tools of one sample.
///
/// Dropping it ends the program and everything it started.
#[derive(Debug)]
pub struct CommandSession {
    /// `tool program `...``, as messages name it.
    peer: String,
    process: Process,
    /// What messages must not show: the keys the program may print.
    secrets: Redactor,
    /// A call began and has not ended (it was dropped if the next one finds this set).
    busy: bool,
    /// Why the session cannot go on.
    broken: Option<String>,
    max_line_bytes: u64,
    /// The limit on a call the loop gives none.
    timeout: Option<Duration>,
    /// For an MCP server (`tool_mcp`): where its session is.
    mcp: Option<mcp::McpState>,
}

impl ToolSession for CommandSession {
    fn call<'a>(
        &'a mut self,
        call: &'a ToolCallRequest,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<ToolAnswer, ConnectError>> {
        Box::pin(async move {
            let object = self.ask_call(call, limit).await?;
            Self::call_answer(call, object).map_err(|m| ConnectError::protocol(&self.peer, m))
        })
    }

    fn state(&mut self, limit: Option<Duration>) -> BoxFuture<'_, Result<Value, ConnectError>> {
        Box::pin(async move {
            let object = self.ask_state(limit).await?;
            Self::state_answer(object).map_err(|m| ConnectError::protocol(&self.peer, m))
        })
    }
}

/// How messages name a call: `` the call of `search` (turn 2) ``.
fn about(call: &ToolCallRequest) -> String {
    format!("the call of `{}` (turn {})", call.name, call.turn)
}

/// What Prill asks a program: to answer a call, or to give its state.
#[derive(Clone, Copy)]
enum Ask<'a> {
    /// A tool call.
    Call(&'a ToolCallRequest),
    /// The state, when the sample is over.
    State,
}

impl Ask<'_> {
    /// How messages name it: `` the call of `search` (turn 2) ``, `the state request`.
    fn about(self) -> String {
        match self {
            Ask::Call(call) => about(call),
            Ask::State => "the state request".to_owned(),
        }
    }
}

impl CommandSession {
    /// Asks the program, within `limit` (else the launcher's), for the answer's
    /// object. Any failure ends the program: nothing after it would line up.
    async fn ask(
        &mut self,
        ask: Ask<'_>,
        limit: Option<Duration>,
    ) -> Result<Map<String, Value>, ConnectError> {
        let limit = limit.or(self.timeout);
        let peer = self.peer.clone();
        let result = with_timeout(&peer, limit, self.exchange(ask)).await;
        let result = match result {
            Err(ConnectError::Timeout { limit, .. }) => Err(self.timed_out(ask, limit)),
            other => other,
        };
        if result.is_err() {
            if self.broken.is_none() {
                // The program is somewhere in the middle of an answer, or gone:
                // nothing after this can be trusted to line up.
                self.broken = Some(format!("its answer to {} failed", ask.about()));
            }
            self.process.end();
        }
        result.map_err(|e| e.redacted(&self.secrets))
    }

    /// The answer's object to `call`, checked to be a call's answer (an object of the
    /// wrong shape is a protocol error, and the session cannot go on).
    pub(crate) async fn ask_call(
        &mut self,
        call: &ToolCallRequest,
        limit: Option<Duration>,
    ) -> Result<Map<String, Value>, ConnectError> {
        let object = self.ask(Ask::Call(call), limit).await?;
        match Self::call_answer(call, object.clone()) {
            Ok(_) => Ok(object),
            Err(message) => Err(self.fail(Ask::Call(call), message).await),
        }
    }

    /// The answer's object to the state request, checked to hold the state (an `error`
    /// or another shape is a protocol error, and the session cannot go on).
    pub(crate) async fn ask_state(
        &mut self,
        limit: Option<Duration>,
    ) -> Result<Map<String, Value>, ConnectError> {
        let object = self.ask(Ask::State, limit).await?;
        match Self::state_answer(object.clone()) {
            Ok(_) => Ok(object),
            Err(message) => Err(self.fail(Ask::State, message).await),
        }
    }

    /// The state an answer's object holds, or what is wrong with it.
    pub(crate) fn state_answer(mut object: Map<String, Value>) -> Result<Value, String> {
        match (object.remove("state"), object.remove("error")) {
            (Some(state), None) => Ok(state),
            (None, Some(error)) => Err(format!(
                "it answered the state request with an error: {}; `expect_state` needs a program that answers `{{\"type\":\"state\"}}` with `{{\"state\": ...}}` (docs/tools.md)",
                cut(error.as_str().unwrap_or(&error.to_string()), 200)
            )),
            _ => Err("its answer to the state request has no `state` (and is not an `error`): answer `{\"type\":\"state\"}` with `{\"state\": ...}`".to_owned()),
        }
    }

    /// An answer that breaks the protocol: the error, with the end of its stderr; the
    /// session cannot go on.
    async fn fail(&mut self, ask: Ask<'_>, message: String) -> ConnectError {
        let error = self.protocol(message, false).await;
        self.broken = Some(format!("its answer to {} failed", ask.about()));
        self.process.end();
        error.redacted(&self.secrets)
    }

    /// The line Prill writes for `ask`.
    fn request_line(ask: Ask<'_>) -> Vec<u8> {
        let line = match ask {
            Ask::Call(call) => json!({
                "type": "call",
                "tool": call.name,
                "arguments": call.arguments,
                "id": call.call_id,
                "turn": call.turn,
            }),
            Ask::State => json!({"type": "state"}),
        };
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }

    /// Sends `ask` and reads its answer's object.
    async fn exchange(&mut self, ask: Ask<'_>) -> Result<Map<String, Value>, ConnectError> {
        if self.busy {
            self.broken = Some("an earlier call was abandoned before its answer".to_owned());
            self.process.end();
        }
        if let Some(why) = &self.broken {
            return Err(ConnectError::protocol(
                &self.peer,
                format!(
                    "it cannot answer {}: the session cannot go on, {why}",
                    ask.about()
                ),
            ));
        }
        // An answer comes only after its call: a line already waiting (a second answer
        // to the last call, a banner) would be taken for the next call's answer.
        if let Some(line) = self.process.unread_line() {
            let message = format!(
                "it wrote to stdout before {} was sent, a line that answers nothing: {}; write one line per call, and anything else to stderr",
                ask.about(),
                cut(&line, 200)
            );
            self.busy = true;
            return Err(self.protocol(message, false).await);
        }
        self.busy = true;
        if self.mcp.is_some() {
            let answer = self.mcp_exchange(ask).await;
            self.busy = answer.is_err();
            return answer;
        }
        self.send_line(&Self::request_line(ask), &ask.about())
            .await?;
        let (line, ended) = self.next_line(&ask.about()).await?;
        match Self::object(ask, &line) {
            Ok(answer) => {
                self.busy = false;
                Ok(answer)
            }
            Err(message) => Err(self.protocol(message, ended).await),
        }
    }

    /// Writes `line` (what is sent for `about`).
    async fn send_line(&mut self, line: &[u8], about: &str) -> Result<(), ConnectError> {
        if let Err(e) = self.process.write(line).await {
            let message =
                format!("it stopped reading its input before {about} could be sent ({e})");
            return Err(self.protocol(message, true).await);
        }
        Ok(())
    }

    /// The next line that is not blank, within the cap, as the answer to `about`, and
    /// whether the program ended its output after it.
    async fn next_line(&mut self, about: &str) -> Result<(Vec<u8>, bool), ConnectError> {
        let mut budget = self.max_line_bytes;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = match self.process.read_line(&mut buf, &mut budget).await {
                Ok(read) => read,
                Err(e) => {
                    let message = format!("cannot read its answer to {about}: {e}");
                    return Err(self.protocol(message, true).await);
                }
            };
            if matches!(read, Read::TooLarge) {
                let message = format!(
                    "its answer to {about} is longer than the limit of {}; a tool result that large is no use to a model, so cut it down",
                    crate::error::bytes(self.max_line_bytes)
                );
                return Err(self.protocol(message, false).await);
            }
            let ended = matches!(read, Read::End);
            if buf.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    let message = format!("it closed its output instead of answering {about}");
                    return Err(self.protocol(message, true).await);
                }
                continue;
            }
            return Ok((buf, ended));
        }
    }

    /// The JSON object a line holds, or what is wrong with it.
    fn object(ask: Ask<'_>, line: &[u8]) -> Result<Map<String, Value>, String> {
        let quoted = || cut(String::from_utf8_lossy(line).trim(), 200);
        let mut values = values_of_line(line).map_err(|e| {
            format!(
                "its answer to {} is not JSON ({e}): {}; print only answers to stdout, and anything else to stderr",
                ask.about(),
                quoted()
            )
        })?;
        if values.len() != 1 {
            return Err(format!(
                "its answer to {} holds {} JSON values on one line, not one: {}",
                ask.about(),
                values.len(),
                quoted()
            ));
        }
        match values.pop() {
            Some(Value::Object(object)) => Ok(object),
            _ => Err(format!(
                "its answer to {} is not a JSON object with {}: {}",
                ask.about(),
                match ask {
                    Ask::Call(_) => "`result` or `error`",
                    Ask::State => "`state`",
                },
                quoted()
            )),
        }
    }

    /// The answer to `call` an object holds, or what is wrong with it.
    pub(crate) fn call_answer(
        call: &ToolCallRequest,
        mut object: Map<String, Value>,
    ) -> Result<ToolAnswer, String> {
        let quoted = || cut(&Value::Object(object.clone()).to_string(), 200);
        match (object.get("result").is_some(), object.get("error")) {
            (true, None) => Ok(ToolAnswer::ok(
                object.remove("result").unwrap_or(Value::Null),
            )),
            (false, Some(Value::String(message))) => Ok(ToolAnswer::error(message.clone())),
            (false, Some(other)) => Err(format!(
                "its answer to {} has an `error` that is not a string (the message the model is told): {}",
                about(call),
                cut(&other.to_string(), 200)
            )),
            (true, Some(_)) => Err(format!(
                "its answer to {} has both `result` and `error`; give one: {}",
                about(call),
                quoted()
            )),
            (false, None) => Err(format!(
                "its answer to {} has neither `result` nor `error`: {}",
                about(call),
                quoted()
            )),
        }
    }

    /// A protocol error: `message`, how the program ended (waiting a little for it when
    /// it has `ended` its output) and the end of its stderr.
    async fn protocol(&mut self, message: String, ended: bool) -> ConnectError {
        let message = self.process.with_stderr(message, ended).await;
        ConnectError::protocol(&self.peer, message)
    }

    /// The time limit passed during `call`: a timeout naming the program, the call and
    /// the last line of its stderr so far (the whole tail would not fit in the middle
    /// of the sentence).
    fn timed_out(&self, ask: Ask<'_>, limit: Duration) -> ConnectError {
        let tail = self.process.stderr_tail();
        let stderr = match tail.lines().last() {
            Some(line) => format!("the last line of its stderr: {}", cut(line.trim(), 200)),
            None => "it wrote nothing to stderr".to_owned(),
        };
        let what = match ask {
            Ask::Call(call) => {
                format!("the call of `{}` (turn {}; {stderr})", call.name, call.turn)
            }
            Ask::State => format!("the state request ({stderr})"),
        };
        ConnectError::Timeout {
            peer: format!("{} to {what}", self.peer),
            limit,
        }
    }
}
