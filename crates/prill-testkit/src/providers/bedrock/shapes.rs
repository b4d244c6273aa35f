//! A request validator driven by an AWS service model (botocore's `service-2.json`), the
//! definition the AWS SDKs are generated from: a body is checked against the input
//! shape of an operation, member by member, as the service's own validation does.
//!
//! What is checked, for every shape type the model uses: a `structure` is an object
//! with only its members (those sent in the url or headers, `location`, excepted) and
//! all its `required` ones; a `union` structure sets exactly one member; a `list` is an
//! array, a `map` an object, each within `min`/`max` and with every member, key and
//! value of its shape; a `string` is a string within `min`/`max` characters, one of its
//! `enum` values, and matching its whole `pattern`; `integer`/`long` are whole numbers
//! and `float`/`double` numbers within `min`/`max`; `boolean` is a boolean; `blob` a
//! base64 string; `timestamp` a number or a string; a `document` is any JSON.
//!
//! The errors read as the service's: `1 validation error detected: Value at
//! 'messages.1.member.role' failed to satisfy constraint: ...` (lists count from 1).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde_json::{Map, Value};

/// botocore's Bedrock Runtime service model (`data/bedrock/service-2.json`).
const BEDROCK_RUNTIME: &str = include_str!("../../../data/bedrock/service-2.json");

static BEDROCK: LazyLock<ServiceModel> = LazyLock::new(|| {
    ServiceModel::parse(BEDROCK_RUNTIME).expect("the vendored Bedrock Runtime model is valid")
});

/// An AWS service model: its operations and shapes.
#[derive(Debug)]
pub struct ServiceModel {
    operations: Map<String, Value>,
    shapes: Map<String, Value>,
    patterns: Mutex<HashMap<String, Option<Regex>>>,
}

/// A service model that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("the service model cannot be read: {0}")]
pub struct BadModel(String);

