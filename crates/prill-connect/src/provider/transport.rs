//! [`Transport`]: the http machinery every model provider shares.
//!
//! One `POST` of a JSON body ([`Transport::post_json`]) under the provider's [`Limits`],
//! tried again by the [`RetryPolicy`] after a connection that could not be made, and
//! after `408`, `409`, `429` and any `5xx` ([`Statuses::Provider`], honouring
//! `Retry-After`). Any other error status is a [`ConnectError::Status`] with the start
//! of the provider's own error type and message (or the start of the body) and, after
//! retries, how many attempts were made; a `401`, and a `403` about the credentials
//! rather than about access to a model, also says the key was refused and names the
//! variable to check. The successful response is handed back for the caller to read:
//! whole ([`Transport::read_json`]) or as it streams ([`Transport::read_sse`] for
//! server-sent events, which [`SseDecoder`] decodes, and [`Transport::read_ndjson`] for
//! JSON lines), each recording the time to the first byte from the start of the attempt
//! that got the answer. A body whose `Content-Type` ([`body_kind`]) is not what was
//! asked for is an error that names it ([`Transport::unexpected_body`]).
//!
//! A call without a timeout of its own gets the transport's default
//! ([`Transport::limit`]), and the idle limit of the [`HttpOptions`] ends a call during
//! which nothing arrived for that long.
//!
//! With a model response cache ([`Transport::with_cache`], `crate::cache`), a request
//! at temperature 0 that was answered before is answered from it at once, before any
//! permit or rate slot is taken ([`Posted::cached`]), and the successful answer to one
//! that was not is kept there as it streams.
//!
//! Header values never appear in an error or a log line: they hold keys. Every value is
//! marked sensitive before sending, and a key a server echoes back in an error body is
//! blanked out of the message.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use prill_spec::redact::Redactor;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Response, Url};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use super::errors::{provider_said, refused_credentials};
pub use super::sse::{SseDecoder, SseEvent};
use super::{Limits, ProviderKind};
use crate::cache::{ModelCache, Pending};
use crate::cassette::Latency;
use crate::cassette::live::{replayed, tee};
use crate::decode::LineDecoder;
use crate::error::{ConnectError, cut};
use crate::http::{
    Answered, HttpClient, HttpOptions, decode_error, error_body, parse_json, read_body,
};
use crate::retry::{RetryPolicy, Statuses};
use crate::with_timeout;

/// The headers that carry keys, whose values are blanked out of error bodies.
const KEY_HEADERS: [&str; 6] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-amz-security-token",
    "x-goog-api-key",
];

/// The shared http client of one provider: retries, limits, time limits and the body
/// cap.
///
/// Cheap to clone; clones share the connection pool and the limits.
#[derive(Debug, Clone)]
pub struct Transport {
    http: HttpClient,
    /// The model response cache, when answers to requests at temperature 0 are kept.
    cache: Option<ModelCache>,
    /// The provider's concurrency and rate limits.
    pub limits: Limits,
    /// The variable a refused key comes from, named by 401 and 403 errors.
    pub key_env: Option<std::borrow::Cow<'static, str>>,
}

/// A successful response, with the permit of the provider's [`Limits`] that the call
/// holds until it is dropped, and when the attempt that got it started.
#[derive(Debug)]
pub struct Posted {
    /// The response (a success status); read it with [`Transport::read_json`],
    /// [`Transport::read_sse`] or [`Transport::read_ndjson`].
    pub response: Response,
    /// When the attempt that got the response was made: the origin of
    /// [`crate::Timings`] (waiting out a 429 is not the model's latency).
    pub started: Instant,
    /// The concurrency permit, held while the response is read (none for an answer
    /// from the cache, which takes no slot).
    pub permit: Option<OwnedSemaphorePermit>,
    /// Whether the answer came from the model response cache ([`Transport::with_cache`])
    /// rather than from the provider.
    pub cached: bool,
    /// A live answer the cache is to keep once the caller has read it and found it a
    /// good answer ([`Pending::keep`]); nothing for an answer that is not cached.
    pub pending: Pending,
}

