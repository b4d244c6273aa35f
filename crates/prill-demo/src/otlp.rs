//! An OTLP/HTTP trace receiver served in place of the demo agents: the run's receiver
//! for `trajectory: otel`, with the server's listener, limits and shutdown. Agents send
//! their spans to `POST /v1/traces`, as protobuf (`application/x-protobuf`) or OTLP
//! JSON (`application/json`), uncompressed; each batch is decoded with the official
//! messages (`opentelemetry-proto`) and filed in the run's [`SpanInbox`].
//!
//! The answer is OTLP's: `200` with an `ExportTraceServiceResponse` in the request's
//! encoding, whose `partial_success` counts the spans refused when the inbox is full.
//! A body that cannot be decoded is a `400`, another encoding a `415`, another path a
//! `404` and another method a `405`. With a [`Forward`], every batch taken is handed on
//! whole as well (to the run's own exporter), before it is filed.
//!
//! ```
//! use std::sync::Arc;
//! use prill_target::otel::SpanInbox;
//!
//! let inbox = Arc::new(SpanInbox::new([7; 16]));
//! let builder = prill_demo::DemoServer::builder().otlp(inbox);
//! # let _ = builder;
//! ```

use std::sync::Arc;

use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prill_target::otel::{AgentSpan, SpanInbox};
use prost::Message;
use serde_json::{Map, Value};

use crate::body::{Body, full};
use crate::routes::{read_body, status_only};
use crate::timed::RequestBody;

/// The path OTLP/HTTP takes traces at.
pub const TRACES_PATH: &str = "/v1/traces";

const PROTOBUF: &str = "application/x-protobuf";
const JSON: &str = "application/json";

/// Where the receiver hands on every batch it takes, when the run exports its own spans
/// too (`DemoServerBuilder::otlp_forward`).
pub type Forward = tokio::sync::mpsc::Sender<ExportTraceServiceRequest>;

/// Answers one request to the receiver.
pub(crate) async fn handle(
    inbox: Arc<SpanInbox>,
    forward: Option<Forward>,
    request: Request<RequestBody>,
) -> Response<Body> {
    if request.uri().path() != TRACES_PATH {
        return status_only(StatusCode::NOT_FOUND);
    }
    if request.method() != Method::POST {
        return status_only(StatusCode::METHOD_NOT_ALLOWED);
    }
    let encoded = request
        .headers()
        .get(CONTENT_ENCODING)
        .is_some_and(|e| e.as_bytes() != b"identity");
    let json = match media_type(request.headers().get(CONTENT_TYPE)).as_deref() {
        Some(PROTOBUF) if !encoded => false,
        Some(JSON) if !encoded => true,
        _ => {
            return text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send uncompressed application/x-protobuf or application/json",
            );
        }
    };
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let decoded = if json {
        serde_json::from_slice::<ExportTraceServiceRequest>(&body).map_err(|e| e.to_string())
    } else {
        ExportTraceServiceRequest::decode(body).map_err(|e| e.to_string())
    };
    let batch = match decoded {
        Ok(batch) => batch,
        Err(error) => {
            return text(
                StatusCode::BAD_REQUEST,
                &format!("not OTLP traces: {error}"),
            );
        }
    };
    if let Some(forward) = forward {
        // Waits while the forwarder is behind: the agent's exporter waits with it.
        let _ = forward.send(batch.clone()).await;
    }
    let mut refused = 0;
    for (trace, spans) in spans_of(batch) {
        refused += inbox.file(trace, spans);
    }
    let answer = ExportTraceServiceResponse {
        partial_success: (refused > 0).then(|| ExportTracePartialSuccess {
            rejected_spans: i64::try_from(refused).unwrap_or(i64::MAX),
            error_message: "the receiver holds as many spans as it may".to_owned(),
        }),
    };
    let (bytes, media) = if json {
        (serde_json::to_vec(&answer).unwrap_or_default(), JSON)
    } else {
        (answer.encode_to_vec(), PROTOBUF)
    };
    let mut response = Response::new(full(bytes));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(media));
    response
}

