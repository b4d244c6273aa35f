//! The http connector against the scripted server: the exact request, the streamed
//! answer, and every error and retry rule.

use std::time::Duration;

use prill_connect::{
    AgentRequest, ConnectError, Connector, ErrorKind, HttpOptions, NeuroSanHttp, RetryPolicy,
};
use serde_json::json;

use crate::server::{Reply, Request, Server};

/// Options with short retry waits, so that tests do not sleep long.
fn options() -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
        ..HttpOptions::default()
    }
}

fn connector(server: &Server) -> NeuroSanHttp {
    NeuroSanHttp::new(server.base.clone(), &options()).unwrap()
}

fn final_line(text: &str) -> Vec<u8> {
    let line = json!({"response": {"type": "AGENT_FRAMEWORK", "text": text,
        "chat_context": {"chat_histories": [{"messages": [{"type": "AI", "text": text}]}]},
        "sly_data": {"equals": 42}}});
    format!("{line}\n").into_bytes()
}

async fn chat(
    server: &Server,
    request: &AgentRequest,
) -> Result<prill_connect::AgentResponse, ConnectError> {
    let connector = connector(server);
    let mut conversation = connector.open("math_guy").await?;
    conversation.send(request).await
}

#[tokio::test]
async fn request_is_exact_and_stream_is_decoded() {
    // The stream arrives in awkward pieces: split mid-line, two messages on one line,
    // a blank line, a heartbeat, and a last line without `\n`.
    let body = [
        b"{\"response\": {\"type\": \"AI\", \"origin\": [{\"tool\": \"m\"}], \"text\": \"thin"
            .to_vec(),
        b"king\"}}{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n\n".to_vec(),
        final_line("\"Check sly_data['equals'] for the result\"")
            .strip_suffix(b"\n")
            .unwrap()
            .to_vec(),
    ];
    let server = Server::start(move |_, _| Reply::Stream(body.to_vec())).await;
    let mut request = AgentRequest::new("multiply").with_metadata("user_id", "alice");
    request.sly_data = json!({"x": 847, "y": 23}).as_object().cloned();
    let response = chat(&server, &request).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/api/v1/math_guy/streaming_chat");
    assert_eq!(sent.header("user_id"), Some("alice"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        String::from_utf8(sent.body.clone()).unwrap(),
        r#"{"user_message":{"type":"HUMAN","text":"multiply"},"sly_data":{"x":847,"y":23},"chat_filter":{"chat_filter_type":"MINIMAL"}}"#
    );

    assert_eq!(
        response.text.as_deref(),
        Some("\"Check sly_data['equals'] for the result\"")
    );
    assert_eq!(response.sly_data, Some(json!({"equals": 42})));
    assert!(response.chat_context.is_some());
    assert_eq!(response.messages.len(), 2, "the heartbeat is dropped");
    assert!(response.timings.first_byte.is_some());
    assert!(response.timings.first_byte <= Some(response.timings.total));
}

#[tokio::test]
async fn chat_context_is_carried_by_the_caller() {
    let server = Server::start(|n, _| Reply::Stream(vec![final_line(&format!("turn {n}"))])).await;
    let connector = connector(&server);
    let mut conversation = connector.open("math_guy").await.unwrap();
    let first = conversation.send(&AgentRequest::new("one")).await.unwrap();
    let next = AgentRequest::new("two").with_chat_context(first.chat_context.clone());
    let second = conversation.send(&next).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("turn 1"));
    let requests = server.requests();
    assert!(requests[0].json().get("chat_context").is_none());
    assert_eq!(
        requests[1].json()["chat_context"],
        first.chat_context.unwrap()
    );
}

#[tokio::test]
async fn no_text_and_an_empty_object_is_no_answer() {
    let server = Server::start(|_, _| Reply::Stream(vec![b"{}\n".to_vec()])).await;
    let response = chat(&server, &AgentRequest::default()).await.unwrap();
    assert_eq!(
        server.requests()[0].json()["user_message"]["text"],
        json!(null)
    );
    assert_eq!(response.text, None);
    assert!(response.messages.is_empty());
}

