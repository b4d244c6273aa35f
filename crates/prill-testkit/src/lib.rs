//! Real loopback servers for the workspace's tests and benchmarks.
//!
//! Test doubles here are real servers on 127.0.0.1, never mocks, so the code under test
//! does its real networking: the demo agent server of `prill-demo`, and fake model
//! providers ([`providers`]) that validate requests like the real APIs and answer from a
//! script, a LangGraph server ([`langgraph::FakeLanggraph`]) that runs a scripted
//! graph, and a TLS-terminating proxy ([`TlsProxy`]) for servers that speak only http.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let demo = prill_testkit::start_demo().await;
//! assert!(demo.http_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(demo.https_url(), demo.http_url().replacen("http", "https", 1));
//! assert!(demo.cert_pem().contains("BEGIN CERTIFICATE"));
//! demo.shutdown().await;
//! # }
//! ```
//!
//! A synchronous test (one that runs the `prill` binary, say) uses
//! [`start_demo_background`], which runs the server on a runtime of its own.

pub mod env;
pub mod langgraph;
pub mod otlp;
pub mod providers;
pub mod state;
mod tls_proxy;

pub use tls_proxy::TlsProxy;

use std::net::SocketAddr;

pub use prill_demo;
use prill_demo::{DemoServer, RunningServer, TlsIdentity};

/// A demo server on 127.0.0.1 serving http and https on one port, with a self-signed
/// certificate for `localhost` and `127.0.0.1`.
#[derive(Debug)]
pub struct Demo {
    server: RunningServer,
    cert_pem: String,
}

/// Starts a [`Demo`] on the current tokio runtime, on a free port.
///
/// # Panics
///
/// When the server cannot start (no loopback, no free port): a test cannot go on then.
pub async fn start_demo() -> Demo {
    let identity =
        TlsIdentity::self_signed().expect("a self-signed certificate for the demo server");
    start_demo_with(identity).await
}

/// Starts a [`Demo`] whose https is served with `identity` (e.g. a certificate a test
/// made with `rcgen`), on the current tokio runtime, on a free port.
///
/// # Panics
///
/// When the server cannot start (no loopback, no free port): a test cannot go on then.
pub async fn start_demo_with(identity: TlsIdentity) -> Demo {
    let cert_pem = identity.cert_pem().to_owned();
    let server = DemoServer::builder()
        .tls(Some(identity))
        .bind("127.0.0.1:0")
        .await
        .expect("the demo server starts on 127.0.0.1");
    Demo { server, cert_pem }
}

impl Demo {
    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn http_url(&self) -> String {
        self.server.base_url()
    }

    /// `https://127.0.0.1:<port>`: the same port as [`Demo::http_url`].
    pub fn https_url(&self) -> String {
        format!("https://{}", self.server.addr())
    }

    /// The server's certificate in PEM, for a client to add as an extra root.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The running server, e.g. for [`RunningServer::active_streams`].
    pub fn server(&self) -> &RunningServer {
        &self.server
    }

    /// Shuts the server down and waits until all its tasks have ended.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// A [`Demo`] running on a tokio runtime of its own, for synchronous tests. Dropping it
/// shuts the server down (do not drop it inside an async context).
#[derive(Debug)]
pub struct BackgroundDemo {
    demo: Option<Demo>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Starts a [`BackgroundDemo`] on a new one-worker runtime.
///
/// # Panics
///
/// When the runtime or the server cannot start.
pub fn start_demo_background() -> BackgroundDemo {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("prill-demo")
        .enable_all()
        .build()
        .expect("a tokio runtime for the demo server");
    let demo = runtime.block_on(start_demo());
    BackgroundDemo {
        demo: Some(demo),
        runtime: Some(runtime),
    }
}

impl std::ops::Deref for BackgroundDemo {
    type Target = Demo;

    fn deref(&self) -> &Demo {
        // Present until the value is dropped.
        self.demo.as_ref().expect("the demo server")
    }
}

impl Drop for BackgroundDemo {
    fn drop(&mut self) {
        if let (Some(demo), Some(runtime)) = (self.demo.take(), self.runtime.take()) {
            runtime.block_on(demo.shutdown());
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    #[test]
    fn a_background_demo_serves_synchronous_clients() {
        let demo = start_demo_background();
        let mut stream = std::net::TcpStream::connect(demo.addr()).expect("connects");
        stream
            .write_all(b"GET /api/v1/list HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .expect("writes");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("reads");
        assert!(response.starts_with("HTTP/1.1 200 OK"));
        assert!(response.contains("music_nerd_pro"));
        drop(demo);
    }

    #[tokio::test]
    async fn start_demo_gives_both_urls_on_one_port() {
        let demo = start_demo().await;
        assert_eq!(demo.https_url(), format!("https://{}", demo.addr()));
        assert_eq!(demo.http_url(), format!("http://{}", demo.addr()));
        demo.shutdown().await;
    }
}
