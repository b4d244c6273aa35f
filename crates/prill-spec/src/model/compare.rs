//! `[compare]` in `prill.toml`: what `prill compare` counts as a change.

use schemars::JsonSchema;
use serde::Serialize;

/// `[compare]`: how large a change in latency, tokens or cost `prill compare` reports,
/// and how unlikely a sampled case's change in pass rate must be to be a regression.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    /// Report a case whose mean latency (or time to first token) changed by more than
    /// this percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 20, "examples" = [50]))]
    #[schemars(range(min = 0.0))]
    pub latency_percent: Option<f64>,
    /// Report a case whose mean tokens per sample changed by more than this percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 15, "examples" = [10]))]
    #[schemars(range(min = 0.0))]
    pub tokens_percent: Option<f64>,
    /// Report a case whose mean cost per sample changed by more than this percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 15, "examples" = [10]))]
    #[schemars(range(min = 0.0))]
    pub cost_percent: Option<f64>,
    /// The comparison's error rate, between 0 and 1 (exclusive): a sampled case's pass
    /// rate changed beyond chance when Fisher's exact test (mid-p) passes Holm's
    /// correction for every sampled case at this level; another Benjamini–Hochberg
    /// discovery at it is "probably changed"; the rest are within chance, never
    /// regressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 0.05, "examples" = [0.01]))]
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub alpha: Option<f64>,
}
