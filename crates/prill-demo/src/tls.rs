//! The server's certificate: a self-signed one made with rcgen, or one given as PEM.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::DemoError;

/// A certificate chain and its private key, in PEM.
#[derive(Clone)]
pub struct TlsIdentity {
    cert_pem: String,
    key_pem: String,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of debug output.
        f.debug_struct("TlsIdentity")
            .field("cert_pem", &self.cert_pem)
            .finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// A new self-signed certificate for `localhost` and `127.0.0.1`. A client trusts it by
    /// adding [`TlsIdentity::cert_pem`] as an extra root certificate.
    pub fn self_signed() -> Result<TlsIdentity, DemoError> {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let certified = rcgen::generate_simple_self_signed(names)
            .map_err(|e| DemoError::Certificate(e.to_string()))?;
        Ok(TlsIdentity {
            cert_pem: certified.cert.pem(),
            key_pem: certified.signing_key.serialize_pem(),
        })
    }

    /// An identity from a PEM certificate chain and a PEM private key; both are checked.
    pub fn from_pem(
        cert_pem: impl Into<String>,
        key_pem: impl Into<String>,
    ) -> Result<TlsIdentity, DemoError> {
        let identity = TlsIdentity {
            cert_pem: cert_pem.into(),
            key_pem: key_pem.into(),
        };
        identity.server_config()?;
        Ok(identity)
    }

    /// The certificate chain in PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The private key in PEM.
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// A rustls server configuration (ring provider, ALPN `http/1.1`) for this identity.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, DemoError> {
        let certs = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DemoError::Certificate(format!("cannot read the certificate pem: {e}")))?;
        if certs.is_empty() {
            return Err(DemoError::Certificate(
                "the certificate pem holds no certificate".to_owned(),
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| DemoError::Certificate(format!("cannot read the private key pem: {e}")))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| DemoError::Certificate(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| DemoError::Certificate(e.to_string()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
