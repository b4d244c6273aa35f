//! The simulated user (a case's `user`, `docs/conversations.md`): a model with a brief
//! that writes the user's next message, and the contract it is held to.
//!
//! - **Stopping is a tool call.** The simulator is offered one tool, `end_conversation`
//!   (`reason`: `done`, `gave_up` or `agent_failed`), and ends the conversation only by
//!   calling it. A reply that both talks and calls it ends the conversation: its text
//!   is kept in the transcript as the user's last words and is not sent, since the agent
//!   would answer a conversation that is over.
//! - **Its faults are its own.** A reply with no text and no call, a call of another
//!   tool or with another reason, `max_turns` turns without `end_conversation`, a model
//!   that cannot be reached, and a turn the judge finds outside the brief: each ends the
//!   sample as an *error* of kind `simulator`, never as the agent's failure.
//! - **Every simulated turn is checked** against the brief by the judge before it is
//!   sent (unless `check_turns: false`): no fact beyond `facts`, no goal but `goal`.
//!
//! The simulator sees the conversation from the user's side: the agent's messages as
//! the other party's, its own as its own. It never sees the agent's tool calls.
//!
//! The engine runs it for the `user` of a spec. A Rust suite ([`crate::run_test_suite`])
//! drives its own agent with it:
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use prill_run::simulator::{Next, Simulator};
//! use prill_spec::model::user::SimulatedUser;
//! use prill_target::model::Provider;
//!
//! # async fn my_agent(_: &str) -> String { String::new() }
//! async fn talk(model: Arc<dyn Provider>) -> Result<Vec<prill_check::Said>, String> {
//!     let mut brief = SimulatedUser::new("Cancel order #W1", "gpt-4o-mini");
//!     brief.check_turns = false; // no judge here
//!     let mut user = Simulator::new(brief, model, None, None, Duration::from_secs(60));
//!     let mut next = user.next().await.map_err(|e| e.message)?;
//!     while let Next::Say { text, .. } = next {
//!         let answer = my_agent(&text).await;
//!         user.heard(&answer);
//!         next = user.next().await.map_err(|e| e.message)?;
//!     }
//!     Ok(user.conversation())
//! }
//! ```

use std::sync::Arc;
use std::time::Duration;

use prill_check::Judge;
use prill_spec::model::user::{END_CONVERSATION, SimulatedUser, StopReason};
use prill_target::model::{ChatMessage, ModelRequest, ModelResponse, Provider, Sampling, ToolDef};
use prill_target::{ConnectError, ErrorKind};
use serde_json::{Value, json};

use crate::events::ErrorInfo;

/// What the user does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Says this (`simulated`: written by the simulator, else scripted).
    Say {
        /// The message.
        text: String,
        /// Whether the simulator wrote it.
        simulated: bool,
    },
    /// Ends the conversation.
    End {
        /// Why.
        reason: StopReason,
        /// What it said as it ended, not sent.
        said: Option<String>,
    },
}

/// One simulated user for one sample: its brief, its model, the judge that checks it,
/// the scripted turns still to say, and the conversation so far from its side.
pub struct Simulator {
    user: SimulatedUser,
    provider: Arc<dyn Provider>,
    judge: Option<Arc<dyn Judge>>,
    scripted: std::collections::VecDeque<String>,
    /// The conversation: `(true, text)` for the user's turns, `(false, text)` for the
    /// agent's.
    said: Vec<(bool, String)>,
    /// The user's turns so far (scripted ones included).
    turns: u32,
    limit: Duration,
}

impl Simulator {
    /// The simulator of `user`, over `provider`, checked by `judge`; `opening` is the
    /// test's own first message, when it has one (it counts as the first turn).
    pub fn new(
        user: SimulatedUser,
        provider: Arc<dyn Provider>,
        judge: Option<Arc<dyn Judge>>,
        opening: Option<&str>,
        limit: Duration,
    ) -> Simulator {
        let mut said = Vec::new();
        let mut turns = 0;
        if let Some(text) = opening {
            said.push((true, text.to_owned()));
            turns = 1;
        }
        Simulator {
            scripted: user.first_turns.iter().cloned().collect(),
            user,
            provider,
            judge,
            said,
            turns,
            limit,
        }
    }

    /// Records a scripted message of the user's, already sent (it counts as a turn).
    pub fn scripted(&mut self, text: String) {
        self.said.push((true, text));
        self.turns += 1;
    }

    /// Records what the agent answered.
    pub fn heard(&mut self, answer: &str) {
        self.said.push((false, answer.to_owned()));
    }

    /// The conversation so far, as the checks see it.
    pub fn conversation(&self) -> Vec<prill_check::Said> {
        self.said
            .iter()
            .map(|(user, text)| prill_check::Said {
                by: if *user { "user" } else { "agent" }.to_owned(),
                text: text.clone(),
            })
            .collect()
    }

