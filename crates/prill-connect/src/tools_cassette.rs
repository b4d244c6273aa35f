//! Tool programs on cassettes: each call and state request of a sample's tool program
//! is recorded as an exchange of connector [`TOOL_CONNECTOR`], and a replay answers them
//! without starting the program.
//!
//! An exchange is keyed like a command agent's ([`crate::stdio_cassette`]): the
//! connector, the endpoint [`TOOL_ENDPOINT`] (not the program: where the tools run is
//! not what they answer, so a replay may run with the program moved or not installed),
//! and the request line without the provider's call `id`, which changes from one live
//! run to the next. Calls with the same line in one sample are answered in the order
//! they were recorded, so a `replay` on a fresh program (`expect_state`) replays too.
//!
//! The response is the program's answer line, and an exchange that ended in an error
//! keeps it in `broke_off`, so that a replay errs the same way. As with a command agent,
//! a session whose first calls were replayed cannot start its program for a later call
//! that no recording answers (the program would not have seen the calls before it): it
//! is a `no_cassette` error that says to record again.

use std::time::{Duration, Instant};

use prill_target::tools::{ToolAnswer, ToolCallRequest, ToolProgram, ToolSession};
use serde_json::{Map, Value, json};

use crate::BoxFuture;
use crate::cassette::{Chunk, Exchange, RecordedResponse};
use crate::error::ConnectError;
use crate::stdio_cassette::Tape;
use crate::tools::{CommandSession, CommandTools};

/// The connector of a tool program's exchanges in a cassette.
pub const TOOL_CONNECTOR: &str = "tool";

/// The endpoint of every tool program exchange.
pub const TOOL_ENDPOINT: &str = "tool_command";

/// A tool program's session on cassettes: its exchanges answered from them, else sent
/// to the program (started when the first one goes live) and recorded.
pub(crate) struct TapedTools {
    tape: Tape,
    tools: CommandTools,
    program: ToolProgram,
    live: Option<CommandSession>,
    replayed: u32,
}

impl TapedTools {
    /// The session of `program` on `tape`; the program is started at once only when
    /// nothing can be replayed (recording).
    pub(crate) fn start(
        tools: &CommandTools,
        program: &ToolProgram,
        tape: Tape,
    ) -> Result<TapedTools, ConnectError> {
        let live = if tape.starts_at_once() {
            Some(tools.start_session(program)?)
        } else {
            None
        };
        Ok(TapedTools {
            tape,
            tools: tools.clone(),
            program: program.clone(),
            live,
            replayed: 0,
        })
    }

    /// The answer's object for `line` (a call without its id, or the state request):
    /// recorded, or live and then recorded.
    async fn exchange(
        &mut self,
        line: Value,
        ask: impl AsyncFnOnce(&mut CommandSession) -> Result<Map<String, Value>, ConnectError>,
    ) -> Result<Map<String, Value>, ConnectError> {
        let key = self.tape.key(&line);
        if let Some(exchange) = self.tape.cassettes.replay(&key)? {
            self.replayed += 1;
            return self.replayed_answer(&exchange);
        }
        if self.replayed > 0 && self.live.is_none() {
            return Err(ConnectError::NoCassette {
                message: format!(
                    "no recorded answer of tool program `{}` answers {}, and the requests before it were replayed, \
                     so the program cannot be started in the middle of its session; record the case again with --re-record",
                    self.program.label,
                    describe(&line),
                ),
            });
        }
        let live = match &mut self.live {
            Some(live) => live,
            None => self.live.insert(self.tools.start_session(&self.program)?),
        };
        let started = Instant::now();
        let result = ask(live).await;
        let at_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (chunks, broke_off) = match &result {
            Ok(object) => (
                vec![Chunk::new(
                    at_ms,
                    Value::Object(object.clone()).to_string().into_bytes(),
                )],
                None,
            ),
            Err(e) => (Vec::new(), Some(crate::stdio_cassette::broke_off(e))),
        };
        let response = RecordedResponse {
            status: 0,
            headers: Vec::new(),
            chunks,
            broke_off,
        };
        self.tape
            .cassettes
            .record(key, response)
            .map_err(|e| ConnectError::Config {
                message: format!(
                    "cannot write the cassette of tool program `{}`: {e}; check that the cassette folder is writable",
                    self.program.label
                ),
            })?;
        result
    }

    /// The object a recorded exchange answered, or the error it ended in.
    fn replayed_answer(&self, exchange: &Exchange) -> Result<Map<String, Value>, ConnectError> {
        let peer = format!("tool program `{}` (replayed)", self.program.label);
        if let Some(broke_off) = &exchange.response.broke_off {
            return Err(crate::stdio_cassette::error_of(broke_off, &peer));
        }
        let line = exchange
            .response
            .chunks
            .first()
            .and_then(Chunk::bytes)
            .ok_or_else(|| ConnectError::protocol(&peer, "a recorded answer has no line"))?;
        match serde_json::from_slice(&line) {
            Ok(Value::Object(object)) => Ok(object),
            _ => Err(ConnectError::protocol(
                &peer,
                "a recorded answer is not a JSON object",
            )),
        }
    }
}

/// A request line as a message names it.
fn describe(line: &Value) -> String {
    match line["type"].as_str() {
        Some("state") => "the state request".to_owned(),
        _ => format!(
            "the call of `{}` with {}",
            line["tool"].as_str().unwrap_or_default(),
            prill_spec::model::framework::describe(&line["arguments"])
        ),
    }
}

impl ToolSession for TapedTools {
    fn call<'a>(
        &'a mut self,
        call: &'a ToolCallRequest,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<ToolAnswer, ConnectError>> {
        Box::pin(async move {
            let line = json!({
                "type": "call",
                "tool": call.name,
                "arguments": call.arguments,
                "turn": call.turn,
            });
            let object = self
                .exchange(line, async |live: &mut CommandSession| {
                    live.ask_call(call, limit).await
                })
                .await?;
            CommandSession::call_answer(call, object).map_err(|message| {
                ConnectError::protocol(format!("tool program `{}`", self.program.label), message)
            })
        })
    }

    fn state(&mut self, limit: Option<Duration>) -> BoxFuture<'_, Result<Value, ConnectError>> {
        Box::pin(async move {
            let object = self
                .exchange(
                    json!({"type": "state"}),
                    async |live: &mut CommandSession| live.ask_state(limit).await,
                )
                .await?;
            CommandSession::state_answer(object).map_err(|message| {
                ConnectError::protocol(format!("tool program `{}`", self.program.label), message)
            })
        })
    }
}
