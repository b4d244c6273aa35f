//! Response bodies: whole ones, and streamed ones that count themselves as active and can
//! be cut short when the server shuts down.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::{Stream, TryStreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;

use crate::server::Shared;

/// Every response body the server sends.
pub(crate) type Body = UnsyncBoxBody<Bytes, BodyError>;

/// Why a streamed body stopped before its end; hyper then closes the connection without
/// finishing the chunked body, so the client sees a cut stream.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// The `drop` fault mode.
    #[error("the stream was cut on purpose (fault mode drop)")]
    Dropped,
    /// The server shut down while the stream was still going.
    #[error("the server is shutting down")]
    Shutdown,
    /// A replayed recording broke off here (`prill serve --replay`).
    #[error("the recorded stream broke off here")]
    Recorded,
}

/// The items of a streamed body: whole lines (or other chunks), each sent as one chunk.
pub(crate) type Chunks = Pin<Box<dyn Stream<Item = Result<Bytes, BodyError>> + Send>>;

/// A body of known length.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// An empty body.
pub(crate) fn empty() -> Body {
    Empty::new()
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// A chunked body that streams `chunks`, counted in [`Shared::active`] while it lives.
/// When `stop_on_shutdown` is set the stream is cut as soon as the server starts to shut
/// down; otherwise it gets the server's grace period to finish.
pub(crate) fn streamed(shared: &Arc<Shared>, chunks: Chunks, stop_on_shutdown: bool) -> Body {
    let shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = if stop_on_shutdown {
        let mut signal = shared.shutdown_signal();
        Some(Box::pin(async move {
            // A dropped sender means the server is gone: stop all the same.
            let _ = signal.wait_for(|down| *down).await;
        }))
    } else {
        None
    };
    let tracked = Tracked {
        chunks,
        shutdown,
        _active: Active::new(shared),
        done: false,
    };
    StreamBody::new(tracked.map_ok(Frame::data)).boxed_unsync()
}

/// Counts one active stream (or waiting MCP call) in [`Shared::active`] for as long as it
/// lives.
pub(crate) struct Active(Arc<Shared>);

impl Active {
    pub(crate) fn new(shared: &Arc<Shared>) -> Active {
        shared.active.fetch_add(1, Ordering::Relaxed);
        Active(Arc::clone(shared))
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A stream of chunks that may be cut by the shutdown signal.
struct Tracked {
    chunks: Chunks,
    shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    _active: Active,
    done: bool,
}

impl Stream for Tracked {
    type Item = Result<Bytes, BodyError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(shutdown) = &mut this.shutdown
            && shutdown.as_mut().poll(cx).is_ready()
        {
            this.done = true;
            return Poll::Ready(Some(Err(BodyError::Shutdown)));
        }
        let item = ready!(this.chunks.as_mut().poll_next(cx));
        if !matches!(item, Some(Ok(_))) {
            this.done = true;
        }
        Poll::Ready(item)
    }
}
