//! `framework_config`, typed: what each `framework` of a Sentinel spec takes.
//!
//! Sentinel's DSL leaves `framework_config` a free dictionary; Prill gives every key a
//! meaning, so an unknown key is an error (with a "did you mean") instead of a setting
//! that silently does nothing.
//!
//! - `openai-sdk`, `claude-sdk` and `strands` run Prill's built-in tool loop
//!   ([`LoopConfig`]): the model is called with the tools, every tool call is answered
//!   from `tool_results` or by `tool_command`, and the loop goes on until the model
//!   answers or `max_iterations` model calls were made.
//! - `langgraph` runs an assistant of a LangGraph server ([`LanggraphConfig`]), which
//!   runs its own tools.
//!
//! [`FrameworkConfig::parse`] reads the dictionary as written and returns every
//! [`Problem`] it finds, each with its path inside `framework_config`, so that a
//! validator can place it in the file.
//!
//! ```
//! use prill_spec::model::framework::{Answers, FrameworkConfig};
//! use prill_spec::model::sentinel::Framework;
//! use serde_json::json;
//!
//! let map = json!({
//!     "max_iterations": 4,
//!     "tool_results": {
//!         "search": {"hits": 3},
//!         "weather": [{"temp": 20}, {"temp": 21}],
//!     }
//! });
//! let config = FrameworkConfig::parse(Framework::OpenaiSdk, map.as_object()).unwrap();
//! let FrameworkConfig::Loop(tools) = config else { unreachable!() };
//! assert_eq!(tools.max_iterations, 4);
//! assert!(matches!(tools.tool_results["weather"].answers, Answers::InOrder(_)));
//!
//! let wrong = json!({"max_iteration": 4});
//! let problems = FrameworkConfig::parse(Framework::Strands, wrong.as_object()).unwrap_err();
//! assert_eq!(problems[0].path, ["max_iteration"]);
//! ```

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::sentinel::Framework;

mod mocks;

use mocks::tool_results;
pub use mocks::{
    ANY, Answers, ArgsRow, ExpectCalls, MAX_DELAY_SECONDS, MockCalls, ROW_KEYS, Reply,
    TOOL_RESULT_KEYS, ToolReply, ToolResults, args_match, json_equal,
};

/// How many model calls the built-in loop makes at most when `max_iterations` is not
/// given.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

/// The keys of `framework_config` for `openai-sdk`, `claude-sdk` and `strands`.
pub const LOOP_KEYS: [&str; 6] = [
    "max_iterations",
    "intermediate_steps",
    "tool_results",
    "tool_command",
    "tool_mcp",
    "retry_policy",
];

/// The keys of `framework_config` for `langgraph`.
pub const LANGGRAPH_KEYS: [&str; 4] = [
    "assistant_id",
    "max_iterations",
    "intermediate_steps",
    "config",
];

/// The keys of `retry_policy`.
pub const RETRY_KEYS: [&str; 2] = ["max_retries", "backoff"];

/// A framework's settings.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameworkConfig {
    /// `openai-sdk`, `claude-sdk`, `strands`: the built-in tool loop.
    Loop(LoopConfig),
    /// `langgraph`: an assistant of a LangGraph server.
    Langgraph(LanggraphConfig),
}

/// The built-in tool loop's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// The most model calls; reaching it without a final answer is an error
    /// ([`DEFAULT_MAX_ITERATIONS`] when not given).
    pub max_iterations: u32,
    /// Whether the report keeps every message of the loop, not only the trajectory.
    pub intermediate_steps: bool,
    /// Each tool's results, by tool name.
    pub tool_results: BTreeMap<String, ToolResults>,
    /// A program that answers the calls of tools that `tool_results` does not name.
    pub tool_command: Option<ToolCommand>,
    /// An MCP server (over stdio) whose tools answer the calls `tool_results` does not
    /// name, instead of a `tool_command` program.
    pub tool_mcp: Option<ToolCommand>,
    /// Retries of a model call that failed in a way worth retrying.
    pub retry_policy: Option<RetryPolicy>,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            intermediate_steps: false,
            tool_results: BTreeMap::new(),
            tool_command: None,
            tool_mcp: None,
            retry_policy: None,
        }
    }
}

