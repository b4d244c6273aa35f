//! Validates Sentinel TestSpec and TestSuite trees, applying a suite's defaults.
//!
//! Every rule of the Sentinel spec is checked, and each diagnostic carries the
//! spec's own validation block (see [`super::cx`]).

use super::cx::{At, Cx, Pyd, list_names, optional};
use crate::diag::{Diagnostic, did_you_mean};
use crate::model::sentinel::{
    Assertion, Defaults, Framework, InputSpec, Message, ModelConfig, OutputType, Pattern, Provider,
    Role, TestSpec, TestSuite, Tool, ToolSpec,
};
use crate::node::{Node, Value};

const SPEC_KEYS: [&str; 13] = [
    "name",
    "model",
    "inputs",
    "assertions",
    "description",
    "provider",
    "tools",
    "framework",
    "framework_config",
    "model_config",
    "seed",
    "timeout_ms",
    "tags",
];

const SUITE_KEYS: [&str; 6] = [
    "name",
    "tests",
    "description",
    "version",
    "defaults",
    "tags",
];
const INPUT_KEYS: [&str; 4] = ["query", "messages", "system_prompt", "context"];
const MODEL_CONFIG_KEYS: [&str; 5] = [
    "temperature",
    "max_tokens",
    "top_p",
    "top_k",
    "stop_sequences",
];

/// Validates a standalone TestSpec.
pub(crate) fn validate_spec(root: &Node, cx: &mut Cx) -> Option<TestSpec> {
    let at = At::root("TestSpec");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(entries, &at, &SPEC_KEYS, spec_key_hint);
    let fields = fields(root, &at, cx);
    let spec = resolve(root, &at, fields, &Defaults::default(), cx);
    (cx.errors() == before).then_some(spec).flatten()
}

/// Validates a TestSuite, giving each test the defaults it does not set itself.
pub(crate) fn validate_suite(root: &Node, cx: &mut Cx) -> Option<TestSuite> {
    let at = At::root("TestSuite");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(entries, &at, &SUITE_KEYS, |k| {
        SPEC_KEYS.contains(&k).then(|| {
            format!("a suite does not take `{k}`; put it under `defaults` to give it to every test")
        })
    });
    let name = required_name(root, &at, cx);
    let description = optional(root, "description", |n| {
        cx.string(n, &at.key("description"))
    });
    let version = optional(root, "version", |n| cx.string(n, &at.key("version")));
    let tags = optional(root, "tags", |n| cx.string_list(n, &at.key("tags")));
    let defaults = optional(root, "defaults", |n| {
        let at = at.key("defaults").model("Defaults");
        let entries = cx.object(n, &at)?;
        let allowed: Vec<&str> = SPEC_KEYS.iter().copied().filter(|k| *k != "name").collect();
        cx.unknown_keys(entries, &at, &allowed, |k| {
            if k == "name" {
                Some("each test names itself; `name` cannot be a default".to_owned())
            } else {
                spec_key_hint(k)
            }
        });
        Some(fields(n, &at, cx))
    });
    let tests = match root.get("tests") {
        None => {
            cx.missing(root, &at, "tests", "a list of tests");
            None
        }
        Some(node) => {
            let at = at.key("tests");
            cx.nonempty_list(node, &at).map(|items| {
                let defaults = defaults.clone().flatten().unwrap_or_default();
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| {
                        let at = at.index(i).model("TestSpec");
                        let entries = cx.object(item, &at)?;
                        cx.unknown_keys(entries, &at, &SPEC_KEYS, spec_key_hint);
                        let fields = fields(item, &at, cx);
                        resolve(item, &at, fields, &defaults, cx)
                    })
                    .collect::<Vec<_>>()
            })
        }
    };
    if cx.errors() > before {
        return None;
    }
    Some(TestSuite {
        name: name?,
        tests: tests?,
        description: description?,
        version: version?,
        defaults: defaults?,
        tags: tags?,
    })
}

fn spec_key_hint(key: &str) -> Option<String> {
    if MODEL_CONFIG_KEYS.contains(&key) {
        return Some(format!("`{key}` goes under `model_config`"));
    }
    if INPUT_KEYS.contains(&key) {
        return Some(format!("`{key}` goes under `inputs`"));
    }
    if Assertion::NAMES.contains(&key) {
        return Some(format!(
            "`{key}` is an assertion; write it as an item of `assertions`"
        ));
    }
    None
}

fn required_name(root: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    match root.get("name") {
        Some(n) => cx.nonempty_string(n, &at.key("name")),
        None => {
            cx.missing(root, at, "name", "a non-empty string");
            None
        }
    }
}

