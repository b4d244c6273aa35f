//! The loopback http server under the Anthropic and Bedrock fakes: one task per
//! connection (hyper, HTTP/1.1), every request read whole and recorded, and answers
//! that are either whole or streamed piece by piece with a pause before each piece.

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
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
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
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = Arc::clone(&handler);
            connections.spawn(async move {
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
            });
            // Reap finished connections as we go.
            while connections.try_join_next().is_some() {}
        }
    });
    Ok(Served { addr, task })
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
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
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
/// so that an answer without gaps goes out as one write rather than one per event.
fn coalesce(pieces: Vec<(Duration, Bytes)>) -> VecDeque<(Duration, Bytes)> {
    let mut out: VecDeque<(Duration, bytes::BytesMut)> = VecDeque::new();
    for (pause, bytes) in pieces {
        match out.back_mut() {
            Some((_, joined)) if pause.is_zero() => joined.extend_from_slice(&bytes),
            _ => out.push_back((pause, bytes::BytesMut::from(&bytes[..]))),
        }
    }
    out.into_iter().map(|(p, b)| (p, b.freeze())).collect()
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
}