#[tokio::test]
async fn unknown_agent_names_agent_and_server() {
    let server = Server::start(|_, _| Reply::Status(404, vec![], vec![])).await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
    let port = server.base.port().unwrap();
    assert_eq!(
        e.to_string(),
        format!("unknown agent `math_guy` on http://127.0.0.1:{port}")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn other_statuses_show_the_body_and_are_not_retried() {
    let server = Server::start(|_, _| {
        Reply::Status(
            500,
            vec![],
            br#"{"error": "Internal server error"}"#.to_vec(),
        )
    })
    .await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Status);
    assert!(
        e.to_string()
            .ends_with(r#"answered 500 internal server error: {"error": "Internal server error"}"#),
        "{e}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn service_unavailable_is_retried_honouring_retry_after() {
    let server = Server::start(|n, _| match n {
        0 => Reply::Status(503, vec![("Retry-After", "0".into())], b"busy".to_vec()),
        _ => Reply::Stream(vec![final_line("after a retry")]),
    })
    .await;
    let response = chat(&server, &AgentRequest::new("x")).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("after a retry"));
    assert_eq!(server.requests().len(), 2);
    // The retry sends the same request.
    let requests = server.requests();
    assert_eq!(requests[0].body, requests[1].body);
}

/// What `tracing` wrote at `level` and above while `run` ran on this thread.
async fn logged<T>(
    level: tracing::Level,
    run: impl std::future::Future<Output = T>,
) -> (T, String) {
    let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&buffer);
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(move || Captured(std::sync::Arc::clone(&sink)))
        .finish();
    let out = {
        let _guard = tracing::subscriber::set_default(subscriber);
        run.await
    };
    let text = String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
    (out, text)
}

struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn each_retry_is_logged_at_debug_with_its_reason_and_wait_and_nothing_above() {
    // Two 503s, then the answer: two retries (the test runs on one thread, so the
    // exchange logs into this test's subscriber).
    let script = |n, _: &Request| match n {
        0 | 1 => Reply::Status(503, vec![("Retry-After", "0".into())], b"busy".to_vec()),
        _ => Reply::Stream(vec![final_line("after two retries")]),
    };
    let server = Server::start(script).await;
    let (response, debug) = logged(
        tracing::Level::DEBUG,
        chat(&server, &AgentRequest::new("x")),
    )
    .await;
    assert_eq!(response.unwrap().text.as_deref(), Some("after two retries"));
    let retries: Vec<&str> = debug
        .lines()
        .filter(|l| l.contains("asked to come back later; trying again"))
        .collect();
    assert_eq!(retries.len(), 2, "{debug}");
    for (line, attempt) in retries.iter().zip(["attempt=1", "attempt=2"]) {
        assert!(line.contains("DEBUG"), "{line}");
        assert!(
            line.contains("status=503") && line.contains(attempt) && line.contains("wait=0ns"),
            "{line}"
        );
    }

    let server = Server::start(script).await;
    let (response, info) =
        logged(tracing::Level::INFO, chat(&server, &AgentRequest::new("x"))).await;
    assert!(response.is_ok());
    assert_eq!(info, "", "nothing above debug");
}

#[tokio::test]
async fn statuses_that_may_follow_a_run_are_never_retried() {
    // A 500, 502 or 504 may come after the agent ran (and called its tools): asking
    // again would run it twice. Only 429 and 503 say the request was turned away.
    for status in [500, 502, 504, 408, 409] {
        let server = Server::start(move |_, _| Reply::Status(status, vec![], b"no".to_vec())).await;
        let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
        assert!(
            matches!(e, ConnectError::Status { status: s, attempts: 1, .. } if s == status),
            "{e:?}"
        );
        assert!(!e.to_string().contains("attempts"), "{e}");
        assert_eq!(server.requests().len(), 1, "{status}");
    }
}

#[tokio::test]
async fn too_many_requests_gives_up_after_max_attempts() {
    let server = Server::start(|_, _| {
        Reply::Status(
            429,
            vec![("Retry-After", "1".into())],
            b"slow down".to_vec(),
        )
    })
    .await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert!(
        matches!(e, ConnectError::Status { status: 429, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("slow down"));
    assert!(
        e.to_string()
            .contains("answered 429 too many requests after 3 attempts: slow down"),
        "{e}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unreachable_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let base = prill_connect::Url::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    let connector = NeuroSanHttp::new(base, &options()).unwrap();
    let mut conversation = connector.open("math_guy").await.unwrap();
    let e = conversation
        .send(&AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("cannot reach http://127.0.0.1:{port}: ")),
        "{text}"
    );
    assert!(text.ends_with("(after 3 attempts)"), "{text}");
}

#[tokio::test]
async fn a_stream_cut_short_is_a_protocol_error_and_not_retried() {
    let server = Server::start(|_, _| {
        Reply::Cut(vec![
            b"{\"response\": {\"type\": \"AI\", \"text\": \"partial\"}}\n".to_vec(),
        ])
    })
    .await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_malformed_line_is_a_protocol_error() {
    let server = Server::start(|_, _| {
        Reply::Stream(vec![b"{\"response\": {}}\nthis is not json\n".to_vec()])
    })
    .await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(
        e.to_string()
            .contains("broke the protocol: line 2 is not JSON"),
        "{e}"
    );
}

#[tokio::test]
async fn the_body_cap_is_enforced() {
    let line = format!(
        "{}\n",
        json!({"response": {"type": "AI", "text": "x".repeat(1000)}})
    );
    let server =
        Server::start(move |_, _| Reply::Stream(vec![line.clone().into_bytes(); 100])).await;
    let options = HttpOptions {
        max_body_bytes: 10 * 1024,
        ..options()
    };
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    let e = connector
        .chat("math_guy", &AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge);
    assert!(
        e.to_string().ends_with("is larger than the 10 KiB limit"),
        "{e}"
    );
}

#[tokio::test]
async fn a_timeout_drops_the_connection() {
    let mut server = Server::start(|_, _| {
        Reply::Hang(vec![
            b"{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n".to_vec(),
        ])
    })
    .await;
    // Long enough for the request to reach the server on a loaded machine; the server
    // never answers, so the test never waits longer than this.
    let request = AgentRequest::new("x").with_timeout(Duration::from_secs(2));
    let e = chat(&server, &request).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().ends_with("within 2s"), "{e}");
    assert!(
        server.client_gone().await,
        "the server never saw the connection close"
    );
    assert_eq!(server.requests().len(), 1, "timeouts are never retried");
}

#[tokio::test]
async fn list_and_describe() {
    let server = Server::start(|_, request| match request.path.as_str() {
        "/api/v1/list" => Reply::Status(
            200,
            vec![],
            br#"{"agents": [{"agent_name": "math_guy", "description": "does sums", "tags": ["math"]}, {"agent_name": "bare"}]}"#.to_vec(),
        ),
        "/api/v1/deep/math_guy/function" => Reply::Status(
            200,
            vec![],
            br#"{"function": {"description": "does sums", "sly_data_schema": {"type": "object"}}}"#.to_vec(),
        ),
        _ => Reply::Status(404, vec![], vec![]),
    })
    .await;
    let connector = connector(&server);
    let agents = connector.list_agents().await.unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0].name, "math_guy");
    assert_eq!(agents[0].description, "does sums");
    assert_eq!(agents[0].tags, vec!["math".to_owned()]);
    assert_eq!(agents[1].description, "");

    let function = connector.describe("deep/math_guy").await.unwrap();
    assert_eq!(function.description.as_deref(), Some("does sums"));
    assert_eq!(function.sly_data_schema, Some(json!({"type": "object"})));
    assert_eq!(function.parameters, None);

    let e = connector.describe("nobody").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownAgent);
}