/// Every field but `name`, each validated on its own; absent fields are `None`.
/// Fields with errors are also `None` (their diagnostics are already in `cx`).
fn fields(node: &Node, at: &At, cx: &mut Cx) -> Defaults {
    Defaults {
        model: flat(optional(node, "model", |n| {
            cx.nonempty_string(n, &at.key("model"))
        })),
        inputs: flat(optional(node, "inputs", |n| {
            inputs(n, &at.key("inputs").model("InputSpec"), cx)
        })),
        assertions: flat(optional(node, "assertions", |n| {
            assertions(n, &at.key("assertions"), cx)
        })),
        description: flat(optional(node, "description", |n| {
            cx.string(n, &at.key("description"))
        })),
        provider: flat(optional(node, "provider", |n| {
            let name = cx.choice(n, &at.key("provider"), &Provider::NAMES, true)?;
            Provider::from_name(&name)
        })),
        tools: flat(optional(node, "tools", |n| tools(n, &at.key("tools"), cx))),
        framework: flat(optional(node, "framework", |n| {
            let name = cx.choice(n, &at.key("framework"), &Framework::NAMES, true)?;
            Framework::from_name(&name)
        })),
        framework_config: flat(optional(node, "framework_config", |n| {
            cx.dict(n, &at.key("framework_config"))
        })),
        model_config: flat(optional(node, "model_config", |n| {
            model_config(n, &at.key("model_config").model("ModelConfig"), cx)
        })),
        seed: flat(optional(node, "seed", |n| cx.integer(n, &at.key("seed")))),
        timeout_ms: flat(optional(node, "timeout_ms", |n| {
            cx.positive(n, &at.key("timeout_ms"))
        })),
        tags: flat(optional(node, "tags", |n| {
            cx.string_list(n, &at.key("tags"))
        })),
    }
}

fn pick<T: Clone>(set: bool, own: Option<T>, default: &Option<T>) -> Option<T> {
    if set { own } else { default.clone() }
}

fn flat<T>(r: Option<Option<T>>) -> Option<T> {
    r.flatten()
}

/// Applies defaults and checks the rules that span fields.
fn resolve(
    node: &Node,
    at: &At,
    own: Defaults,
    defaults: &Defaults,
    cx: &mut Cx,
) -> Option<TestSpec> {
    let name = required_name(node, at, cx);
    let has = |k: &str| node.get(k).is_some_and(|n| n.value != Value::Null);
    let model = pick(has("model"), own.model, &defaults.model);
    let inputs = pick(has("inputs"), own.inputs, &defaults.inputs);
    let assertions = pick(has("assertions"), own.assertions, &defaults.assertions);
    let tools = pick(has("tools"), own.tools, &defaults.tools);
    let framework = pick(has("framework"), own.framework, &defaults.framework);
    let from_defaults = if at.path.is_empty() {
        ""
    } else {
        " (and `defaults` gives none)"
    };
    for (key, what, ok) in [
        ("model", "a model name", model.is_some() || has("model")),
        (
            "inputs",
            "an inputs object",
            inputs.is_some() || has("inputs"),
        ),
        (
            "assertions",
            "a list of assertions",
            assertions.is_some() || has("assertions"),
        ),
    ] {
        if !ok {
            let before = cx.diags.len();
            cx.missing(node, at, key, what);
            if let Some(d) = cx.diags.get_mut(before) {
                d.message.push_str(from_defaults);
            }
        }
    }
    if framework.is_some() && tools.is_none() {
        let fw = node.get("framework").unwrap_or(node);
        let d = Diagnostic::new(
            "value-error",
            at.key("framework").path,
            "framework requires tools to be specified",
        )
        .at(fw.span)
        .help("add `tools`, or remove `framework`");
        cx.report(
            d,
            &at.key("framework"),
            Some(Pyd::new(
                "value_error",
                "framework requires tools to be specified",
            )),
            None,
        );
        return None;
    }
    if let Some(list) = &assertions {
        token_bounds(node, at, list, cx);
    }
    Some(TestSpec {
        name: name?,
        model: model?,
        inputs: inputs?,
        assertions: assertions?,
        description: pick(has("description"), own.description, &defaults.description),
        provider: pick(has("provider"), own.provider, &defaults.provider),
        tools,
        framework,
        framework_config: pick(
            has("framework_config"),
            own.framework_config,
            &defaults.framework_config,
        ),
        model_config: pick(
            has("model_config"),
            own.model_config,
            &defaults.model_config,
        ),
        seed: pick(has("seed"), own.seed, &defaults.seed),
        timeout_ms: pick(has("timeout_ms"), own.timeout_ms, &defaults.timeout_ms),
        tags: pick(has("tags"), own.tags, &defaults.tags),
    })
}

