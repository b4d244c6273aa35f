//! `prill serve --replay DIR`: the recorded exchanges of neuro-san agents served back as
//! a neuro-san-compatible server, so that other tools can test against recorded agents.
//!
//! [`Recordings::read`] takes, from the cassette files of a folder
//! ([`prill_cassette`]), the exchanges whose endpoint is
//! `POST /api/v1/{agent}/streaming_chat` (recorded over http, https or MCP's
//! http transport alike), and those of `/api/v1/list` and `/api/v1/{agent}/function`
//! when some were recorded. A server built with
//! [`DemoServerBuilder::replay`](crate::DemoServerBuilder::replay) then answers:
//!
//! - `POST /api/v1/{agent}/streaming_chat` with the recorded answer whose request body
//!   is the same once normalized ([`Normalizer`]: volatile fields out), whichever case
//!   recorded it, and of the sample the `x-prill-sample` header names (any sample when it
//!   names none); the same request again gets the next recording of it, then the last
//!   again. The chunks stream at their recorded times from the request (or at once with
//!   [`Latency::Zero`]); a recording that broke off breaks off there too. A request
//!   nobody recorded is a `400` whose `{"error": …}` names the closest recorded request
//!   and how it differs; an agent the cassettes do not hold, a `404` saying so.
//! - `GET`/`POST /api/v1/list` with the recorded list, else the agents the cassettes
//!   hold (no description, no tags).
//! - `/api/v1/{agent}/function` with the recorded answer, else a `404`.
//! - `/`, `/healthz`, `/readyz`, `/livez` as the demo server does.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use prill_cassette::{Cassette, CassetteError, Exchange, Latency, Normalizer, RecordedRequest};
use serde_json::{Value, json};

use crate::body::{Body, BodyError, streamed};
use crate::routes::{error_response, json_response, read_body, status_only};
use crate::server::Shared;
use crate::timed::RequestBody;
use crate::{SAMPLE_HEADER, routes};

const CHAT_SUFFIX: &str = "/streaming_chat";
const FUNCTION_SUFFIX: &str = "/function";
const LIST_PATH: &str = "/api/v1/list";

/// The recorded exchanges of neuro-san agents that a replaying server answers with.
#[derive(Debug)]
pub struct Recordings {
    /// The `streaming_chat`, `list` and `function` exchanges, in recorded order.
    exchanges: Vec<Exchange>,
    latency: Latency,
    normalizer: Normalizer,
    /// The chats, case and connector aside (as the server matches them): with their
    /// samples, and without (for a request that names no sample). The same request
    /// again gets the next recording of it, then the last ([`Cassette::next`]).
    by_sample: Mutex<Cassette>,
    any_sample: Mutex<Cassette>,
}

impl Recordings {
    /// The recordings of neuro-san agents in the cassette files of `dir`, paced by
    /// `latency`.
    pub fn read(dir: &Path, latency: Latency) -> Result<Recordings, CassetteError> {
        let all = Cassette::read_dir(dir)?;
        let exchanges: Vec<Exchange> = all
            .exchanges()
            .iter()
            .filter(|e| {
                let path = path_of(&e.request.endpoint);
                path == LIST_PATH || agent_of(path, CHAT_SUFFIX).is_some() || {
                    agent_of(path, FUNCTION_SUFFIX).is_some()
                }
            })
            .cloned()
            .collect();
        let mut by_sample = Cassette::default();
        let mut any_sample = Cassette::default();
        for exchange in exchanges
            .iter()
            .filter(|e| agent_of(path_of(&e.request.endpoint), CHAT_SUFFIX).is_some())
        {
            let mut keyed = exchange.clone();
            keyed.request = canonical(&exchange.request, exchange.request.sample);
            by_sample.push(keyed.clone());
            keyed.request.sample = None;
            any_sample.push(keyed);
        }
        Ok(Recordings {
            exchanges,
            latency,
            normalizer: Normalizer::default(),
            by_sample: Mutex::new(by_sample),
            any_sample: Mutex::new(any_sample),
        })
    }

    /// The agents whose chats were recorded, sorted.
    pub fn agents(&self) -> Vec<String> {
        let names: BTreeSet<String> = self
            .exchanges
            .iter()
            .filter_map(|e| agent_of(path_of(&e.request.endpoint), CHAT_SUFFIX))
            .map(str::to_owned)
            .collect();
        names.into_iter().collect()
    }

    /// The first exchange recorded at `path`.
    fn recorded_at(&self, path: &str) -> Option<&Exchange> {
        self.exchanges
            .iter()
            .find(|e| path_of(&e.request.endpoint) == path)
    }

    /// The next recorded answer to a chat at `path` with the normalized `body`, of
    /// `sample` when given; else why there is none.
    fn chat(&self, path: &str, body: &Value, sample: Option<u32>) -> Result<Exchange, Miss> {
        let request = self.normalizer.request("http", "POST", path, body, sample);
        let recorded = if sample.is_some() {
            &self.by_sample
        } else {
            &self.any_sample
        };
        let mut recorded = recorded.lock().unwrap_or_else(|e| e.into_inner());
        let miss = match recorded.next(&canonical(&request, sample)) {
            Ok(exchange) => return Ok(exchange.clone()),
            Err(miss) => miss,
        };
        let agent = agent_of(path, CHAT_SUFFIX).unwrap_or(path);
        if !self.agents().iter().any(|a| a == agent) {
            let message = format!(
                "the cassettes hold no recording of agent `{agent}`; they hold: {}",
                self.agents().join(", ")
            );
            return Err(Miss::Agent(message));
        }
        Err(Miss::Request(miss.to_string()))
    }
}

