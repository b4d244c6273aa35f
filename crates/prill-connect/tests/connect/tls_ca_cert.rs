//! `--ca-cert` with a self-signed server certificate (issue 16): the demo server on
//! 127.0.0.1 serves https with a certificate made here, CA:TRUE and used as its own
//! (what `openssl req -x509 -addext subjectAltName=IP:127.0.0.1` makes). Given with
//! `--ca-cert` it is accepted, as curl does; its name and dates are still checked, and
//! every refusal is worded, with no `Debug` names of rustls or webpki.

use prill_connect::{
    AgentRequest, ConnectError, Connector, ErrorKind, HttpOptions, NeuroSanHttp, TlsOptions, Url,
};
use prill_testkit::prill_demo::TlsIdentity;
use prill_testkit::{Demo, start_demo_with};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use serde_json::json;

/// A self-signed certificate for `names`, a CA (`CA:TRUE`) when `ca`, valid from
/// `from` to `to` (years).
fn certificate(names: &[&str], ca: bool, from: i32, to: i32) -> TlsIdentity {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "prill test server");
    if ca {
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    }
    params.not_before = rcgen::date_time_ymd(from, 1, 1);
    params.not_after = rcgen::date_time_ymd(to, 1, 1);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    TlsIdentity::from_pem(cert.pem(), key.serialize_pem()).unwrap()
}

/// The usual one: CA:TRUE, for 127.0.0.1, valid now.
fn self_signed_ca() -> TlsIdentity {
    certificate(&["127.0.0.1"], true, 2020, 2090)
}

async fn multiply(demo: &Demo, ca_pem: Option<&str>) -> Result<(), ConnectError> {
    let mut tls = TlsOptions::default();
    if let Some(pem) = ca_pem {
        tls = tls.with_ca_pem(pem);
    }
    let options = HttpOptions {
        tls,
        ..HttpOptions::default()
    };
    let base = Url::parse(&demo.http_url()).unwrap();
    let connector = NeuroSanHttp::https(&base, &options).unwrap();
    let mut request = AgentRequest::new("multiply");
    request.sly_data = json!({"x": 6, "y": 7}).as_object().cloned();
    let response = connector.open("math_guy").await?.send(&request).await?;
    assert_eq!(response.sly_data, Some(json!({"equals": 42.0})));
    Ok(())
}

/// A TLS error's text, checked to be words: no `CamelCase` name of a Rust value (a
/// lower-case letter followed by an upper-case one).
fn worded(e: ConnectError) -> String {
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    let text = e.to_string();
    let debug_name = text.split(|c: char| !c.is_ascii_alphanumeric()).find(|w| {
        w.as_bytes()
            .windows(2)
            .any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
    });
    assert_eq!(debug_name, None, "a Debug name in: {text}");
    text
}

#[tokio::test]
async fn a_self_signed_ca_certificate_given_with_ca_cert_is_accepted() {
    let identity = self_signed_ca();
    let pem = identity.cert_pem().to_owned();
    let demo = start_demo_with(identity).await;
    multiply(&demo, Some(&pem)).await.unwrap();

    // Without it the refusal says why in words and suggests the flag.
    let text = worded(multiply(&demo, None).await.unwrap_err());
    assert!(
        text.contains("the server's certificate is a CA certificate")
            || text.contains("not signed by a trusted certificate authority"),
        "{text}"
    );
    assert!(text.contains("--ca-cert"), "{text}");
    demo.shutdown().await;
}

#[tokio::test]
async fn another_certificate_given_is_refused_in_words() {
    let demo = start_demo_with(self_signed_ca()).await;
    let unrelated = self_signed_ca();
    let text = worded(
        multiply(&demo, Some(unrelated.cert_pem()))
            .await
            .unwrap_err(),
    );
    assert!(
        text.contains(
            "the server's certificate is a CA certificate, which is not accepted as the \
             server's own unless it is given with --ca-cert"
        ),
        "{text}"
    );
    assert!(
        text.contains("neither one of the certificates in the extra CA certificate"),
        "{text}"
    );
    assert!(!text.contains("CaUsedAsEndEntity"), "{text}");
    demo.shutdown().await;
}

#[tokio::test]
async fn a_given_certificate_still_needs_the_right_name_and_dates() {
    let wrong_name = certificate(&["example.com"], true, 2020, 2090);
    let pem = wrong_name.cert_pem().to_owned();
    let demo = start_demo_with(wrong_name).await;
    let text = worded(multiply(&demo, Some(&pem)).await.unwrap_err());
    assert!(
        text.contains(
            "the server's certificate is not for 127.0.0.1: it is for example.com (it is the \
             certificate in the extra CA certificate"
        ),
        "{text}"
    );
    demo.shutdown().await;

    let expired = certificate(&["127.0.0.1"], true, 2000, 2001);
    let pem = expired.cert_pem().to_owned();
    let demo = start_demo_with(expired).await;
    let text = worded(multiply(&demo, Some(&pem)).await.unwrap_err());
    assert!(text.contains("the server's certificate expired "), "{text}");
    demo.shutdown().await;

    let future = certificate(&["127.0.0.1"], true, 2080, 2090);
    let pem = future.cert_pem().to_owned();
    let demo = start_demo_with(future).await;
    let text = worded(multiply(&demo, Some(&pem)).await.unwrap_err());
    assert!(
        text.contains("the server's certificate is not valid for another "),
        "{text}"
    );
    demo.shutdown().await;
}
