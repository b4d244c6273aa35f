//! The JSON Schema of `framework_config`, which depends on `framework`: the keys of the
//! built-in tool loop ([`super::framework::LOOP_KEYS`]) for `openai-sdk`, `claude-sdk`
//! and `strands`, LangGraph's ([`super::framework::LANGGRAPH_KEYS`]) for `langgraph`.
//!
//! A test, a suite test and a suite's `defaults` each get [`framework_rules`]: `if`
//! `framework` is one of them, `then` `framework_config` has its keys, and the provider
//! is not of another kind. What JSON Schema cannot say is left to `prill validate`: a
//! `framework_config` of a test whose framework comes from the suite's `defaults`, the
//! kind of a provider named in `prill.toml`, and whether the model can call tools.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use super::framework::{DEFAULT_ASSISTANT, DEFAULT_MAX_ITERATIONS, MAX_ITERATIONS_LIMIT};
use super::provider::ProviderKind;
use super::sentinel::Framework;

/// `framework_config` as a field: an object whose keys [`framework_rules`] give by
/// `framework`. Generating it puts [`LoopSchema`] and [`LanggraphSchema`] in `$defs`.
pub(crate) struct FrameworkConfigSchema;

impl JsonSchema for FrameworkConfigSchema {
    fn schema_name() -> Cow<'static, str> {
        "FrameworkConfig".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<LoopSchema>();
        generator.subschema_for::<LanggraphSchema>();
        json_schema!({
            "type": "object",
            "description": "The framework's settings: `LoopConfig` for `openai-sdk`, `claude-sdk` and `strands`, `LanggraphConfig` for `langgraph`. Sentinel takes any dictionary; Prill checks every key."
        })
    }
}

/// The built-in tool loop's `framework_config`.
pub(crate) struct LoopSchema;

impl JsonSchema for LoopSchema {
    fn schema_name() -> Cow<'static, str> {
        "LoopConfig".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let delay = json!({
            "description": "Seconds the tool takes before it answers; past the call's limit it is a timeout.",
            "type": "number", "minimum": 0, "maximum": 3600
        });
        let settings = json!({
            "if": {"type": "object", "minProperties": 1, "propertyNames": {"enum": ["value", "error", "delay_in_seconds"]}},
            "then": {
                "properties": {"error": {"type": "string"}, "delay_in_seconds": delay},
                "oneOf": [{"required": ["value"]}, {"required": ["error"]}]
            }
        });
        let row = json!({
            "description": "A row: the arguments it answers (each key must equal the call's argument; `\"*\"` any value) and its `result`, the tool's `error` message, or a `sequence` of answers for the calls it matches.",
            "type": "object",
            "properties": {
                "args": {"type": "object"},
                "result": true,
                "error": {"type": "string"},
                "sequence": {"type": "array", "minItems": 1, "items": settings},
                "delay_in_seconds": delay
            },
            "additionalProperties": false,
            "oneOf": [{"required": ["result"]}, {"required": ["error"]}, {"required": ["sequence"]}]
        });
        let expect_calls = json!({
            "description": "What the calls the mock receives must be: a count, `{min, max}`, or each call's arguments in order (`\"*\"` any value).",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "object", "properties": {"min": {"type": "integer", "minimum": 0}, "max": {"type": "integer", "minimum": 0}}, "additionalProperties": false, "minProperties": 1},
                {"type": "array", "items": {"type": "object"}}
            ]
        });
        let tool_result = json!({
            "description": "What the tool returns. Any JSON value is returned every call, but for these forms: a list (or `{sequence: [...]}`) is one answer per call, in order, each a value, `{value: X}` or `{error: \"...\"}` (a call past its end is an error); `{value: X}` returns X every call (X may be a list); `{error: \"...\"}` fails every call with that message; `{by_args: [rows], default: ...}` answers by arguments: the first row whose every `args` key matches the call's argument, else `default`, else an error. Beside these, `delay_in_seconds` and `expect_calls` (docs/frameworks.md).",
            "if": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"enum": ["value", "error", "sequence", "by_args", "default", "delay_in_seconds", "expect_calls"]}
            },
            "then": {
                "properties": {
                    "error": {"type": "string"},
                    "sequence": {"type": "array", "minItems": 1, "items": settings},
                    "by_args": {"type": "array", "minItems": 1, "items": row},
                    "default": settings,
                    "delay_in_seconds": delay,
                    "expect_calls": expect_calls
                },
                "oneOf": [{"required": ["value"]}, {"required": ["error"]}, {"required": ["sequence"]}, {"required": ["by_args"]}]
            },
            "else": {
                "if": {"type": "array"},
                "then": {"items": settings}
            }
        });
        json_schema!({
            "description": "The settings of Prill's built-in tool loop (`openai-sdk`, `claude-sdk`, `strands`).",
            "type": "object",
            "properties": {
                "max_iterations": iterations(),
                "intermediate_steps": steps(),
                "tool_results": {
                    "description": "Each tool's results, by tool name.",
                    "type": "object",
                    "additionalProperties": tool_result
                },
                "tool_command": {
                    "description": "A program that answers the calls of the tools `tool_results` does not name, one JSON line each way (docs/tools.md): a command line run by `sh -c`, or a program and its arguments.",
                    "anyOf": [
                        {"type": "string", "pattern": "\\S"},
                        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
                    ]
                },
                "tool_mcp": {
                    "description": "An MCP server, started over stdio once per sample, whose tools answer the calls of the tools `tool_results` does not name (docs/tools.md); instead of `tool_command`: a command line run by `sh -c`, or a program and its arguments.",
                    "anyOf": [
                        {"type": "string", "pattern": "\\S"},
                        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
                    ]
                },
                "retry_policy": {
                    "description": "Retries of a model call that failed in a way worth retrying (unreachable, rate limited, failing on the provider's side).",
                    "type": "object",
                    "properties": {
                        "max_retries": {"type": "integer", "minimum": 0, "maximum": 10, "default": 0},
                        "backoff": {"enum": ["exponential", "linear", "constant"], "default": "exponential"}
                    },
                    "additionalProperties": false
                }
            },
            "not": {"required": ["tool_command", "tool_mcp"]},
            "additionalProperties": false
        })
    }
}

