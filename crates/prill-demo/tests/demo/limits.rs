//! The limits on clients ([`ClientLimits`]): a connection that sends nothing, a TLS
//! handshake, a request head or body that stalls, a keep-alive connection left idle and a
//! client that reads nothing are each dropped once their (short, here) limit passes; the
//! connection cap holds; and a client that keeps to the limits is served as before.
//!
//! Each test sets only the limit it checks short and leaves the others at their defaults,
//! so the connection can end for no other reason. Every wait is bounded by
//! [`CLOSED_WITHIN`], far above the limits set here and below the 30 s head limit the
//! server had before it had these limits.

use std::time::{Duration, Instant};

use prill_cassette::Latency;
use prill_demo::{ClientLimits, DemoServer, FAULT_HEADER, Recordings, RunningServer, TlsIdentity};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{eventually, within};

/// The limit a test sets short.
const SHORT: Duration = Duration::from_millis(300);
/// How long a test waits at most for the server to drop a client.
const CLOSED_WITHIN: Duration = Duration::from_secs(10);

/// A demo server (with a certificate) under `limits`.
async fn start_with(limits: ClientLimits) -> RunningServer {
    let identity = TlsIdentity::self_signed().expect("a certificate");
    DemoServer::builder()
        .tls(Some(identity))
        .limits(limits)
        .bind("127.0.0.1:0")
        .await
        .expect("the server starts")
}

/// The default limits with `set` applied.
fn limits(set: impl FnOnce(&mut ClientLimits)) -> ClientLimits {
    let mut limits = ClientLimits::default();
    set(&mut limits);
    limits
}

async fn connect(server: &RunningServer) -> TcpStream {
    within(TcpStream::connect(server.addr()))
        .await
        .expect("connects")
}

/// Everything the server sends until it closes the connection (a reset counts as a
/// close), failing the test when it is still open after [`CLOSED_WITHIN`].
async fn until_closed(stream: &mut (impl AsyncRead + Unpin)) -> Vec<u8> {
    let mut received = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(CLOSED_WITHIN, read)
        .await
        .expect("the server closed the connection in time");
    received
}

