//! [`Lean`]: a lean HTTP/1.1 client for the hot path of every exchange.
//!
//! reqwest's client is general: each request parses its URL twice more, clones its
//! connector service, passes a redirect layer and checks out of `hyper-util`'s pool.
//! On a run of 100,000 tests that machinery cost more CPU than the requests' own
//! parsing (`docs/performance.md`). `Lean` sends a request reqwest has built
//! ([`reqwest::RequestBuilder::build`]) straight over a pooled `hyper` HTTP/1.1
//! connection and hands back a [`reqwest::Response`], so every reader, the cassettes
//! and the error rules are the same whichever client sent it.
//!
//! It takes plain `http` and `https` (rustls, with the same certificate rules, offering
//! only HTTP/1.1) with the same time limits: one connect limit on making a connection
//! and its TLS handshake together (a name's addresses of the other family are tried
//! too after [`FALLBACK_DELAY`], as `hyper-util`'s connector does), and the idle limit
//! from sending a request to the head of its answer and between any two pieces of the
//! body.
//!
//! A connection goes back to its origin's pool once its response body has been read to
//! the end; one that is dropped half read, or that the server closed, is never reused,
//! and a request that finds a pooled connection closed before it was written is sent
//! once more on a fresh one. A request that finds no idle connection starts a new one
//! on a task of its own, and takes it or the first connection to come free meanwhile,
//! whichever is first (both as `hyper-util`'s pool does): a connect that stalls costs
//! it no more than the wait for another request's end. Idle connections are dropped
//! after [`IDLE_CONNECTION_KEPT`].
//!
//! [`Lean::new`] declines (`None`) when the environment names a proxy
//! (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, any case): reqwest honours those, so a
//! client that has a proxy to go through keeps using it.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use reqwest::header::{ACCEPT, HOST, HeaderValue, USER_AGENT};
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_rustls::TlsConnector;

/// How long an idle pooled connection is kept (as `hyper-util`'s pool does).
pub(crate) const IDLE_CONNECTION_KEPT: Duration = Duration::from_secs(90);

/// The variables that name a proxy for reqwest.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Whether the environment (`var`) names a proxy reqwest would go through.
fn names_a_proxy(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    PROXY_VARIABLES
        .iter()
        .any(|name| var(name).is_some_and(|value| !value.is_empty()))
}

/// A pooled HTTP/1.1 client. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub(crate) struct Lean {
    inner: Arc<Inner>,
}

struct Inner {
    idle: Mutex<HashMap<Origin, Slot>>,
    tls: TlsConnector,
    connect_timeout: Duration,
    idle_timeout: Option<Duration>,
    user_agent: HeaderValue,
}

impl fmt::Debug for Lean {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.debug_struct("Lean")
            .field("connect_timeout", &self.inner.connect_timeout)
            .field("idle_timeout", &self.inner.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// Where a connection goes: scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Origin {
    https: bool,
    host: Box<str>,
    port: u16,
}

/// An origin's idle connections, and the requests waiting for one.
#[derive(Default)]
struct Slot {
    links: Vec<Pooled>,
    /// Requests whose own connection is still being made, in the order they came:
    /// the first connection to come free goes to the first of them.
    waiting: std::collections::VecDeque<tokio::sync::oneshot::Sender<Conn>>,
}

/// A connection ready for a request, and whether it is reused: it has answered a
/// request before or waited in the pool. Only a reused connection is replaced when it
/// turns out closed before a request was written (a race with the server's closing of
/// an idle connection, as `hyper-util`'s pool has it); a new one that closes at once is
/// the server's answer.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    reused: bool,
}

