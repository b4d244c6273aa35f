//! [`OtelSpans`]: the run as OpenTelemetry spans, in OTLP's own messages (the official
//! `opentelemetry-proto` types), handed to a sink that sends them (`prill-connect`'s
//! OTLP/HTTP exporter; this crate touches no network).
//!
//! One trace holds the run: a `prill run` span, a span per case (unit, named as the
//! human report names it: `greets [http]`), a span per
//! sample, and per interaction an `invoke_agent {target}` span (GenAI semantic
//! conventions: `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.usage.*`). Every
//! check is a `gen_ai.evaluation.result` event on the interaction span it judged, with
//! `gen_ai.evaluation.name`, `gen_ai.evaluation.score.value` (a scored check's score;
//! 1 or 0 for pass or fail), `gen_ai.evaluation.score.label` (`passed`, `failed`,
//! `errored`, ...) and `gen_ai.evaluation.explanation` (the check's message, secrets
//! already blanked out by the engine). Each tool call is an `execute_tool {name}` span
//! under its interaction (`gen_ai.tool.name`). Message content (what was sent and
//! answered, tools' arguments and results) is exported only when asked for
//! ([`OtelSpans::with_content`]).
//!
//! A case's spans go to the sink when the case has its verdict, the run's span when
//! the run is over. Span ids are derived from the trace id and the span's place
//! ([`span_id`]), so the same run always names the same spans. Times are when the
//! events arrived: a sample ends when its `SampleFinished` event comes and starts its
//! duration before; its interactions follow one another from there.
//!
//! ```
//! use prill_report::Reporter;
//! use prill_report::otel::OtelSpans;
//! use prill_run::Event;
//!
//! let mut batches = Vec::new();
//! let mut spans = OtelSpans::new([7; 16], "prill", |batch| {
//!     batches.push(batch);
//!     Ok(())
//! });
//! spans.event(&Event::RunStarted { units: 0 }).unwrap();
//! spans.event(&Event::RunFinished(Default::default())).unwrap();
//! drop(spans);
//! let run = &batches[0].resource_spans[0].scope_spans[0].spans[0];
//! assert_eq!(run.name, "prill run");
//! assert_eq!(run.trace_id, vec![7; 16]);
//! ```

use std::collections::HashMap;
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event as SpanEvent, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use prill_check::{Outcome, Status as Verdict};
use prill_run::events::{InteractionReport, SampleReport, UnitId, UnitReport};
use prill_run::{Event, Summary};
use sha2::{Digest, Sha256};

use crate::Reporter;

pub use prill_run::trace::span_id;

/// Builds the run's spans from the engine's events and hands each batch to `sink`.
pub struct OtelSpans<S> {
    trace: [u8; 16],
    service: String,
    sink: S,
    content: bool,
    run_started: Option<SystemTime>,
    units_started: HashMap<String, SystemTime>,
    samples_ended: HashMap<(String, u32), SystemTime>,
}

