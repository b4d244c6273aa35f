//! The run's trace: the ids of its spans ([`span_id`]), the context each interaction
//! sends its agent ([`Tracing::parent`]), and what the agent's own spans say it did
//! ([`SpanTrajectory::of`]), for a case with `trajectory: otel`.
//!
//! Every interaction is sent the trace context of its own span (`invoke_agent`, as the
//! OpenTelemetry reporter names it), so the spans an agent exports hang under the very
//! span the run's export gives that interaction.
//!
//! ```
//! use prill_run::trace::SpanTrajectory;
//! use prill_target::otel::AgentSpan;
//!
//! let mut tool = AgentSpan { name: "execute_tool add".into(), ..AgentSpan::default() };
//! tool.attributes.insert("gen_ai.operation.name".into(), "execute_tool".into());
//! tool.attributes.insert("gen_ai.tool.name".into(), "add".into());
//! tool.attributes.insert("gen_ai.tool.call.arguments".into(), r#"{"a": 2}"#.into());
//! let trajectory = SpanTrajectory::of(&[tool]);
//! assert_eq!(trajectory.calls[0].name, "add");
//! assert_eq!(trajectory.calls[0].arguments["a"], 2);
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use prill_check::{TokenUsage, ToolCall};
use prill_target::otel::{AgentSpan, SpanSource, TraceParent};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::events::{TrajectoryStep, TurnInfo, UnitId};

/// How long an interaction waits for its agent's spans, unless told otherwise.
pub const DEFAULT_SPAN_WAIT: Duration = Duration::from_secs(10);

/// The run's trace, and where agents' spans come from.
#[derive(Clone)]
pub struct Tracing {
    /// The run's trace id.
    pub trace: [u8; 16],
    /// Where the spans of `trajectory: otel` cases come from: the run's receiver, or a
    /// cassette. Without one such a case errors.
    pub spans: Option<Arc<dyn SpanSource>>,
    /// How long an interaction waits for its agent's spans after its answer.
    pub wait: Duration,
}

impl Tracing {
    /// The run's trace `trace`, with no spans to read.
    pub fn new(trace: [u8; 16]) -> Tracing {
        Tracing {
            trace,
            spans: None,
            wait: DEFAULT_SPAN_WAIT,
        }
    }

    /// The context interaction `interaction` of sample `sample` of `unit` is sent: its
    /// own span's.
    pub fn parent(&self, unit: &UnitId, sample: u32, interaction: usize) -> TraceParent {
        TraceParent {
            trace: self.trace,
            span: span_id(&self.trace, Some(unit), Some(sample), Some(interaction)),
        }
    }
}

/// The span id of a place in the run: the run itself (`None`), a case, one of its
/// samples, one of that sample's interactions. Derived from the trace id, so that one
/// run always names its spans alike and two runs never share one.
pub fn span_id(
    trace: &[u8; 16],
    unit: Option<&UnitId>,
    sample: Option<u32>,
    interaction: Option<usize>,
) -> [u8; 8] {
    let mut hash = Sha256::new();
    hash.update(trace);
    if let Some(unit) = unit {
        hash.update(b"\0case\0");
        hash.update(unit.case_id.as_bytes());
        hash.update(b"\0");
        hash.update(unit.connection.as_bytes());
    }
    if let Some(sample) = sample {
        hash.update(b"\0sample\0");
        hash.update(sample.to_le_bytes());
    }
    if let Some(interaction) = interaction {
        hash.update(b"\0interaction\0");
        hash.update(interaction.to_le_bytes());
    }
    let digest = hash.finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    if id == [0; 8] {
        // The all-zero id is invalid in OTLP.
        id[7] = 1;
    }
    id
}

/// What an agent's spans say it did in one interaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanTrajectory {
    /// Its tool calls, in the order they started, as the checks read them.
    pub calls: Vec<ToolCall>,
    /// The same calls for the report, each with the model call (from 1) before it.
    pub steps: Vec<TrajectoryStep>,
    /// The tokens its model calls (`chat` spans) used, when they said.
    pub usage: Option<TokenUsage>,
    /// Each model call, in the order they started: its usage, how long it took, why
    /// the model stopped (`gen_ai.response.finish_reasons`) and how many calls it asked
    /// for.
    pub turns: Vec<TurnInfo>,
}

/// The GenAI operations that are one model call.
const MODEL_CALLS: [&str; 3] = ["chat", "text_completion", "generate_content"];

