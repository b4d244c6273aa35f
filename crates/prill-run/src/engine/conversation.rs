//! One sample of an agent case: its interactions in order over one conversation, what
//! carries over between them (`chat_context`, sly_data), and the checks on each answer.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use prill_check::{CheckResult, EndState, Response, run_checks};
use prill_spec::model::data_driven::{Connection, StockTest, TrajectorySource};
use prill_spec::plan::{Case, Check, CheckKind, Part, Step, Target};
use prill_target::otel::{AgentSpan, TRACEPARENT, TraceParent};
use prill_target::{AgentRequest, AgentResponse, Conversation};
use serde_json::Value;

use super::model_call::model_call;
use super::units::SampleCtx;
use super::{SAMPLE_METADATA, error_info, note_truncation};
use crate::events::{CallInfo, ErrorInfo, ErrorKind, InteractionReport, TrajectoryStep};
use crate::trace::SpanTrajectory;

/// One sample's conversation with its agent (or its model call): the interactions in
/// order, each reported into `out`. `Err` is an error before any interaction could run.
pub(super) async fn conversation(
    ctx: &SampleCtx,
    sample: u32,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let case = &ctx.case;
    let Target::Agent {
        agent,
        metadata,
        use_direct,
        trajectory: source,
        ..
    } = &case.target
    else {
        return model_call(ctx, out).await;
    };
    let Some(connector) = &ctx.connector else {
        let name = ctx.connection.map(|c| c.name()).unwrap_or("none");
        return Err(ErrorInfo {
            kind: ErrorKind::Config,
            message: format!(
                "no way to reach agents over `{name}`: configure it in prill.toml or pass --server"
            ),
        });
    };
    let mut talk = Talk {
        ctx,
        connector: connector.as_ref(),
        agent,
        headers: request_metadata(metadata.as_deref(), sample),
        use_direct: *use_direct,
        source: *source,
        sample,
        session: None,
        carry: Carry::default(),
    };
    // With a simulated user, the last step is its turns' (their settings, and the checks
    // on the last answer); the ones before are scripted.
    let scripted = match &case.user {
        Some(_) => &case.interactions[..case.interactions.len().saturating_sub(1)],
        None => &case.interactions[..],
    };
    let keep = case.user.is_some();
    let mut history = Vec::new();
    let scripted_turn = case.user.as_ref().map(|_| crate::events::UserTurn {
        simulated: false,
        stop: None,
    });
    for (index, step) in scripted.iter().enumerate() {
        let turn = talk.turn(step, index, scripted_turn.clone(), keep, out);
        let Some(response) = turn.await? else {
            return Ok(());
        };
        if keep {
            history.push((step.input.text.clone(), response));
        }
    }
    if let (Some(user), Some(template)) = (case.user.as_deref(), case.interactions.last()) {
        super::simulated::converse(&mut talk, user, template, history, out).await?;
    }
    Ok(())
}

/// One sample's conversation with its agent as it goes: how it is reached, what every
/// request carries, and what carries over from one interaction to the next.
pub(super) struct Talk<'a> {
    pub(super) ctx: &'a SampleCtx,
    connector: &'a dyn prill_target::Connector,
    agent: &'a str,
    headers: BTreeMap<String, String>,
    use_direct: bool,
    source: TrajectorySource,
    sample: u32,
    session: Option<Box<dyn Conversation>>,
    carry: Carry,
}

