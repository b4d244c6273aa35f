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
//! use prill_spec::model::framework::{FrameworkConfig, ToolResults};
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
//! assert!(matches!(tools.tool_results["weather"], ToolResults::InOrder(_)));
//!
//! let wrong = json!({"max_iteration": 4});
//! let problems = FrameworkConfig::parse(Framework::Strands, wrong.as_object()).unwrap_err();
//! assert_eq!(problems[0].path, ["max_iteration"]);
//! ```

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::sentinel::Framework;

/// How many model calls the built-in loop makes at most when `max_iterations` is not
/// given.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

/// The keys of `framework_config` for `openai-sdk`, `claude-sdk` and `strands`.
pub const LOOP_KEYS: [&str; 5] = [
    "max_iterations",
    "intermediate_steps",
    "tool_results",
    "tool_command",
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
            retry_policy: None,
        }
    }
}

/// What a tool returns, as `tool_results` gives it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResults {
    /// The same value every call (any JSON but a list, or `{value: ...}`).
    Fixed(Value),
    /// One value per call, in order (a list); a call past the end is an error.
    InOrder(Vec<Value>),
    /// By arguments (`{by_args: [{args: {...}, result: ...}], default: ...}`): the
    /// first row whose every `args` key equals the call's argument of that name;
    /// `default` when none does; an error when none does and there is no default.
    ByArgs {
        /// The rows, in order.
        rows: Vec<ArgsRow>,
        /// The result when no row matches.
        default: Option<Box<ToolReply>>,
    },
    /// The tool fails with this message every call (`{error: "..."}`): the model is
    /// told, as a tool error, and the loop goes on.
    Error(String),
}

/// One row of a [`ToolResults::ByArgs`] table.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgsRow {
    /// The arguments it answers: each key must equal the call's argument.
    pub args: Map<String, Value>,
    /// What it answers.
    pub reply: ToolReply,
}

/// One answer of a tool.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    /// A result.
    Value(Value),
    /// A tool error, with its message.
    Error(String),
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
            "tool_command" => config.tool_command = tool_command(value, problems),
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

fn tool_results(value: &Value, problems: &mut Vec<Problem>) -> BTreeMap<String, ToolResults> {
    let Some(tools) = value.as_object() else {
        problems.push(Problem::expected(
            &["tool_results"],
            "an object: tool name -> its results",
            value,
        ));
        return BTreeMap::new();
    };
    tools
        .iter()
        .filter_map(|(name, results)| {
            let parsed = tool_result(name, results, problems)?;
            Some((name.clone(), parsed))
        })
        .collect()
}

/// One tool's results: a tagged object (`value`, `error`, `by_args` [+ `default`]), a
/// list (in order), or any other value (fixed).
fn tool_result(name: &str, value: &Value, problems: &mut Vec<Problem>) -> Option<ToolResults> {
    let at = ["tool_results", name];
    match value {
        Value::Array(items) => Some(ToolResults::InOrder(items.clone())),
        Value::Object(object) if is_tagged(object) => {
            if let Some(rows) = object.get("by_args") {
                let rows = args_rows(name, rows, problems)?;
                let default = match object.get("default") {
                    Some(d) => Some(Box::new(reply(
                        &[&at[..], &["default"]].concat(),
                        d,
                        problems,
                    )?)),
                    None => None,
                };
                return Some(ToolResults::ByArgs { rows, default });
            }
            match reply(&at, value, problems)? {
                ToolReply::Value(v) => Some(ToolResults::Fixed(v)),
                ToolReply::Error(e) => Some(ToolResults::Error(e)),
            }
        }
        other => Some(ToolResults::Fixed(other.clone())),
    }
}

/// Whether an object is one of the tagged forms rather than a fixed value: its only
/// keys are `value`, `error`, or `by_args` (with `default`).
fn is_tagged(object: &Map<String, Value>) -> bool {
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    matches!(
        keys.as_slice(),
        ["value"] | ["error"] | ["by_args"] | ["by_args", "default"] | ["default", "by_args"]
    )
}

