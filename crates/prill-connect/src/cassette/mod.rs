//! Cassettes: the exchanges of a run with its agents and models, recorded so that a
//! later run can be answered from them with no network (`prill run --record DIR`,
//! `--replay DIR`, `docs/cassettes.md` once the connectors use it).
//!
//! A cassette file is JSON Lines, one [`Exchange`] per line: the request as it is
//! matched ([`RecordedRequest`]: the connector, the endpoint, the body with its
//! volatile fields removed, the sample) and the response exactly as it streamed
//! ([`RecordedResponse`]: the status, the headers that shape decoding, and each chunk's
//! bytes with its time from the request). Replaying hands those chunks, at their times
//! or at once, to the same decoders live traffic goes through.
//!
//! This module is the format, the normalization ([`Normalizer`]: what is volatile, what
//! is secret) and the matching ([`Cassette::find`], whose miss names the closest
//! recorded request and shows the difference). It does no I/O beyond reading and
//! writing cassette files.
//!
//! ```
//! use prill_connect::cassette::{Cassette, Normalizer, RecordedRequest};
//! use serde_json::json;
//!
//! let normalizer = Normalizer::default();
//! let request = |content: &str| {
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

mod format;
pub(crate) mod jsonrpc;
pub mod live;
mod matching;
mod normalize;
pub(crate) mod seam;
mod store;

pub use format::{
    CASSETTE_VERSION, Chunk, Exchange, RecordedRequest, RecordedResponse, schema_text,
};
pub use matching::{Cassette, CassetteError, NoMatch};
pub use normalize::{Normalizer, REDACTED, VOLATILE_FIELDS};
pub use store::{CassetteOptions, Cassettes, Latency, Mode};
