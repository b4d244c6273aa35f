//! The built-in tool loop of `openai-sdk`, `claude-sdk` and `strands`.
//!
//! 1. The model is called with the case's request (its inputs, its tools).
//! 2. An answer without tool calls is the final answer: the checks run on it.
//! 3. Otherwise the model's turn (its text and calls) joins the conversation, every
//!    call of the turn is answered, in order, before the next model call
//!    (`tool_results`, then `tool_command`; [`super::fixed::SpecTools`]), each answer
//!    joins the conversation as a tool result in the provider's own shape, and the
//!    model is called again.
//! 4. When `max_iterations` model calls were made and the last still asked for tools,
//!    the sample errors (`max_iterations`), with the steps so far in the report.
//!
//! The checks see the whole loop: every tool call of every turn (`must_call_tool`, the
//! trajectory assertions), the token usage summed over the turns, the latency from the
//! first request to the final answer (tool time included), and the number of model
//! calls (`max_iterations_used`). The report keeps each turn's own figures and the
//! trajectory; every message too with `intermediate_steps: true`.
//!
//! A turn cut short by the token limit while it calls tools errors the sample (the
//! calls' arguments may be cut too). A model call that fails errors the sample, after the retries `retry_policy` asks
//! for (only for errors worth retrying: the provider unreachable, or an error status
//! it sends for a temporary condition). A tool that cannot answer (no result
//! configured, its program broken) errors the sample; a tool that answers with an
//! error is told to the model, and the loop goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prill_check::{Response, TokenUsage, ToolCall, run_checks};
use prill_spec::model::framework::{LoopConfig, RetryPolicy, describe};
use prill_spec::plan::Target;
use prill_target::model::{
    ChatMessage, ModelRequest, ModelResponse, ModelToolCall, Provider, ToolResult,
};
use prill_target::retry::Statuses;
use prill_target::tools::{ToolCallRequest, ToolProgram, ToolSession};
use prill_target::{ConnectError, DEFAULT_TIMEOUT, ErrorKind};
use serde_json::{Value, json};

use super::end_state;
use super::fixed::{SpecTools, arguments};
use crate::engine::{SampleCtx, config_error, error_info, note_truncation};
use crate::events::{
    CallInfo, ErrorInfo, InteractionReport, TrajectoryStep, TurnInfo, UserStop, UserTurn,
};
use crate::simulator::Next;

/// How many steps an error message lists before it says how many more there were.
const STEPS_SHOWN: usize = 12;

/// Runs the case's tool loop and checks its final answer; with a simulated user, one
/// loop per user turn, on one conversation, until the user ends it.
pub(crate) async fn call(
    ctx: &SampleCtx,
    provider: &Arc<dyn Provider>,
    config: &LoopConfig,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let case = &ctx.case;
    if !matches!(case.target, Target::Model { .. }) {
        return Ok(());
    }
    let step = &case.interactions[0];
    let limit = step.timeout.or(case.timeout).unwrap_or(DEFAULT_TIMEOUT);
    let mut user = match case.user.as_deref() {
        Some(brief) => Some(super::simulated::start(ctx, brief, limit)?),
        None => None,
    };
    // The test's own first message, else the simulated user's.
    let opening = match &mut user {
        Some(sim) if step.input.text.is_none() => Some(super::simulated::opening(sim).await?),
        _ => None,
    };
    let request = crate::model::model_request_opening(case, opening.as_ref().map(|o| o.0.as_str()))
        .map_err(|e| config_error(e.to_string()))?;
    let mut tools = start_tools(ctx, config)?;
    let mut run = Run::new(request, config.intermediate_steps);
    let mut sent = opening
        .as_ref()
        .map(|o| o.0.clone())
        .or_else(|| step.input.text.clone());
    let mut turn = user.as_ref().map(|_| UserTurn {
        simulated: opening.as_ref().is_some_and(|o| o.1),
        stop: None,
    });
    let mut conversation = Vec::new();
    let last = loop {
        let mark = run.mark();
        let began = Instant::now();
        let outcome = run.go(provider.as_ref(), &mut tools, config, limit).await;
        let index = out.len();
        let (answer, error) = match outcome {
            Ok(answer) => (Some(answer), None),
            Err(error) => (None, Some(error)),
        };
        let call = run.call_info_since(mark, answer.as_ref(), error.is_some());
        out.push(InteractionReport {
            answer: answer.as_ref().map(|a| a.text.clone()),
            duration: began.elapsed(),
            error,
            call,
            user: turn.take(),
            ..InteractionReport::sent(index, sent.take())
        });
        let Some(answer) = answer else {
            return Ok(());
        };
        let Some(sim) = &mut user else {
            break answer;
        };
        match super::simulated::after(sim, &answer.text, &mut conversation).await? {
            Next::Say { text, simulated } => {
                run.request.messages.push(ChatMessage::User(text.clone()));
                sent = Some(text);
                turn = Some(UserTurn {
                    simulated,
                    stop: None,
                });
            }
            Next::End { reason, said } => {
                if let Some(report) = out.last_mut().and_then(|r| r.user.as_mut()) {
                    report.stop = Some(UserStop { reason, said });
                }
                break answer;
            }
        }
    };
    let mut response = run.check_response(Some(&last));
    response.conversation = conversation;
    let mut error = None;
    if let Some(lists) = end_state::wanted(&step.checks) {
        let fresh = || {
            start_tools(ctx, config)
                .map(|t| Box::new(t) as Box<dyn ToolSession>)
                .map_err(|e| ConnectError::config(e.message))
        };
        match end_state::gather(&mut tools, &lists, fresh, limit).await {
            Ok(end) => response.end_state = Some(end),
            Err(e) => error = Some(error_info(&e)),
        }
    }
    drop(tools);
    let Some(report) = out.last_mut() else {
        return Ok(());
    };
    match error {
        Some(error) => report.error = Some(error),
        None => {
            let mut checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
            note_truncation(&mut checks, &report.call);
            report.checks = checks;
        }
    }
    Ok(())
}

