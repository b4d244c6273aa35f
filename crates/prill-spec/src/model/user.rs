//! `user`: a simulated user that carries a conversation on after its scripted turns
//! (a Prill extension of both dialects, `docs/conversations.md`).
//!
//! The simulator is a model with a brief: a `goal` the agent is not told, a `persona`,
//! the `facts` it may give when asked. It speaks in turns until it calls the tool
//! [`END_CONVERSATION`] (with a [`StopReason`]), or until `max_turns` turns of the
//! conversation were taken, which it was meant never to reach. Each of its turns is
//! checked against its brief by the judge before it is sent (`check_turns`).
//!
//! ```
//! use prill_spec::model::user::{SimulatedUser, StopReason};
//!
//! let user = SimulatedUser::new("Cancel order #W1; you no longer need it", "gpt-4o-mini");
//! assert_eq!(user.max_turns, 10);
//! assert!(user.check_turns);
//! assert_eq!(StopReason::from_name("gave_up"), Some(StopReason::GaveUp));
//! ```

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::provider::ProviderName;

/// The tool the simulator calls to end the conversation.
pub const END_CONVERSATION: &str = "end_conversation";

/// The turns a conversation takes at most when `max_turns` is not given.
pub const DEFAULT_MAX_TURNS: u32 = 10;

/// The largest `max_turns` taken.
pub const MAX_TURNS_LIMIT: u32 = 100;

/// The keys of `user`.
pub const KEYS: [&str; 8] = [
    "goal",
    "persona",
    "facts",
    "max_turns",
    "model",
    "provider",
    "first_turns",
    "check_turns",
];

/// A simulated user's brief and settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulatedUser {
    /// What the user wants from the conversation; never shown to the agent.
    pub goal: String,
    /// Who the user is and how they write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// What the user may tell the agent when asked: an object (name → value) or a list
    /// of sentences; nothing else.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub facts: Value,
    /// The most turns of the conversation (the user's messages, scripted ones
    /// included); reaching it without `end_conversation` is the simulator's fault.
    pub max_turns: u32,
    /// The simulator's model, pinned: another model plays another user.
    pub model: String,
    /// The simulator's provider: a kind, or a name of `[providers]`; else the one the
    /// model's name implies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderName>,
    /// The user's first messages, sent as written, one per turn, after the test's own
    /// input and before the simulator speaks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub first_turns: Vec<String>,
    /// Whether the judge checks each simulated turn against the brief before it is
    /// sent (default `true`).
    pub check_turns: bool,
}

impl SimulatedUser {
    /// A user with `goal`, played by `model`, with every other setting at its default.
    pub fn new(goal: impl Into<String>, model: impl Into<String>) -> SimulatedUser {
        SimulatedUser {
            goal: goal.into(),
            persona: None,
            facts: Value::Null,
            max_turns: DEFAULT_MAX_TURNS,
            model: model.into(),
            provider: None,
            first_turns: Vec::new(),
            check_turns: true,
        }
    }

    /// The facts as lines: `name: value` for an object, each item for a list.
    pub fn fact_lines(&self) -> Vec<String> {
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match &self.facts {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| format!("{k}: {}", text(v)))
                .collect(),
            Value::Array(items) => items.iter().map(text).collect(),
            Value::Null => Vec::new(),
            other => vec![text(other)],
        }
    }
}

/// Why the simulated user ended the conversation, as its `end_conversation` call says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The goal was met.
    Done,
    /// The user gave up: the agent could not be brought to it.
    GaveUp,
    /// The agent failed: it refused, broke, or did something the user did not ask.
    AgentFailed,
}

impl StopReason {
    /// Every reason's name.
    pub const NAMES: [&'static str; 3] = ["done", "gave_up", "agent_failed"];

    /// The reason's name.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Done => "done",
            StopReason::GaveUp => "gave_up",
            StopReason::AgentFailed => "agent_failed",
        }
    }

    /// The reason named `name`.
    pub fn from_name(name: &str) -> Option<StopReason> {
        match name {
            "done" => Some(StopReason::Done),
            "gave_up" => Some(StopReason::GaveUp),
            "agent_failed" => Some(StopReason::AgentFailed),
            _ => None,
        }
    }
}

impl JsonSchema for SimulatedUser {
    fn schema_name() -> Cow<'static, str> {
        "SimulatedUser".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A simulated user that carries the conversation on after the scripted turns: a model with a brief, which ends the conversation by calling `end_conversation`. A Prill extension (docs/conversations.md).",
            "type": "object",
            "properties": {
                "goal": {"description": "What the user wants; never shown to the agent.", "type": "string", "minLength": 1},
                "persona": {"description": "Who the user is and how they write.", "type": "string"},
                "facts": {
                    "description": "What the user may tell the agent when asked, and nothing else: name -> value, or a list of sentences.",
                    "anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "string"}}]
                },
                "max_turns": {"description": "The most turns (user messages, scripted ones included); reaching it without `end_conversation` is the simulator's fault.", "type": "integer", "minimum": 1, "maximum": MAX_TURNS_LIMIT, "default": DEFAULT_MAX_TURNS},
                "model": {"description": "The simulator's model, pinned.", "type": "string", "minLength": 1},
                "provider": {"description": "The simulator's provider: a kind, or a name of `[providers]`; else the one the model implies.", "type": "string", "minLength": 1},
                "first_turns": {"description": "The user's first messages, sent as written, one per turn, before the simulator speaks.", "type": "array", "items": {"type": "string", "minLength": 1}},
                "check_turns": {"description": "Whether the judge checks each simulated turn against the brief before it is sent.", "type": "boolean", "default": true}
            },
            "required": ["goal", "model"],
            "additionalProperties": false
        })
    }
}
