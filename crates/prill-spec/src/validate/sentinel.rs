//! Validates Sentinel TestSpec and TestSuite trees, applying a suite's defaults.
//!
//! Every rule of the Sentinel spec is checked, and each diagnostic of a rule the DSL
//! has carries the spec's own validation block (see [`super::cx`]); Prill's stricter
//! rules say that they are Prill's.

mod assertions;
mod framework;
mod refused;
pub(super) mod state;
#[cfg(test)]
mod testing;
pub(super) mod trajectory;

use super::cx::{At, Cx, Pyd, list_names, optional};
use crate::diag::Diagnostic;
use crate::model::provider::{ProviderKind, ProviderName};
use crate::model::sentinel::{
    Defaults, Framework, InputSpec, Message, ModelConfig, Role, TestSpec, TestSuite, Tool, ToolSpec,
};
use crate::node::{Node, Span, Value};

const SPEC_KEYS: [&str; 16] = [
    "name",
    "model",
    "inputs",
    "assertions",
    "description",
    "category",
    "provider",
    "tools",
    "framework",
    "framework_config",
    "model_config",
    "seed",
    "timeout_ms",
    "reliability",
    "tags",
    "user",
];

const SUITE_KEYS: [&str; 7] = [
    "name",
    "tests",
    "description",
    "version",
    "category",
    "defaults",
    "tags",
];
/// The providers in the order of Sentinel's `Literal`, which its validation message
/// lists (`ProviderKind::NAMES` has Prill's order).
const SENTINEL_PROVIDERS: [&str; 5] = ["anthropic", "openai", "bedrock", "huggingface", "ollama"];
const INPUT_KEYS: [&str; 4] = ["query", "messages", "system_prompt", "context"];
const MODEL_CONFIG_KEYS: [&str; 5] = [
    "temperature",
    "max_tokens",
    "top_p",
    "top_k",
    "stop_sequences",
];

/// Removes the top-level keys that start with `x-`: in YAML they hold anchors for
/// aliases elsewhere in the file (as docker-compose allows), and say nothing themselves.
pub(crate) fn drop_anchor_holders(root: &mut Node) {
    if let Value::Object(entries) = &mut root.value {
        entries.retain(|(key, _)| !key.name.starts_with("x-"));
    }
}

/// Validates a standalone TestSpec.
pub(crate) fn validate_spec(root: &Node, cx: &mut Cx) -> Option<TestSpec> {
    let at = At::root("TestSpec");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(entries, &at, &SPEC_KEYS, |k| top_key_hint(k, spec_key_hint));
    let fields = fields(root, &at, cx);
    let spec = resolve(root, &at, fields, &Defaults::default(), cx);
    if let Some(spec) = &spec {
        let checked = Checked {
            test: spec,
            node: root,
            prefix: String::new(),
            at: at.clone(),
        };
        refused::check(std::slice::from_ref(&checked), None, cx);
        framework::check(std::slice::from_ref(&checked), None, cx);
    }
    (cx.errors() == before).then_some(spec).flatten()
}

/// Validates a TestSuite, giving each test the defaults it does not set itself.
pub(crate) fn validate_suite(root: &Node, cx: &mut Cx) -> Option<TestSuite> {
    let before = cx.errors();
    let header = suite_header(root, cx)?;
    let tests = match root.get("tests") {
        None => {
            cx.missing(root, &At::root("TestSuite"), "tests", "a list of tests");
            None
        }
        Some(node) => suite_tests(root, node, &header.test_defaults, cx),
    };
    if cx.errors() > before {
        return None;
    }
    header.into_suite(tests?)
}

/// A suite's fields but its `tests`, validated: what each of its tests needs.
pub(crate) struct Header {
    name: Option<String>,
    description: Option<Option<String>>,
    version: Option<Option<String>>,
    category: Option<Option<String>>,
    tags: Option<Option<Vec<String>>>,
    defaults: Option<Option<Defaults>>,
    /// What a test takes for a field it does not set: `defaults`, with the suite's
    /// own `category` as the last fallback.
    pub(crate) test_defaults: Defaults,
}

impl Header {
    /// The tags the suite gives every test.
    pub(crate) fn suite_tags(&self) -> Vec<String> {
        self.tags.clone().flatten().unwrap_or_default()
    }