/// The tools of one sample: `tool_results`, then the `tool_command` program or the
/// `tool_mcp` server, started in the spec file's directory.
fn start_tools(ctx: &SampleCtx, config: &LoopConfig) -> Result<SpecTools, ErrorInfo> {
    let program = match (&config.tool_command, &config.tool_mcp) {
        (Some(command), _) => Some((command, "tool_command", false)),
        (None, Some(command)) => Some((command, "tool_mcp", true)),
        (None, None) => None,
    };
    let session = match program {
        None => None,
        Some((command, key, mcp)) => {
            let Some(launcher) = &ctx.frameworks.tools else {
                return Err(config_error(format!(
                    "`framework_config.{key}` ({}) cannot run: this run has no way to start tool programs",
                    command.display()
                )));
            };
            let dir = ctx.case.file.parent().filter(|d| !d.as_os_str().is_empty());
            let mut program = ToolProgram::new(command.argv(), dir, command.display());
            if mcp {
                program = program.mcp();
            }
            Some(launcher.start(&program).map_err(|e| error_info(&e))?)
        }
    };
    Ok(SpecTools::new(config.tool_results.clone(), session))
}

/// A loop as it runs: the conversation so far and what the report keeps.
struct Run {
    request: ModelRequest,
    started: Instant,
    turns: Vec<TurnInfo>,
    trajectory: Vec<TrajectoryStep>,
    calls: Vec<ToolCall>,
    usage: Option<TokenUsage>,
    notes: Vec<String>,
    first_byte: Option<Duration>,
    last: Option<ModelResponse>,
    keep_steps: bool,
}

impl Run {
    fn new(request: ModelRequest, keep_steps: bool) -> Run {
        Run {
            request,
            started: Instant::now(),
            turns: Vec::new(),
            trajectory: Vec::new(),
            calls: Vec::new(),
            usage: None,
            notes: Vec::new(),
            first_byte: None,
            last: None,
            keep_steps,
        }
    }

    /// Calls the model until it answers without tools; the final answer, or why the
    /// loop could not end.
    async fn go(
        &mut self,
        provider: &dyn Provider,
        tools: &mut dyn ToolSession,
        config: &LoopConfig,
        limit: Duration,
    ) -> Result<ModelResponse, ErrorInfo> {
        for _ in 0..config.max_iterations {
            // Turns are numbered over the whole conversation: a simulated user's next
            // message starts the agent's next answer where the last one ended.
            let turn = u32::try_from(self.turns.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1);
            let called = Instant::now();
            let response = complete(provider, &self.request, config.retry_policy)
                .await
                .map_err(|e| self.failed_at(turn, &e))?;
            self.record(turn, &response, called.elapsed());
            if response.tool_calls.is_empty() {
                self.request
                    .messages
                    .push(ChatMessage::assistant(response.text.clone()));
                return Ok(response);
            }
            if response.truncated() {
                let reason = response.stop_reason.clone().unwrap_or_default();
                return Err(config_error(format!(
                    "model call {turn} was cut short by its token limit (stop reason `{reason}`) while it was calling tools, so their arguments may be cut too: raise model_config.max_tokens"
                )));
            }
            let calls = response.tool_calls.clone();
            self.request.messages.push(ChatMessage::tool_calls(
                response.text.clone(),
                calls.clone(),
            ));
            self.last = Some(response);
            for call in calls {
                self.answer(turn, call, tools, limit).await?;
            }
        }
        Err(self.out_of_iterations(config.max_iterations))
    }

