//! The tools of a tool loop, as a spec configures them: `framework_config.tool_results`
//! first, then the `tool_command` program for every tool those do not name.
//!
//! - A fixed value answers every call.
//! - A list answers its calls in order; one call more than it holds is an error that
//!   says how many there were.
//! - A `by_args` table answers with its first row whose every `args` key equals the
//!   call's argument of that name (so a row `{}` matches every call), else its
//!   `default`, else the call is an error that shows the arguments.
//! - `{error: "..."}` answers every call with a tool error, which the model is told.
//! - A tool that nothing answers is an error naming it and its arguments.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use prill_spec::model::framework::{ToolReply, ToolResults, describe};
use prill_target::tools::{ToolAnswer, ToolCallRequest, ToolSession};
use prill_target::{BoxFuture, ConnectError};
use serde_json::Value;

/// The tools of one sample: results from the spec, then a program's session.
pub struct SpecTools {
    results: BTreeMap<String, ToolResults>,
    calls: HashMap<String, usize>,
    command: Option<Box<dyn ToolSession>>,
}

impl SpecTools {
    /// Tools answered by `results`, then by `command` (a started program's session).
    pub fn new(
        results: BTreeMap<String, ToolResults>,
        command: Option<Box<dyn ToolSession>>,
    ) -> SpecTools {
        SpecTools {
            results,
            calls: HashMap::new(),
            command,
        }
    }

    /// The answer `tool_results` gives, if it names the tool.
    fn answer_from_results(
        &mut self,
        call: &ToolCallRequest,
    ) -> Option<Result<ToolAnswer, ConnectError>> {
        let results = self.results.get(&call.name)?;
        let count = self.calls.entry(call.name.clone()).or_default();
        *count += 1;
        let n = *count;
        Some(match results {
            ToolResults::Fixed(value) => Ok(ToolAnswer::ok(value.clone())),
            ToolResults::Error(message) => Ok(ToolAnswer::error(message.clone())),
            ToolResults::InOrder(values) => match values.get(n - 1) {
                Some(value) => Ok(ToolAnswer::ok(value.clone())),
                None => Err(ConnectError::config(format!(
                    "the model called `{}` a {} time, with {}, and `framework_config.tool_results.{}` has only {} result{}: add more, or give one value for every call",
                    call.name,
                    ordinal(n),
                    describe(&call.arguments),
                    call.name,
                    values.len(),
                    if values.len() == 1 { "" } else { "s" },
                ))),
            },
            ToolResults::ByArgs { rows, default } => {
                let row = rows.iter().find(|row| {
                    row.args
                        .iter()
                        .all(|(key, want)| call.arguments.get(key) == Some(want))
                });
                match row.map(|r| &r.reply).or(default.as_deref()) {
                    Some(reply) => Ok(answer(reply)),
                    None => Err(ConnectError::config(format!(
                        "the model called `{}` with {}, which no row of `framework_config.tool_results.{}.by_args` matches: add a row for these arguments, or a `default`",
                        call.name,
                        describe(&call.arguments),
                        call.name,
                    ))),
                }
            }
        })
    }
}

fn answer(reply: &ToolReply) -> ToolAnswer {
    match reply {
        ToolReply::Value(value) => ToolAnswer::ok(value.clone()),
        ToolReply::Error(message) => ToolAnswer::error(message.clone()),
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl ToolSession for SpecTools {
    fn call<'a>(
        &'a mut self,
        call: &'a ToolCallRequest,
        limit: Option<Duration>,
    ) -> BoxFuture<'a, Result<ToolAnswer, ConnectError>> {
        Box::pin(async move {
            if let Some(answer) = self.answer_from_results(call) {
                return answer;
            }
            match &mut self.command {
                Some(session) => session.call(call, limit).await,
                None => Err(ConnectError::config(format!(
                    "the model called `{}` with {}, and no result is configured for it: add `framework_config.tool_results.{}`, or a `tool_command` that answers it",
                    call.name,
                    describe(&call.arguments),
                    call.name
                ))),
            }
        })
    }
}

