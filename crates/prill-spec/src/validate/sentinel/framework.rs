//! `framework` and `framework_config`, checked before anything is sent:
//!
//! - every key of `framework_config` against what the test's framework takes
//!   ([`FrameworkConfig::parse`]), each problem placed at its key (an unknown key) or
//!   its value (a wrong one), in the test or in the suite's `defaults`;
//! - the provider: `openai-sdk` runs on OpenAI's API and `claude-sdk` on Anthropic's,
//!   so a `provider` of another kind is an error; `strands` without a `provider` calls
//!   Bedrock, which is worth a warning when the model is not a Bedrock id;
//! - the model: a tool loop needs a model that can call tools on its provider
//!   ([`tool_support`]);
//! - a warning for a `framework_config` that no framework reads.

use super::super::cx::{At, Cx, list_names};
use super::Checked;
use crate::diag::{Diagnostic, did_you_mean};
use crate::model::family::tool_support;
use crate::model::framework::{FrameworkConfig, Problem, ProblemKind};
use crate::model::provider::{ProviderKind, ProviderName, infer_provider};
use crate::model::sentinel::Framework;
use crate::node::{Node, Value};

/// Why Prill checks `framework_config`, which Sentinel takes as any dictionary.
const WHY_CONFIG: &str = "Sentinel takes `framework_config` as any dictionary; Prill's frameworks read every key, so a mistake would change what runs";

/// Checks every test of a file; `defaults` is the suite's `defaults` node, if any.
pub(super) fn check(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    let before = cx.diags.len();
    each(tests, defaults, cx);
    unused_own(tests, cx);
    let any_framework = tests.iter().any(|t| t.test.framework.is_some());
    unused_default(any_framework, defaults, cx);
    super::say_once(before, cx);
}

/// The framework checks of each test: its `framework_config`, provider and model.
pub(super) fn each(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    for t in tests {
        super::state::source(t, defaults, cx);
        let Some(framework) = t.test.framework else {
            continue;
        };
        if framework == Framework::Langgraph
            && let Some((path, node, at)) = t.field("user", defaults)
        {
            let d = Diagnostic::new(
                "user-unsupported",
                path,
                "a simulated user cannot talk to a LangGraph run",
            )
            .at(node.span)
            .help("a simulated user talks to Prill's own tool loop (`openai-sdk`, `claude-sdk`, `strands`) or to a model with no framework");
            cx.own(d, &at, "`user` is Prill's extension to the dialect", None);
        }
        if let (Err(problems), Some((path, node, at))) = (
            FrameworkConfig::parse(framework, t.test.framework_config.as_ref()),
            t.field("framework_config", defaults),
        ) {
            for p in &problems {
                problem(framework, p, &path, node, &at, cx);
            }
        }
        provider_and_model(t, framework, defaults, cx);
    }
}

/// One problem of `framework_config` (written at `config`, whose path is `path`),
/// placed at the key or value it is about.
fn problem(framework: Framework, p: &Problem, path: &str, config: &Node, at: &At, cx: &mut Cx) {
    let mut node = config;
    let mut path = path.to_owned();
    let mut at = at.clone();
    let mut key_span = None;
    for segment in &p.path {
        match &node.value {
            Value::Object(entries) => {
                let Some((key, value)) = entries.iter().find(|(k, _)| k.name == *segment) else {
                    break;
                };
                key_span = Some(key.span);
                node = value;
                path = format!("{path}.{segment}");
                at = at.key(segment);
            }
            Value::Array(items) => {
                let Some((i, item)) = segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i).map(|item| (i, item)))
                else {
                    break;
                };
                key_span = None;
                node = item;
                path = format!("{path}[{i}]");
                at = at.index(i);
            }
            _ => break,
        }
    }
    let d = match &p.kind {
        ProblemKind::UnknownKey { allowed, hint } => {
            let key = p.path.last().map(String::as_str).unwrap_or_default();
            let help = match (did_you_mean(key, allowed.iter().copied()), hint) {
                (Some(near), Some(hint)) => Some(format!("{near} {hint}")),
                (near, hint) => near.or_else(|| hint.clone()),
            };
            let expected = if p.path.len() == 1 {
                format!(
                    "one of {} (the keys of `{}`)",
                    list_names(allowed),
                    framework.name()
                )
            } else {
                format!("one of {}", list_names(allowed))
            };
            Diagnostic::new("unknown-key", &path, format!("unknown key `{key}`"))
                .at(key_span.unwrap_or(node.span))
                .expected(expected)
                .found(key)
                .maybe_help(help)
        }
        ProblemKind::Expected { expected, found } => Diagnostic::new(
            "invalid-value",
            &path,
            format!("expected {expected}, found {found}"),
        )
        .at(node.span)
        .expected(expected.clone())
        .found(found),
    };
    cx.own(d, &at, WHY_CONFIG, None);
}

