//! TLS for https and MCP over https: rustls with the `ring` provider.
//!
//! Certificates are verified against the system's roots (read once per process, at the
//! first certificate checked, so a run over plain http never reads them; an empty or
//! unreadable store is tolerated) plus optional extra CAs given as PEM
//! (`--ca-cert`). A certificate given that way is also accepted as the server's own
//! certificate, byte for byte, even when it is a CA certificate (what `openssl req
//! -x509` makes), as curl does; its name and validity period are still checked, and so
//! is the handshake's signature. An explicit insecure switch accepts any certificate,
//! and logs a warning. Every TLS error is phrased in words ([`explain`]).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, OtherError, RootCertStore,
    SignatureScheme,
};

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
        // The run says so once, as a note (`--insecure`); this is for the log.
        tracing::debug!(
            "tls certificate verification is off: any server can pretend to be the one asked for"
        );
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier(provider, Trust::Any)))
            .with_no_client_auth());
    }
    let Some(pem) = &options.extra_ca_pem else {
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier(provider, Trust::SystemRoots)))
            .with_no_client_auth());
    };
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(system_roots().iter().cloned());
    let source = options
        .extra_ca_source
        .as_deref()
        .unwrap_or("the extra CA certificate");
    let mut given = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert =
            cert.map_err(|e| ConnectError::config(format!("{source} is not valid PEM: {e}")))?;
        roots.add(cert.clone()).map_err(|e| {
            ConnectError::config(format!(
                "{source} holds an unusable certificate: {}",
                explain(&e)
            ))
        })?;
        given.push(cert);
    }
    if given.is_empty() {
        return Err(ConnectError::config(format!(
            "{source} holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"
        )));
    }
    let chained = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| ConnectError::config(format!("cannot set up tls: {e}")))?;
    let verifier = GivenOrChained {
        chained,
        given,
        source: source.to_owned(),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// Which certificates a [`Verifier`] accepts.
#[derive(Debug, Clone, Copy)]
enum Trust {
    /// Those the system's roots vouch for, read and parsed on the first certificate
    /// checked, once per process: a run that speaks only plain http (a local model, a
    /// fake server on loopback) never reads them. Reading them took 12 ms of every
    /// run's start, and each client parsed them again. An empty or unreadable store
    /// refuses every certificate as of an unknown issuer, as rustls' own verifier over
    /// no roots does.
    SystemRoots,
    /// Any (`--insecure`).
    Any,
}

/// A verifier of servers' certificates by `Trust`, which checks the handshake's
/// signatures either way (so the connection is encrypted to whoever holds the
/// certificate's key).
#[derive(Debug)]
struct Verifier(Arc<CryptoProvider>, Trust);

impl Verifier {
    /// The verifier over the system's roots, made on first use.
    fn system_roots(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        static VERIFIER: OnceLock<Option<Arc<WebPkiServerVerifier>>> = OnceLock::new();
        VERIFIER
            .get_or_init(|| {
                let mut roots = RootCertStore::empty();
                roots.add_parsable_certificates(system_roots().iter().cloned());
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.0.clone())
                    .build()
                    .ok()
            })
            .as_ref()
            .ok_or(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer,
            ))
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.1 {
            Trust::Any => Ok(ServerCertVerified::assertion()),
            Trust::SystemRoots => self.system_roots()?.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ),
        }
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

/// Verifies against the roots and the certificates given with `--ca-cert`, and also
/// accepts a server whose own certificate is, byte for byte, one of those given, once
/// its name and validity period check out. The handshake's signature is checked either
/// way.
#[derive(Debug)]
struct GivenOrChained {
    chained: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
    /// Where the given certificates came from, for messages.
    source: String,
}

impl ServerCertVerifier for GivenOrChained {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chained = self.chained.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        let Err(rustls::Error::InvalidCertificate(reason)) = chained else {
            return chained;
        };
        let given = self.given.iter().any(|c| c.as_ref() == end_entity.as_ref());
        let error = |reason: CertificateError| {
            let reason = certificate_words(&reason);
            let given_in = self.source.clone();
            let rejected = if given {
                Rejected::Given { reason, given_in }
            } else {
                Rejected::NotGiven { reason, given_in }
            };
            rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
                rejected,
            ))))
        };
        if !given {
            return Err(error(reason));
        }
        // The server's own certificate was given: its name and dates still count.
        let parsed = ParsedCertificate::try_from(end_entity).map_err(|e| match e {
            rustls::Error::InvalidCertificate(reason) => error(reason),
            other => other,
        })?;
        rustls::client::verify_server_name(&parsed, server_name).map_err(|e| match e {
            rustls::Error::InvalidCertificate(reason) => error(reason),
            other => other,
        })?;
        let Some((not_before, not_after)) = validity(end_entity.as_ref()) else {
            return Err(error(CertificateError::BadEncoding));
        };
        let time = now.as_secs();
        if time < not_before {
            return Err(error(CertificateError::NotValidYetContext {
                time: now,
                not_before: UnixTime::since_unix_epoch(std::time::Duration::from_secs(not_before)),
            }));
        }
        if time > not_after {
            return Err(error(CertificateError::ExpiredContext {
                time: now,
                not_after: UnixTime::since_unix_epoch(std::time::Duration::from_secs(not_after)),
            }));
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chained.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chained.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chained.supported_verify_schemes()
    }
}