impl Talk<'_> {
    /// Sends `step` as interaction `index`, runs its checks, and reports it into `out`
    /// (with `user`, who wrote it in a conversation with a simulated user). `None` when
    /// the interaction errored, which ends the sample; else, with `keep`, the response as
    /// the checks saw it (a conversation with a simulated user checks it again at the
    /// end), and without, an empty one: the answer is held once, in the report.
    pub(super) async fn turn(
        &mut self,
        step: &Step,
        index: usize,
        user: Option<crate::events::UserTurn>,
        keep: bool,
        out: &mut Vec<InteractionReport>,
    ) -> Result<Option<Response>, ErrorInfo> {
        let ctx = self.ctx;
        let case = &ctx.case;
        let conv = opened(&mut self.session, self.connector, self.agent).await?;
        let mut request = self
            .carry
            .request(case, step, &self.headers, self.use_direct);
        let parent = ctx
            .tracing
            .as_ref()
            .map(|(tracing, unit)| tracing.parent(unit, self.sample, index));
        if let Some(parent) = parent {
            request
                .metadata
                .insert(TRACEPARENT.to_owned(), parent.header());
        }
        // What goes on the wire: an empty sly_data is not sent.
        let sent_sly_data = request
            .sly_data
            .clone()
            .filter(|m| !m.is_empty())
            .map(Value::Object);
        let started = Instant::now();
        let response = match conv.send(&request).await {
            Ok(response) => response,
            Err(e) => {
                out.push(InteractionReport {
                    sent_sly_data,
                    duration: started.elapsed(),
                    error: Some(error_info(&e)),
                    user,
                    ..InteractionReport::sent(index, step.input.text.clone())
                });
                return Ok(None);
            }
        };
        let (mut response, returned_context, mut trajectory) = into_check_response(response);
        let mut turns = Vec::new();
        let read = self
            .after_answer(
                step,
                index,
                parent,
                &mut response,
                &mut trajectory,
                &mut turns,
            )
            .await;
        if let Err(error) = read {
            out.push(InteractionReport {
                sent_sly_data,
                answer: response.text,
                duration: started.elapsed(),
                error: Some(error),
                user,
                ..InteractionReport::sent(index, step.input.text.clone())
            });
            return Ok(None);
        }
        let extra = pattern_checks(&case.failure_patterns, index);
        let mut checks = run_checks(&step.checks, &response, ctx.judge.as_deref()).await;
        checks.extend(run_checks(&extra, &response, ctx.judge.as_deref()).await);
        if ctx.connection == Some(Connection::Mcp) && self.source == TrajectorySource::Stream {
            no_trajectory_over_mcp(&mut checks);
        }
        let call = CallInfo {
            trajectory,
            turns,
            ..CallInfo::of(&response, Vec::new())
        };
        note_truncation(&mut checks, &call);
        if !self.carry.after(
            step,
            request.sly_data,
            returned_context,
            response.sly_data.as_ref(),
        ) {
            // A clean conversation: a stdio agent gets a fresh process.
            self.session = None;
        }
        let kept = if keep {
            response.clone()
        } else {
            Response::default()
        };
        out.push(InteractionReport {
            sent_sly_data,
            answer: response.text,
            structure: response.structure,
            sly_data: response.sly_data,
            duration: started.elapsed(),
            checks,
            call,
            user,
            ..InteractionReport::sent(index, step.input.text.clone())
        });
        Ok(Some(kept))
    }
}

impl Talk<'_> {
    /// What interaction `index` (of `step`, sent under `parent`) needs once its answer
    /// came: with `trajectory: otel`, the agent's spans (its tool calls, steps, model
    /// calls and usage); after the last scripted interaction, the end state. An error
    /// here errors the interaction.
    async fn after_answer(
        &mut self,
        step: &Step,
        index: usize,
        parent: Option<TraceParent>,
        response: &mut Response,
        trajectory: &mut Vec<TrajectoryStep>,
        turns: &mut Vec<crate::events::TurnInfo>,
    ) -> Result<(), ErrorInfo> {
        let case = &self.ctx.case;
        if self.source == TrajectorySource::Otel {
            let read = SpanTrajectory::of(&spans(self.ctx, self.agent, index, parent).await?);
            response.tool_calls = read.calls;
            *trajectory = read.steps;
            *turns = read.turns;
            response.usage = response.usage.or(read.usage);
        }
        // The end state, once a scripted conversation is over (a simulated user's is read
        // when it ends).
        if case.user.is_none() && index + 1 == case.interactions.len() {
            response.end_state = self.end_state(&step.checks, step.timeout).await?;
        }
        Ok(())
    }

    /// The state of the agent's environment from the case's `state_endpoint`, when one of
    /// `checks` reads it (`expect_state`), read with the sample's headers within `limit`
    /// (else the case's): an error when it cannot be read, which errors the sample.
    pub(super) async fn end_state(
        &mut self,
        checks: &[Check],
        limit: Option<Duration>,
    ) -> Result<Option<EndState>, ErrorInfo> {
        let wanted = checks.iter().any(|c| {
            matches!(
                c.kind,
                CheckKind::Assertion(prill_spec::model::sentinel::Assertion::ExpectState(_))
            )
        });
        let Target::Agent {
            state_endpoint: Some(endpoint),
            ..
        } = &self.ctx.case.target
        else {
            return Ok(None);
        };
        if !wanted {
            return Ok(None);
        }
        let conv = opened(&mut self.session, self.connector, self.agent).await?;
        let limit = limit.or(self.ctx.case.timeout);
        let state = conv
            .state(endpoint, &self.headers, limit)
            .await
            .map_err(|e| error_info(&e))?;
        Ok(Some(EndState {
            state,
            replayed: Vec::new(),
        }))
    }
}