/// The provider the framework runs on, and whether the model can call tools there.
fn provider_and_model(t: &Checked<'_>, framework: Framework, defaults: Option<&Node>, cx: &mut Cx) {
    if framework == Framework::Langgraph {
        return;
    }
    let model = &t.test.model;
    let kind = match &t.test.provider {
        Some(named) => {
            let kind = match named {
                ProviderName::Kind(kind) => Some(*kind),
                ProviderName::Named(name) => cx.providers.get(name).copied(),
            };
            if let (Some(kind), Some(required)) = (kind, framework.required_provider())
                && kind != required
            {
                if let Some((path, node, at)) = t.field("provider", defaults) {
                    let written = (path.as_str(), node, &at);
                    mismatch(framework, named, (kind, required), written, cx);
                }
                return;
            }
            kind
        }
        None => {
            let kind = framework.default_provider();
            if framework == Framework::Strands
                && infer_provider(model) != Some(ProviderKind::Bedrock)
                && let Some((path, node, _)) = t.field("model", defaults)
            {
                let d = Diagnostic::new(
                    "provider-guessed",
                    path,
                    format!(
                        "no `provider` is given, so framework `strands` calls Bedrock, and `{model}` is not a Bedrock model id"
                    ),
                )
                .at(node.span)
                .help(
                    "set `provider` to the one that serves it, or name a Bedrock model (`us.anthropic.claude-3-5-haiku-20241022-v1:0`)",
                )
                .warning();
                cx.push(d);
            }
            kind
        }
    };
    if let Some(kind) = kind
        && let Err(e) = tool_support(kind, model)
        && let Some((path, node, at)) = t.field("model", defaults)
    {
        let d = Diagnostic::new(
            "framework-needs-tools",
            path,
            format!(
                "`{model}` cannot call tools on the {kind} API, and framework `{}` runs a tool loop",
                framework.name()
            ),
        )
        .at(node.span)
        .expected("a model that can call tools")
        .help(format!(
            "choose a model that calls tools (such as `{}`), or run the test without `framework`",
            e.example
        ));
        cx.own(
            d,
            &at,
            "the provider refuses tools for this model, or the model never calls them",
            None,
        );
    }
}

/// A `provider` of another kind than the framework runs on: `kinds` are the kind it
/// names and the kind required; `written` is where it is written.
fn mismatch(
    framework: Framework,
    named: &ProviderName,
    (kind, required): (ProviderKind, ProviderKind),
    (path, node, at): (&str, &Node, &At),
    cx: &mut Cx,
) {
    let api = match required {
        ProviderKind::Openai => "OpenAI's API",
        ProviderKind::Anthropic => "Anthropic's API",
        _ => "one provider's API",
    };
    let names = match named {
        ProviderName::Kind(_) => format!("`{kind}`"),
        ProviderName::Named(name) => format!("`{name}`, a provider of kind `{kind}`"),
    };
    let d = Diagnostic::new(
        "framework-provider",
        path,
        format!(
            "framework `{}` runs on {api}, and `provider` names {names}",
            framework.name()
        ),
    )
    .at(node.span)
    .expected(format!(
        "`{required}`, or a provider of kind `{required}` from `[providers]` in prill.toml"
    ))
    .found(named.as_str())
    .help(format!(
        "set `provider: {required}` (or leave it out), or use `framework: strands`, which runs on any provider"
    ));
    cx.own(
        d,
        at,
        "the framework's tool loop speaks its provider's API",
        None,
    );
}

