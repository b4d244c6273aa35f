//! Between cassettes and live http: a recorded response turned back into a real
//! [`reqwest::Response`] ([`replayed`]) whose body streams the recorded chunks at their
//! times, so the same decoders read it as read live traffic; and a live response whose
//! chunks are kept as they stream ([`tee`]).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use futures_util::StreamExt;
use prill_cassette::{Chunk, Latency, RecordedResponse};
use reqwest::Response;

use crate::error::ConnectError;

/// The headers a recording keeps: those that shape how a body is read or what the
/// client does next.
pub const KEPT_HEADERS: &[&str] = &[
    "content-type",
    "mcp-session-id",
    "retry-after",
    "x-amzn-errortype",
    ":content-type",
];

/// `recorded` as a response that began at `started`: its head at once, each chunk at
/// its recorded time from `started` (or at once with [`Latency::Zero`]), then the
/// end, or the recorded break.
pub fn replayed(
    recorded: &RecordedResponse,
    started: Instant,
    latency: Latency,
    peer: &str,
) -> Result<Response, ConnectError> {
    let mut builder = http::Response::builder().status(recorded.status);
    for (name, value) in &recorded.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let mut chunks = Vec::with_capacity(recorded.chunks.len());
    for chunk in &recorded.chunks {
        let bytes = chunk.bytes().ok_or_else(|| {
            ConnectError::protocol(peer, "a recorded chunk's base64 does not decode")
        })?;
        chunks.push((chunk.at_ms, Bytes::from(bytes)));
    }
    let broke_off = recorded.broke_off.clone();
    let body =
        futures_util::stream::iter(chunks.into_iter().map(Some).chain([None])).then(move |item| {
            let broke_off = broke_off.clone();
            async move {
                match item {
                    Some((at_ms, bytes)) => {
                        if latency == Latency::Recorded {
                            let at = started + std::time::Duration::from_millis(at_ms);
                            tokio::time::sleep_until(at.into()).await;
                        }
                        Ok(Some(bytes))
                    }
                    None => match broke_off {
                        Some(reason) => Err(std::io::Error::other(reason)),
                        None => Ok(None),
                    },
                }
            }
        });
    let body = body.filter_map(|item| async move { item.transpose() });
    let response = builder
        .body(reqwest::Body::wrap_stream(body))
        .map_err(|e| {
            ConnectError::protocol(peer, format!("a recorded response is not valid http: {e}"))
        })?;
    Ok(Response::from(response))
}

/// What a [`tee`] kept, handed over when the body ends, breaks or is dropped.
pub type OnDone = Box<dyn FnOnce(RecordedResponse) + Send>;

/// `response` (which began at `started`) unchanged for its reader, its chunks kept as
/// they arrive; `done` gets them once the body ends, breaks off, or is dropped half
/// read (an answer complete before its stream, as neuro-san's, records what was read).
pub fn tee(response: Response, started: Instant, done: OnDone) -> Response {
    let status = response.status();
    let mut builder = http::Response::builder().status(status);
    let mut headers = Vec::new();
    for (name, value) in response.headers() {
        builder = builder.header(name, value);
        if KEPT_HEADERS.contains(&name.as_str()) {
            headers.push((
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ));
        }
    }
    let keeper = Arc::new(Mutex::new(Keeper {
        response: Some(RecordedResponse {
            status: status.as_u16(),
            headers,
            chunks: Vec::new(),
            broke_off: None,
        }),
        done: Some(done),
    }));
    let kept = Arc::clone(&keeper);
    let body = response.bytes_stream().map(move |item| {
        let mut keeper = kept.lock().unwrap_or_else(|e| e.into_inner());
        match &item {
            Ok(bytes) => keeper.chunk(started, bytes),
            Err(error) => keeper.broke(error.to_string()),
        }
        item
    });
    let guard = Finish(keeper);
    let body = body.chain(futures_util::stream::poll_fn(move |_| {
        guard.finish();
        std::task::Poll::Ready(None)
    }));
    let response = builder
        .body(reqwest::Body::wrap_stream(body))
        .unwrap_or_else(|_| http::Response::new(reqwest::Body::from(Vec::new())));
    Response::from(response)
}