/// An idle connection, and since when.
struct Pooled {
    conn: Conn,
    since: Instant,
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LeanError {
    /// The connection could not be made (refused, no such host, the connect limit).
    #[error("cannot connect to {origin}")]
    Connect {
        origin: String,
        #[source]
        source: io::Error,
    },
    /// The TLS handshake failed (its rustls error is inside the io error).
    #[error("the TLS handshake with {origin} failed")]
    Tls {
        origin: String,
        #[source]
        source: io::Error,
    },
    /// Nothing came back within the idle limit.
    #[error("no answer within {0:?}")]
    Idle(Duration),
    /// The exchange failed at the HTTP level.
    #[error("the exchange failed")]
    Http(#[source] hyper::Error),
}

impl LeanError {
    /// Whether the request certainly never reached the server.
    pub(crate) fn is_connect(&self) -> bool {
        matches!(self, LeanError::Connect { .. } | LeanError::Tls { .. })
    }

    /// Whether a time limit ran out.
    pub(crate) fn is_timeout(&self) -> bool {
        match self {
            LeanError::Idle(_) => true,
            LeanError::Connect { source, .. } => source.kind() == io::ErrorKind::TimedOut,
            LeanError::Tls { source, .. } => source.kind() == io::ErrorKind::TimedOut,
            LeanError::Http(e) => e.is_timeout(),
        }
    }
}

impl Lean {
    /// The client, or `None` when the environment names a proxy (reqwest's job).
    pub(crate) fn new(
        tls: &ClientConfig,
        connect_timeout: Duration,
        idle_timeout: Option<Duration>,
        user_agent: &'static str,
    ) -> Option<Lean> {
        if names_a_proxy(|name| std::env::var_os(name)) {
            return None;
        }
        Some(Lean::with(tls, connect_timeout, idle_timeout, user_agent))
    }

    /// The client, whatever the environment says.
    fn with(
        tls: &ClientConfig,
        connect_timeout: Duration,
        idle_timeout: Option<Duration>,
        user_agent: &'static str,
    ) -> Lean {
        let mut tls = tls.clone();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Lean {
            inner: Arc::new(Inner {
                idle: Mutex::new(HashMap::new()),
                tls: TlsConnector::from(Arc::new(tls)),
                connect_timeout,
                idle_timeout,
                user_agent: HeaderValue::from_static(user_agent),
            }),
        }
    }

    /// Whether this client sends `request`: an `http` or `https` URL with a host, a body
    /// in memory (or none), no time limit of its own, HTTP/1.1. reqwest sends the rest.
    pub(crate) fn takes(&self, request: &reqwest::Request) -> bool {
        matches!(request.url().scheme(), "http" | "https")
            && request.url().host_str().is_some()
            && request.body().is_none_or(|b| b.as_bytes().is_some())
            && request.timeout().is_none()
            && request.version() == reqwest::Version::HTTP_11
    }

    /// Sends `request` (one [`Lean::takes`]) and returns its answer, whose body streams
    /// as it is read.
    pub(crate) async fn send(
        &self,
        request: reqwest::Request,
    ) -> Result<reqwest::Response, LeanError> {
        let origin = origin(request.url());
        let head = head(&request, &origin, &self.inner.user_agent);
        let body = request
            .body()
            .and_then(|b| b.as_bytes())
            .map(Bytes::copy_from_slice)
            .unwrap_or_default();
        loop {
            let Conn { mut sender, reused } = self.acquire(&origin).await?;
            let mut sent = http::Request::from_parts(head.clone(), Full::new(body.clone()));
            *sent.version_mut() = http::Version::HTTP_11;
            let answer = self.within_idle(sender.send_request(sent)).await;
            match answer {
                Ok(response) => {
                    let (parts, incoming) = response.into_parts();
                    let body = PooledBody {
                        incoming,
                        sender: Some(sender),
                        origin: origin.clone(),
                        lean: self.clone(),
                        idle: self.inner.idle_timeout,
                        timer: None,
                    };
                    let response = http::Response::from_parts(parts, reqwest::Body::wrap(body));
                    return Ok(reqwest::Response::from(response));
                }
                // A pooled connection that closed before the request was written:
                // nothing reached the server, so it goes again on a fresh connection.
                // (One that closed after is an error: the server may have acted on it.)
                Err(LeanError::Http(e)) if reused && e.is_canceled() => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// A connection to `origin` for one request: an idle one, else a new one, or whichever connection comes free first while the new
    /// one is being made (as `hyper-util`'s pool does: a connect that stalls, say a SYN
    /// the server's full queue dropped and the kernel sends again a second later, then
    /// costs no more than the wait for another request's end). The new connection is
    /// made on a task of its own and pooled when it is ready, whoever it goes to; its
    /// error is this request's.
    async fn acquire(&self, origin: &Origin) -> Result<Conn, LeanError> {
        if let Some(conn) = self.checkout(origin).await {
            return Ok(conn);
        }
        let (handed, mut handover) = tokio::sync::oneshot::channel();
        self.slot(origin, |slot| {
            // Requests that stopped waiting (their connect failed, their time ran out).
            slot.waiting.retain(|waiter| !waiter.is_closed());
            slot.waiting.push_back(handed);
        });
        let (failed, mut failure) = tokio::sync::oneshot::channel();
        let lean = self.clone();
        let new = origin.clone();
        tokio::spawn(async move {
            match lean.connect(&new).await {
                Ok(sender) => lean.checkin(
                    new,
                    Conn {
                        sender,
                        reused: false,
                    },
                ),
                Err(error) => {
                    let _ = failed.send(error);
                }
            }
        });
        tokio::select! {
            biased;
            conn = &mut handover => conn.map_err(|_| gone(origin)),
            error = &mut failure => match error {
                Ok(error) => Err(error),
                // The new connection was made, and went to a request that waited
                // longer: the next one to come free is this request's.
                Err(_) => handover.await.map_err(|_| gone(origin)),
            },
        }
    }

    /// `change` made to `origin`'s slot of the pool.
    fn slot<T>(&self, origin: &Origin, change: impl FnOnce(&mut Slot) -> T) -> T {
        let mut idle = self.inner.idle.lock().unwrap_or_else(|e| e.into_inner());
        // The origin is copied only the first time: this runs twice a request.
        if let Some(slot) = idle.get_mut(origin) {
            return change(slot);
        }
        change(idle.entry(origin.clone()).or_default())
    }

    /// An idle connection to `origin` that is ready for a request.
    async fn checkout(&self, origin: &Origin) -> Option<Conn> {
        loop {
            let Pooled { mut conn, since } = self.slot(origin, |slot| slot.links.pop())?;
            if since.elapsed() > IDLE_CONNECTION_KEPT || conn.sender.is_closed() {
                continue;
            }
            if conn.sender.ready().await.is_ok() {
                return Some(Conn {
                    reused: true,
                    ..conn
                });
            }
        }
    }

    /// Gives back a connection whose answer's body is read or dropped: to the pool at
    /// once when it is ready for another request (the body's end has been read, which
    /// is usual even when the reader stopped at its last event), else once it is ready
    /// (the end is still on its way). A connection whose body was dropped half read is
    /// closed by `hyper` and never comes back.
    fn release(&self, origin: Origin, mut sender: SendRequest<Full<Bytes>>) {
        let served = |sender| Conn {
            sender,
            reused: true,
        };
        if sender.is_ready() {
            self.checkin(origin, served(sender));
        } else if !sender.is_closed()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let lean = self.clone();
            runtime.spawn(async move {
                if sender.ready().await.is_ok() {
                    lean.checkin(origin, served(sender));
                }
            });
        }
    }

    /// Hands a connection that is ready for a request to the request that has waited
    /// longest for one to `origin`, else puts it in the pool.
    fn checkin(&self, origin: Origin, mut conn: Conn) {
        if conn.sender.is_closed() {
            return;
        }
        self.slot(&origin, |slot| {
            while let Some(waiter) = slot.waiting.pop_front() {
                match waiter.send(conn) {
                    Ok(()) => return,
                    // That request is gone (its time ran out, say).
                    Err(back) => conn = back,
                }
            }
            slot.links.push(Pooled {
                conn,
                since: Instant::now(),
            });
        });
    }

    /// A new connection to `origin`, its driving task spawned: the TCP connection and
    /// the TLS handshake within one connect limit.
    async fn connect(&self, origin: &Origin) -> Result<SendRequest<Full<Bytes>>, LeanError> {
        let deadline = tokio::time::Instant::now() + self.inner.connect_timeout;
        let connect_error = |source| LeanError::Connect {
            origin: origin.to_string(),
            source,
        };
        let timed_out = || io::Error::new(io::ErrorKind::TimedOut, "the connect limit ran out");
        let tcp = tokio::time::timeout_at(deadline, tcp(&origin.host, origin.port))
            .await
            .map_err(|_| connect_error(timed_out()))?
            .map_err(connect_error)?;
        tcp.set_nodelay(true).map_err(connect_error)?;
        if !origin.https {
            return handshake(TokioIo::new(tcp)).await;
        }
        let name = ServerName::try_from(origin.host.to_string())
            .map_err(|e| connect_error(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
        let tls_error = |source| LeanError::Tls {
            origin: origin.to_string(),
            source,
        };
        let stream = tokio::time::timeout_at(deadline, self.inner.tls.connect(name, tcp))
            .await
            .map_err(|_| tls_error(timed_out()))?
            .map_err(tls_error)?;
        handshake(TokioIo::new(stream)).await
    }

    /// `future` within the idle limit.
    async fn within_idle<T>(
        &self,
        future: impl Future<Output = Result<T, hyper::Error>>,
    ) -> Result<T, LeanError> {
        match self.inner.idle_timeout {
            Some(limit) => match tokio::time::timeout(limit, future).await {
                Ok(answer) => answer.map_err(LeanError::Http),
                Err(_) => Err(LeanError::Idle(limit)),
            },
            None => future.await.map_err(LeanError::Http),
        }
    }
}

/// The error of a request whose connection neither came nor failed (the task making
/// it ended without a word): none was made.
fn gone(origin: &Origin) -> LeanError {
    LeanError::Connect {
        origin: origin.to_string(),
        source: io::Error::other("the connection was never made"),
    }
}

/// How long the addresses of the first family get before the other family's are tried
/// too (RFC 8305's "happy eyeballs", as `hyper-util`'s connector does).
const FALLBACK_DELAY: Duration = Duration::from_millis(300);

/// A TCP connection to `host`: its addresses tried in the order the resolver gives, and
/// those of the other family (IPv4 after IPv6, say) started too when the first family
/// has not connected within [`FALLBACK_DELAY`], so that a family with a broken route
/// costs a moment rather than the whole connect limit.
async fn tcp(host: &str, port: u16) -> io::Result<TcpStream> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
    if addresses.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("`{host}` has no address"),
        ));
    }
    let (preferred, fallback) = by_family(&addresses);
    race(&preferred, &fallback).await
}

/// `addresses` of the first one's family, in order, and the others.
fn by_family(addresses: &[SocketAddr]) -> (Vec<SocketAddr>, Vec<SocketAddr>) {
    let ipv6 = addresses.first().is_some_and(SocketAddr::is_ipv6);
    addresses.iter().partition(|a| a.is_ipv6() == ipv6)
}

/// A connection to one of `preferred`, tried in turn, with `fallback` started too
/// after [`FALLBACK_DELAY`] (or at once when `preferred` all fail sooner).
async fn race(preferred: &[SocketAddr], fallback: &[SocketAddr]) -> io::Result<TcpStream> {
    if fallback.is_empty() {
        return in_turn(preferred).await;
    }
    let preferred = in_turn(preferred);
    tokio::pin!(preferred);
    tokio::select! {
        result = &mut preferred => match result {
            Ok(stream) => Ok(stream),
            // The first family failed before its head start was over: the other now.
            Err(_) => in_turn(fallback).await,
        },
        () = tokio::time::sleep(FALLBACK_DELAY) => {
            let fallback = in_turn(fallback);
            tokio::pin!(fallback);
            // The first to connect wins; when one family fails, the other's outcome is
            // the answer.
            tokio::select! {
                result = &mut preferred => match result {
                    Ok(stream) => Ok(stream),
                    Err(_) => fallback.await,
                },
                result = &mut fallback => match result {
                    Ok(stream) => Ok(stream),
                    Err(_) => preferred.await,
                },
            }
        }
    }
}

/// A TCP connection to the first of `addresses` that takes one, or the last error.
async fn in_turn(addresses: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// The HTTP/1.1 handshake over `io`, the connection's task spawned.
async fn handshake<T>(io: TokioIo<T>) -> Result<SendRequest<Full<Bytes>>, LeanError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(io).await.map_err(LeanError::Http)?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::trace!(%error, "an http connection ended");
        }
    });
    Ok(sender)
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}:{}", self.host, self.port)
    }
}

