//! Validates `[compare]` of `prill.toml` into a [`CompareConfig`].

use super::cx::{At, Cx, Pyd};
use crate::model::compare::CompareConfig;
use crate::node::Node;

/// `[compare]`: three percentages, not negative, and `alpha` between 0 and 1.
pub(crate) fn compare_config(node: &Node, at: &At, cx: &mut Cx) -> Option<CompareConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &["latency_percent", "tokens_percent", "cost_percent", "alpha"],
        |k| match k {
            "latency" | "duration" | "duration_percent" | "ttft" => {
                Some("latency's threshold is `latency_percent`".to_owned())
            }
            "tokens" | "token_percent" => {
                Some("the tokens' threshold is `tokens_percent`".to_owned())
            }
            "cost" | "costs_percent" => Some("the cost's threshold is `cost_percent`".to_owned()),
            "p" | "p_value" | "significance" => {
                Some("the significance level is `alpha`".to_owned())
            }
            _ => None,
        },
    );
    let percent = |key: &str, cx: &mut Cx| {
        let n = node.get(key)?;
        let at = at.key(key);
        let value = cx.number(n, &at)?;
        if !(value >= 0.0 && value.is_finite()) {
            cx.range_error(
                n,
                &at,
                "a percentage of 0 or more (20 means +20%)",
                Pyd::new(
                    "greater_than_equal",
                    "Input should be greater than or equal to 0",
                ),
            );
            return None;
        }
        Some(value)
    };
    let config = CompareConfig {
        latency_percent: percent("latency_percent", cx),
        tokens_percent: percent("tokens_percent", cx),
        cost_percent: percent("cost_percent", cx),
        alpha: node.get("alpha").and_then(|n| {
            let at = at.key("alpha");
            let value = cx.number(n, &at)?;
            if value > 0.0 && value < 1.0 {
                return Some(value);
            }
            cx.range_error(
                n,
                &at,
                "between 0 and 1, exclusive (0.05 is the usual level)",
                Pyd::new("less_than", "Input should be less than 1"),
            );
            None
        }),
    };
    (cx.errors() == before).then_some(config)
}

#[cfg(test)]
mod tests {
    use crate::model::config::Config;

    fn load(text: &str) -> Result<Config, Vec<String>> {
        super::super::load_config(text).map_err(|errors| {
            errors
                .iter()
                .map(|d| {
                    format!(
                        "{}: {} ({})",
                        d.path,
                        d.message,
                        d.help.clone().unwrap_or_default()
                    )
                })
                .collect()
        })
    }

    #[test]
    fn thresholds_and_alpha_are_read() {
        let config = load(
            "[compare]\nlatency_percent = 50\ntokens_percent = 10.5\ncost_percent = 0\nalpha = 0.01\n",
        )
        .unwrap();
        let compare = config.compare.unwrap();
        assert_eq!(compare.latency_percent, Some(50.0));
        assert_eq!(compare.tokens_percent, Some(10.5));
        assert_eq!(compare.cost_percent, Some(0.0));
        assert_eq!(compare.alpha, Some(0.01));
        // Every key may be left out.
        let empty = load("[compare]\n").unwrap().compare.unwrap();
        assert_eq!(empty, crate::model::compare::CompareConfig::default());
    }

    #[test]
    fn bad_values_and_keys_say_what_is_wanted() {
        let errors = load("[compare]\nlatency_percent = -5\n").unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("latency_percent"), "{errors:?}");
        assert!(errors[0].contains("0 or more"), "{errors:?}");
        for alpha in ["0", "1", "1.5"] {
            let errors = load(&format!("[compare]\nalpha = {alpha}\n")).unwrap_err();
            assert!(errors[0].contains("between 0 and 1"), "{alpha}: {errors:?}");
        }
        let errors = load("[compare]\nalpha = \"0.05\"\n").unwrap_err();
        assert!(errors[0].contains("number"), "{errors:?}");
        let errors = load("[compare]\nlatency = 20\n").unwrap_err();
        assert!(errors[0].contains("latency_percent"), "{errors:?}");
        let errors = load("compare = 20\n").unwrap_err();
        assert!(errors[0].starts_with("compare"), "{errors:?}");
    }
}
