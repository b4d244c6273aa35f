//! Command agents and neuro-san's direct bridge on cassettes: how each exchange of a
//! [`crate::StdioConversation`] is keyed, recorded and replayed.
//!
//! An exchange with a command is keyed like an http one ([`Cassettes::request`]): the
//! connector ([`STDIO_CONNECTOR`] or [`NEURO_SAN_DIRECT_CONNECTOR`]), the endpoint, and
//! the normalized request line. The endpoint is the **agent's name**, not the command:
//! the command is *where* the agent runs, as the host of an http agent is (which its
//! endpoint leaves out too), so a replay may run with another command, a moved script or
//! a program that is not installed. The request line's `x-prill-sample` metadata is left
//! out (the sample comes from the [`SampleScope`](prill_target::scope::SampleScope)),
//! and the run's secrets are blanked.
//!
//! The response is the lines the command wrote for that request, one [`Chunk`] each
//! with its time from the request, up to the final message. An exchange that ended in
//! an error keeps the lines before it and the error in `broke_off`, written
//! `KIND: DETAIL` so that a replay errs the same way: `protocol: MESSAGE`,
//! `io: REASON`, `too_large: BYTES`, `timeout: MILLISECONDS`, `idle: MILLISECONDS`.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cassette::{
    Cassettes, Chunk, Exchange, Latency, Mode, RecordedRequest, RecordedResponse,
};
use crate::error::ConnectError;

/// The connector of a command agent's exchanges in a cassette.
pub const STDIO_CONNECTOR: &str = "stdio";

/// The connector of the neuro-san direct bridge's exchanges in a cassette.
pub const NEURO_SAN_DIRECT_CONNECTOR: &str = "neuro-san-direct";

/// The run's cassettes as a connector holds them: `Debug` shows their folder and mode,
/// never the secrets they blank.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct RunCassettes(pub(crate) Option<Cassettes>);

impl std::fmt::Debug for RunCassettes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("None"),
            Some(c) => write!(f, "Cassettes({}, {:?})", c.dir().display(), c.mode()),
        }
    }
}

impl RunCassettes {
    /// The tape of a conversation with `agent` over `connector`, when there are
    /// cassettes.
    pub(crate) fn tape(&self, connector: &'static str, agent: &str) -> Option<Tape> {
        self.0.clone().map(|cassettes| Tape {
            cassettes,
            connector,
            agent: agent.to_owned(),
        })
    }
}

/// The cassettes of one conversation with a command, and how its exchanges are keyed.
#[derive(Clone)]
pub(crate) struct Tape {
    /// The run's cassettes.
    pub(crate) cassettes: Cassettes,
    /// [`STDIO_CONNECTOR`] or [`NEURO_SAN_DIRECT_CONNECTOR`].
    pub(crate) connector: &'static str,
    /// The agent's name: the endpoint.
    pub(crate) agent: String,
}

impl std::fmt::Debug for Tape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tape")
            .field("cassettes", &RunCassettes(Some(self.cassettes.clone())))
            .field("connector", &self.connector)
            .field("agent", &self.agent)
            .finish()
    }
}

impl Tape {
    /// Whether the command must be started before the first request: not when a
    /// request may be answered from the cassettes.
    pub(crate) fn starts_at_once(&self) -> bool {
        matches!(self.cassettes.mode(), Mode::Record | Mode::ReRecord)
    }