#[tokio::test]
async fn a_reset_after_the_request_was_written_is_never_retried() {
    // The server read the whole request, so the agent may be running: a second
    // attempt could run it twice. Only a connection that could not be made is retried
    // (`unreachable_after_retries`).
    let server = Server::start(|_, _| Reply::Reset).await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(!e.to_string().contains("attempts"), "{e}");
    assert_eq!(
        server.requests().len(),
        1,
        "retried after the request was sent"
    );
}

#[tokio::test]
async fn latency_is_the_last_attempts() {
    // One 503 with `Retry-After: 1`, then a quick answer: the answer's latency is the
    // quick attempt's, not the second spent waiting.
    let server = Server::start(|n, _| match n {
        0 => Reply::Status(503, vec![("Retry-After", "1".into())], b"busy".to_vec()),
        _ => Reply::Stream(vec![final_line("quick")]),
    })
    .await;
    let options = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
        },
        ..HttpOptions::default()
    };
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    let begin = std::time::Instant::now();
    let response = connector
        .chat("math_guy", &AgentRequest::new("x"))
        .await
        .unwrap();
    assert!(
        begin.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!(server.requests().len(), 2);
    let total = response.timings.total;
    assert!(
        total < Duration::from_millis(500),
        "latency {total:?} counts the wait"
    );
    assert!(response.timings.first_byte.unwrap() <= total);
}

#[tokio::test]
async fn an_empty_body_is_a_protocol_error() {
    let server = Server::start(|_, _| Reply::Stream(Vec::new())).await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("the answer is empty"), "{e}");
}

