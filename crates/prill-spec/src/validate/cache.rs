//! Validates `[cache]` of `prill.toml`: the model response cache (`models`, `max_mb`,
//! `max_age_days`).

use super::cx::{At, Cx};
use crate::model::config::CacheConfig;
use crate::node::Node;

/// `[cache]`: `models` (a boolean), `max_mb` and `max_age_days` (whole numbers above
/// 0).
pub(crate) fn cache(node: &Node, at: &At, cx: &mut Cx) -> Option<CacheConfig> {
    let before = cx.errors();
    let entries = cx.object(node, at)?;
    cx.unknown_keys(
        entries,
        at,
        &["models", "max_mb", "max_age_days"],
        |k| match k {
            "enabled" | "model" | "providers" => {
                Some("whether model answers are cached is `models`".to_owned())
            }
            "max_size" | "size" | "max_bytes" | "size_mb" => {
                Some("the size cap, in megabytes, is `max_mb`".to_owned())
            }
            "max_age" | "days" | "ttl" | "ttl_days" => {
                Some("how old a cached answer may be is `max_age_days`".to_owned())
            }
            "judge" => Some("the judge's verdict cache is `[judge] cache`".to_owned()),
            _ => None,
        },
    );
    let models = node
        .get("models")
        .and_then(|n| cx.boolean(n, &at.key("models")));
    let count = |key: &str, cx: &mut Cx| {
        let n = node.get(key)?;
        super::config::positive(n, &at.key(key), cx)
    };
    let max_mb = count("max_mb", cx);
    let max_age_days = count("max_age_days", cx);
    (cx.errors() == before).then_some(CacheConfig {
        models,
        max_mb,
        max_age_days,
    })
}

#[cfg(test)]
mod tests {
    use super::super::config_messages as load;

    #[test]
    fn the_cache_table_is_read() {
        let config = load("[cache]\nmodels = false\nmax_mb = 100\nmax_age_days = 3\n").unwrap();
        let cache = config.cache.unwrap();
        assert_eq!(cache.models, Some(false));
        assert_eq!(cache.max_mb, Some(100));
        assert_eq!(cache.max_age_days, Some(3));
        assert_eq!(load("").unwrap().cache, None);
    }

    #[test]
    fn a_bad_cache_table_says_what_is_expected() {
        let errors = load("[cache]\nmodels = \"yes\"\nmax_mb = 0\nttl = 3\n").unwrap_err();
        let has = |path: &str, words: &str| {
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{path}:")) && e.contains(words))
        };
        assert!(has("cache.models", ""), "{errors:?}");
        assert!(has("cache.max_mb", "greater than 0"), "{errors:?}");
        assert!(has("cache.ttl", ""), "{errors:?}");
    }
}
