//! Validates a `prill.toml` tree into a [`Config`].

use crate::model::provider::ProviderKind;
use std::collections::BTreeMap;

use super::cx::{At, Cx, Pyd};
use crate::diag::Diagnostic;
use crate::model::config::{
    AgentConfig, ChatApi, ConcurrencyConfig, Config, FrameworksConfig, IncludePolicy, JudgeConfig,
    LanggraphServerConfig, MaxTokensField, NeuroSanConfig, OtelConfig, ProviderConfig,
};
use crate::node::Node;

/// Validates `root`; every problem goes to `cx`.
pub(crate) fn validate(root: &Node, cx: &mut Cx) -> Option<Config> {
    let at = At::root("PrillConfig");
    let before = cx.errors();
    let entries = cx.object(root, &at)?;
    cx.unknown_keys(
        entries,
        &at,
        &[
            "server",
            "agents",
            "judge",
            "providers",
            "concurrency",
            "timeout_in_seconds",
            "idle_timeout_in_seconds",
            "strict",
            "neuro_san",
            "includes",
            "max_input_bytes",
            "frameworks",
            "history",
            "prices",
            "compare",
            "cassettes",
            "cache",
            "reliability",
            "otel",
        ],
        |k| {
            matches!(k, "otlp" | "opentelemetry" | "telemetry" | "tracing")
                .then(|| "where the run's spans go is `[otel]`".to_owned())
        },
    );
    let mut config = Config {
        server: root
            .get("server")
            .and_then(|n| url(n, &at.key("server"), cx)),
        timeout_in_seconds: root
            .get("timeout_in_seconds")
            .and_then(|n| cx.positive_seconds(n, &at.key("timeout_in_seconds"))),
        idle_timeout_in_seconds: root
            .get("idle_timeout_in_seconds")
            .and_then(|n| cx.positive_seconds(n, &at.key("idle_timeout_in_seconds"))),
        ..Config::default()
    };
    if let Some(agents) = root.get("agents") {
        let at = at.key("agents");
        for (key, node) in cx.object(agents, &at).unwrap_or_default() {
            if let Some(agent) = agent(node, &at.key(&key.name), cx) {
                config.agents.insert(key.name.clone(), agent);
            }
        }
    }
    if let Some(judge) = root.get("judge") {
        config.judge = judge_config(judge, &at.key("judge"), cx);
    }
    if let Some(providers) = root.get("providers") {
        let at = at.key("providers");
        for (key, node) in cx.object(providers, &at).unwrap_or_default() {
            if let Some(p) = named_provider(key, node, &at, cx) {
                config.providers.insert(key.name.clone(), p);
            }
        }
    }
    if let Some(c) = root.get("concurrency") {
        let at = at.key("concurrency");
        if let Some(entries) = cx.object(c, &at) {
            cx.unknown_keys(entries, &at, &["jobs", "max_test_case_concurrency"], |_| {
                None
            });
            config.concurrency = Some(ConcurrencyConfig {
                jobs: c.get("jobs").and_then(|n| positive(n, &at.key("jobs"), cx)),
                max_test_case_concurrency: c
                    .get("max_test_case_concurrency")
                    .and_then(|n| positive(n, &at.key("max_test_case_concurrency"), cx)),
            });
        }
    }
    if let Some(strict) = root.get("strict") {
        config.strict = cx.boolean(strict, &at.key("strict"));
    }
    if let Some(n) = root.get("neuro_san") {
        config.neuro_san = neuro_san(n, &at.key("neuro_san"), cx);
    }
    input_limits(root, &at, cx, &mut config);
    if let Some(f) = root.get("frameworks") {
        config.frameworks = frameworks(f, &at.key("frameworks"), cx);
    }
    if let Some(h) = root.get("history") {
        config.history = super::history::history(h, &at.key("history"), cx);
    }
    if let Some(p) = root.get("prices") {
        config.prices = super::history::prices(p, &at.key("prices"), cx);
    }
    if let Some(c) = root.get("compare") {
        config.compare = super::compare::compare_config(c, &at.key("compare"), cx);
    }
    if let Some(c) = root.get("cassettes") {
        config.cassettes = super::cassettes::cassettes(c, &at.key("cassettes"), cx);
    }
    if let Some(c) = root.get("cache") {
        config.cache = super::cache::cache(c, &at.key("cache"), cx);
    }
    if let Some(r) = root.get("reliability") {
        config.reliability = super::gate::reliability(r, &at.key("reliability"), cx);
    }
    if let Some(o) = root.get("otel") {
        config.otel = otel(o, &at.key("otel"), cx);
    }
    (cx.errors() == before).then_some(config)
}