#[tokio::test]
async fn a_lone_empty_object_answers_only_a_request_without_text() {
    let server = Server::start(|_, _| Reply::Stream(vec![b"{}\n".to_vec()])).await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("only `{}`"), "{e}");
}

#[tokio::test]
async fn a_stream_without_its_final_message_is_a_protocol_error() {
    // A cut answer whose body still ends properly: never taken for the answer.
    let server = Server::start(|_, _| {
        Reply::Stream(vec![
            b"{\"response\": {\"type\": \"AI\", \"text\": \"The answer is\"}}\n".to_vec(),
        ])
    })
    .await;
    let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(
        e.to_string()
            .contains("the stream ended before the final (AGENT_FRAMEWORK) message"),
        "{e}"
    );
}

#[tokio::test]
async fn final_messages_with_fields_of_the_wrong_type_are_protocol_errors() {
    let cases = [
        (
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": {"answer": 42}, "chat_context": {}}}),
            "the `text` of an AGENT_FRAMEWORK message is an object, not a string",
        ),
        (
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "42", "chat_context": [1, 2]}}),
            "the `chat_context` of an AGENT_FRAMEWORK message is an array, not an object",
        ),
        (
            json!({"response": {"type": "AGENT_FRAMEWORK", "text": "42", "chat_context": {}, "sly_data": "x"}}),
            "the `sly_data` of an AGENT_FRAMEWORK message is a string, not an object",
        ),
    ];
    for (line, message) in cases {
        let body = format!("{line}\n").into_bytes();
        let server = Server::start(move |_, _| Reply::Stream(vec![body.clone()])).await;
        let e = chat(&server, &AgentRequest::new("x")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        assert!(e.to_string().ends_with(message), "{e}");
    }
}

#[tokio::test]
async fn the_answer_ends_at_the_final_message_even_if_the_stream_stays_open() {
    let mut server = Server::start(|_, _| {
        Reply::Hang(vec![
            b"{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n".to_vec(),
            final_line("done"),
        ])
    })
    .await;
    let options = HttpOptions {
        timeout: None,
        ..options()
    };
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    // No timeout anywhere: only the final message can end this exchange.
    let request = AgentRequest::new("x");
    let exchange = connector.chat("math_guy", &request);
    let response = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .expect("the exchange waited for the end of the stream")
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("done"));
    assert_eq!(response.sly_data, Some(json!({"equals": 42})));
    assert!(server.client_gone().await, "the connection was kept open");
}

#[tokio::test]
async fn a_server_that_accepts_and_goes_silent_times_out_by_default() {
    let mut server = Server::start(|_, _| Reply::Silent).await;
    let options = HttpOptions {
        timeout: Some(Duration::from_secs(1)),
        ..options()
    };
    assert_eq!(
        HttpOptions::default().timeout,
        Some(prill_connect::DEFAULT_TIMEOUT)
    );
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    // The request sets no timeout: the connector's default applies.
    let request = AgentRequest::new("x");
    let exchange = connector.chat("math_guy", &request);
    let e = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .expect("no default timeout")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("within 1s"), "{e}");
    assert!(server.client_gone().await);
    // A request's own timeout wins over the default.
    let request = request.with_timeout(Duration::from_millis(300));
    let e = connector.chat("math_guy", &request).await.unwrap_err();
    assert!(e.to_string().ends_with("within 300ms"), "{e}");
}

#[tokio::test]
async fn the_idle_limit_ends_a_silent_stream_but_not_a_slow_one() {
    let options = HttpOptions {
        timeout: None,
        idle_timeout: Some(Duration::from_millis(400)),
        ..options()
    };
    let heartbeat = b"{\"response\": {\"type\": \"AGENT_PROGRESS\", \"text\": \"\"}}\n".to_vec();
    // Silent after a heartbeat: ends after the idle limit.
    let beat = heartbeat.clone();
    let server = Server::start(move |_, _| Reply::Hang(vec![beat.clone()])).await;
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    let request = AgentRequest::new("x");
    let exchange = connector.chat("math_guy", &request);
    let e = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .expect("the idle limit did not apply")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().ends_with("sent nothing for 400ms"), "{e}");
    // Silent before the head: the same.
    let server = Server::start(|_, _| Reply::Silent).await;
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    let e = connector
        .chat("math_guy", &AgentRequest::new("x"))
        .await
        .unwrap_err();
    assert!(e.to_string().ends_with("sent nothing for 400ms"), "{e}");
    // Heartbeats more often than the limit keep a long answer alive.
    let beat = heartbeat.clone();
    let server = Server::start(move |_, _| {
        let mut pieces: Vec<(Duration, Vec<u8>)> = (0..6)
            .map(|_| (Duration::from_millis(150), beat.clone()))
            .collect();
        pieces.push((Duration::from_millis(150), final_line("slow but alive")));
        Reply::Paced(pieces)
    })
    .await;
    let connector = NeuroSanHttp::new(server.base.clone(), &options).unwrap();
    let response = connector
        .chat("math_guy", &AgentRequest::new("x"))
        .await
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("slow but alive"));
}