    /// The user's next move: a scripted turn while any is left, else the simulator's,
    /// checked against the brief.
    pub async fn next(&mut self) -> Result<Next, ErrorInfo> {
        if let Some(text) = self.scripted.pop_front() {
            return Ok(self.say(text, false));
        }
        if self.turns >= self.user.max_turns {
            return Err(fault(format!(
                "the simulated user did not call `{END_CONVERSATION}` within max_turns ({}): a simulated user must end the conversation itself (done, gave_up or agent_failed); raise `user.max_turns` if the task needs more turns",
                self.user.max_turns
            )));
        }
        let response = self
            .provider
            .complete(&self.request())
            .await
            .map_err(|e| model_failed(&self.user.model, &e))?;
        let next = read(&response)?;
        if let Next::Say { text, .. } = &next {
            self.check(text).await?;
            return Ok(self.say(text.clone(), true));
        }
        Ok(next)
    }

    fn say(&mut self, text: String, simulated: bool) -> Next {
        self.said.push((true, text.clone()));
        self.turns += 1;
        Next::Say { text, simulated }
    }

    /// The simulator's request: the brief as its instructions, the conversation from
    /// the user's side, and the one tool that ends it.
    fn request(&self) -> ModelRequest {
        let mut messages: Vec<ChatMessage> = self
            .said
            .iter()
            .map(|(user, text)| {
                if *user {
                    ChatMessage::assistant(text.clone())
                } else {
                    ChatMessage::User(text.clone())
                }
            })
            .collect();
        if self.said.first().is_none_or(|(user, _)| *user) {
            // Every provider wants the other party to speak first.
            messages.insert(
                0,
                ChatMessage::User("(The agent is waiting for your message.)".to_owned()),
            );
        }
        ModelRequest {
            model: self.user.model.clone(),
            system: Some(brief(&self.user)),
            messages,
            tools: vec![end_conversation()],
            sampling: Sampling {
                temperature: Some(0.0),
                ..Sampling::default()
            },
            timeout: Some(self.limit),
            response_format: None,
        }
    }

    /// Asks the judge whether `text` keeps to the brief; a turn that does not is the
    /// simulator's fault.
    async fn check(&self, text: &str) -> Result<(), ErrorInfo> {
        if !self.user.check_turns {
            return Ok(());
        }
        let Some(judge) = &self.judge else {
            return Err(ErrorInfo {
                kind: ErrorKind::Config,
                message: "the simulated user's turns are checked by the judge, and this run has none: configure `[judge]` in prill.toml, or set `user.check_turns: false`".to_owned(),
            });
        };
        let sample = turn_sample(&self.user, &self.said, text);
        let verdict = judge
            .judge(TURN_CRITERIA, &sample)
            .await
            .map_err(|e| ErrorInfo {
                kind: ErrorKind::Simulator,
                message: format!("the judge could not check the simulated user's turn: {e}"),
            })?;
        if verdict.pass {
            Ok(())
        } else {
            Err(fault(format!(
                "the simulated user broke its brief (a simulator fault, not the agent's): {}; its message: {}",
                verdict.reason,
                prill_check::text::cut(text, 200)
            )))
        }
    }
}

/// What the judge checks of each simulated turn.
pub const TURN_CRITERIA: &str = "The simulated user's latest message keeps to its brief: every fact it states about itself (names, ids, numbers, addresses, dates, preferences) is among its facts, or was said earlier in the conversation by the user, or it says it does not know; it pursues its goal and no other request; and it speaks only as the user, never as the agent.";

/// The text the judge reads for one turn: the brief, the conversation, the message.
fn turn_sample(user: &SimulatedUser, said: &[(bool, String)], text: &str) -> String {
    let mut out = format!("The user's goal: {}\n", user.goal);
    let facts = user.fact_lines();
    if facts.is_empty() {
        out.push_str("The user's facts: none\n");
    } else {
        out.push_str("The user's facts:\n");
        for fact in facts {
            out.push_str(&format!("- {fact}\n"));
        }
    }
    out.push_str("\nThe conversation before the message:\n");
    for (user, line) in said {
        let who = if *user { "user" } else { "agent" };
        out.push_str(&format!("{who}: {line}\n"));
    }
    out.push_str(&format!("\nThe user's latest message: {text}\n"));
    out
}

/// The simulator's instructions.
pub fn brief(user: &SimulatedUser) -> String {
    let mut out = String::from(
        "You are playing a user who talks to an AI agent, so that the agent can be tested. \
         Write only the user's next message, as that user would write it: short, in the first person. \
         Never write the agent's part.\n\n",
    );
    out.push_str(&format!("Your goal (pursue it; do not state it as a goal, and do not help the agent beyond what a user would): {}\n", user.goal));
    if let Some(persona) = &user.persona {
        out.push_str(&format!("Who you are: {persona}\n"));
    }
    let facts = user.fact_lines();
    if facts.is_empty() {
        out.push_str(
            "Facts you may give: none. If the agent asks for anything, say you do not know it.\n",
        );
    } else {
        out.push_str("Facts you may give when the agent asks, and no others (if asked for anything else, say you do not know it):\n");
        for fact in facts {
            out.push_str(&format!("- {fact}\n"));
        }
    }
    out.push_str(&format!(
        "\nWhen your goal is met, call {END_CONVERSATION} with reason \"done\". When the agent cannot get you there, call it with \"gave_up\"; when the agent refuses, breaks, or does something you did not ask, with \"agent_failed\". Call it instead of writing a goodbye; never end the conversation any other way."
    ));
    out
}

