//! TLS for https and MCP over https: rustls with the `ring` provider.
//!
//! Certificates are verified against the system's roots (read once per process; an
//! empty or unreadable store is tolerated) plus an optional extra CA given as PEM. An
//! explicit insecure switch accepts any certificate, and logs a warning.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::ConnectError;

/// How to verify servers' certificates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Extra trusted CA certificates, PEM (one or more `CERTIFICATE` blocks).
    pub extra_ca_pem: Option<Vec<u8>>,
    /// Where `extra_ca_pem` came from, for messages.
    pub extra_ca_source: Option<String>,
    /// Accept any certificate. Only for servers you control on a network you trust.
    pub insecure: bool,
}

impl TlsOptions {
    /// Trusts the CA certificates in the PEM file at `path` too.
    pub fn with_ca_file(self, path: &Path) -> Result<TlsOptions, ConnectError> {
        let pem = std::fs::read(path).map_err(|e| {
            ConnectError::config(format!(
                "cannot read the CA certificate file `{}`: {e}",
                path.display()
            ))
        })?;
        Ok(TlsOptions {
            extra_ca_pem: Some(pem),
            extra_ca_source: Some(format!("`{}`", path.display())),
            ..self
        })
    }

    /// Trusts the CA certificates in `pem` too.
    pub fn with_ca_pem(self, pem: impl Into<Vec<u8>>) -> TlsOptions {
        TlsOptions {
            extra_ca_pem: Some(pem.into()),
            extra_ca_source: Some("the extra CA certificate".to_owned()),
            ..self
        }
    }

    /// Turns certificate verification off (`true`) or on.
    pub fn insecure(self, insecure: bool) -> TlsOptions {
        TlsOptions { insecure, ..self }
    }
}

/// The system's trusted roots, read once.
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        if !found.errors.is_empty() {
            tracing::debug!(
                errors = found.errors.len(),
                "some system root certificates could not be read"
            );
        }
        found.certs
    })
}

/// The rustls client configuration for `options`, with the `ring` provider.
pub fn client_config(options: &TlsOptions) -> Result<ClientConfig, ConnectError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::config(format!("cannot set up tls: {e}")))?;
    if options.insecure {
        tracing::warn!(
            "tls certificate verification is off: any server can pretend to be the one asked for"
        );
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth());
    }
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(pem) = &options.extra_ca_pem {
        let source = options
            .extra_ca_source
            .as_deref()
            .unwrap_or("the extra CA certificate");
        let mut count = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| ConnectError::config(format!("{source} is not valid PEM: {e}")))?;
            roots.add(cert).map_err(|e| {
                ConnectError::config(format!("{source} holds an unusable certificate: {e}"))
            })?;
            count += 1;
        }
        if count == 0 {
            return Err(ConnectError::config(format!(
                "{source} holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"
            )));
        }
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

/// Why a TLS handshake failed, and what to do about it.
pub(crate) fn explain(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(_) => format!(
            "{error}; if the server's certificate is signed by a private certificate authority \
             (or is self-signed), trust it with --ca-cert FILE, or turn verification off with --insecure"
        ),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            format!("{error}; is the server speaking https on that port?")
        }
        _ => error.to_string(),
    }
}

/// A verifier that accepts every certificate, but still checks handshake signatures
/// (so the connection is encrypted to whoever holds the certificate's key).
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_insecure_configs_build() {
        assert!(client_config(&TlsOptions::default()).is_ok());
        assert!(client_config(&TlsOptions::default().insecure(true)).is_ok());
    }

    #[test]
    fn bad_extra_ca_is_a_config_error() {
        let e = client_config(&TlsOptions::default().with_ca_pem("not pem")).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert!(e.to_string().contains("holds no PEM certificate"), "{e}");

        let garbled = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let e = client_config(&TlsOptions::default().with_ca_pem(garbled)).unwrap_err();
        assert!(e.to_string().contains("unusable certificate"), "{e}");

        let e = TlsOptions::default()
            .with_ca_file(Path::new("/nonexistent/ca.pem"))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read the CA certificate file `/nonexistent/ca.pem`"),
            "{e}"
        );
    }

    #[test]
    fn certificate_errors_suggest_the_flags() {
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let text = explain(&e);
        assert!(
            text.contains("--ca-cert") && text.contains("--insecure"),
            "{text}"
        );
    }
}
