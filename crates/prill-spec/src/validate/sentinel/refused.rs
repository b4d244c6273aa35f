//! Values the provider will refuse, found by `prill validate` instead of by a 400 at
//! run time, and settings that will not be sent:
//!
//! - `model_config.temperature` above 1 for Anthropic and Bedrock (their APIs take 0
//!   to 1), by the test's provider: given, a named provider's kind, or inferred;
//! - a tool name outside `[a-zA-Z0-9_-]{1,64}`, which every provider's function
//!   names must match (`web.search`, `get weather` are refused);
//! - a negative `seed` for Hugging Face (TGI reads it as an unsigned integer);
//! - a warning for `temperature` or `top_p` that the model does not take (OpenAI's
//!   reasoning models, Claude 4.7 and later): it is not sent;
//! - a warning when the provider is guessed from a model id whose shape several kinds
//!   of server use, or cannot be guessed at all, saying how to set `provider`.

use std::collections::BTreeMap;

use super::super::cx::{Cx, list_names};
use super::Checked;
use crate::diag::Diagnostic;
use crate::model::family::traits;
use crate::model::provider::{Guess, ProviderKind, ProviderName, guess_provider};
use crate::model::sentinel::{TestSpec, Tool};
use crate::node::{Node, Value};

/// Checks every test of a file; `defaults` is the suite's `defaults` node, if any.
pub(super) fn check(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    let before = cx.diags.len();
    each(tests, defaults, cx);
    super::say_once(before, cx);
}

