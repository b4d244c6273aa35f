//! What a cassette keeps of a request: the volatile fields removed (they would never
//! match twice), the secrets blanked (cassettes are meant to be committed): fields and
//! query parameters that hold keys by their names, and every secret of the run wherever
//! it is, in requests and responses alike, by the run's redaction ([`Redact`]).

use std::sync::Arc;

use serde_json::Value;

use crate::format::{Chunk, RecordedRequest, RecordedResponse};
use crate::redact::{self, Redact};

/// The body fields left out of matching by default, as dotted paths (`*` is any key
/// or element): a JSON-RPC request's counter, request and trace ids, timestamps, and
/// the W3C trace context each interaction is sent (new in every run).
pub const VOLATILE_FIELDS: [&str; 8] = [
    "id",
    "request_id",
    "trace_id",
    "timestamp",
    "metadata.request_id",
    "metadata.trace_id",
    "metadata.traceparent",
    "params._meta.traceparent",
];

/// Body fields whose values are secrets wherever they are (any depth), compared in
/// lower case with `-` read as `_`.
const SECRET_FIELDS: [&str; 8] = [
    "api_key",
    "apikey",
    "authorization",
    "password",
    "secret",
    "access_token",
    "token",
    "x_api_key",
];

/// URL query parameters that carry keys.
const SECRET_PARAMS: [&str; 7] = [
    "key",
    "api_key",
    "apikey",
    "token",
    "access_token",
    "sig",
    "signature",
];

/// What stands for a secret in a cassette.
pub const REDACTED: &str = "<redacted>";

/// How exchanges are normalized: which body fields are volatile, and how the run's
/// secrets are blanked ([`Normalizer::with_redaction`]). `[cassettes] ignore` adds
/// fields, `[cassettes] keep` takes defaults away.
#[derive(Clone)]
pub struct Normalizer {
    ignored: Vec<Vec<String>>,
    redaction: Option<Arc<dyn Redact>>,
}

/// Equal when they ignore the same fields and share one redaction (or have none).
impl PartialEq for Normalizer {
    fn eq(&self, other: &Normalizer) -> bool {
        self.ignored == other.ignored
            && match (&self.redaction, &other.redaction) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for Normalizer {}

/// Shows the ignored fields and whether it blanks secrets, never what they are.
impl std::fmt::Debug for Normalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Normalizer")
            .field("ignored", &self.ignored)
            .field("redacts", &self.redaction.is_some())
            .finish()
    }
}

impl Default for Normalizer {
    fn default() -> Normalizer {
        Normalizer::new(&[], &[])
    }
}

impl Normalizer {
    /// The default volatile fields, with `ignore` added and `keep` taken away.
    pub fn new(ignore: &[String], keep: &[String]) -> Normalizer {
        let ignored = VOLATILE_FIELDS
            .iter()
            .map(|f| (*f).to_owned())
            .filter(|f| !keep.contains(f))
            .chain(ignore.iter().cloned())
            .map(|f| f.split('.').map(str::to_owned).collect())
            .collect();
        Normalizer {
            ignored,
            redaction: None,
        }
    }

    /// Also blanks every secret of the run with `redaction`, wherever it appears: in
    /// request bodies (their strings and keys) and endpoints, and in responses (their
    /// chunks, a secret split between two included, headers and breaks).
    pub fn with_redaction(mut self, redaction: Arc<dyn Redact>) -> Normalizer {
        self.redaction = Some(redaction);
        self
    }

    /// The request as a cassette keeps it: its volatile fields removed, its secrets
    /// blanked.
    pub fn request(
        &self,
        connector: &str,
        method: &str,
        url: &str,
        body: &Value,
        sample: Option<u32>,
    ) -> RecordedRequest {
        let mut body = body.clone();
        for path in &self.ignored {
            remove(&mut body, path);
        }
        blank_fields(&mut body);
        let mut request = RecordedRequest {
            connector: connector.to_owned(),
            endpoint: format!("{method} {}", clean_url(url)),
            body,
            case: None,
            sample,
        };
        self.redact_request(&mut request);
        request
    }