/// What a response's `Content-Type` says its body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyKind {
    /// `text/event-stream`.
    EventStream,
    /// `application/json`, or any `+json` type.
    Json,
    /// JSON lines: `application/x-ndjson`, `application/jsonl`, `application/json-lines`.
    JsonLines,
    /// No `Content-Type`: the body is read as what was asked for.
    Unlabelled,
    /// Anything else (`text/html`, say): the media type, lowercase.
    Other(String),
}

/// What the `Content-Type` among a response's `headers` says its body is.
pub fn body_kind(headers: &HeaderMap) -> BodyKind {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return BodyKind::Unlabelled;
    };
    let text = String::from_utf8_lossy(value.as_bytes()).to_ascii_lowercase();
    let media = text.split(';').next().unwrap_or_default().trim().to_owned();
    match media.as_str() {
        "" => BodyKind::Unlabelled,
        "text/event-stream" => BodyKind::EventStream,
        "application/x-ndjson"
        | "application/ndjson"
        | "application/jsonl"
        | "application/x-jsonl"
        | "application/json-lines"
        | "application/jsonlines"
        | "application/x-jsonlines" => BodyKind::JsonLines,
        m if m == "application/json" || (m.starts_with("application/") && m.ends_with("+json")) => {
            BodyKind::Json
        }
        _ => BodyKind::Other(media),
    }
}

/// How to read a successful answer, by what was asked for and what its `Content-Type`
/// says came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// As server-sent events: a stream was asked for and came (or the body is not
    /// labelled).
    Events,
    /// As one JSON body: asked for, or a whole answer to a request for a stream (which
    /// the caller must then check is an answer, [`not_an_answer`]).
    Whole,
    /// Not at all: the body is not what was asked for ([`Transport::unexpected_body`]).
    Unexpected,
}

impl Reading {
    /// How to read an answer with `headers` to a request for a stream (`stream`) or for
    /// a whole JSON body.
    pub fn of(stream: bool, headers: &HeaderMap) -> Reading {
        match (stream, body_kind(headers)) {
            (true, BodyKind::EventStream | BodyKind::Unlabelled) => Reading::Events,
            (_, BodyKind::Json) | (false, BodyKind::Unlabelled) => Reading::Whole,
            _ => Reading::Unexpected,
        }
    }
}

/// The error for a JSON body, sent to a request for a stream, that is not `what` the
/// API answers whole (`a chat completion`, say).
pub fn not_an_answer(peer: &str, what: &str, value: &Value) -> ConnectError {
    ConnectError::protocol(
        peer,
        format!(
            "asked for text/event-stream, the answer is application/json and not {what}: {}",
            cut(&value.to_string(), 120)
        ),
    )
}

/// How a server-sent event stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEnd {
    /// The time to the first byte, from the start of the attempt.
    pub first_byte: Option<Duration>,
    /// Whether the stream said it was over with `data: [DONE]`.
    pub done: bool,
}

impl Transport {
    /// A transport for `kind` with `options` (TLS, retries, body cap, time limits) and
    /// `limits`; refused keys point at [`ProviderKind::key_env`].
    pub fn new(
        kind: ProviderKind,
        options: &HttpOptions,
        limits: Limits,
    ) -> Result<Transport, ConnectError> {
        Ok(Transport {
            http: HttpClient::new(options, kind.name())?,
            cache: None,
            limits,
            key_env: kind.key_env().map(std::borrow::Cow::Borrowed),
        })
    }

    /// Answers requests at temperature 0 from `cache` when it has them, and keeps the
    /// successful answers the provider gives to the others (`None`: no cache).
    pub fn with_cache(self, cache: Option<ModelCache>) -> Transport {
        Transport { cache, ..self }
    }

    /// A transport with the default options and no limits.
    pub fn default_for(kind: ProviderKind) -> Result<Transport, ConnectError> {
        Transport::new(kind, &HttpOptions::default(), Limits::none())
    }

    /// Names another variable in 401 and 403 errors (Bedrock's SigV4 keys, say).
    pub fn with_key_env(
        self,
        key_env: Option<impl Into<std::borrow::Cow<'static, str>>>,
    ) -> Transport {
        Transport {
            key_env: key_env.map(Into::into),
            ..self
        }
    }

    /// The transport of another kind of connector, as the cassettes key its requests
    /// (a LangGraph server speaks through a provider's transport: `langgraph`).
    pub fn with_connector(self, connector: &str) -> Transport {
        let mut http = self.http;
        http.connector = connector.into();
        Transport { http, ..self }
    }

