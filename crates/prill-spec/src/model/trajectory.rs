//! The values of the trajectory assertions (a Prill extension to Sentinel's DSL):
//! `tool_sequence` and `tool_args`. The plain ones (`must_not_call_tool`,
//! `max_tool_calls`, `min_tool_calls`, `max_iterations_used`) take a tool list or a
//! count and need no type of their own.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::sentinel::Pattern;

/// How `tool_sequence`'s tools are matched to the calls made. Each tool is matched to
/// at most one call and each call to at most one tool, as many as can be (the longest
/// common subsequence in order, a maximum matching in any order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SequenceMode {
    /// The calls are exactly the tools, in this order: nothing before, between or after
    /// them (agentevals' `strict`, ADK's `EXACT`).
    Strict,
    /// The tools were called in this order; other calls may come before, between and
    /// after them (ADK's `IN_ORDER`). The list form.
    #[default]
    InOrder,
    /// The calls are exactly the tools, in any order: each tool as often as listed, and
    /// no other call (agentevals' `unordered`).
    AnyOrder,
    /// Every call made is one of the tools; some tools may not have been called
    /// (agentevals' `subset`: the calls are a subset of the expected ones).
    Subset,
    /// Every tool was called, in any order; other calls may come too (agentevals'
    /// `superset`, ADK's `ANY_ORDER`).
    Superset,
}

impl SequenceMode {
    /// Every mode's name.
    pub const NAMES: [&'static str; 5] = ["strict", "in_order", "any_order", "subset", "superset"];

    /// The other evaluators' names, and the mode each means here. ADK's `ANY_ORDER`
    /// allows other calls, so it is `superset`, not `any_order`.
    pub const ALIASES: [(&'static str, SequenceMode); 4] = [
        ("unordered", SequenceMode::AnyOrder),
        ("EXACT", SequenceMode::Strict),
        ("IN_ORDER", SequenceMode::InOrder),
        ("ANY_ORDER", SequenceMode::Superset),
    ];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            SequenceMode::Strict => "strict",
            SequenceMode::InOrder => "in_order",
            SequenceMode::AnyOrder => "any_order",
            SequenceMode::Subset => "subset",
            SequenceMode::Superset => "superset",
        }
    }

    /// The mode named `name`, or one of [`SequenceMode::ALIASES`].
    pub fn from_name(name: &str) -> Option<SequenceMode> {
        let modes = [
            SequenceMode::Strict,
            SequenceMode::InOrder,
            SequenceMode::AnyOrder,
            SequenceMode::Subset,
            SequenceMode::Superset,
        ];
        modes.into_iter().find(|m| m.name() == name).or_else(|| {
            Self::ALIASES
                .iter()
                .find(|(a, _)| *a == name)
                .map(|(_, m)| *m)
        })
    }

    /// Whether the order of the calls counts.
    pub fn ordered(self) -> bool {
        matches!(self, SequenceMode::Strict | SequenceMode::InOrder)
    }
}

/// How an expected call's arguments are compared with a call's, from the call's side.
/// A tool written by name alone matches any arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgsMode {
    /// Every argument written is in the call and matches; the call may have others
    /// (agentevals' `superset`).
    #[default]
    Superset,
    /// Every argument of the call is written and matches; some written may be absent
    /// (agentevals' `subset`).
    Subset,
    /// The call has exactly the arguments written, each matching (agentevals' `exact`,
    /// ADK's default).
    Exact,
    /// Arguments are not compared (agentevals' `ignore`, ADK's `ignore_args`).
    Ignore,
}

