//! The clocks on a client that stalls: a request body with a total and an idle time
//! limit ([`RequestBody`]), and a connection whose writes may wait on a client that reads
//! nothing only so long ([`WriteStall`]).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::ClientLimits;

/// Why a request body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestBodyError {
    /// The body took longer than [`ClientLimits::body`].
    #[error("the request body took longer than {0:?}")]
    Total(Duration),
    /// Nothing more of the body came for [`ClientLimits::body_idle`].
    #[error("the request body stalled for {0:?}")]
    Idle(Duration),
    /// The connection failed while the body was read.
    #[error("cannot read the request body: {0}")]
    Read(#[source] hyper::Error),
}

impl RequestBodyError {
    /// Whether the body ran out of time (rather than breaking).
    pub(crate) fn is_timeout(&self) -> bool {
        matches!(self, RequestBodyError::Total(_) | RequestBodyError::Idle(_))
    }
}

/// Every request body a handler sees: hyper's, with its clocks running from the end of
/// the head. Whoever reads it gets an error once the body takes longer than
/// [`ClientLimits::body`] or stalls for [`ClientLimits::body_idle`].
pub(crate) struct RequestBody {
    inner: Incoming,
    /// `None` for a body that is already whole, and once it has ended or timed out.
    clocks: Option<Clocks>,
}

struct Clocks {
    total: Pin<Box<Sleep>>,
    total_limit: Duration,
    idle: Pin<Box<Sleep>>,
    idle_limit: Duration,
}

impl RequestBody {
    /// `inner` under `limits`, timed from now.
    pub(crate) fn new(inner: Incoming, limits: &ClientLimits) -> RequestBody {
        let clocks = (!inner.is_end_stream()).then(|| Clocks {
            total: Box::pin(tokio::time::sleep(limits.body)),
            total_limit: limits.body,
            idle: Box::pin(tokio::time::sleep(limits.body_idle)),
            idle_limit: limits.body_idle,
        });
        RequestBody { inner, clocks }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(clocks) = &mut this.clocks {
                    let next = Instant::now() + clocks.idle_limit;
                    clocks.idle.as_mut().reset(next);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(error))) => {
                this.clocks = None;
                Poll::Ready(Some(Err(RequestBodyError::Read(error))))
            }
            Poll::Ready(None) => {
                this.clocks = None;
                Poll::Ready(None)
            }
            Poll::Pending => {
                let Some(clocks) = &mut this.clocks else {
                    return Poll::Pending;
                };
                let error = if clocks.total.as_mut().poll(cx).is_ready() {
                    RequestBodyError::Total(clocks.total_limit)
                } else if clocks.idle.as_mut().poll(cx).is_ready() {
                    RequestBodyError::Idle(clocks.idle_limit)
                } else {
                    return Poll::Pending;
                };
                this.clocks = None;
                Poll::Ready(Some(Err(error)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection whose writes fail with [`io::ErrorKind::TimedOut`] once one has waited
/// [`ClientLimits::write_stall`] for a client that reads nothing. The clock runs only
/// while a write waits, never while the server has nothing to send.
pub(crate) struct WriteStall<I> {
    io: I,
    limit: Duration,
    /// Made at the first wait and reused.
    clock: Option<Pin<Box<Sleep>>>,
    waiting: bool,
}

impl<I> WriteStall<I> {
    pub(crate) fn new(io: I, limit: Duration) -> WriteStall<I> {
        WriteStall {
            io,
            limit,
            clock: None,
            waiting: false,
        }
    }

    /// `polled`, or a time-out error once writes have waited longer than the limit.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.waiting = false;
            return polled;
        }
        let deadline = Instant::now() + self.limit;
        let clock = self
            .clock
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.waiting {
            clock.as_mut().reset(deadline);
            self.waiting = true;
        }
        if clock.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.waiting = false;
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the client read nothing for {:?}", self.limit),
        )))
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for WriteStall<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for WriteStall<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.timed(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.timed(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.timed(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.timed(cx, polled)
    }
}
