//! The listener: one port for http and https (told apart by the first byte a client
//! sends), one task per connection up to a cap, a time limit on every phase of a
//! request ([`ClientLimits`]), and a graceful shutdown.

use std::collections::HashSet;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use prill_target::otel::SpanInbox;

use crate::pages::Pages;
use crate::replay::Recordings;
use crate::timed::{RequestBody, WriteStall};
use crate::{ClientLimits, DemoError, TlsIdentity, routes};

/// The first byte of a TLS record carrying a handshake (a ClientHello).
const TLS_HANDSHAKE: u8 = 0x16;
/// How long in-flight requests get to finish at shutdown, by default.
const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// The entry point: `DemoServer::builder()`.
#[derive(Debug)]
pub struct DemoServer;

impl DemoServer {
    /// A builder for a demo server (plain http only until [`DemoServerBuilder::tls`]).
    pub fn builder() -> DemoServerBuilder {
        DemoServerBuilder {
            tls: None,
            grace: DEFAULT_GRACE,
            replay: None,
            pages: None,
            otlp: None,
            otlp_forward: None,
            limits: ClientLimits::default(),
        }
    }
}

/// How to start a demo server.
#[derive(Debug, Clone)]
pub struct DemoServerBuilder {
    tls: Option<TlsIdentity>,
    grace: Duration,
    replay: Option<Arc<Recordings>>,
    pages: Option<SharedPages>,
    otlp: Option<Arc<SpanInbox>>,
    otlp_forward: Option<crate::otlp::Forward>,
    limits: ClientLimits,
}

/// The pages served instead of the demo agents.
#[derive(Clone)]
pub(crate) struct SharedPages(pub(crate) Arc<dyn Pages>);

impl std::fmt::Debug for SharedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pages")
    }
}

impl DemoServerBuilder {
    /// The certificate for https on the same port; `None` serves plain http only (a TLS
    /// client is then disconnected).
    pub fn tls(mut self, tls: Option<TlsIdentity>) -> DemoServerBuilder {
        self.tls = tls;
        self
    }

    /// How long in-flight requests get to finish at shutdown before their connections are
    /// closed (5 s by default). Streams of the `hang` fault mode stop at once.
    pub fn grace(mut self, grace: Duration) -> DemoServerBuilder {
        self.grace = grace;
        self
    }

    /// Serves `recordings` instead of the demo agents (`prill serve --replay DIR`; see
    /// [`crate::replay`]).
    pub fn replay(mut self, recordings: Recordings) -> DemoServerBuilder {
        self.replay = Some(Arc::new(recordings));
        self
    }

    /// Serves `pages` instead of the demo agents: a read-only site (`prill view`; see
    /// [`crate::pages`]).
    pub fn pages(mut self, pages: Arc<dyn Pages>) -> DemoServerBuilder {
        self.pages = Some(SharedPages(pages));
        self
    }

    /// Serves an OTLP/HTTP trace receiver instead of the demo agents, filing what it
    /// takes in `inbox` (the run's receiver for `trajectory: otel`; see [`crate::otlp`]).
    pub fn otlp(mut self, inbox: Arc<SpanInbox>) -> DemoServerBuilder {
        self.otlp = Some(inbox);
        self
    }

    /// Hands every batch the OTLP receiver takes to `forward` too (see
    /// [`DemoServerBuilder::otlp`]).
    pub fn otlp_forward(mut self, forward: crate::otlp::Forward) -> DemoServerBuilder {
        self.otlp_forward = Some(forward);
        self
    }

    /// The time limits on each phase of a request and the connection cap
    /// ([`ClientLimits::default`] unless set).
    pub fn limits(mut self, limits: ClientLimits) -> DemoServerBuilder {
        self.limits = limits;
        self
    }

