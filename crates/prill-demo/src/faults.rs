//! Fault modes, chosen per request with the `x-prill-fault` header (see the crate docs).

use http::{HeaderMap, Response, StatusCode};

use crate::body::Body;
use crate::routes::{error_response, retry_after};
use crate::server::Shared;

/// The request header that picks a fault mode.
pub const FAULT_HEADER: &str = "x-prill-fault";

/// The body size of the `huge` fault mode when the header gives none: 64 MiB.
pub const DEFAULT_HUGE_BYTES: u64 = 64 * 1024 * 1024;

/// The size of each line of the `huge` fault mode: 64 KiB, newline included.
pub const HUGE_LINE_BYTES: usize = 64 * 1024;

/// One fault mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    /// One valid line, then the connection is closed mid-stream.
    Drop,
    /// A line that is not JSON, then the normal response.
    Malformed,
    /// 500 `{"error": "Internal server error"}`.
    Internal,
    /// 503 `{"error": "Server is shutting down"}` with `Retry-After: 1`.
    Unavailable,
    /// Like [`Fault::Unavailable`] for the first request with this key only.
    UnavailableOnce(String),
    /// 429 `{"error": "Too many requests"}` with `Retry-After: 1`.
    TooMany,
    /// The head is sent, then nothing, until the client leaves or the server shuts down.
    Hang,
    /// About this many bytes of 64 KiB lines, then the normal response.
    Huge(u64),
}

impl Fault {
    /// The fault a request asks for: `Ok(None)` without the header, `Err` with the 400
    /// response for an unknown mode.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<Fault>, Box<Response<Body>>> {
        let Some(value) = headers.get(FAULT_HEADER) else {
            return Ok(None);
        };
        let text = value.to_str().unwrap_or("").trim();
        Fault::parse(text).map(Some).ok_or_else(|| {
            Box::new(error_response(
                StatusCode::BAD_REQUEST,
                &format!(
                    "unknown fault mode {text:?}: expected drop, malformed, 500, 503, 503-once:<key>, \
                     429, hang, huge or huge:<MiB>"
                ),
            ))
        })
    }

    fn parse(text: &str) -> Option<Fault> {
        if let Some(key) = text.strip_prefix("503-once:") {
            return (!key.is_empty()).then(|| Fault::UnavailableOnce(key.to_owned()));
        }
        if let Some(mib) = text.strip_prefix("huge:") {
            let mib: u64 = mib.trim().parse().ok()?;
            return Some(Fault::Huge(mib.saturating_mul(1024 * 1024)));
        }
        Some(match text.to_ascii_lowercase().as_str() {
            "drop" => Fault::Drop,
            "malformed" => Fault::Malformed,
            "500" => Fault::Internal,
            "503" => Fault::Unavailable,
            "429" => Fault::TooMany,
            "hang" => Fault::Hang,
            "huge" => Fault::Huge(DEFAULT_HUGE_BYTES),
            _ => return None,
        })
    }

    /// The error response of a status fault, or `None` when the request goes on (a stream
    /// fault, or a `503-once` key already failed once).
    pub(crate) fn status_response(&self, shared: &Shared) -> Option<Response<Body>> {
        match self {
            Fault::Internal => Some(error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal server error",
            )),
            Fault::Unavailable => Some(retry_after(
                StatusCode::SERVICE_UNAVAILABLE,
                "Server is shutting down",
            )),
            Fault::UnavailableOnce(key) if shared.first_time(key) => Some(retry_after(
                StatusCode::SERVICE_UNAVAILABLE,
                "Server is shutting down",
            )),
            Fault::TooMany => Some(retry_after(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many requests",
            )),
            _ => None,
        }
    }
}

/// How many `huge` lines make up about `bytes` bytes (at least one).
pub(crate) fn huge_line_count(bytes: u64) -> usize {
    usize::try_from(bytes.div_ceil(HUGE_LINE_BYTES as u64).max(1)).unwrap_or(usize::MAX)
}

/// A line of `len` bytes (newline included) whose JSON is `prefix` + padding + `suffix`.
pub(crate) fn padded_line(prefix: &str, suffix: &str, len: usize) -> Vec<u8> {
    let padding = len.saturating_sub(prefix.len() + suffix.len() + 1);
    let mut line = Vec::with_capacity(len);
    line.extend_from_slice(prefix.as_bytes());
    line.resize(prefix.len() + padding, b'x');
    line.extend_from_slice(suffix.as_bytes());
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_mode() {
        assert_eq!(Fault::parse("drop"), Some(Fault::Drop));
        assert_eq!(Fault::parse("HANG"), Some(Fault::Hang));
        assert_eq!(
            Fault::parse("503-once:abc"),
            Some(Fault::UnavailableOnce("abc".to_owned()))
        );
        assert_eq!(Fault::parse("huge"), Some(Fault::Huge(DEFAULT_HUGE_BYTES)));
        assert_eq!(Fault::parse("huge:2"), Some(Fault::Huge(2 * 1024 * 1024)));
        assert_eq!(Fault::parse("503-once:"), None);
        assert_eq!(Fault::parse("explode"), None);
    }

    #[test]
    fn lines_have_the_asked_length() {
        let line = padded_line("{\"a\": \"", "\"}", 100);
        assert_eq!(line.len(), 100);
        assert!(serde_json::from_slice::<serde_json::Value>(&line).is_ok());
        assert_eq!(huge_line_count(DEFAULT_HUGE_BYTES), 1024);
    }
}