/// A call's arguments as the loop hands them to tools: the model's JSON, or `{}` for
/// none.
pub fn arguments(value: &Value) -> Value {
    match value {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use prill_spec::model::framework::FrameworkConfig;
    use prill_spec::model::sentinel::Framework;
    use serde_json::json;

    use super::*;

    fn tools(results: Value) -> SpecTools {
        let config = json!({ "tool_results": results });
        let Ok(FrameworkConfig::Loop(c)) =
            FrameworkConfig::parse(Framework::OpenaiSdk, config.as_object())
        else {
            panic!("valid")
        };
        SpecTools::new(c.tool_results, None)
    }

    fn call(name: &str, arguments: Value) -> ToolCallRequest {
        ToolCallRequest {
            name: name.into(),
            arguments,
            call_id: None,
            turn: 1,
        }
    }

    async fn ask(
        tools: &mut SpecTools,
        name: &str,
        arguments: Value,
    ) -> Result<ToolAnswer, String> {
        tools
            .call(&call(name, arguments), None)
            .await
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn each_form_answers_as_documented() {
        let mut t = tools(json!({
            "fixed": {"a": 1},
            "seq": [1, 2],
            "broken": {"error": "disk full"},
            "table": {"by_args": [{"args": {"city": "Paris"}, "result": 20}, {"args": {"city": "Oslo"}, "error": "no data"}]},
            "table_default": {"by_args": [{"args": {"x": 1}, "result": "one"}], "default": "other"}
        }));
        assert_eq!(
            ask(&mut t, "fixed", json!({})).await,
            Ok(ToolAnswer::ok(json!({"a": 1})))
        );
        assert_eq!(
            ask(&mut t, "fixed", json!({})).await,
            Ok(ToolAnswer::ok(json!({"a": 1})))
        );
        assert_eq!(
            ask(&mut t, "seq", json!({})).await,
            Ok(ToolAnswer::ok(json!(1)))
        );
        assert_eq!(
            ask(&mut t, "seq", json!({})).await,
            Ok(ToolAnswer::ok(json!(2)))
        );
        let past = ask(&mut t, "seq", json!({"q": "x"})).await.unwrap_err();
        assert!(
            past.contains("called `seq` a 3rd time, with {\"q\":\"x\"}"),
            "{past}"
        );
        assert!(past.contains("has only 2 results"), "{past}");
        assert_eq!(
            ask(&mut t, "broken", json!({})).await,
            Ok(ToolAnswer::error("disk full"))
        );
        assert_eq!(
            ask(&mut t, "table", json!({"city": "Paris", "units": "C"})).await,
            Ok(ToolAnswer::ok(json!(20)))
        );
        assert_eq!(
            ask(&mut t, "table", json!({"city": "Oslo"})).await,
            Ok(ToolAnswer::error("no data"))
        );
        let none = ask(&mut t, "table", json!({"city": "Rome"}))
            .await
            .unwrap_err();
        assert!(
            none.contains("no row of `framework_config.tool_results.table.by_args` matches"),
            "{none}"
        );
        assert!(none.contains("{\"city\":\"Rome\"}"), "{none}");
        assert_eq!(
            ask(&mut t, "table_default", json!({"x": 2})).await,
            Ok(ToolAnswer::ok(json!("other")))
        );
    }

    #[tokio::test]
    async fn an_unconfigured_tool_is_an_error_naming_it_and_its_arguments() {
        let mut t = tools(json!({}));
        let message = ask(&mut t, "delete_user", json!({"id": 7}))
            .await
            .unwrap_err();
        assert!(
            message.contains(
                "the model called `delete_user` with {\"id\":7}, and no result is configured for it"
            ),
            "{message}"
        );
    }

    #[test]
    fn ordinals_read_as_english() {
        let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).into();
        assert_eq!(
            words,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }
}