struct Keeper {
    response: Option<RecordedResponse>,
    done: Option<OnDone>,
}

impl Keeper {
    fn chunk(&mut self, started: Instant, bytes: &Bytes) {
        if let Some(response) = &mut self.response {
            let at_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            response.chunks.push(Chunk::new(at_ms, bytes.to_vec()));
        }
    }

    fn broke(&mut self, reason: String) {
        if let Some(response) = &mut self.response {
            response.broke_off = Some(reason);
        }
        self.finish();
    }

    fn finish(&mut self) {
        if let (Some(response), Some(done)) = (self.response.take(), self.done.take()) {
            done(response);
        }
    }
}

/// Hands over what was kept when the body ends or is dropped.
struct Finish(Arc<Mutex<Keeper>>);

impl Finish {
    fn finish(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).finish();
    }
}

impl Drop for Finish {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(broke_off: Option<&str>) -> RecordedResponse {
        RecordedResponse {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: vec![
                Chunk::new(0, b"data: 1\n\n".to_vec()),
                Chunk::new(30, vec![0xff, 0x00]),
            ],
            broke_off: broke_off.map(str::to_owned),
        }
    }

    async fn read(response: Response) -> (Vec<u8>, Option<String>) {
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(item) = stream.next().await {
            match item {
                Ok(bytes) => body.extend_from_slice(&bytes),
                Err(e) => return (body, Some(crate::http::root_cause(&e))),
            }
        }
        (body, None)
    }

    #[tokio::test]
    async fn a_replay_streams_the_chunks_at_their_times_and_a_tee_keeps_them() {
        let started = Instant::now();
        let response = replayed(&recorded(None), started, Latency::Recorded, "p").unwrap();
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let (kept_tx, kept_rx) = std::sync::mpsc::channel();
        let teed = tee(
            response,
            started,
            Box::new(move |r| kept_tx.send(r).unwrap()),
        );
        let (body, error) = read(teed).await;
        assert_eq!(body, b"data: 1\n\n\xff\x00".to_vec());
        assert_eq!(error, None);
        assert!(started.elapsed() >= std::time::Duration::from_millis(30));
        let kept = kept_rx.try_recv().unwrap();
        assert_eq!(kept.chunks.len(), 2);
        assert!((30..200).contains(&kept.chunks[1].at_ms));
        assert_eq!(kept.chunks[1].bytes().unwrap(), vec![0xff, 0x00]);
        assert_eq!(kept.headers, recorded(None).headers);
    }

    #[tokio::test]
    async fn a_recorded_break_breaks_the_replay_and_zero_latency_waits_for_nothing() {
        let started = Instant::now() - std::time::Duration::from_secs(0);
        let response = replayed(
            &recorded(Some("connection reset")),
            started,
            Latency::Zero,
            "p",
        );
        let (body, error) = read(response.unwrap()).await;
        assert_eq!(body.len(), 11);
        assert!(error.unwrap().contains("connection reset"));
        assert!(started.elapsed() < std::time::Duration::from_millis(30));
    }

    #[tokio::test]
    async fn a_body_dropped_half_read_is_kept_as_far_as_it_was_read() {
        let started = Instant::now();
        let response = replayed(&recorded(None), started, Latency::Zero, "p").unwrap();
        let (kept_tx, kept_rx) = std::sync::mpsc::channel();
        let teed = tee(
            response,
            started,
            Box::new(move |r| kept_tx.send(r).unwrap()),
        );
        let mut stream = teed.bytes_stream();
        stream.next().await.unwrap().unwrap();
        drop(stream);
        assert_eq!(kept_rx.try_recv().unwrap().chunks.len(), 1);
    }
}
