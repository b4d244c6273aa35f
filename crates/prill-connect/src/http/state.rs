//! The state of an http agent's environment when a conversation is over
//! (`state_endpoint`, read for `expect_state`): a `GET` of a path on the agent's
//! server, or of an http(s) URL, with the conversation's headers, through the same
//! client as its chats (so cassettes record and replay it), its body JSON.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Url;
use serde_json::Value;

use super::{NeuroSanHttp, metadata_headers, parse_json};
use crate::error::ConnectError;
use crate::server::{endpoint, label};
use crate::with_timeout;

impl NeuroSanHttp {
    /// The JSON body of `GET endpoint` (a path on this server, its query kept, or an
    /// http(s) URL), sent with `metadata` as headers, within `limit` (else the
    /// connector's default). Any status but a success is an error.
    pub(crate) async fn state(
        &self,
        endpoint_text: &str,
        metadata: &BTreeMap<String, String>,
        limit: Option<Duration>,
    ) -> Result<Value, ConnectError> {
        let inner = &self.inner;
        let url = state_url(&inner.base, endpoint_text)?;
        let peer = label(&url);
        let headers = metadata_headers(metadata)?;
        let exchange = async {
            let answered = inner
                .http
                .send(&peer, None, || {
                    inner.http.client.get(url.clone()).headers(headers.clone())
                })
                .await?;
            let body = inner.http.read_body(answered.response, &peer).await?;
            parse_json(&body, &peer).map_err(|e| match e {
                ConnectError::Protocol { peer, message } => ConnectError::Protocol {
                    peer,
                    message: format!(
                        "the state endpoint {endpoint_text} did not answer JSON: {message}"
                    ),
                },
                other => other,
            })
        };
        with_timeout(&peer, inner.http.limit(limit), exchange).await
    }
}

/// The URL `text` names: a path (with its query) under `base`, or an http(s) URL.
fn state_url(base: &Url, text: &str) -> Result<Url, ConnectError> {
    if let Some(path) = text.strip_prefix('/') {
        let (path, query) = match path.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (path, None),
        };
        let mut url = endpoint(base, &[path]);
        url.set_query(query);
        return Ok(url);
    }
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
        _ => Err(ConnectError::config(format!(
            "`state_endpoint` {text} is neither a path on the agent's server nor an http(s) URL"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_under_the_server_and_a_url_is_itself() {
        let base = Url::parse("http://127.0.0.1:8080/prefix").unwrap();
        assert_eq!(
            state_url(&base, "/shop/state?order=W1").unwrap().as_str(),
            "http://127.0.0.1:8080/prefix/shop/state?order=W1"
        );
        assert_eq!(
            state_url(&base, "https://state.example/db")
                .unwrap()
                .as_str(),
            "https://state.example/db"
        );
        assert!(state_url(&base, "ftp://x/y").is_err());
    }
}
