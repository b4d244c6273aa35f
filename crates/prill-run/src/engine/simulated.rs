//! An agent case's conversation with a simulated user (a data-driven `user`,
//! `docs/conversations.md`): after the scripted interactions, the simulator says what the
//! user does next until it ends the conversation ([`crate::simulator`]); each simulated
//! turn is sent with the settings of the case's last step, and that step's checks run
//! once, on the last answer, with every turn's tool calls and the whole conversation.

use prill_check::{Response, run_checks};
use prill_spec::model::user::SimulatedUser;
use prill_spec::plan::{Input, Step};
use prill_target::{DEFAULT_TIMEOUT, ErrorKind};

use super::conversation::Talk;
use super::{config_error, note_truncation};
use crate::events::{ErrorInfo, InteractionReport, UserStop, UserTurn};
use crate::simulator::{Next, Simulator};

/// Carries the conversation on after `history` (each scripted interaction's text and
/// the response it got) until the simulated user ends it; `template` is the case's last
/// step.
pub(super) async fn converse(
    talk: &mut Talk<'_>,
    user: &SimulatedUser,
    template: &Step,
    history: Vec<(Option<String>, Response)>,
    out: &mut Vec<InteractionReport>,
) -> Result<(), ErrorInfo> {
    let ctx = talk.ctx;
    let limit = template
        .timeout
        .or(ctx.case.timeout)
        .unwrap_or(DEFAULT_TIMEOUT);
    let Some(provider) = ctx.user_provider.clone() else {
        return Err(config_error(format!(
            "cannot reach the simulated user's model `{}`: configure its provider (`user.provider`, or the one its name implies)",
            user.model
        )));
    };
    let mut sim = Simulator::new(user.clone(), provider, ctx.judge.clone(), None, limit);
    let mut calls = Vec::new();
    let mut last: Option<Response> = None;
    for (text, response) in history {
        if let Some(text) = text {
            sim.scripted(text);
        }
        sim.heard(response.text.as_deref().unwrap_or_default());
        calls.extend(response.tool_calls.iter().cloned());
        last = Some(response);
    }
    loop {
        match sim.next().await? {
            Next::Say { text, simulated } => {
                let step = Step {
                    input: Input {
                        text: Some(text),
                        ..Input::default()
                    },
                    checks: Vec::new(),
                    ..template.clone()
                };
                let turn = UserTurn {
                    simulated,
                    stop: None,
                };
                let index = out.len();
                let Some(response) = talk.turn(&step, index, Some(turn), true, out).await? else {
                    return Ok(());
                };
                sim.heard(response.text.as_deref().unwrap_or_default());
                calls.extend(response.tool_calls.iter().cloned());
                last = Some(response);
            }
            Next::End { reason, said } => {
                let Some(report) = out.last_mut() else {
                    return Err(ErrorInfo {
                        kind: ErrorKind::Simulator,
                        message: format!(
                            "the simulated user ended the conversation ({}) before it said anything",
                            reason.name()
                        ),
                    });
                };
                let turn = report.user.get_or_insert(UserTurn {
                    simulated: false,
                    stop: None,
                });
                turn.stop = Some(UserStop { reason, said });
                break;
            }
        }
    }
    let (Some(mut response), Some(report)) = (last, out.last_mut()) else {
        return Ok(());
    };
    response.tool_calls = calls;
    response.conversation = sim.conversation();
    response.end_state = talk.end_state(&template.checks, template.timeout).await?;
    let mut checks = run_checks(&template.checks, &response, ctx.judge.as_deref()).await;
    note_truncation(&mut checks, &report.call);
    report.checks.extend(checks);
    Ok(())
}
