//! The model behind the real server's agent networks: the project's fake OpenAI server
//! (Chat Completions) answers by these rules, so every answer is known in advance.
//!
//! Each network's instructions start with `ROLE <name>`, which says whose request it is;
//! neuro-san's own `hello_world`, `math_guy` and `music_nerd` networks (which the
//! benchmark runs) are told by their own instructions.
//! A request whose last user message is a judging prompt, in neuro-san's gist words or
//! in Prill's, is judged whoever sends it: the criteria name one word in single quotes,
//! and the sample passes when it holds that word.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use prill_testkit::providers::Reply;
use serde_json::{Value, json};

/// How long the model takes to answer "Take your time." (longer than that case allows).
pub(crate) const SLOW: Duration = Duration::from_secs(6);

/// The responder for [`prill_testkit::providers::openai::FakeOpenAi::respond_with`].
pub(crate) fn responder() -> impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static {
    let coin = Arc::new(AtomicUsize::new(0));
    move |body: &Value| Some(answer(body, &coin))
}

/// The text of a message's content: a string, or its text parts.
fn content(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn answer(body: &Value, coin: &AtomicUsize) -> Reply {
    let messages: &[Value] = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let role_of = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let system: String = messages
        .iter()
        .filter(|m| matches!(role_of(m).as_str(), "system" | "developer"))
        .map(content)
        .collect();
    let last_user = messages
        .iter()
        .rev()
        .find(|m| role_of(m) == "user")
        .map(content)
        .unwrap_or_default();
    let tool_result = messages
        .last()
        .filter(|m| role_of(m) == "tool")
        .map(content);
    if let Some(verdict) = judge(&last_user) {
        // Prill's own judge asks for a structured verdict; neuro-san's for a word.
        if body.get("response_format").is_some() {
            return Reply::text(json!({"verdict": verdict, "reason": "scripted"}).to_string());
        }
        return Reply::text(verdict);
    }
    if system.contains("ROLE calculator") {
        // The tool says `added: the sum is 5`; the front man parses the JSON block into
        // its structure.
        return match tool_result {
            Some(result) => {
                let sum: Value = result
                    .rsplit(' ')
                    .next()
                    .and_then(|n| serde_json::from_str(n).ok())
                    .unwrap_or(Value::Null);
                let block = json!({ "sum": sum });
                Reply::text(format!("The sum is ready: {result}\n```json\n{block}\n```"))
            }
            None => Reply::tool_call("adder", json!({"operation": "add"})),
        };
    }
    if system.contains("ROLE relay") {
        let tool = body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap_or("calculator")
            .to_owned();
        return match tool_result {
            Some(result) => Reply::text(format!("Relayed: {result}")),
            None => Reply::tool_call(tool, json!({"inquiry": last_user})),
        };
    }
    if let Some(reply) = neuro_san_network(body, &system, &last_user, tool_result.as_deref()) {
        return reply;
    }
    if system.contains("ROLE trivia") || system.contains("Music Nerd") {
        let history: String = messages[..messages.len().saturating_sub(1)]
            .iter()
            .map(content)
            .collect();
        return trivia(&last_user, &history, coin);
    }
    Reply::text("This request was not scripted.")
}

/// The answers of neuro-san's own `hello_world` (an announcer that calls a
/// synonymizer) and `math_guy` (a front man that calls a coded calculator) networks.
fn neuro_san_network(
    body: &Value,
    system: &str,
    last_user: &str,
    tool_result: Option<&str>,
) -> Option<Reply> {
    let first_tool = || {
        body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap_or("missing")
            .to_owned()
    };
    if system.contains("author of terse announcements") {
        return Some(match tool_result {
            Some(result) => Reply::text(result),
            None => Reply::tool_call(
                first_tool(),
                json!({"name": "greeting", "input_string": "Hello world"}),
            ),
        });
    }
    if system.contains("You are a thesaurus") {
        return Some(Reply::text("Hello world"));
    }
    if system.contains("interface for a calculator tool") {
        return Some(match tool_result {
            Some(result) => Reply::text(result),
            None => Reply::tool_call(first_tool(), json!({"operator": last_user.trim()})),
        });
    }
    None
}

fn trivia(question: &str, history: &str, coin: &AtomicUsize) -> Reply {
    if question.contains("Yellow Submarine") && question.contains("json") {
        let facts = json!({
            "artist": "The Beatles",
            "year": 1966,
            "tags": ["psychedelic", "children's song"],
            "certified": true
        });
        return Reply::text(format!("Here are the facts.\n```json\n{facts}\n```"));
    }
    if question.contains("Yellow Submarine") {
        return Reply::text("The Beatles recorded Yellow Submarine.");
    }
    if question.contains("Where were they from") {
        return Reply::text(if history.contains("Beatles") {
            "They were from Liverpool."
        } else {
            "Who do you mean?"
        });
    }
    if question.contains("Flip a coin") {
        let n = coin.fetch_add(1, Ordering::SeqCst);
        return Reply::text(if n.is_multiple_of(2) {
            "heads"
        } else {
            "tails"
        });
    }
    if question.contains("Take your time") {
        return Reply::text("Done waiting.").delay(SLOW);
    }
    Reply::text("I only know about Yellow Submarine.")
}

/// `pass` or `fail` when `prompt` asks to judge a sample against criteria.
fn judge(prompt: &str) -> Option<&'static str> {
    let (criteria, sample) = split_after(prompt, "acceptance_criteria is:", "text_sample is:")
        .or_else(|| split_after(prompt, "CRITERIA:", "SAMPLE:"))?;
    let word = criteria.split('\'').nth(1)?;
    Some(
        if !word.is_empty() && sample.to_lowercase().contains(&word.to_lowercase()) {
            "pass"
        } else {
            "fail"
        },
    )
}

/// The text between `first` and `second`, and the text after `second`.
fn split_after<'t>(text: &'t str, first: &str, second: &str) -> Option<(&'t str, &'t str)> {
    let (_, rest) = text.split_once(first)?;
    rest.split_once(second)
}

/// Checks the judging rule on both prompts (a trial of its own, run everywhere).
pub(crate) fn reads_both_judging_prompts() -> Result<(), String> {
    let neuro_san = "\nThe acceptance_criteria is:\n\"names 'Beatles'\".\n\nThe text_sample is:\n\"The Beatles did it\".\n";
    let prill =
        "Grade...\n\nCRITERIA:\n<<<\nnames 'Kinks'\n>>>\n\nSAMPLE:\n<<<\nThe Beatles\n>>>\n";
    let seen = (
        judge(neuro_san),
        judge(prill),
        judge("Who recorded Yellow Submarine?"),
    );
    if seen == (Some("pass"), Some("fail"), None) {
        Ok(())
    } else {
        Err(format!("judged {seen:?}"))
    }
}
