//! The model response cache of a run, resolved from `[cache]` of `prill.toml` and
//! `--no-cache`: on by default, under `.prill/cache/models`, blanked of every secret of
//! the run as cassettes are.

use std::time::Duration;

use prill_connect::cache::{CacheOptions, DEFAULT_MAX_AGE, DEFAULT_MAX_BYTES, ModelCache};

use crate::history::PRILL_DIR;
use crate::settings::Settings;

/// The folder of the model response cache, under the project's folder.
pub const MODELS_CACHE_DIR: &str = "cache/models";

impl Settings {
    /// The model response cache the providers answer requests at `temperature: 0`
    /// from: `None` under `--no-cache` or `[cache] models = false`. Its size cap and age
    /// limit are `[cache] max_mb` (default 500) and `max_age_days` (default 14). Its
    /// folder is made by the first answer it keeps (with a `.gitignore` of everything),
    /// not here: a run that caches nothing leaves no trace. No entry holds a secret of
    /// the run: the keys of [`Settings::secrets`] and the plan's `${VAR}` values
    /// ([`Settings::plan_secrets`]) are written `<redacted>`, as in cassettes.
    pub fn model_cache(&self) -> Option<ModelCache> {
        let table = self.config.as_ref().and_then(|c| c.cache.as_ref());
        // Cassettes sit below the cache: with any cassette flag every request must reach
        // them, so the cache is off.
        if self.overrides.no_cache
            || self.overrides.cassettes.is_some()
            || table.and_then(|t| t.models) == Some(false)
        {
            return None;
        }
        let dir = self.project_dir().join(PRILL_DIR).join(MODELS_CACHE_DIR);
        let mut secrets = self.secrets();
        secrets.extend(&self.plan_secrets);
        Some(ModelCache::open(CacheOptions {
            dir,
            max_bytes: table
                .and_then(|t| t.max_mb)
                .map_or(DEFAULT_MAX_BYTES, |mb| u64::from(mb) * 1_000_000),
            max_age: table
                .and_then(|t| t.max_age_days)
                .map_or(DEFAULT_MAX_AGE, |days| {
                    Duration::from_secs(u64::from(days) * 24 * 60 * 60)
                }),
            secrets,
        }))
    }
}

#[cfg(test)]
mod tests {
    use prill_spec::Env;
    use prill_spec::redact::Redactor;
    use serde_json::json;

    use super::*;
    use crate::Overrides;

    /// The cache gets every secret of the run: the keys of the environment and the
    /// `${VAR}` values of the plan.
    #[test]
    fn the_cache_blanks_the_keys_of_the_environment_and_the_values_of_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        let key = "sk-proj-Hq7Tw2Lm9Vc4Rb8Nf3Zx9Q";
        let token = "tok-distinctive-6a1f0e";
        let env = Env::from_pairs([("OPENAI_API_KEY", key)]);
        let plan = Redactor::new(
            &["MY_TOKEN".to_owned()],
            &Env::from_pairs([("MY_TOKEN", token)]),
        );
        let settings = Settings::load_from(dir.path(), None, env, Overrides::default())
            .unwrap()
            .with_plan_secrets(plan);
        let cache = settings.model_cache().unwrap();
        let body = json!({"model": "m", "temperature": 0,
            "messages": [{"role": "user", "content": format!("{token}, {key}")}]});
        let url = "https://api.openai.com/v1/chat/completions";
        let kept = cache.key("openai", url, &body, None).unwrap();
        let kept = serde_json::to_string(&kept.request).unwrap();
        assert!(!kept.contains(token), "{kept}");
        assert!(!kept.contains("sk-proj-"), "{kept}");
        assert!(kept.contains("<redacted>, <redacted>"), "{kept}");
    }
}