    /// Answers one call and adds the answer to the conversation.
    async fn answer(
        &mut self,
        turn: u32,
        call: ModelToolCall,
        tools: &mut dyn ToolSession,
        limit: Duration,
    ) -> Result<(), ErrorInfo> {
        let request = ToolCallRequest {
            name: call.name.clone(),
            arguments: arguments(&call.arguments),
            call_id: call.id.clone(),
            turn,
        };
        let answer = tools.call(&request, Some(limit)).await.map_err(|e| {
            self.trajectory.push(TrajectoryStep {
                turn,
                tool: call.name.clone(),
                arguments: request.arguments.clone(),
                result: None,
                is_error: true,
            });
            let mut info = error_info(&e);
            info.message = format!("tool `{}` (turn {turn}): {}", call.name, info.message);
            info
        })?;
        let result = match &answer.output {
            prill_target::model::ToolOutput::Json(v) => v.clone(),
            prill_target::model::ToolOutput::Text(t) => Value::String(t.clone()),
        };
        self.trajectory.push(TrajectoryStep {
            turn,
            tool: call.name.clone(),
            arguments: request.arguments,
            result: Some(result),
            is_error: answer.is_error,
        });
        self.request
            .messages
            .push(ChatMessage::ToolResult(ToolResult {
                call_id: call.id,
                name: call.name,
                output: answer.output,
                is_error: answer.is_error,
            }));
        Ok(())
    }

    /// Keeps one model call's figures, calls and notes.
    fn record(&mut self, turn: u32, response: &ModelResponse, latency: Duration) {
        let usage = response.usage.map(|u| TokenUsage {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
        });
        self.usage = TokenUsage::sum(self.usage, usage);
        if turn == 1 {
            self.first_byte = response.timings.first_byte;
        }
        for note in &response.notes {
            if !self.notes.contains(note) {
                self.notes.push(note.clone());
            }
        }
        self.calls.extend(
            response
                .tool_calls
                .iter()
                .map(|c| ToolCall::new(c.name.clone(), arguments(&c.arguments))),
        );
        self.turns.push(TurnInfo {
            turn,
            usage,
            latency,
            time_to_first_byte: response.timings.first_byte,
            stop_reason: response.stop_reason.clone(),
            tool_calls: response.tool_calls.len(),
        });
    }

    /// A model call that failed at `turn`: its error, saying which turn when it was
    /// not the first.
    fn failed_at(&self, turn: u32, e: &ConnectError) -> ErrorInfo {
        let mut info = error_info(e);
        if turn > 1 {
            info.message = format!("model call {turn} of the tool loop: {}", info.message);
        }
        info
    }

