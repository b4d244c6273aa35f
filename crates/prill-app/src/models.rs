//! `--model`: every Sentinel spec (a case whose target is a model) run on other models
//! than its own; several models make a matrix, each spec on each model.
//!
//! [`with_models`] turns each model case into one case per model. The case's id and
//! name carry the model after an `@` (`0a1b2c3d4e5f@gpt-4o`, `hello @gpt-4o`), so the
//! reports keep one unit per spec and model, and `prill_report::matrix` sets them side
//! by side. A model is written `model` (its provider then told from its name, as a spec's
//! own model is, else the spec's own provider) or `provider:model`, where `provider` is
//! a kind (`openai`, `anthropic`, ...) or a name of `[providers]`; any other text before
//! a colon is part of the model's name (`llama3.1:8b`). Agent cases and LangGraph cases
//! (whose `model` names a graph) are left as they are.

use prill_spec::model::sentinel::Framework;
use prill_spec::plan::{Case, Target};
use prill_spec::{ProviderKind, ProviderName, infer_provider};

use crate::settings::Settings;

/// A model to run the specs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// As given: what the ids, names and the matrix's columns show.
    pub shown: String,
    /// The provider, when given.
    pub provider: Option<ProviderName>,
    /// The model, as the provider names it.
    pub model: String,
}

impl ModelChoice {
    /// Reads `model` or `provider:model`; `named` are the names of `[providers]`.
    pub fn parse(text: &str, named: &[&str]) -> ModelChoice {
        let shown = text.trim().to_owned();
        if let Some((prefix, model)) = shown.split_once(':') {
            let prefix = prefix.trim();
            let model = model.trim();
            let known = ProviderKind::from_name(prefix).is_some() || named.contains(&prefix);
            if known && !model.is_empty() {
                return ModelChoice {
                    provider: Some(ProviderName::new(prefix)),
                    model: model.to_owned(),
                    shown: shown.clone(),
                };
            }
        }
        ModelChoice {
            provider: None,
            model: shown.clone(),
            shown,
        }
    }
}

impl Settings {
    /// The models of `--model` ([`crate::Overrides::models`]), in order, each once. A
    /// `provider:` prefix is a provider when it is a kind or a provider name the specs
    /// may use ([`Settings::input_limits`]: `[providers]`'s names).
    pub fn models(&self) -> Vec<ModelChoice> {
        let limits = self.input_limits();
        let named: Vec<&str> = limits.providers.keys().map(String::as_str).collect();
        let mut models: Vec<ModelChoice> = Vec::new();
        for text in self
            .overrides
            .models
            .iter()
            .filter(|m| !m.trim().is_empty())
        {
            let choice = ModelChoice::parse(text, &named);
            if !models.iter().any(|m| m.shown == choice.shown) {
                models.push(choice);
            }
        }
        models
    }
}

/// `cases` with each model case replaced by one case per model of `models` (in their
/// order); agent and LangGraph cases unchanged. No models: `cases` as they are.
pub fn with_models(cases: Vec<Case>, models: &[ModelChoice]) -> Vec<Case> {
    if models.is_empty() {
        return cases;
    }
    cases
        .into_iter()
        .flat_map(|case| {
            if !runs_on_a_model(&case) {
                return vec![case];
            }
            models.iter().map(|m| on_model(&case, m)).collect()
        })
        .collect()
}

/// Whether `--model` applies to `case`: a model case, except a LangGraph one (whose
/// `model` names a graph).
pub(crate) fn runs_on_a_model(case: &Case) -> bool {
    matches!(
        &case.target,
        Target::Model { framework, .. } if !matches!(framework, Some(Framework::Langgraph))
    )
}

/// `case` run on `choice`: its provider the one given, else the one its name tells,
/// else the case's own.
fn on_model(case: &Case, choice: &ModelChoice) -> Case {
    let mut case = case.clone();
    case.id = format!("{}@{}", case.id, choice.shown).into();
    case.name = format!("{} @{}", case.name, choice.shown).into();
    if let Target::Model {
        model, provider, ..
    } = &mut case.target
    {
        *model = choice.model.as_str().into();
        match &choice.provider {
            Some(given) => *provider = Some(given.clone()),
            None if infer_provider(&choice.model).is_some() => *provider = None,
            None => {}
        }
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_prefix_names_the_provider_and_other_colons_are_the_model() {
        let kind = ModelChoice::parse("anthropic:claude-3-5-haiku-latest", &[]);
        assert_eq!(
            kind.provider,
            Some(ProviderName::Kind(ProviderKind::Anthropic))
        );
        assert_eq!(kind.model, "claude-3-5-haiku-latest");
        let named = ModelChoice::parse("vllm:mistral-7b", &["vllm"]);
        assert_eq!(named.provider, Some(ProviderName::Named("vllm".to_owned())));
        let ollama = ModelChoice::parse("llama3.1:8b", &[]);
        assert_eq!(
            (ollama.provider, ollama.model.as_str()),
            (None, "llama3.1:8b")
        );
        assert_eq!(ModelChoice::parse(" gpt-4o ", &[]).shown, "gpt-4o");
    }
}