impl<S> OtelSpans<S>
where
    S: FnMut(ExportTraceServiceRequest) -> io::Result<()>,
{
    /// Spans in trace `trace`, from service `service` (`service.name`), each batch given
    /// to `sink`.
    pub fn new(trace: [u8; 16], service: impl Into<String>, sink: S) -> OtelSpans<S> {
        OtelSpans {
            trace,
            service: service.into(),
            sink,
            content: false,
            run_started: None,
            units_started: HashMap::new(),
            samples_ended: HashMap::new(),
        }
    }

    /// With `on`, the spans carry content too: what each interaction sent and got back
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`) and each tool call's arguments
    /// and result (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), as the
    /// events hold them, secrets already blanked out. Off by default.
    pub fn with_content(mut self, on: bool) -> OtelSpans<S> {
        self.content = on;
        self
    }

    /// Takes one event, as it happened at `at`.
    pub fn event_at(&mut self, event: &Event, at: SystemTime) -> io::Result<()> {
        match event {
            Event::RunStarted { .. } => self.run_started = Some(at),
            Event::UnitStarted { unit } => {
                self.units_started.entry(key(unit)).or_insert(at);
            }
            Event::SampleFinished { unit, sample } => {
                self.samples_ended.insert((key(unit), sample.index), at);
            }
            Event::UnitFinished(unit) => {
                let spans = self.unit_spans(unit, at);
                self.send(spans)?;
            }
            Event::RunFinished(summary) => {
                let span = self.run_span(summary, at);
                self.send(vec![span])?;
            }
            Event::WorkersReady(_) => {}
        }
        Ok(())
    }

    fn send(&mut self, spans: Vec<Span>) -> io::Result<()> {
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![
                        text("service.name", &self.service),
                        text("service.version", env!("CARGO_PKG_VERSION")),
                    ],
                    ..Resource::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "prill".to_owned(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        };
        (self.sink)(request)
    }

    fn span(
        &self,
        id: [u8; 8],
        parent: Option<[u8; 8]>,
        name: String,
        times: (SystemTime, SystemTime),
    ) -> Span {
        Span {
            trace_id: self.trace.to_vec(),
            span_id: id.to_vec(),
            parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
            name,
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: nanos(times.0),
            end_time_unix_nano: nanos(times.1),
            ..Span::default()
        }
    }

    fn run_span(&self, summary: &Summary, at: SystemTime) -> Span {
        let start = self
            .run_started
            .unwrap_or_else(|| at.checked_sub(summary.duration).unwrap_or(at));
        let mut span = self.span(
            span_id(&self.trace, None, None, None),
            None,
            "prill run".to_owned(),
            (start, at),
        );
        span.attributes = vec![
            int("prill.passed", summary.passed),
            int("prill.failed", summary.failed),
            int("prill.errored", summary.errored),
            int("prill.skipped", summary.skipped),
        ];
        span
    }

    fn unit_spans(&self, unit: &UnitReport, at: SystemTime) -> Vec<Span> {
        let id = &unit.unit;
        let unit_span = span_id(&self.trace, Some(id), None, None);
        let start = self
            .units_started
            .get(&key(id))
            .copied()
            .unwrap_or_else(|| at.checked_sub(unit.duration).unwrap_or(at));
        let name = if id.connection.is_empty() {
            id.name.clone()
        } else {
            format!("{} [{}]", id.name, id.connection)
        };
        let mut span = self.span(
            unit_span,
            Some(span_id(&self.trace, None, None, None)),
            name,
            (start, at),
        );
        span.attributes = vec![
            text("prill.case.id", &id.case_id),
            text("prill.case.file", &id.file.display().to_string()),
            text("prill.connection", &id.connection),
            text("prill.target", &id.target),
            text("prill.verdict", unit.verdict.name()),
            int("prill.passed", unit.tally.passed),
            int("prill.failed", unit.tally.failed),
            int("prill.errored", unit.tally.errored),
        ];
        if unit.verdict == Verdict::Errored {
            span.status = Some(error_status("the case errored"));
        }
        let mut spans = vec![span];
        for sample in &unit.samples {
            let end = self
                .samples_ended
                .get(&(key(id), sample.index))
                .copied()
                .unwrap_or(at);
            spans.extend(self.sample_spans(id, unit_span, sample, end));
        }
        spans
    }

    fn sample_spans(
        &self,
        unit: &UnitId,
        parent: [u8; 8],
        sample: &SampleReport,
        end: SystemTime,
    ) -> Vec<Span> {
        let start = end.checked_sub(sample.duration).unwrap_or(end);
        let id = span_id(&self.trace, Some(unit), Some(sample.index), None);
        let mut span = self.span(
            id,
            Some(parent),
            format!("sample {}", sample.index),
            (start, end),
        );
        span.attributes = vec![
            int("prill.sample.index", sample.index),
            text("prill.status", sample.status.name()),
        ];
        if sample.status == Verdict::Errored {
            // Its own error, else that of the interaction that errored.
            let message = sample
                .error
                .iter()
                .chain(sample.interactions.iter().filter_map(|i| i.error.as_ref()))
                .map(|e| e.message.as_str())
                .next()
                .unwrap_or("the sample errored");
            span.status = Some(error_status(message));
        }
        let mut spans = vec![span];
        let mut from = start;
        for interaction in &sample.interactions {
            let to = from + interaction.duration;
            let iid = span_id(
                &self.trace,
                Some(unit),
                Some(sample.index),
                Some(interaction.index),
            );
            spans.push(self.interaction_span(unit, iid, id, interaction, (from, to)));
            spans.extend(self.tool_spans(iid, interaction, (from, to)));
            from = to;
        }
        spans
    }

    fn interaction_span(
        &self,
        unit: &UnitId,
        id: [u8; 8],
        parent: [u8; 8],
        interaction: &InteractionReport,
        times: (SystemTime, SystemTime),
    ) -> Span {
        let mut span = self.span(
            id,
            Some(parent),
            format!("invoke_agent {}", unit.target),
            times,
        );
        span.kind = SpanKind::Client as i32;
        span.attributes = vec![
            text("gen_ai.operation.name", "invoke_agent"),
            text("gen_ai.agent.name", &unit.target),
            int("prill.interaction.index", interaction.index),
        ];
        if let Some(usage) = interaction.call.usage {
            if let Some(n) = usage.input {
                span.attributes.push(int("gen_ai.usage.input_tokens", n));
            }
            if let Some(n) = usage.output {
                span.attributes.push(int("gen_ai.usage.output_tokens", n));
            }
        }
        if let Some(error) = &interaction.error {
            span.attributes.push(text("error.type", error.kind.name()));
            span.status = Some(error_status(&error.message));
        }
        if self.content {
            let message = |role: &str, content: &str| {
                serde_json::json!([{"role": role, "parts": [{"type": "text", "content": content}]}])
                    .to_string()
            };
            if let Some(sent) = &interaction.sent {
                span.attributes
                    .push(text("gen_ai.input.messages", &message("user", sent)));
            }
            if let Some(answer) = &interaction.answer {
                span.attributes.push(text(
                    "gen_ai.output.messages",
                    &message("assistant", answer),
                ));
            }
        }
        span.events = interaction
            .checks
            .iter()
            .map(|check| {
                let status = check.status();
                let mut attributes = vec![
                    text("gen_ai.evaluation.name", &check.name),
                    text("gen_ai.evaluation.score.label", status.name()),
                    text("gen_ai.evaluation.explanation", check.message()),
                    text("prill.check.path", &check.path),
                ];
                match &check.outcome {
                    Outcome::Evaluated { evaluation, .. } => {
                        attributes.push(double("gen_ai.evaluation.score.value", evaluation.score));
                    }
                    Outcome::Errored { .. } => attributes.push(text("error.type", "check_errored")),
                }
                SpanEvent {
                    time_unix_nano: nanos(times.1),
                    name: "gen_ai.evaluation.result".to_owned(),
                    attributes,
                    dropped_attributes_count: 0,
                }
            })
            .collect();
        span
    }
}

impl<S> OtelSpans<S> {
    /// An `execute_tool {name}` span per tool call of the interaction, under its span.
    /// Their own times are not known: they share the interaction's time, in order.
    fn tool_spans(
        &self,
        parent: [u8; 8],
        interaction: &InteractionReport,
        (from, to): (SystemTime, SystemTime),
    ) -> Vec<Span> {
        let steps = &interaction.call.trajectory;
        let each = to
            .duration_since(from)
            .unwrap_or(Duration::ZERO)
            .checked_div(u32::try_from(steps.len().max(1)).unwrap_or(u32::MAX))
            .unwrap_or(Duration::ZERO);
        steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let start = from + each * u32::try_from(i).unwrap_or(u32::MAX);
                let mut span = Span {
                    trace_id: self.trace.to_vec(),
                    span_id: child_id(parent, i).to_vec(),
                    parent_span_id: parent.to_vec(),
                    name: format!("execute_tool {}", step.tool),
                    kind: SpanKind::Internal as i32,
                    start_time_unix_nano: nanos(start),
                    end_time_unix_nano: nanos(start + each),
                    ..Span::default()
                };
                span.attributes = vec![
                    text("gen_ai.operation.name", "execute_tool"),
                    text("gen_ai.tool.name", &step.tool),
                    int("prill.turn", step.turn),
                ];
                if self.content {
                    span.attributes.push(text(
                        "gen_ai.tool.call.arguments",
                        &step.arguments.to_string(),
                    ));
                    if let Some(result) = &step.result {
                        span.attributes
                            .push(text("gen_ai.tool.call.result", &result.to_string()));
                    }
                }
                if step.is_error {
                    span.attributes.push(text("error.type", "tool_error"));
                    span.status = Some(error_status("the tool call failed"));
                }
                span
            })
            .collect()
    }
}

/// The id of a tool call's span: its interaction's span and its place among the calls.
fn child_id(parent: [u8; 8], index: usize) -> [u8; 8] {
    let mut hash = Sha256::new();
    hash.update(parent);
    hash.update(b"\0tool\0");
    hash.update(index.to_le_bytes());
    let mut id = [0u8; 8];
    id.copy_from_slice(&hash.finalize()[..8]);
    if id == [0; 8] {
        id[7] = 1;
    }
    id
}

impl<S> Reporter for OtelSpans<S>
where
    S: FnMut(ExportTraceServiceRequest) -> io::Result<()>,
{
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.event_at(event, SystemTime::now())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A unit's key among the events: its case and connection.
fn key(unit: &UnitId) -> String {
    format!("{}\0{}", unit.case_id, unit.connection)
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos()
        .try_into()
        .unwrap_or(u64::MAX)
}

fn error_status(message: &str) -> Status {
    Status {
        message: message.to_owned(),
        code: StatusCode::Error as i32,
    }
}

fn attribute(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

fn text(key: &str, value: &str) -> KeyValue {
    attribute(key, any_value::Value::StringValue(value.to_owned()))
}

fn int(key: &str, value: impl TryInto<i64>) -> KeyValue {
    attribute(
        key,
        any_value::Value::IntValue(value.try_into().unwrap_or(i64::MAX)),
    )
}

fn double(key: &str, value: f64) -> KeyValue {
    attribute(key, any_value::Value::DoubleValue(value))
}