/// The origin of `url` (one [`Lean::takes`]).
fn origin(url: &reqwest::Url) -> Origin {
    let https = url.scheme() == "https";
    let host = url.host_str().unwrap_or_default();
    // An IPv6 literal is bracketed in a URL, bare in a socket address.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Origin {
        https,
        host: host.into(),
        port: url
            .port_or_known_default()
            .unwrap_or(if https { 443 } else { 80 }),
    }
}

/// The request's head: method, origin-form target, its headers, `Host` and
/// `User-Agent` when it has none.
fn head(request: &reqwest::Request, origin: &Origin, agent: &HeaderValue) -> http::request::Parts {
    let url = request.url();
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let mut built = http::Request::builder()
        .method(request.method().clone())
        .uri(target)
        .body(())
        .unwrap_or_default();
    let headers = built.headers_mut();
    *headers = request.headers().clone();
    if !headers.contains_key(HOST) {
        let default_port = if origin.https { 443 } else { 80 };
        let host = match url.port() {
            Some(port) if port != default_port => {
                format!("{}:{port}", url.host_str().unwrap_or_default())
            }
            _ => url.host_str().unwrap_or_default().to_owned(),
        };
        if let Ok(value) = HeaderValue::from_str(&host) {
            headers.insert(HOST, value);
        }
    }
    if !headers.contains_key(USER_AGENT) {
        headers.insert(USER_AGENT, agent.clone());
    }
    // What reqwest sends when a request names no type.
    if !headers.contains_key(ACCEPT) {
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
    }
    built.into_parts().0
}

