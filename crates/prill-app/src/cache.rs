//! The model response cache of a run, resolved from `[cache]` of `prill.toml` and
//! `--no-cache`: on by default, under `.prill/cache/models`.

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
    /// not here: a run that caches nothing leaves no trace.
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
        }))
    }
}
