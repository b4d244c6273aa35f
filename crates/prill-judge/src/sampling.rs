//! What the judge sends each model: its sampling and its token budget, per provider and
//! model family ([`prill_spec::model::family::traits`]), and the one table of default
//! judge models ([`DEFAULT_MODELS`]).
//!
//! | model | temperature | max tokens |
//! |---|---|---|
//! | takes a temperature (GPT-4o, Claude up to 4.6, Llama, ...) | 0, or `[judge] temperature` | [`ORDINARY_MAX_TOKENS`], or `[judge] max_tokens` |
//! | a reasoning model (OpenAI's o-series, `gpt-5*` but `-chat`, `codex-*`) | none: it takes only its default | [`REASONING_MAX_TOKENS`], or `[judge] max_tokens` |
//! | refuses a temperature (Claude 4.7 and later) | none | [`ORDINARY_MAX_TOKENS`], or `[judge] max_tokens` |
//!
//! A `[judge] temperature` the model does not take is not sent, and
//! [`JudgeSampling::temperature_warning`] says so once, where the judge is announced.

use prill_connect::provider::{ProviderKind, Sampling};
use prill_spec::model::family::{Temperature, traits};

/// The judge's token budget for a model that answers at once: a verdict and a reason.
pub const ORDINARY_MAX_TOKENS: u64 = 400;

/// The judge's token budget for a reasoning model, whose hidden reasoning counts against
/// it: with [`ORDINARY_MAX_TOKENS`] its answer can come back empty. OpenAI's reasoning
/// guide advises reserving at least 25,000 tokens for reasoning and the answer; a budget
/// is a ceiling, not a cost, so the judge follows that advice.
pub const REASONING_MAX_TOKENS: u64 = 25_000;

/// The judge model picked for each provider when none is named, in the order they are
/// tried: the provider, its model, and the variable whose presence picks it (`None`:
/// picked when a local server answers). The one place the defaults are kept.
pub const DEFAULT_MODELS: [(ProviderKind, &str, Option<&str>); 3] = [
    (ProviderKind::Openai, "gpt-4o-mini", Some("OPENAI_API_KEY")),
    (
        ProviderKind::Anthropic,
        "claude-haiku-4-5",
        Some("ANTHROPIC_API_KEY"),
    ),
    (ProviderKind::Ollama, "llama3.1", None),
];

/// The default judge model of `kind`, if it has one.
pub fn default_model(kind: ProviderKind) -> Option<&'static str> {
    DEFAULT_MODELS
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, model, _)| *model)
}

/// What `[judge]` in `prill.toml` asks of the judge's sampling.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JudgeSampling {
    /// `[judge] temperature`: replaces 0 where the model takes a temperature.
    pub temperature: Option<f64>,
    /// `[judge] max_tokens`: replaces the budget of [`budget`].
    pub max_tokens: Option<u64>,
}

/// The token budget for a judge on `model` of `kind` when `[judge]` sets none.
pub fn budget(kind: ProviderKind, model: &str) -> u64 {
    if traits(kind, model).reasoning {
        REASONING_MAX_TOKENS
    } else {
        ORDINARY_MAX_TOKENS
    }
}

impl JudgeSampling {
    /// The sampling the judge sends to `model` of `kind`: a temperature only where the
    /// model takes one (0 unless `[judge]` says otherwise), and the token budget.
    pub fn for_model(&self, kind: ProviderKind, model: &str) -> Sampling {
        let takes = traits(kind, model).takes_temperature();
        Sampling {
            temperature: takes.then_some(self.temperature.unwrap_or(0.0)),
            max_tokens: Some(self.max_tokens.unwrap_or_else(|| budget(kind, model))),
            ..Sampling::default()
        }
    }

    /// A sentence for when `[judge] temperature` is set and `model` of `kind` takes
    /// none, so it is not sent; `None` otherwise.
    pub fn temperature_warning(&self, kind: ProviderKind, model: &str) -> Option<String> {
        let t = self.temperature?;
        let why = match traits(kind, model).temperature {
            Temperature::Accepted => return None,
            Temperature::Fixed => "is a reasoning model and takes only its default temperature",
            Temperature::Refused => "does not take a temperature",
        };
        Some(format!(
            "[judge] temperature {t} is not sent: {}:{model} {why}; remove it from prill.toml or pick another judge",
            kind.name()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_gets_what_it_takes() {
        let plain = JudgeSampling::default();
        let s = plain.for_model(ProviderKind::Openai, "gpt-4o-mini");
        assert_eq!((s.temperature, s.max_tokens), (Some(0.0), Some(400)));
        for model in ["o3-mini", "gpt-5", "gpt-5.1", "gpt-5-nano"] {
            let s = plain.for_model(ProviderKind::Openai, model);
            assert_eq!(
                (s.temperature, s.max_tokens),
                (None, Some(25_000)),
                "{model}"
            );
        }
        let s = plain.for_model(ProviderKind::Anthropic, "claude-opus-4-7");
        assert_eq!((s.temperature, s.max_tokens), (None, Some(400)));
        let s = plain.for_model(ProviderKind::Anthropic, "claude-haiku-4-5");
        assert_eq!((s.temperature, s.top_p), (Some(0.0), None));
        let s = plain.for_model(ProviderKind::Ollama, "llama3.1");
        assert_eq!(s.temperature, Some(0.0));
    }

    #[test]
    fn judge_settings_override_where_the_model_takes_them() {
        let set = JudgeSampling {
            temperature: Some(0.2),
            max_tokens: Some(9000),
        };
        let s = set.for_model(ProviderKind::Openai, "gpt-4o-mini");
        assert_eq!((s.temperature, s.max_tokens), (Some(0.2), Some(9000)));
        assert_eq!(
            set.temperature_warning(ProviderKind::Openai, "gpt-4o-mini"),
            None
        );
        let s = set.for_model(ProviderKind::Openai, "o3-mini");
        assert_eq!((s.temperature, s.max_tokens), (None, Some(9000)));
        assert_eq!(
            set.temperature_warning(ProviderKind::Openai, "o3-mini")
                .unwrap(),
            "[judge] temperature 0.2 is not sent: openai:o3-mini is a reasoning model and takes only its default temperature; remove it from prill.toml or pick another judge"
        );
        assert!(
            set.temperature_warning(ProviderKind::Anthropic, "claude-opus-4-7")
                .unwrap()
                .contains("does not take a temperature")
        );
        assert_eq!(
            JudgeSampling::default().temperature_warning(ProviderKind::Openai, "o3-mini"),
            None
        );
    }

    #[test]
    fn every_provider_has_at_most_one_default() {
        assert_eq!(
            default_model(ProviderKind::Anthropic),
            Some("claude-haiku-4-5")
        );
        assert_eq!(default_model(ProviderKind::Bedrock), None);
        for (kind, _, _) in DEFAULT_MODELS {
            let n = DEFAULT_MODELS.iter().filter(|(k, _, _)| *k == kind).count();
            assert_eq!(n, 1, "{kind:?}");
        }
    }
}
