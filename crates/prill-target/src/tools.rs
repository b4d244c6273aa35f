//! Tools that answer a model's tool calls in a tool loop: the [`ToolSession`] trait the
//! engine's loop calls, and [`ToolLauncher`], which starts a session of a program (the
//! `tool_command` of a spec's `framework_config`) and which `prill-connect` implements.
//!
//! A session lives for one sample: a program is started once, answers every call of
//! that sample's loop in order, gives its state when asked ([`ToolSession::state`]),
//! and is ended when the session is dropped.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::BoxFuture;
use crate::error::ConnectError;
use crate::model::ToolOutput;

/// One tool call, as a tool sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The tool's name.
    pub name: String,
    /// Its arguments, as the model wrote them.
    pub arguments: Value,
    /// The provider's id for the call, where it gives one.
    pub call_id: Option<String>,
    /// Which model call (from 1) asked for it.
    pub turn: u32,
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// The result, or the error's message.
    pub output: ToolOutput,
    /// Whether the tool failed (the model is told, and the loop goes on).
    pub is_error: bool,
}

impl ToolAnswer {
    /// A result.
    pub fn ok(value: Value) -> ToolAnswer {
        ToolAnswer {
            output: ToolOutput::Json(value),
            is_error: false,
        }
    }

    /// A tool error with `message`.
    pub fn error(message: impl Into<String>) -> ToolAnswer {
        ToolAnswer {
            output: ToolOutput::Text(message.into()),
            is_error: true,
        }
    }
}

/// Answers the tool calls of one sample, in order.
pub trait ToolSession: Send {
    /// Answers `call` within `limit`. An `Err` means the tool could not answer at all
    /// (no result configured, the program died or broke its protocol): the sample
    /// errors. A tool that answered with a failure is an `Ok` [`ToolAnswer::error`].
    fn call<'a>(
        &'a mut self,
        call: &'a ToolCallRequest,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<ToolAnswer, ConnectError>>;

    /// The tools' state at this point (`{"type": "state"}` to a program), within
    /// `limit`, for `expect_state`. Tools that keep none say so: the default is an error.
    fn state(&mut self, limit: Option<Duration>) -> BoxFuture<'_, Result<Value, ConnectError>> {
        let _ = limit;
        Box::pin(async {
            Err(ConnectError::config(
                "these tools keep no state to give: `expect_state` needs a `tool_command` program",
            ))
        })
    }
}

/// A program that answers tool calls: its words, and where it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolProgram {
    /// The program and its arguments (a command line is `sh -c <line>`).
    pub argv: Vec<String>,
    /// The directory it runs in (the spec file's); the current one when `None`.
    pub cwd: Option<std::path::PathBuf>,
    /// How messages name it.
    pub label: String,
    /// What it speaks: Prill's JSON lines (`docs/tools.md`), or MCP.
    pub protocol: ToolProtocol,
}

/// What a tool program speaks on its stdin and stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolProtocol {
    /// One JSON line per call and per answer (`tool_command`, `docs/tools.md`).
    #[default]
    Lines,
    /// The Model Context Protocol over stdio (`tool_mcp`): `initialize`, then a
    /// `tools/call` request per call.
    Mcp,
}

/// Starts programs that answer tool calls.
pub trait ToolLauncher: Send + Sync {
    /// Starts `program` for one sample. Errors only when it cannot be started; one
    /// that exits early shows on its first call.
    fn start(&self, program: &ToolProgram) -> Result<Box<dyn ToolSession>, ConnectError>;
}

impl ToolProgram {
    /// A program run in `dir` (when given).
    pub fn new(argv: Vec<String>, dir: Option<&Path>, label: impl Into<String>) -> ToolProgram {
        ToolProgram {
            argv,
            cwd: dir.map(Path::to_path_buf),
            label: label.into(),
            protocol: ToolProtocol::Lines,
        }
    }

    /// The program, speaking MCP rather than JSON lines.
    pub fn mcp(mut self) -> ToolProgram {
        self.protocol = ToolProtocol::Mcp;
        self
    }
}