    /// `line` (the request line as sent) as the cassettes key it.
    pub(crate) fn key(&self, line: &Value) -> RecordedRequest {
        let mut body = line.clone();
        if let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove(prill_target::SAMPLE_METADATA);
        }
        let mut request = self
            .cassettes
            .request(self.connector, "", &self.agent, &body);
        request.endpoint = self.cassettes.normalizer().scrub_text(&self.agent);
        request
    }

    /// Writes what `request` got live: the lines heard, and the error it ended in.
    pub(crate) fn record(
        &self,
        request: RecordedRequest,
        heard: Vec<Chunk>,
        error: Option<&ConnectError>,
    ) -> Result<(), ConnectError> {
        // Blanked of the run's secrets, with the lines, as the cassettes write it.
        let broke_off = error.map(broke_off);
        let response = RecordedResponse {
            status: 0,
            headers: Vec::new(),
            chunks: heard,
            broke_off,
        };
        self.cassettes
            .record(request, response)
            .map_err(|e| ConnectError::Config {
                message: format!(
                    "cannot write the cassette of agent `{}`: {e}; check that the cassette folder is writable",
                    self.agent
                ),
            })
    }

    /// The lines of `exchange`, each at its recorded time from `started` (or at once
    /// with [`Latency::Zero`]), then the recorded error if it had one.
    pub(crate) async fn lines(
        &self,
        exchange: &Exchange,
        started: Instant,
        peer: &str,
        mut line: impl FnMut(&[u8]) -> Result<(), ConnectError>,
    ) -> Result<(), ConnectError> {
        let recorded = self.cassettes.latency() == Latency::Recorded;
        let at = |ms: u64| started + Duration::from_millis(ms);
        let mut last = 0;
        for chunk in &exchange.response.chunks {
            if recorded {
                tokio::time::sleep_until(at(chunk.at_ms).into()).await;
            }
            last = chunk.at_ms;
            let bytes = chunk.bytes().ok_or_else(|| {
                ConnectError::protocol(peer, "a recorded line's base64 does not decode")
            })?;
            line(&bytes)?;
        }
        let Some(broke_off) = &exchange.response.broke_off else {
            return Ok(());
        };
        let error = error_of(broke_off, peer);
        if recorded {
            // A limit that ran out ran out as late as it did live.
            match &error {
                ConnectError::Timeout { limit, .. } => {
                    tokio::time::sleep_until((started + *limit).into()).await;
                }
                ConnectError::Idle { limit, .. } => {
                    tokio::time::sleep_until((at(last) + *limit).into()).await;
                }
                _ => {}
            }
        }
        Err(error)
    }
}

/// `error` as a recorded answer's `broke_off`: `KIND: DETAIL`.
pub(crate) fn broke_off(error: &ConnectError) -> String {
    match error {
        ConnectError::Protocol { message, .. } => format!("protocol: {message}"),
        ConnectError::Io { reason, .. } => format!("io: {reason}"),
        ConnectError::TooLarge { limit, .. } => format!("too_large: {limit}"),
        ConnectError::Timeout { limit, .. } => format!("timeout: {}", limit.as_millis()),
        ConnectError::Idle { limit, .. } => format!("idle: {}", limit.as_millis()),
        other => format!("protocol: {other}"),
    }
}

/// The error a recorded `broke_off` stands for, from `peer`; one that does not read as
/// `KIND: DETAIL` is a protocol error.
pub(crate) fn error_of(broke_off: &str, peer: &str) -> ConnectError {
    let peer = peer.to_owned();
    let millis = |detail: &str| detail.trim().parse::<u64>().ok().map(Duration::from_millis);
    match broke_off.split_once(": ") {
        Some(("io", reason)) => ConnectError::Io {
            peer,
            reason: reason.to_owned(),
        },
        Some(("too_large", limit)) if limit.trim().parse::<u64>().is_ok() => {
            ConnectError::TooLarge {
                peer,
                limit: limit.trim().parse().unwrap_or_default(),
            }
        }
        Some(("timeout", limit)) if millis(limit).is_some() => ConnectError::Timeout {
            peer,
            limit: millis(limit).unwrap_or_default(),
        },
        Some(("idle", limit)) if millis(limit).is_some() => ConnectError::Idle {
            peer,
            limit: millis(limit).unwrap_or_default(),
        },
        Some(("protocol", message)) => ConnectError::Protocol {
            peer,
            message: message.to_owned(),
        },
        _ => ConnectError::Protocol {
            peer,
            message: broke_off.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_a_command_can_end_in_replays_as_its_kind() {
        let peer = "command `x`";
        let errors = [
            ConnectError::protocol(peer, "it closed its output: boom"),
            ConnectError::Io {
                peer: peer.to_owned(),
                reason: "broken pipe".to_owned(),
            },
            ConnectError::TooLarge {
                peer: peer.to_owned(),
                limit: 1024,
            },
            ConnectError::Timeout {
                peer: peer.to_owned(),
                limit: Duration::from_millis(1500),
            },
            ConnectError::Idle {
                peer: peer.to_owned(),
                limit: Duration::from_secs(2),
            },
        ];
        for error in errors {
            assert_eq!(error_of(&broke_off(&error), peer), error);
        }
        assert_eq!(
            error_of("edited by hand", peer),
            ConnectError::protocol(peer, "edited by hand")
        );
    }
}
