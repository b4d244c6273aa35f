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

/// Why Assay checks `framework_config`, which Sentinel takes as any dictionary.
const WHY_CONFIG: &str = "Sentinel takes `framework_config` as any dictionary; Assay's frameworks read every key, so a mistake would change what runs";

/// Checks every test of a file; `defaults` is the suite's `defaults` node, if any.
pub(super) fn check(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    let before = cx.diags.len();
    for t in tests {
        let Some(framework) = t.test.framework else {
            continue;
        };
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
    unused(tests, defaults, cx);
    super::say_once(before, cx);
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
                cx.diags.push(d);
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
        "`{required}`, or a provider of kind `{required}` from `[providers]` in assay.toml"
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

/// A warning for a `framework_config` no framework reads: a test's own, when the test
/// has no framework; the suite's default, when no test has one.
fn unused(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    let help = format!(
        "add `framework` ({}), or remove `framework_config`",
        list_names(&Framework::NAMES)
    );
    for t in tests.iter().filter(|t| t.test.framework.is_none()) {
        if let Some(node) = super::super::cx::present(t.node, "framework_config") {
            let d = Diagnostic::new(
                "framework-config-unused",
                format!("{}framework_config", t.prefix),
                "`framework_config` is not used: the test names no `framework`",
            )
            .at(node.span)
            .help(help.clone())
            .warning();
            cx.diags.push(d);
        }
    }
    if tests.iter().all(|t| t.test.framework.is_none())
        && let Some(node) = defaults.and_then(|d| super::super::cx::present(d, "framework_config"))
    {
        let d = Diagnostic::new(
            "framework-config-unused",
            "defaults.framework_config",
            "`framework_config` is not used: no test of the suite names a `framework`",
        )
        .at(node.span)
        .help(help)
        .warning();
        cx.diags.push(d);
    }
}