/// LangGraph's `framework_config`.
pub(crate) struct LanggraphSchema;

impl JsonSchema for LanggraphSchema {
    fn schema_name() -> Cow<'static, str> {
        "LanggraphConfig".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The settings of a LangGraph assistant (`langgraph`).",
            "type": "object",
            "properties": {
                "assistant_id": {
                    "description": "The assistant (or graph) to run.",
                    "type": "string",
                    "pattern": "\\S",
                    "default": DEFAULT_ASSISTANT
                },
                "max_iterations": iterations(),
                "intermediate_steps": steps(),
                "config": {
                    "description": "The run's `config.configurable`, sent as is.",
                    "type": "object"
                }
            },
            "additionalProperties": false
        })
    }
}

fn iterations() -> Value {
    json!({
        "description": "The most model calls; reaching it without a final answer is an error.",
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_ITERATIONS_LIMIT,
        "default": DEFAULT_MAX_ITERATIONS
    })
}

fn steps() -> Value {
    json!({
        "description": "Whether the report keeps every message of the run, not only the trajectory.",
        "type": "boolean",
        "default": false
    })
}

/// The rules that tie `framework_config` and `provider` to `framework`, for the
/// `allOf` of an object that has those three fields.
pub(crate) fn framework_rules(schema: &mut Schema) {
    let when = |frameworks: &[Framework]| {
        let names: Vec<&str> = frameworks.iter().map(|f| f.name()).collect();
        json!({"required": ["framework"], "properties": {"framework": {"enum": names}}})
    };
    let config = |def: &str| {
        json!({"properties": {"framework_config": {
            "anyOf": [{"$ref": format!("#/$defs/{def}")}, {"type": "null"}]
        }}})
    };
    let mut rules = vec![
        json!({"if": when(&[Framework::Langgraph]), "then": config("LanggraphConfig")}),
        json!({
            "if": when(&[Framework::OpenaiSdk, Framework::ClaudeSdk, Framework::Strands]),
            "then": config("LoopConfig")
        }),
    ];
    for framework in [Framework::OpenaiSdk, Framework::ClaudeSdk] {
        let Some(required) = framework.required_provider() else {
            continue;
        };
        let others: Vec<&str> = ProviderKind::NAMES
            .into_iter()
            .filter(|k| *k != required.name())
            .collect();
        rules.push(json!({
            "if": when(&[framework]),
            "then": {"properties": {"provider": {"not": {"enum": others}}}}
        }));
    }
    schema.insert("allOf".to_owned(), Value::Array(rules));
}