/// A server certificate refused although certificates were given with `--ca-cert`:
/// why, in words, and where they came from.
#[derive(Debug, thiserror::Error)]
enum Rejected {
    /// Neither one of those given nor signed by one.
    #[error(
        "{reason}, and it is neither one of the certificates in {given_in} nor signed by one of them; \
         give the server's certificate or its CA with --ca-cert, or turn verification off with --insecure"
    )]
    NotGiven { reason: String, given_in: String },
    /// One of those given, but for another name or out of its dates.
    #[error(
        "{reason} (it is the certificate in {given_in}, which is trusted as the server's own \
         but still needs the server's name and a current date)"
    )]
    Given { reason: String, given_in: String },
}

/// The validity period (`notBefore`, `notAfter`, as seconds since 1970; 0 for times
/// before it) of a DER certificate, or `None` when it cannot be read.
fn validity(der: &[u8]) -> Option<(u64, u64)> {
    let (0x30, certificate, _) = der_element(der)? else {
        return None;
    };
    let (0x30, tbs, _) = der_element(certificate)? else {
        return None;
    };
    let (tag, _, mut rest) = der_element(tbs)?;
    if tag == 0xa0 {
        // The version came first; the serial number follows.
        rest = der_element(rest)?.2;
    }
    let rest = der_element(rest)?.2; // the signature algorithm
    let rest = der_element(rest)?.2; // the issuer
    let (0x30, period, _) = der_element(rest)? else {
        return None;
    };
    let (tag, not_before, rest) = der_element(period)?;
    let not_before = der_time(tag, not_before)?;
    let (tag, not_after, _) = der_element(rest)?;
    Some((not_before, der_time(tag, not_after)?))
}

/// One DER element of `input`: its tag, its contents and what follows it.
fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |len, &b| (len << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// A DER `UTCTime` (tag 0x17, `YYMMDDHHMMSSZ`) or `GeneralizedTime` (0x18,
/// `YYYYMMDDHHMMSSZ`) as seconds since 1970 (0 for earlier times).
fn der_time(tag: u8, contents: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(contents).ok()?;
    let (year, rest) = match tag {
        0x17 => {
            let yy: i64 = text.get(..2)?.parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, text.get(2..)?)
        }
        0x18 => (text.get(..4)?.parse().ok()?, text.get(4..)?),
        _ => return None,
    };
    let digits = rest.strip_suffix('Z')?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let field = |at: usize| -> i64 { digits[at..at + 2].parse().unwrap_or(0) };
    let (month, day) = (field(0), field(2));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let seconds =
        days_from_civil(year, month, day) * 86_400 + field(4) * 3_600 + field(6) * 60 + field(8);
    Some(u64::try_from(seconds).unwrap_or(0))
}

/// Days from 1970-01-01 to the given day of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Why a TLS handshake failed, in words, and what to do about it.
pub(crate) fn explain(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::Other(other))
            if other.0.downcast_ref::<Rejected>().is_some() =>
        {
            other.0.to_string()
        }
        rustls::Error::InvalidCertificate(reason) => format!(
            "{}; if the server's certificate is signed by a private certificate authority \
             (or is self-signed), trust it with --ca-cert FILE, or turn verification off with --insecure",
            certificate_words(reason)
        ),
        rustls::Error::InvalidMessage(_)
        | rustls::Error::InappropriateMessage { .. }
        | rustls::Error::InappropriateHandshakeMessage { .. } => {
            "the server's answer is not a TLS handshake; is the server speaking https on that port?"
                .to_owned()
        }
        rustls::Error::AlertReceived(alert) => format!(
            "the server ended the handshake with the alert \"{}\"",
            debug_words(alert)
        ),
        rustls::Error::PeerIncompatible(why) => format!(
            "the server and this client have no TLS version, cipher or extension in common ({})",
            debug_words(why)
        ),
        rustls::Error::PeerMisbehaved(why) => {
            format!("the server broke the TLS protocol ({})", debug_words(why))
        }
        rustls::Error::NoCertificatesPresented => "the server sent no certificate".to_owned(),
        rustls::Error::InvalidCertRevocationList(why) => format!(
            "a certificate revocation list is invalid ({})",
            debug_words(why)
        ),
        _ => error.to_string(),
    }
}