impl SpanTrajectory {
    /// The trajectory in `spans` (one interaction's, any order):
    /// - a tool call is a span with `gen_ai.operation.name = execute_tool`, named by
    ///   `gen_ai.tool.name` (else the span's name less `execute_tool `), or an MCP
    ///   client span (`mcp.method.name = tools/call`) that no such span encloses;
    /// - its arguments and result are `gen_ai.tool.call.arguments` and
    ///   `gen_ai.tool.call.result`, read as JSON when they are JSON text; it failed when
    ///   its status is `ERROR` or it has an `error.type`;
    /// - calls are in the order they started (then ended);
    /// - usage is the sum of `gen_ai.usage.input_tokens` and `output_tokens` over the
    ///   model calls (`gen_ai.operation.name` `chat`, `text_completion`,
    ///   `generate_content`), never over the agent spans that total them again.
    pub fn of(spans: &[AgentSpan]) -> SpanTrajectory {
        let by_id: HashMap<[u8; 8], &AgentSpan> = spans.iter().map(|s| (s.span_id, s)).collect();
        let encloses_tool = |span: &AgentSpan| {
            let mut parent = span.parent_span_id;
            let mut hops = 0;
            while let Some(id) = parent.filter(|_| hops < spans.len()) {
                let Some(p) = by_id.get(&id) else { break };
                if operation(p) == Some("execute_tool") {
                    return true;
                }
                parent = p.parent_span_id;
                hops += 1;
            }
            false
        };
        let mut tools: Vec<&AgentSpan> = spans
            .iter()
            .filter(|s| {
                operation(s) == Some("execute_tool")
                    || (s.str("mcp.method.name") == Some("tools/call") && !encloses_tool(s))
            })
            .collect();
        tools.sort_by_key(|s| (s.start_unix_nano, s.end_unix_nano));
        let mut models: Vec<&AgentSpan> = spans
            .iter()
            .filter(|s| operation(s).is_some_and(|o| MODEL_CALLS.contains(&o)))
            .collect();
        models.sort_by_key(|s| s.start_unix_nano);
        let mut out = SpanTrajectory {
            usage: usage(&models),
            turns: models.iter().enumerate().map(|(i, m)| turn(i, m)).collect(),
            ..SpanTrajectory::default()
        };
        for (position, span) in tools.into_iter().enumerate() {
            let name = tool_name(span);
            let arguments = span
                .attributes
                .get("gen_ai.tool.call.arguments")
                .map_or(Value::Null, as_json);
            let result = span.attributes.get("gen_ai.tool.call.result").map(as_json);
            let is_error = span.error.is_some() || span.attributes.contains_key("error.type");
            let before = models
                .iter()
                .filter(|m| m.start_unix_nano <= span.start_unix_nano)
                .count();
            let turn = if models.is_empty() {
                position + 1
            } else {
                before
            };
            if let Some(asked) = before.checked_sub(1).and_then(|i| out.turns.get_mut(i)) {
                asked.tool_calls += 1;
            }
            let mut call = ToolCall::new(name.clone(), arguments.clone());
            call.result.clone_from(&result);
            call.is_error = is_error;
            out.calls.push(call);
            out.steps.push(TrajectoryStep {
                turn: u32::try_from(turn).unwrap_or(u32::MAX),
                tool: name,
                arguments,
                result,
                is_error,
            });
        }
        out
    }
}

fn operation(span: &AgentSpan) -> Option<&str> {
    span.str("gen_ai.operation.name")
}