impl ArgsMode {
    /// Every mode's name.
    pub const NAMES: [&'static str; 4] = ["superset", "subset", "exact", "ignore"];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            ArgsMode::Superset => "superset",
            ArgsMode::Subset => "subset",
            ArgsMode::Exact => "exact",
            ArgsMode::Ignore => "ignore",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<ArgsMode> {
        [
            ArgsMode::Superset,
            ArgsMode::Subset,
            ArgsMode::Exact,
            ArgsMode::Ignore,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }
}

/// One call `tool_sequence` expects: a tool, and what its arguments must be (`None`,
/// written by name: any).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedCall {
    /// The tool's name.
    pub tool: String,
    /// Each argument's name and matcher, in file order, when written as `{tool, args}`;
    /// `None` when written by name. `Some` and empty (`args: {}`) is a call with no
    /// arguments, which `args_mode: exact` and `subset` hold a call to.
    pub args: Option<Vec<(String, ArgMatcher)>>,
}

impl ExpectedCall {
    /// A call to `tool` with any arguments.
    pub fn named(tool: impl Into<String>) -> ExpectedCall {
        ExpectedCall {
            tool: tool.into(),
            args: None,
        }
    }

    /// A call to `tool` with these arguments, compared as the sequence's `args_mode` says.
    pub fn with_args(
        tool: impl Into<String>,
        args: impl IntoIterator<Item = (String, ArgMatcher)>,
    ) -> ExpectedCall {
        ExpectedCall {
            tool: tool.into(),
            args: Some(args.into_iter().collect()),
        }
    }
}

impl Serialize for ExpectedCall {
    /// The name alone, or `{tool, args}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.args {
            None => self.tool.serialize(s),
            Some(args) => ToolArgs {
                tool: self.tool.clone(),
                args: args.clone(),
            }
            .serialize(s),
        }
    }
}

/// What `tool_sequence` requires: these calls were made, matched to the calls as its
/// [`SequenceMode`] says, and their arguments as its [`ArgsMode`] says. Written as a
/// list of names (`in_order`), or `{tools: [...], mode: ..., args_mode: ...}` (`strict:
/// true` is `mode: strict`), an item being a name or `{tool, args}`, with `score: f1,
/// threshold: x` for partial credit.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSequence {
    /// The calls, in the order they must be made.
    pub tools: Vec<ExpectedCall>,
    /// How they are matched to the calls.
    pub mode: SequenceMode,
    /// How the arguments written are compared with a call's.
    pub args_mode: ArgsMode,
    /// With `score: f1`: the threshold of the F1 score of the matched calls (precision
    /// over the calls made, recall over the tools), which decides instead of the mode's
    /// all-or-nothing rule; the mode then only says whether order counts.
    pub f1_threshold: Option<f64>,
}

impl ToolSequence {
    /// The tools, in order, other calls allowed between them: the list form.
    pub fn in_order(tools: Vec<String>) -> ToolSequence {
        ToolSequence {
            tools: tools.into_iter().map(ExpectedCall::named).collect(),
            mode: SequenceMode::InOrder,
            args_mode: ArgsMode::default(),
            f1_threshold: None,
        }
    }

    /// Whether it is written as a plain list: in order, by name, with no score.
    fn is_list(&self) -> bool {
        self.mode == SequenceMode::InOrder
            && self.f1_threshold.is_none()
            && self.args_mode == ArgsMode::default()
            && self.tools.iter().all(|c| c.args.is_none())
    }
}

impl Serialize for ToolSequence {
    /// As written: a list when in order, else the object form.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.is_list() {
            return self.tools.serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("tools", &self.tools)?;
        map.serialize_entry("mode", self.mode.name())?;
        if self.args_mode != ArgsMode::default() {
            map.serialize_entry("args_mode", self.args_mode.name())?;
        }
        if let Some(threshold) = self.f1_threshold {
            map.serialize_entry("score", "f1")?;
            map.serialize_entry("threshold", &threshold)?;
        }
        map.end()
    }
}

