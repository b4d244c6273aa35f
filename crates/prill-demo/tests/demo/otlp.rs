//! The OTLP/HTTP receiver (`DemoServerBuilder::otlp`): spans posted as OTLP JSON are
//! filed in the run's inbox, other traces are not kept, and what is not OTLP traces is
//! refused with OTLP/HTTP's statuses.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use prill_demo::DemoServer;
use prill_target::otel::{SpanInbox, TraceParent};
use serde_json::{Value, json};

use crate::common::Client;

const TRACE: &str = "0102030405060708090a0b0c0d0e0f10";

fn batch(trace: &str) -> Value {
    json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace, "spanId": "00000000000000aa", "parentSpanId": "0000000000000001",
        "name": "execute_tool add", "kind": 1,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "add"}}]
    }]}]}]})
}

#[tokio::test]
async fn otlp_json_spans_of_the_runs_trace_are_filed_and_the_rest_refused() {
    let mut trace = [0u8; 16];
    for (i, b) in trace.iter_mut().enumerate() {
        *b = u8::try_from(i + 1).unwrap();
    }
    let inbox = Arc::new(SpanInbox::new(trace));
    let server = DemoServer::builder()
        .otlp(Arc::clone(&inbox))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let mut client = Client::plain(server.addr()).await;

    let other = client
        .post("/v1/traces", &batch("ffffffffffffffffffffffffffffffff"))
        .await;
    assert_eq!(other.status, StatusCode::OK, "accepted, and not kept");
    let ok = client.post("/v1/traces", &batch(TRACE)).await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.header("content-type"), Some("application/json"));
    assert!(ok.json()["partialSuccess"].is_null(), "{}", ok.text());

    let parent = TraceParent {
        trace,
        span: [0, 0, 0, 0, 0, 0, 0, 1],
    };
    let spans = inbox.take(parent, Duration::from_secs(5)).await.unwrap();
    assert_eq!(spans.len(), 1, "only the run's trace was kept");
    assert_eq!(spans[0].str("gen_ai.tool.name"), Some("add"));

    let not_otlp = client
        .fetch(Method::POST, "/v1/traces", "{\"resourceSpans\": 3}", &[])
        .await;
    assert_eq!(
        not_otlp.status,
        StatusCode::BAD_REQUEST,
        "{}",
        not_otlp.text()
    );
    let gzip = client
        .fetch(
            Method::POST,
            "/v1/traces",
            "{}",
            &[("content-encoding", "gzip")],
        )
        .await;
    assert_eq!(gzip.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        client.get("/v1/traces").await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(
        client.post("/api/v1/list", &json!({})).await.status,
        StatusCode::NOT_FOUND,
        "a receiver serves no agents"
    );
    server.shutdown().await;
}
