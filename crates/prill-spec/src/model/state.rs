//! `expect_state`: checks on the end state of a test's tools, the snapshot a tool
//! program gives when the conversation is over (a Prill extension, `docs/conversations.md`).
//!
//! Every part given must hold:
//!
//! - `equals`: the state is this value (numbers compared by value);
//! - `contains`: the state holds this value: an object every key it names, each value
//!   contained in turn; a list each of its items contained in some item, in order; any
//!   other value equal;
//! - `paths`: each JSONPath (RFC 9535) selects this value: one node equal to it, or
//!   several whose list equals it; a path that selects nothing fails;
//! - `schema`: the state is valid against this JSON Schema;
//! - `replay`: the state equals the state that these tool calls, made in order on a
//!   fresh program, leave (τ-bench's rule for its database: the reference actions
//!   replayed on a fresh environment);
//! - `ignore`: JSONPaths whose nodes are removed from both sides before `equals` and
//!   `replay` compare (times, generated ids).
//!
//! ```
//! use prill_spec::model::state::StatePath;
//! use serde_json::json;
//!
//! let path = StatePath::new("$.orders[?@.status == 'cancelled'].id").unwrap();
//! let state = json!({"orders": [{"id": "A", "status": "cancelled"}, {"id": "B", "status": "pending"}]});
//! assert_eq!(path.select(&state), [&json!("A")]);
//! assert!(StatePath::new("orders.id").is_err());
//! ```

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::trajectory::ArgSchema;

/// The keys of `expect_state`.
pub const KEYS: [&str; 6] = ["equals", "contains", "paths", "schema", "replay", "ignore"];

/// What `expect_state` requires of the end state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExpectState {
    /// The whole state.
    pub equals: Option<Value>,
    /// A part of the state.
    pub contains: Option<Value>,
    /// Values at JSONPaths, in file order.
    pub paths: Vec<(StatePath, Value)>,
    /// A JSON Schema the state is valid against.
    pub schema: Option<ArgSchema>,
    /// Reference calls whose state, on a fresh program, the end state must equal.
    pub replay: Option<Vec<ReplayCall>>,
    /// What `equals` and `replay` leave out of both sides.
    pub ignore: Vec<StatePath>,
}

/// One reference call of `replay`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ReplayCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Map<String, Value>,
}

/// A JSONPath (RFC 9535), as written and parsed once when the spec is validated.
#[derive(Debug, Clone)]
pub struct StatePath {
    text: String,
    parsed: JsonPath,
}

impl StatePath {
    /// Parses `text`; the error is the parser's sentence.
    pub fn new(text: &str) -> Result<StatePath, String> {
        let parsed = JsonPath::parse(text).map_err(|e| e.to_string())?;
        Ok(StatePath {
            text: text.to_owned(),
            parsed,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The nodes it selects in `value`, in document order.
    pub fn select<'v>(&self, value: &'v Value) -> Vec<&'v Value> {
        self.parsed.query(value).all()
    }

    /// Removes from `value` every node the path selects (the root stays).
    pub fn remove_from(&self, value: &mut Value) {
        let mut pointers: Vec<String> = self
            .parsed
            .query_located(value)
            .locations()
            .map(|p| p.to_json_pointer())
            .filter(|p| !p.is_empty())
            .collect();
        // Deepest and last first, so that removing one never moves another.
        pointers.sort_by(|a, b| b.cmp(a));
        for pointer in pointers {
            remove_at(value, &pointer);
        }
    }
}

/// Removes the node at `pointer` (a JSON Pointer) from its parent.
fn remove_at(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.shift_remove(&key);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = key.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}

impl PartialEq for StatePath {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Serialize for StatePath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl Serialize for ExpectState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Some(v) = &self.equals {
            map.serialize_entry("equals", v)?;
        }
        if let Some(v) = &self.contains {
            map.serialize_entry("contains", v)?;
        }
        if !self.paths.is_empty() {
            let paths: Map<String, Value> = self
                .paths
                .iter()
                .map(|(p, v)| (p.text.clone(), v.clone()))
                .collect();
            map.serialize_entry("paths", &paths)?;
        }
        if let Some(schema) = &self.schema {
            map.serialize_entry("schema", schema.value())?;
        }
        if let Some(calls) = &self.replay {
            map.serialize_entry("replay", calls)?;
        }
        if !self.ignore.is_empty() {
            map.serialize_entry("ignore", &self.ignore)?;
        }
        map.end()
    }
}

impl JsonSchema for ExpectState {
    fn schema_name() -> Cow<'static, str> {
        "ExpectState".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Checks on the end state the test's tool program gives when the conversation is over: every part given must hold. A Prill extension.",
            "type": "object",
            "properties": {
                "equals": {"description": "The whole state (numbers compared by value)."},
                "contains": {"description": "A part of the state: the keys it names, recursively; a list's items in order among the state's."},
                "paths": {
                    "description": "JSONPath (RFC 9535) -> the value it must select (a list when it selects several nodes).",
                    "type": "object",
                    "minProperties": 1,
                    "propertyNames": {"pattern": "^\\$"}
                },
                "schema": {"description": "A JSON Schema the state is valid against.", "type": "object"},
                "replay": {
                    "description": "Reference tool calls: the state must equal what they leave on a fresh program (τ-bench's database check).",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "tool": {"type": "string", "minLength": 1},
                            "args": {"type": "object"}
                        },
                        "required": ["tool"],
                        "additionalProperties": false
                    }
                },
                "ignore": {
                    "description": "JSONPaths left out of both sides before `equals` and `replay` compare.",
                    "type": "array",
                    "items": {"type": "string", "pattern": "^\\$"}
                }
            },
            "minProperties": 1,
            "additionalProperties": false
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ignore_removes_every_node_it_selects() {
        let mut state = json!({"a": [{"t": 1, "k": 2}, {"t": 3}], "t": 4, "x/y": 5});
        StatePath::new("$..t").unwrap().remove_from(&mut state);
        assert_eq!(state, json!({"a": [{"k": 2}, {}], "x/y": 5}));
        StatePath::new("$['x/y']").unwrap().remove_from(&mut state);
        StatePath::new("$.a[*]").unwrap().remove_from(&mut state);
        assert_eq!(state, json!({"a": []}));
        StatePath::new("$").unwrap().remove_from(&mut state);
        assert_eq!(state, json!({"a": []}), "the root stays");
    }

    #[test]
    fn a_path_that_is_not_jsonpath_is_refused_with_the_parsers_words() {
        let error = StatePath::new("$.orders[").unwrap_err();
        assert!(!error.is_empty());
    }
}
