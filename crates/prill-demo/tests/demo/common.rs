//! A small http/1.1 client over hyper's connection API, for plain and TLS connections.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use prill_demo::{DemoServer, RunningServer, TlsIdentity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// A generous limit for anything a test waits for: a loaded machine is slow, never this slow.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// Runs `future`, failing the test if it takes longer than [`PATIENCE`].
pub(crate) async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("the operation finished in time")
}

/// Waits until `condition` holds, failing the test after [`PATIENCE`].
pub(crate) async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A demo server with a self-signed certificate on 127.0.0.1.
pub(crate) async fn start() -> RunningServer {
    let identity = TlsIdentity::self_signed().expect("a certificate");
    DemoServer::builder()
        .tls(Some(identity))
        .bind("127.0.0.1:0")
        .await
        .expect("the server starts")
}

/// One http/1.1 connection to the server, plain or over TLS.
pub(crate) struct Client {
    sender: SendRequest<Full<Bytes>>,
}

/// A whole response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Reply {
    /// The body as text.
    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("a utf-8 body")
    }

    /// The body as one JSON value.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a json body")
    }

    /// The body's lines, each parsed as JSON.
    pub(crate) fn lines(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a json line"))
            .collect()
    }

    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|value| value.to_str().expect("an ascii header"))
    }
}

impl Client {
    /// A plain http connection.
    pub(crate) async fn plain(addr: SocketAddr) -> Client {
        let stream = within(TcpStream::connect(addr)).await.expect("connects");
        Client::over(stream).await
    }

    /// A TLS connection that trusts `cert_pem`, verifying the server as `name`.
    pub(crate) async fn tls(addr: SocketAddr, cert_pem: &str, name: &str) -> Client {
        let stream = within(TcpStream::connect(addr)).await.expect("connects");
        let tls = within(tls_connector(cert_pem).connect(server_name(name), stream))
            .await
            .expect("the tls handshake succeeds");
        Client::over(tls).await
    }

    /// A client over any connected stream.
    pub(crate) async fn over<I>(io: I) -> Client
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .expect("the http handshake succeeds");
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Client { sender }
    }

    /// Sends a request and returns the response head with its streaming body.
    pub(crate) async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Response<Incoming> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("a valid request");
        within(async {
            self.sender.ready().await.expect("the connection is ready");
            self.sender.send_request(request).await
        })
        .await
        .expect("a response")
    }

    /// Sends a request and reads the whole response.
    pub(crate) async fn fetch(
        &mut self,
        method: Method,
        path: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Reply {
        let response = self.send(method, path, body, headers).await;
        let (parts, body) = response.into_parts();
        let body = within(body.collect())
            .await
            .expect("the whole body")
            .to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// `GET path`.
    pub(crate) async fn get(&mut self, path: &str) -> Reply {
        self.fetch(Method::GET, path, "", &[]).await
    }

    /// `POST path` with a JSON body.
    pub(crate) async fn post(&mut self, path: &str, body: &Value) -> Reply {
        self.fetch(Method::POST, path, &body.to_string(), &[]).await
    }

    /// `POST /api/v1/{agent}/streaming_chat`.
    pub(crate) async fn chat(&mut self, agent: &str, request: &Value) -> Reply {
        self.post(&format!("/api/v1/{agent}/streaming_chat"), request)
            .await
    }
}

/// A TLS connector that trusts only `cert_pem`.
pub(crate) fn tls_connector(cert_pem: &str) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(cert_pem.as_bytes()) {
        roots
            .add(cert.expect("a pem certificate"))
            .expect("a usable root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("tls versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

fn server_name(name: &str) -> ServerName<'static> {
    ServerName::try_from(name.to_owned()).expect("a server name")
}

/// The one line of a `MINIMAL` answer, checked to be the only one.
pub(crate) fn only_line(reply: &Reply) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let mut lines = reply.lines();
    assert_eq!(lines.len(), 1, "one line: {}", reply.text());
    lines.remove(0)
}