/// `[otel]`: `endpoint` (an http or https URL), `service_name`, `headers` (a table of
/// texts), `content` (a boolean), `receiver` (`host:port`), `wait_in_seconds`,
/// `span_files` (paths).
fn otel(node: &Node, at: &At, cx: &mut Cx) -> Option<OtelConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &[
            "endpoint",
            "service_name",
            "headers",
            "content",
            "receiver",
            "wait_in_seconds",
            "span_files",
        ],
        |k| match k {
            "url" | "otlp" | "traces_endpoint" => {
                Some("the receiver's URL is `endpoint`".to_owned())
            }
            "service" | "service.name" => Some("the spans' service is `service_name`".to_owned()),
            "listen" | "receive" | "port" => {
                Some("where the run's receiver listens is `receiver`".to_owned())
            }
            _ => None,
        },
    );
    let endpoint = node
        .get("endpoint")
        .and_then(|n| url(n, &at.key("endpoint"), cx));
    let service_name = node
        .get("service_name")
        .and_then(|n| cx.nonempty_string(n, &at.key("service_name")));
    let content = node
        .get("content")
        .and_then(|n| cx.boolean(n, &at.key("content")));
    let receiver = node
        .get("receiver")
        .and_then(|n| socket_address(n, &at.key("receiver"), cx));
    let wait_in_seconds = node
        .get("wait_in_seconds")
        .and_then(|n| cx.positive_seconds(n, &at.key("wait_in_seconds")));
    let span_files = node
        .get("span_files")
        .and_then(|n| {
            let at = at.key("span_files");
            let items = cx.list(n, &at)?;
            items
                .iter()
                .enumerate()
                .map(|(i, item)| cx.nonempty_string(item, &at.index(i)))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<Option<Vec<String>>>()
        })
        .unwrap_or_default();
    let mut headers = BTreeMap::new();
    if let Some(h) = node.get("headers") {
        let at = at.key("headers");
        for (key, value) in cx.object(h, &at).unwrap_or_default() {
            if let Some(v) = cx.nonempty_string(value, &at.key(&key.name)) {
                headers.insert(key.name.clone(), v);
            }
        }
    }
    (cx.errors() == before).then_some(OtelConfig {
        endpoint,
        service_name,
        headers,
        content,
        receiver,
        wait_in_seconds,
        span_files,
    })
}

/// A `host:port` a server can bind: an IP address and a port.
fn socket_address(node: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    let text = cx.nonempty_string(node, at)?;
    if text.parse::<std::net::SocketAddr>().is_ok() {
        return Some(text);
    }
    let d = Diagnostic::new(
        "invalid-value",
        at.path(),
        format!(
            "`{}` is not an address to listen on",
            crate::escape::one_line(&text)
        ),
    )
    .at(node.span)
    .expected("an IP address and a port, e.g. `127.0.0.1:4318` (`127.0.0.1:0`: a free port)");
    cx.report(d, at, None, Some(node));
    None
}

/// `[frameworks]`: only `langgraph` for now.
fn frameworks(node: &Node, at: &At, cx: &mut Cx) -> Option<FrameworksConfig> {
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &["langgraph"], |_| None);
    Some(FrameworksConfig {
        langgraph: node
            .get("langgraph")
            .and_then(|n| langgraph(n, &at.key("langgraph"), cx)),
    })
}

/// `[frameworks.langgraph]`: the server's `url` (required), the key's variable, a
/// time limit.
fn langgraph(node: &Node, at: &At, cx: &mut Cx) -> Option<LanggraphServerConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    let others = without_keys_in_file(entries, at, cx);
    cx.unknown_keys(
        &others,
        at,
        &["url", "api_key_env", "timeout_in_seconds"],
        |k| {
            matches!(k, "server" | "base_url" | "api_url")
                .then(|| "the LangGraph server is `url`".to_owned())
        },
    );
    let url_value = node.get("url").and_then(|n| url(n, &at.key("url"), cx));
    if node.get("url").is_none() {
        let d = Diagnostic::new(
            "missing-field",
            at.path(),
            "`[frameworks.langgraph]` needs the server's `url`",
        )
        .at(node.span)
        .expected("e.g. `url = \"http://localhost:2024\"` (`langgraph dev`'s default)");
        cx.report(d, at, None, None);
    }
    let api_key_env = node
        .get("api_key_env")
        .and_then(|n| cx.nonempty_string(n, &at.key("api_key_env")));
    let timeout_in_seconds = node
        .get("timeout_in_seconds")
        .and_then(|n| cx.positive_seconds(n, &at.key("timeout_in_seconds")));
    let url = url_value?;
    (cx.errors() == before).then_some(LanggraphServerConfig {
        url,
        api_key_env,
        timeout_in_seconds,
    })
}

