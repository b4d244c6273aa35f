//! The end state of a tool loop's tools, for `expect_state`: asked of the sample's own
//! tools once the conversation is over, and, for each distinct `replay` list of
//! reference calls, of fresh tools that were given those calls in order (τ-bench's
//! rule for its database: the reference actions replayed on a fresh environment).
//!
//! Nothing is asked when no check reads it. A program that cannot give its state
//! errors the sample; reference calls that fail (a call answered with an error, a
//! program that broke) make only the check that names them error, with the call.

use std::time::Duration;

use prill_check::{EndState, Replayed};
use prill_spec::model::framework::describe;
use prill_spec::model::sentinel::Assertion;
use prill_spec::model::state::ReplayCall;
use prill_spec::plan::{Check, CheckKind};
use prill_target::ConnectError;
use prill_target::model::ToolOutput;
use prill_target::tools::{ToolCallRequest, ToolSession};
use serde_json::Value;

/// The distinct `replay` lists of the checks, in order; `None` when no check reads the
/// end state.
pub(super) fn wanted(checks: &[Check]) -> Option<Vec<&[ReplayCall]>> {
    let mut any = false;
    let mut lists: Vec<&[ReplayCall]> = Vec::new();
    for check in checks {
        if let CheckKind::Assertion(Assertion::ExpectState(expect)) = &check.kind {
            any = true;
            if let Some(calls) = &expect.replay
                && !lists.contains(&calls.as_slice())
            {
                lists.push(calls);
            }
        }
    }
    any.then_some(lists)
}

/// The sample's end state from its `tools`, and what each of `lists` leaves on the
/// fresh tools `fresh` starts.
pub(super) async fn gather<F>(
    tools: &mut dyn ToolSession,
    lists: &[&[ReplayCall]],
    mut fresh: F,
    limit: Duration,
) -> Result<EndState, ConnectError>
where
    F: FnMut() -> Result<Box<dyn ToolSession>, ConnectError>,
{
    let state = tools.state(Some(limit)).await?;
    let mut replayed = Vec::with_capacity(lists.len());
    for calls in lists {
        let state = match fresh() {
            Ok(mut session) => replay(session.as_mut(), calls, limit).await,
            Err(e) => Err(format!("the tools could not be started: {e}")),
        };
        replayed.push(Replayed {
            calls: calls.to_vec(),
            state,
        });
    }
    Ok(EndState { state, replayed })
}

/// Makes `calls` on `session` in order, then asks its state.
async fn replay(
    session: &mut dyn ToolSession,
    calls: &[ReplayCall],
    limit: Duration,
) -> Result<Value, String> {
    for (i, call) in calls.iter().enumerate() {
        let request = ToolCallRequest {
            name: call.tool.clone(),
            arguments: Value::Object(call.args.clone()),
            call_id: None,
            turn: u32::try_from(i + 1).unwrap_or(u32::MAX),
        };
        let which = || {
            format!(
                "reference call {} (`{}` with {})",
                i + 1,
                call.tool,
                describe(&request.arguments)
            )
        };
        let answer = session
            .call(&request, Some(limit))
            .await
            .map_err(|e| format!("{} failed: {e}", which()))?;
        if answer.is_error {
            let message = match answer.output {
                ToolOutput::Text(text) => text,
                ToolOutput::Json(value) => value.to_string(),
            };
            return Err(format!(
                "{} was answered with an error: {message}; a reference call must succeed on a fresh program",
                which()
            ));
        }
    }
    session
        .state(Some(limit))
        .await
        .map_err(|e| format!("the state after them could not be had: {e}"))
}
