//! The tools of a tool loop, as a spec configures them: `framework_config.tool_results`
//! first, then the `tool_command` program for every tool those do not name.
//!
//! - A fixed value answers every call.
//! - A list (or `sequence`) answers its calls in order, each item a value or
//!   `{error: "..."}`; one call more than it holds is an error that says how many
//!   there were.
//! - A `by_args` table answers with its first row whose every `args` key matches the
//!   call's argument of that name (`"*"` any value of a present argument; so a row `{}`
//!   matches every call), else its `default`, else the call is an error that shows the
//!   arguments. A row with a `sequence` answers the calls it matches in order.
//! - `{error: "..."}` answers every call with a tool error, which the model is told.
//! - `delay_in_seconds` on an answer is waited before it is given, within the call's
//!   limit: a delay past the limit is a timeout at the limit.
//! - A tool that nothing answers is an error naming it and its arguments.
//!
//! Only the program keeps state: [`SpecTools`] asks it for `expect_state`.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use prill_spec::model::framework::{Answers, Reply, ToolReply, ToolResults, args_match, describe};
use prill_target::tools::{ToolAnswer, ToolCallRequest, ToolSession};
use prill_target::{BoxFuture, ConnectError};
use serde_json::Value;

/// The tools of one sample: results from the spec, then a program's session.
pub struct SpecTools {
    results: BTreeMap<String, ToolResults>,
    /// Calls so far, by tool, and by tool and `by_args` row.
    calls: HashMap<(String, Option<usize>), usize>,
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

    /// Counts a call of `tool` (of its row `row`), from 1.
    fn count(&mut self, tool: &str, row: Option<usize>) -> usize {
        let count = self.calls.entry((tool.to_owned(), row)).or_default();
        *count += 1;
        *count
    }

    /// The reply `tool_results` gives, if it names the tool.
    fn reply_from_results(
        &mut self,
        call: &ToolCallRequest,
    ) -> Option<Result<ToolReply, ConnectError>> {
        let answers = self.results.get(&call.name)?.answers.clone();
        let n = self.count(&call.name, None);
        let name = &call.name;
        Some(match answers {
            Answers::Always(reply) => Ok(reply),
            Answers::InOrder(replies) => nth(&replies, n).ok_or_else(|| {
                ConnectError::config(format!(
                    "the model called `{name}` a {} time, with {}, and `framework_config.tool_results.{name}` has only {} answer{}: add more, or give one value for every call",
                    ordinal(n),
                    describe(&call.arguments),
                    replies.len(),
                    if replies.len() == 1 { "" } else { "s" },
                ))
            }),
            Answers::ByArgs { rows, default } => {
                let found = rows
                    .iter()
                    .position(|row| args_match(&row.args, &call.arguments));
                match (found, default) {
                    (Some(i), _) => {
                        let k = self.count(name, Some(i));
                        nth(&rows[i].replies, k).ok_or_else(|| {
                            ConnectError::config(format!(
                                "the model called `{name}` with {} a {} time, and row {} of `framework_config.tool_results.{name}.by_args` has only {} answer{}: add more to its `sequence`",
                                describe(&call.arguments),
                                ordinal(k),
                                i + 1,
                                rows[i].replies.len(),
                                if rows[i].replies.len() == 1 { "" } else { "s" },
                            ))
                        })
                    }
                    (None, Some(reply)) => Ok(*reply),
                    (None, None) => Err(ConnectError::config(format!(
                        "the model called `{name}` with {}, which no row of `framework_config.tool_results.{name}.by_args` matches: add a row for these arguments, or a `default`",
                        describe(&call.arguments),
                    ))),
                }
            }
        })
    }
}

/// The `n`th (from 1) of `replies`: a row of one answer gives it every time.
fn nth(replies: &[ToolReply], n: usize) -> Option<ToolReply> {
    match replies {
        [one] => Some(one.clone()),
        many => many.get(n - 1).cloned(),
    }
}