fn neuro_san(node: &Node, at: &At, cx: &mut Cx) -> Option<NeuroSanConfig> {
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &[
            "python",
            "manifest",
            "tool_path",
            "env",
            "workers",
            "fresh_process",
        ],
        |k| match k {
            "AGENT_MANIFEST_FILE" | "manifest_file" => {
                Some("the manifest is `manifest`".to_owned())
            }
            "AGENT_TOOL_PATH" => Some("the coded tools' folder is `tool_path`".to_owned()),
            _ => None,
        },
    );
    let path = |key: &str, cx: &mut Cx| {
        node.get(key)
            .and_then(|n| cx.nonempty_string(n, &at.key(key)))
    };
    let mut config = NeuroSanConfig {
        python: path("python", cx),
        manifest: path("manifest", cx),
        tool_path: path("tool_path", cx),
        env: BTreeMap::new(),
        workers: node
            .get("workers")
            .and_then(|n| positive(n, &at.key("workers"), cx)),
        fresh_process: node
            .get("fresh_process")
            .and_then(|n| cx.boolean(n, &at.key("fresh_process"))),
    };
    if let Some(e) = node.get("env") {
        let at = at.key("env");
        for (key, value) in cx.object(e, &at).unwrap_or_default() {
            if looks_secret(&key.name) {
                secret_in_file(
                    key,
                    &at,
                    "set it in the environment Prill runs in; neuro-san inherits it",
                    cx,
                );
            } else if let Some(v) = cx.string(value, &at.key(&key.name)) {
                config.env.insert(key.name.clone(), v);
            }
        }
    }
    Some(config)
}

/// `includes` and `max_input_bytes`: how test files are read.
fn input_limits(root: &Node, at: &At, cx: &mut Cx, config: &mut Config) {
    config.includes = root.get("includes").and_then(|n| {
        match cx
            .choice(n, &at.key("includes"), &["any", "project"], false)?
            .as_str()
        {
            "project" => Some(IncludePolicy::Project),
            _ => Some(IncludePolicy::Any),
        }
    });
    config.max_input_bytes = root
        .get("max_input_bytes")
        .and_then(|n| cx.positive(n, &at.key("max_input_bytes")));
}

/// A positive whole number that fits a `u32`.
pub(super) fn positive(node: &Node, at: &At, cx: &mut Cx) -> Option<u32> {
    let n = cx.positive(node, at)?;
    match u32::try_from(n) {
        Ok(v) => Some(v),
        Err(_) => {
            cx.range_error(
                node,
                at,
                "at most 4294967295",
                Pyd::new(
                    "less_than_equal",
                    "Input should be less than or equal to 4294967295",
                ),
            );
            None
        }
    }
}

fn url(node: &Node, at: &At, cx: &mut Cx) -> Option<String> {
    let s = cx.nonempty_string(node, at)?;
    if !(s.starts_with("http://") || s.starts_with("https://")) {
        let d = Diagnostic::new(
            "invalid-value",
            at.path(),
            "expected an http:// or https:// url",
        )
        .at(node.span)
        .expected("a url such as `http://localhost:8080`");
        cx.report(d, at, None, Some(node));
        return None;
    }
    Some(s)
}