/// A response body that gives its connection back to the pool when read to the end,
/// and keeps the idle limit between pieces.
struct PooledBody {
    incoming: Incoming,
    sender: Option<SendRequest<Full<Bytes>>>,
    origin: Origin,
    lean: Lean,
    idle: Option<Duration>,
    timer: Option<Pin<Box<Sleep>>>,
}

/// The idle limit ran out between two pieces of a body.
#[derive(Debug)]
struct BodyIdle(Duration);

impl fmt::Display for BodyIdle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nothing arrived for {:?}", self.0)
    }
}

impl StdError for BodyIdle {}

impl PooledBody {
    /// The body is over, or no longer wanted: its connection goes back to the pool.
    fn finish(&mut self) {
        if let Some(sender) = self.sender.take() {
            self.lean.release(self.origin.clone(), sender);
        }
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.incoming).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.timer = None;
                match frame {
                    None => {
                        this.finish();
                        Poll::Ready(None)
                    }
                    Some(Ok(frame)) => {
                        if this.incoming.is_end_stream() {
                            this.finish();
                        }
                        Poll::Ready(Some(Ok(frame)))
                    }
                    Some(Err(e)) => {
                        this.sender = None;
                        Poll::Ready(Some(Err(Box::new(e))))
                    }
                }
            }
            Poll::Pending => {
                let Some(limit) = this.idle else {
                    return Poll::Pending;
                };
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                ready!(timer.as_mut().poll(cx));
                this.sender = None;
                this.timer = None;
                Poll::Ready(Some(Err(Box::new(io::Error::new(
                    io::ErrorKind::TimedOut,
                    BodyIdle(limit),
                )))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::StreamExt;
    use http_body_util::combinators::BoxBody;
    use http_body_util::{BodyExt, StreamBody};
    use hyper::service::service_fn;
    use reqwest::{Method, Url};

    use super::*;
    use crate::tls::{TlsOptions, client_config};

    type Answer = hyper::Response<BoxBody<Bytes, io::Error>>;

    /// A body of `pieces`, each after `gap`, then silence for ever when `hang`.
    fn paced(
        pieces: &'static [&'static str],
        gap: Duration,
        hang: bool,
    ) -> BoxBody<Bytes, io::Error> {
        let frames = futures_util::stream::iter(pieces.iter().enumerate()).then(
            move |(i, piece)| async move {
                if i > 0 {
                    tokio::time::sleep(gap).await;
                }
                Ok::<_, io::Error>(Frame::data(Bytes::from_static(piece.as_bytes())))
            },
        );
        if hang {
            BodyExt::boxed(StreamBody::new(
                frames.chain(futures_util::stream::pending()),
            ))
        } else {
            BodyExt::boxed(StreamBody::new(frames))
        }
    }

    /// What the test server answers, by path.
    async fn answer(request: hyper::Request<Incoming>) -> Result<Answer, Infallible> {
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .map_or("-", |v| v.to_str().unwrap_or("?"))
                .to_owned()
        };
        let response = match request.uri().path() {
            "/echo" => {
                let text = format!(
                    "{} {} host={} user-agent={} accept={} content-length={} x-key={}",
                    request.method(),
                    request.uri(),
                    header("host"),
                    header("user-agent"),
                    header("accept"),
                    header("content-length"),
                    header("x-key"),
                );
                let body = request.into_body().collect().await.map(|b| b.to_bytes());
                let text = format!(
                    "{text} body={}",
                    String::from_utf8_lossy(&body.unwrap_or_default())
                );
                hyper::Response::new(Full::new(Bytes::from(text)).map_err(|n| match n {}).boxed())
            }
            "/close" => hyper::Response::builder()
                .header("connection", "close")
                .body(
                    Full::new(Bytes::from_static(b"bye"))
                        .map_err(|n| match n {})
                        .boxed(),
                )
                .unwrap_or_default(),
            "/slow-head" => {
                tokio::time::sleep(Duration::from_secs(3)).await;
                hyper::Response::new(Full::new(Bytes::new()).map_err(|n| match n {}).boxed())
            }
            "/slow-body" => hyper::Response::new(paced(&["first"], Duration::ZERO, true)),
            "/long" => {
                hyper::Response::new(paced(&["one", "two"], Duration::from_millis(100), false))
            }
            _ => hyper::Response::builder()
                .status(404)
                .body(Full::new(Bytes::new()).map_err(|n| match n {}).boxed())
                .unwrap_or_default(),
        };
        Ok(response)
    }

    /// A server on 127.0.0.1, and how many connections it has accepted.
    async fn serve() -> (SocketAddr, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(answer)),
                );
            }
        });
        (addr, accepted)
    }

    fn lean(idle: Option<Duration>) -> Lean {
        let tls = client_config(&TlsOptions::default()).unwrap();
        Lean::with(&tls, Duration::from_secs(5), idle, "prill/test")
    }

    fn request(method: Method, url: &str, body: Option<&'static str>) -> reqwest::Request {
        let mut request = reqwest::Request::new(method, Url::parse(url).unwrap());
        *request.body_mut() = body.map(reqwest::Body::from);
        request
    }

    #[tokio::test]
    async fn requests_in_turn_share_one_connection_and_carry_a_full_head() {
        let (addr, accepted) = serve().await;
        let client = lean(None);
        for turn in 0..3 {
            let mut sent = request(
                Method::POST,
                &format!("http://{addr}/echo?turn={turn}"),
                Some("hello"),
            );
            sent.headers_mut()
                .insert("x-key", HeaderValue::from_static("k"));
            assert!(client.takes(&sent));
            let response = client.send(sent).await.unwrap();
            assert_eq!(response.status(), 200);
            assert_eq!(
                response.text().await.unwrap(),
                format!(
                    "POST /echo?turn={turn} host={addr} user-agent=prill/test accept=*/* \
                     content-length=5 x-key=k body=hello"
                )
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, reused");
    }

    #[tokio::test]
    async fn concurrent_requests_each_take_their_own_connection_then_share_them() {
        let (addr, accepted) = serve().await;
        let client = lean(None);
        let url = format!("http://{addr}/long");
        let first = futures_util::future::join_all((0..4).map(|_| {
            let client = client.clone();
            let url = url.clone();
            async move {
                client
                    .send(request(Method::GET, &url, None))
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap()
            }
        }))
        .await;
        assert!(first.iter().all(|text| text == "onetwo"), "{first:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 4);
        for _ in 0..4 {
            let text = client
                .send(request(Method::GET, &url, None))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(text, "onetwo");
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            4,
            "the four pooled connections served the rest"
        );
    }

    #[tokio::test]
    async fn a_body_dropped_half_read_is_never_reused_and_the_next_request_goes_on_a_new_one() {
        let (addr, accepted) = serve().await;
        let client = lean(None);
        let mut response = client
            .send(request(Method::GET, &format!("http://{addr}/long"), None))
            .await
            .unwrap();
        assert_eq!(
            response.chunk().await.unwrap().as_deref(),
            Some(&b"one"[..])
        );
        drop(response);
        let response = client
            .send(request(Method::GET, &format!("http://{addr}/echo"), None))
            .await
            .unwrap();
        assert!(response.text().await.unwrap().starts_with("GET /echo "));
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_connection_the_server_closes_is_not_pooled() {
        let (addr, accepted) = serve().await;
        let client = lean(None);
        for _ in 0..2 {
            let response = client
                .send(request(Method::GET, &format!("http://{addr}/close"), None))
                .await
                .unwrap();
            assert_eq!(response.text().await.unwrap(), "bye");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn the_idle_limit_ends_a_silent_head_and_a_silent_body() {
        let (addr, _) = serve().await;
        let limit = Duration::from_millis(200);
        let client = lean(Some(limit));
        let started = Instant::now();
        let error = client
            .send(request(
                Method::GET,
                &format!("http://{addr}/slow-head"),
                None,
            ))
            .await
            .unwrap_err();
        assert!(
            matches!(error, LeanError::Idle(l) if l == limit),
            "{error:?}"
        );
        assert!(error.is_timeout() && !error.is_connect());
        let mut response = client
            .send(request(
                Method::GET,
                &format!("http://{addr}/slow-body"),
                None,
            ))
            .await
            .unwrap();
        assert_eq!(
            response.chunk().await.unwrap().as_deref(),
            Some(&b"first"[..])
        );
        let error = response.chunk().await.unwrap_err();
        assert!(error.is_timeout(), "{error:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let error = lean(None)
            .send(request(Method::GET, &format!("http://{addr}/echo"), None))
            .await
            .unwrap_err();
        assert!(error.is_connect() && !error.is_timeout(), "{error:?}");
        assert!(error.to_string().contains(&addr.to_string()), "{error}");
    }

    /// A loopback address whose connections hang: its listener's queue is full and
    /// never accepted from, so a new connection's SYN is dropped.
    async fn hanging() -> (tokio::net::TcpListener, Vec<TcpStream>, SocketAddr) {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let address = listener.local_addr().unwrap();
        let mut queued = Vec::new();
        for _ in 0..64 {
            match tokio::time::timeout(Duration::from_millis(100), TcpStream::connect(address))
                .await
            {
                Ok(Ok(stream)) => queued.push(stream),
                Ok(Err(error)) => panic!("{error}"),
                Err(_) => return (listener, queued, address),
            }
        }
        panic!("the listener took every connection: none hangs");
    }

    #[tokio::test]
    async fn the_other_family_is_tried_after_a_head_start_or_at_once_when_the_first_fails() {
        let good = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let good_address = good.local_addr().unwrap();
        let (_hanging, _queued, hang) = hanging().await;
        let started = Instant::now();
        let stream = race(&[hang], &[good_address]).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), good_address);
        let took = started.elapsed();
        assert!(
            took >= FALLBACK_DELAY - Duration::from_millis(20),
            "{took:?}"
        );
        assert!(took < Duration::from_secs(3), "{took:?}");

        let refused = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let refused_address = refused.local_addr().unwrap();
        drop(refused);
        let started = Instant::now();
        let stream = race(&[refused_address], &[good_address]).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), good_address);
        assert!(
            started.elapsed() < FALLBACK_DELAY,
            "{:?}",
            started.elapsed()
        );
        let error = race(&[refused_address], &[refused_address])
            .await
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused, "{error}");
    }

    #[tokio::test]
    async fn a_request_whose_connect_stalls_takes_the_first_connection_to_come_free() {
        // A server that accepts one connection and serves it, and whose queue is then
        // kept full, so that a new connection's SYN is dropped (and sent again by the
        // kernel a second later, dropped again).
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            let serving = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(answer));
            // The listener lives on, never accepting again.
            let _listener = listener;
            let _ = serving.await;
        });
        let client = lean(None);
        let first = client
            .send(request(Method::GET, &format!("http://{addr}/long"), None))
            .await
            .unwrap();
        let mut queued = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_millis(100), TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => queued.push(stream),
                Ok(Err(error)) => panic!("{error}"),
                Err(_) => break,
            }
            assert!(queued.len() < 64, "the queue never filled");
        }
        let started = Instant::now();
        let second = tokio::spawn({
            let client = client.clone();
            async move {
                let response = client
                    .send(request(Method::GET, &format!("http://{addr}/echo"), None))
                    .await?;
                Ok::<_, LeanError>(response.text().await.unwrap_or_default())
            }
        });
        assert_eq!(first.text().await.unwrap(), "onetwo");
        let text = second.await.unwrap().unwrap();
        assert!(text.starts_with("GET /echo "), "{text}");
        assert!(
            started.elapsed() < Duration::from_millis(900),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the first connection served both"
        );
        server.abort();
    }

    #[tokio::test]
    async fn a_server_that_closes_every_new_connection_is_an_error_not_a_loop() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        let sent = tokio::time::timeout(
            Duration::from_secs(3),
            lean(None).send(request(Method::GET, &format!("http://{addr}/echo"), None)),
        )
        .await
        .expect("a closing server ends the request");
        let error = sent.unwrap_err();
        assert!(!error.is_connect(), "the connection was made: {error:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "never sent again");
        server.abort();
    }

    #[test]
    fn addresses_are_split_by_the_first_ones_family() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let (v6, v4) = by_family(&[a("[::1]:1"), a("127.0.0.1:1"), a("[::2]:1")]);
        assert_eq!(
            (v6, v4),
            (vec![a("[::1]:1"), a("[::2]:1")], vec![a("127.0.0.1:1")])
        );
        let (v4, v6) = by_family(&[a("127.0.0.1:1"), a("[::1]:1")]);
        assert_eq!((v4, v6), (vec![a("127.0.0.1:1")], vec![a("[::1]:1")]));
    }

    #[test]
    fn a_proxy_in_the_environment_leaves_every_request_to_reqwest() {
        assert!(!names_a_proxy(|_| None));
        assert!(!names_a_proxy(
            |name| (name == "HTTPS_PROXY").then(Default::default)
        ));
        for name in PROXY_VARIABLES {
            assert!(names_a_proxy(
                |asked| (asked == name).then(|| "http://proxy:3128".into())
            ));
        }
    }

    #[test]
    fn it_takes_http_and_https_with_a_body_in_memory_and_no_time_limit_of_its_own() {
        let client = lean(None);
        assert!(client.takes(&request(Method::POST, "http://127.0.0.1:1/v1", Some("{}"))));
        assert!(client.takes(&request(Method::GET, "https://example.com/v1", None)));
        assert!(!client.takes(&request(Method::GET, "ftp://example.com/v1", None)));
        let mut timed = request(Method::GET, "http://127.0.0.1:1/", None);
        *timed.timeout_mut() = Some(Duration::from_secs(1));
        assert!(!client.takes(&timed));
        let mut streamed = request(Method::POST, "http://127.0.0.1:1/", None);
        let chunks = futures_util::stream::iter([Ok::<_, io::Error>(Bytes::from_static(b"x"))]);
        *streamed.body_mut() = Some(reqwest::Body::wrap_stream(chunks));
        assert!(!client.takes(&streamed));
    }

    #[test]
    fn an_origin_has_its_default_port_and_a_bare_ipv6_host() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            origin(&url("https://example.com/x")).to_string(),
            "https://example.com:443"
        );
        assert_eq!(
            origin(&url("http://example.com/x")).to_string(),
            "http://example.com:80"
        );
        let v6 = origin(&url("http://[::1]:8080/x"));
        assert_eq!((&*v6.host, v6.port), ("::1", 8080));
    }
}
