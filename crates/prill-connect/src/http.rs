//! [`NeuroSanHttp`]: a neuro-san server over http or https (`shared/research/neuro-san.md`
//! §4.1 to §4.4), and the request machinery MCP shares with it.
//!
//! A chat is `POST {base}/api/v1/{agent}/streaming_chat` with the [`chat_request`] body
//! and the metadata as headers; the JSON-lines answer is decoded as it arrives by a
//! [`LineDecoder`] and the answer picked by a [`Collector`]. The exchange ends at the
//! final message ([`Collector::ended`]): the rest of the stream is never waited for. A
//! stream that ends without one is a protocol error, save the `{}` neuro-san answers to
//! a request without text.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use serde_json::Value;

use crate::cassette::{Cassettes, seam};
use crate::decode::{DEFAULT_MAX_BODY_BYTES, DecodeError, LineDecoder};
use crate::error::ConnectError;
use crate::retry::{Attempt, RetryPolicy, Statuses};
use crate::server::{endpoint, label, with_scheme};
use crate::tls::{TlsOptions, client_config, explain};
use crate::types::{AgentFunction, AgentInfo, AgentRequest, AgentResponse, Timings};
use crate::wire::{Collector, chat_request};
use crate::{BoxFuture, Connector, Conversation, DEFAULT_TIMEOUT, with_timeout};

mod state;

/// The limit on `list_agents` and `describe`, which are quick for any live server.
pub const INFO_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of an error response's body is kept.
const ERROR_BODY_KEPT: usize = 4096;

/// How http, https and MCP connections (and model providers) behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// Certificate verification.
    pub tls: TlsOptions,
    /// When to try a request again.
    pub retry: RetryPolicy,
    /// The cap on a response body, in bytes ([`DEFAULT_MAX_BODY_BYTES`]).
    pub max_body_bytes: u64,
    /// The limit on making one connection (10s).
    pub connect_timeout: Duration,
    /// The limit on a whole exchange, retries included, when the request sets none
    /// ([`DEFAULT_TIMEOUT`]; `None` waits as long as it takes).
    pub timeout: Option<Duration>,
    /// The limit on silence: from sending a request to the head of its answer, and
    /// between any two pieces of the body. Off (`None`) by default: a `MINIMAL`
    /// neuro-san stream is silent until the agent is done.
    pub idle_timeout: Option<Duration>,
    /// The run's cassettes: every exchange is answered from them or recorded into them
    /// (`prill run --record` / `--replay`). None (the default): every exchange is live.
    pub cassettes: Option<Cassettes>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            tls: TlsOptions::default(),
            retry: RetryPolicy::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            connect_timeout: Duration::from_secs(10),
            timeout: Some(DEFAULT_TIMEOUT),
            idle_timeout: None,
            cassettes: None,
        }
    }
}

/// An http client with the retry rules and the time limits, shared by the http and MCP
/// connectors and the model providers.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    pub(crate) client: reqwest::Client,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_body_bytes: u64,
    pub(crate) timeout: Option<Duration>,
    pub(crate) idle: Option<Duration>,
    /// The connector's kind, as the cassettes key its requests (`http`, `mcp`,
    /// `openai`, `langgraph`, ...).
    pub(crate) connector: Arc<str>,
    pub(crate) cassettes: Option<Cassettes>,
}

/// What `prill` says it is.
const USER_AGENT: &str = concat!("prill/", env!("CARGO_PKG_VERSION"));

/// A response, with when the attempt that got it began and how many attempts it took.
#[derive(Debug)]
pub(crate) struct Answered {
    pub(crate) response: Response,
    /// When the last attempt began: the origin of the exchange's [`Timings`], so that
    /// waiting out a 429 never counts as the agent's latency.
    pub(crate) started: Instant,
    /// How many times the request was sent.
    pub(crate) attempts: u32,
}

