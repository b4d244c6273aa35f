//! What a cassette keeps of a request: the volatile fields removed (they would never
//! match twice), the secrets blanked (cassettes are meant to be committed).

use serde_json::Value;

use crate::format::{Chunk, RecordedRequest};

/// The body fields left out of matching by default, as dotted paths (`*` is any key
/// or element): a JSON-RPC request's counter, request and trace ids, timestamps.
pub const VOLATILE_FIELDS: [&str; 6] = [
    "id",
    "request_id",
    "trace_id",
    "timestamp",
    "metadata.request_id",
    "metadata.trace_id",
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

/// How requests are normalized: which body fields are volatile, which values are
/// secrets. `[cassettes] ignore` adds fields, `[cassettes] keep` takes defaults away.
#[derive(Clone, PartialEq, Eq)]
pub struct Normalizer {
    ignored: Vec<Vec<String>>,
    secrets: Vec<String>,
}

/// Shows the ignored fields and how many secrets it blanks, never their values.
impl std::fmt::Debug for Normalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Normalizer")
            .field("ignored", &self.ignored)
            .field("secrets", &self.secrets.len())
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
            secrets: Vec::new(),
        }
    }

    /// Also blanks these values (the keys and `${VAR}` values of the run) wherever they
    /// appear: in bodies, URLs and recorded chunks. Values shorter than 4 characters
    /// are not taken (they would blank ordinary text).
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> Normalizer {
        self.secrets
            .extend(secrets.into_iter().filter(|s| s.chars().count() >= 4));
        // Longer first, so a secret that contains another is blanked whole.
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self
    }

    /// The request as a cassette keeps it.
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
        self.scrub_value(&mut body);
        RecordedRequest {
            connector: connector.to_owned(),
            endpoint: format!("{method} {}", self.scrub_text(&clean_url(url))),
            body,
            case: None,
            sample,
        }
    }

    /// A chunk of a response, with any known secret blanked.
    pub fn chunk(&self, at_ms: u64, bytes: Vec<u8>) -> Chunk {
        match String::from_utf8(bytes) {
            Ok(text) => Chunk::new(at_ms, self.scrub_text(&text).into_bytes()),
            Err(e) => Chunk::new(at_ms, e.into_bytes()),
        }
    }

    /// `text` with every known secret blanked.
    pub fn scrub_text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    fn scrub_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.scrub_text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_value(v)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if is_secret_field(key) && !v.is_null() {
                        *v = Value::String(REDACTED.to_owned());
                    } else {
                        self.scrub_value(v);
                    }
                }
            }
            _ => {}
        }
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

    #[test]
    fn debug_never_shows_a_secret() {
        let n = Normalizer::default().with_secrets(["sk-very-secret-1234".to_owned()]);
        let shown = format!("{n:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("secrets: 1"), "{shown}");
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
        let n = Normalizer::default().with_secrets(["sk-distinctive-123".to_owned()]);
        let r = n.request(
            "huggingface",
            "POST",
            "https://user:pw@h.example/v1?key=abc&model=m",
            &json!({"api_key": "whatever", "note": "my key is sk-distinctive-123",
                    "nested": {"Authorization": "Bearer x"}}),
            Some(2),
        );
        let text = serde_json::to_string(&r).unwrap();
        for leaked in ["sk-distinctive-123", "whatever", "Bearer x", "abc", "pw@"] {
            assert!(!text.contains(leaked), "{leaked} in {text}");
        }
        assert!(r.endpoint.contains("model=m"), "{}", r.endpoint);
        let chunk = n.chunk(3, b"echo sk-distinctive-123".to_vec());
        assert_eq!(chunk.text.as_deref(), Some("echo <redacted>"));
    }
}
