//! Where a verdict came from and who spoke: a unit's [`Source`] (live, replayed from
//! cassettes, or both), a sample's [`SampleCassettes`] counts, and an interaction's
//! [`UserTurn`] in a conversation with a simulated user.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a unit's verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Every exchange went live.
    #[default]
    Live,
    /// Every sample was answered from cassettes: nothing was sent.
    Replayed,
    /// Some exchanges were replayed, some went live.
    Mixed,
}

impl Source {
    /// Whether it is [`Source::Live`].
    pub fn is_live(&self) -> bool {
        *self == Source::Live
    }
}

impl From<prill_run::events::Source> for Source {
    fn from(source: prill_run::events::Source) -> Source {
        match source {
            prill_run::events::Source::Live => Source::Live,
            prill_run::events::Source::Replayed => Source::Replayed,
            prill_run::events::Source::Mixed => Source::Mixed,
        }
    }
}

/// How a sample's exchanges met the run's cassettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct SampleCassettes {
    /// Exchanges answered from a recording.
    pub replayed: u32,
    /// Exchanges sent live and recorded.
    pub recorded: u32,
}

/// One turn of a conversation with a simulated user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UserTurn {
    /// Whether the simulator wrote the message (else the test's script did).
    pub simulated: bool,
    /// How the user ended the conversation, on the interaction after which it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<UserStop>,
}

/// How a simulated user ended its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UserStop {
    /// The reason it gave: `done`, `gave_up` or `agent_failed`.
    pub reason: prill_spec::model::user::StopReason,
    /// What it said as it ended, which was not sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
}
