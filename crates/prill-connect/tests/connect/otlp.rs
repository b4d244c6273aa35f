//! The OTLP/HTTP exporter against a receiver on 127.0.0.1 that decodes what it is sent
//! with the official OTLP messages: a batch arrives whole, as protobuf, with its
//! headers; `503` is tried again, `500` is not; rejected spans and a refusal are errors
//! that say why without showing a header's value.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prill_connect::otlp::OtlpExporter;
use prill_connect::{HttpOptions, RetryPolicy};
use prill_testkit::otlp::FakeOtlp;

fn batch(name: &str) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![Span {
                    trace_id: vec![1; 16],
                    span_id: vec![2; 8],
                    name: name.to_owned(),
                    start_time_unix_nano: 1,
                    end_time_unix_nano: 2,
                    ..Span::default()
                }],
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

fn options() -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        },
        ..HttpOptions::default()
    }
}

#[tokio::test]
async fn a_batch_arrives_whole_as_protobuf_with_its_headers() {
    let fake = FakeOtlp::start().await;
    let headers = [
        ("x-project-name".to_owned(), "prill-tests".to_owned()),
        (
            "authorization".to_owned(),
            "Bearer sk-otlp-secret".to_owned(),
        ),
    ];
    let exporter = OtlpExporter::new(&fake.url(), &headers, &options()).unwrap();
    exporter.export(&batch("prill run")).await.unwrap();
    assert_eq!(fake.batches(), [batch("prill run")]);
    let request = &fake.requests()[0];
    assert_eq!(request.path, "/v1/traces");
    assert_eq!(
        request.header("content-type"),
        Some("application/x-protobuf")
    );
    assert_eq!(request.header("x-project-name"), Some("prill-tests"));
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-otlp-secret")
    );
}

#[tokio::test]
async fn busy_is_tried_again_and_a_server_error_is_not() {
    let fake = FakeOtlp::start().await;
    fake.answer_with(&[503]);
    let exporter = OtlpExporter::new(&fake.url(), &[], &options()).unwrap();
    exporter.export(&batch("a")).await.unwrap();
    assert_eq!(fake.requests().len(), 2, "503 once, then taken");
    assert_eq!(fake.batches().len(), 1);

    fake.answer_with(&[500]);
    let e = exporter.export(&batch("b")).await.unwrap_err().to_string();
    assert_eq!(
        fake.requests().len(),
        3,
        "a 500 may have been stored: not sent again"
    );
    assert!(e.contains("500"), "{e}");
    assert!(e.contains("the OTLP receiver http://127.0.0.1:"), "{e}");
}

#[tokio::test]
async fn rejected_spans_are_an_error_that_says_why() {
    let fake = FakeOtlp::start().await;
    fake.reject(1, "span too old");
    let exporter = OtlpExporter::new(&fake.url(), &[], &options()).unwrap();
    let e = exporter.export(&batch("a")).await.unwrap_err().to_string();
    assert!(e.contains("1 span(s) were rejected: span too old"), "{e}");
}

#[tokio::test]
async fn nothing_listening_is_an_error_naming_the_receiver() {
    let fake = FakeOtlp::start().await;
    let url = fake.url();
    drop(fake);
    let exporter = OtlpExporter::new(&url, &[], &options()).unwrap();
    let e = exporter.export(&batch("a")).await.unwrap_err().to_string();
    assert!(e.contains("OTLP receiver"), "{e}");
}