/// Waits until the server holds no connection.
async fn until_none_open(server: &RunningServer) {
    eventually("the server holds no connection", || {
        server.open_connections() == 0
    })
    .await;
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_first_byte_limit() {
    let server = start_with(limits(|l| l.first_byte = SHORT)).await;
    let started = Instant::now();
    let mut stream = connect(&server).await;
    let received = until_closed(&mut stream).await;
    assert!(received.is_empty(), "{received:?}");
    assert!(started.elapsed() >= SHORT, "closed before its limit");
    until_none_open(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_tls_handshake_that_stalls_is_closed_after_its_limit() {
    let server = start_with(limits(|l| l.tls_handshake = SHORT)).await;
    let mut stream = connect(&server).await;
    // The first byte of a ClientHello, and nothing more.
    stream.write_all(&[0x16]).await.expect("writes");
    let started = Instant::now();
    until_closed(&mut stream).await;
    assert!(started.elapsed() >= SHORT, "closed before its limit");
    until_none_open(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_request_head_that_stalls_is_closed_after_the_head_limit() {
    let server = start_with(limits(|l| l.head = SHORT)).await;
    let mut stream = connect(&server).await;
    let started = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .expect("writes");
    let received = until_closed(&mut stream).await;
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
    assert!(started.elapsed() >= SHORT, "closed before its limit");
    until_none_open(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_keep_alive_connection_left_idle_is_closed_after_the_head_limit() {
    let server = start_with(limits(|l| l.head = SHORT)).await;
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("writes");
    let (status, _) = read_response(&mut stream).await;
    assert_eq!(status, 200);
    let idle_since = Instant::now();
    let received = until_closed(&mut stream).await;
    assert!(received.is_empty(), "{received:?}");
    assert!(idle_since.elapsed() >= SHORT, "closed before its limit");
    until_none_open(&server).await;
    server.shutdown().await;
}

/// Sends the head of a chat whose body is 100,000 bytes, and `sent` bytes of that body.
async fn part_of_a_body(stream: &mut TcpStream, sent: usize) {
    let head = "POST /api/v1/echo/streaming_chat HTTP/1.1\r\nHost: localhost\r\n\
                Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.expect("writes");
    stream.write_all(&vec![b' '; sent]).await.expect("writes");
}

/// Checks that `received` is a 408 that closes the connection, saying `why`.
fn assert_408(received: &[u8], why: &str) {
    let text = String::from_utf8_lossy(received);
    assert!(text.starts_with("HTTP/1.1 408 Request Timeout"), "{text}");
    assert!(text.contains("connection: close"), "{text}");
    assert!(text.contains(why), "{text}");
}

#[tokio::test]
async fn a_body_that_stalls_is_answered_408_after_the_body_idle_limit() {
    let server = start_with(limits(|l| l.body_idle = SHORT)).await;
    let mut stream = connect(&server).await;
    part_of_a_body(&mut stream, 60_000).await;
    let started = Instant::now();
    let received = until_closed(&mut stream).await;
    assert_408(&received, "the request body stalled");
    assert!(started.elapsed() >= SHORT, "answered before its limit");
    // The connection's task has ended, and with it what was read of the body.
    until_none_open(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_that_trickles_is_answered_408_after_the_body_limit() {
    let server = start_with(limits(|l| l.body = SHORT)).await;
    let stream = connect(&server).await;
    let (mut read, mut write) = stream.into_split();
    let head = "POST /api/v1/echo/streaming_chat HTTP/1.1\r\nHost: localhost\r\n\
                Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
    write.write_all(head.as_bytes()).await.expect("writes");
    let started = Instant::now();
    // A byte every 20 ms: never idle for long, but never done either.
    let trickle = tokio::spawn(async move {
        while write.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let received = until_closed(&mut read).await;
    assert_408(&received, "the request body took longer than");
    assert!(started.elapsed() >= SHORT, "answered before its limit");
    trickle.abort();
    until_none_open(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_replaying_server_times_bodies_out_too() {
    let dir = std::env::temp_dir().join(format!(
        "prill-demo-limits-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).expect("a folder");
    let recordings = Recordings::read(&dir, Latency::Zero).expect("an empty folder reads");
    let server = DemoServer::builder()
        .replay(recordings)
        .limits(limits(|l| l.body_idle = SHORT))
        .bind("127.0.0.1:0")
        .await
        .expect("the server starts");
    let mut stream = connect(&server).await;
    part_of_a_body(&mut stream, 1_000).await;
    let received = until_closed(&mut stream).await;
    assert_408(&received, "the request body stalled");
    until_none_open(&server).await;
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_client_that_reads_nothing_is_dropped_after_the_write_stall_limit() {
    let server = start_with(limits(|l| l.write_stall = SHORT)).await;
    let mut stream = connect(&server).await;
    let body = r#"{"user_message": {"type": "HUMAN", "text": "hello"}}"#;
    let request = format!(
        "POST /api/v1/echo/streaming_chat HTTP/1.1\r\nHost: localhost\r\n\
         {FAULT_HEADER}: huge\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("writes");
    // 64 MiB come back, far more than the sockets' buffers hold, and this client reads
    // none of it, yet keeps its end open.
    eventually("the server is sending the answer", || {
        server.active_streams() == 1
    })
    .await;
    tokio::time::timeout(CLOSED_WITHIN, until_none_open(&server))
        .await
        .expect("the server let the client go in time");
    assert_eq!(server.active_streams(), 0, "the stream stopped with it");
    drop(stream);
    server.shutdown().await;
}

#[tokio::test]
async fn the_connection_cap_holds_and_idle_connections_give_way() {
    const CAP: usize = 3;
    let server = start_with(limits(|l| {
        l.max_connections = Some(CAP);
        l.first_byte = SHORT;
    }))
    .await;
    let opened = Instant::now();
    let mut idle = Vec::new();
    for _ in 0..CAP {
        idle.push(connect(&server).await);
    }
    eventually("the server holds the idle connections", || {
        server.open_connections() == CAP
    })
    .await;
    // One more, with a request: the kernel queues it until a slot is free.
    let mut waiting = connect(&server).await;
    waiting
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("writes");
    // Served once an idle connection is dropped; the count watched all along.
    let mut most = 0;
    let received = {
        let read = until_closed(&mut waiting);
        tokio::pin!(read);
        loop {
            most = most.max(server.open_connections());
            tokio::select! {
                received = &mut read => break received,
                () = tokio::time::sleep(Duration::from_millis(2)) => {}
            }
        }
    };
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(
        opened.elapsed() >= SHORT,
        "served before an idle connection reached its limit"
    );
    assert!(
        most <= CAP,
        "the server held {most} connections, over {CAP}"
    );
    for mut stream in idle {
        assert!(until_closed(&mut stream).await.is_empty());
    }
    server.shutdown().await;
}

/// Reads one response with a `Content-Length` body: its status and its body.
async fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = within(stream.read(&mut byte)).await.expect("reads");
        assert_eq!(n, 1, "the connection closed mid-head: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).expect("an ascii head");
    let status = head[9..12].parse().expect("a status");
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().expect("a length"))
        })
        .expect("a content-length");
    let mut body = vec![0u8; length];
    within(stream.read_exact(&mut body))
        .await
        .expect("the body");
    (status, String::from_utf8(body).expect("a utf-8 body"))
}

#[tokio::test]
async fn a_client_that_keeps_to_the_limits_keeps_its_connection() {
    let limit = Duration::from_secs(1);
    let server = start_with(limits(|l| {
        l.first_byte = limit;
        l.head = limit;
        l.body_idle = limit;
        l.body = 3 * limit;
        l.write_stall = limit;
    }))
    .await;
    let mut stream = connect(&server).await;
    // Five requests 300 ms apart: longer in all than any one limit.
    for _ in 0..5 {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("writes");
        assert_eq!(read_response(&mut stream).await.0, 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // A body sent in three parts, 200 ms apart.
    let body = r#"{"messages": [{"role": "user", "content": "hi"}]}"#;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("writes");
    for part in [&body[..10], &body[10..30], &body[30..]] {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stream.write_all(part.as_bytes()).await.expect("writes");
    }
    let (status, answer) = read_response(&mut stream).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("You said: hi"), "{answer}");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("writes");
    assert_eq!(read_response(&mut stream).await.0, 200);
    assert_eq!(server.open_connections(), 1);
    server.shutdown().await;
}