fn agent(node: &Node, at: &At, cx: &mut Cx) -> Option<AgentConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &["url", "command", "env", "timeout_in_seconds"],
        |k| (k == "server").then(|| "the server of an agent is its `url`".to_owned()),
    );
    let url_value = node.get("url").and_then(|n| url(n, &at.key("url"), cx));
    let command = node.get("command").and_then(|n| {
        let at = at.key("command");
        let items = cx.nonempty_list(n, &at)?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| cx.nonempty_string(item, &at.index(i)))
            .collect::<Option<Vec<_>>>()
    });
    let mut env = BTreeMap::new();
    if let Some(e) = node.get("env") {
        let at = at.key("env");
        for (key, value) in cx.object(e, &at).unwrap_or_default() {
            if let Some(v) = cx.string(value, &at.key(&key.name)) {
                env.insert(key.name.clone(), v);
            }
        }
    }
    let timeout_in_seconds = node
        .get("timeout_in_seconds")
        .and_then(|n| cx.positive_seconds(n, &at.key("timeout_in_seconds")));
    let has_url = node.get("url").is_some();
    let has_command = node.get("command").is_some();
    if has_url == has_command {
        let message = if has_url {
            "give either `url` or `command`, not both"
        } else {
            "give `url` (a neuro-san server) or `command` (a direct agent)"
        };
        cx.report(
            Diagnostic::new("invalid-agent", at.path(), message).at(node.span),
            at,
            None,
            None,
        );
    }
    (cx.errors() == before).then_some(AgentConfig {
        url: url_value,
        command,
        env,
        timeout_in_seconds,
    })
}

fn judge_config(node: &Node, at: &At, cx: &mut Cx) -> Option<JudgeConfig> {
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &[
            "model",
            "votes",
            "cache",
            "temperature",
            "max_tokens",
            "min_kappa",
        ],
        |_| None,
    );
    let model = node.get("model").and_then(|n| {
        let at = at.key("model");
        let s = cx.nonempty_string(n, &at)?;
        if s.split_once(':')
            .is_none_or(|(p, m)| p.is_empty() || m.is_empty())
        {
            let d = Diagnostic::new("invalid-value", at.path(), "expected `provider:model`")
                .at(n.span)
                .expected("e.g. `openai:gpt-4o-mini`, `ollama:llama3.1`, `vllm:mistral-7b` (a name from `[providers]`) or `neuro-san:gist`");
            cx.report(d, &at, None, Some(n));
            return None;
        }
        Some(s)
    });
    let votes = node.get("votes").and_then(|n| {
        let at = at.key("votes");
        let v = positive(n, &at, cx)?;
        if v % 2 == 0 {
            let d = Diagnostic::new(
                "invalid-value",
                at.path(),
                "votes must be odd so that a majority exists",
            )
            .at(n.span)
            .expected("1, 3, 5, ...");
            cx.report(d, &at, None, Some(n));
            return None;
        }
        Some(v)
    });
    let cache = node
        .get("cache")
        .and_then(|n| cx.boolean(n, &at.key("cache")));
    let temperature = node.get("temperature").and_then(|n| {
        let at = at.key("temperature");
        let t = cx.number(n, &at)?;
        if !(0.0..=2.0).contains(&t) {
            let rule = "between 0 and 2";
            cx.range_error(
                n,
                &at,
                rule,
                Pyd::new("range", "Input should be between 0 and 2"),
            );
            return None;
        }
        Some(t)
    });
    let max_tokens = node
        .get("max_tokens")
        .and_then(|n| cx.positive(n, &at.key("max_tokens")));
    let min_kappa = node.get("min_kappa").and_then(|n| {
        let at = at.key("min_kappa");
        let k = cx.number(n, &at)?;
        if !(0.0..=1.0).contains(&k) {
            cx.range_error(
                n,
                &at,
                "between 0 and 1",
                Pyd::new("range", "Input should be between 0 and 1"),
            );
            return None;
        }
        Some(k)
    });
    Some(JudgeConfig {
        model,
        votes,
        cache,
        temperature,
        max_tokens,
        min_kappa,
    })
}

