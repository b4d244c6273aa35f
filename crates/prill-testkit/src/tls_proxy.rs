//! [`TlsProxy`]: https in front of a plain-http server on 127.0.0.1, the way servers that
//! speak only http (neuro-san's own) are deployed behind a TLS-terminating proxy.
//!
//! Each connection is accepted with a self-signed certificate for `localhost` and
//! `127.0.0.1` and its bytes are copied both ways to a new connection to the upstream
//! address, unchanged.

use std::net::SocketAddr;

use prill_demo::TlsIdentity;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

/// A running proxy; stops, with every connection it carries, when dropped.
#[derive(Debug)]
pub struct TlsProxy {
    addr: SocketAddr,
    cert_pem: String,
    task: JoinHandle<()>,
}

impl TlsProxy {
    /// Starts a proxy on a free port of 127.0.0.1 to `upstream`.
    ///
    /// # Panics
    ///
    /// When no certificate can be made or no loopback port bound: a test cannot go on.
    pub async fn start(upstream: SocketAddr) -> TlsProxy {
        let identity = TlsIdentity::self_signed().expect("a self-signed certificate");
        let acceptor = TlsAcceptor::from(identity.server_config().expect("a server config"));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the proxy binds 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                connections.spawn(async move {
                    let Ok(mut tls) = acceptor.accept(client).await else {
                        return;
                    };
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    // Either side closing ends the copy; the other is closed on drop.
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        TlsProxy {
            addr,
            cert_pem: identity.cert_pem().to_owned(),
            task,
        }
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:<port>`.
    pub fn https_url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The certificate in PEM, for a client to trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn bytes_pass_through_unchanged() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream_addr = upstream.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = upstream.accept().await.unwrap();
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).await.unwrap();
            s.write_all(&buf.map(|b| b.to_ascii_uppercase()))
                .await
                .unwrap();
        });
        let proxy = TlsProxy::start(upstream_addr).await;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(proxy.cert_pem().as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        let tcp = TcpStream::connect(proxy.addr()).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = connector.connect(name, tcp).await.unwrap();
        tls.write_all(b"ping").await.unwrap();
        let mut back = [0u8; 4];
        tls.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"PING");
    }
}