impl HttpClient {
    /// The client of `connector` (its kind, for the cassettes' keys).
    pub(crate) fn new(options: &HttpOptions, connector: &str) -> Result<HttpClient, ConnectError> {
        let tls = client_config(&options.tls)?;
        // reqwest's defaults stand for the rest: the proxy variables (`HTTPS_PROXY`,
        // `NO_PROXY`, ...), TCP keepalive, and idle pooled connections dropped after 90 s.
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(options.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(USER_AGENT);
        if let Some(idle) = options.idle_timeout {
            builder = builder.read_timeout(idle);
        }
        let client = builder
            .build()
            .map_err(|e| ConnectError::config(format!("cannot set up the http client: {e}")))?;
        Ok(HttpClient {
            client,
            retry: options.retry,
            max_body_bytes: options.max_body_bytes,
            timeout: options.timeout,
            idle: options.idle_timeout,
            connector: connector.into(),
            cassettes: options.cassettes.clone(),
        })
    }

    /// The limit on an exchange: the request's own, else the default.
    pub(crate) fn limit(&self, requested: Option<Duration>) -> Option<Duration> {
        requested.or(self.timeout)
    }

    /// Sends the request `build` makes, trying again by the [`RetryPolicy`] after a
    /// connection that could not be made and after the error `statuses` retry (see
    /// [`crate::retry`]). Returns the last answer, whatever its status.
    pub(crate) async fn attempt(
        &self,
        server: &str,
        statuses: Statuses,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Answered, ConnectError> {
        self.attempt_paced(server, statuses, || async {}, build)
            .await
    }

    /// [`HttpClient::attempt`], awaiting `pace` before each attempt (a provider's rate
    /// slot: a retried request is one more request the provider sees).
    ///
    /// This is the seam every http exchange goes through: with cassettes, a request
    /// they replay is answered from its recording (at once, no pacing, no network, one
    /// attempt), and the final answer of one that goes live is recorded as it streams.
    pub(crate) async fn attempt_paced<P: Future<Output = ()>>(
        &self,
        server: &str,
        statuses: Statuses,
        pace: impl Fn() -> P,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Answered, ConnectError> {
        let Some(cassettes) = &self.cassettes else {
            return self.live(server, statuses, self.retry, pace, build).await;
        };
        let request = build()
            .build()
            .map_err(|e| self.request_error(&e, server, 1))?;
        let keyed = seam::key(cassettes, &self.connector, &request);
        if let Some((response, started)) = seam::replay(cassettes, &keyed, server)? {
            return Ok(Answered {
                response,
                started,
                attempts: 1,
            });
        }
        let mut answered = self.live(server, statuses, self.retry, pace, build).await?;
        if cassettes.records() {
            answered.response = seam::record(cassettes, keyed, answered.response, answered.started);
        }
        Ok(answered)
    }

    /// One request sent once, whatever its answer (a probe), through the same seam.
    pub(crate) async fn once(
        &self,
        server: &str,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Response, ConnectError> {
        let once = HttpClient {
            retry: RetryPolicy::never(),
            ..self.clone()
        };
        let answered = once
            .attempt_paced(server, Statuses::Agent, || async {}, build)
            .await?;
        Ok(answered.response)
    }

    /// The live exchange: the request sent, and sent again when [`RetryPolicy::next`]
    /// says so.
    async fn live<P: Future<Output = ()>>(
        &self,
        server: &str,
        statuses: Statuses,
        retry: RetryPolicy,
        pace: impl Fn() -> P,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Answered, ConnectError> {
        let mut attempt = 1;
        loop {
            pace().await;
            let started = Instant::now();
            let sent = build().send().await;
            let outcome = match &sent {
                Ok(response) => Attempt::Answered {
                    status: response.status().as_u16(),
                    headers: response.headers(),
                },
                Err(error) if never_reached_server(error) => Attempt::NotConnected,
                Err(_) => Attempt::Failed,
            };
            let Some(wait) = retry.next(statuses, attempt, outcome) else {
                return match sent {
                    Ok(response) => Ok(Answered {
                        response,
                        started,
                        attempts: attempt,
                    }),
                    Err(error) => Err(self.request_error(&error, server, attempt)),
                };
            };
            match sent {
                // The body is never read: nothing of it counts.
                Ok(response) => {
                    let status = response.status();
                    drop(response);
                    tracing::debug!(%server, %status, attempt, ?wait, "asked to come back later; trying again");
                }
                Err(error) => {
                    tracing::debug!(%server, attempt, ?wait, cause = %root_cause(&error), "cannot connect; trying again");
                }
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// [`HttpClient::attempt`] for an agent: a success, or the error for its status (a
    /// 404 is [`ConnectError::UnknownAgent`] when `agent` is given).
    pub(crate) async fn send(
        &self,
        server: &str,
        agent: Option<&str>,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Answered, ConnectError> {
        let answered = self.attempt(server, Statuses::Agent, build).await?;
        if answered.response.status().is_success() {
            return Ok(answered);
        }
        Err(status_error(answered, server, agent).await)
    }

    /// The error for a request that got no response.
    pub(crate) fn request_error(
        &self,
        error: &reqwest::Error,
        server: &str,
        attempts: u32,
    ) -> ConnectError {
        request_error(error, server, attempts, self.idle)
    }

    /// The error for a body that broke off after `received` bytes.
    pub(crate) fn broke_off(
        &self,
        error: &reqwest::Error,
        server: &str,
        received: u64,
    ) -> ConnectError {
        broke_off(error, server, received, self.idle)
    }

    /// A whole (small) body, at most `max_body_bytes`.
    pub(crate) async fn read_body(
        &self,
        response: Response,
        server: &str,
    ) -> Result<Vec<u8>, ConnectError> {
        let (body, _) = read_body(response, server, self.max_body_bytes, self.idle).await?;
        Ok(body)
    }
}

/// Whether a request that failed with `error` certainly never reached the server: the
/// connection could not be made (refused, no such host, reset during the handshake).
/// A timeout and a certificate that could not be verified are not worth another try.
fn never_reached_server(error: &reqwest::Error) -> bool {
    error.is_connect() && !error.is_timeout() && find_rustls(error).is_none()
}

/// The error for a response with an error status.
async fn status_error(answered: Answered, server: &str, agent: Option<&str>) -> ConnectError {
    let Answered {
        response, attempts, ..
    } = answered;
    let status = response.status();
    if status == StatusCode::NOT_FOUND
        && let Some(agent) = agent
    {
        return ConnectError::UnknownAgent {
            agent: agent.to_owned(),
            server: server.to_owned(),
        };
    }
    let body = error_body(response).await;
    ConnectError::Status {
        server: server.to_owned(),
        status: status.as_u16(),
        body: String::from_utf8_lossy(&body).into_owned(),
        attempts,
    }
}

/// The start of an error response's body: at most [`ERROR_BODY_KEPT`] bytes, what
/// arrived before any failure.
pub(crate) async fn error_body(response: Response) -> Vec<u8> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while body.len() < ERROR_BODY_KEPT {
        match stream.next().await {
            Some(Ok(chunk)) => body.extend_from_slice(&chunk),
            // What arrived before the failure is all there is to show.
            Some(Err(_)) | None => break,
        }
    }
    body.truncate(ERROR_BODY_KEPT);
    body
}

/// The error for a request that got no response after `attempts` attempts; a read
/// timeout is the `idle` limit running out.
pub(crate) fn request_error(
    error: &reqwest::Error,
    server: &str,
    attempts: u32,
    idle: Option<Duration>,
) -> ConnectError {
    if let Some(tls) = find_rustls(error) {
        return ConnectError::Tls {
            server: server.to_owned(),
            reason: explain(tls),
        };
    }
    if let Some(limit) = idle.filter(|_| error.is_timeout() && !error.is_connect()) {
        return ConnectError::Idle {
            peer: server.to_owned(),
            limit,
        };
    }
    let cause = root_cause(error);
    if error.is_connect() {
        let reason = if attempts > 1 {
            format!("{cause} (after {attempts} attempts)")
        } else {
            cause
        };
        return ConnectError::Unreachable {
            server: server.to_owned(),
            reason,
        };
    }
    ConnectError::protocol(
        server,
        format!("the request failed before an answer: {cause}"),
    )
}

/// The rustls error somewhere in `error`'s chain of causes.
pub(crate) fn find_rustls<'e>(error: &'e (dyn StdError + 'static)) -> Option<&'e rustls::Error> {
    let mut next: Option<&'e (dyn StdError + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        // An io::Error's `source()` skips the error it wraps; look inside it.
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
        {
            if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                return Some(tls);
            }
            if let Some(tls) = find_rustls(inner) {
                return Some(tls);
            }
        }
        next = e.source();
    }
    None
}

/// The innermost cause's message, with a lowercase first letter.
pub(crate) fn root_cause(error: &(dyn StdError + 'static)) -> String {
    let mut last = error;
    while let Some(next) = last.source() {
        last = next;
    }
    let text = last.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// The metadata as headers. A key that is not a header name, or a value that is not a
/// header value, is a config error naming only the key: values may be secrets.
pub(crate) fn metadata_headers(
    metadata: &BTreeMap<String, String>,
) -> Result<HeaderMap, ConnectError> {
    let mut headers = HeaderMap::new();
    for (key, value) in metadata {
        let name = HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
            ConnectError::config(format!(
                "the metadata key `{key}` cannot be sent as an http header name"
            ))
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            ConnectError::config(format!(
                "the value of the metadata key `{key}` cannot be sent as an http header value"
            ))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

/// A whole (small) body, at most `limit` bytes, with when its first byte arrived.
pub(crate) async fn read_body(
    response: Response,
    server: &str,
    limit: u64,
    idle: Option<Duration>,
) -> Result<(Vec<u8>, Option<Instant>), ConnectError> {
    let too_large = || ConnectError::TooLarge {
        peer: server.to_owned(),
        limit,
    };
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut first_byte = None;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| broke_off(&e, server, body.len() as u64, idle))?;
        if first_byte.is_none() && !chunk.is_empty() {
            first_byte = Some(Instant::now());
        }
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, first_byte))
}

/// The error for a body that broke off after `received` bytes; a read timeout is the
/// `idle` limit running out.
pub(crate) fn broke_off(
    error: &reqwest::Error,
    server: &str,
    received: u64,
    idle: Option<Duration>,
) -> ConnectError {
    if let Some(limit) = idle.filter(|_| error.is_timeout()) {
        return ConnectError::Idle {
            peer: server.to_owned(),
            limit,
        };
    }
    ConnectError::protocol(
        server,
        format!(
            "the response broke off after {received} bytes: {}",
            root_cause(error)
        ),
    )
}

/// A decoding failure as a connect error.
pub(crate) fn decode_error(error: DecodeError, peer: &str) -> ConnectError {
    match error {
        DecodeError::TooLarge { limit } => ConnectError::TooLarge {
            peer: peer.to_owned(),
            limit,
        },
        malformed => ConnectError::protocol(peer, malformed.message()),
    }
}

/// A JSON body.
pub(crate) fn parse_json(body: &[u8], server: &str) -> Result<Value, ConnectError> {
    serde_json::from_slice(body).map_err(|e| {
        ConnectError::protocol(
            server,
            format!(
                "the body is not JSON ({e}): {}",
                crate::error::cut(String::from_utf8_lossy(body).trim(), 120)
            ),
        )
    })
}

/// A neuro-san server over http or https.
///
/// Cheap to clone; clones share one connection pool.
#[derive(Debug, Clone)]
pub struct NeuroSanHttp {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    base: Url,
    label: String,
    http: HttpClient,
}

impl NeuroSanHttp {
    /// A connector for the server at `base` (its scheme decides http or https).
    pub fn new(base: Url, options: &HttpOptions) -> Result<NeuroSanHttp, ConnectError> {
        Ok(NeuroSanHttp {
            inner: Arc::new(Inner {
                label: label(&base),
                http: HttpClient::new(options, base.scheme())?,
                base,
            }),
        })
    }

    /// A connector for the `https` connection: the same server as `base` with the
    /// scheme switched to https (neuro-san and the demo server answer both on one port).
    pub fn https(base: &Url, options: &HttpOptions) -> Result<NeuroSanHttp, ConnectError> {
        NeuroSanHttp::new(with_scheme(base, "https"), options)
    }

    /// The server's url.
    pub fn base(&self) -> &Url {
        &self.inner.base
    }

    /// The agents the server hosts (`GET /api/v1/list`), within [`INFO_TIMEOUT`].
    pub async fn list_agents(&self) -> Result<Vec<AgentInfo>, ConnectError> {
        let server = &self.inner.label;
        let list = self.get_json(&["api/v1/list"], None).await?;
        let Some(agents) = list.get("agents").and_then(Value::as_array) else {
            return Err(ConnectError::protocol(
                server,
                "the agent list has no `agents` array",
            ));
        };
        agents
            .iter()
            .map(|agent| {
                let name = agent
                    .get("agent_name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        ConnectError::protocol(server, "an agent in the list has no `agent_name`")
                    })?;
                Ok(AgentInfo {
                    name: name.to_owned(),
                    description: agent
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    tags: agent
                        .get("tags")
                        .and_then(Value::as_array)
                        .map(|tags| {
                            tags.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default(),
                })
            })
            .collect()
    }

    /// What an agent does (`GET /api/v1/{agent}/function`), within [`INFO_TIMEOUT`].
    pub async fn describe(&self, agent: &str) -> Result<AgentFunction, ConnectError> {
        let answer = self
            .get_json(&["api/v1", agent, "function"], Some(agent))
            .await?;
        let Some(function) = answer.get("function").filter(|f| f.is_object()) else {
            return Err(ConnectError::protocol(
                &self.inner.label,
                "the function answer has no `function` object",
            ));
        };
        let field = |key: &str| function.get(key).filter(|v| !v.is_null()).cloned();
        Ok(AgentFunction {
            description: function
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            parameters: field("parameters"),
            sly_data_schema: field("sly_data_schema"),
            raw: function.clone(),
        })
    }

    async fn get_json(&self, path: &[&str], agent: Option<&str>) -> Result<Value, ConnectError> {
        let inner = &self.inner;
        let url = endpoint(&inner.base, path);
        let exchange = async {
            let answered = inner
                .http
                .send(&inner.label, agent, || inner.http.client.get(url.clone()))
                .await?;
            let body = inner
                .http
                .read_body(answered.response, &inner.label)
                .await?;
            parse_json(&body, &inner.label)
        };
        with_timeout(&inner.label, Some(INFO_TIMEOUT), exchange).await
    }

    /// One exchange with `agent`, under the request's timeout (else the connector's
    /// default, [`HttpOptions::timeout`]). The exchange ends at the final message,
    /// whether or not the server closes the stream after it. The request's metadata
    /// values (bearer tokens) are blanked out of any error, which may quote what the
    /// server sent back.
    pub async fn chat(
        &self,
        agent: &str,
        request: &AgentRequest,
    ) -> Result<AgentResponse, ConnectError> {
        with_timeout(
            &self.inner.label,
            self.inner.http.limit(request.timeout),
            self.exchange(agent, request),
        )
        .await
        .map_err(|e| e.redacted(&request.secrets()))
    }

    async fn exchange(
        &self,
        agent: &str,
        request: &AgentRequest,
    ) -> Result<AgentResponse, ConnectError> {
        let inner = &self.inner;
        let server = inner.label.as_str();
        let url = endpoint(&inner.base, &["api/v1", agent, "streaming_chat"]);
        let headers = metadata_headers(&request.metadata)?;
        let body = chat_request(request).to_string();
        tracing::debug!(%server, agent, "streaming chat");
        let Answered {
            response, started, ..
        } = inner
            .http
            .send(server, Some(agent), || {
                inner
                    .http
                    .client
                    .post(url.clone())
                    .headers(headers.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone())
            })
            .await?;
        let limit = inner.http.max_body_bytes;
        if response.content_length().is_some_and(|n| n > limit) {
            return Err(ConnectError::TooLarge {
                peer: server.to_owned(),
                limit,
            });
        }
        let mut stream = response.bytes_stream();
        let mut decoder = LineDecoder::new(limit);
        let mut answer = Answer::default();
        'read: while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| inner.http.broke_off(&e, server, decoder.received()))?;
            if answer.first_byte.is_none() && !chunk.is_empty() {
                answer.first_byte = Some(started.elapsed());
            }
            for line in decoder.feed(&chunk).map_err(|e| decode_error(e, server))? {
                if answer.take(line, server)? {
                    break 'read;
                }
            }
        }
        // The rest of the stream, if any, is never read: dropping it closes the
        // connection.
        drop(stream);
        if !answer.collector.ended() {
            for line in decoder.finish().map_err(|e| decode_error(e, server))? {
                if answer.take(line, server)? {
                    break;
                }
            }
        }
        answer.finish(request, server, started)
    }
}

/// A streamed answer as it is read.
#[derive(Debug, Default)]
struct Answer {
    collector: Collector,
    /// How many JSON values arrived, `{}` included.
    values: usize,
    first_byte: Option<Duration>,
}

impl Answer {
    /// Takes one line's value; `true` once the final message is in.
    fn take(&mut self, line: Value, server: &str) -> Result<bool, ConnectError> {
        self.values += 1;
        self.collector
            .accept_line(line)
            .map_err(|e| ConnectError::protocol(server, e.0))?;
        Ok(self.collector.ended())
    }

    /// The response, when the stream held a whole answer: a final (`AGENT_FRAMEWORK`)
    /// message, or for a request without text the `{}` neuro-san sends then.
    fn finish(
        self,
        request: &AgentRequest,
        server: &str,
        started: Instant,
    ) -> Result<AgentResponse, ConnectError> {
        let no_text_answered =
            request.text.is_none() && self.collector.is_empty() && self.values > 0;
        let whole = self.collector.saw_final() || no_text_answered;
        if !whole {
            let message = if self.values == 0 {
                "the answer is empty: no final (AGENT_FRAMEWORK) message"
            } else if self.collector.is_empty() {
                "the answer holds no message, only `{}` (what neuro-san sends to a request without text)"
            } else {
                "the stream ended before the final (AGENT_FRAMEWORK) message: the answer is incomplete"
            };
            return Err(ConnectError::protocol(server, message));
        }
        Ok(self.collector.finish(Timings {
            first_byte: self.first_byte,
            total: started.elapsed(),
        }))
    }
}

impl Connector for NeuroSanHttp {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        let conversation = HttpConversation {
            connector: self.clone(),
            agent: agent.to_owned(),
        };
        Box::pin(async move { Ok(Box::new(conversation) as Box<dyn Conversation>) })
    }
}

/// A conversation over http: each turn is one streaming chat; the caller carries the
/// chat_context.
#[derive(Debug)]
struct HttpConversation {
    connector: NeuroSanHttp,
    agent: String,
}

impl Conversation for HttpConversation {
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        Box::pin(self.connector.chat(&self.agent, request))
    }

    fn state<'a>(
        &'a mut self,
        endpoint: &'a str,
        metadata: &'a BTreeMap<String, String>,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<Value, ConnectError>> {
        Box::pin(self.connector.state(endpoint, metadata, limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_errors_never_show_values() {
        let bad_name: BTreeMap<String, String> =
            [("bad name".to_owned(), "sk-secret".to_owned())].into();
        let e = metadata_headers(&bad_name).unwrap_err();
        assert!(e.to_string().contains("`bad name`") && !e.to_string().contains("sk-secret"));
        let bad_value: BTreeMap<String, String> =
            [("authorization".to_owned(), "sk-secret\n".to_owned())].into();
        let e = metadata_headers(&bad_value).unwrap_err();
        assert!(!e.to_string().contains("sk-secret"), "{e}");
        let good: BTreeMap<String, String> = [("user_id".to_owned(), "alice".to_owned())].into();
        let headers = metadata_headers(&good).unwrap();
        assert!(headers["user_id"].is_sensitive());
        assert!(!format!("{headers:?}").contains("alice"));
    }

    #[test]
    fn tls_errors_are_found_inside_io_errors() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let outer = std::io::Error::other(io);
        assert!(find_rustls(&outer).is_some());
        assert!(find_rustls(&std::io::Error::other("plain")).is_none());
    }

    #[test]
    fn root_cause_is_lowercased() {
        let e = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        assert_eq!(root_cause(&e), "connection refused");
    }
}
