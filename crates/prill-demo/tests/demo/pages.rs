//! A server of pages (`prill view`): only `GET` and `HEAD`, only for a loopback `Host`,
//! never cached, loading nothing from elsewhere, with the same limits on clients as the
//! demo agents.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Method, StatusCode};
use prill_demo::{ClientLimits, DemoServer, Page, Pages, RunningServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Client, within};

/// Pages that echo what they were asked for, and count how often they were made.
#[derive(Default)]
struct Echo {
    made: AtomicUsize,
}

impl Pages for Echo {
    fn page(&self, path: &str, query: Option<&str>) -> Page {
        self.made.fetch_add(1, Ordering::SeqCst);
        let status = if path == "/missing" { 404 } else { 200 };
        Page::html(status, format!("{path} ? {}", query.unwrap_or("-")))
    }
}

async fn start(pages: Arc<Echo>, limits: ClientLimits) -> RunningServer {
    DemoServer::builder()
        .pages(pages)
        .limits(limits)
        .bind("127.0.0.1:0")
        .await
        .expect("the server starts")
}

#[tokio::test]
async fn pages_are_made_on_request_and_sent_uncached_and_sealed() {
    let pages = Arc::new(Echo::default());
    let server = start(Arc::clone(&pages), ClientLimits::default()).await;
    let mut client = Client::plain(server.addr()).await;
    let reply = client.get("/run/abc?x=1&y=%20").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.text(), "/run/abc ? x=1&y=%20");
    assert_eq!(
        reply.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let policy = reply.header("content-security-policy").expect("a policy");
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    assert!(policy.contains("form-action 'self'"), "{policy}");
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));

    let missing = client.get("/missing").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    let head = client.fetch(Method::HEAD, "/", "", &[]).await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.body.is_empty());
    assert_eq!(pages.made.load(Ordering::SeqCst), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn nothing_but_get_and_head_is_answered_and_no_body_is_read() {
    let pages = Arc::new(Echo::default());
    let server = start(Arc::clone(&pages), ClientLimits::default()).await;
    let mut client = Client::plain(server.addr()).await;
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
        let reply = client.fetch(method.clone(), "/", "{}", &[]).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.header("allow"), Some("GET, HEAD"));
    }
    assert_eq!(pages.made.load(Ordering::SeqCst), 0, "no page was made");
    server.shutdown().await;
}

/// A page whose own name resolves to this machine (DNS rebinding) sends its own name as
/// `Host`: it gets nothing.
#[tokio::test]
async fn a_request_for_another_host_name_gets_no_page() {
    let pages = Arc::new(Echo::default());
    let server = start(Arc::clone(&pages), ClientLimits::default()).await;
    let port = server.addr().port();
    for (host, status) in [
        (
            format!("evil.example:{port}"),
            StatusCode::MISDIRECTED_REQUEST,
        ),
        (format!("127.0.0.1:{port}"), StatusCode::OK),
        (format!("localhost:{port}"), StatusCode::OK),
    ] {
        let mut stream = within(TcpStream::connect(server.addr())).await.unwrap();
        let request = format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut received = String::new();
        within(stream.read_to_string(&mut received)).await.unwrap();
        let expected = format!("HTTP/1.1 {} ", status.as_u16());
        assert!(received.starts_with(&expected), "{host}: {received}");
    }
    assert_eq!(pages.made.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}

/// The pages get the demo server's limits: a client that sends nothing is let go.
#[tokio::test]
async fn a_page_server_lets_a_silent_client_go_after_the_first_byte_limit() {
    let mut limits = ClientLimits::default();
    limits.first_byte = Duration::from_millis(300);
    let server = start(Arc::new(Echo::default()), limits).await;
    let mut stream = within(TcpStream::connect(server.addr())).await.unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the server closed the connection in time");
    assert!(buf.is_empty());
    server.shutdown().await;
}