impl JsonSchema for ToolSequence {
    fn schema_name() -> Cow<'static, str> {
        "ToolSequence".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names = serde_json::json!({
            "type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1
        });
        let tools = serde_json::json!({
            "type": "array",
            "items": {"anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "properties": {"tool": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
                    "required": ["tool", "args"],
                    "additionalProperties": false
                }
            ]}
        });
        let mut modes: Vec<&str> = SequenceMode::NAMES.to_vec();
        modes.extend(SequenceMode::ALIASES.iter().map(|(a, _)| *a));
        json_schema!({
            "description": "Tool names that were called in this order, other calls allowed before, between and after them; or `{tools, mode}`: `strict` (exactly these calls, in order), `in_order`, `any_order` (exactly these calls, any order), `subset` (every call is one of these), `superset` (every one of these was called, others allowed); `strict: true` is `mode: strict`. An item is a name (any arguments) or `{tool, args}`, its arguments compared as `args_mode` says: `superset` (the call has at least these), `subset`, `exact` or `ignore`. `score: f1` with a `threshold` gives partial credit. An empty `tools` (only in `strict`, `any_order` and `subset`) means no call at all. A Prill extension.",
            "anyOf": [
                names,
                {
                    "type": "object",
                    "properties": {
                        "tools": tools,
                        "mode": {"enum": modes, "default": "in_order"},
                        "args_mode": {"enum": ArgsMode::NAMES, "default": "superset"},
                        "strict": {"type": "boolean", "default": false},
                        "score": {"const": "f1"},
                        "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
                    },
                    "required": ["tools"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// What `tool_args` requires: some call of `tool` had arguments matching every
/// matcher of `args`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolArgs {
    /// The tool's name.
    pub tool: String,
    /// Each top-level argument's name and what its value must be, in file order.
    /// Arguments not named here may have any value.
    pub args: Vec<(String, ArgMatcher)>,
}

impl Serialize for ToolArgs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Args<'a>(&'a [(String, ArgMatcher)]);
        impl Serialize for Args<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (name, m) in self.0 {
                    map.serialize_entry(name, m)?;
                }
                map.end()
            }
        }
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("tool", &self.tool)?;
        map.serialize_entry("args", &Args(&self.args))?;
        map.end()
    }
}

impl JsonSchema for ToolArgs {
    fn schema_name() -> Cow<'static, str> {
        "ToolArgs".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let matcher = generator.subschema_for::<ArgMatcher>();
        json_schema!({
            "description": "Some call of `tool` had arguments matching every entry of `args`. A Prill extension.",
            "type": "object",
            "properties": {
                "tool": {"type": "string", "minLength": 1},
                "args": {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": matcher
                }
            },
            "required": ["tool", "args"],
            "additionalProperties": false
        })
    }
}

/// What one argument's value must be.
///
/// In a file, an object with exactly one key, that key one of [`ArgMatcher::KEYS`], is
/// a matcher; any other value is an exact value. `{equals: v}` is the exact value `v`,
/// for writing an object such as `{regex: "x"}` literally.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgMatcher {
    /// Equal to this JSON value (numbers compared by value: `1` equals `1.0`).
    Equals(Value),
    /// A string this regular expression matches somewhere in.
    Regex(Pattern),
    /// A string holding this text (letter case counts), or an array with an item equal
    /// to this value.
    Contains(Value),
    /// A value valid against this JSON Schema.
    Schema(ArgSchema),
}

impl ArgMatcher {
    /// The keys that make a one-key object a matcher.
    pub const KEYS: [&'static str; 4] = ["equals", "regex", "contains", "schema"];
}

impl Serialize for ArgMatcher {
    /// As written, with `{equals: v}` only where `v` would read as a matcher.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (key, value) = match self {
            ArgMatcher::Equals(v) if !looks_like_matcher(v) => return v.serialize(s),
            ArgMatcher::Equals(v) => ("equals", v.clone()),
            ArgMatcher::Regex(p) => ("regex", Value::from(p.as_str())),
            ArgMatcher::Contains(v) => ("contains", v.clone()),
            ArgMatcher::Schema(schema) => ("schema", schema.value.clone()),
        };
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(key, &value)?;
        map.end()
    }
}

/// Whether `value` is an object a file would read as a matcher.
pub fn looks_like_matcher(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.len() == 1 && o.keys().all(|k| ArgMatcher::KEYS.contains(&k.as_str())))
}