/// What a server that echoes the request in its error says: every header, and the
/// bearer token cut short as a log line might quote it.
fn echo_headers(request: &Request) -> Vec<u8> {
    let mut text = String::from("bad request; you sent:");
    for (name, value) in &request.headers {
        text.push_str(&format!(" {name}: {value};"));
    }
    if let Some(token) = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        text.push_str(&format!(
            " token {}...{}",
            &token[..8],
            &token[token.len() - 5..]
        ));
    }
    text.into_bytes()
}

const TOKEN: &str = "tok-Hq83kL0pZx4vB2";
const TENANT: &str = "tenant-Mn47cV1bX9";

fn with_secret_metadata() -> AgentRequest {
    AgentRequest::new("x")
        .with_metadata("authorization", format!("Bearer {TOKEN}"))
        .with_metadata("x-tenant-token", TENANT)
}

fn assert_no_metadata_value(shown: &str) {
    for leak in [TOKEN, TENANT, "tok-Hq83", "x4vB2"] {
        assert!(!shown.contains(leak), "{leak} leaked: {shown}");
    }
}

#[tokio::test]
async fn metadata_values_a_server_echoes_in_an_error_body_are_blanked() {
    let server =
        Server::start(|_, request| Reply::Status(400, vec![], echo_headers(request))).await;
    let e = chat(&server, &with_secret_metadata()).await.unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Status, "{shown}");
    // The request did carry them: the server saw them.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_no_metadata_value(&shown);
    assert!(
        shown.contains("authorization: Bearer <metadata authorization>;"),
        "{shown}"
    );
    assert!(
        shown.contains("x-tenant-token: <metadata x-tenant-token>;"),
        "{shown}"
    );
    assert!(
        shown.contains("token <metadata authorization>...<metadata authorization>"),
        "{shown}"
    );
}

#[tokio::test]
async fn metadata_values_echoed_in_a_malformed_line_are_blanked() {
    let server = Server::start(|_, request| {
        let mut line = b"{not json ".to_vec();
        line.extend(echo_headers(request));
        line.push(b'\n');
        Reply::Stream(vec![line])
    })
    .await;
    let e = chat(&server, &with_secret_metadata()).await.unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{shown}");
    assert_no_metadata_value(&shown);
}

/// The end state (`state_endpoint`): a path is read on the agent's server, its query
/// kept, with the conversation's headers; a status that is not a success, a body that
/// is not JSON and a silent server are errors, never a state.
#[tokio::test]
async fn the_end_state_is_a_get_of_the_endpoint_with_the_conversations_headers() {
    let server = Server::start(|n, _| match n {
        0 => Reply::Status(200, vec![], br#"{"orders": {"W1": "cancelled"}}"#.to_vec()),
        1 => Reply::Status(404, vec![], b"no such page".to_vec()),
        2 => Reply::Status(200, vec![], b"<html>".to_vec()),
        _ => Reply::Silent,
    })
    .await;
    let connector = connector(&server);
    let mut conversation = connector.open("shop").await.unwrap();
    let headers: std::collections::BTreeMap<String, String> =
        [("x-prill-sample".to_owned(), "3".to_owned())].into();
    let limit = Some(Duration::from_millis(300));
    let state = conversation
        .state("/shop/state?full=1", &headers, limit)
        .await
        .unwrap();
    assert_eq!(state, json!({"orders": {"W1": "cancelled"}}));
    let seen = &server.requests()[0];
    assert_eq!(seen.method, "GET");
    assert_eq!(seen.path, "/shop/state?full=1");
    assert_eq!(seen.header("x-prill-sample"), Some("3"));
    let refused = conversation.state("/shop/state", &headers, limit).await;
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::Status);
    let garbled = conversation.state("/shop/state", &headers, limit).await;
    let e = garbled.unwrap_err();
    assert!(e.to_string().contains("did not answer JSON"), "{e}");
    let silent = conversation.state("/shop/state", &headers, limit).await;
    assert_eq!(silent.unwrap_err().kind(), ErrorKind::Timeout);
}