/// The checks of each test, every diagnostic kept (see [`check`]).
pub(super) fn each(tests: &[Checked<'_>], defaults: Option<&Node>, cx: &mut Cx) {
    for t in tests {
        let field = |key: &str| t.field(key, defaults).map(|(path, node, _)| (path, node));
        if let Some((path, node)) = field("tools") {
            tool_names(t, &path, node, cx);
        }
        // A `provider` written but invalid is an error already: no guess to warn of.
        let model = field("model").filter(|_| field("provider").is_none());
        let Some(served) = provider_of(t.test, model, cx) else {
            continue;
        };
        if let Some((path, node)) = field("model_config") {
            sampling(t, &served, &path, node, cx);
        }
        if let (Some(seed), ProviderKind::Huggingface) = (t.test.seed, served.kind)
            && seed < 0
            && let Some((path, node)) = field("seed")
        {
            let d = Diagnostic::new(
                "refused-value",
                &path,
                format!("{} refuses a negative `seed`", served.says()),
            )
            .at(node.span)
            .expected("0 or more (TGI reads the seed as an unsigned integer)")
            .found(seed.to_string());
            cx.own(d, &t.at.key("seed"), "the provider refuses it", None);
        }
    }
}

/// The provider a test goes to, as messages name it.
struct Served {
    kind: ProviderKind,
    /// `the anthropic API`, or `provider `claude-gw` (an anthropic API)`.
    label: String,
}

impl Served {
    fn says(&self) -> &str {
        &self.label
    }
}

/// The test's provider: its own `provider` (a named provider's kind), else its
/// framework's, else the guess from the model name, with a warning at `model` (when given) when the guess is not
/// sure. `None` when there is none to check against.
fn provider_of(test: &TestSpec, model: Option<(String, &Node)>, cx: &mut Cx) -> Option<Served> {
    match &test.provider {
        Some(ProviderName::Kind(kind)) => Some(Served {
            kind: *kind,
            label: format!("the {kind} API"),
        }),
        Some(ProviderName::Named(name)) => cx.providers.get(name).map(|kind| Served {
            kind: *kind,
            label: format!("provider `{name}` (the {kind} API)"),
        }),
        // A framework without `provider` calls its own (`langgraph`: the server's).
        None if test.framework.is_some() => {
            let kind = test.framework.and_then(|f| f.default_provider())?;
            Some(Served {
                kind,
                label: format!("the {kind} API"),
            })
        }
        None => {
            let guess = guess_provider(&test.model);
            if let Some((path, node)) = model {
                guessed(&test.model, guess, &path, node, &cx.providers.clone(), cx);
            }
            match guess {
                Guess::Sure(kind) | Guess::Ambiguous { chosen: kind, .. } => Some(Served {
                    kind,
                    label: format!("the {kind} API"),
                }),
                Guess::Unknown => None,
            }
        }
    }
}

/// The warning for a guess that is not sure.
fn guessed(
    model: &str,
    guess: Guess,
    path: &str,
    node: &Node,
    configured: &BTreeMap<String, ProviderKind>,
    cx: &mut Cx,
) {
    let (message, help) = match guess {
        Guess::Sure(_) => return,
        Guess::Ambiguous {
            chosen,
            shape,
            also,
        } => (
            format!("no `provider` is given, so `{model}` goes to {chosen}: its id is {shape}"),
            format!(
                "{also}; set `provider` to say which ({})",
                choices(configured)
            ),
        ),
        Guess::Unknown => (
            format!(
                "no `provider` is given, and none can be told from `{model}`: the test cannot run"
            ),
            format!("set `provider` ({})", choices(configured)),
        ),
    };
    let d = Diagnostic::new("provider-guessed", path, message)
        .at(node.span)
        .help(help)
        .warning();
    cx.push(d);
}

/// The values `provider` may take, named providers of `prill.toml` included.
fn choices(configured: &BTreeMap<String, ProviderKind>) -> String {
    let mut names: Vec<&str> = ProviderKind::NAMES.to_vec();
    names.extend(
        configured
            .keys()
            .map(String::as_str)
            .filter(|n| ProviderKind::from_name(n).is_none()),
    );
    let listed = list_names(&names);
    if configured
        .keys()
        .any(|n| ProviderKind::from_name(n).is_none())
    {
        format!("{listed}, the last from `[providers]` in prill.toml")
    } else {
        format!("{listed}, or a name of your own from `[providers]` in prill.toml")
    }
}

/// `temperature` out of the provider's range, and sampling the model does not take.
fn sampling(t: &Checked<'_>, served: &Served, path: &str, node: &Node, cx: &mut Cx) {
    let Some(config) = &t.test.model_config else {
        return;
    };
    let model = traits(served.kind, &t.test.model);
    let at = t.at.key("model_config");
    if let (Some(temperature), Some(n)) = (config.temperature, node.get("temperature")) {
        let capped = matches!(served.kind, ProviderKind::Anthropic | ProviderKind::Bedrock);
        if !model.takes_temperature() {
            not_sent(t, "temperature", path, n, cx);
        } else if capped && temperature > 1.0 {
            let d = Diagnostic::new(
                "refused-value",
                format!("{path}.temperature"),
                format!("{} refuses a `temperature` above 1", served.says()),
            )
            .at(n.span)
            .expected(format!("0 to 1 for {}", served.kind))
            .found(temperature.to_string())
            .help("Anthropic's and Bedrock's temperature runs from 0 to 1; OpenAI's from 0 to 2");
            cx.own(d, &at.key("temperature"), "the provider refuses it", None);
        }
    }
    if let (Some(_), Some(n), false) = (config.top_p, node.get("top_p"), model.top_p) {
        not_sent(t, "top_p", path, n, cx);
    }
}

/// The warning for a sampling parameter the model does not take.
fn not_sent(t: &Checked<'_>, key: &str, path: &str, node: &Node, cx: &mut Cx) {
    let d = Diagnostic::new(
        "not-sent",
        format!("{path}.{key}"),
        format!(
            "`{key}` will not be sent: `{}` does not take it",
            t.test.model
        ),
    )
    .at(node.span)
    .help(
        "OpenAI's reasoning models (o-series, gpt-5, codex) and Claude 4.7 and later refuse it; remove it to silence this",
    )
    .warning();
    cx.push(d);
}

/// Tool names every provider takes: `[a-zA-Z0-9_-]{1,64}`.
fn tool_names(t: &Checked<'_>, path: &str, node: &Node, cx: &mut Cx) {
    let (Some(tools), Value::Array(items)) = (&t.test.tools, &node.value) else {
        return;
    };
    for (i, (tool, item)) in tools.iter().zip(items).enumerate() {
        let name = tool.name();
        let ok = (1..=64).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if ok {
            continue;
        }
        let (at_node, field) = match tool {
            Tool::Name(_) => (item, format!("{path}[{i}]")),
            Tool::Spec(_) => (
                item.get("name").unwrap_or(item),
                format!("{path}[{i}].name"),
            ),
        };
        let d = Diagnostic::new(
            "refused-value",
            &field,
            format!("the tool name `{name}` is refused by every provider"),
        )
        .at(at_node.span)
        .expected("1 to 64 letters, digits, `_` or `-` (`web_search`, `get-weather`)")
        .found(format!("`{name}`"));
        cx.own(
            d,
            &t.at.key("tools").index(i),
            "providers refuse such tool names",
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::{codes, diags};
    use crate::{Env, Unrecognized};

    fn spec(fields: &str) -> String {
        format!("name: t\n{fields}inputs: {{query: hi}}\nassertions: [{{must_contain: a}}]\n")
    }

    #[test]
    fn temperature_above_one_is_refused_by_anthropic_and_bedrock() {
        for fields in [
            "model: claude-sonnet-4-5\n",
            "model: claude-sonnet-4-5\nprovider: anthropic\n",
            "model: us.anthropic.claude-3-5-haiku-20241022-v1:0\n",
            "model: meta.llama3-1-8b-instruct-v1:0\nprovider: bedrock\n",
            "model: claude-sonnet-4-5\nprovider: gateway\n",
        ] {
            let text = spec(&format!("{fields}model_config: {{temperature: 1.5}}\n"));
            let (errors, _) = diags(&text);
            assert_eq!(
                codes(&errors),
                [("refused-value", "model_config.temperature")],
                "{fields}"
            );
            let e = &errors[0];
            assert!(
                e.message.contains("refuses a `temperature` above 1"),
                "{e:?}"
            );
            assert_eq!(e.found.as_deref(), Some("1.5"));
            assert!(
                e.expected.as_deref().unwrap().starts_with("0 to 1"),
                "{e:?}"
            );
            assert!(e.span.is_some());
        }
        let (errors, _) = diags(&spec(
            "model: claude-sonnet-4-5\nprovider: gateway\nmodel_config: {temperature: 1.5}\n",
        ));
        assert!(
            errors[0]
                .message
                .contains("provider `gateway` (the anthropic API)"),
            "{:?}",
            errors[0]
        );
        for fields in [
            "model: gpt-4o-mini\n",
            "model: mistral-7b\nprovider: vllm\n",
            "model: llama3.1:8b\n",
            "model: claude-sonnet-4-5\n",
        ] {
            let t = if fields.contains("claude") {
                "1"
            } else {
                "1.5"
            };
            let text = spec(&format!("{fields}model_config: {{temperature: {t}}}\n"));
            let (errors, _) = diags(&text);
            assert!(errors.is_empty(), "{fields}: {errors:?}");
        }
    }

    #[test]
    fn a_suite_default_is_reported_once_where_it_is_written() {
        let text = "name: s\ndefaults:\n  model: claude-sonnet-4-5\n  model_config: {temperature: 1.2}\n  inputs: {query: hi}\n  assertions: [{must_contain: a}]\ntests:\n  - name: a\n  - name: b\n";
        let (errors, _) = diags(text);
        assert_eq!(
            codes(&errors),
            [("refused-value", "defaults.model_config.temperature")]
        );
    }

    #[test]
    fn tool_names_outside_the_providers_pattern_are_refused() {
        let long = "t".repeat(65);
        let text = spec(&format!(
            "model: gpt-4o-mini\ntools:\n  - web.search\n  - {{name: get weather, description: d}}\n  - get_weather\n  - fetch-page\n  - {long}\n"
        ));
        let (errors, _) = diags(&text);
        assert_eq!(
            codes(&errors),
            [
                ("refused-value", "tools[0]"),
                ("refused-value", "tools[1].name"),
                ("refused-value", "tools[4]"),
            ]
        );
        assert!(
            errors[0].message.contains("`web.search`"),
            "{:?}",
            errors[0]
        );
        assert_eq!(errors[1].found.as_deref(), Some("`get weather`"));
        // Whatever the provider, even one that cannot be told.
        let text = spec("model: my-model\ntools: [web.search]\n");
        assert_eq!(codes(&diags(&text).0), [("refused-value", "tools[0]")]);
    }

    #[test]
    fn a_negative_seed_is_refused_by_hugging_face() {
        let text = spec("model: meta-llama/Llama-3.1-8B-Instruct\nseed: -1\n");
        let (errors, _) = diags(&text);
        assert_eq!(codes(&errors), [("refused-value", "seed")]);
        assert!(errors[0].message.contains("huggingface"), "{:?}", errors[0]);
        for fields in [
            "model: meta-llama/Llama-3.1-8B-Instruct\nseed: 7\n",
            "model: gpt-4o-mini\nseed: -1\n",
        ] {
            assert!(diags(&spec(fields)).0.is_empty(), "{fields}");
        }
    }

    #[test]
    fn sampling_a_model_does_not_take_is_a_warning() {
        let text =
            spec("model: o3-mini\nmodel_config: {temperature: 0.2, top_p: 0.9, max_tokens: 50}\n");
        let (errors, warnings) = diags(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            codes(&warnings),
            [
                ("not-sent", "model_config.temperature"),
                ("not-sent", "model_config.top_p")
            ]
        );
        assert!(
            warnings[0].message.contains("will not be sent"),
            "{:?}",
            warnings[0]
        );
        // Claude 4.7 takes no temperature at all: not sent, so not refused either.
        let text = spec("model: claude-opus-4-7\nmodel_config: {temperature: 1.5}\n");
        let (errors, warnings) = diags(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(codes(&warnings), [("not-sent", "model_config.temperature")]);
        // A named OpenAI server serving a reasoning model.
        let text = spec("model: gpt-5-mini\nprovider: vllm\nmodel_config: {top_p: 0.5}\n");
        assert_eq!(codes(&diags(&text).1), [("not-sent", "model_config.top_p")]);
        let text = spec("model: gpt-4o\nmodel_config: {temperature: 0.2, top_p: 0.9}\n");
        assert!(diags(&text).1.is_empty());
    }

    #[test]
    fn a_guessed_provider_says_how_to_choose() {
        let (errors, warnings) = diags(&spec("model: llama3.1:8b\n"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(codes(&warnings), [("provider-guessed", "model")]);
        let w = &warnings[0];
        assert!(w.message.contains("goes to ollama"), "{w:?}");
        let help = w.help.as_deref().unwrap();
        assert!(help.contains("set `provider`"), "{help}");
        assert!(help.contains("`gateway` or `vllm`"), "{help}");
        let (_, warnings) = diags(&spec("model: Qwen/Qwen2.5-72B-Instruct\n"));
        assert!(
            warnings[0].message.contains("goes to huggingface"),
            "{:?}",
            warnings[0]
        );
        assert!(warnings[0].help.as_deref().unwrap().contains("OpenRouter"));
        let (_, warnings) = diags(&spec("model: llama3.1\n"));
        assert_eq!(codes(&warnings), [("provider-guessed", "model")]);
        assert!(
            warnings[0].message.contains("none can be told"),
            "{:?}",
            warnings[0]
        );
        for fields in [
            "model: gpt-4o-mini\n",
            "model: llama3.1:8b\nprovider: ollama\n",
            "model: llama3.1\nprovider: vllm\n",
        ] {
            assert!(diags(&spec(fields)).1.is_empty(), "{fields}");
        }
    }

    #[test]
    fn provider_names_a_kind_or_a_configured_provider() {
        let (errors, _) = diags(&spec("model: m\nprovider: vllm\n"));
        assert!(errors.is_empty(), "{errors:?}");
        let (errors, _) = diags(&spec("model: m\nprovider: vlm\n"));
        assert_eq!(codes(&errors), [("invalid-value", "provider")]);
        assert_eq!(errors[0].help.as_deref(), Some("did you mean `vllm`?"));
        assert!(errors[0].expected.as_deref().unwrap().contains("`vllm`"));
        // Without a configuration, only Sentinel's five, as Sentinel has them.
        let loaded = crate::load_str(
            Path::new("t.yaml"),
            &spec("model: m\nprovider: vllm\n"),
            &Env::default(),
            Unrecognized::Error,
        )
        .unwrap();
        let errors = loaded.outcome.unwrap_err();
        assert_eq!(
            errors[0].expected.as_deref(),
            Some("one of `anthropic`, `openai`, `bedrock`, `huggingface` or `ollama`")
        );
    }
}