/// The media type of a `Content-Type`, without parameters, in lowercase.
fn media_type(value: Option<&HeaderValue>) -> Option<String> {
    let text = value?.to_str().ok()?;
    Some(text.split(';').next()?.trim().to_ascii_lowercase())
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(full(message.to_owned()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// The spans of `batch`, grouped by trace id, as tests read them. A span whose trace or
/// span id has the wrong length is left out: no context could name it.
pub fn spans_of(batch: ExportTraceServiceRequest) -> Vec<([u8; 16], Vec<AgentSpan>)> {
    let mut out: Vec<([u8; 16], Vec<AgentSpan>)> = Vec::new();
    let spans = batch
        .resource_spans
        .into_iter()
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans);
    for span in spans {
        let Ok(trace) = <[u8; 16]>::try_from(span.trace_id.as_slice()) else {
            continue;
        };
        let Some(agent_span) = agent_span(span) else {
            continue;
        };
        match out.iter_mut().find(|(t, _)| *t == trace) {
            Some((_, spans)) => spans.push(agent_span),
            None => out.push((trace, vec![agent_span])),
        }
    }
    out
}

fn agent_span(span: Span) -> Option<AgentSpan> {
    let span_id = <[u8; 8]>::try_from(span.span_id.as_slice()).ok()?;
    let parent_span_id = <[u8; 8]>::try_from(span.parent_span_id.as_slice()).ok();
    let error = span
        .status
        .filter(|s| s.code == SpanStatus::Error as i32)
        .map(|s| s.message);
    let attributes = span
        .attributes
        .into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, json_of)))
        .collect();
    Some(AgentSpan {
        span_id,
        parent_span_id,
        name: span.name,
        start_unix_nano: span.start_time_unix_nano,
        end_unix_nano: span.end_time_unix_nano,
        attributes,
        error,
    })
}

/// An attribute's value as JSON; bytes as lowercase hex.
fn json_of(value: AnyValue) -> Value {
    match value.value {
        None => Value::Null,
        Some(any_value::Value::StringValue(s)) => Value::String(s),
        Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
        Some(any_value::Value::IntValue(i)) => Value::from(i),
        Some(any_value::Value::DoubleValue(d)) => Value::from(d),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(json_of).collect())
        }
        Some(any_value::Value::KvlistValue(kv)) => Value::Object(
            kv.values
                .into_iter()
                .map(|kv| (kv.key, kv.value.map_or(Value::Null, json_of)))
                .collect::<Map<String, Value>>(),
        ),
        Some(any_value::Value::BytesValue(b)) => Value::String(prill_target::otel::hex(&b)),
        // An index into a profile's string table: traces carry none.
        Some(any_value::Value::StringValueStrindex(_)) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::KeyValue;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status};

    use super::*;

    fn kv(key: &str, value: any_value::Value) -> KeyValue {
        KeyValue {
            key: key.to_owned(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        }
    }

    #[test]
    fn a_batch_reads_as_spans_by_trace_with_json_attributes_and_error_status() {
        let span = Span {
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            parent_span_id: vec![3; 8],
            name: "execute_tool add".to_owned(),
            start_time_unix_nano: 5,
            end_time_unix_nano: 9,
            attributes: vec![
                kv(
                    "gen_ai.tool.name",
                    any_value::Value::StringValue("add".into()),
                ),
                kv("n", any_value::Value::IntValue(3)),
            ],
            status: Some(Status {
                code: SpanStatus::Error as i32,
                message: "boom".into(),
            }),
            ..Span::default()
        };
        let root = Span {
            trace_id: vec![1; 16],
            span_id: vec![3; 8],
            ..Span::default()
        };
        let bad = Span {
            trace_id: vec![1; 3],
            span_id: vec![4; 8],
            ..Span::default()
        };
        let batch = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![span, root, bad],
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        };
        let traces = spans_of(batch);
        assert_eq!(traces.len(), 1);
        let (trace, spans) = &traces[0];
        assert_eq!(*trace, [1; 16]);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].str("gen_ai.tool.name"), Some("add"));
        assert_eq!(spans[0].attributes["n"], 3);
        assert_eq!(spans[0].error.as_deref(), Some("boom"));
        assert_eq!(spans[0].parent_span_id, Some([3; 8]));
        assert_eq!(spans[1].parent_span_id, None);
    }

    #[test]
    fn otlp_json_decodes_with_hex_ids() {
        let text = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","parentSpanId":"","name":"x","kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"k","value":{"stringValue":"v"}}]}]}]}]}"#;
        let batch: ExportTraceServiceRequest = serde_json::from_str(text).unwrap();
        let traces = spans_of(batch);
        assert_eq!(traces[0].0[15], 0x10);
        assert_eq!(traces[0].1[0].str("k"), Some("v"));
        assert_eq!(traces[0].1[0].end_unix_nano, 2);
    }
}
