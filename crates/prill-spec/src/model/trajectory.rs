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

/// What `tool_sequence` requires: these tools were called in this order. Written as a
/// list of names, or `{tools: [...], strict: true}`.
///
/// Not strict, the names are a subsequence of the calls: other calls may come before,
/// between and after them. Strict, the calls are exactly these, in this order, with
/// nothing before, between or after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSequence {
    /// The tool names, in the order they must be called.
    pub tools: Vec<String>,
    /// Whether the calls must be exactly `tools`, nothing else.
    pub strict: bool,
}

impl Serialize for ToolSequence {
    /// As written: a list, or the object form when strict.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if !self.strict {
            return self.tools.serialize(s);
        }
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("tools", &self.tools)?;
        map.serialize_entry("strict", &true)?;
        map.end()
    }
}

impl JsonSchema for ToolSequence {
    fn schema_name() -> Cow<'static, str> {
        "ToolSequence".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let tools = serde_json::json!({
            "type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1
        });
        json_schema!({
            "description": "Tool names that were called in this order, other calls allowed before, between and after them; `{tools, strict: true}` requires the calls to be exactly these, in this order. A Prill extension.",
            "anyOf": [
                tools.clone(),
                {
                    "type": "object",
                    "properties": {
                        "tools": tools,
                        "strict": {"type": "boolean", "default": false}
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
}

impl TrajectoryChecks {
    /// The keys of the part.
    pub const KEYS: [&'static str; 6] = [
        "tool_sequence",
        "must_call_tool",
        "must_not_call_tool",
        "tool_args",
        "max_tool_calls",
        "min_tool_calls",
    ];

    /// Whether it checks nothing.
    pub fn is_empty(&self) -> bool {
        self.tool_sequence.is_none()
            && self.must_call_tool.is_none()
            && self.must_not_call_tool.is_none()
            && self.tool_args.is_empty()
            && self.max_tool_calls.is_none()
            && self.min_tool_calls.is_none()
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
        let loose = ToolSequence {
            tools: vec!["a".into(), "b".into()],
            strict: false,
        };
        assert_eq!(serde_json::to_value(&loose).unwrap(), json!(["a", "b"]));
        let strict = ToolSequence {
            strict: true,
            ..loose
        };
        assert_eq!(
            serde_json::to_value(&strict).unwrap(),
            json!({"tools": ["a", "b"], "strict": true})
        );
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
