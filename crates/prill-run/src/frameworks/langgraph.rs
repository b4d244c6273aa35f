//! `framework: langgraph`: a LangGraph server's assistant runs the test.
//!
//! - The request is the model request of the case ([`crate::model::model_request`]):
//!   the system instructions and the conversation become the run's input messages. The
//!   spec's `tools` and sampling parameters are not sent: the graph has its own. The
//!   spec's `model` is sent as `configurable.model` (the key LangGraph's templates read
//!   their model from) unless `framework_config.config` sets `model` itself; the rest
//!   of `framework_config.config` is the run's `configurable` as written.
//! - `max_iterations` is sent as the run's `recursion_limit`, two graph steps per model
//!   call and one more (`2 * max_iterations + 1`), and checked on the AI messages that
//!   come back: more of them than `max_iterations` is an error, as is the server's
//!   `GraphRecursionError`.
//! - The answer: the messages of the run's final state after the last human message
//!   (the input's last message) are the run's. The text is the last AI message's; the
//!   tool calls are every AI message's, in order; the usage is the AI messages' usage
//!   summed; the iterations are the AI messages. Each AI message is a turn of the
//!   report; each tool call a step of the trajectory, with the content of the tool
//!   message that answers its id (an error when that message's `status` is `error`).

use std::time::{Duration, Instant};

use prill_check::{Response, TokenUsage, ToolCall, run_checks};
use prill_spec::model::framework::LanggraphConfig;
use prill_target::ErrorKind;
use prill_target::graph::{GraphMessage, GraphRequest, GraphRun};
use serde_json::Value;

use crate::engine::{SampleCtx, config_error, error_info, note_truncation};
use crate::events::{CallInfo, ErrorInfo, InteractionReport, TrajectoryStep, TurnInfo};

/// Runs the case's assistant on the LangGraph server and checks its answer.
pub(crate) async fn call(
    ctx: &SampleCtx,
    config: &LanggraphConfig,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let Some(server) = &ctx.frameworks.langgraph else {
        return Err(config_error(
            "no LangGraph server is configured: add `[frameworks.langgraph]` with the server's `url` to prill.toml".to_owned(),
        ));
    };
    let case = &ctx.case;
    let request = graph_request(ctx, config)?;
    let step = &case.interactions[0];
    let started = Instant::now();
    let mut report = InteractionReport::sent(0, step.input.text.clone());
    let run = match server.run(&request).await {
        Ok(run) => run,
        Err(e) => {
            report.duration = started.elapsed();
            report.error = Some(error_info(&e));
            out.push(report);
            return Ok(());
        }
    };
    let (response, call) = answer(&run, config.intermediate_steps);
    report.duration = started.elapsed();
    report.answer = response.text.clone();
    report.error = run_error(&run, &response, config, request.recursion_limit);
    if report.error.is_none() {
        report.checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
        note_truncation(&mut report.checks, &call);
    }
    report.call = call;
    out.push(report);
    Ok(())
}

/// The run's request: the case's inputs, `config` as `configurable` (with the spec's
/// model as `model` unless it sets one), `max_iterations` as the recursion limit.
fn graph_request(ctx: &SampleCtx, config: &LanggraphConfig) -> Result<GraphRequest, ErrorInfo> {
    let request =
        crate::model::model_request(&ctx.case).map_err(|e| config_error(e.to_string()))?;
    let mut configurable = config.config.clone().unwrap_or_default();
    if !request.model.is_empty() && !configurable.contains_key("model") {
        configurable.insert("model".to_owned(), Value::String(request.model.clone()));
    }
    Ok(GraphRequest {
        assistant_id: config.assistant_id.clone(),
        system: request.system,
        messages: request.messages,
        configurable: (!configurable.is_empty()).then_some(configurable),
        recursion_limit: config
            .max_iterations
            .map(|n| n.saturating_mul(2).saturating_add(1)),
        timeout: request.timeout,
    })
}

/// Why a run that came back is an error: the graph raised, it answered with no AI
/// message, or it took more model calls than `max_iterations`.
fn run_error(
    run: &GraphRun,
    response: &Response,
    config: &LanggraphConfig,
    recursion_limit: Option<u32>,
) -> Option<ErrorInfo> {
    let used = response.iterations.unwrap_or(0);
    let id = &config.assistant_id;
    let (kind, message) = if let Some(failure) = &run.failure {
        match (config.max_iterations, recursion_limit) {
            (Some(max), Some(limit)) if failure.is_recursion_limit() => (
                ErrorKind::MaxIterations,
                format!(
                    "the assistant `{id}` did not answer within `max_iterations: {max}` (sent as recursion_limit {limit}; {used} model calls so far): {failure}"
                ),
            ),
            _ => (
                ErrorKind::Protocol,
                format!("the LangGraph run of `{id}` failed: {failure}"),
            ),
        }
    } else if used == 0 {
        (
            ErrorKind::Protocol,
            format!(
                "the LangGraph run of `{id}` ended with no AI message after the input: there is no answer to check"
            ),
        )
    } else if let Some(max) = config.max_iterations.filter(|max| used > *max) {
        (
            ErrorKind::MaxIterations,
            format!(
                "the assistant `{id}` made {used} model calls, more than `max_iterations: {max}`"
            ),
        )
    } else {
        return None;
    };
    Some(ErrorInfo { kind, message })
}

