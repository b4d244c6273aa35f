//! `expect_state`: the end state of a test's tools against what the assertion requires
//! (`prill_spec::model::state`), and `expect_calls`: the calls a mocked tool received.
//!
//! A difference is named by its JSON Pointer in the state (`/orders/#W1/status`), with
//! what was expected and found; a failure lists the first five differences.

use prill_spec::model::framework::{ExpectCalls, MockCalls, args_match, json_equal};
use prill_spec::model::state::ExpectState;
use serde_json::{Value, json};

use super::AssertionError;
use crate::evaluation::Evaluation;
use crate::response::{EndState, ToolCall};
use crate::text::cut;

/// What the state assertion looks at.
pub const TARGET: &str = "end_state";

/// How many differences a message lists.
const SHOWN: usize = 5;

/// `expect_state`.
pub(super) fn evaluate(
    expect: &ExpectState,
    end: Option<&EndState>,
) -> Result<(Evaluation, String), AssertionError> {
    let end = end.ok_or(AssertionError::NoEndState)?;
    let mut differences = Vec::new();
    let mut held = Vec::new();
    let without_ignored = |value: &Value| {
        let mut value = value.clone();
        for path in &expect.ignore {
            path.remove_from(&mut value);
        }
        value
    };
    let state = without_ignored(&end.state);
    if let Some(want) = &expect.equals {
        diff(
            "",
            &without_ignored(want),
            &state,
            Mode::Equal,
            &mut differences,
        );
        held.push("equals".to_owned());
    }
    if let Some(want) = &expect.contains {
        diff("", want, &end.state, Mode::Contains, &mut differences);
        held.push("contains".to_owned());
    }
    for (path, want) in &expect.paths {
        let nodes = path.select(&end.state);
        let found = match nodes.as_slice() {
            [] => {
                differences.push(format!("`{}` selects nothing", path.as_str()));
                continue;
            }
            [one] => (*one).clone(),
            many => Value::Array(many.iter().map(|v| (*v).clone()).collect()),
        };
        if !json_equal(want, &found) {
            differences.push(format!(
                "`{}`: expected {}, found {}",
                path.as_str(),
                shown(want),
                shown(&found)
            ));
        }
        held.push(format!("`{}`", path.as_str()));
    }
    if let Some(schema) = &expect.schema {
        if !schema.is_valid(&end.state) {
            differences.push("the state is not valid against `schema`".to_owned());
        }
        held.push("schema".to_owned());
    }
    if let Some(calls) = &expect.replay {
        let replayed = end
            .replayed
            .iter()
            .find(|r| &r.calls == calls)
            .ok_or(AssertionError::NotReplayed)?;
        let reference = replayed
            .state
            .as_ref()
            .map_err(|why| AssertionError::Replay(why.clone()))?;
        diff(
            "",
            &without_ignored(reference),
            &state,
            Mode::Equal,
            &mut differences,
        );
        let s = if calls.len() == 1 { "" } else { "s" };
        held.push(format!("the state {} reference call{s} leave", calls.len()));
    }
    let passed = differences.is_empty();
    let message = if passed {
        format!("the end state holds: {}", held.join(", "))
    } else {
        let count = differences.len();
        let more = count.saturating_sub(SHOWN);
        let mut listed: Vec<String> = differences.into_iter().take(SHOWN).collect();
        if more > 0 {
            listed.push(format!("and {more} more"));
        }
        let s = if count == 1 { "" } else { "s" };
        format!(
            "{count} difference{s} in the end state: {}",
            listed.join("; ")
        )
    };
    Ok((
        Evaluation::pass_fail(passed).with("end_state", cut(&end.state.to_string(), 2000)),
        message,
    ))
}

/// How `diff` compares.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Both sides the same.
    Equal,
    /// The found side holds the expected one.
    Contains,
}

/// Adds to `out` every place under `at` (a JSON Pointer) where `found` is not `want`.
fn diff(at: &str, want: &Value, found: &Value, mode: Mode, out: &mut Vec<String>) {
    match (want, found) {
        (Value::Object(w), Value::Object(f)) => {
            for (key, value) in w {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match f.get(key) {
                    Some(found) => diff(&here, value, found, mode, out),
                    None => out.push(format!("{here}: expected {}, missing", shown(value))),
                }
            }
            if mode == Mode::Equal {
                for (key, value) in f.iter().filter(|(k, _)| !w.contains_key(*k)) {
                    let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                    out.push(format!("{here}: not expected, found {}", shown(value)));
                }
            }
        }
        (Value::Array(w), Value::Array(f)) if mode == Mode::Equal && w.len() == f.len() => {
            for (i, (a, b)) in w.iter().zip(f).enumerate() {
                diff(&format!("{at}/{i}"), a, b, mode, out);
            }
        }
        (Value::Array(w), Value::Array(f)) if mode == Mode::Contains => {
            if !contains_in_order(w, f) {
                out.push(format!(
                    "{}: expected a list holding {}, in order, found {}",
                    place(at),
                    shown(want),
                    shown(found)
                ));
            }
        }
        _ if json_equal(want, found) => {}
        _ => out.push(format!(
            "{}: expected {}, found {}",
            place(at),
            shown(want),
            shown(found)
        )),
    }
}