    /// `GET url` sent once (no retry, no limits), whatever its status: a probe. It goes
    /// through the cassettes like every request.
    pub async fn get_once(&self, url: Url, peer_label: &str) -> Result<Response, ConnectError> {
        self.http
            .once(peer_label, || self.http.client.get(url.clone()))
            .await
    }

    /// `GET url` with `headers`, retried as a provider's requests are (a read has no
    /// side effects), and its JSON answer; a status other than 2xx is a
    /// [`ConnectError::Status`]. It goes through the cassettes like every request.
    pub async fn get_json(
        &self,
        url: Url,
        headers: HeaderMap,
        peer_label: &str,
    ) -> Result<Value, ConnectError> {
        let answered = self
            .http
            .attempt(peer_label, Statuses::Provider, || {
                self.http.client.get(url.clone()).headers(headers.clone())
            })
            .await?;
        let status = answered.response.status();
        if !status.is_success() {
            let body = answered.response.text().await.unwrap_or_default();
            return Err(ConnectError::Status {
                server: peer_label.to_owned(),
                status: status.as_u16(),
                body: cut(&body, 300),
                attempts: answered.attempts,
            });
        }
        let (value, _) = self
            .read_json(answered.response, Instant::now(), peer_label)
            .await?;
        Ok(value)
    }

    /// The reqwest client (rustls with `ring`, no redirects).
    pub fn client(&self) -> &reqwest::Client {
        &self.http.client
    }

    /// The retry policy.
    pub fn retry(&self) -> RetryPolicy {
        self.http.retry
    }

    /// The cap on a response body, in bytes.
    pub fn max_body_bytes(&self) -> u64 {
        self.http.max_body_bytes
    }

    /// The limit on a call: the request's own, else the transport's default.
    pub fn limit(&self, requested: Option<Duration>) -> Option<Duration> {
        self.http.limit(requested)
    }

    /// Posts `body` to `url` with `headers`, within `timeout` (retries included), and
    /// returns the successful response. The [`Limits`] permit is held until the response
    /// head arrived; [`Transport::post_json_held`] keeps it while the body is read.
    pub async fn post_json(
        &self,
        url: Url,
        headers: HeaderMap,
        body: &Value,
        timeout: Option<Duration>,
        peer_label: &str,
    ) -> Result<Response, ConnectError> {
        let posted = self
            .post_json_held(url, headers, body, timeout, peer_label)
            .await?;
        Ok(posted.response)
    }