    fn into_suite(self, tests: Vec<TestSpec>) -> Option<TestSuite> {
        Some(TestSuite {
            name: self.name?,
            tests,
            description: self.description?,
            version: self.version?,
            category: self.category?,
            defaults: self.defaults?,
            tags: self.tags?,
        })
    }
}

/// Validates the fields of the suite at `root` other than `tests` (which need not be
/// there yet: a suite read test by test is validated before its tests are read).
/// `None` when `root` is not an object.
pub(crate) fn suite_header(root: &Node, cx: &mut Cx) -> Option<Header> {
    let at = At::root("TestSuite");
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(entries, &at, &SUITE_KEYS, |k| {
        top_key_hint(k, |k| {
            SPEC_KEYS.contains(&k).then(|| {
                format!(
                    "a suite does not take `{k}`; put it under `defaults` to give it to every test"
                )
            })
        })
    });
    let name = required_name(root, &at, cx);
    let description = optional(root, "description", |n| {
        cx.string(n, &at.key("description"))
    });
    let version = optional(root, "version", |n| cx.string(n, &at.key("version")));
    let category = optional(root, "category", |n| cx.string(n, &at.key("category")));
    let tags = optional(root, "tags", |n| cx.string_list(n, &at.key("tags")));
    let defaults = optional(root, "defaults", |n| {
        let at = at.key("defaults").model("Defaults");
        let entries = cx.object(n, &at)?;
        let allowed: Vec<&str> = SPEC_KEYS.iter().copied().filter(|k| *k != "name").collect();
        cx.unknown_keys(entries, &at, &allowed, |k| {
            if k == "name" {
                Some("each test names itself; `name` cannot be a default".to_owned())
            } else {
                nested_key_hint(k).or_else(|| spec_key_hint(k))
            }
        });
        Some(fields(n, &at, cx))
    });
    let mut test_defaults = defaults.clone().flatten().unwrap_or_default();
    // The suite's own category is the last fallback.
    if root
        .get("defaults")
        .and_then(|d| d.get("category"))
        .is_none()
    {
        test_defaults.category = category.clone().flatten();
    }
    Some(Header {
        name,
        description,
        version,
        category,
        tags,
        defaults,
        test_defaults,
    })
}

/// A suite's `tests`, each with the defaults it does not set itself.
fn suite_tests(
    root: &Node,
    node: &Node,
    defaults: &Defaults,
    cx: &mut Cx,
) -> Option<Vec<TestSpec>> {
    let items = cx.nonempty_list(node, &At::root("TestSuite").key("tests"))?;
    // Exactly as many as there are items: the suite's tests are its largest part, and
    // a vector grown by doubling would hold up to twice their room until the plan is
    // made.
    let mut tests = Vec::with_capacity(items.len());
    let mut each = SuiteTests::default();
    for (i, item) in items.iter().enumerate() {
        tests.extend(each.test(i, item, defaults, root.get("defaults"), cx));
    }
    each.finish(root.get("defaults"), cx);
    Some(tests)
}

/// A suite's tests validated one at a time, in order: as [`suite_tests`] reads them
/// from a whole tree, or as the loader reads them from the file, freeing each test's
/// part of the tree once its case is made.
///
/// The checks that look across tests (a problem of `defaults` is said once, not once
/// per test; a `framework_config` in `defaults` that no test uses) keep what they
/// found aside until [`SuiteTests::finish`], so that the diagnostics come out the same
/// either way.
#[derive(Default)]
pub(crate) struct SuiteTests {
    refused: Vec<Diagnostic>,
    framework: Vec<Diagnostic>,
    unused: Vec<Diagnostic>,
    any_framework: bool,
}

impl SuiteTests {
    /// Validates test `i`, written at `item`: the test with `defaults` applied, or
    /// `None` when it has errors (they are in `cx`). `defaults_node` is the suite's
    /// `defaults`, where a diagnostic about an inherited field is placed.
    pub(crate) fn test(
        &mut self,
        i: usize,
        item: &Node,
        defaults: &Defaults,
        defaults_node: Option<&Node>,
        cx: &mut Cx,
    ) -> Option<TestSpec> {
        let at = At::root("TestSuite")
            .key("tests")
            .index(i)
            .model("TestSpec");
        let entries = cx.object(item, &at)?;
        cx.unknown_keys(entries, &at, &SPEC_KEYS, |k| {
            nested_key_hint(k).or_else(|| spec_key_hint(k))
        });
        let fields = fields(item, &at, cx);
        let test = resolve(item, &at, fields, defaults, cx)?;
        let checked = Checked {
            test: &test,
            node: item,
            prefix: format!("tests[{i}]."),
            at,
        };
        let one = std::slice::from_ref(&checked);
        aside(&mut self.refused, cx, |cx| {
            refused::each(one, defaults_node, cx)
        });
        aside(&mut self.framework, cx, |cx| {
            framework::each(one, defaults_node, cx);
        });
        aside(&mut self.unused, cx, |cx| framework::unused_own(one, cx));
        self.any_framework |= test.framework.is_some();
        Some(test)
    }

