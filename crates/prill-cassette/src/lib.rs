//! `prill-cassette` is the cassette format: the exchanges of a run with its agents and
//! models, recorded so that a later run can be answered from them with no network
//! (`prill run --record DIR`, `--replay DIR`, `docs/cassettes.md`).
//!
//! A cassette file is JSON Lines, one [`Exchange`] per line: the request as it is
//! matched ([`RecordedRequest`]: the connector, the endpoint, the body with its
//! volatile fields removed, the sample) and the response exactly as it streamed
//! ([`RecordedResponse`]: the status, the headers that shape decoding, and each chunk's
//! bytes with its time from the request). Replaying hands those chunks, at their times
//! or at once ([`Latency`]), to the same decoders live traffic goes through.
//!
//! This crate is the format, the normalization ([`Normalizer`]: what is volatile, what
//! is secret, blanked by the run's [`Redact`]ion in every byte an exchange keeps), the
//! matching ([`Cassette::find`], whose miss names the closest recorded request and shows
//! the difference), and a replayed JSON-RPC answer given the id of the request sent
//! ([`jsonrpc`]). It does no network I/O and no I/O beyond reading and writing cassette
//! files, and reads only regular files, within [`MAX_CASSETTE_BYTES`] ([`read_regular`]). `prill-connect` records and replays them on live traffic
//! (its `cassette::Cassettes`, which re-exports this crate's items); `prill-demo`'s
//! replaying server (`prill serve --replay`) reads them.
//!
//! ```
//! use prill_cassette::{Cassette, Normalizer, RecordedRequest};
//! use serde_json::json;
//!
//! let normalizer = Normalizer::default();
//! let request = |content: &str| -> RecordedRequest {
//!     normalizer.request(
//!         "openai",
//!         "POST",
//!         "https://api.openai.com/v1/chat/completions",
//!         &json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}),
//!         Some(0),
//!     )
//! };
//! let mut cassette = Cassette::default();
//! cassette.push_exchange(request("Hello"), 200, vec![], vec![(0, b"data: {}\n\n".to_vec())]);
//! assert!(cassette.find(&request("Hello")).is_ok());
//! let miss = cassette.find(&request("Goodbye")).unwrap_err();
//! assert!(miss.to_string().contains("\"Goodbye\""));
//! ```

mod files;
mod format;
pub mod jsonrpc;
mod matching;
mod normalize;
mod redact;

pub use files::{MAX_CASSETTE_BYTES, case_file_name, read_regular, regular_size, slug};
pub use format::{
    CASSETTE_VERSION, Chunk, Exchange, RecordedRequest, RecordedResponse, schema_text,
};
pub use matching::{Cassette, CassetteError, NoMatch};
pub use normalize::{Normalizer, REDACTED, VOLATILE_FIELDS};
pub use redact::Redact;

/// How a replayed response is paced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Latency {
    /// Each chunk at its recorded time from the request (the default): latency and
    /// time-to-first-token assertions still mean something.
    #[default]
    Recorded,
    /// Every chunk at once.
    Zero,
}