    /// As [`Transport::post_json`], returning the permit and the start time with the
    /// response.
    pub async fn post_json_held(
        &self,
        url: Url,
        headers: HeaderMap,
        body: &Value,
        timeout: Option<Duration>,
        peer_label: &str,
    ) -> Result<Posted, ConnectError> {
        let key = self.cache.as_ref().and_then(|cache| {
            let sample = prill_target::scope::current().map(|s| s.sample);
            Some((
                cache,
                cache.key(&self.http.connector, url.as_str(), body, sample)?,
            ))
        });
        if let Some((cache, key)) = &key
            && let Some(recorded) = cache.lookup(key)
        {
            let started = Instant::now();
            return Ok(Posted {
                response: replayed(&recorded, started, Latency::Zero, peer_label)?,
                started,
                permit: None,
                cached: true,
                pending: Pending::default(),
            });
        }
        // Shared, not copied, by each attempt.
        let body = bytes::Bytes::from(
            serde_json::to_vec(body)
                .map_err(|e| ConnectError::config(format!("cannot encode the request: {e}")))?,
        );
        let mut headers = headers;
        let secrets = key_secrets(&headers);
        for value in headers.values_mut() {
            value.set_sensitive(true);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        with_timeout(peer_label, timeout, async {
            let permit = self.limits.in_flight().await;
            let answered = self
                .http
                .attempt_paced(
                    peer_label,
                    Statuses::Provider,
                    || self.limits.pace(),
                    || {
                        self.http
                            .client
                            .post(url.clone())
                            .headers(headers.clone())
                            .body(body.clone())
                    },
                )
                .await?;
            if !answered.response.status().is_success() {
                return Err(self.status_error(answered, peer_label, &secrets).await);
            }
            let pending = match key {
                Some((cache, key)) => Pending::new(cache.clone(), key).hiding(&secrets),
                None => Pending::default(),
            };
            let response = match pending.collect() {
                Some(collect) => tee(answered.response, answered.started, collect),
                None => answered.response,
            };
            Ok(Posted {
                response,
                started: answered.started,
                permit,
                cached: false,
                pending,
            })
        })
        .await
    }

    /// The error for a response with an error status: what the provider said (its own
    /// error type and message, else the start of the body), with any key blanked out,
    /// and for refused credentials (every 401, a 403 about the credentials) the variable
    /// to check.
    async fn status_error(
        &self,
        answered: Answered,
        peer: &str,
        secrets: &Redactor,
    ) -> ConnectError {
        let Answered {
            response, attempts, ..
        } = answered;
        let status = response.status();
        let aws_type = response
            .headers()
            .get("x-amzn-errortype")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let body = error_body(response).await;
        // The key whole, and a part of it as a provider quotes one it refused
        // (`Incorrect API key provided: sk-abcd****wxyz`).
        let raw = secrets.string(String::from_utf8_lossy(&body).into_owned());
        let said = provider_said(aws_type.as_deref(), &raw);
        let mut text = match &said {
            Some(said) => said.to_string(),
            None => raw.trim().to_owned(),
        };
        if refused_credentials(status, said.as_ref()) {
            let check = match &self.key_env {
                Some(var) => format!("check {var}"),
                None => "check the provider's credentials".to_owned(),
            };
            text = format!("{text}; the key was refused: {check}");
        }
        ConnectError::Status {
            server: peer.to_owned(),
            status: status.as_u16(),
            body: text,
            attempts,
        }
    }

    /// The error for a successful response whose body is not what was `asked` for
    /// (`text/event-stream`, `application/json`): names the `Content-Type` it has and
    /// shows the start of the body.
    pub async fn unexpected_body(
        &self,
        response: Response,
        peer: &str,
        asked: &str,
    ) -> ConnectError {
        let got = match body_kind(response.headers()) {
            BodyKind::Other(media) => media,
            BodyKind::EventStream => "text/event-stream".to_owned(),
            BodyKind::Json => "application/json".to_owned(),
            BodyKind::JsonLines => "JSON lines".to_owned(),
            BodyKind::Unlabelled => "a body with no Content-Type".to_owned(),
        };
        let body = error_body(response).await;
        let shown = cut(String::from_utf8_lossy(&body).trim(), 120);
        ConnectError::protocol(
            peer,
            format!("asked for {asked}, the answer is {got}: {shown}"),
        )
    }

    /// Reads a whole JSON body (at most the body cap); returns it with the time to its
    /// first byte, measured from `started`.
    pub async fn read_json(
        &self,
        response: Response,
        started: Instant,
        peer: &str,
    ) -> Result<(Value, Option<Duration>), ConnectError> {
        let limit = self.http.max_body_bytes;
        let (body, first) = read_body(response, peer, limit, self.http.idle).await?;
        // A whole body arrives at once for timing purposes: the first byte is when it began.
        let first_byte = first.map(|at| at.saturating_duration_since(started));
        Ok((parse_json(&body, peer)?, first_byte))
    }

    /// Reads a server-sent event stream, handing each event to `on_event` as it
    /// arrives, until the stream ends, an event's data is `[DONE]` (not handed on), or
    /// `on_event` says [`Flow::Stop`].
    ///
    /// A stream that ends mid-event (a line, or an event, it did not end) is an error:
    /// the spec discards that event, so the answer was cut short ([`SseDecoder::finish`]).
    pub async fn read_sse(
        &self,
        response: Response,
        started: Instant,
        peer: &str,
        mut on_event: impl FnMut(SseEvent) -> Result<Flow, ConnectError>,
    ) -> Result<SseEnd, ConnectError> {
        let limit = self.http.max_body_bytes;
        let mut decoder = SseDecoder::new(limit);
        let mut end = SseEnd {
            first_byte: None,
            done: false,
        };
        let mut stream = response.bytes_stream();
        let too_large = || ConnectError::TooLarge {
            peer: peer.to_owned(),
            limit,
        };
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.http.broke_off(&e, peer, decoder.received()))?;
            if end.first_byte.is_none() && !chunk.is_empty() {
                end.first_byte = Some(started.elapsed());
            }
            for event in decoder.feed(&chunk).ok_or_else(too_large)? {
                if event.data.trim() == "[DONE]" {
                    end.done = true;
                    return Ok(end);
                }
                if on_event(event)? == Flow::Stop {
                    return Ok(end);
                }
            }
        }
        match decoder.finish() {
            Some(rest) => Err(ended_mid_event(peer, &rest)),
            None => Ok(end),
        }
    }

    /// Reads a JSON-lines stream, handing each value to `on_value` as it arrives, until
    /// the stream ends or `on_value` says [`Flow::Stop`]. Returns the time to the first
    /// byte, from `started`.
    pub async fn read_ndjson(
        &self,
        response: Response,
        started: Instant,
        peer: &str,
        mut on_value: impl FnMut(Value) -> Result<Flow, ConnectError>,
    ) -> Result<Option<Duration>, ConnectError> {
        let mut decoder = LineDecoder::new(self.http.max_body_bytes);
        let mut first_byte = None;
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.http.broke_off(&e, peer, decoder.received()))?;
            if first_byte.is_none() && !chunk.is_empty() {
                first_byte = Some(started.elapsed());
            }
            for value in decoder.feed(&chunk).map_err(|e| decode_error(e, peer))? {
                if on_value(value)? == Flow::Stop {
                    return Ok(first_byte);
                }
            }
        }
        for value in decoder.finish().map_err(|e| decode_error(e, peer))? {
            if on_value(value)? == Flow::Stop {
                break;
            }
        }
        Ok(first_byte)
    }
}