/// The program behind `tool_command`: a list is the program and its arguments; a
/// string is a command line run by `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCommand {
    /// The program and its arguments.
    Argv(Vec<String>),
    /// A command line for `sh -c`.
    Shell(String),
}

impl ToolCommand {
    /// The words to spawn: the list as is, or `sh -c <line>`.
    pub fn argv(&self) -> Vec<String> {
        match self {
            ToolCommand::Argv(words) => words.clone(),
            ToolCommand::Shell(line) => vec!["sh".into(), "-c".into(), line.clone()],
        }
    }

    /// How messages name it.
    pub fn display(&self) -> String {
        match self {
            ToolCommand::Argv(words) => words.join(" "),
            ToolCommand::Shell(line) => line.clone(),
        }
    }
}

/// `retry_policy`, as in Sentinel's own example: retries of a model call that failed
/// in a way worth retrying (the provider unreachable, rate limited, or failing on its
/// side), on top of the provider's own retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times to retry (0 to 10).
    pub max_retries: u32,
    /// How the wait between tries grows.
    pub backoff: Backoff,
}

/// How the wait between retries grows, from one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backoff {
    /// 1 s, 2 s, 4 s, ...
    #[default]
    Exponential,
    /// 1 s, 2 s, 3 s, ...
    Linear,
    /// 1 s each time.
    Constant,
}

impl Backoff {
    /// Every name.
    pub const NAMES: [&'static str; 3] = ["exponential", "linear", "constant"];

    /// The wait before retry `n` (from 1).
    pub fn delay(self, n: u32) -> std::time::Duration {
        let secs = match self {
            Backoff::Exponential => 1u64 << n.saturating_sub(1).min(6),
            Backoff::Linear => u64::from(n.max(1)),
            Backoff::Constant => 1,
        };
        std::time::Duration::from_secs(secs)
    }
}

/// A LangGraph assistant's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LanggraphConfig {
    /// The assistant (or graph) to run; `agent` when not given, the name LangGraph's
    /// templates give their graph.
    pub assistant_id: String,
    /// The most model calls (sent as the run's `recursion_limit`, two graph steps per
    /// call, and checked on the messages that come back); none when not given.
    pub max_iterations: Option<u32>,
    /// Whether the report keeps every message of the run.
    pub intermediate_steps: bool,
    /// The run's `config.configurable`, sent as is.
    pub config: Option<Map<String, Value>>,
}

impl Default for LanggraphConfig {
    fn default() -> Self {
        LanggraphConfig {
            assistant_id: DEFAULT_ASSISTANT.to_owned(),
            max_iterations: None,
            intermediate_steps: false,
            config: None,
        }
    }
}

/// The assistant a LangGraph test runs when `assistant_id` is not given.
pub const DEFAULT_ASSISTANT: &str = "agent";

/// What is wrong with one value of `framework_config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Where, inside `framework_config`: keys, and list indexes as digits
    /// (`["tool_results", "search", "by_args", "0", "args"]`); empty for the whole.
    pub path: Vec<String>,
    /// What is wrong.
    pub kind: ProblemKind,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum ProblemKind {
    /// A key the framework does not take; `allowed` are the keys it does take, and
    /// `hint` says more where there is more to say (a key of another framework).
    UnknownKey {
        /// The keys taken here.
        allowed: Vec<&'static str>,
        /// More to say.
        hint: Option<String>,
    },
    /// A value of the wrong type or out of range.
    Expected {
        /// What was expected, e.g. `an integer from 1 to 100`.
        expected: String,
        /// What was found, e.g. `0`.
        found: String,
    },
}

impl Problem {
    fn expected(path: &[&str], expected: impl Into<String>, found: &Value) -> Problem {
        Problem {
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            kind: ProblemKind::Expected {
                expected: expected.into(),
                found: describe(found),
            },
        }
    }
}

/// A value as a message shows it: short JSON.
pub fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        let mut end = 57;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &text[..end])
    } else {
        text
    }
}

