//! The run as OpenTelemetry spans: the fixtures' run (a unit that passes, one that
//! fails, one that errors, one skipped) fed with set times, and the OTLP messages read
//! back: the span tree, the GenAI attributes, an evaluation event per check, error
//! statuses, the times, and ids that a second run of the same trace repeats.

use std::time::{Duration, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prill_report::otel::{OtelSpans, span_id};

use crate::fixtures::{self, KEYWORD_FAILURE};

const TRACE: [u8; 16] = [0xab; 16];

/// The fixtures' run, one event a second from the epoch's second 1000: every batch.
fn batches() -> Vec<ExportTraceServiceRequest> {
    let mut batches = Vec::new();
    let mut spans = OtelSpans::new(TRACE, "prill-test", |b| {
        batches.push(b);
        Ok(())
    });
    for (i, event) in fixtures::run(false).iter().enumerate() {
        let at = UNIX_EPOCH + Duration::from_secs(1000 + i as u64);
        spans.event_at(event, at).unwrap();
    }
    drop(spans);
    batches
}

fn all_spans(batches: &[ExportTraceServiceRequest]) -> Vec<Span> {
    batches
        .iter()
        .flat_map(|b| &b.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect()
}

fn attr<'a>(
    attributes: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn text<'a>(
    span_attrs: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> &'a str {
    match attr(span_attrs, key) {
        Some(Value::StringValue(s)) => s,
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn a_run_is_one_trace_of_run_case_sample_and_interaction_spans() {
    let batches = batches();
    // A batch per case with a verdict, then the run's own span.
    assert_eq!(batches.len(), 5);
    let resource = batches[0].resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(text(&resource.attributes, "service.name"), "prill-test");
    let spans = all_spans(&batches);
    assert!(spans.iter().all(|s| s.trace_id == TRACE));
    let run = spans.iter().find(|s| s.name == "prill run").unwrap();
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert_eq!(run.span_id, span_id(&TRACE, None, None, None));
    let by_id = |id: &[u8]| spans.iter().find(|s| s.span_id == id).unwrap();
    let failing = fixtures::failed_unit();
    let case = spans.iter().find(|s| s.name == "greets [http]").unwrap();
    assert_eq!(case.parent_span_id, run.span_id);
    assert_eq!(text(&case.attributes, "prill.verdict"), "failed");
    assert_eq!(
        text(&case.attributes, "prill.case.id"),
        failing.unit.case_id
    );
    let sample = spans
        .iter()
        .find(|s| s.parent_span_id == case.span_id)
        .unwrap();
    assert!(sample.name.starts_with("sample "));
    let interaction = spans
        .iter()
        .find(|s| s.parent_span_id == sample.span_id)
        .unwrap();
    assert_eq!(
        interaction.name,
        format!("invoke_agent {}", failing.unit.target)
    );
    assert_eq!(
        text(&interaction.attributes, "gen_ai.operation.name"),
        "invoke_agent"
    );
    assert_eq!(by_id(&interaction.parent_span_id).span_id, sample.span_id);
    // The sample ends when its event came and starts its duration before; its
    // interaction starts with it and lasts its own duration.
    assert!(sample.start_time_unix_nano < sample.end_time_unix_nano);
    assert_eq!(
        interaction.start_time_unix_nano,
        sample.start_time_unix_nano
    );
    assert_eq!(
        interaction.end_time_unix_nano - interaction.start_time_unix_nano,
        90_000_000
    );
    assert!(case.start_time_unix_nano <= sample.start_time_unix_nano);
    assert!(run.start_time_unix_nano <= case.start_time_unix_nano);
    assert!(run.end_time_unix_nano >= case.end_time_unix_nano);
}

#[test]
fn every_check_is_an_evaluation_event_on_the_interaction_it_judged() {
    let spans = all_spans(&batches());
    let failing = fixtures::failed_unit();
    let interactions: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent"))
        .collect();
    let failed_event = interactions
        .iter()
        .flat_map(|s| &s.events)
        .find(|e| {
            attr(&e.attributes, "gen_ai.evaluation.score.label")
                == Some(&Value::StringValue("failed".into()))
        })
        .expect("the failing keyword check");
    assert_eq!(failed_event.name, "gen_ai.evaluation.result");
    assert_eq!(
        text(&failed_event.attributes, "gen_ai.evaluation.name"),
        "keywords"
    );
    assert_eq!(
        text(&failed_event.attributes, "gen_ai.evaluation.explanation"),
        KEYWORD_FAILURE
    );
    assert_eq!(
        attr(&failed_event.attributes, "gen_ai.evaluation.score.value"),
        Some(&Value::DoubleValue(0.0))
    );
    let checks: usize = failing
        .samples
        .iter()
        .flat_map(|s| &s.interactions)
        .map(|i| i.checks.len())
        .sum();
    let case = spans.iter().find(|s| s.name == "greets [http]").unwrap();
    let events_of_case: usize = spans
        .iter()
        .filter(|s| {
            spans
                .iter()
                .any(|p| p.span_id == s.parent_span_id && p.parent_span_id == case.span_id)
        })
        .map(|s| s.events.len())
        .sum();
    assert_eq!(events_of_case, checks, "one event per check");
}

#[test]
fn errors_set_the_error_status_and_a_second_run_of_the_trace_repeats_its_ids() {
    let spans = all_spans(&batches());
    let errored = fixtures::errored_unit();
    let case = spans
        .iter()
        .find(|s| s.name == format!("{} [http]", errored.unit.name))
        .unwrap();
    assert_eq!(case.status.as_ref().unwrap().code, StatusCode::Error as i32);
    let interaction = spans
        .iter()
        .find(|s| {
            s.name.starts_with("invoke_agent")
                && s.status
                    .as_ref()
                    .is_some_and(|st| st.code == StatusCode::Error as i32)
        })
        .expect("the errored interaction");
    assert!(attr(&interaction.attributes, "error.type").is_some());
    // Its sample errored through it: the sample's span says so too.
    let sample = spans
        .iter()
        .find(|s| s.span_id == interaction.parent_span_id)
        .unwrap();
    let status = sample.status.as_ref().expect("the errored sample's status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, crate::fixtures::UNREACHABLE);
    let again = all_spans(&batches());
    let ids = |s: &[Span]| s.iter().map(|s| s.span_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&spans), ids(&again));
    let mut unique = ids(&spans);
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), spans.len(), "every span its own id");
    let other = span_id(&[1; 16], None, None, None);
    assert_ne!(other, span_id(&TRACE, None, None, None));
}

/// The fixtures' run with content asked for, or not: every batch's spans.
fn spans_with_content(content: bool) -> Vec<Span> {
    let mut batches = Vec::new();
    let mut spans = OtelSpans::new(TRACE, "prill-test", |b| {
        batches.push(b);
        Ok(())
    })
    .with_content(content);
    for (i, event) in fixtures::run(false).iter().enumerate() {
        let at = UNIX_EPOCH + Duration::from_secs(1000 + i as u64);
        spans.event_at(event, at).unwrap();
    }
    drop(spans);
    all_spans(&batches)
}

#[test]
fn each_tool_call_is_a_span_and_content_goes_only_when_asked_for() {
    let plain = spans_with_content(false);
    let tools: Vec<&Span> = plain
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert!(!tools.is_empty(), "the failing samples' tool call");
    let tool = tools[0];
    assert_eq!(
        text(&tool.attributes, "gen_ai.operation.name"),
        "execute_tool"
    );
    let parent = plain
        .iter()
        .find(|s| s.span_id == tool.parent_span_id)
        .unwrap();
    assert!(parent.name.starts_with("invoke_agent "));
    assert!(tool.start_time_unix_nano >= parent.start_time_unix_nano);
    assert!(tool.end_time_unix_nano <= parent.end_time_unix_nano);
    let has = |spans: &[Span], key: &str| {
        spans
            .iter()
            .any(|s| s.attributes.iter().any(|kv| kv.key == key))
    };
    for key in [
        "gen_ai.tool.call.arguments",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
    ] {
        assert!(!has(&plain, key), "{key} without content");
    }
    let full = spans_with_content(true);
    for key in [
        "gen_ai.tool.call.arguments",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
    ] {
        assert!(has(&full, key), "{key} with content");
    }
    let input = full
        .iter()
        .find_map(|s| attr(&s.attributes, "gen_ai.input.messages"))
        .unwrap();
    let Value::StringValue(input) = input else {
        panic!("{input:?}")
    };
    let messages: serde_json::Value = serde_json::from_str(input).unwrap();
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["parts"][0]["content"], "hi");
}
