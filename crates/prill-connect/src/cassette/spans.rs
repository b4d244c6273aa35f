//! [`RecordedSpans`]: an agent's OpenTelemetry spans on cassettes, so that a replay of
//! a `trajectory: otel` case checks the trajectory the recording saw, with no agent and
//! no receiver.
//!
//! An interaction's spans are one exchange: connector [`OTEL_CONNECTOR`], endpoint
//! `SPANS {agent}`, body `{"interaction": N}`, in the file and sample of the
//! [`SampleScope`](prill_target::scope::SampleScope) that asked. The answer is one
//! chunk, the spans as a JSON array ([`AgentSpan`]'s form), blanked of the run's
//! secrets like every recording; spans that never came are recorded as the error they
//! were, and replay as it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_target::otel::{AgentSpan, SpanInbox, SpanSource, TraceParent};
use prill_target::{BoxFuture, ConnectError};
use serde_json::json;

use super::{Cassettes, Chunk, RecordedResponse};

/// The connector of spans' exchanges in a cassette.
pub const OTEL_CONNECTOR: &str = "otel";

/// Who the errors of spans name.
const PEER: &str = "the agent's OpenTelemetry spans";

/// The spans of the run's receiver, through its cassettes when it has them.
#[derive(Debug, Clone)]
pub struct RecordedSpans {
    live: Arc<SpanInbox>,
    cassettes: Option<Cassettes>,
}

impl RecordedSpans {
    /// The spans `live` takes in, recorded into or replayed from `cassettes`.
    pub fn new(live: Arc<SpanInbox>, cassettes: Option<Cassettes>) -> RecordedSpans {
        RecordedSpans { live, cassettes }
    }

    async fn get(
        &self,
        agent: &str,
        interaction: usize,
        parent: TraceParent,
        limit: Duration,
    ) -> Result<Vec<AgentSpan>, ConnectError> {
        let Some(cassettes) = &self.cassettes else {
            return self.live.take(parent, limit).await;
        };
        let mut key = cassettes.request(
            OTEL_CONNECTOR,
            "",
            "",
            &json!({ "interaction": interaction }),
        );
        key.endpoint = format!("SPANS {}", cassettes.normalizer().scrub_text(agent));
        if let Some(exchange) = cassettes.replay(&key)? {
            if let Some(broke_off) = &exchange.response.broke_off {
                return Err(ConnectError::protocol(PEER, broke_off.clone()));
            }
            let bytes = exchange
                .response
                .chunks
                .first()
                .and_then(Chunk::bytes)
                .unwrap_or_default();
            return serde_json::from_slice(&bytes).map_err(|e| {
                ConnectError::protocol(PEER, format!("the recorded spans do not read: {e}"))
            });
        }
        let started = Instant::now();
        let got = self.live.take(parent, limit).await;
        let at_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let response = match &got {
            Ok(spans) => RecordedResponse {
                status: 200,
                headers: Vec::new(),
                chunks: vec![Chunk::new(
                    at_ms,
                    serde_json::to_vec(spans).unwrap_or_default(),
                )],
                broke_off: None,
            },
            Err(error) => RecordedResponse {
                status: 0,
                headers: Vec::new(),
                chunks: Vec::new(),
                broke_off: Some(match error {
                    ConnectError::Protocol { message, .. } => message.clone(),
                    other => other.to_string(),
                }),
            },
        };
        if let Err(error) = cassettes.record(key, response) {
            tracing::warn!(%error, "a cassette could not be written");
        }
        got
    }
}

impl SpanSource for RecordedSpans {
    fn spans<'a>(
        &'a self,
        agent: &'a str,
        interaction: usize,
        parent: TraceParent,
        limit: Duration,
    ) -> BoxFuture<'a, Result<Vec<AgentSpan>, ConnectError>> {
        Box::pin(self.get(agent, interaction, parent, limit))
    }
}