/// A warning for a test's own `framework_config` when the test names no `framework`:
/// no framework reads it.
pub(super) fn unused_own(tests: &[Checked<'_>], cx: &mut Cx) {
    for t in tests.iter().filter(|t| t.test.framework.is_none()) {
        if let Some(node) = super::super::cx::present(t.node, "framework_config") {
            let d = Diagnostic::new(
                "framework-config-unused",
                format!("{}framework_config", t.prefix),
                "`framework_config` is not used: the test names no `framework`",
            )
            .at(node.span)
            .help(unused_help())
            .warning();
            cx.push(d);
        }
    }
}

/// A warning for a `framework_config` in the suite's `defaults` when no test of it
/// names a `framework` (`any_framework` says whether one does).
pub(super) fn unused_default(any_framework: bool, defaults: Option<&Node>, cx: &mut Cx) {
    if !any_framework
        && let Some(node) = defaults.and_then(|d| super::super::cx::present(d, "framework_config"))
    {
        let d = Diagnostic::new(
            "framework-config-unused",
            "defaults.framework_config",
            "`framework_config` is not used: no test of the suite names a `framework`",
        )
        .at(node.span)
        .help(unused_help())
        .warning();
        cx.push(d);
    }
}

fn unused_help() -> String {
    format!(
        "add `framework` ({}), or remove `framework_config`",
        list_names(&Framework::NAMES)
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{codes, diags};
    use crate::diag::Diagnostic;

    fn spec(fields: &str) -> String {
        format!(
            "name: t\ntools: [search]\n{fields}inputs: {{query: hi}}\nassertions: [{{must_contain: a}}]\n"
        )
    }

    /// The text a diagnostic points at.
    fn pointed<'t>(text: &'t str, d: &Diagnostic) -> &'t str {
        let span = d.span.unwrap();
        &text[span.start..span.start + span.len()]
    }

    #[test]
    fn framework_config_problems_are_placed_at_their_key_or_value() {
        let text = spec(
            "model: gpt-4o-mini\nframework: openai-sdk\nframework_config:\n  max_iteration: 3\n  intermediate_steps: yes\n  assistant_id: a\n  retry_policy: {max_retries: 11}\n  tool_results:\n    search: {by_args: [{args: {q: x}}, {args: {q: y}, result: 1, extra: 2}]}\n",
        );
        let (errors, warnings) = diags(&text);
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut found = codes(&errors);
        found.sort();
        assert_eq!(
            found,
            [
                ("invalid-value", "framework_config.intermediate_steps"),
                ("invalid-value", "framework_config.retry_policy.max_retries"),
                (
                    "invalid-value",
                    "framework_config.tool_results.search.by_args[0]"
                ),
                ("unknown-key", "framework_config.assistant_id"),
                ("unknown-key", "framework_config.max_iteration"),
                (
                    "unknown-key",
                    "framework_config.tool_results.search.by_args[1].extra"
                ),
            ]
        );
        let by = |path: &str| errors.iter().find(|d| d.path.ends_with(path)).unwrap();
        let typo = by("max_iteration");
        assert_eq!(pointed(&text, typo), "max_iteration");
        assert_eq!(typo.help.as_deref(), Some("did you mean `max_iterations`?"));
        assert!(
            typo.expected
                .as_deref()
                .unwrap()
                .contains("(the keys of `openai-sdk`)"),
            "{typo:?}"
        );
        assert!(
            typo.detail.as_deref().unwrap().starts_with("Prill's rule"),
            "{typo:?}"
        );
        let other = by("assistant_id");
        assert!(
            other
                .help
                .as_deref()
                .unwrap()
                .contains("framework: langgraph"),
            "{other:?}"
        );
        let wrong = by("intermediate_steps");
        assert_eq!(pointed(&text, wrong), "yes");
        assert_eq!(wrong.message, "expected true or false, found \"yes\"");
        assert_eq!(pointed(&text, by("max_retries")), "11");
        assert_eq!(pointed(&text, by("by_args[0]")), "{args: {q: x}}");
        assert_eq!(pointed(&text, by("extra")), "extra");
    }

    #[test]
    fn langgraph_takes_its_own_keys() {
        let text = spec(
            "model: m\nframework: langgraph\nframework_config: {assistant_id: agent, tool_results: {}, config: {a: 1}}\n",
        );
        let (errors, _) = diags(&text);
        assert_eq!(
            codes(&errors),
            [("unknown-key", "framework_config.tool_results")]
        );
        assert!(
            errors[0].help.as_deref().unwrap().contains("own tool loop"),
            "{:?}",
            errors[0]
        );
        let (errors, warnings) = diags(&spec(
            "model: m\nframework: langgraph\nframework_config: {assistant_id: agent, max_iterations: 4}\n",
        ));
        assert!(
            errors.is_empty() && warnings.is_empty(),
            "{errors:?} {warnings:?}"
        );
    }

    #[test]
    fn a_default_framework_config_is_reported_once_where_it_is_written() {
        let text = "name: s\ndefaults:\n  model: gpt-4o-mini\n  framework: openai-sdk\n  tools: [search]\n  framework_config: {max_iteration: 2}\n  inputs: {query: hi}\n  assertions: [{must_contain: a}]\ntests:\n  - name: a\n  - name: b\n  - name: c\n    framework: claude-sdk\n    model: claude-haiku-4-5\n";
        let (errors, _) = diags(text);
        assert_eq!(
            codes(&errors),
            [("unknown-key", "defaults.framework_config.max_iteration")]
        );
    }

    #[test]
    fn the_framework_s_provider_is_checked() {
        for (fields, names) in [
            (
                "model: gpt-4o\nprovider: anthropic\nframework: openai-sdk\n",
                "`anthropic`",
            ),
            (
                "model: llama3.1:8b\nprovider: ollama\nframework: openai-sdk\n",
                "`ollama`",
            ),
            (
                "model: claude-haiku-4-5\nprovider: gateway\nframework: openai-sdk\n",
                "`gateway`, a provider of kind `anthropic`",
            ),
            (
                "model: claude-haiku-4-5\nprovider: vllm\nframework: claude-sdk\n",
                "`vllm`",
            ),
            (
                "model: anthropic.claude-3-haiku-20240307-v1:0\nprovider: bedrock\nframework: claude-sdk\n",
                "`bedrock`",
            ),
        ] {
            let text = spec(fields);
            let (errors, _) = diags(&text);
            assert_eq!(
                codes(&errors),
                [("framework-provider", "provider")],
                "{fields}"
            );
            assert!(errors[0].message.contains(names), "{:?}", errors[0]);
            assert!(
                errors[0]
                    .help
                    .as_deref()
                    .unwrap()
                    .contains("framework: strands"),
                "{:?}",
                errors[0]
            );
        }
        for fields in [
            "model: gpt-4o\nprovider: openai\nframework: openai-sdk\n",
            "model: mistral-7b\nprovider: vllm\nframework: openai-sdk\n",
            "model: gpt-4o\nframework: openai-sdk\n",
            "model: claude-haiku-4-5\nprovider: gateway\nframework: claude-sdk\n",
            "model: claude-haiku-4-5\nframework: claude-sdk\n",
            "model: gpt-4o\nprovider: openai\nframework: strands\n",
            "model: llama3.1:8b\nprovider: ollama\nframework: strands\n",
            "model: us.anthropic.claude-3-5-haiku-20241022-v1:0\nframework: strands\n",
            "model: m\nprovider: ollama\nframework: langgraph\n",
        ] {
            let (errors, warnings) = diags(&spec(fields));
            assert!(errors.is_empty(), "{fields}: {errors:?}");
            assert!(warnings.is_empty(), "{fields}: {warnings:?}");
        }
    }

    #[test]
    fn strands_without_a_provider_calls_bedrock_and_says_so() {
        let text = spec("model: gpt-4o\nframework: strands\n");
        let (errors, warnings) = diags(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(codes(&warnings), [("provider-guessed", "model")]);
        assert!(
            warnings[0].message.contains("calls Bedrock"),
            "{:?}",
            warnings[0]
        );
        assert_eq!(pointed(&text, &warnings[0]), "gpt-4o");
    }

    #[test]
    fn a_tool_loop_needs_a_model_that_calls_tools() {
        for (fields, provider) in [
            (
                "model: gpt-3.5-turbo-instruct\nframework: openai-sdk\n",
                "openai",
            ),
            (
                "model: o1-mini\nprovider: vllm\nframework: openai-sdk\n",
                "openai",
            ),
            ("model: claude-2.1\nframework: claude-sdk\n", "anthropic"),
            (
                "model: amazon.titan-text-express-v1\nframework: strands\n",
                "bedrock",
            ),
            (
                "model: meta.llama3-8b-instruct-v1:0\nprovider: bedrock\nframework: strands\n",
                "bedrock",
            ),
        ] {
            let text = spec(fields);
            let (errors, _) = diags(&text);
            assert_eq!(
                codes(&errors),
                [("framework-needs-tools", "model")],
                "{fields}"
            );
            let e = &errors[0];
            assert!(
                e.message.contains(&format!("on the {provider} API")),
                "{e:?}"
            );
            assert!(e.help.as_deref().unwrap().contains("such as"), "{e:?}");
            assert!(fields.contains(pointed(&text, e)), "{e:?}");
        }
        // Without a framework the model is not asked to run a loop; on LangGraph the
        // server's own model runs.
        for fields in [
            "model: gpt-3.5-turbo-instruct\n",
            "model: gpt-3.5-turbo-instruct\nframework: langgraph\n",
        ] {
            assert!(diags(&spec(fields)).0.is_empty(), "{fields}");
        }
    }

    #[test]
    fn framework_config_without_a_framework_is_a_warning() {
        let text = "name: t\nmodel: gpt-4o\nframework_config: {max_iterations: 2}\ninputs: {query: hi}\nassertions: [{must_contain: a}]\n";
        let (errors, warnings) = diags(text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            codes(&warnings),
            [("framework-config-unused", "framework_config")]
        );
        assert!(
            warnings[0]
                .help
                .as_deref()
                .unwrap()
                .contains("add `framework`")
        );
        // In a suite, the default is unused only when no test has a framework.
        let suite = |framework: &str| {
            format!(
                "name: s\ndefaults:\n  model: gpt-4o\n  tools: [search]\n  framework_config: {{max_iterations: 2}}\n  inputs: {{query: hi}}\n  assertions: [{{must_contain: a}}]\ntests:\n  - name: a\n  - name: b\n{framework}"
            )
        };
        let (_, warnings) = diags(&suite(""));
        assert_eq!(
            codes(&warnings),
            [("framework-config-unused", "defaults.framework_config")]
        );
        let (errors, warnings) = diags(&suite("    framework: openai-sdk\n"));
        assert!(
            errors.is_empty() && warnings.is_empty(),
            "{errors:?} {warnings:?}"
        );
    }
}