/// `[providers.<name>]`: a kind's own table, or a named provider that says its `kind`.
/// Validation gives every provider its kind.
fn named_provider(
    key: &crate::node::Key,
    node: &Node,
    at: &At,
    cx: &mut Cx,
) -> Option<ProviderConfig> {
    let at = at.key(&key.name);
    let name = key.name.as_str();
    let bad_name = name == "neuro-san"
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bad_name {
        let d = Diagnostic::new(
            "invalid-provider",
            at.path(),
            format!("`{name}` cannot name a provider"),
        )
        .at(key.span)
        .expected("letters, digits, `_` and `-`, and not `neuro-san` (the judge's agents)")
        .help("a provider's name is written before the colon of `provider:model`");
        cx.report(d, &at, None, None);
        return None;
    }
    let mut p = provider(node, &at, cx)?;
    let own = ProviderKind::from_name(name);
    match (own, p.kind) {
        (Some(own), Some(kind)) if own != kind => {
            let span = node.get("kind").map_or(key.span, |n| n.span);
            let d = Diagnostic::new(
                "invalid-provider",
                at.key("kind").path(),
                format!("`[providers.{name}]` is the {name} provider; it cannot speak `{kind}`"),
            )
            .at(span)
            .expected(format!("`kind = \"{name}\"`, or no `kind`"))
            .found(format!("`kind = \"{kind}\"`"))
            .help(format!(
                "to reach a {kind} server under another name, use a table of its own, e.g. `[providers.my-{kind}] kind = \"{kind}\"`"
            ));
            cx.report(d, &at.key("kind"), None, None);
            None
        }
        (Some(own), _) => {
            p.kind = Some(own);
            Some(p)
        }
        (None, Some(_)) => Some(p),
        (None, None) if node.get("kind").is_some() => None,
        (None, None) => {
            let d = Diagnostic::new(
                "invalid-provider",
                at.path(),
                format!("`{name}` is not a provider kind, and its table says no `kind`"),
            )
            .at(key.span)
            .expected(format!(
                "a kind ({}), or `kind = ...` in the table for a provider of your own name",
                list_kinds()
            ))
            .maybe_help(
                crate::diag::did_you_mean(name, ProviderKind::NAMES).or_else(|| {
                    Some(format!(
                        "add `kind = \"openai\"` (or another kind) to `[providers.{name}]`"
                    ))
                }),
            );
            cx.report(d, &at, None, None);
            None
        }
    }
}

/// The kinds, as a message lists them.
fn list_kinds() -> String {
    super::cx::list_names(&ProviderKind::NAMES)
}

fn provider(node: &Node, at: &At, cx: &mut Cx) -> Option<ProviderConfig> {
    let entries = cx.object(node, at)?;
    const KEYS: [&str; 10] = [
        "kind",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "requests_per_minute",
        "region",
        "max_tokens_field",
        "api",
        "api_version",
        "profile",
    ];
    let others = without_keys_in_file(entries, at, cx);
    cx.unknown_keys(&others, at, &KEYS, |_| None);
    Some(ProviderConfig {
        base_url: node
            .get("base_url")
            .and_then(|n| url(n, &at.key("base_url"), cx)),
        api_key_env: node
            .get("api_key_env")
            .and_then(|n| cx.nonempty_string(n, &at.key("api_key_env"))),
        max_concurrency: node
            .get("max_concurrency")
            .and_then(|n| positive(n, &at.key("max_concurrency"), cx)),
        requests_per_minute: node
            .get("requests_per_minute")
            .and_then(|n| positive(n, &at.key("requests_per_minute"), cx)),
        region: node
            .get("region")
            .and_then(|n| cx.nonempty_string(n, &at.key("region"))),
        kind: node.get("kind").and_then(|n| {
            let name = cx.choice(n, &at.key("kind"), &ProviderKind::NAMES, false)?;
            ProviderKind::from_name(&name)
        }),
        max_tokens_field: node.get("max_tokens_field").and_then(|n| {
            let allowed = ["max_tokens", "max_completion_tokens"];
            Some(
                match cx
                    .choice(n, &at.key("max_tokens_field"), &allowed, false)?
                    .as_str()
                {
                    "max_tokens" => MaxTokensField::MaxTokens,
                    _ => MaxTokensField::MaxCompletionTokens,
                },
            )
        }),
        api: node.get("api").and_then(|n| {
            Some(
                match cx
                    .choice(n, &at.key("api"), &["openai", "tgi"], false)?
                    .as_str()
                {
                    "openai" => ChatApi::Openai,
                    _ => ChatApi::Tgi,
                },
            )
        }),
        api_version: node
            .get("api_version")
            .and_then(|n| cx.nonempty_string(n, &at.key("api_version"))),
        profile: node
            .get("profile")
            .and_then(|n| cx.nonempty_string(n, &at.key("profile"))),
    })
}

/// Reports `key` of the object at `at` as a secret written in the file. The snippet is
/// not shown for this code, so the secret is not printed back.
/// The entries of a table that may name a key's variable with `api_key_env`, less
/// those that look like a key written in the file, each of which is an error.
fn without_keys_in_file(
    entries: &[(crate::node::Key, Node)],
    at: &At,
    cx: &mut Cx,
) -> Vec<(crate::node::Key, Node)> {
    let (secrets, others): (Vec<_>, Vec<_>) = entries
        .iter()
        .cloned()
        .partition(|(k, _)| looks_secret(&k.name));
    for (key, _) in &secrets {
        secret_in_file(
            key,
            at,
            "put it in an environment variable and name that variable with `api_key_env`",
            cx,
        );
    }
    others
}

