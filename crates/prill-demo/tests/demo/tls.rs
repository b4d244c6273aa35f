//! https on the same port as http.

use http::StatusCode;
use prill_demo::{DemoServer, TlsIdentity};
use serde_json::json;

use crate::common::{Client, only_line, start, tls_connector, within};

#[tokio::test]
async fn https_and_http_share_one_port_and_answer_alike() {
    let server = start().await;
    let cert = server.tls().expect("a certificate").cert_pem().to_owned();
    assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
    assert_eq!(
        server.https_base_url(),
        Some(format!("https://{}", server.addr()))
    );
    let request = json!({"user_message": {"type": "HUMAN", "text": "multiply"}, "sly_data": {"x": 847, "y": 23}});
    let mut plain = Client::plain(server.addr()).await;
    let expected_list = plain.get("/api/v1/list").await;
    let expected_answer = plain.chat("math_guy", &request).await;
    for name in ["localhost", "127.0.0.1"] {
        let mut tls = Client::tls(server.addr(), &cert, name).await;
        let list = tls.get("/api/v1/list").await;
        assert_eq!(list.status, StatusCode::OK);
        assert_eq!(list.body, expected_list.body);
        let answer = tls.chat("math_guy", &request).await;
        assert_eq!(answer.body, expected_answer.body);
        let line = only_line(&answer);
        assert_eq!(
            line["response"]["sly_data"]["equals"].as_f64(),
            Some(19481.0)
        );
        // Several requests on one TLS connection.
        assert_eq!(tls.get("/healthz").await.status, StatusCode::OK);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_that_does_not_trust_the_certificate_is_refused() {
    let server = start().await;
    let other = TlsIdentity::self_signed().expect("a certificate");
    let stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connects");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    let handshake = within(tls_connector(other.cert_pem()).connect(name, stream)).await;
    assert!(handshake.is_err());
    // Plain http still works afterwards.
    let mut plain = Client::plain(server.addr()).await;
    assert_eq!(plain.get("/healthz").await.status, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn without_a_certificate_a_tls_client_is_disconnected() {
    let server = DemoServer::builder()
        .bind("127.0.0.1:0")
        .await
        .expect("starts");
    assert!(server.https_base_url().is_none());
    let identity = TlsIdentity::self_signed().expect("a certificate");
    let stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connects");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    assert!(
        within(tls_connector(identity.cert_pem()).connect(name, stream))
            .await
            .is_err()
    );
    server.shutdown().await;
}

#[test]
fn identities_round_trip_through_pem() {
    let identity = TlsIdentity::self_signed().expect("a certificate");
    let again = TlsIdentity::from_pem(identity.cert_pem(), identity.key_pem()).expect("valid pem");
    assert_eq!(again.cert_pem(), identity.cert_pem());
    assert!(TlsIdentity::from_pem("not pem", identity.key_pem()).is_err());
    assert!(!format!("{identity:?}").contains("PRIVATE KEY"));
}