/// `min_tokens` above `max_tokens` can never pass.
fn token_bounds(node: &Node, at: &At, list: &[Assertion], cx: &mut Cx) {
    let min = list.iter().find_map(|a| match a {
        Assertion::MinTokens(n) => Some(*n),
        _ => None,
    });
    let max = list.iter().find_map(|a| match a {
        Assertion::MaxTokens(n) => Some(*n),
        _ => None,
    });
    if let (Some(min), Some(max)) = (min, max) {
        if min > max {
            let span = node.get("assertions").map(|n| n.span).unwrap_or(node.span);
            let sentence =
                format!("min_tokens {min} is greater than max_tokens {max}; no output can pass");
            let d = Diagnostic::new("value-error", at.key("assertions").path, sentence.clone())
                .at(span);
            cx.report(
                d,
                &at.key("assertions"),
                Some(Pyd::new("value_error", sentence)),
                None,
            );
        }
    }
}

fn non_negative(node: &Node, at: &At, cx: &mut Cx) -> Option<u64> {
    let n = cx.integer(node, at)?;
    if n < 0 {
        cx.range_error(
            node,
            at,
            "at least 0",
            Pyd::new(
                "greater_than_equal",
                "Input should be greater than or equal to 0",
            ),
        );
        return None;
    }
    u64::try_from(n).ok()
}

fn inputs(node: &Node, at: &At, cx: &mut Cx) -> Option<InputSpec> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &INPUT_KEYS, |k| match k {
        "prompt" | "text" | "question" | "input" => {
            Some("a single user message goes in `query`".to_owned())
        }
        "system" => Some("did you mean `system_prompt`?".to_owned()),
        _ => None,
    });
    let query = optional(node, "query", |n| cx.string(n, &at.key("query")));
    let system_prompt = optional(node, "system_prompt", |n| {
        cx.string(n, &at.key("system_prompt"))
    });
    let context = optional(node, "context", |n| cx.dict(n, &at.key("context")));
    let messages = optional(node, "messages", |n| {
        let at = at.key("messages");
        let items = cx.nonempty_list(n, &at)?;
        let out: Vec<Option<Message>> = items
            .iter()
            .enumerate()
            .map(|(i, m)| message(m, &at.index(i).model("Message"), cx))
            .collect();
        out.into_iter().collect::<Option<Vec<_>>>()
    });
    if cx.errors() > before {
        return None;
    }
    let spec = InputSpec {
        query: query?,
        messages: messages?,
        system_prompt: system_prompt?,
        context: context?,
    };
    if spec.query.is_none()
        && spec.messages.is_none()
        && spec.system_prompt.is_none()
        && spec.context.is_none()
    {
        let sentence = "at least one of query, messages, system_prompt or context must be provided";
        let d = Diagnostic::new("value-error", &at.path, sentence)
            .at(node.span)
            .expected(format!("one of {}", list_names(&INPUT_KEYS)));
        cx.report(
            d,
            at,
            Some(Pyd::new("value_error", format!("Value error, {sentence}"))),
            Some(node),
        );
        return None;
    }
    Some(spec)
}

fn message(node: &Node, at: &At, cx: &mut Cx) -> Option<Message> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &["role", "content"], |_| None);
    let role = match node.get("role") {
        None => {
            cx.missing(node, at, "role", "`user`, `assistant` or `system`");
            None
        }
        Some(n) => cx
            .choice(n, &at.key("role"), &Role::NAMES, true)
            .map(|r| match r.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => Role::System,
            }),
    };
    let content = match node.get("content") {
        None => {
            cx.missing(node, at, "content", "a non-empty string");
            None
        }
        Some(n) => cx.nonempty_string(n, &at.key("content")),
    };
    if cx.errors() > before {
        return None;
    }
    Some(Message {
        role: role?,
        content: content?,
    })
}

