//! Cassettes on live traffic: the exchanges of a run with its agents and models,
//! recorded so that a later run can be answered from them with no network
//! (`prill run --record DIR`, `--replay DIR`, `docs/cassettes.md`).
//!
//! The format, the normalization and the matching are `prill-cassette`'s
//! ([`prill_cassette`]), re-exported here under the paths the rest of Prill uses. This
//! module puts them on live traffic: [`Cassettes`], the cassettes of one run that every
//! connector shares ([`Mode`], [`CassetteOptions`]); [`live`], a recorded response
//! turned back into a streamed [`reqwest::Response`], and a live one kept as it
//! streams; the seam that `HttpClient::attempt_paced` sends every request through; and
//! the run's secrets as every byte a cassette or the model cache keeps is blanked of
//! them (`redact.rs`).

pub mod live;
pub(crate) mod redact;
pub(crate) mod seam;
mod spans;
mod store;

pub use prill_cassette::{
    CASSETTE_VERSION, Cassette, CassetteError, Chunk, Exchange, Latency, MAX_CASSETTE_BYTES,
    NoMatch, Normalizer, REDACTED, RecordedRequest, RecordedResponse, Redact, VOLATILE_FIELDS,
    case_file_name, read_regular, regular_size, schema_text, slug,
};
pub use spans::{OTEL_CONNECTOR, RecordedSpans};
pub use store::{CassetteOptions, Cassettes, Mode};
