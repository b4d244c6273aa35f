//! The fault modes chosen with `x-prill-fault`.

use std::time::Duration;

use http::{Method, StatusCode};
use http_body_util::BodyExt;
use prill_demo::FAULT_HEADER;
use serde_json::{Value, json};

use crate::common::{Client, eventually, start, within};

const ECHO: &str = "/api/v1/echo/streaming_chat";

fn hello() -> String {
    json!({"user_message": {"type": "HUMAN", "text": "hello"}}).to_string()
}

#[tokio::test]
async fn drop_cuts_the_stream_after_one_line() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let response = client
        .send(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "drop")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(frame) = within(body.frame()).await {
        match frame {
            Ok(frame) => received.extend_from_slice(&frame.into_data().expect("data")),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert_eq!(
        received,
        b"{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n"
    );
    assert!(failed, "the body ends with an error, not a clean end");
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_sends_a_line_that_is_not_json() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let reply = client
        .fetch(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "malformed")])
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let lines: Vec<&str> = reply.text().lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(serde_json::from_str::<Value>(lines[0]).is_err());
    let last: Value = serde_json::from_str(lines[1]).expect("the answer follows");
    assert_eq!(last["response"]["text"], "hello");
    server.shutdown().await;
}

#[tokio::test]
async fn status_faults_answer_like_neuro_san() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let cases = [
        (
            "500",
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error": "Internal server error"}"#,
            None,
        ),
        (
            "503",
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"error": "Server is shutting down"}"#,
            Some("1"),
        ),
        (
            "429",
            StatusCode::TOO_MANY_REQUESTS,
            r#"{"error": "Too many requests"}"#,
            Some("1"),
        ),
    ];
    for (fault, status, body, retry_after) in cases {
        let reply = client
            .fetch(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, fault)])
            .await;
        assert_eq!(reply.status, status, "{fault}");
        assert_eq!(reply.text(), body, "{fault}");
        assert_eq!(reply.header("retry-after"), retry_after, "{fault}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
    }
    let reply = client
        .fetch(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "explode")])
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.text().contains("unknown fault mode"));
    server.shutdown().await;
}

#[tokio::test]
async fn a_503_once_key_fails_only_its_first_request() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let fault = [(FAULT_HEADER, "503-once:case-1")];
    let first = client.fetch(Method::POST, ECHO, &hello(), &fault).await;
    assert_eq!(first.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(first.header("retry-after"), Some("1"));
    for _ in 0..2 {
        let again = client.fetch(Method::POST, ECHO, &hello(), &fault).await;
        assert_eq!(again.status, StatusCode::OK);
        assert_eq!(again.lines()[0]["response"]["text"], "hello");
    }
    let other = client
        .fetch(
            Method::POST,
            ECHO,
            &hello(),
            &[(FAULT_HEADER, "503-once:case-2")],
        )
        .await;
    assert_eq!(other.status, StatusCode::SERVICE_UNAVAILABLE);
    server.shutdown().await;
}

#[tokio::test]
async fn hang_sends_the_head_then_nothing_until_the_client_leaves() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let response = client
        .send(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "hang")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json-lines");
    let mut body = response.into_body();
    // Nothing comes; any wait would do, since nothing ever will.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), body.frame())
            .await
            .is_err()
    );
    assert_eq!(server.active_streams(), 1);
    drop(body);
    drop(client);
    eventually("the hung stream ends with its client", || {
        server.active_streams() == 0
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn hang_ends_when_the_server_shuts_down() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let response = client
        .send(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "hang")])
        .await;
    let mut body = response.into_body();
    eventually("the stream is active", || server.active_streams() == 1).await;
    within(server.shutdown()).await;
    // The stream is cut: an error (or at worst an end), never a hang.
    let _ = within(body.frame()).await;
}

#[tokio::test]
async fn huge_streams_64_mib_of_lines_then_the_answer() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let response = client
        .send(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "huge")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut total: u64 = 0;
    let mut head: Vec<u8> = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    while let Some(frame) = within(body.frame()).await {
        let data = frame.expect("a good frame").into_data().expect("data");
        total += data.len() as u64;
        if head.len() < prill_demo::HUGE_LINE_BYTES {
            head.extend_from_slice(&data);
        }
        tail.extend_from_slice(&data);
        if tail.len() > 4 * prill_demo::HUGE_LINE_BYTES {
            tail.drain(..tail.len() - 2 * prill_demo::HUGE_LINE_BYTES);
        }
    }
    assert!(total >= prill_demo::DEFAULT_HUGE_BYTES, "{total}");
    let first_line = head.split(|b| *b == b'\n').next().expect("a line");
    assert_eq!(first_line.len() + 1, prill_demo::HUGE_LINE_BYTES);
    let first: Value = serde_json::from_slice(first_line).expect("a json line");
    assert_eq!(first["response"]["type"], "AGENT");
    let last_line = tail
        .trim_ascii_end()
        .rsplit(|b| *b == b'\n')
        .next()
        .expect("a line");
    let last: Value = serde_json::from_slice(last_line).expect("the answer comes last");
    assert_eq!(last["response"]["type"], "AGENT_FRAMEWORK");
    eventually("the huge stream is done", || server.active_streams() == 0).await;

    let reply = client
        .fetch(Method::POST, ECHO, &hello(), &[(FAULT_HEADER, "huge:1")])
        .await;
    assert_eq!(reply.lines().len(), 16 + 1);
    server.shutdown().await;
}