fn tool_name(span: &AgentSpan) -> String {
    if let Some(name) = span.str("gen_ai.tool.name") {
        return name.to_owned();
    }
    for prefix in ["execute_tool ", "tools/call "] {
        if let Some(rest) = span.name.strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
    span.name.clone()
}

/// A JSON text as its value; anything else as it is.
fn as_json(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

/// Model call `index` (from 0) as a turn of the report.
fn turn(index: usize, span: &AgentSpan) -> TurnInfo {
    let count = |key: &str| span.attributes.get(key).and_then(Value::as_u64);
    let (input, output) = (
        count("gen_ai.usage.input_tokens"),
        count("gen_ai.usage.output_tokens"),
    );
    let stop_reason = match span.attributes.get("gen_ai.response.finish_reasons") {
        Some(Value::Array(reasons)) => {
            let texts: Vec<&str> = reasons.iter().filter_map(Value::as_str).collect();
            (!texts.is_empty()).then(|| texts.join(", "))
        }
        Some(Value::String(reason)) => Some(reason.clone()),
        _ => None,
    };
    TurnInfo {
        turn: u32::try_from(index + 1).unwrap_or(u32::MAX),
        usage: (input.is_some() || output.is_some()).then_some(TokenUsage {
            input,
            output,
            reasoning: None,
        }),
        latency: Duration::from_nanos(span.end_unix_nano.saturating_sub(span.start_unix_nano)),
        time_to_first_byte: None,
        stop_reason,
        tool_calls: 0,
    }
}

fn usage(models: &[&AgentSpan]) -> Option<TokenUsage> {
    let sum = |key: &str| -> Option<u64> {
        let counts: Vec<u64> = models
            .iter()
            .filter_map(|m| m.attributes.get(key).and_then(Value::as_u64))
            .collect();
        (!counts.is_empty()).then(|| counts.iter().sum())
    };
    let (input, output) = (
        sum("gen_ai.usage.input_tokens"),
        sum("gen_ai.usage.output_tokens"),
    );
    (input.is_some() || output.is_some()).then_some(TokenUsage {
        input,
        output,
        reasoning: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: u8, parent: Option<u8>, start: u64, attrs: &[(&str, Value)]) -> AgentSpan {
        AgentSpan {
            span_id: [id; 8],
            parent_span_id: parent.map(|p| [p; 8]),
            name: format!("span {id}"),
            start_unix_nano: start,
            end_unix_nano: start + 10,
            attributes: attrs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            error: None,
        }
    }

    fn tool(id: u8, parent: u8, start: u64, name: &str, args: &str) -> AgentSpan {
        span(
            id,
            Some(parent),
            start,
            &[
                ("gen_ai.operation.name", "execute_tool".into()),
                ("gen_ai.tool.name", name.into()),
                ("gen_ai.tool.call.arguments", args.into()),
            ],
        )
    }

    fn chat(id: u8, start: u64, input: u64, output: u64) -> AgentSpan {
        span(
            id,
            Some(1),
            start,
            &[
                ("gen_ai.operation.name", "chat".into()),
                ("gen_ai.usage.input_tokens", input.into()),
                ("gen_ai.usage.output_tokens", output.into()),
            ],
        )
    }

    #[test]
    fn tool_spans_are_calls_in_start_order_with_their_turn_and_model_usage() {
        let mut failed = tool(6, 1, 300, "fail", r#"{"reason": "x"}"#);
        failed.error = Some("boom".into());
        failed.attributes.insert(
            "gen_ai.tool.call.result".into(),
            "RuntimeError: boom".into(),
        );
        let agent = span(
            1,
            None,
            0,
            &[
                ("gen_ai.operation.name", "invoke_agent".into()),
                ("gen_ai.usage.input_tokens", 999.into()),
            ],
        );
        let spans = [
            failed,
            tool(5, 1, 120, "add", r#"{"a": 2, "b": 3}"#),
            chat(2, 10, 11, 7),
            tool(4, 1, 110, "get_weather", r#"{"city": "Paris"}"#),
            chat(3, 200, 20, 5),
            agent,
        ];
        let t = SpanTrajectory::of(&spans);
        let names: Vec<&str> = t.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "add", "fail"]);
        assert_eq!(t.calls[1].arguments["b"], 3);
        assert!(t.calls[2].is_error);
        assert_eq!(
            t.calls[2].result,
            Some(Value::String("RuntimeError: boom".into()))
        );
        let turns: Vec<u32> = t.steps.iter().map(|s| s.turn).collect();
        assert_eq!(turns, [1, 1, 2]);
        assert_eq!(t.turns.len(), 2);
        assert_eq!(t.turns[0].tool_calls, 2);
        assert_eq!(t.turns[1].tool_calls, 1);
        assert_eq!(t.turns[1].latency, Duration::from_nanos(10));
        assert_eq!(t.turns[0].usage.unwrap().input, Some(11));
        // The agent span's own total is not counted again.
        let usage = t.usage.unwrap();
        assert_eq!((usage.input, usage.output), (Some(31), Some(12)));
    }

    #[test]
    fn an_mcp_call_inside_a_tool_span_is_that_call_and_alone_it_is_one() {
        let mcp = |id, parent| {
            span(
                id,
                Some(parent),
                50 + u64::from(id),
                &[
                    ("mcp.method.name", "tools/call".into()),
                    ("gen_ai.tool.name", "search".into()),
                ],
            )
        };
        let spans = [tool(2, 1, 40, "search", "{}"), mcp(3, 2), mcp(4, 1)];
        let t = SpanTrajectory::of(&spans);
        assert_eq!(t.calls.len(), 2);
        assert!(t.usage.is_none());
        assert_eq!(t.steps[1].turn, 2);
    }

    #[test]
    fn arguments_that_are_not_json_stay_text_and_missing_ones_are_null() {
        let mut plain = tool(2, 1, 0, "echo", "not json");
        let bare = span(
            3,
            Some(1),
            5,
            &[("gen_ai.operation.name", "execute_tool".into())],
        );
        plain.name = "execute_tool echo".into();
        let t = SpanTrajectory::of(&[plain, bare]);
        assert_eq!(t.calls[0].arguments, Value::String("not json".into()));
        assert_eq!(t.calls[1].arguments, Value::Null);
        assert_eq!(t.calls[1].name, "span 3");
    }
}