    /// Binds `addr` (e.g. `"127.0.0.1:0"`) and starts serving on the current tokio runtime.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> Result<RunningServer, DemoError> {
        let acceptor = match &self.tls {
            Some(identity) => Some(TlsAcceptor::from(identity.server_config()?)),
            None => None,
        };
        let listener = TcpListener::bind(addr).await.map_err(DemoError::Bind)?;
        let addr = listener.local_addr().map_err(DemoError::Bind)?;
        let (sender, receiver) = watch::channel(false);
        let shared = Arc::new(Shared {
            shutdown: receiver,
            active: AtomicUsize::new(0),
            open: AtomicUsize::new(0),
            once_keys: Mutex::new(HashSet::new()),
            replay: self.replay,
            pages: self.pages,
            otlp: self.otlp,
            otlp_forward: self.otlp_forward,
            limits: self.limits,
        });
        let slots = Arc::new(Semaphore::new(self.limits.connection_cap()));
        let task = tokio::spawn(accept_loop(
            Listener {
                listener,
                slots,
                acceptor,
            },
            Arc::clone(&shared),
            self.grace,
        ));
        Ok(RunningServer {
            addr,
            tls: self.tls,
            shared,
            shutdown: sender,
            task: Some(task),
        })
    }
}

/// A demo server serving on a port; it stops on [`RunningServer::shutdown`] or when dropped.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    tls: Option<TlsIdentity>,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl RunningServer {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<ip>:<port>`, with a loopback ip when the server listens on all addresses.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.host_port())
    }

    /// `https://<ip>:<port>` (the same port as [`RunningServer::base_url`]) when the server
    /// has a certificate.
    pub fn https_base_url(&self) -> Option<String> {
        self.tls
            .as_ref()
            .map(|_| format!("https://{}", self.host_port()))
    }

    /// The server's certificate, when it serves https.
    pub fn tls(&self) -> Option<&TlsIdentity> {
        self.tls.as_ref()
    }

    /// How many streamed responses (`streaming_chat`, streamed MCP faults) and waiting MCP
    /// `slow` calls are in flight. Each stops counting when it ends or its client goes
    /// away, so tests can check that a disconnect stops the work behind it.
    pub fn active_streams(&self) -> usize {
        self.shared.active.load(Ordering::Relaxed)
    }

    /// How many client connections the server holds now, never more than the cap
    /// ([`ClientLimits::max_connections`]); each stops counting once the server has let
    /// it go, so tests can check the limits.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Stops accepting, lets in-flight requests finish within the grace period, closes
    /// every connection and waits until all of the server's tasks have ended.
    pub async fn shutdown(mut self) {
        self.shutdown.send_replace(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    fn host_port(&self) -> String {
        let ip = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        SocketAddr::new(ip, self.addr.port()).to_string()
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        // The accept loop sees this, drains within the grace period and ends by itself.
        self.shutdown.send_replace(true);
    }
}

/// What every connection and request handler shares: the shutdown signal, the
/// active-stream and connection counts, the keys of `503-once` faults already failed and
/// the limits on clients. Nothing here is locked on the hot path.
#[derive(Debug)]
pub(crate) struct Shared {
    shutdown: watch::Receiver<bool>,
    /// Streamed responses in flight.
    pub(crate) active: AtomicUsize,
    /// Client connections held ([`Slot`]).
    open: AtomicUsize,
    /// Keys of `503-once:<key>` requests that already got their 503.
    pub(crate) once_keys: Mutex<HashSet<String>>,
    /// The recordings served instead of the demo agents, when replaying.
    pub(crate) replay: Option<Arc<Recordings>>,
    /// The pages served instead of the demo agents (`prill view`).
    pub(crate) pages: Option<SharedPages>,
    /// The inbox of the OTLP receiver served instead of the demo agents.
    pub(crate) otlp: Option<Arc<SpanInbox>>,
    /// Where the OTLP receiver hands on what it takes.
    pub(crate) otlp_forward: Option<crate::otlp::Forward>,
    /// The limits on clients.
    limits: ClientLimits,
}

impl Shared {
    /// A receiver of the shutdown signal (`true` once the server is shutting down).
    pub(crate) fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// Whether `key` is seen for the first time (and remembers it).
    pub(crate) fn first_time(&self, key: &str) -> bool {
        let mut keys = self
            .once_keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        keys.insert(key.to_owned())
    }
}

/// What the accept loop accepts with: the socket, the connection slots (one permit per
/// connection held, [`ClientLimits::max_connections`] in all) and the TLS acceptor.
struct Listener {
    listener: TcpListener,
    slots: Arc<Semaphore>,
    acceptor: Option<TlsAcceptor>,
}

impl Listener {
    /// The next connection, once a slot is free. While none is, nothing is accepted:
    /// new connections wait in the kernel's accept queue.
    async fn accept(&self, shared: &Arc<Shared>) -> io::Result<(TcpStream, Slot)> {
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| io::Error::other("the connection slots are closed"))?;
        let (stream, _) = self.listener.accept().await?;
        Ok((stream, Slot::new(shared, permit)))
    }
}