/// The one tool the simulator has.
fn end_conversation() -> ToolDef {
    ToolDef {
        name: END_CONVERSATION.to_owned(),
        description: Some("End the conversation, saying why.".to_owned()),
        parameters: json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "enum": StopReason::NAMES}
            },
            "required": ["reason"],
            "additionalProperties": false
        }),
    }
}

/// The user's move a simulator reply holds, or how it broke the contract.
fn read(response: &ModelResponse) -> Result<Next, ErrorInfo> {
    let text = response.text.trim();
    match response.tool_calls.as_slice() {
        [] if text.is_empty() => Err(fault(format!(
            "the simulated user's model answered with no message and no `{END_CONVERSATION}` call"
        ))),
        [] => Ok(Next::Say {
            text: text.to_owned(),
            simulated: true,
        }),
        [call] if call.name == END_CONVERSATION => {
            let arguments = match &call.arguments {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let reason = arguments
                .get("reason")
                .and_then(Value::as_str)
                .and_then(StopReason::from_name)
                .ok_or_else(|| {
                    fault(format!(
                        "the simulated user called `{END_CONVERSATION}` with {arguments}, not a reason of {}",
                        StopReason::NAMES.join(", ")
                    ))
                })?;
            Ok(Next::End {
                reason,
                said: (!text.is_empty()).then(|| text.to_owned()),
            })
        }
        calls => Err(fault(format!(
            "the simulated user called {}; it has one tool, `{END_CONVERSATION}`, called once",
            calls
                .iter()
                .map(|c| format!("`{}`", c.name))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A fault of the simulator's.
fn fault(message: String) -> ErrorInfo {
    ErrorInfo {
        kind: ErrorKind::Simulator,
        message,
    }
}

/// The simulator's model failed: the simulator's error, with the provider's words.
fn model_failed(model: &str, e: &ConnectError) -> ErrorInfo {
    fault(format!("the simulated user's model `{model}` failed: {e}"))
}

#[cfg(test)]
mod tests {
    use prill_target::model::ModelToolCall;

    use super::*;

    fn reply(text: &str, calls: &[(&str, Value)]) -> ModelResponse {
        ModelResponse {
            text: text.to_owned(),
            tool_calls: calls
                .iter()
                .map(|(name, arguments)| ModelToolCall {
                    id: None,
                    name: (*name).to_owned(),
                    arguments: arguments.clone(),
                })
                .collect(),
            ..ModelResponse::default()
        }
    }

    #[test]
    fn a_reply_is_a_message_an_end_or_a_fault() {
        assert_eq!(
            read(&reply(" Hi there ", &[])).unwrap(),
            Next::Say {
                text: "Hi there".into(),
                simulated: true
            }
        );
        assert_eq!(
            read(&reply(
                "",
                &[("end_conversation", json!({"reason": "gave_up"}))]
            ))
            .unwrap(),
            Next::End {
                reason: StopReason::GaveUp,
                said: None
            }
        );
        assert_eq!(
            read(&reply(
                "Thanks, bye!",
                &[("end_conversation", json!("{\"reason\":\"done\"}"))]
            ))
            .unwrap(),
            Next::End {
                reason: StopReason::Done,
                said: Some("Thanks, bye!".into())
            },
            "talking and stopping ends, keeping the words"
        );
        for bad in [
            reply("  ", &[]),
            reply("", &[("end_conversation", json!({"reason": "bored"}))]),
            reply("", &[("search", json!({}))]),
            reply(
                "",
                &[
                    ("end_conversation", json!({"reason": "done"})),
                    ("end_conversation", json!({"reason": "done"})),
                ],
            ),
        ] {
            let e = read(&bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Simulator, "{}", e.message);
        }
    }

    #[test]
    fn the_brief_names_the_goal_the_facts_and_how_to_stop() {
        let mut user = SimulatedUser::new("Cancel order #W1", "m");
        user.facts = json!({"email": "mia@example.com"});
        user.persona = Some("Mia, terse".into());
        let text = brief(&user);
        assert!(text.contains("Cancel order #W1"), "{text}");
        assert!(text.contains("- email: mia@example.com"), "{text}");
        assert!(text.contains("Who you are: Mia, terse"), "{text}");
        assert!(text.contains("call end_conversation"), "{text}");
    }
}