/// The error for a server-sent event stream that ended mid-event, with what the event
/// it cut held so far (`rest`, [`SseDecoder::finish`]).
fn ended_mid_event(peer: &str, rest: &SseEvent) -> ConnectError {
    let mut message = "the stream ended mid-event (no blank line after its last lines), \
                       which discards that event: the answer was cut short"
        .to_owned();
    if !rest.data.trim().is_empty() {
        message.push_str(&format!(
            "; its data so far: {}",
            cut(rest.data.trim(), 120)
        ));
    }
    ConnectError::protocol(peer, message)
}

/// The keys the key headers of a request hold, to blank out of an error body and of
/// what cassettes and the model cache keep: whole, after a `Bearer ` scheme, and in
/// part ([`Redactor::secret`]).
pub(crate) fn key_secrets(headers: &HeaderMap) -> Redactor {
    let mut secrets = Redactor::default();
    headers
        .iter()
        .filter(|(name, _)| KEY_HEADERS.contains(&name.as_str()))
        .filter_map(|(_, v)| v.to_str().ok())
        .for_each(|key| secrets.secret("<redacted>", key));
    secrets
}

/// Whether to read on after an event or a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next one.
    Continue,
    /// The answer is complete; stop reading.
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_told_apart() {
        let kind = |value: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(value) = value {
                headers.insert(CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
            }
            body_kind(&headers)
        };
        assert_eq!(
            kind(Some("text/event-stream; charset=utf-8")),
            BodyKind::EventStream
        );
        assert_eq!(kind(Some("Application/JSON")), BodyKind::Json);
        assert_eq!(kind(Some("application/problem+json")), BodyKind::Json);
        assert_eq!(kind(Some("application/x-ndjson")), BodyKind::JsonLines);
        assert_eq!(kind(None), BodyKind::Unlabelled);
        assert_eq!(
            kind(Some("text/html; charset=UTF-8")),
            BodyKind::Other("text/html".into())
        );
    }

    #[test]
    fn keys_are_recognised_in_header_values() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            HeaderValue::from_static("Bearer sk-test-1234567890"),
        );
        headers.insert("x-api-key", HeaderValue::from_static("abc"));
        headers.insert(
            "x-other",
            HeaderValue::from_static("xo-other-value-abcdefgh"),
        );
        let secrets = key_secrets(&headers);
        assert_eq!(
            secrets.text("Bearer sk-test-1234567890; sk-test-****7890; abc; abcd"),
            "Bearer <redacted>; <redacted>****<redacted>; abc; abcd"
        );
        assert_eq!(secrets.text("abc"), "<redacted>");
        assert_eq!(
            secrets.text("xo-other-value-abcdefgh"),
            "xo-other-value-abcdefgh"
        );
    }
}