/// Whether each of `want`'s items is held by an item of `found`, in order.
fn contains_in_order(want: &[Value], found: &[Value]) -> bool {
    let mut rest = found.iter();
    want.iter().all(|w| {
        rest.by_ref().any(|f| {
            let mut none = Vec::new();
            diff("", w, f, Mode::Contains, &mut none);
            none.is_empty()
        })
    })
}

/// A pointer as messages show it: the root is `the state`.
fn place(at: &str) -> &str {
    if at.is_empty() { "the state" } else { at }
}

/// A value in a message: short JSON.
fn shown(value: &Value) -> String {
    cut(&value.to_string(), 120)
}

/// `expect_calls` of a mocked tool, over the calls the trajectory holds for it (every
/// call of a tool `tool_results` names is answered by its mock).
pub(super) fn calls(mock: &MockCalls, all: &[ToolCall]) -> (Evaluation, String) {
    let received: Vec<&ToolCall> = all.iter().filter(|c| c.name == mock.tool).collect();
    let n = received.len();
    let s = if n == 1 { "" } else { "s" };
    let (passed, message) = match &mock.expect {
        ExpectCalls::Count { min, max } => {
            let n32 = u32::try_from(n).unwrap_or(u32::MAX);
            let passed = n32 >= *min && max.is_none_or(|max| n32 <= max);
            let wanted = match max {
                Some(max) if max == min => format!("{min}"),
                Some(max) => format!("{min} to {max}"),
                None => format!("at least {min}"),
            };
            (
                passed,
                format!("`{}` received {n} call{s}, expected {wanted}", mock.tool),
            )
        }
        ExpectCalls::Calls(patterns) => {
            let wrong = patterns
                .iter()
                .zip(&received)
                .position(|(p, c)| !args_match(p, &c.arguments));
            match wrong {
                _ if patterns.len() != n => (
                    false,
                    format!(
                        "`{}` received {n} call{s}, expected {}: {}",
                        mock.tool,
                        patterns.len(),
                        arguments(&received)
                    ),
                ),
                Some(i) => (
                    false,
                    format!(
                        "`{}`'s call {} had arguments {}, expected {}",
                        mock.tool,
                        i + 1,
                        shown(&received[i].arguments),
                        shown(&Value::Object(patterns[i].clone()))
                    ),
                ),
                None => (
                    true,
                    format!("`{}` received the {n} call{s} expected", mock.tool),
                ),
            }
        }
    };
    (
        Evaluation::pass_fail(passed).with("calls", n as u64),
        message,
    )
}

/// The arguments of calls, as a message lists them.
fn arguments(calls: &[&ToolCall]) -> String {
    if calls.is_empty() {
        return "none".to_owned();
    }
    shown(&json!(
        calls.iter().map(|c| &c.arguments).collect::<Vec<_>>()
    ))
}

#[cfg(test)]
mod tests {
    use prill_spec::model::state::{ReplayCall, StatePath};
    use prill_spec::model::trajectory::ArgSchema;

    use super::*;
    use crate::response::Replayed;
    use crate::status::Status;

    fn end(state: Value) -> EndState {
        EndState {
            state,
            replayed: Vec::new(),
        }
    }

    fn check(expect: &ExpectState, state: Value) -> (Status, String) {
        let (evaluation, message) = evaluate(expect, Some(&end(state))).unwrap();
        (evaluation.status(), message)
    }

    #[test]
    fn equals_compares_numbers_by_value_and_names_each_difference() {
        let expect = ExpectState {
            equals: Some(json!({"n": 1, "list": [1, 2], "o": {"a": "x"}})),
            ..ExpectState::default()
        };
        assert_eq!(
            check(&expect, json!({"n": 1.0, "list": [1, 2], "o": {"a": "x"}})).0,
            Status::Passed
        );
        let (status, message) = check(&expect, json!({"n": 2, "list": [1], "o": {"a~/": 1}}));
        assert_eq!(status, Status::Failed);
        assert_eq!(
            message,
            "4 differences in the end state: /n: expected 1, found 2; /list: expected [1,2], found [1]; /o/a: expected \"x\", missing; /o/a~0~1: not expected, found 1"
        );
    }