    /// Blanks the run's secrets in `request`: its endpoint, and every string and key of
    /// its body.
    pub fn redact_request(&self, request: &mut RecordedRequest) {
        let Some(redaction) = &self.redaction else {
            return;
        };
        redaction.redact(&mut request.endpoint);
        redact_value(redaction.as_ref(), &mut request.body);
    }

    /// Blanks the run's secrets in `response`: its chunks (a secret split between two
    /// is blanked whole: the chunks around it are joined), its headers and its break.
    pub fn redact_response(&self, response: &mut RecordedResponse) {
        let Some(redaction) = &self.redaction else {
            return;
        };
        for (name, value) in &mut response.headers {
            redaction.redact(name);
            redaction.redact(value);
        }
        if let Some(reason) = &mut response.broke_off {
            redaction.redact(reason);
        }
        let chunks = std::mem::take(&mut response.chunks);
        response.chunks = redact::chunks(redaction.as_ref(), chunks);
    }

    /// A chunk of a response, with every secret blanked.
    pub fn chunk(&self, at_ms: u64, bytes: Vec<u8>) -> Chunk {
        let chunk = Chunk::new(at_ms, bytes);
        match &self.redaction {
            None => chunk,
            Some(redaction) => redact::chunks(redaction.as_ref(), vec![chunk])
                .pop()
                .unwrap_or_else(|| Chunk::new(at_ms, Vec::new())),
        }
    }

    /// `text` with every secret blanked.
    pub fn scrub_text(&self, text: &str) -> String {
        match &self.redaction {
            None => text.to_owned(),
            Some(redaction) => redact::redacted(redaction.as_ref(), text),
        }
    }
}

/// Blanks the values of the fields that hold secrets by their names, at any depth.
fn blank_fields(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(blank_fields),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret_field(key) && !v.is_null() {
                    *v = Value::String(REDACTED.to_owned());
                } else {
                    blank_fields(v);
                }
            }
        }
        _ => {}
    }
}

/// Blanks every secret in the strings and keys of `value`.
fn redact_value(redaction: &dyn Redact, value: &mut Value) {
    match value {
        Value::String(s) => redaction.redact(s),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(redaction, v)),
        Value::Object(map) => {
            let renamed = map.keys().any(|k| redact::redacted(redaction, k) != *k);
            if renamed {
                let entries = std::mem::take(map);
                for (key, v) in entries {
                    map.insert(redact::redacted(redaction, &key), v);
                }
            }
            map.values_mut().for_each(|v| redact_value(redaction, v));
        }
        _ => {}
    }
}

fn is_secret_field(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    SECRET_FIELDS.contains(&key.as_str())
}

/// Removes the field at `path` (`*` matches every key or element) from `value`.
fn remove(value: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match value {
        Value::Object(map) => {
            if rest.is_empty() {
                if first == "*" {
                    map.clear();
                } else {
                    map.remove(first);
                }
                return;
            }
            let children: Vec<&mut Value> = if first == "*" {
                map.values_mut().collect()
            } else {
                map.get_mut(first).into_iter().collect()
            };
            children.into_iter().for_each(|v| remove(v, rest));
        }
        Value::Array(items) => {
            // An array is walked through: `messages.*.name` and `messages.name` alike.
            let rest = if first == "*" { rest } else { path };
            if rest.is_empty() {
                items.clear();
                return;
            }
            items.iter_mut().for_each(|v| remove(v, rest));
        }
        _ => {}
    }
}