impl JsonSchema for ArgMatcher {
    fn schema_name() -> Cow<'static, str> {
        "ArgMatcher".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let one = |key: &str, value: Value| {
            serde_json::json!({
                "type": "object",
                "properties": {key: value},
                "required": [key],
                "additionalProperties": false
            })
        };
        json_schema!({
            "description": "An argument's value: an exact JSON value, or an object with one key: `equals` (this exact value, also one that looks like a matcher), `regex` (a string the expression matches), `contains` (a string holding this text, or an array holding this item), `schema` (a value valid against this JSON Schema).",
            "anyOf": [
                one("equals", serde_json::json!(true)),
                one("regex", serde_json::json!({"type": "string", "minLength": 1, "format": "regex"})),
                one("contains", serde_json::json!(true)),
                // Any object or boolean, not a `$ref` to the remote meta-schema: the
                // schema stays self-contained, and `prill validate` checks the rest.
                one("schema", serde_json::json!({
                    "description": "A JSON Schema (an object or a boolean). The editor schema accepts any here; `prill validate` checks that it is a valid JSON Schema.",
                    "type": ["object", "boolean"]
                })),
                true
            ]
        })
    }
}

/// A JSON Schema, as written and compiled once when the spec is validated.
#[derive(Clone)]
pub struct ArgSchema {
    value: Value,
    compiled: Arc<jsonschema::Validator>,
}

impl ArgSchema {
    /// Compiles `value`; the error is the compiler's sentence.
    pub fn new(value: Value) -> Result<ArgSchema, String> {
        let compiled = jsonschema::validator_for(&value).map_err(|e| e.to_string())?;
        Ok(ArgSchema {
            value,
            compiled: Arc::new(compiled),
        })
    }

    /// The schema as written.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Whether `instance` is valid against the schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.compiled.is_valid(instance)
    }
}

impl std::fmt::Debug for ArgSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ArgSchema").field(&self.value).finish()
    }
}

impl PartialEq for ArgSchema {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// A data-driven interaction's `trajectory` part (a Prill extension): the trajectory
/// assertions that apply to a neuro-san agent, with the meanings they have in a Sentinel
/// spec. The trajectory is the agents and tools the agent invoked, read from the
/// interaction's `MAXIMAL` stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryChecks {
    /// These agents or tools were invoked in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_sequence: Option<ToolSequence>,
    /// Each of these agents or tools was invoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "tool_names_schema")]
    pub must_call_tool: Option<Vec<String>>,
    /// None of these agents or tools was invoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "tool_names_schema")]
    pub must_not_call_tool: Option<Vec<String>>,
    /// Some invocation of each tool had arguments matching (one, or a list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "tool_args_schema")]
    pub tool_args: Vec<ToolArgs>,
    /// At most this many invocations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u64>,
    /// At least this many invocations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub min_tool_calls: Option<u64>,
    /// The judge finds that the whole trajectory (every invocation with its arguments
    /// and result, then the answer) meets these criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub gist: Option<String>,
    /// The judge finds that the whole trajectory does not meet these criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub not_gist: Option<String>,
}

impl TrajectoryChecks {
    /// The keys of the part.
    pub const KEYS: [&'static str; 8] = [
        "tool_sequence",
        "must_call_tool",
        "must_not_call_tool",
        "tool_args",
        "max_tool_calls",
        "min_tool_calls",
        "gist",
        "not_gist",
    ];

    /// Whether it checks nothing.
    pub fn is_empty(&self) -> bool {
        self.tool_sequence.is_none()
            && self.must_call_tool.is_none()
            && self.must_not_call_tool.is_none()
            && self.tool_args.is_empty()
            && self.max_tool_calls.is_none()
            && self.min_tool_calls.is_none()
            && self.gist.is_none()
            && self.not_gist.is_none()
    }
}

fn tool_names_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "An agent or tool name, or a list of them.",
        "anyOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
        ]
    })
}