/// A reply: `{value: X}`, `{error: "..."}`, or (where a tagged form is not required)
/// any other value as the result.
fn reply(at: &[&str], value: &Value, problems: &mut Vec<Problem>) -> Option<ToolReply> {
    if let Value::Object(object) = value
        && object.len() == 1
    {
        if let Some(v) = object.get("value") {
            return Some(ToolReply::Value(v.clone()));
        }
        if let Some(e) = object.get("error") {
            let Some(message) = e.as_str() else {
                problems.push(Problem::expected(
                    &[at, &["error"]].concat(),
                    "the tool's error message (a string)",
                    e,
                ));
                return None;
            };
            return Some(ToolReply::Error(message.to_owned()));
        }
    }
    Some(ToolReply::Value(value.clone()))
}

fn args_rows(name: &str, rows: &Value, problems: &mut Vec<Problem>) -> Option<Vec<ArgsRow>> {
    let at = ["tool_results", name, "by_args"];
    let Some(items) = rows.as_array().filter(|r| !r.is_empty()) else {
        problems.push(Problem::expected(
            &at,
            "a non-empty list of `{args: {...}, result: ...}` rows",
            rows,
        ));
        return None;
    };
    let before = problems.len();
    let mut parsed = Vec::new();
    for (i, row) in items.iter().enumerate() {
        let index = i.to_string();
        let here = [&at[..], &[index.as_str()]].concat();
        let Some(object) = row.as_object() else {
            problems.push(Problem::expected(
                &here,
                "`{args: {...}, result: ...}`",
                row,
            ));
            continue;
        };
        for key in object
            .keys()
            .filter(|k| !["args", "result", "error"].contains(&k.as_str()))
        {
            problems.push(Problem {
                path: [&here[..], &[key.as_str()]]
                    .concat()
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                kind: ProblemKind::UnknownKey {
                    allowed: vec!["args", "result", "error"],
                    hint: None,
                },
            });
        }
        let args = match object.get("args") {
            Some(Value::Object(args)) => args.clone(),
            Some(other) => {
                problems.push(Problem::expected(
                    &[&here[..], &["args"]].concat(),
                    "an object of argument values",
                    other,
                ));
                continue;
            }
            None => Map::new(),
        };
        let reply = match (object.get("result"), object.get("error")) {
            (Some(v), None) => ToolReply::Value(v.clone()),
            (None, Some(Value::String(e))) => ToolReply::Error(e.clone()),
            (None, Some(other)) => {
                problems.push(Problem::expected(
                    &[&here[..], &["error"]].concat(),
                    "the tool's error message (a string)",
                    other,
                ));
                continue;
            }
            (Some(_), Some(_)) => {
                problems.push(Problem::expected(
                    &here,
                    "a row with `result` or `error`, not both",
                    row,
                ));
                continue;
            }
            (None, None) => {
                problems.push(Problem::expected(
                    &here,
                    "a row with one of `result` or `error`",
                    row,
                ));
                continue;
            }
        };
        parsed.push(ArgsRow { args, reply });
    }
    (problems.len() == before).then_some(parsed)
}

fn tool_command(value: &Value, problems: &mut Vec<Problem>) -> Option<ToolCommand> {
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
                &["tool_command"],
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
        assert_eq!(c.tool_results["fixed"], ToolResults::Fixed(json!({"a": 1})));
        assert_eq!(
            c.tool_results["list_value"],
            ToolResults::Fixed(json!([1, 2]))
        );
        assert_eq!(
            c.tool_results["in_order"],
            ToolResults::InOrder(vec![json!(1), json!(2)])
        );
        assert_eq!(
            c.tool_results["broken"],
            ToolResults::Error("disk full".into())
        );
        let ToolResults::ByArgs { rows, default } = &c.tool_results["table"] else {
            panic!()
        };
        assert_eq!(rows[1].reply, ToolReply::Error("no data".into()));
        assert_eq!(default.as_deref(), Some(&ToolReply::Value(json!({"t": 0}))));
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