/// A reply, after its delay, within the call's `limit`: a delay past it is a timeout.
async fn answer(
    name: &str,
    reply: ToolReply,
    limit: Option<Duration>,
) -> Result<ToolAnswer, ConnectError> {
    if let Some(delay) = reply.delay {
        if let Some(limit) = limit.filter(|limit| *limit < delay) {
            tokio::time::sleep(limit).await;
            return Err(ConnectError::Timeout {
                peer: format!(
                    "the mock of `{name}`, which `framework_config.tool_results` delays {:.3} s",
                    delay.as_secs_f64()
                ),
                limit,
            });
        }
        tokio::time::sleep(delay).await;
    }
    Ok(match reply.outcome {
        Reply::Value(value) => ToolAnswer::ok(value),
        Reply::Error(message) => ToolAnswer::error(message),
    })
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
            if let Some(reply) = self.reply_from_results(call) {
                return answer(&call.name, reply?, limit).await;
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

    fn state(&mut self, limit: Option<Duration>) -> BoxFuture<'_, Result<Value, ConnectError>> {
        Box::pin(async move {
            match &mut self.command {
                Some(session) => session.state(limit).await,
                None => Err(ConnectError::config(
                    "`expect_state` needs a `framework_config.tool_command` program to give the end state",
                )),
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
        assert!(past.contains("has only 2 answers"), "{past}");
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

    #[tokio::test(start_paused = true)]
    async fn sequences_wildcards_and_delays_answer_as_documented() {
        let mut t = tools(json!({
            "flaky": [{"error": "timeout"}, {"hits": 1}],
            "rows": {"by_args": [
                {"args": {"id": "*", "mode": "strict"}, "sequence": [{"error": "busy"}, "ok"]},
                {"args": {"id": "*"}, "result": "any id"}
            ]},
            "slow": {"value": "late", "delay_in_seconds": 5}
        }));
        assert_eq!(
            ask(&mut t, "flaky", json!({})).await,
            Ok(ToolAnswer::error("timeout"))
        );
        assert_eq!(
            ask(&mut t, "flaky", json!({})).await,
            Ok(ToolAnswer::ok(json!({"hits": 1})))
        );
        let strict = json!({"id": 3, "mode": "strict"});
        assert_eq!(
            ask(&mut t, "rows", strict.clone()).await,
            Ok(ToolAnswer::error("busy"))
        );
        assert_eq!(
            ask(&mut t, "rows", json!({"id": null})).await,
            Ok(ToolAnswer::ok(json!("any id"))),
            "`*` matches any value, null included, and a row's count is its own"
        );
        assert_eq!(
            ask(&mut t, "rows", strict.clone()).await,
            Ok(ToolAnswer::ok(json!("ok")))
        );
        let past = ask(&mut t, "rows", strict).await.unwrap_err();
        assert!(past.contains("a 3rd time, and row 1 of `framework_config.tool_results.rows.by_args` has only 2 answers"), "{past}");
        let missing = ask(&mut t, "rows", json!({"mode": "strict"}))
            .await
            .unwrap_err();
        assert!(
            missing.contains("which no row"),
            "`*` needs the argument: {missing}"
        );

        let started = tokio::time::Instant::now();
        let slow = t
            .call(&call("slow", json!({})), Some(Duration::from_secs(10)))
            .await;
        assert_eq!(
            slow.map_err(|e| e.to_string()),
            Ok(ToolAnswer::ok(json!("late")))
        );
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(5),
            "the delay is waited"
        );
        let started = tokio::time::Instant::now();
        let timed_out = t
            .call(&call("slow", json!({})), Some(Duration::from_secs(2)))
            .await;
        let Err(ConnectError::Timeout { peer, limit }) = timed_out else {
            panic!("{timed_out:?}")
        };
        assert_eq!(limit, Duration::from_secs(2));
        assert_eq!(
            started.elapsed(),
            limit,
            "a delay past the limit times out at the limit"
        );
        assert!(peer.contains("the mock of `slow`"), "{peer}");
    }

    #[tokio::test]
    async fn mocks_alone_keep_no_state() {
        let mut t = tools(json!({"search": []}));
        let error = t.state(None).await.unwrap_err().to_string();
        assert!(
            error.contains("needs a `framework_config.tool_command` program"),
            "{error}"
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