/// Why the server's certificate was refused, in words.
#[allow(deprecated)] // rustls still reports the old unit variants in places
fn certificate_words(reason: &CertificateError) -> String {
    use CertificateError as E;
    match reason {
        E::BadEncoding => "the server's certificate is not correctly encoded".to_owned(),
        E::Expired => "the server's certificate has expired".to_owned(),
        E::ExpiredContext { time, not_after } => format!(
            "the server's certificate expired {} seconds ago",
            time.as_secs().saturating_sub(not_after.as_secs())
        ),
        E::NotValidYet => "the server's certificate is not valid yet".to_owned(),
        E::NotValidYetContext { time, not_before } => format!(
            "the server's certificate is not valid for another {} seconds",
            not_before.as_secs().saturating_sub(time.as_secs())
        ),
        E::Revoked => "the server's certificate has been revoked".to_owned(),
        E::UnhandledCriticalExtension => {
            "the server's certificate has a critical extension this client does not know".to_owned()
        }
        E::UnknownIssuer => {
            "the server's certificate is not signed by a trusted certificate authority".to_owned()
        }
        E::BadSignature => "the server's certificate has a bad signature".to_owned(),
        E::UnsupportedSignatureAlgorithm
        | E::UnsupportedSignatureAlgorithmContext { .. }
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "the server's certificate is signed with an algorithm this client does not support"
                .to_owned()
        }
        E::NotValidForName => "the server's certificate is not for its name".to_owned(),
        E::NotValidForNameContext {
            expected,
            presented,
        } => {
            // `presented` holds webpki's `Debug` forms: `DnsName("example.com")`.
            let names: Vec<&str> = presented
                .iter()
                .map(|name| {
                    name.split_once('(')
                        .and_then(|(_, rest)| rest.strip_suffix(')'))
                        .unwrap_or(name)
                        .trim_matches('"')
                })
                .collect();
            let valid = if names.is_empty() {
                "no name".to_owned()
            } else {
                names.join(", ")
            };
            format!(
                "the server's certificate is not for {}: it is for {valid}",
                expected.to_str()
            )
        }
        E::InvalidPurpose | E::InvalidPurposeContext { .. } => {
            "the server's certificate is not meant for a TLS server (extended key usage)".to_owned()
        }
        E::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
            Some(webpki::Error::CaUsedAsEndEntity) => {
                "the server's certificate is a CA certificate, which is not accepted as the \
                 server's own unless it is given with --ca-cert"
                    .to_owned()
            }
            Some(webpki::Error::EndEntityUsedAsCa) => {
                "the server's certificate chain uses a certificate that is not a CA as one"
                    .to_owned()
            }
            Some(webpki::Error::UnsupportedCertVersion) => {
                "the server's certificate is not an X.509 version 3 certificate".to_owned()
            }
            Some(webpki::Error::RequiredEkuNotFound)
            | Some(webpki::Error::RequiredEkuNotFoundContext(_)) => {
                "the server's certificate is not meant for a TLS server (extended key usage)"
                    .to_owned()
            }
            Some(other) => format!(
                "the server's certificate was refused ({})",
                debug_words(other)
            ),
            None => format!("the server's certificate was refused ({other})"),
        },
        other => format!(
            "the server's certificate was refused ({})",
            debug_words(other)
        ),
    }
}

/// A value's `Debug` name in words: `CaUsedAsEndEntity` becomes `ca used as end
/// entity` (only the name, not the fields after it).
fn debug_words(value: &dyn std::fmt::Debug) -> String {
    let name = format!("{value:?}");
    let name: String = name
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut words = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            words.push(' ');
        }
        words.push(c.to_ascii_lowercase());
    }
    words
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
    fn der_times_are_seconds_since_1970() {
        assert_eq!(der_time(0x17, b"700101000000Z"), Some(0));
        assert_eq!(der_time(0x17, b"000301000000Z"), Some(951_868_800));
        assert_eq!(der_time(0x18, b"20240229120000Z"), Some(1_709_208_000));
        assert_eq!(der_time(0x18, b"19690101000000Z"), Some(0), "before 1970");
        assert_eq!(der_time(0x17, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(der_time(0x17, b"501231235959Z"), Some(0), "1950");
        assert_eq!(der_time(0x17, b"2402291200Z"), None, "no seconds");
        assert_eq!(der_time(0x18, b"20241329120000Z"), None, "month 13");
        assert_eq!(der_time(0x04, b"20240229120000Z"), None, "not a time");
    }

    #[test]
    fn a_certificates_validity_is_read() {
        let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2001, 2, 3);
        params.not_after = rcgen::date_time_ymd(2060, 1, 1);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(
            validity(cert.der().as_ref()),
            Some((981_158_400, 2_840_140_800))
        );
        assert_eq!(validity(&cert.der()[..40]), None, "cut short");
        assert_eq!(validity(b""), None);
    }

    #[test]
    fn debug_names_become_words() {
        assert_eq!(
            debug_words(&webpki::Error::CaUsedAsEndEntity),
            "ca used as end entity"
        );
        assert_eq!(
            debug_words(&rustls::AlertDescription::HandshakeFailure),
            "handshake failure"
        );
        let e = rustls::Error::AlertReceived(rustls::AlertDescription::BadCertificate);
        assert_eq!(
            explain(&e),
            "the server ended the handshake with the alert \"bad certificate\""
        );
        let e = rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
            webpki::Error::CaUsedAsEndEntity,
        ))));
        assert!(
            explain(&e).starts_with("the server's certificate is a CA certificate, which is not"),
            "{}",
            explain(&e)
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