/// The run's answer as the checks see it, and what the report says of the call.
fn answer(run: &GraphRun, intermediate_steps: bool) -> (Response, CallInfo) {
    let start = run
        .messages
        .iter()
        .rposition(|m| matches!(m, GraphMessage::Human { .. }))
        .map_or(0, |i| i + 1);
    let own = &run.messages[start..];
    let mut turns = Vec::new();
    let mut trajectory = Vec::new();
    let mut tool_calls = Vec::new();
    let mut usage: Option<TokenUsage> = None;
    let mut last = None;
    for ai in own.iter().filter_map(|m| match m {
        GraphMessage::Ai(ai) => Some(ai),
        _ => None,
    }) {
        let turn = u32::try_from(turns.len() + 1).unwrap_or(u32::MAX);
        let this = ai.usage.map(|u| TokenUsage {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
        });
        usage = TokenUsage::sum(usage, this);
        for call in &ai.tool_calls {
            let answer = own.iter().find_map(|m| match m {
                GraphMessage::Tool(t) if Some(t.call_id.as_str()) == call.id.as_deref() => Some(t),
                _ => None,
            });
            trajectory.push(TrajectoryStep {
                turn,
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                result: answer.map(|t| t.content.clone()),
                is_error: answer.is_some_and(|t| t.is_error),
            });
            let made = ToolCall::new(call.name.clone(), call.arguments.clone());
            tool_calls.push(match answer {
                Some(t) => made.with_result(t.content.clone(), t.is_error),
                None => made,
            });
        }
        turns.push(TurnInfo {
            turn,
            usage: this,
            // A run's stream gives no per-call times.
            latency: Duration::ZERO,
            time_to_first_byte: None,
            stop_reason: ai.stop_reason.clone(),
            tool_calls: ai.tool_calls.len(),
        });
        last = Some(ai);
    }
    let response = Response {
        text: last.map(|ai| ai.text.clone()),
        sly_data: None,
        structure: None,
        tool_calls,
        latency: Some(run.timings.total),
        time_to_first_byte: run.timings.first_byte,
        usage,
        stop_reason: last.and_then(|ai| ai.stop_reason.clone()),
        iterations: Some(u32::try_from(turns.len()).unwrap_or(u32::MAX)),
        graph_steps: Some(run.steps.clone()),
        refusal: false,
        messages: run.raw.clone(),
        end_state: None,
        conversation: Vec::new(),
    };
    let call = CallInfo {
        turns,
        trajectory,
        steps: if intermediate_steps {
            run.raw_messages.clone()
        } else {
            Vec::new()
        },
        ..CallInfo::of(&response, Vec::new())
    };
    (response, call)
}

#[cfg(test)]
mod tests {
    use prill_target::graph::{AiMessage, ToolMessage};
    use prill_target::model::ModelToolCall;
    use serde_json::json;

    use super::*;

    fn ai(text: &str, calls: &[(&str, &str)], input: u64) -> GraphMessage {
        GraphMessage::Ai(AiMessage {
            text: text.into(),
            tool_calls: calls
                .iter()
                .map(|(id, name)| ModelToolCall {
                    id: Some((*id).into()),
                    name: (*name).into(),
                    arguments: json!({"id": id}),
                })
                .collect(),
            usage: Some(prill_target::TokenUsage {
                input: Some(input),
                output: Some(1),
                reasoning: None,
            }),
            stop_reason: Some("stop".into()),
        })
    }

    fn tool(id: &str, content: Value, is_error: bool) -> GraphMessage {
        GraphMessage::Tool(ToolMessage {
            call_id: id.into(),
            name: None,
            content,
            is_error,
        })
    }

    #[test]
    fn the_runs_messages_become_the_answer_turns_and_trajectory() {
        let run = GraphRun {
            messages: vec![
                GraphMessage::Human {
                    text: "earlier".into(),
                },
                ai("an answer given in the input", &[], 0),
                GraphMessage::Human { text: "now".into() },
                ai("", &[("a", "search"), ("b", "fetch")], 10),
                tool("b", json!("page"), false),
                tool("a", json!({"hits": 1}), true),
                ai("done", &[], 20),
            ],
            raw_messages: vec![json!({"type": "human"})],
            ..GraphRun::default()
        };
        let (response, call) = answer(&run, true);
        assert_eq!(response.text.as_deref(), Some("done"));
        assert_eq!(response.iterations, Some(2));
        let names: Vec<&str> = response
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["search", "fetch"]);
        assert_eq!(response.usage.unwrap().input, Some(30));
        assert_eq!(response.usage.unwrap().output, Some(2));
        assert_eq!(call.turns.len(), 2);
        assert_eq!(call.turns[0].tool_calls, 2);
        assert_eq!(call.trajectory[0].result, Some(json!({"hits": 1})));
        assert!(call.trajectory[0].is_error);
        assert_eq!(call.trajectory[1].result, Some(json!("page")));
        assert_eq!(call.trajectory[1].turn, 1);
        assert_eq!(call.steps.len(), 1);
        let (_, call) = answer(&run, false);
        assert!(call.steps.is_empty());
    }

    #[test]
    fn too_many_model_calls_and_no_answer_are_errors() {
        let config = LanggraphConfig {
            max_iterations: Some(1),
            ..LanggraphConfig::default()
        };
        let run = GraphRun {
            messages: vec![
                ai("", &[("a", "s")], 1),
                tool("a", json!(1), false),
                ai("x", &[], 1),
            ],
            ..GraphRun::default()
        };
        let (response, _) = answer(&run, false);
        let error = run_error(&run, &response, &config, Some(3)).unwrap();
        assert!(
            error
                .message
                .contains("2 model calls, more than `max_iterations: 1`"),
            "{}",
            error.message
        );
        let empty = GraphRun::default();
        let (response, _) = answer(&empty, false);
        let error = run_error(&empty, &response, &LanggraphConfig::default(), None).unwrap();
        assert!(error.message.contains("no AI message"), "{}", error.message);
    }
}