impl ServiceModel {
    /// Bedrock Runtime's model, vendored from botocore.
    pub fn bedrock_runtime() -> &'static ServiceModel {
        &BEDROCK
    }

    /// Reads a `service-2.json`.
    pub fn parse(text: &str) -> Result<ServiceModel, BadModel> {
        let mut value: Value = serde_json::from_str(text).map_err(|e| BadModel(e.to_string()))?;
        let take = |value: &mut Value, key: &str| match value.get_mut(key).map(Value::take) {
            Some(Value::Object(map)) => Ok(map),
            _ => Err(BadModel(format!("no `{key}` object"))),
        };
        Ok(ServiceModel {
            operations: take(&mut value, "operations")?,
            shapes: take(&mut value, "shapes")?,
            patterns: Mutex::new(HashMap::new()),
        })
    }

    /// The name of the input shape of `operation` (`Converse` -> `ConverseRequest`).
    pub fn input_shape(&self, operation: &str) -> Option<&str> {
        self.operations.get(operation)?["input"]["shape"].as_str()
    }

    /// Checks `body` against the input shape of `operation`; the first problem found,
    /// in the service's words.
    pub fn validate_input(&self, operation: &str, body: &Value) -> Result<(), String> {
        let shape = self
            .input_shape(operation)
            .ok_or_else(|| format!("Unknown operation {operation}"))?;
        self.check(shape, body, "")
    }

    fn shape(&self, name: &str) -> Result<&Map<String, Value>, String> {
        self.shapes
            .get(name)
            .and_then(Value::as_object)
            .ok_or_else(|| format!("the model has no shape {name}"))
    }

    /// Checks `value` against the shape `name`; `path` is where it is, for errors.
    fn check(&self, name: &str, value: &Value, path: &str) -> Result<(), String> {
        let shape = self.shape(name)?;
        if shape.get("document").and_then(Value::as_bool) == Some(true) {
            return Ok(());
        }
        let kind = shape
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "structure" => self.check_structure(shape, value, path),
            "list" => {
                let items = value.as_array().ok_or_else(|| wrong(path, "a list"))?;
                check_length(shape, items.len(), path)?;
                let member = member_shape(shape, "member")?;
                for (i, item) in items.iter().enumerate() {
                    self.check(member, item, &join(path, &format!("{}.member", i + 1)))?;
                }
                Ok(())
            }
            "map" => {
                let entries = value.as_object().ok_or_else(|| wrong(path, "a map"))?;
                check_length(shape, entries.len(), path)?;
                let (key, val) = (member_shape(shape, "key")?, member_shape(shape, "value")?);
                for (k, v) in entries {
                    self.check(key, &Value::String(k.clone()), &join(path, k))?;
                    self.check(val, v, &join(path, k))?;
                }
                Ok(())
            }
            "string" => self.check_string(shape, value, path),
            "integer" | "long" => {
                let n = value
                    .as_i64()
                    .ok_or_else(|| wrong(path, "a whole number"))?;
                check_range(shape, n as f64, path)
            }
            "float" | "double" => {
                let x = value.as_f64().ok_or_else(|| wrong(path, "a number"))?;
                check_range(shape, x, path)
            }
            "boolean" if value.is_boolean() => Ok(()),
            "boolean" => Err(wrong(path, "a boolean")),
            "blob" if value.is_string() => Ok(()),
            "blob" => Err(wrong(path, "base64 text")),
            "timestamp" if value.is_number() || value.is_string() => Ok(()),
            "timestamp" => Err(wrong(path, "a timestamp")),
            other => Err(format!(
                "the model's shape {name} has an unknown type {other}"
            )),
        }
    }

    fn check_structure(
        &self,
        shape: &Map<String, Value>,
        value: &Value,
        path: &str,
    ) -> Result<(), String> {
        let object = value
            .as_object()
            .ok_or_else(|| wrong(path, "a structure"))?;
        if shape.get("union").and_then(Value::as_bool) == Some(true) && object.len() != 1 {
            return Err(constraint(
                path,
                "Member must have exactly one of its members set (it is a union)",
            ));
        }
        let members = shape
            .get("members")
            .and_then(Value::as_object)
            .ok_or_else(|| "a structure without members".to_owned())?;
        // Members sent in the url or a header are not part of the body.
        let in_body = |m: &Value| m.get("location").is_none();
        for (key, item) in object {
            let Some(member) = members.get(key).filter(|m| in_body(m)) else {
                let at = if path.is_empty() { "the request" } else { path };
                return Err(format!("Unknown field '{key}' in {at}."));
            };
            let target = member["shape"].as_str().unwrap_or_default();
            self.check(target, item, &join(path, key))?;
        }
        if let Some(required) = shape.get("required").and_then(Value::as_array) {
            for key in required.iter().filter_map(Value::as_str) {
                if members.get(key).is_some_and(in_body) && !object.contains_key(key) {
                    return Err(constraint(&join(path, key), "Member must not be null"));
                }
            }
        }
        Ok(())
    }

    fn check_string(
        &self,
        shape: &Map<String, Value>,
        value: &Value,
        path: &str,
    ) -> Result<(), String> {
        let text = value.as_str().ok_or_else(|| wrong(path, "a string"))?;
        check_length(shape, text.chars().count(), path)?;
        if let Some(values) = shape.get("enum").and_then(Value::as_array)
            && !values.iter().any(|v| v.as_str() == Some(text))
        {
            let set: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            return Err(format!(
                "1 validation error detected: Value '{text}' at '{path}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                set.join(", ")
            ));
        }
        if let Some(pattern) = shape.get("pattern").and_then(Value::as_str)
            && let Some(regex) = self.pattern(pattern)
            && !regex.is_match(text)
        {
            return Err(constraint(
                path,
                &format!("Member must satisfy regular expression pattern: {pattern}"),
            ));
        }
        Ok(())
    }

    /// The model's `pattern`, matched against the whole value as the service does; a
    /// pattern this regex engine cannot read (look-arounds) is not checked.
    fn pattern(&self, pattern: &str) -> Option<Regex> {
        let mut cache = self.patterns.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(pattern.to_owned())
            .or_insert_with(|| Regex::new(&format!("^(?:{pattern})$")).ok())
            .clone()
    }

    /// Every `pattern` of the model that this validator cannot check.
    pub fn unreadable_patterns(&self) -> Vec<String> {
        self.shapes
            .values()
            .filter_map(|s| s.get("pattern").and_then(Value::as_str))
            .filter(|p| self.pattern(p).is_none())
            .map(str::to_owned)
            .collect()
    }
}

fn member_shape<'a>(shape: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    shape
        .get(key)
        .and_then(|m| m["shape"].as_str())
        .ok_or_else(|| format!("a shape without `{key}`"))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// `1 validation error detected: Value at '{path}' failed to satisfy constraint: {what}`.
