//! The seam between [`Cassettes`] and the http client every connector and provider
//! sends through (`HttpClient::attempt_paced`): a request keyed as the cassettes match
//! it, answered from a recording, or its live answer kept as it streams.

use std::time::Instant;

use prill_cassette::{RecordedRequest, jsonrpc};
use prill_spec::redact::Redactor;
use prill_target::scope;
use reqwest::Response;
use serde_json::Value;

use super::live;
use super::store::Cassettes;
use crate::error::ConnectError;

/// A request as the cassettes key it, with the body that was sent.
#[derive(Debug, Clone)]
pub(crate) struct Keyed {
    /// The key: connector, endpoint, normalized body, case and sample.
    pub(crate) key: RecordedRequest,
    /// The body as sent: JSON, else a string, else `Value::Null`.
    pub(crate) body: Value,
    /// The keys its headers carry, blanked from what is recorded of it.
    pub(crate) secrets: Redactor,
}

/// `request`, sent by `connector`, as the cassettes key it. Headers are never part of
/// the key: they hold keys, signatures and other volatile values.
pub(crate) fn key(cassettes: &Cassettes, connector: &str, request: &reqwest::Request) -> Keyed {
    let body = match request.body().and_then(reqwest::Body::as_bytes) {
        None | Some([]) => Value::Null,
        Some(bytes) => serde_json::from_slice(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned())),
    };
    let key = cassettes.request(
        connector,
        request.method().as_str(),
        request.url().as_str(),
        &body,
    );
    let secrets = crate::provider::transport::key_secrets(request.headers());
    Keyed { key, body, secrets }
}

/// The recorded answer to `keyed`, as a response that begins now (with when), when the
/// cassettes replay it; `Ok(None)` to go live. A JSON-RPC answer is given the id of the
/// request sent.
pub(crate) fn replay(
    cassettes: &Cassettes,
    keyed: &Keyed,
    server: &str,
) -> Result<Option<(Response, Instant)>, ConnectError> {
    let Some(exchange) = cassettes.replay(&keyed.key)? else {
        tracing::debug!(%server, endpoint = %keyed.key.endpoint, "sent live, not replayed from a cassette");
        return Ok(None);
    };
    let recorded = match jsonrpc::request_id(&keyed.body) {
        Some(id) => jsonrpc::answering(&exchange.response, id),
        None => exchange.response,
    };
    let started = Instant::now();
    let response = live::replayed(&recorded, started, cassettes.latency(), server)?;
    tracing::debug!(%server, endpoint = %keyed.key.endpoint, "answered from a cassette");
    Ok(Some((response, started)))
}

/// `response` (whose attempt began at `started`) unchanged for its reader, written to
/// the cassettes with `keyed`'s key once its body ends, breaks off or is dropped, in
/// the file of the sample that sent it, blanked of the run's secrets and of the keys
/// its headers carried. A write that fails is kept by the cassettes
/// ([`Cassettes::failure`]).
pub(crate) fn record(
    cassettes: &Cassettes,
    keyed: Keyed,
    response: Response,
    started: Instant,
) -> Response {
    let cassettes = cassettes.clone();
    let sample = scope::current();
    let key = keyed.key;
    let secrets = keyed.secrets;
    live::tee(
        response,
        started,
        Box::new(move |recorded| {
            let endpoint = key.endpoint.clone();
            match cassettes.record_hiding(sample.as_ref(), key, recorded, &secrets) {
                Ok(()) => tracing::debug!(%endpoint, "recorded into a cassette"),
                Err(error) => tracing::warn!(%error, "a cassette could not be written"),
            }
        }),
    )
}