/// The conversation of `session`, opened with `agent` on `connector` when there is none
/// yet (the first interaction, or the one after a clean start).
async fn opened<'s>(
    session: &'s mut Option<Box<dyn Conversation>>,
    connector: &dyn prill_target::Connector,
    agent: &str,
) -> Result<&'s mut Box<dyn Conversation>, ErrorInfo> {
    match session {
        Some(conv) => Ok(conv),
        None => Ok(session.insert(connector.open(agent).await.map_err(|e| error_info(&e))?)),
    }
}

/// The agent's spans under `parent`, the context interaction `index` was sent: an
/// error when the run has no trace or no receiver, or when they never came.
async fn spans(
    ctx: &SampleCtx,
    agent: &str,
    index: usize,
    parent: Option<TraceParent>,
) -> Result<Vec<AgentSpan>, ErrorInfo> {
    let (Some((tracing, _)), Some(parent)) = (&ctx.tracing, parent) else {
        return Err(no_receiver());
    };
    let Some(source) = &tracing.spans else {
        return Err(no_receiver());
    };
    source
        .spans(agent, index, parent, tracing.wait)
        .await
        .map_err(|e| error_info(&e))
}

fn no_receiver() -> ErrorInfo {
    ErrorInfo {
        kind: ErrorKind::Config,
        message: "`trajectory: otel` needs the run's OTLP receiver, and this run has none (a Rust caller gives one in `RunOptions::tracing`)".to_owned(),
    }
}

/// The metadata every request of a sample carries: the case's, and the sample index
/// (`x-prill-sample`), so that agents (the demo's `flaky`) can vary by sample and a run
/// can be repeated exactly.
fn request_metadata(
    metadata: Option<&serde_json::Map<String, Value>>,
    index: u32,
) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = metadata
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), prill_check::text::as_text(v)))
        .collect();
    headers
        .entry(SAMPLE_METADATA.to_owned())
        .or_insert_with(|| index.to_string());
    headers
}

/// What one interaction hands the next: the `chat_context` and the sly_data, by
/// upstream's carry rules.
#[derive(Default)]
struct Carry {
    chat_context: Option<Value>,
    sly_data: Option<serde_json::Map<String, Value>>,
}

impl Carry {
    /// The request of `step`: its own sly_data, else the carried one; the carried
    /// context.
    fn request(
        &self,
        case: &Case,
        step: &Step,
        headers: &BTreeMap<String, String>,
        use_direct: bool,
    ) -> AgentRequest {
        AgentRequest {
            text: step.input.text.clone(),
            sly_data: step
                .input
                .sly_data
                .as_deref()
                .or(self.sly_data.as_ref())
                .cloned(),
            chat_context: self.chat_context.clone(),
            chat_filter: step.chat_filter,
            metadata: headers.clone(),
            // A case with a limit of its own is bounded by it (the sample's timeout):
            // the connector's default must not cut short what the case allows.
            timeout: step.timeout.or(case.timeout.map(|_| Duration::MAX)),
            use_direct,
        }
    }

