//! Validates `[history]` (where runs are kept, how many, how long) and `[prices]`
//! (what models cost) of `prill.toml`.

use std::collections::BTreeMap;

use super::cx::{At, Cx};
use crate::diag::Diagnostic;
use crate::model::config::{HistoryConfig, PriceConfig};
use crate::node::Node;

/// `[history]`: `dir` (a folder, relative to `prill.toml`'s), `keep` and `max_age_days` (whole numbers
/// above 0).
pub(crate) fn history(node: &Node, at: &At, cx: &mut Cx) -> Option<HistoryConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &["dir", "keep", "max_age_days"], |k| match k {
        "path" | "folder" | "runs_dir" => Some("the runs' folder is `dir`".to_owned()),
        "max_runs" | "limit" | "count" => Some("how many runs are kept is `keep`".to_owned()),
        "max_age" | "days" | "max_days" => {
            Some("how old a kept run may be is `max_age_days`".to_owned())
        }
        _ => None,
    });
    let dir = node
        .get("dir")
        .and_then(|n| cx.nonempty_string(n, &at.key("dir")));
    let count = |key: &str, cx: &mut Cx| {
        let n = node.get(key)?;
        super::config::positive(n, &at.key(key), cx)
    };
    let keep = count("keep", cx);
    let max_age_days = count("max_age_days", cx);
    (cx.errors() == before).then_some(HistoryConfig {
        dir,
        keep,
        max_age_days,
    })
}

/// `[prices]`: a table per `provider:model`, each with `input` and `output`, US
/// dollars per million tokens, neither below 0.
pub(crate) fn prices(node: &Node, at: &At, cx: &mut Cx) -> BTreeMap<String, PriceConfig> {
    let mut prices = BTreeMap::new();
    for (key, table) in cx.object(node, at).unwrap_or_default() {
        let at = at.key(&key.name);
        if key
            .name
            .split_once(':')
            .is_none_or(|(p, m)| p.is_empty() || m.is_empty())
        {
            let d = Diagnostic::new(
                "invalid-price",
                at.path(),
                format!("`{}` does not name a model as `provider:model`", key.name),
            )
            .at(key.span)
            .expected("a quoted `provider:model`, e.g. `[prices.\"openai:gpt-4o-mini\"]`")
            .help("the provider is a kind (`openai`, `anthropic`, ...) or a name of `[providers]`, as a spec's `provider` gives it");
            cx.report(d, &at, None, None);
            continue;
        }
        if let Some(price) = price(table, &at, cx) {
            prices.insert(key.name.clone(), price);
        }
    }
    prices
}

/// One model's price: `input` and `output`, both required.
fn price(node: &Node, at: &At, cx: &mut Cx) -> Option<PriceConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(entries, at, &["input", "output"], |k| {
        let lower = k.to_ascii_lowercase();
        if lower.contains("input") || lower.contains("prompt") {
            Some("the price of input tokens is `input`, US dollars per million".to_owned())
        } else if lower.contains("output") || lower.contains("completion") {
            Some("the price of output tokens is `output`, US dollars per million".to_owned())
        } else {
            None
        }
    });
    let rate = |key: &str, cx: &mut Cx| {
        let Some(n) = node.get(key) else {
            cx.missing(node, at, key, "US dollars per million tokens");
            return None;
        };
        let at = at.key(key);
        let value = cx.number(n, &at)?;
        if !(value.is_finite() && value >= 0.0) {
            let d = Diagnostic::new("out-of-range", at.path(), "must be 0 or more")
                .at(n.span)
                .expected("US dollars per million tokens, e.g. 0.15");
            cx.report(d, &at, None, Some(n));
            return None;
        }
        Some(value)
    };
    let input = rate("input", cx);
    let output = rate("output", cx);
    let (input, output) = (input?, output?);
    (cx.errors() == before).then_some(PriceConfig { input, output })
}

#[cfg(test)]
mod tests {

    use super::super::config_messages as load;

    #[test]
    fn history_and_prices_are_read() {
        let config = load(
            "[history]\ndir = \"ci/runs\"\nkeep = 20\nmax_age_days = 7\n\n[prices.\"openai:gpt-4o-mini\"]\ninput = 0.15\noutput = 0.6\n",
        )
        .unwrap();
        let history = config.history.as_ref().unwrap();
        assert_eq!(history.dir.as_deref(), Some("ci/runs"));
        assert_eq!(history.keep, Some(20));
        assert_eq!(history.max_age_days, Some(7));
        let price = config.price("openai", "gpt-4o-mini").unwrap();
        assert!((price.cost(1_000_000, 2_000_000) - 1.35).abs() < 1e-9);
        assert!(config.price("openai", "gpt-4o").is_none());
    }

    #[test]
    fn bad_history_and_prices_say_what_is_expected() {
        let errors = load(
            "[history]\ndir = \"\"\nkeep = 0\nmax_days = 3\n\n[prices]\ngpt-4o = { input = 1, output = 2 }\n\"openai:gpt-4o\" = { input = -1 }\n\"openai:o3\" = { prompt = 1, output = 2 }\n",
        )
        .unwrap_err();
        let has = |path: &str, words: &str| {
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{path}:")) && e.contains(words))
        };
        assert!(has("history.dir", ""), "{errors:?}");
        assert!(has("history.keep", "greater than 0"), "{errors:?}");
        assert!(has("history.max_days", ""), "{errors:?}");
        assert!(has("prices.gpt-4o", "provider:model"), "{errors:?}");
        assert!(has("prices.openai:gpt-4o.input", "0 or more"), "{errors:?}");
        assert!(has("prices.openai:gpt-4o.output", "missing"), "{errors:?}");
        assert!(has("prices.openai:o3.prompt", ""), "{errors:?}");
        assert!(has("prices.openai:o3.input", "missing"), "{errors:?}");
    }
}