pub fn constraint(path: &str, what: &str) -> String {
    format!("1 validation error detected: Value at '{path}' failed to satisfy constraint: {what}")
}

fn wrong(path: &str, what: &str) -> String {
    constraint(path, &format!("Member must be {what}"))
}

fn check_length(shape: &Map<String, Value>, len: usize, path: &str) -> Result<(), String> {
    if let Some(min) = shape.get("min").and_then(Value::as_u64)
        && (len as u64) < min
    {
        return Err(constraint(
            path,
            &format!("Member must have length greater than or equal to {min}"),
        ));
    }
    if let Some(max) = shape.get("max").and_then(Value::as_u64)
        && (len as u64) > max
    {
        return Err(constraint(
            path,
            &format!("Member must have length less than or equal to {max}"),
        ));
    }
    Ok(())
}

fn check_range(shape: &Map<String, Value>, x: f64, path: &str) -> Result<(), String> {
    if let Some(min) = shape.get("min").and_then(Value::as_f64)
        && x < min
    {
        return Err(constraint(
            path,
            &format!("Member must have value greater than or equal to {min}"),
        ));
    }
    if let Some(max) = shape.get("max").and_then(Value::as_f64)
        && x > max
    {
        return Err(constraint(
            path,
            &format!("Member must have value less than or equal to {max}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn converse(body: Value) -> Result<(), String> {
        ServiceModel::bedrock_runtime().validate_input("Converse", &body)
    }

    #[test]
    fn the_model_is_read_and_its_patterns_are_checked() {
        let model = ServiceModel::bedrock_runtime();
        assert_eq!(model.input_shape("Converse"), Some("ConverseRequest"));
        assert_eq!(
            model.input_shape("ConverseStream"),
            Some("ConverseStreamRequest")
        );
        assert!(
            model.unreadable_patterns().is_empty(),
            "{:?}",
            model.unreadable_patterns()
        );
    }

    #[test]
    fn bodies_are_checked_against_the_shapes() {
        let hi = json!([{"role": "user", "content": [{"text": "hi"}]}]);
        assert!(converse(json!({"messages": hi})).is_ok());
        // An unknown member, a member of the url, a wrong enum value, a union with two.
        let e = converse(json!({"messages": hi, "seed": 1})).unwrap_err();
        assert!(e.contains("Unknown field 'seed'"), "{e}");
        assert!(converse(json!({"messages": hi, "modelId": "m"})).is_err());
        let e = converse(json!({"messages": [{"role": "robot", "content": [{"text": "x"}]}]}))
            .unwrap_err();
        assert!(
            e.contains("messages.1.member.role") && e.contains("enum"),
            "{e}"
        );
        let e = converse(json!({"messages": [{"role": "user",
            "content": [{"text": "x", "image": {}}]}]}))
        .unwrap_err();
        assert!(e.contains("union"), "{e}");
        // Required members, ranges, lengths and patterns.
        let e = converse(json!({"messages": [{"role": "user"}]})).unwrap_err();
        assert!(e.contains("messages.1.member.content"), "{e}");
        let e = converse(json!({"messages": hi, "inferenceConfig": {"topP": 1.5}})).unwrap_err();
        assert!(e.contains("inferenceConfig.topP"), "{e}");
        let e = converse(json!({"messages": hi, "inferenceConfig": {"maxTokens": 0}})).unwrap_err();
        assert!(e.contains("greater than or equal to 1"), "{e}");
        let tool = |name: &str| {
            json!({"messages": hi, "toolConfig": {"tools": [{"toolSpec": {"name": name,
                "inputSchema": {"json": {"type": "object"}}}}]}})
        };
        assert!(converse(tool("get_weather-2")).is_ok());
        for bad in ["web.search", "get weather", &"x".repeat(65), ""] {
            let e = converse(tool(bad)).unwrap_err();
            assert!(
                e.contains("toolConfig.tools.1.member.toolSpec.name"),
                "{bad}: {e}"
            );
        }
        // Structured output: the schema is a string.
        let output = |schema: Value| {
            json!({"messages": hi, "outputConfig": {"textFormat": {"type": "json_schema",
                "structure": {"jsonSchema": {"schema": schema, "name": "verdict"}}}}})
        };
        assert!(converse(output(json!("{\"type\":\"object\"}"))).is_ok());
        assert!(converse(output(json!({"type": "object"}))).is_err());
    }
}