/// One connection held: its permit, counted in [`Shared::open`] for as long as it lives.
struct Slot {
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    fn new(shared: &Arc<Shared>, permit: OwnedSemaphorePermit) -> Slot {
        shared.open.fetch_add(1, Ordering::SeqCst);
        Slot {
            shared: Arc::clone(shared),
            _permit: permit,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Uncounted before the permit goes back, so the count never passes the cap.
        self.shared.open.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn accept_loop(listener: Listener, shared: Arc<Shared>, grace: Duration) {
    let mut shutdown = shared.shutdown_signal();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(&shared) => match accepted {
                Ok((stream, slot)) => {
                    let _ = stream.set_nodelay(true);
                    let acceptor = listener.acceptor.clone();
                    connections.spawn(serve_connection(stream, acceptor, Arc::clone(&shared), slot));
                }
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::debug!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            // Reap finished connections so the set stays small.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = shutting_down(&mut shutdown) => break,
        }
    }
    drop(listener);
    let drain = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drain).await.is_err() {
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

/// Serves one connection: TLS when its first byte starts a TLS handshake, else plain
/// http. `_slot` holds its place under the connection cap until it ends.
async fn serve_connection(
    stream: TcpStream,
    acceptor: Option<TlsAcceptor>,
    shared: Arc<Shared>,
    _slot: Slot,
) {
    let limits = shared.limits;
    let mut shutdown = shared.shutdown_signal();
    let first = tokio::select! {
        first = tokio::time::timeout(limits.first_byte, first_byte(&stream)) => first,
        _ = shutting_down(&mut shutdown) => return,
    };
    let tls = match first {
        Ok(Some(byte)) => byte == TLS_HANDSHAKE,
        Ok(None) => return,
        Err(_) => {
            tracing::debug!(limit = ?limits.first_byte, "a client sent nothing in time");
            return;
        }
    };
    let stream = WriteStall::new(stream, limits.write_stall);
    if !tls {
        serve_http(stream, shared).await;
        return;
    }
    let Some(acceptor) = acceptor else {
        tracing::debug!("a tls client connected to a server without a certificate");
        return;
    };
    let handshake = tokio::select! {
        handshake = tokio::time::timeout(limits.tls_handshake, acceptor.accept(stream)) => handshake,
        _ = shutting_down(&mut shutdown) => return,
    };
    match handshake {
        Ok(Ok(tls)) => serve_http(tls, shared).await,
        Ok(Err(error)) => tracing::debug!(%error, "tls handshake failed"),
        Err(_) => tracing::debug!(limit = ?limits.tls_handshake, "tls handshake timed out"),
    }
}

/// The first byte the client sent, left unread; `None` when it closed or failed first.
async fn first_byte(stream: &TcpStream) -> Option<u8> {
    let mut first = [0u8; 1];
    match stream.peek(&mut first).await {
        Ok(1..) => Some(first[0]),
        _ => None,
    }
}

/// Serves http/1.1 on `io` until the client leaves, a limit passes or the server shuts
/// down. hyper times the head (and the keep-alive wait before it); every request body
/// is a [`RequestBody`], timed from the end of its head.
async fn serve_http<I>(io: I, shared: Arc<Shared>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut shutdown = shared.shutdown_signal();
    let limits = shared.limits;
    let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let shared = Arc::clone(&shared);
        let request = request.map(|body| RequestBody::new(body, &limits));
        async move { Ok::<_, Infallible>(routes::handle(shared, request).await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head);
    let mut connection = pin!(builder.serve_connection(TokioIo::new(io), service));
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended with an error");
            }
            return;
        }
        _ = shutting_down(&mut shutdown) => {}
    }
    // Finish the request in flight, if any, then close.
    connection.as_mut().graceful_shutdown();
    if let Err(error) = connection.await {
        tracing::debug!(%error, "connection ended with an error");
    }
}

/// Resolves once the server is shutting down (or gone).
async fn shutting_down(signal: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, never held across an await.
    let _ = signal.wait_for(|down| *down).await;
}