    /// Adds what the checks across tests found to `cx`, each said once.
    pub(crate) fn finish(mut self, defaults_node: Option<&Node>, cx: &mut Cx) {
        let before = cx.diags.len();
        cx.diags.append(&mut self.refused);
        say_once(before, cx);
        let before = cx.diags.len();
        cx.diags.append(&mut self.framework);
        cx.diags.append(&mut self.unused);
        framework::unused_default(self.any_framework, defaults_node, cx);
        say_once(before, cx);
    }
}

/// Runs `f` with `cx` recording into `kept` rather than into its own diagnostics.
/// None of what `f` records may have a Sentinel block entry (see [`say_once`]).
fn aside(kept: &mut Vec<Diagnostic>, cx: &mut Cx, f: impl FnOnce(&mut Cx)) {
    std::mem::swap(&mut cx.diags, kept);
    f(cx);
    std::mem::swap(&mut cx.diags, kept);
}

/// One test as validated, for the checks that look at several fields of it: the
/// spec, its own node, the prefix of its paths (`tests[2].`) and its `At`.
pub(super) struct Checked<'a> {
    pub(super) test: &'a TestSpec,
    pub(super) node: &'a Node,
    pub(super) prefix: String,
    pub(super) at: At,
}

impl<'a> Checked<'a> {
    /// Where the test's field `key` is written: its own (`tests[2].model`), else the
    /// suite's default (`defaults.model`); `None` when neither writes it.
    pub(super) fn field(
        &self,
        key: &str,
        defaults: Option<&'a Node>,
    ) -> Option<(String, &'a Node, At)> {
        match (self.node.get(key), defaults.and_then(|d| d.get(key))) {
            (Some(own), _) => Some((format!("{}{key}", self.prefix), own, self.at.key(key))),
            (None, Some(default)) => Some((
                format!("defaults.{key}"),
                default,
                At::root("TestSuite")
                    .key("defaults")
                    .model("Defaults")
                    .key(key),
            )),
            (None, None) => None,
        }
    }
}

/// Drops the diagnostics recorded since `before` that repeat an earlier one of them
/// (same code, path and place): what a suite's `defaults` gives every test is said
/// once. None of them may have a Sentinel block entry, so that dropping some leaves
/// the others' entries in place.
pub(super) fn say_once(before: usize, cx: &mut Cx) {
    let mut seen = std::collections::HashSet::new();
    let mut i = before;
    while i < cx.diags.len() {
        let d = &cx.diags[i];
        if seen.insert((d.code, d.path.clone(), d.span.map(|s| s.start))) {
            i += 1;
        } else {
            cx.diags.remove(i);
        }
    }
}

/// Hints for a key at the top of a file: anchor holders, then `hint`.
fn top_key_hint(key: &str, hint: impl Fn(&str) -> Option<String>) -> Option<String> {
    if key.starts_with("x-") {
        return Some(
            "a top-level `x-` key is ignored only in YAML files, where it holds an anchor"
                .to_owned(),
        );
    }
    hint(key)
}

/// Hints for a key below the top of a file.
fn nested_key_hint(key: &str) -> Option<String> {
    key.starts_with("x-").then(|| {
        "`x-` keys are ignored only at the top level of a YAML file; hold the anchor there"
            .to_owned()
    })
}

