//! The OpenAI fake's check of a request body against OpenAI's own published definition:
//! `CreateChatCompletionRequest` from the OpenAPI document of `openai/openai-openapi`,
//! vendored as `data/openai/chat-completions-request.json` (an extract made by
//! `data/openai/extract.py`; provenance and licence next to it).
//!
//! OpenAPI 3.x schemas are JSON Schema with a few additions; two are translated: a
//! `nullable: true` schema also takes `null`, and the `#/components/schemas/X`
//! references resolve inside the extract. The document leaves objects open, so the
//! fields it names (through `allOf`) are also the only ones the fake accepts, as the
//! real API refuses any other ("Unrecognized request argument supplied").

use std::collections::BTreeSet;
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use super::{Rejection, invalid};

/// The vendored extract.
const EXTRACT: &str = include_str!("../../../data/openai/chat-completions-request.json");

/// The request schema's name in the document.
const ROOT: &str = "CreateChatCompletionRequest";

/// The definition: the compiled schema and the top-level fields it names.
struct Definition {
    validator: jsonschema::Validator,
    fields: BTreeSet<String>,
}

static DEFINITION: LazyLock<Definition> = LazyLock::new(|| {
    let extract: Value = serde_json::from_str(EXTRACT).expect("the vendored extract is JSON");
    let schemas = &extract["components"]["schemas"];
    let mut fields = BTreeSet::new();
    collect_fields(schemas, &schemas[ROOT], &mut fields);
    let schema = json!({
        "$ref": format!("#/components/schemas/{ROOT}"),
        "components": {"schemas": translate(schemas)},
    });
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .expect("OpenAI's request schema compiles");
    Definition { validator, fields }
});

/// `schema` with every `nullable: true` made to take `null` as well.
fn translate(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(translate).collect()),
        Value::Object(object) => {
            let mut out: Map<String, Value> = object
                .iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, v)| (k.clone(), translate(v)))
                .collect();
            if object.get("nullable") != Some(&Value::Bool(true)) {
                return Value::Object(out);
            }
            match out.get("type").cloned() {
                Some(Value::String(kind)) => {
                    out.insert("type".into(), json!([kind, "null"]));
                    if let Some(Value::Array(values)) = out.get_mut("enum") {
                        values.push(Value::Null);
                    }
                    Value::Object(out)
                }
                _ => json!({"anyOf": [Value::Object(out), {"type": "null"}]}),
            }
        }
        other => other.clone(),
    }
}

/// The properties `schema` names, directly or through `allOf` and references.
fn collect_fields(schemas: &Value, schema: &Value, fields: &mut BTreeSet<String>) {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        collect_fields(schemas, &schemas[name], fields);
    }
    if let Some(properties) = schema["properties"].as_object() {
        fields.extend(properties.keys().cloned());
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        collect_fields(schemas, part, fields);
    }
}

/// Whether the definition names `field` at the top level.
pub(super) fn knows(field: &str) -> bool {
    DEFINITION.fields.contains(field)
}

/// A 400 for the first top-level field of `body` the definition does not name, as the
/// real API answers it.
pub(super) fn check_fields(body: &Value) -> Result<(), Rejection> {
    match body.as_object().and_then(|f| f.keys().find(|k| !knows(k))) {
        Some(unknown) => Err(invalid(
            format!("Unrecognized request argument supplied: {unknown}"),
            None,
            None,
        )),
        None => Ok(()),
    }
}

/// Checks `body` against the definition's schema (the names of its fields are
/// [`check_fields`]' to check): a 400 with the first problem otherwise, its place as `param`
/// (`messages[0].role`).
pub(super) fn check(body: &Value) -> Result<(), Rejection> {
    // Nearly every request is valid: `is_valid` answers that without collecting the
    // errors of every branch of every `oneOf` and `anyOf` it tries, which
    // `iter_errors` does; the errors are looked for only when there is one.
    if DEFINITION.validator.is_valid(body) {
        return Ok(());
    }
    let Some(error) = DEFINITION.validator.iter_errors(body).next() else {
        return Ok(());
    };
    let param = param_of(&error.instance_path().to_string());
    Err(invalid(
        format!("Invalid '{param}': {error}"),
        Some(param.as_str()).filter(|p| !p.is_empty()),
        Some("invalid_value"),
    ))
}

/// A JSON pointer as OpenAI names a parameter: `/messages/0/role` → `messages[0].role`.
fn param_of(pointer: &str) -> String {
    let mut param = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            param.push_str(&format!("[{part}]"));
        } else {
            if !param.is_empty() {
                param.push('.');
            }
            param.push_str(part);
        }
    }
    param
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_names_the_fields_and_refuses_wrong_shapes() {
        assert!(knows("max_completion_tokens") && knows("max_tokens") && knows("temperature"));
        assert!(!knows("top_k"));
        let top_k =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_k": 5});
        assert!(check_fields(&top_k).is_err());
        let ok = json!({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 5, "stream": true, "stream_options": {"include_usage": true}});
        assert!(check(&ok).is_ok(), "{:?}", check(&ok).err().map(|r| r.body));
        let tgi_format = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json", "value": {"type": "object"}}});
        assert!(check(&tgi_format).is_err());
        let bad_role = json!({"model": "m", "messages": [{"role": "robot", "content": "hi"}]});
        let r = check(&bad_role).unwrap_err();
        assert_eq!(r.status, 400);
        assert!(
            r.body["error"]["param"]
                .as_str()
                .unwrap()
                .starts_with("messages[0]")
        );
        assert_eq!(param_of("/messages/0/role"), "messages[0].role");
    }
}