fn secret_in_file(key: &crate::node::Key, at: &At, help: &str, cx: &mut Cx) {
    let d = Diagnostic::new(
        "secret-in-file",
        at.key(&key.name).path(),
        format!(
            "`{}` looks like a secret; secrets never go in files",
            key.name
        ),
    )
    .at(key.span)
    .help(help);
    cx.report(d, &at.key(&key.name), None, None);
}

/// Keys of the model whose names hold a secret's word but whose values are none.
const NOT_SECRETS: [&str; 2] = ["max_tokens_field", "max_tokens"];

/// Whether a key's name suggests it holds a secret.
fn looks_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !lower.ends_with("_env")
        && !NOT_SECRETS.contains(&name)
        && ["api_key", "apikey", "token", "secret", "password"]
            .iter()
            .any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::load::{Unrecognized, load_str};
    use crate::syntax::Env;

    fn load(text: &str) -> (Option<crate::model::config::Config>, Vec<String>) {
        match super::super::load_config(text) {
            Ok(config) => (Some(config), Vec::new()),
            Err(errors) => (
                None,
                errors
                    .iter()
                    .map(|d| format!("{}: {}", d.path, d.message))
                    .collect(),
            ),
        }
    }

    #[test]
    fn the_otel_table_is_read_and_checked() {
        let (config, errors) = load(
            "[otel]\nendpoint = \"http://127.0.0.1:6006\"\nservice_name = \"ci\"\ncontent = true\n[otel.headers]\nx-project-name = \"prill\"\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let otel = config.unwrap().otel.unwrap();
        assert_eq!(otel.endpoint.as_deref(), Some("http://127.0.0.1:6006"));
        assert_eq!(otel.service_name.as_deref(), Some("ci"));
        assert_eq!(otel.headers["x-project-name"], "prill");
        assert_eq!(otel.content, Some(true));
        let (config, errors) = load(
            "[otel]\nreceiver = \"127.0.0.1:4318\"\nwait_in_seconds = 2.5\nspan_files = [\"s.jsonl\"]\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let otel = config.unwrap().otel.unwrap();
        assert_eq!(otel.receiver.as_deref(), Some("127.0.0.1:4318"));
        assert_eq!(otel.wait_in_seconds, Some(2.5));
        assert_eq!(otel.span_files, ["s.jsonl"]);
        let (_, errors) = load("[otel]\nreceiver = \"localhost\"\nwait_in_seconds = 0\n");
        assert!(
            errors.iter().any(|e| e.starts_with("otel.receiver:")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("otel.wait_in_seconds:")),
            "{errors:?}"
        );
        let (_, errors) = load("[otel]\nendpoint = \"127.0.0.1:6006\"\nurl = \"x\"\n");
        assert!(
            errors.iter().any(|e| e.starts_with("otel.endpoint:")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.starts_with("otel.url:")),
            "{errors:?}"
        );
    }

    #[test]
    fn named_providers_say_their_kind() {
        use crate::model::provider::ProviderKind;
        let (config, errors) = load(
            "[providers.vllm]\nkind = \"openai\"\nbase_url = \"http://gpu:8000/v1\"\napi_key_env = \"VLLM_KEY\"\nmax_concurrency = 4\n\n[providers.ollama]\nmax_concurrency = 1\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let config = config.unwrap();
        let vllm = &config.providers["vllm"];
        assert_eq!(vllm.kind, Some(ProviderKind::Openai));
        assert_eq!(vllm.base_url.as_deref(), Some("http://gpu:8000/v1"));
        assert_eq!(vllm.api_key_env.as_deref(), Some("VLLM_KEY"));
        assert_eq!(vllm.max_concurrency, Some(4));
        assert_eq!(config.providers["ollama"].kind, Some(ProviderKind::Ollama));
        let kinds = config.provider_kinds();
        assert_eq!(kinds["vllm"], ProviderKind::Openai);
        assert_eq!(kinds["ollama"], ProviderKind::Ollama);
        assert_eq!(
            config.limits(Path::new(".")).providers,
            kinds,
            "the names reach the loading of test files"
        );
    }

    #[test]
    fn a_provider_name_without_a_kind_is_an_error() {
        let (_, errors) = load("[providers.anthropc]\nbase_url = \"http://localhost:1\"\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("providers.anthropc: "), "{errors:?}");
        assert!(errors[0].contains("says no `kind`"), "{errors:?}");
        let loaded = load_str(
            Path::new("prill.toml"),
            "[providers.anthropc]\nbase_url = \"http://localhost:1\"\n",
            &Env::default(),
            Unrecognized::Error,
        )
        .unwrap();
        let Err(diags) = loaded.outcome else {
            panic!("valid")
        };
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `anthropic`?"));
        let (_, errors) = load("[providers.gpu]\nbase_url = \"http://localhost:1\"\n");
        assert!(errors[0].contains("says no `kind`"), "{errors:?}");
        let (_, errors) = load("[providers.openai]\nkind = \"ollama\"\n");
        assert!(
            errors[0].starts_with("providers.openai.kind: "),
            "{errors:?}"
        );
        let (_, errors) = load("[providers.\"a:b\"]\nkind = \"ollama\"\n");
        assert!(errors[0].contains("cannot name a provider"), "{errors:?}");
        let (_, errors) = load("[providers.vllm]\nkind = \"opnai\"\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("providers.vllm.kind: "), "{errors:?}");
    }

    #[test]
    fn the_langgraph_server_is_a_url_and_a_key_variable() {
        let (config, errors) = load(
            "[frameworks.langgraph]\nurl = \"http://localhost:2024\"\napi_key_env = \"LG_KEY\"\ntimeout_in_seconds = 30\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let lg = config.unwrap().frameworks.unwrap().langgraph.unwrap();
        assert_eq!(lg.url, "http://localhost:2024");
        assert_eq!(lg.api_key_env.as_deref(), Some("LG_KEY"));
        assert_eq!(lg.timeout_in_seconds, Some(30.0));
        let (_, errors) = load("[frameworks.langgraph]\napi_key_env = \"K\"\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with("frameworks.langgraph: "),
            "{errors:?}"
        );
        assert!(errors[0].contains("`url`"), "{errors:?}");
        let (_, errors) = load("[frameworks.langgraph]\nurl = \"localhost:2024\"\n");
        assert!(
            errors[0].starts_with("frameworks.langgraph.url: "),
            "{errors:?}"
        );
        let (_, errors) = load("[frameworks.langgraph]\nurl = \"http://h\"\napi_key = \"sk\"\n");
        assert!(errors[0].contains("looks like a secret"), "{errors:?}");
        let loaded = load_str(
            Path::new("prill.toml"),
            "[frameworks.langgrah]\nurl = \"http://h\"\n",
            &Env::default(),
            Unrecognized::Error,
        )
        .unwrap();
        let Err(diags) = loaded.outcome else {
            panic!("valid")
        };
        assert_eq!(diags[0].path, "frameworks.langgrah");
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `langgraph`?"));
    }

    #[test]
    fn max_tokens_field_is_a_key_of_the_model_not_a_secret() {
        let (config, errors) =
            load("[providers.vllm]\nkind = \"openai\"\nmax_tokens_field = \"max_tokens\"\n");
        assert!(errors.is_empty(), "{errors:?}");
        assert!(config.unwrap().providers["vllm"].max_tokens_field.is_some());
        let (_, errors) = load("[providers.vllm]\nkind = \"openai\"\nauth_token = \"sk\"\n");
        assert!(errors[0].contains("looks like a secret"), "{errors:?}");
    }

    #[test]
    fn time_limits_are_positive_seconds() {
        let (config, errors) = load("timeout_in_seconds = 600\nidle_timeout_in_seconds = 2.5\n");
        assert!(errors.is_empty(), "{errors:?}");
        let config = config.unwrap();
        assert_eq!(config.timeout_in_seconds, Some(600.0));
        assert_eq!(config.idle_timeout_in_seconds, Some(2.5));
        let (config, errors) = load("timeout_in_seconds = 0\nidle_timeout_in_seconds = \"1\"\n");
        assert!(config.is_none());
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("timeout_in_seconds"), "{errors:?}");
        assert!(errors[1].contains("idle_timeout_in_seconds"), "{errors:?}");
        let (_, errors) = load("timeout_in_secs = 10\n");
        assert!(errors[0].contains("timeout_in_secs"), "{errors:?}");
    }
}
