//! The cassette format: one [`Exchange`] per JSON line.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use prill_spec::plan::under::Under;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the cassette format, in every exchange.
pub const CASSETTE_VERSION: u32 = 1;

/// One request and the response it got.
// Not `#[non_exhaustive]`, nor is `RecordedResponse`: `prill-connect` builds both (its
// recordings, the model cache's entries). Their doc comments are the schema's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exchange {
    /// The format's version: 1.
    pub cassette_version: u32,
    /// The request, as it is matched.
    pub request: RecordedRequest,
    /// The response, as it streamed.
    pub response: RecordedResponse,
    /// What the case that sent it was made of when it was recorded: a short hash of each
    /// part (`inputs`, `tools`, `user`, `program`, `file:<path>`, `checks`), which a
    /// replay and `prill cassettes check` compare with the case as it is now. Absent in
    /// recordings made outside a case, and in older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<Under>,
}

/// A request as a cassette keeps and matches it: already normalized, its volatile
/// fields out and its secrets blanked (by the `Normalizer`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The connector: `neuro-san-http`, `mcp`, `stdio`, `openai`, `anthropic`, ...
    pub connector: String,
    /// The method and the URL's path and query without secrets
    /// (`POST /api/v1/x/streaming_chat`: not the host, so a replay may point anywhere),
    /// or the command of a stdio agent.
    pub endpoint: String,
    /// The body, its volatile fields removed and its secrets blanked.
    pub body: Value,
    /// The id of the case that sent it, when known: each case replays its own
    /// recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// Which sample of its case sent it, when known: the samples of a case replay as
    /// they were recorded, passes and failures alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u32>,
}

impl RecordedRequest {
    /// The request as sent by case `case` (its id).
    pub fn in_case(mut self, case: Option<String>) -> RecordedRequest {
        self.case = case;
        self
    }
}

/// A response as it streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordedResponse {
    /// The HTTP status (0 for a stdio agent).
    pub status: u16,
    /// The headers that shape how the body is read (`content-type`, ...), lower case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The body's chunks, in order.
    pub chunks: Vec<Chunk>,
    /// How the body broke off after its last chunk, when it did: a replay breaks off
    /// there too, so a cut stream stays an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_off: Option<String>,
}

/// One chunk of a body: its bytes, and when it arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Chunk {
    /// Milliseconds from the request to this chunk.
    pub at_ms: u64,
    /// The bytes, as text when they are UTF-8 (SSE, JSON lines)...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// ...else as base64 (Bedrock's binary event stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
}

/// The JSON Schema of one line of a cassette file (an [`Exchange`]), as
/// `schemas/cassette.schema.json` holds it.
pub fn schema_text() -> String {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<Exchange>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

impl Chunk {
    /// The chunk of `bytes` that arrived `at_ms` after the request.
    pub fn new(at_ms: u64, bytes: Vec<u8>) -> Chunk {
        match String::from_utf8(bytes) {
            Ok(text) => Chunk {
                at_ms,
                text: Some(text),
                base64: None,
            },
            Err(e) => Chunk {
                at_ms,
                text: None,
                base64: Some(STANDARD.encode(e.as_bytes())),
            },
        }
    }

    /// Its bytes; `None` when its base64 does not decode (an edited cassette).
    pub fn bytes(&self) -> Option<Vec<u8>> {
        match (&self.text, &self.base64) {
            (Some(text), _) => Some(text.as_bytes().to_vec()),
            (None, Some(b64)) => STANDARD.decode(b64).ok(),
            (None, None) => Some(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_stays_text_and_binary_round_trips_as_base64() {
        let text = Chunk::new(5, b"data: {\"a\":1}\n\n".to_vec());
        assert_eq!(text.text.as_deref(), Some("data: {\"a\":1}\n\n"));
        let binary = Chunk::new(7, vec![0, 0, 0, 0xff, 0xfe]);
        assert!(binary.text.is_none());
        assert_eq!(binary.bytes().unwrap(), vec![0, 0, 0, 0xff, 0xfe]);
        let json = serde_json::to_string(&binary).unwrap();
        let back: Chunk = serde_json::from_str(&json).unwrap();
        assert_eq!(back, binary);
    }
}
