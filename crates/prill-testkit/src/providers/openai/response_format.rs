//! The OpenAI fake's checks of `response_format`, as the real API makes them: a `type`
//! of `text`, `json_object` (with the word "json" in the messages) or `json_schema`
//! (with `json_schema.name` and `json_schema.schema`, an object schema; with
//! `"strict": true`, every object of it closed by `"additionalProperties": false` and
//! requiring all its properties).

use serde_json::{Map, Value};

use super::{Rejection, invalid, missing, wrong_type};

/// Checks `response_format` against the request's `messages`.
pub(super) fn check(format: &Value, messages: &[Value]) -> Result<(), Rejection> {
    let Some(format) = format.as_object() else {
        return Err(wrong_type("response_format", "an object", format));
    };
    let kind = match format.get("type") {
        None => return Err(missing("response_format.type")),
        Some(Value::String(kind)) => kind.as_str(),
        Some(other) => return Err(wrong_type("response_format.type", "a string", other)),
    };
    let allowed: &[&str] = match kind {
        "text" | "json_object" => &["type"],
        "json_schema" => &["type", "json_schema"],
        other => {
            return Err(invalid(
                format!(
                    "Invalid value: '{other}'. Supported values are: 'json_object', 'json_schema', and 'text'."
                ),
                Some("response_format.type"),
                Some("invalid_value"),
            ));
        }
    };
    if let Some(key) = format.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(unknown(&format!("response_format.{key}")));
    }
    match kind {
        "json_object" if !mentions_json(messages) => Err(invalid(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.".to_owned(),
            Some("messages"),
            None,
        )),
        "json_schema" => check_json_schema(format.get("json_schema")),
        _ => Ok(()),
    }
}

fn unknown(param: &str) -> Rejection {
    invalid(
        format!("Unknown parameter: '{param}'."),
        Some(param),
        Some("unknown_parameter"),
    )
}

/// Whether a message's text says "json", in any case.
fn mentions_json(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        super::super::reply::content_text(&m["content"])
            .to_ascii_lowercase()
            .contains("json")
    })
}

fn check_json_schema(spec: Option<&Value>) -> Result<(), Rejection> {
    const AT: &str = "response_format.json_schema";
    let spec = match spec {
        None => return Err(missing(AT)),
        Some(Value::Object(spec)) => spec,
        Some(other) => return Err(wrong_type(AT, "an object", other)),
    };
    if let Some(key) = spec
        .keys()
        .find(|k| !["name", "description", "schema", "strict"].contains(&k.as_str()))
    {
        return Err(unknown(&format!("{AT}.{key}")));
    }
    let name = match spec.get("name") {
        None => return Err(missing(&format!("{AT}.name"))),
        Some(Value::String(name)) => name,
        Some(other) => return Err(wrong_type(&format!("{AT}.name"), "a string", other)),
    };
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(invalid(
            format!(
                "Invalid '{AT}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            ),
            Some(&format!("{AT}.name")),
            Some("invalid_value"),
        ));
    }
    let strict = match spec.get("strict") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(strict)) => *strict,
        Some(other) => return Err(wrong_type(&format!("{AT}.strict"), "a boolean", other)),
    };
    let schema = match spec.get("schema") {
        None => return Err(missing(&format!("{AT}.schema"))),
        Some(Value::Object(schema)) => schema,
        Some(other) => return Err(wrong_type(&format!("{AT}.schema"), "an object", other)),
    };
    let bad_schema = |why: String| {
        invalid(
            format!("Invalid schema for response_format '{name}': {why}"),
            Some("response_format"),
            None,
        )
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(bad_schema(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: {}'.",
            schema.get("type").unwrap_or(&Value::Null)
        )));
    }
    if strict {
        strict_problem(schema, &mut Vec::new()).map_or(Ok(()), |why| Err(bad_schema(why)))
    } else {
        Ok(())
    }
}

/// What strict mode refuses in `schema` (at `context`, the keys that lead to it), if
/// anything: an object that is not closed or does not require every property.
fn strict_problem(schema: &Map<String, Value>, context: &mut Vec<String>) -> Option<String> {
    let shown = || {
        let keys: Vec<String> = context.iter().map(|k| format!("'{k}'")).collect();
        match keys.len() {
            1 => format!("({},)", keys[0]),
            _ => format!("({})", keys.join(", ")),
        }
    };
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
        || schema.contains_key("properties");
    if is_object {
        if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
            return Some(format!(
                "In context={}, 'additionalProperties' is required to be supplied and to be false.",
                shown()
            ));
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(absent) = properties
            .into_iter()
            .flat_map(|p| p.keys())
            .find(|k| !required.contains(&k.as_str()))
        {
            return Some(format!(
                "In context={}, 'required' is required to be supplied and to be an array including every key in properties. Missing '{absent}'.",
                shown()
            ));
        }
    }
    for (key, nested) in schema {
        let children: Vec<(String, &Value)> = match (key.as_str(), nested) {
            ("properties" | "$defs" | "definitions", Value::Object(map)) => {
                map.iter().map(|(k, v)| (k.clone(), v)).collect()
            }
            ("items", item @ Value::Object(_)) => vec![(String::new(), item)],
            ("anyOf", Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => continue,
        };
        for (child, value) in children {
            let Some(value) = value.as_object() else {
                continue;
            };
            context.push(key.clone());
            if !child.is_empty() {
                context.push(child.clone());
            }
            let problem = strict_problem(value, context);
            if !child.is_empty() {
                context.pop();
            }
            context.pop();
            if problem.is_some() {
                return problem;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refusal(format: Value) -> String {
        let messages = [json!({"role": "user", "content": "hi"})];
        check(&format, &messages)
            .err()
            .map_or_else(String::new, |r| {
                r.body["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
    }

    #[test]
    fn formats_are_checked_like_the_real_api() {
        let closed = json!({"type": "object", "properties": {"pass": {"type": "boolean"}},
            "required": ["pass"], "additionalProperties": false});
        let ok = json!({"type": "json_schema",
            "json_schema": {"name": "verdict", "schema": closed, "strict": true}});
        assert_eq!(refusal(ok), "");
        assert_eq!(refusal(json!({"type": "text"})), "");
        assert!(refusal(json!({"type": "xml"})).starts_with("Invalid value: 'xml'"));
        assert!(refusal(json!({"type": "json_object"})).contains("the word 'json'"));
        assert_eq!(
            refusal(json!({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}})),
            "Missing required parameter: 'response_format.json_schema.name'."
        );
        assert_eq!(
            refusal(json!({"type": "json_schema", "json_schema": {"name": "v"}})),
            "Missing required parameter: 'response_format.json_schema.schema'."
        );
        let open = json!({"type": "json_schema", "json_schema": {"name": "v", "strict": true,
            "schema": {"type": "object", "properties": {"a": {"type": "object",
                "properties": {"b": {"type": "string"}}, "required": ["b"]}},
                "required": ["a"], "additionalProperties": false}}});
        assert_eq!(
            refusal(open),
            "Invalid schema for response_format 'v': In context=('properties', 'a'), 'additionalProperties' is required to be supplied and to be false."
        );
        let partial = json!({"type": "json_schema", "json_schema": {"name": "v", "strict": true,
            "schema": {"type": "object", "properties": {"a": {"type": "string"}},
                "additionalProperties": false}}});
        assert!(refusal(partial).contains("In context=(), 'required'"));
    }
}