fn model_config(node: &Node, at: &At, cx: &mut Cx) -> Option<ModelConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &MODEL_CONFIG_KEYS, |k| match k {
        "seed" | "timeout_ms" => Some(format!(
            "`{k}` is a field of the test, not of `model_config`"
        )),
        "stop" => Some("did you mean `stop_sequences`?".to_owned()),
        _ => None,
    });
    let ranged = |cx: &mut Cx, name: &str, max: f64| {
        optional(node, name, |n| {
            let at = at.key(name);
            let v = cx.number(n, &at)?;
            if v < 0.0 {
                cx.range_error(
                    n,
                    &at,
                    "at least 0.0",
                    Pyd::new(
                        "greater_than_equal",
                        "Input should be greater than or equal to 0.0",
                    ),
                );
                return None;
            }
            if v > max {
                cx.range_error(
                    n,
                    &at,
                    &format!("at most {max:.1}"),
                    Pyd::new(
                        "less_than_equal",
                        format!("Input should be less than or equal to {max:.1}"),
                    ),
                );
                return None;
            }
            Some(v)
        })
    };
    let temperature = ranged(cx, "temperature", 2.0);
    let top_p = ranged(cx, "top_p", 1.0);
    let max_tokens = optional(node, "max_tokens", |n| {
        cx.positive(n, &at.key("max_tokens"))
    });
    let top_k = optional(node, "top_k", |n| cx.positive(n, &at.key("top_k")));
    let stop_sequences = optional(node, "stop_sequences", |n| {
        cx.string_list(n, &at.key("stop_sequences"))
    });
    if cx.errors() > before {
        return None;
    }
    Some(ModelConfig {
        temperature: temperature?,
        max_tokens: max_tokens?,
        top_p: top_p?,
        top_k: top_k?,
        stop_sequences: stop_sequences?,
    })
}

fn tools(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<Tool>> {
    let items = cx.list(node, at)?;
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let tool = match &item.value {
            Value::String(_) => cx.nonempty_string(item, &at).map(Tool::Name),
            Value::Object(_) => tool_spec(item, &at.model("ToolSpec"), cx).map(Tool::Spec),
            _ => {
                cx.type_error(
                    item,
                    &at,
                    "a tool name or a tool specification",
                    Pyd::new("model_type", "Input should be a valid string or a valid dictionary or instance of ToolSpec"),
                );
                None
            }
        };
        match tool {
            Some(t) => {
                if out.iter().any(|o: &Tool| o.name() == t.name()) {
                    let d = Diagnostic::new(
                        "duplicate-value",
                        &at.path,
                        format!("tool `{}` is listed twice", t.name()),
                    )
                    .at(item.span);
                    cx.report(d, &at, None, None);
                    ok = false;
                }
                out.push(t);
            }
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn tool_spec(node: &Node, at: &At, cx: &mut Cx) -> Option<ToolSpec> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &["name", "description", "parameters"],
        |k| match k {
            "input_schema" | "schema" | "args" | "arguments" => {
                Some("the JSON Schema of the arguments goes in `parameters`".to_owned())
            }
            _ => None,
        },
    );
    let name = match node.get("name") {
        None => {
            cx.missing(node, at, "name", "a non-empty string");
            None
        }
        Some(n) => cx.nonempty_string(n, &at.key("name")),
    };
    let description = optional(node, "description", |n| {
        cx.string(n, &at.key("description"))
    });
    let parameters = optional(node, "parameters", |n| {
        let at = at.key("parameters");
        let map = cx.dict(n, &at)?;
        let schema = serde_json::Value::Object(map.clone());
        if let Some(problem) = json_schema_problem(&schema) {
            let sentence = format!("parameters is not a valid JSON Schema: {problem}");
            let d = Diagnostic::new("invalid-json-schema", &at.path, sentence.clone())
                .at(n.span)
                .expected("a JSON Schema, e.g. `{type: object, properties: {...}}`");
            cx.report(
                d,
                &at,
                Some(Pyd::new("value_error", format!("Value error, {sentence}"))),
                None,
            );
            return None;
        }
        Some(map)
    });
    if cx.errors() > before {
        return None;
    }
    Some(ToolSpec {
        name: name?,
        description: description?,
        parameters: parameters?,
    })
}

/// Why `schema` is not a valid JSON Schema, if it is not.
fn json_schema_problem(schema: &serde_json::Value) -> Option<String> {
    const KNOWN: [&str; 5] = [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    ];
    if let Some(declared) = schema.get("$schema") {
        let known = declared.as_str().is_some_and(|s| {
            KNOWN
                .iter()
                .any(|k| k.trim_end_matches('#') == s.trim_end_matches('#'))
        });
        if !known {
            return Some(format!("unknown `$schema` {declared}"));
        }
    }
    jsonschema::meta::validate(schema).err().map(|e| {
        let path = e.instance_path().to_string();
        if path.is_empty() {
            e.to_string()
        } else {
            format!("at `{path}`: {e}")
        }
    })
}

fn assertions(node: &Node, at: &At, cx: &mut Cx) -> Option<Vec<Assertion>> {
    let items = cx.nonempty_list(node, at)?;
    let out: Vec<Option<Assertion>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| assertion(item, &at.index(i), cx))
        .collect();
    out.into_iter().collect()
}