    #[test]
    fn contains_takes_named_keys_and_list_items_in_order() {
        let state = json!({"orders": [{"id": "A", "s": "x"}, {"id": "B", "s": "y"}], "n": 3});
        let contains = |want: Value| ExpectState {
            contains: Some(want),
            ..ExpectState::default()
        };
        for (want, status) in [
            (json!({"orders": [{"id": "B"}]}), Status::Passed),
            (
                json!({"orders": [{"id": "A"}, {"id": "B"}]}),
                Status::Passed,
            ),
            (
                json!({"orders": [{"id": "B"}, {"id": "A"}]}),
                Status::Failed,
            ),
            (json!({"orders": [{"id": "C"}]}), Status::Failed),
            (json!({"n": 3.0}), Status::Passed),
            (json!({"m": 3}), Status::Failed),
        ] {
            assert_eq!(
                check(&contains(want.clone()), state.clone()).0,
                status,
                "{want}"
            );
        }
    }

    #[test]
    fn a_path_compares_its_one_node_or_the_list_of_several() {
        let state = json!({"orders": [{"s": "x"}, {"s": "y"}]});
        let path = |p: &str, v: Value| ExpectState {
            paths: vec![(StatePath::new(p).unwrap(), v)],
            ..ExpectState::default()
        };
        assert_eq!(
            check(&path("$.orders[0].s", json!("x")), state.clone()).0,
            Status::Passed
        );
        assert_eq!(
            check(&path("$.orders[*].s", json!(["x", "y"])), state.clone()).0,
            Status::Passed
        );
        let (status, message) = check(&path("$.missing", json!(1)), state.clone());
        assert_eq!(status, Status::Failed);
        assert_eq!(
            message,
            "1 difference in the end state: `$.missing` selects nothing"
        );
    }

    #[test]
    fn schema_and_ignore_and_replay() {
        let expect = ExpectState {
            schema: Some(ArgSchema::new(json!({"required": ["orders"]})).unwrap()),
            ..ExpectState::default()
        };
        assert_eq!(check(&expect, json!({})).0, Status::Failed);
        let calls = vec![ReplayCall {
            tool: "cancel".into(),
            args: serde_json::Map::new(),
        }];
        let expect = ExpectState {
            replay: Some(calls.clone()),
            ignore: vec![StatePath::new("$..at").unwrap()],
            ..ExpectState::default()
        };
        let with = |reference: Result<Value, String>| EndState {
            state: json!({"s": "cancelled", "at": 1}),
            replayed: vec![Replayed {
                calls: calls.clone(),
                state: reference,
            }],
        };
        let (e, _) =
            evaluate(&expect, Some(&with(Ok(json!({"s": "cancelled", "at": 2}))))).unwrap();
        assert_eq!(e.status(), Status::Passed, "the ignored time differs");
        let (e, m) = evaluate(&expect, Some(&with(Ok(json!({"s": "pending"}))))).unwrap();
        assert_eq!(e.status(), Status::Failed);
        assert!(
            m.contains("/s: expected \"pending\", found \"cancelled\""),
            "{m}"
        );
        assert_eq!(
            evaluate(&expect, Some(&with(Err("it broke".into())))).unwrap_err(),
            AssertionError::Replay("it broke".into())
        );
        assert_eq!(
            evaluate(&expect, Some(&end(json!({})))).unwrap_err(),
            AssertionError::NotReplayed
        );
        assert_eq!(
            evaluate(&expect, None).unwrap_err(),
            AssertionError::NoEndState
        );
    }

    #[test]
    fn a_mock_counts_its_calls_and_matches_each_in_order() {
        let calls = [
            ToolCall::new("search", json!({"q": "a", "n": 1})),
            ToolCall::new("other", json!({})),
            ToolCall::new("search", json!({"q": "b"})),
        ];
        let mock = |expect: ExpectCalls| MockCalls {
            tool: "search".into(),
            expect,
        };
        let pattern = |v: Value| v.as_object().unwrap().clone();
        let run = |expect| {
            let (e, m) = super::calls(&mock(expect), &calls);
            (e.status(), m)
        };
        assert_eq!(
            run(ExpectCalls::Count {
                min: 2,
                max: Some(2)
            })
            .0,
            Status::Passed
        );
        assert_eq!(
            run(ExpectCalls::Count { min: 3, max: None }),
            (
                Status::Failed,
                "`search` received 2 calls, expected at least 3".to_owned()
            )
        );
        assert_eq!(
            run(ExpectCalls::Calls(vec![
                pattern(json!({"q": "a"})),
                pattern(json!({"q": "*"}))
            ]))
            .0,
            Status::Passed
        );
        assert_eq!(
            run(ExpectCalls::Calls(vec![
                pattern(json!({"q": "b"})),
                pattern(json!({"q": "*"}))
            ])),
            (
                Status::Failed,
                "`search`'s call 1 had arguments {\"q\":\"a\",\"n\":1}, expected {\"q\":\"b\"}"
                    .to_owned()
            )
        );
        assert_eq!(
            run(ExpectCalls::Calls(vec![pattern(json!({}))])),
            (
                Status::Failed,
                "`search` received 2 calls, expected 1: [{\"q\":\"a\",\"n\":1},{\"q\":\"b\"}]"
                    .to_owned()
            )
        );
    }
}