    /// Takes in what `step` got back. On `continue_conversation` the returned context
    /// carries on and the returned sly_data merges into the sent one; otherwise the next
    /// interaction starts clean, and this returns `false`.
    fn after(
        &mut self,
        step: &Step,
        sent: Option<serde_json::Map<String, Value>>,
        returned_context: Option<Value>,
        returned_sly: Option<&Value>,
    ) -> bool {
        if step.continue_conversation {
            self.chat_context = returned_context;
            self.sly_data = merge(sent, returned_sly);
            true
        } else {
            self.chat_context = None;
            self.sly_data = step.input.sly_data.as_deref().cloned();
            false
        }
    }
}

/// The response as the checks see it, the `chat_context` it returned, and its
/// trajectory for the report. The checks see the agents and tools the agent invoked
/// (its trajectory, read from a `MAXIMAL` stream) as its tool calls, in order. The raw
/// messages, which no check reads and which hold the answer's text again, are dropped
/// here, as [`crate::model::answer_of`] drops a model's raw events.
fn into_check_response(response: AgentResponse) -> (Response, Option<Value>, Vec<TrajectoryStep>) {
    let AgentResponse {
        text,
        structure,
        sly_data,
        chat_context,
        messages: _,
        timings,
        usage,
        trajectory,
    } = response;
    let tool_calls = trajectory
        .iter()
        .map(|i| {
            let call = prill_check::ToolCall::new(i.tool.clone(), i.arguments.clone());
            match &i.result {
                Some(result) => call.with_result(result.clone(), false),
                None => call,
            }
        })
        .collect();
    let steps = trajectory
        .into_iter()
        .map(|i| TrajectoryStep {
            turn: u32::try_from(i.position).unwrap_or(u32::MAX),
            tool: i.tool,
            arguments: i.arguments,
            result: i.result,
            is_error: false,
        })
        .collect();
    let response = Response {
        text,
        sly_data,
        structure,
        tool_calls,
        latency: Some(timings.total),
        time_to_first_byte: timings.first_byte,
        usage: usage.map(|u| prill_check::TokenUsage {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
        }),
        stop_reason: None,
        iterations: None,
        graph_steps: None,
        refusal: false,
        messages: Vec::new(),
        end_state: None,
        conversation: Vec::new(),
    };
    (response, chat_context, steps)
}

/// One `not_keywords` check on the text per failure pattern, as neuro-san's load tests
/// apply them.
fn pattern_checks(failure_patterns: &[String], index: usize) -> Vec<Check> {
    failure_patterns
        .iter()
        .enumerate()
        .map(|(i, pattern)| Check {
            location: None,
            path: format!("interactions[{index}] failure_patterns[{i}]").into(),
            kind: CheckKind::Stock {
                part: Part::Text,
                field: Vec::new(),
                test: StockTest::Keywords,
                negated: true,
                expected: Box::new(Value::String(pattern.clone())),
            },
        })
        .collect()
}

fn merge(
    sent: Option<serde_json::Map<String, Value>>,
    returned: Option<&Value>,
) -> Option<serde_json::Map<String, Value>> {
    match (sent, returned) {
        (sent, Some(Value::Object(returned))) => {
            let mut merged = sent.unwrap_or_default();
            for (k, v) in returned {
                merged.insert(k.clone(), v.clone());
            }
            Some(merged)
        }
        (sent, _) => sent,
    }
}

/// Makes every check of a data-driven `trajectory` part an error: neuro-san's MCP
/// endpoint sends only the agent's final message, so nothing shows which agents and
/// tools it invoked, and a `must_not_call_tool` would pass on nothing (a file that
/// names `mcp` among its connections is refused by `prill validate`; this is for
/// `--connection mcp`).
fn no_trajectory_over_mcp(checks: &mut [CheckResult]) {
    for check in checks
        .iter_mut()
        .filter(|c| c.path.contains(".response.trajectory."))
    {
        check.outcome = prill_check::Outcome::Errored {
            message: format!(
                "{}: the mcp connection carries only the agent's final message, so no trajectory can be read: check it over direct, http or https",
                check.name
            ),
        };
    }
}