    /// The error of a loop that reached `max_iterations`, with its steps.
    fn out_of_iterations(&self, max: u32) -> ErrorInfo {
        let shown: Vec<String> = self
            .trajectory
            .iter()
            .take(STEPS_SHOWN)
            .map(|t| format!("turn {}: {}({})", t.turn, t.tool, describe(&t.arguments)))
            .collect();
        let more = self.trajectory.len().saturating_sub(STEPS_SHOWN);
        let tail = if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        };
        ErrorInfo {
            kind: ErrorKind::MaxIterations,
            message: format!(
                "the model was still calling tools after {max} model call{} (framework_config.max_iterations): {}{tail}; raise max_iterations, or check why the model does not finish",
                if max == 1 { "" } else { "s" },
                shown.join(", ")
            ),
        }
    }

    /// The calls made, each with what it returned when it ran: the tools answer the
    /// calls in the order the model made them, so the trajectory's steps line up with
    /// the first calls.
    fn answered_calls(&self) -> Vec<ToolCall> {
        let mut calls = self.calls.clone();
        for (call, step) in calls.iter_mut().zip(&self.trajectory) {
            if call.name == step.tool {
                call.result.clone_from(&step.result);
                call.is_error = step.is_error;
            }
        }
        calls
    }

    /// What the checks see: the final answer, with the whole loop's calls and totals.
    fn check_response(&self, last: Option<&ModelResponse>) -> Response {
        let last = last.or(self.last.as_ref());
        Response {
            text: last.map(|r| r.text.clone()),
            sly_data: None,
            structure: None,
            tool_calls: self.answered_calls(),
            latency: Some(self.started.elapsed()),
            time_to_first_byte: self.first_byte,
            usage: self.usage,
            stop_reason: last.and_then(|r| r.stop_reason.clone()),
            iterations: u32::try_from(self.turns.len()).ok(),
            graph_steps: None,
            refusal: last.is_some_and(|r| r.refusal),
            messages: last.map(|r| r.raw.values()).unwrap_or_default(),
            end_state: None,
            conversation: Vec::new(),
        }
    }

    /// Where the run is: its model calls and tool calls so far.
    fn mark(&self) -> (usize, usize) {
        (self.turns.len(), self.trajectory.len())
    }

    /// The report's call info of what the run did since `mark` (one answer of the
    /// agent): its turns and trajectory, their usage summed, the first turn's time to
    /// first byte, the answer's stop reason; and the steps of the whole conversation
    /// (always gathered; the caller drops them when they were not asked for and
    /// nothing failed).
    fn call_info_since(
        &self,
        mark: (usize, usize),
        answer: Option<&ModelResponse>,
        failed: bool,
    ) -> CallInfo {
        let turns = &self.turns[mark.0.min(self.turns.len())..];
        let answer = answer.or(self.last.as_ref());
        let mut call = CallInfo {
            usage: turns
                .iter()
                .fold(None, |sum, t| TokenUsage::sum(sum, t.usage)),
            time_to_first_byte: turns.first().and_then(|t| t.time_to_first_byte),
            stop_reason: answer.and_then(|r| r.stop_reason.clone()),
            refusal: answer.is_some_and(|r| r.refusal),
            notes: self.notes.clone(),
            ..CallInfo::default()
        };
        call.turns = turns.to_vec();
        call.trajectory = self.trajectory[mark.1.min(self.trajectory.len())..].to_vec();
        if self.keep_steps || failed {
            call.steps = self.request.messages.iter().map(step_json).collect();
        }
        call
    }
}

/// Calls the model, retrying as the spec's `retry_policy` says on errors worth
/// retrying ([`Statuses::Provider`]). This comes on top of the transport's own retries
/// (`prill_connect::RetryPolicy`): each call here is already a full set of attempts.
async fn complete(
    provider: &dyn Provider,
    request: &ModelRequest,
    policy: Option<RetryPolicy>,
) -> Result<ModelResponse, ConnectError> {
    let retries = policy.map_or(0, |p| p.max_retries);
    let mut attempt = 0;
    loop {
        match provider.complete(request).await {
            Err(e) if attempt < retries && Statuses::Provider.worth_retrying(&e) => {
                attempt += 1;
                let wait = policy.map(|p| p.backoff.delay(attempt)).unwrap_or_default();
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}

/// One message of the conversation as the report shows it.
fn step_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        ChatMessage::Assistant { text, tool_calls } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect();
            json!({"role": "assistant", "content": text, "tool_calls": calls})
        }
        ChatMessage::ToolResult(r) => json!({
            "role": "tool",
            "tool_call_id": r.call_id,
            "name": r.name,
            "content": r.output.to_text(),
            "is_error": r.is_error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(tool: &str, result: Option<Value>, is_error: bool) -> TrajectoryStep {
        TrajectoryStep {
            turn: 1,
            tool: tool.into(),
            arguments: serde_json::json!({}),
            result,
            is_error,
        }
    }

    /// Each call carries what its tool returned, a failed one marked; a call the loop
    /// stopped before running carries nothing.
    #[test]
    fn the_checks_see_each_call_with_its_result() {
        let mut run = Run::new(ModelRequest::default(), false);
        for name in ["search", "lookup", "fetch"] {
            run.calls
                .push(ToolCall::new(name, serde_json::json!({"q": name})));
        }
        run.trajectory
            .push(step("search", Some(serde_json::json!({"hits": 1})), false));
        run.trajectory.push(step("lookup", None, true));
        let calls = run.answered_calls();
        assert_eq!(calls[0].result, Some(serde_json::json!({"hits": 1})));
        assert!(!calls[0].is_error);
        assert_eq!((calls[1].result.clone(), calls[1].is_error), (None, true));
        assert_eq!((calls[2].result.clone(), calls[2].is_error), (None, false));
        assert_eq!(calls[2].arguments, serde_json::json!({"q": "fetch"}));
    }
}
