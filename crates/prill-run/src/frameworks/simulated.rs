//! A tool loop's conversation with a simulated user (`user`, `docs/conversations.md`):
//! the simulator is started with the sample, opens the conversation when the test has
//! no message of its own, and after each of the agent's answers says what the user
//! does next ([`crate::simulator`]).

use std::time::Duration;

use prill_check::Said;
use prill_spec::model::user::SimulatedUser;
use prill_target::ErrorKind;

use crate::engine::{SampleCtx, config_error};
use crate::events::ErrorInfo;
use crate::simulator::{Next, Simulator};

/// The sample's simulator, or why it cannot be had (its model has no provider).
pub(super) fn start(
    ctx: &SampleCtx,
    user: &SimulatedUser,
    limit: Duration,
) -> Result<Simulator, ErrorInfo> {
    let Some(provider) = ctx.user_provider.clone() else {
        return Err(config_error(match &user.provider {
            Some(name) => format!(
                "the simulated user's provider `{name}` is not configured: add it to prill.toml's `[providers]`, or name another in `user.provider`"
            ),
            None => format!(
                "cannot tell which provider serves the simulated user's model `{}`: set `user.provider`",
                user.model
            ),
        }));
    };
    let opening = ctx
        .case
        .interactions
        .first()
        .and_then(|s| s.input.text.as_deref());
    Ok(Simulator::new(
        user.clone(),
        provider,
        ctx.judge.clone(),
        opening,
        limit,
    ))
}

/// The first message, for a test that has none: the user's first scripted turn, else
/// the simulator's; and whether the simulator wrote it.
pub(super) async fn opening(sim: &mut Simulator) -> Result<(String, bool), ErrorInfo> {
    match sim.next().await? {
        Next::Say { text, simulated } => Ok((text, simulated)),
        Next::End { reason, .. } => Err(ErrorInfo {
            kind: ErrorKind::Simulator,
            message: format!(
                "the simulated user ended the conversation ({}) before it said anything",
                reason.name()
            ),
        }),
    }
}

/// After the agent answered `answer`: what the user does next. `conversation` gathers
/// the whole conversation for the checks.
pub(super) async fn after(
    sim: &mut Simulator,
    answer: &str,
    conversation: &mut Vec<Said>,
) -> Result<Next, ErrorInfo> {
    sim.heard(answer);
    let next = sim.next().await;
    *conversation = sim.conversation();
    next
}