fn tool_args_schema(generator: &mut SchemaGenerator) -> Schema {
    let one = generator.subschema_for::<ToolArgs>();
    json_schema!({
        "description": "One `{tool, args}`, or a list of them that must all hold.",
        "anyOf": [one, {"type": "array", "items": one, "minItems": 1}]
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_sequence_serializes_as_written() {
        let loose = ToolSequence::in_order(vec!["a".into(), "b".into()]);
        assert_eq!(serde_json::to_value(&loose).unwrap(), json!(["a", "b"]));
        let strict = ToolSequence {
            mode: SequenceMode::Strict,
            ..loose.clone()
        };
        assert_eq!(
            serde_json::to_value(&strict).unwrap(),
            json!({"tools": ["a", "b"], "mode": "strict"})
        );
        let scored = ToolSequence {
            mode: SequenceMode::Superset,
            f1_threshold: Some(0.8),
            ..loose
        };
        assert_eq!(
            serde_json::to_value(&scored).unwrap(),
            json!({"tools": ["a", "b"], "mode": "superset", "score": "f1", "threshold": 0.8})
        );
    }

    #[test]
    fn calls_with_arguments_serialize_as_written() {
        let mut seq = ToolSequence::in_order(vec!["fetch".into()]);
        seq.tools.insert(
            0,
            ExpectedCall {
                tool: "search".into(),
                args: Some(vec![("q".into(), ArgMatcher::Equals(json!("laptop")))]),
            },
        );
        seq.args_mode = ArgsMode::Exact;
        assert_eq!(
            serde_json::to_value(&seq).unwrap(),
            json!({"tools": [{"tool": "search", "args": {"q": "laptop"}}, "fetch"], "mode": "in_order", "args_mode": "exact"})
        );
        assert_eq!(ArgsMode::from_name("exact"), Some(ArgsMode::Exact));
        assert_eq!(ArgsMode::from_name("EXACT"), None);
    }

    /// Every name and alias reads back as its mode; ADK's `ANY_ORDER` allows other
    /// calls, so it is `superset`.
    #[test]
    fn modes_are_known_by_their_names_and_the_other_evaluators_names() {
        for name in SequenceMode::NAMES {
            assert_eq!(SequenceMode::from_name(name).unwrap().name(), name);
        }
        assert_eq!(
            SequenceMode::from_name("unordered"),
            Some(SequenceMode::AnyOrder)
        );
        assert_eq!(
            SequenceMode::from_name("ANY_ORDER"),
            Some(SequenceMode::Superset)
        );
        assert_eq!(SequenceMode::from_name("EXACT"), Some(SequenceMode::Strict));
        assert_eq!(SequenceMode::from_name("any-order"), None);
        assert!(SequenceMode::Strict.ordered() && !SequenceMode::Subset.ordered());
    }

    #[test]
    fn matchers_serialize_as_written_and_literal_look_alikes_keep_equals() {
        let args = ToolArgs {
            tool: "search".into(),
            args: vec![
                ("q".into(), ArgMatcher::Regex(Pattern::new("lap").unwrap())),
                ("n".into(), ArgMatcher::Equals(json!(3))),
                ("o".into(), ArgMatcher::Equals(json!({"regex": "x"}))),
                ("t".into(), ArgMatcher::Contains(json!("a"))),
                (
                    "s".into(),
                    ArgMatcher::Schema(ArgSchema::new(json!({"type": "string"})).unwrap()),
                ),
            ],
        };
        assert_eq!(
            serde_json::to_value(&args).unwrap(),
            json!({"tool": "search", "args": {
                "q": {"regex": "lap"}, "n": 3, "o": {"equals": {"regex": "x"}},
                "t": {"contains": "a"}, "s": {"schema": {"type": "string"}}
            }})
        );
    }

    #[test]
    fn a_schema_compiles_and_checks() {
        let s = ArgSchema::new(json!({"type": "integer", "minimum": 1})).unwrap();
        assert!(s.is_valid(&json!(2)));
        assert!(!s.is_valid(&json!(0)));
        assert!(ArgSchema::new(json!({"type": 12})).is_err());
    }
}
