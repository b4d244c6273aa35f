//! `trajectory: otel`: each interaction is sent its own trace context, and its
//! trajectory is the tool spans the agent filed under that context, in order. An
//! in-process agent plays the instrumented one: it files its spans in the run's inbox
//! (as the receiver would) under the `traceparent` it was sent.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prill_run::events::SampleReport;
use prill_run::trace::Tracing;
use prill_run::{Connectors, Event, RunOptions, run_plan};
use prill_spec::model::data_driven::Connection;
use prill_spec::{Env, Plan, Unrecognized};
use prill_target::otel::{AgentSpan, SpanInbox, TRACEPARENT};
use prill_target::{AgentRequest, AgentResponse, Registry, from_fn};
use serde_json::json;
use tokio::sync::mpsc;

const TRACE: [u8; 16] = [0x4b; 16];

/// The parent span id of a `traceparent`.
fn parent_of(header: &str) -> [u8; 8] {
    let hex = header.split('-').nth(2).unwrap();
    let mut id = [0u8; 8];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    id
}

fn tool_span(id: u8, parent: [u8; 8], start: u64, tool: &str, args: &str) -> AgentSpan {
    let mut span = AgentSpan {
        span_id: [id; 8],
        parent_span_id: Some(parent),
        name: format!("execute_tool {tool}"),
        start_unix_nano: start,
        end_unix_nano: start + 5,
        ..AgentSpan::default()
    };
    for (k, v) in [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", tool),
        ("gen_ai.tool.call.arguments", args),
    ] {
        span.attributes.insert(k.into(), v.into());
    }
    span
}

/// Runs `case` against an agent that files, for a text containing `tools`, a root span
/// and two tool spans (`search` then `weather`, filed out of order) under the context
/// it was sent, and nothing otherwise. Returns the samples and the contexts it saw.
async fn run(case: &str, spans: bool) -> (Vec<SampleReport>, Vec<String>) {
    let loaded = prill_spec::load_str(
        Path::new("otel.json"),
        case,
        &Env::default(),
        Unrecognized::Error,
    )
    .unwrap();
    let plan = Plan::new(loaded.cases());
    let inbox = Arc::new(SpanInbox::new(TRACE));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = {
        let inbox = Arc::clone(&inbox);
        let seen = Arc::clone(&seen);
        from_fn(move |request: AgentRequest| {
            let inbox = Arc::clone(&inbox);
            let seen = Arc::clone(&seen);
            async move {
                let header = request
                    .metadata
                    .get(TRACEPARENT)
                    .cloned()
                    .unwrap_or_default();
                seen.lock().unwrap().push(header.clone());
                let text = request.text.clone().unwrap_or_default();
                if text.contains("tools") {
                    let parent = parent_of(&header);
                    let root = AgentSpan {
                        span_id: [1; 8],
                        parent_span_id: Some(parent),
                        name: "Agent workflow".into(),
                        ..AgentSpan::default()
                    };
                    inbox.file(
                        TRACE,
                        vec![
                            tool_span(3, [1; 8], 20, "weather", r#"{"city": "Paris"}"#),
                            tool_span(2, [1; 8], 10, "search", r#"{"q": "Paris"}"#),
                            root,
                        ],
                    );
                }
                Ok(AgentResponse {
                    text: Some("done".into()),
                    chat_context: Some(json!({})),
                    ..AgentResponse::default()
                })
            }
        })
    };
    let connectors = Connectors::new().with(
        Connection::Direct,
        Arc::new(Registry::new().with("agent", Arc::new(agent))),
    );
    let mut tracing = Tracing::new(TRACE);
    tracing.wait = Duration::from_millis(200);
    if spans {
        tracing.spans = Some(inbox);
    }
    let options = RunOptions {
        tracing: Some(tracing),
        ..RunOptions::default()
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    run_plan(&plan, &connectors, &options, tx).await;
    let mut samples = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::SampleFinished { sample, .. } = event {
            samples.push(sample);
        }
    }
    let seen = seen.lock().unwrap().clone();
    (samples, seen)
}

const CASE: &str = r#"{"agent": "agent", "trajectory": "otel", "success_ratio": "2/2", "interactions": [
    {"text": "use tools", "response": {"trajectory": {
        "tool_sequence": {"tools": ["search", "weather"], "mode": "strict"},
        "tool_args": {"tool": "weather", "args": {"city": "Paris"}}
    }}},
    {"text": "use tools again", "response": {"trajectory": {
        "tool_sequence": {"tools": ["weather", "search"], "mode": "any_order"}
    }}}
]}"#;

#[tokio::test]
async fn the_spans_under_each_interactions_context_are_its_trajectory() {
    let (samples, seen) = run(CASE, true).await;
    assert_eq!(samples.len(), 2);
    for sample in &samples {
        assert_eq!(sample.status, prill_run::Status::Passed, "{sample:#?}");
        let tools: Vec<&str> = sample.interactions[0]
            .call
            .trajectory
            .iter()
            .map(|s| s.tool.as_str())
            .collect();
        assert_eq!(tools, ["search", "weather"], "in the order they started");
    }
    // Every interaction of every sample had a context of its own, in the run's trace.
    assert_eq!(seen.len(), 4);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{seen:?}");
    for header in &seen {
        assert!(
            header.starts_with(&format!("00-{}-", "4b".repeat(16))),
            "{header}"
        );
        assert!(header.ends_with("-01"), "sampled: {header}");
    }
}

#[tokio::test]
async fn an_interaction_whose_spans_never_come_errors_and_never_passes() {
    let case = r#"{"agent": "agent", "trajectory": "otel", "interactions": [
        {"text": "say nothing", "response": {"trajectory": {"must_not_call_tool": ["delete"]}}}
    ]}"#;
    let (samples, _) = run(case, true).await;
    let sample = &samples[0];
    assert_eq!(sample.status, prill_run::Status::Errored, "{sample:#?}");
    let error = sample.interactions[0].error.as_ref().unwrap();
    assert!(
        error
            .message
            .contains("no span under this interaction's trace context"),
        "{}",
        error.message
    );
    assert_eq!(sample.interactions[0].answer.as_deref(), Some("done"));
}

#[tokio::test]
async fn without_a_span_source_an_otel_case_errors_as_misconfigured() {
    let (samples, _) = run(CASE, false).await;
    assert_eq!(samples[0].status, prill_run::Status::Errored);
    let error = samples[0].interactions[0].error.as_ref().unwrap();
    assert_eq!(error.kind, prill_run::events::ErrorKind::Config);
    assert!(error.message.contains("OTLP receiver"), "{}", error.message);
}

#[tokio::test]
async fn a_stream_case_reads_no_spans_but_still_sends_the_context() {
    let case = r#"{"agent": "agent", "interactions": [
        {"text": "use tools", "response": {"text": {"value": "done"}}}
    ]}"#;
    let (samples, seen) = run(case, true).await;
    assert_eq!(samples[0].status, prill_run::Status::Passed);
    assert!(samples[0].interactions[0].call.trajectory.is_empty());
    assert_eq!(seen.len(), 1);
    assert!(seen[0].starts_with("00-"));
}