/// Why no recording answers a chat.
enum Miss {
    /// The cassettes hold no chat with the agent: a 404.
    Agent(String),
    /// None with this request: a 400 naming the closest recorded request.
    Request(String),
}

/// `request` as the server matches it: any connector, any case, `sample`.
fn canonical(request: &RecordedRequest, sample: Option<u32>) -> RecordedRequest {
    let mut request = request.clone().in_case(None);
    request.connector = "http".to_owned();
    request.sample = sample;
    request
}

/// The path of an endpoint (`POST /api/v1/x/streaming_chat?q` -> `/api/v1/x/streaming_chat`).
fn path_of(endpoint: &str) -> &str {
    let path = endpoint.split_once(' ').map_or(endpoint, |(_, p)| p);
    path.split_once('?').map_or(path, |(p, _)| p)
}

/// The agent of `/api/v1/{agent}{suffix}`.
fn agent_of<'a>(path: &'a str, suffix: &str) -> Option<&'a str> {
    path.strip_prefix("/api/v1/")?
        .strip_suffix(suffix)
        .filter(|a| !a.is_empty())
}

/// Answers one request from `recordings`.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    recordings: Arc<Recordings>,
    request: Request<RequestBody>,
) -> Response<Body> {
    let started = Instant::now();
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    match path.as_str() {
        "/" | "/healthz" | "/readyz" | "/livez" => routes::health(),
        LIST_PATH => match recordings.recorded_at(LIST_PATH) {
            Some(exchange) => replayed(&shared, exchange, started, Latency::Zero),
            None => {
                let agents: Vec<Value> = recordings
                    .agents()
                    .iter()
                    .map(|a| json!({"agent_name": a, "description": "", "tags": []}))
                    .collect();
                json_response(StatusCode::OK, &json!({"agents": agents}))
            }
        },
        _ if agent_of(&path, CHAT_SUFFIX).is_some() => {
            if method != Method::POST {
                return status_only(StatusCode::METHOD_NOT_ALLOWED);
            }
            let sample = request
                .headers()
                .get(SAMPLE_HEADER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u32>().ok());
            let bytes = match read_body(request.into_body()).await {
                Ok(bytes) => bytes,
                Err(response) => return response,
            };
            let body = match serde_json::from_slice::<Value>(&bytes) {
                Ok(body @ Value::Object(_)) => body,
                _ => return error_response(StatusCode::BAD_REQUEST, "Invalid JSON format"),
            };
            match recordings.chat(&path, &body, sample) {
                Ok(exchange) => replayed(&shared, &exchange, started, recordings.latency),
                Err(Miss::Agent(message)) => error_response(StatusCode::NOT_FOUND, &message),
                Err(Miss::Request(message)) => error_response(StatusCode::BAD_REQUEST, &message),
            }
        }
        _ => match recordings.recorded_at(&path) {
            Some(exchange) if agent_of(&path, FUNCTION_SUFFIX).is_some() => {
                replayed(&shared, exchange, started, Latency::Zero)
            }
            _ => status_only(StatusCode::NOT_FOUND),
        },
    }
}

/// `exchange`'s response: its status and headers, its chunks at their times from
/// `started` (or at once), then its end or its break.
fn replayed(
    shared: &Arc<Shared>,
    exchange: &Exchange,
    started: Instant,
    latency: Latency,
) -> Response<Body> {
    let recorded = &exchange.response;
    let chunks: Vec<(u64, Bytes)> = recorded
        .chunks
        .iter()
        .map(|c| (c.at_ms, Bytes::from(c.bytes().unwrap_or_default())))
        .collect();
    let broke_off = recorded.broke_off.is_some();
    let items = chunks.into_iter().map(Some).chain([None]);
    let stream = futures_util::stream::iter(items).filter_map(move |item| async move {
        match item {
            Some((at_ms, bytes)) => {
                if latency == Latency::Recorded {
                    let at = started + Duration::from_millis(at_ms);
                    tokio::time::sleep_until(at.into()).await;
                }
                Some(Ok(bytes))
            }
            None if broke_off => Some(Err(BodyError::Recorded)),
            None => None,
        }
    });
    let mut response = Response::new(streamed(shared, Box::pin(stream), true));
    *response.status_mut() = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::OK);
    for (name, value) in &recorded.headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    if !response.headers().contains_key(CONTENT_TYPE) {
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json-lines"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_name_their_agents() {
        assert_eq!(
            path_of("POST /api/v1/deep/echo/streaming_chat?x=1"),
            "/api/v1/deep/echo/streaming_chat"
        );
        assert_eq!(
            agent_of("/api/v1/deep/echo/streaming_chat", CHAT_SUFFIX),
            Some("deep/echo")
        );
        assert_eq!(agent_of("/api/v1/streaming_chat", CHAT_SUFFIX), None);
        assert_eq!(agent_of("/v1/chat/completions", CHAT_SUFFIX), None);
    }
}
