//! The loopback http server under the fakes: one task per connection (hyper,
//! HTTP/1.1, `TCP_NODELAY` so that a piece sent after a pause is not held back), every
//! request read whole and recorded, and answers that are either whole or streamed
//! piece by piece with a pause before each piece.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::clock::Clock;

/// A response body of the fakes.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// A boxed future, as handlers return.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

/// One request as a fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, say.
    pub method: String,
    /// The path as sent, still percent-encoded (`/model/a.b-v1%3A0/converse`).
    pub path: String,
    /// The query, if any.
    pub query: Option<String>,
    /// Every header, names lowercase, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the request's head arrived.
    pub received: std::time::Instant,
}

impl RecordedRequest {
    /// A header's value, by case-insensitive name (the first, if repeated).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    ///
    /// # Panics
    ///
    /// When the body is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

/// A running server; stops when dropped.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) addr: SocketAddr,
    task: JoinHandle<()>,
    /// The task of the server's [`Clock`], if it has one.
    clock: Option<JoinHandle<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(clock) = &self.clock {
            clock.abort();
        }
    }
}

/// Starts a server on 127.0.0.1 whose `handler` answers every request.
///
/// # Panics
///
/// When no loopback port can be bound: a test cannot go on then.
pub(crate) async fn serve(
    handler: impl Fn(RecordedRequest) -> Answer + Send + Sync + 'static,
) -> Served {
    serve_on(0, handler)
        .await
        .expect("a fake provider binds 127.0.0.1")
}

/// Starts a server on `127.0.0.1:port` (a free port when `port` is 0) whose `handler`
/// answers every request.
pub(crate) async fn serve_on(
    port: u16,
    handler: impl Fn(RecordedRequest) -> Answer + Send + Sync + 'static,
) -> std::io::Result<Served> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    let handler = Arc::new(handler);
    let (clock, clock_task) = Clock::start().unzip();
    let task = tokio::spawn(accept(listener, handler, clock));
    Ok(Served {
        addr,
        task,
        clock: clock_task,
    })
}

/// Serves every connection `listener` accepts, each on a task of its own whose pauses
/// `clock` keeps, until aborted (which ends the connections too).
async fn accept<H>(listener: TcpListener, handler: Arc<H>, clock: Option<Arc<Clock>>)
where
    H: Fn(RecordedRequest) -> Answer + Send + Sync + 'static,
{
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, or a connection reset before it was taken:
            // the listener itself still works, so wait a little and go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        };
        // Each write goes out at once: without this, a piece written after a pause
        // waits (Nagle) for the client to acknowledge the one before it, which a
        // client that has nothing to send delays by up to 40 ms.
        let _ = stream.set_nodelay(true);
        let served = connection(stream, Arc::clone(&handler));
        connections.spawn(Clock::scope(clock.clone(), served));
        // Reap finished connections as we go.
        while connections.try_join_next().is_some() {}
    }
}

/// Serves the requests of one connection with `handler`.
async fn connection<H>(stream: tokio::net::TcpStream, handler: Arc<H>)
where
    H: Fn(RecordedRequest) -> Answer + Send + Sync + 'static,
{
    let service = service_fn(move |request: Request<Incoming>| {
        let handler = Arc::clone(&handler);
        async move {
            let recorded = record(request).await;
            Ok::<_, Infallible>(handler(recorded).await)
        }
    });
    // A client that goes away mid-answer is no concern of the fake.
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Reads a request whole.
async fn record(request: Request<Incoming>) -> RecordedRequest {
    let received = std::time::Instant::now();
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    RecordedRequest {
        received,
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    }
}

/// A whole JSON answer.
pub(crate) fn json_answer(status: u16, headers: &[(&str, String)], body: &Value) -> Response<Body> {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(*name, value.as_str());
    }
    builder
        .body(Full::new(Bytes::from(body.to_string())).boxed())
        .expect("a valid response")
}

/// `response` with its `Content-Type` replaced by `content_type`, when one is given.
pub(crate) fn relabel(mut response: Response<Body>, content_type: Option<&str>) -> Response<Body> {
    if let Some(value) = content_type.and_then(|c| hyper::header::HeaderValue::from_str(c).ok()) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// A streamed answer: each piece is sent after its pause.
pub(crate) fn streamed_answer(
    content_type: &str,
    headers: &[(&str, String)],
    pieces: Vec<(Duration, Bytes)>,
) -> Response<Body> {
    let pieces = coalesce(pieces);
    let stream = futures_util::stream::unfold(pieces, |mut pieces| async move {
        let (pause, bytes) = pieces.pop_front()?;
        super::clock::sleep(pause).await;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), pieces))
    });
    let mut builder = Response::builder()
        .status(200)
        .header("content-type", content_type)
        .header("cache-control", "no-cache");
    for (name, value) in headers {
        builder = builder.header(*name, value.as_str());
    }
    builder
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .expect("a valid response")
}

/// `pieces` with each piece that follows without a pause joined to the one before it,
/// so that an answer without gaps goes out as one write rather than one per event. A
/// piece that joins none is kept as it is, not copied.
fn coalesce(pieces: Vec<(Duration, Bytes)>) -> VecDeque<(Duration, Bytes)> {
    let mut groups: Vec<(Duration, Vec<Bytes>)> = Vec::new();
    for (pause, bytes) in pieces {
        match groups.last_mut() {
            Some((_, group)) if pause.is_zero() => group.push(bytes),
            _ => groups.push((pause, vec![bytes])),
        }
    }
    groups
        .into_iter()
        .map(|(pause, mut group)| match group.len() {
            1 => (pause, group.pop().unwrap_or_default()),
            _ => (pause, Bytes::from(group.concat())),
        })
        .collect()
}

/// `text` split into pieces of about `size` characters (at least one piece), on
/// character boundaries.
pub(crate) fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

/// `text` split after each space, so that it streams word by word.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if c == ' ' {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_split_for_streaming() {
        assert_eq!(words("a bc d"), vec!["a ", "bc ", "d"]);
        assert_eq!(words(""), vec![""]);
        assert_eq!(pieces("abcde", 2), vec!["ab", "cd", "e"]);
        assert_eq!(pieces("é€x", 1), vec!["é", "€", "x"]);
    }

    #[test]
    fn pieces_without_a_pause_join_the_one_before() {
        let ms = Duration::from_millis;
        let piece =
            |pause: Duration, text: &'static str| (pause, Bytes::from_static(text.as_bytes()));
        let joined = coalesce(vec![
            piece(Duration::ZERO, "a"),
            piece(Duration::ZERO, "b"),
            piece(ms(5), "c"),
            piece(Duration::ZERO, "d"),
            piece(ms(2), "e"),
        ]);
        assert_eq!(
            Vec::from(joined),
            vec![
                piece(Duration::ZERO, "ab"),
                piece(ms(5), "cd"),
                piece(ms(2), "e")
            ]
        );
        assert!(coalesce(Vec::new()).is_empty());
    }
}