/// The largest `max_iterations` taken.
pub const MAX_ITERATIONS_LIMIT: u32 = 1000;

impl FrameworkConfig {
    /// Reads `framework_config` (absent: `None`) for `framework`; every problem found.
    pub fn parse(
        framework: Framework,
        map: Option<&Map<String, Value>>,
    ) -> Result<FrameworkConfig, Vec<Problem>> {
        let empty = Map::new();
        let map = map.unwrap_or(&empty);
        let mut problems = Vec::new();
        let config = match framework {
            Framework::Langgraph => FrameworkConfig::Langgraph(parse_langgraph(map, &mut problems)),
            Framework::OpenaiSdk | Framework::ClaudeSdk | Framework::Strands => {
                FrameworkConfig::Loop(parse_loop(map, &mut problems))
            }
        };
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(problems)
        }
    }

    /// Whether the report keeps every step.
    pub fn intermediate_steps(&self) -> bool {
        match self {
            FrameworkConfig::Loop(c) => c.intermediate_steps,
            FrameworkConfig::Langgraph(c) => c.intermediate_steps,
        }
    }
}

fn unknown(key: &str, allowed: &[&'static str], hint: Option<String>) -> Problem {
    Problem {
        path: vec![key.to_owned()],
        kind: ProblemKind::UnknownKey {
            allowed: allowed.to_vec(),
            hint,
        },
    }
}

fn parse_loop(map: &Map<String, Value>, problems: &mut Vec<Problem>) -> LoopConfig {
    let mut config = LoopConfig::default();
    for (key, value) in map {
        match key.as_str() {
            "max_iterations" => {
                if let Some(n) = iterations(value, problems) {
                    config.max_iterations = n;
                }
            }
            "intermediate_steps" => match value.as_bool() {
                Some(b) => config.intermediate_steps = b,
                None => problems.push(Problem::expected(&[key], "true or false", value)),
            },
            "tool_results" => config.tool_results = tool_results(value, problems),
            "tool_command" => config.tool_command = tool_command(key, value, problems),
            "tool_mcp" => {
                config.tool_mcp = tool_command(key, value, problems);
                if map.contains_key("tool_command") {
                    problems.push(Problem::expected(
                        &[key],
                        "`tool_command` or `tool_mcp`, not both: one of them answers the calls `tool_results` does not",
                        value,
                    ));
                }
            }
            "retry_policy" => config.retry_policy = retry_policy(value, problems),
            other => {
                let hint = LANGGRAPH_KEYS.contains(&other).then(|| {
                    format!("`{other}` is a setting of `framework: langgraph`, which runs on a LangGraph server")
                });
                problems.push(unknown(other, &LOOP_KEYS, hint));
            }
        }
    }
    config
}

fn parse_langgraph(map: &Map<String, Value>, problems: &mut Vec<Problem>) -> LanggraphConfig {
    let mut config = LanggraphConfig::default();
    for (key, value) in map {
        match key.as_str() {
            "assistant_id" => match value.as_str().filter(|s| !s.trim().is_empty()) {
                Some(id) => config.assistant_id = id.to_owned(),
                None => problems.push(Problem::expected(
                    &[key],
                    "the id or graph name of an assistant (a non-empty string)",
                    value,
                )),
            },
            "max_iterations" => config.max_iterations = iterations(value, problems),
            "intermediate_steps" => match value.as_bool() {
                Some(b) => config.intermediate_steps = b,
                None => problems.push(Problem::expected(&[key], "true or false", value)),
            },
            "config" => match value.as_object() {
                Some(object) => config.config = Some(object.clone()),
                None => problems.push(Problem::expected(
                    &[key],
                    "an object (the run's `configurable` values)",
                    value,
                )),
            },
            other => {
                let hint = LOOP_KEYS.contains(&other).then(|| {
                    format!("`{other}` is a setting of Prill's own tool loop (openai-sdk, claude-sdk, strands); a LangGraph server runs its own tools")
                });
                problems.push(unknown(other, &LANGGRAPH_KEYS, hint));
            }
        }
    }
    config
}

fn iterations(value: &Value, problems: &mut Vec<Problem>) -> Option<u32> {
    match value.as_u64() {
        Some(n) if (1..=u64::from(MAX_ITERATIONS_LIMIT)).contains(&n) => u32::try_from(n).ok(),
        _ => {
            problems.push(Problem::expected(
                &["max_iterations"],
                format!("an integer from 1 to {MAX_ITERATIONS_LIMIT}"),
                value,
            ));
            None
        }
    }
}

fn tool_command(key: &str, value: &Value, problems: &mut Vec<Problem>) -> Option<ToolCommand> {
    match value {
        Value::String(line) if !line.trim().is_empty() => Some(ToolCommand::Shell(line.clone())),
        Value::Array(words)
            if !words.is_empty()
                && words
                    .iter()
                    .all(|w| w.as_str().is_some_and(|s| !s.is_empty())) =>
        {
            Some(ToolCommand::Argv(
                words
                    .iter()
                    .filter_map(|w| w.as_str().map(str::to_owned))
                    .collect(),
            ))
        }
        other => {
            problems.push(Problem::expected(
                &[key],
                "a command line (a string, run by `sh -c`) or a program and its arguments (a list of non-empty strings)",
                other,
            ));
            None
        }
    }
}

fn retry_policy(value: &Value, problems: &mut Vec<Problem>) -> Option<RetryPolicy> {
    let Some(object) = value.as_object() else {
        problems.push(Problem::expected(
            &["retry_policy"],
            "an object with `max_retries` and `backoff`",
            value,
        ));
        return None;
    };
    let before = problems.len();
    let mut policy = RetryPolicy {
        max_retries: 0,
        backoff: Backoff::default(),
    };
    for (key, v) in object {
        match key.as_str() {
            "max_retries" => match v.as_u64().filter(|n| *n <= 10) {
                Some(n) => policy.max_retries = n as u32,
                None => problems.push(Problem::expected(
                    &["retry_policy", "max_retries"],
                    "an integer from 0 to 10",
                    v,
                )),
            },
            "backoff" => match v.as_str() {
                Some("exponential") => policy.backoff = Backoff::Exponential,
                Some("linear") => policy.backoff = Backoff::Linear,
                Some("constant") => policy.backoff = Backoff::Constant,
                _ => problems.push(Problem::expected(
                    &["retry_policy", "backoff"],
                    "one of `exponential`, `linear` or `constant`",
                    v,
                )),
            },
            other => problems.push(Problem {
                path: vec!["retry_policy".into(), other.to_owned()],
                kind: ProblemKind::UnknownKey {
                    allowed: RETRY_KEYS.to_vec(),
                    hint: None,
                },
            }),
        }
    }
    (problems.len() == before).then_some(policy)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(framework: Framework, value: Value) -> Result<FrameworkConfig, Vec<Problem>> {
        FrameworkConfig::parse(framework, value.as_object())
    }

    fn paths(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(|p| p.path.join(".")).collect()
    }

    #[test]
    fn the_loop_reads_every_form_of_tool_results() {
        let config = parse(
            Framework::ClaudeSdk,
            json!({
                "intermediate_steps": true,
                "tool_command": ["python3", "tools.py"],
                "retry_policy": {"max_retries": 3, "backoff": "linear"},
                "tool_results": {
                    "fixed": {"a": 1},
                    "list_value": {"value": [1, 2]},
                    "in_order": [1, 2],
                    "broken": {"error": "disk full"},
                    "table": {
                        "by_args": [
                            {"args": {"city": "Paris"}, "result": {"t": 20}},
                            {"args": {"city": "Oslo"}, "error": "no data"}
                        ],
                        "default": {"t": 0}
                    }
                }
            }),
        )
        .unwrap();
        let FrameworkConfig::Loop(c) = config else {
            panic!()
        };
        assert_eq!(c.max_iterations, DEFAULT_MAX_ITERATIONS);
        assert!(c.intermediate_steps);
        let answers = |name: &str| c.tool_results[name].answers.clone();
        assert_eq!(
            answers("fixed"),
            Answers::Always(ToolReply::value(json!({"a": 1})))
        );
        assert_eq!(
            answers("list_value"),
            Answers::Always(ToolReply::value(json!([1, 2])))
        );
        assert_eq!(
            answers("in_order"),
            Answers::InOrder(vec![ToolReply::value(json!(1)), ToolReply::value(json!(2))])
        );
        assert_eq!(
            answers("broken"),
            Answers::Always(ToolReply::error("disk full"))
        );
        let Answers::ByArgs { rows, default } = answers("table") else {
            panic!()
        };
        assert_eq!(rows[1].replies, [ToolReply::error("no data")]);
        assert_eq!(default.as_deref(), Some(&ToolReply::value(json!({"t": 0}))));
        assert_eq!(
            c.tool_command.unwrap().argv(),
            ["python3".to_owned(), "tools.py".to_owned()]
        );
        assert_eq!(
            c.retry_policy,
            Some(RetryPolicy {
                max_retries: 3,
                backoff: Backoff::Linear
            })
        );
    }

    #[test]
    fn answers_come_in_sequences_with_delays_and_expectations() {
        let config = parse(
            Framework::OpenaiSdk,
            json!({"tool_results": {
                "flaky": [{"error": "timeout", "delay_in_seconds": 0.5}, {"hits": 1}, {"value": {"error": "a value"}}],
                "counted": {"value": 3, "expect_calls": {"min": 1, "max": 2}},
                "rows": {
                    "by_args": [
                        {"args": {"id": "*"}, "sequence": [{"error": "busy"}, "ok"]},
                        {"args": {}, "result": {"error": "a value too"}, "delay_in_seconds": 2}
                    ],
                    "expect_calls": [{"id": 7}, {"id": "*"}]
                },
                "literal": {"value": 1, "unit": "C"},
                "never": {"error": "gone", "expect_calls": 0}
            }}),
        )
        .unwrap();
        let FrameworkConfig::Loop(c) = config else {
            panic!()
        };
        let r = &c.tool_results;
        assert_eq!(
            r["flaky"].answers,
            Answers::InOrder(vec![
                ToolReply {
                    outcome: Reply::Error("timeout".into()),
                    delay: Some(std::time::Duration::from_millis(500)),
                },
                ToolReply::value(json!({"hits": 1})),
                ToolReply::value(json!({"error": "a value"})),
            ])
        );
        assert_eq!(
            r["counted"].expect_calls,
            Some(ExpectCalls::Count {
                min: 1,
                max: Some(2)
            })
        );
        let Answers::ByArgs {
            rows,
            default: None,
        } = &r["rows"].answers
        else {
            panic!()
        };
        assert_eq!(
            rows[0].replies,
            [ToolReply::error("busy"), ToolReply::value(json!("ok"))]
        );
        assert_eq!(
            rows[1].replies[0].outcome,
            Reply::Value(json!({"error": "a value too"}))
        );
        assert_eq!(
            rows[1].replies[0].delay,
            Some(std::time::Duration::from_secs(2))
        );
        assert!(matches!(&r["rows"].expect_calls, Some(ExpectCalls::Calls(c)) if c.len() == 2));
        assert_eq!(
            r["literal"].answers,
            Answers::Always(ToolReply::value(json!({"value": 1, "unit": "C"})))
        );
        assert_eq!(
            r["never"].expect_calls,
            Some(ExpectCalls::Count {
                min: 0,
                max: Some(0)
            })
        );
    }

    #[test]
    fn mock_settings_are_refused_with_their_paths() {
        let problems = parse(
            Framework::OpenaiSdk,
            json!({"tool_results": {
                "a": {"expect_calls": 1},
                "b": {"value": 1, "default": 2},
                "c": {"sequence": [], "delay_in_seconds": 1},
                "d": [{"value": 1, "delay_in_seconds": -1}],
                "e": {"by_args": [{"args": {}, "result": 1, "error": "x"}], "expect_calls": {"min": 3, "max": 1}},
                "f": {"value": 1, "expect_calls": ["x"]}
            }}),
        )
        .unwrap_err();
        let mut found = paths(&problems);
        found.sort();
        assert_eq!(
            found,
            [
                "tool_results.a",
                "tool_results.b.default",
                "tool_results.c.delay_in_seconds",
                "tool_results.c.sequence",
                "tool_results.d.0.delay_in_seconds",
                "tool_results.e.by_args.0",
                "tool_results.e.expect_calls",
                "tool_results.f.expect_calls.0",
            ]
        );
    }

    #[test]
    fn patterns_match_present_arguments_and_numbers_by_value() {
        let pattern = |v: Value| v.as_object().unwrap().clone();
        assert!(args_match(
            &pattern(json!({"id": "*"})),
            &json!({"id": null})
        ));
        assert!(!args_match(&pattern(json!({"id": "*"})), &json!({})));
        assert!(args_match(
            &pattern(json!({"n": 1})),
            &json!({"n": 1.0, "x": 2})
        ));
        assert!(!args_match(&pattern(json!({"n": 1})), &json!({"n": "1"})));
        assert!(args_match(&pattern(json!({})), &json!({"any": "thing"})));
    }

    #[test]
    fn an_mcp_server_answers_instead_of_a_program_never_beside_one() {
        let Ok(FrameworkConfig::Loop(config)) = parse(
            Framework::OpenaiSdk,
            json!({"tool_mcp": ["python3", "server.py"]}),
        ) else {
            panic!("a valid tool_mcp");
        };
        assert_eq!(config.tool_mcp.unwrap().argv(), ["python3", "server.py"]);
        assert!(config.tool_command.is_none());
        let problems = parse(
            Framework::OpenaiSdk,
            json!({"tool_mcp": "python3 server.py", "tool_command": ["python3", "tools.py"]}),
        )
        .unwrap_err();
        assert_eq!(paths(&problems), ["tool_mcp"]);
        let problems = parse(Framework::OpenaiSdk, json!({"tool_mcp": []})).unwrap_err();
        assert_eq!(paths(&problems), ["tool_mcp"]);
    }

    #[test]
    fn every_problem_is_found_with_its_path() {
        let problems = parse(
            Framework::OpenaiSdk,
            json!({
                "max_iterations": 0,
                "assistant_id": "x",
                "tool_command": [],
                "retry_policy": {"max_retries": 99, "jitter": true},
                "tool_results": {"t": {"by_args": [{"args": 3, "result": 1}, {"args": {}}]}}
            }),
        )
        .unwrap_err();
        let mut found = paths(&problems);
        found.sort();
        assert_eq!(
            found,
            [
                "assistant_id",
                "max_iterations",
                "retry_policy.jitter",
                "retry_policy.max_retries",
                "tool_command",
                "tool_results.t.by_args.0.args",
                "tool_results.t.by_args.1",
            ]
        );
        let hint = problems
            .iter()
            .find(|p| p.path == ["assistant_id"])
            .map(|p| p.kind.clone());
        assert!(
            matches!(hint, Some(ProblemKind::UnknownKey { hint: Some(h), .. }) if h.contains("langgraph"))
        );
    }

    #[test]
    fn langgraph_takes_its_own_keys() {
        let config = parse(
            Framework::Langgraph,
            json!({"max_iterations": 5, "intermediate_steps": true}),
        )
        .unwrap();
        assert_eq!(
            config,
            FrameworkConfig::Langgraph(LanggraphConfig {
                assistant_id: "agent".into(),
                max_iterations: Some(5),
                intermediate_steps: true,
                config: None
            })
        );
        let problems = parse(Framework::Langgraph, json!({"tool_results": {}})).unwrap_err();
        assert_eq!(paths(&problems), ["tool_results"]);
        assert!(FrameworkConfig::parse(Framework::Strands, None).is_ok());
    }

    #[test]
    fn backoff_grows_as_named() {
        let waits = |b: Backoff| (1..=4).map(|n| b.delay(n).as_secs()).collect::<Vec<_>>();
        assert_eq!(waits(Backoff::Exponential), [1, 2, 4, 8]);
        assert_eq!(waits(Backoff::Linear), [1, 2, 3, 4]);
        assert_eq!(waits(Backoff::Constant), [1, 1, 1, 1]);
    }
}