/// `url` as an endpoint: its path and query, without credentials (the query parameters
/// that carry keys blanked). A URL that does not parse is kept as it is.
fn clean_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    if parsed.query().is_some() {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let secret = SECRET_PARAMS.contains(&k.to_ascii_lowercase().as_str());
                (
                    k.into_owned(),
                    if secret {
                        REDACTED.to_owned()
                    } else {
                        v.into_owned()
                    },
                )
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    // The path and query only: a replay may point at another host and port (a server on
    // a port of its own each run, or nothing listening at all).
    match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::redact::tests::Values;

    fn secret(values: Vec<&'static str>) -> Normalizer {
        Normalizer::default().with_redaction(Arc::new(Values(values)))
    }

    #[test]
    fn debug_never_shows_a_secret() {
        let n = secret(vec!["sk-very-secret-1234"]);
        let shown = format!("{n:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("redacts: true"), "{shown}");
    }

    #[test]
    fn volatile_fields_are_removed_and_configurable() {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                          "params": {"metadata": {"trace_id": "t-1", "user": "u"}}});
        let r = Normalizer::default().request("mcp", "POST", "http://h/mcp", &body, None);
        assert_eq!(
            r.body,
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"metadata": {"trace_id": "t-1", "user": "u"}}})
        );
        let n = Normalizer::new(&["params.metadata.trace_id".to_owned()], &["id".to_owned()]);
        let r = n.request("mcp", "POST", "http://h/mcp", &body, None);
        assert_eq!(r.body["id"], 7, "kept on request");
        assert!(r.body["params"]["metadata"].get("trace_id").is_none());
        let n = Normalizer::new(&["messages.*.name".to_owned()], &[]);
        let r = n.request(
            "openai",
            "POST",
            "http://h",
            &json!({"messages": [{"name": "a", "content": "x"}]}),
            None,
        );
        assert_eq!(r.body, json!({"messages": [{"content": "x"}]}));
    }

    #[test]
    fn secrets_are_blanked_in_bodies_urls_and_chunks() {
        let n = secret(vec!["sk-distinctive-123"]);
        let r = n.request(
            "huggingface",
            "POST",
            "https://user:pw@h.example/v1?key=abc&model=m&t=sk-distinctive-123",
            &json!({"api_key": "whatever", "note": "my key is sk-distinctive-123",
                    "nested": {"Authorization": "Bearer x"},
                    "sk-distinctive-123": "a secret as a key"}),
            Some(2),
        );
        let text = serde_json::to_string(&r).unwrap();
        for leaked in ["sk-distinctive-123", "whatever", "Bearer x", "abc", "pw@"] {
            assert!(!text.contains(leaked), "{leaked} in {text}");
        }
        assert!(r.endpoint.contains("model=m"), "{}", r.endpoint);
        assert_eq!(r.body["<redacted>"], "a secret as a key");
        let chunk = n.chunk(3, b"echo sk-distinctive-123".to_vec());
        assert_eq!(chunk.text.as_deref(), Some("echo <redacted>"));
    }

    /// Every byte a response keeps is blanked: its chunks, headers and break.
    #[test]
    fn a_response_is_blanked_in_its_chunks_headers_and_break() {
        let n = secret(vec!["sk-distinctive-123"]);
        let mut response = RecordedResponse {
            status: 401,
            headers: vec![("x-echo".into(), "sk-distinctive-123".into())],
            chunks: vec![
                Chunk::new(0, b"{\"error\": \"key sk-distinc".to_vec()),
                Chunk::new(4, b"tive-123 refused\"}".to_vec()),
            ],
            broke_off: Some("reset after sk-distinctive-123".into()),
        };
        n.redact_response(&mut response);
        let text = serde_json::to_string(&response).unwrap();
        assert!(!text.contains("sk-distinc"), "{text}");
        assert!(!text.contains("tive-123"), "{text}");
        assert_eq!(response.headers[0].1, "<redacted>");
        assert_eq!(
            response.broke_off.as_deref(),
            Some("reset after <redacted>")
        );
        // Without a redaction, nothing changes.
        let mut untouched = response.clone();
        Normalizer::default().redact_response(&mut untouched);
        assert_eq!(untouched, response);
    }
}