fn spec_key_hint(key: &str) -> Option<String> {
    if MODEL_CONFIG_KEYS.contains(&key) {
        return Some(format!("`{key}` goes under `model_config`"));
    }
    if INPUT_KEYS.contains(&key) {
        return Some(format!("`{key}` goes under `inputs`"));
    }
    if crate::model::sentinel::Assertion::NAMES.contains(&key) {
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

/// A field a test must have (from itself or from the defaults): absent is `Some(None)`;
/// present, even as null, it is validated, unless `null_is_absent`.
fn required<T>(
    node: &Node,
    name: &str,
    null_is_absent: bool,
    f: impl FnOnce(&Node) -> Option<T>,
) -> Option<Option<T>> {
    match node.get(name) {
        Some(n) if !(null_is_absent && n.value == Value::Null) => f(n).map(Some),
        _ => Some(None),
    }
}

/// Every field but `name`, each validated on its own; absent fields are `None`.
/// Fields with errors are also `None` (their diagnostics are already in `cx`).
///
/// In a test, `model`, `inputs` and `assertions` written as null are type errors, as
/// in pydantic (the test must have them, from itself or from the defaults); in
/// `defaults`, null on any field means no default.
fn fields(node: &Node, at: &At, cx: &mut Cx) -> Defaults {
    let in_defaults = at.model == "Defaults";
    Defaults {
        model: flat(required(node, "model", in_defaults, |n| {
            cx.nonempty_string(n, &at.key("model"))
        })),
        inputs: flat(required(node, "inputs", in_defaults, |n| {
            inputs(n, &at.key("inputs").model("InputSpec"), cx)
        })),
        assertions: flat(required(node, "assertions", in_defaults, |n| {
            assertions::assertions(n, &at.key("assertions"), cx)
        })),
        description: flat(optional(node, "description", |n| {
            cx.string(n, &at.key("description"))
        })),
        category: flat(optional(node, "category", |n| {
            cx.string(n, &at.key("category"))
        })),
        provider: flat(optional(node, "provider", |n| {
            provider(n, &at.key("provider"), cx)
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
        reliability: flat(optional(node, "reliability", |n| {
            super::gate::reliability(n, &at.key("reliability"), cx)
        })),
        tags: flat(optional(node, "tags", |n| {
            cx.string_list(n, &at.key("tags"))
        })),
        user: flat(optional(node, "user", |n| {
            super::user::user(n, &at.key("user").model("SimulatedUser"), &[], cx)
        })),
    }
}

/// The test's own value when it sets the field (null clears a default), else the default.
fn pick<T: Clone>(set: bool, own: Option<T>, default: &Option<T>) -> Option<T> {
    if set { own } else { default.clone() }
}

/// `provider`: one of Sentinel's five, or a name from `[providers]` of `prill.toml`.
pub(crate) fn provider(node: &Node, at: &At, cx: &mut Cx) -> Option<ProviderName> {
    let configured: Vec<String> = cx
        .providers
        .keys()
        .filter(|k| ProviderKind::from_name(k).is_none())
        .cloned()
        .collect();
    if let Value::String(s) = &node.value
        && configured.contains(s)
    {
        return Some(ProviderName::Named(s.clone()));
    }
    if configured.is_empty() {
        let name = cx.choice(node, at, &SENTINEL_PROVIDERS, true)?;
        return Some(ProviderName::new(&name));
    }
    let mut allowed: Vec<&str> = SENTINEL_PROVIDERS.to_vec();
    allowed.extend(configured.iter().map(String::as_str));
    let name = cx.choice(node, at, &allowed, true)?;
    Some(ProviderName::new(&name))
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
    let set = |k: &str| node.get(k).is_some();
    let model = pick(set("model"), own.model, &defaults.model);
    let inputs = pick(set("inputs"), own.inputs, &defaults.inputs);
    let assertions = pick(set("assertions"), own.assertions, &defaults.assertions);
    let tools = pick(set("tools"), own.tools, &defaults.tools);
    let framework = pick(set("framework"), own.framework, &defaults.framework);
    let from_defaults = if at.is_root() {
        ""
    } else {
        " (and `defaults` gives none)"
    };
    for (key, what, ok) in [
        ("model", "a model name", model.is_some() || set("model")),
        (
            "inputs",
            "an inputs object",
            inputs.is_some() || set("inputs"),
        ),
        (
            "assertions",
            "a list of assertions",
            assertions.is_some() || set("assertions"),
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
    if framework.is_some() && tools.as_ref().is_none_or(Vec::is_empty) {
        framework_requires_tools(node, at, tools.is_some(), cx);
        return None;
    }
    if let Some(list) = &assertions {
        assertions::token_bounds(node, at, list, cx);
        trajectory::call_bounds(node, at, list, cx);
    }
    Some(TestSpec {
        name: name?,
        model: model?,
        inputs: inputs?,
        assertions: assertions?,
        description: pick(set("description"), own.description, &defaults.description),
        category: pick(set("category"), own.category, &defaults.category),
        provider: pick(set("provider"), own.provider, &defaults.provider),
        tools,
        framework,
        framework_config: pick(
            set("framework_config"),
            own.framework_config,
            &defaults.framework_config,
        ),
        model_config: pick(
            set("model_config"),
            own.model_config,
            &defaults.model_config,
        ),
        seed: pick(set("seed"), own.seed, &defaults.seed),
        timeout_ms: pick(set("timeout_ms"), own.timeout_ms, &defaults.timeout_ms),
        reliability: pick(set("reliability"), own.reliability, &defaults.reliability),
        tags: pick(set("tags"), own.tags, &defaults.tags),
        user: pick(set("user"), own.user, &defaults.user),
    })
}

/// `framework` with no tools, or an empty list of them (Sentinel's rule: an empty list
/// is no tools).
fn framework_requires_tools(node: &Node, at: &At, empty_list: bool, cx: &mut Cx) {
    let fw = node.get("framework").unwrap_or(node);
    let (span, help): (Span, &str) = match node.get("tools") {
        Some(tools) if empty_list => (
            tools.span,
            "`tools` is empty: list the tools the framework may use, or remove `framework`",
        ),
        _ => (fw.span, "add `tools`, or remove `framework`"),
    };
    let d = Diagnostic::new(
        "value-error",
        at.key("framework").path(),
        "framework requires tools to be specified",
    )
    .at(span)
    .help(help);
    cx.report(
        d,
        &at.key("framework"),
        Some(Pyd::new(
            "value_error",
            "framework requires tools to be specified",
        )),
        None,
    );
}

fn inputs(node: &Node, at: &At, cx: &mut Cx) -> Option<InputSpec> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &INPUT_KEYS, |k| match k {
        "prompt" | "text" | "question" | "input" => {
            Some("a single user message goes in `query`".to_owned())
        }
        "system" => Some("did you mean `system_prompt`?".to_owned()),
        k if MODEL_CONFIG_KEYS.contains(&k) => {
            Some(format!("`{k}` goes under `model_config`, beside `inputs`"))
        }
        k if SPEC_KEYS.contains(&k) => {
            Some(format!("`{k}` is a field of the test, beside `inputs`"))
        }
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
    // Sentinel's rule: at least one input must say something; an empty string, list
    // or object is as good as absent.
    let says_something = spec.query.as_ref().is_some_and(|q| !q.is_empty())
        || spec.messages.as_ref().is_some_and(|m| !m.is_empty())
        || spec.system_prompt.as_ref().is_some_and(|p| !p.is_empty())
        || spec.context.as_ref().is_some_and(|c| !c.is_empty());
    if !says_something {
        says_nothing(node, at, cx);
        return None;
    }
    Some(spec)
}

/// Sentinel's rule that some input says something, broken: name the empty ones.
fn says_nothing(node: &Node, at: &At, cx: &mut Cx) {
    let empty: Vec<&str> = INPUT_KEYS
        .iter()
        .copied()
        .filter(|k| super::cx::present(node, k).is_some())
        .collect();
    let sentence = if empty.is_empty() {
        "at least one of query, messages, system_prompt or context must be provided".to_owned()
    } else {
        let quoted: Vec<String> = empty.iter().map(|k| format!("`{k}`")).collect();
        let (names, verb) = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                (format!("{} and {last}", rest.join(", ")), "are")
            }
            _ => (quoted.concat(), "is"),
        };
        format!(
            "at least one of query, messages, system_prompt or context must say something; {names} {verb} empty"
        )
    };
    let d = Diagnostic::new("value-error", at.path(), sentence)
        .at(node.span)
        .expected(format!("a non-empty {}", list_names(&INPUT_KEYS)));
    cx.report(
        d,
        at,
        Some(Pyd::new(
            "value_error",
            "Value error, At least one input field (query, messages, system_prompt, or context) must be provided",
        )),
        Some(node),
    );
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
                        at.path(),
                        format!("tool `{}` is listed twice", t.name()),
                    )
                    .at(item.span);
                    cx.own(d, &at, "providers refuse two tools of one name", None);
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
            let d = Diagnostic::new("invalid-json-schema", at.path(), sentence)
                .at(n.span)
                .expected("a JSON Schema, e.g. `{type: object, properties: {...}}`");
            cx.own(
                d,
                &at,
                "Sentinel takes any object; providers refuse parameters that are not a JSON Schema",
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
pub(super) fn json_schema_problem(schema: &serde_json::Value) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_that_use_one_pattern_share_one_compiled_expression() {
        use crate::load::{Document, load_str};
        use crate::model::sentinel::Assertion;
        let mut text = String::from("name: s\ndefaults: {model: m, provider: openai}\ntests:\n");
        for i in 0..3 {
            text.push_str(&format!(
                "  - {{name: t{i}, inputs: {{query: q}}, assertions: [{{regex_match: '\\d+'}}, {{regex_match: 'x{i}'}}]}}\n"
            ));
        }
        let loaded = load_str(
            std::path::Path::new("s.yaml"),
            &text,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .unwrap();
        let Ok(Document::SentinelSuite(suite)) = loaded.outcome else {
            panic!("a suite: {:?}", loaded.outcome.err());
        };
        let patterns: Vec<(
            &crate::model::sentinel::Pattern,
            &crate::model::sentinel::Pattern,
        )> = suite
            .tests
            .iter()
            .map(|t| match (&t.assertions[0], &t.assertions[1]) {
                (Assertion::RegexMatch(a), Assertion::RegexMatch(b)) => (a, b),
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(patterns[0].0.shares(patterns[1].0) && patterns[0].0.shares(patterns[2].0));
        assert!(
            !patterns[0].1.shares(patterns[1].1),
            "another pattern, another expression"
        );
    }

    /// The spec's JSON Schema accepts any object as a tool's `parameters` (it stays
    /// self-contained, see `crate::schema`); this is the check that it is a JSON Schema.
    #[test]
    fn tool_parameters_must_be_a_valid_json_schema() {
        use crate::load::{Document, load_str};
        let load = |parameters: &str| {
            let text = format!(
                "name: s\nmodel: m\nprovider: openai\ninputs: {{query: q}}\n\
                 assertions: [{{must_call_tool: [t]}}]\ntools: [{{name: t, parameters: {parameters}}}]\n"
            );
            load_str(
                std::path::Path::new("s.yaml"),
                &text,
                &crate::Env::default(),
                crate::Unrecognized::Error,
            )
            .unwrap()
            .outcome
        };
        for valid in [
            "{type: object, properties: {q: {type: string, maxLength: 50}}, required: [q]}",
            "{type: object, properties: {n: {$ref: '#/$defs/n'}}, $defs: {n: {type: integer}}}",
            "{$schema: 'http://json-schema.org/draft-07/schema#', type: object}",
            "{}",
        ] {
            let outcome = load(valid);
            assert!(
                matches!(outcome, Ok(Document::SentinelSpec(_))),
                "{valid}: {outcome:?}"
            );
        }
        for (invalid, why) in [
            ("{type: objekt}", "at `/type`"),
            (
                "{type: object, properties: {q: {minLength: -1}}}",
                "at `/properties/q/minLength`",
            ),
            ("{type: object, required: q}", "at `/required`"),
            (
                "{$schema: 'https://example.com/my-draft', type: object}",
                "unknown `$schema`",
            ),
        ] {
            let Err(errors) = load(invalid) else {
                panic!("{invalid} was accepted");
            };
            assert_eq!(errors.len(), 1, "{invalid}: {errors:?}");
            let e = &errors[0];
            assert_eq!(
                (e.code, e.path.as_str()),
                ("invalid-json-schema", "tools[0].parameters")
            );
            assert!(
                e.message
                    .starts_with("parameters is not a valid JSON Schema: ")
                    && e.message.contains(why),
                "{invalid}: {}",
                e.message
            );
        }
    }

    #[test]
    fn sentinel_s_providers_are_prill_s_in_another_order() {
        let mut ours = ProviderKind::NAMES;
        let mut theirs = SENTINEL_PROVIDERS;
        ours.sort_unstable();
        theirs.sort_unstable();
        assert_eq!(ours, theirs);
        assert!(
            SENTINEL_PROVIDERS
                .iter()
                .all(|n| ProviderKind::from_name(n).is_some())
        );
    }
}