fn assertion(node: &Node, at: &At, cx: &mut Cx) -> Option<Assertion> {
    let Value::Object(entries) = &node.value else {
        let d = Diagnostic::new(
            "invalid-type",
            &at.path,
            format!(
                "expected an assertion such as `must_contain: \"x\"`, found {}",
                super::cx::a_type(node)
            ),
        )
        .at(node.span)
        .expected(format!(
            "an object with one key: {}",
            list_names(&Assertion::NAMES)
        ))
        .maybe_help(node.as_str().and_then(|s| {
            Assertion::NAMES
                .contains(&s)
                .then(|| format!("give `{s}` a value: `- {s}: ...`"))
        }));
        cx.report(
            d,
            at,
            Some(Pyd::new("dict_type", "Input should be a valid dictionary")),
            Some(node),
        );
        return None;
    };
    if entries.len() != 1 {
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
        let sentence = format!(
            "an assertion has exactly one key, found {}{}",
            entries.len(),
            if keys.is_empty() {
                String::new()
            } else {
                format!(": {}", list_names(&keys))
            }
        );
        let d = Diagnostic::new("invalid-assertion", &at.path, sentence.clone())
            .at(node.span)
            .help("write each assertion as its own list item");
        cx.report(
            d,
            at,
            Some(Pyd::new("value_error", format!("Value error, {sentence}"))),
            Some(node),
        );
        return None;
    }
    let (key, value) = &entries[0];
    let at = at.key(&key.name);
    let pos = |cx: &mut Cx| cx.positive(value, &at);
    match key.name.as_str() {
        "must_contain" => cx.nonempty_string(value, &at).map(Assertion::MustContain),
        "must_not_contain" => cx
            .nonempty_string(value, &at)
            .map(Assertion::MustNotContain),
        "regex_match" => {
            let pattern = cx.nonempty_string(value, &at)?;
            let compiled = cx
                .regexes
                .entry(pattern.clone())
                .or_insert_with(|| {
                    Pattern::new(&pattern).map_err(|e| first_line_of_regex_error(&e))
                })
                .clone();
            match compiled {
                Ok(compiled) => Some(Assertion::RegexMatch(compiled)),
                Err(why) => {
                    let sentence = format!("invalid regular expression: {why}");
                    let d =
                        Diagnostic::new("invalid-regex", &at.path, sentence.clone()).at(value.span);
                    cx.report(
                        d,
                        &at,
                        Some(Pyd::new("value_error", format!("Value error, {sentence}"))),
                        Some(value),
                    );
                    None
                }
            }
        }
        "must_call_tool" => match &value.value {
            Value::String(_) => cx
                .nonempty_string(value, &at)
                .map(|s| Assertion::MustCallTool(vec![s])),
            Value::Array(_) => {
                let items = cx.nonempty_list(value, &at)?;
                let names: Vec<Option<String>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| cx.nonempty_string(n, &at.index(i)))
                    .collect();
                names
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Assertion::MustCallTool)
            }
            _ => {
                cx.type_error(
                    value,
                    &at,
                    "a tool name or a list of them",
                    Pyd::new(
                        "string_type",
                        "Input should be a valid string or a valid list",
                    ),
                );
                None
            }
        },
        "output_type" => {
            let name = cx.choice(value, &at, &OutputType::NAMES, true)?;
            OutputType::from_name(&name).map(Assertion::OutputType)
        }
        "max_latency_ms" => pos(cx).map(Assertion::MaxLatencyMs),
        "min_tokens" => non_negative(value, &at, cx).map(Assertion::MinTokens),
        "max_tokens" => pos(cx).map(Assertion::MaxTokens),
        other => {
            let d = Diagnostic::new(
                "unknown-assertion",
                &at.path,
                format!("unknown assertion `{other}`"),
            )
            .at(key.span)
            .expected(format!("one of {}", list_names(&Assertion::NAMES)))
            .maybe_help(did_you_mean(other, Assertion::NAMES.iter().copied()));
            cx.report(
                d,
                &at,
                Some(Pyd::new(
                    "literal_error",
                    format!("Input should be {}", python_or(&Assertion::NAMES)),
                )),
                None,
            );
            None
        }
    }
}

fn python_or(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

/// The regex crate's message is a multi-line snippet; keep its last line, the reason.
fn first_line_of_regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: ").map(str::to_owned))
        .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_owned())
}
