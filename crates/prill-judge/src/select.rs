//! Which judge: [`JudgeSpec::parse`] reads `provider:model` or `neuro-san:<agent>`
//! (from `--judge` or `[judge] model`); [`pick_from_env`] picks one when none is
//! named (a local Ollama counts when its provider answers `reachable`).
//!
//! ```
//! use std::collections::HashMap;
//!
//! use prill_judge::{JudgeSpec, pick_from_env};
//!
//! let spec = JudgeSpec::parse("ollama:llama3.1:8b").unwrap();
//! assert_eq!(spec.to_string(), "ollama:llama3.1:8b");
//! assert!(JudgeSpec::parse("gpt-4o-mini").is_err());
//!
//! let env = HashMap::from([("ANTHROPIC_API_KEY".to_owned(), "k".to_owned())]);
//! let picked = pick_from_env(&env, false).unwrap();
//! assert_eq!(picked.spec.to_string(), "anthropic:claude-haiku-4-5");
//! assert_eq!(picked.because, "ANTHROPIC_API_KEY is set");
//! ```

use std::collections::HashMap;
use std::fmt;

use prill_connect::provider::ProviderKind;

use crate::sampling::DEFAULT_MODELS;

/// What to write to configure a judge, for messages.
pub const HOW_TO_CONFIGURE: &str = "name one with `--judge provider:model` (e.g. `--judge openai:gpt-4o-mini`) or `[judge] model = \"provider:model\"` in prill.toml, or set OPENAI_API_KEY or ANTHROPIC_API_KEY, or run Ollama locally";

/// A judge, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeSpec {
    /// A model of a provider.
    Model {
        /// The provider.
        provider: ProviderKind,
        /// The model, as the provider names it.
        model: String,
    },
    /// A neuro-san agent on the configured server.
    NeuroSan {
        /// The agent's name.
        agent: String,
    },
}

/// Why a judge name is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SpecError {
    message: String,
}

impl JudgeSpec {
    /// Reads `provider:model` (the model may hold more colons, as Ollama's do) or
    /// `neuro-san:<agent>`.
    pub fn parse(text: &str) -> Result<JudgeSpec, SpecError> {
        let text = text.trim();
        let error = |message: String| SpecError { message };
        let Some((prefix, name)) = text.split_once(':') else {
            return Err(error(format!(
                "`{text}` is not a judge: write `provider:model` (e.g. `openai:gpt-4o-mini`) or `neuro-san:<agent>`"
            )));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(error(format!(
                "the judge `{text}` names no {} after the colon",
                if prefix == "neuro-san" {
                    "agent"
                } else {
                    "model"
                }
            )));
        }
        if prefix == "neuro-san" {
            return Ok(JudgeSpec::NeuroSan {
                agent: name.to_owned(),
            });
        }
        let Some(provider) = ProviderKind::from_name(prefix) else {
            let known: Vec<&str> = ProviderKind::ALL.iter().map(|p| p.name()).collect();
            return Err(error(format!(
                "unknown judge provider `{prefix}`; expected one of {}, neuro-san",
                known.join(", ")
            )));
        };
        Ok(JudgeSpec::Model {
            provider,
            model: name.to_owned(),
        })
    }
}

impl fmt::Display for JudgeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JudgeSpec::Model { provider, model } => write!(f, "{}:{model}", provider.name()),
            JudgeSpec::NeuroSan { agent } => write!(f, "neuro-san:{agent}"),
        }
    }
}

/// A judge picked from the environment, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    /// The judge.
    pub spec: JudgeSpec,
    /// Why it was picked, e.g. `OPENAI_API_KEY is set`.
    pub because: String,
}

/// Picks a judge when none is named, from [`DEFAULT_MODELS`] in its order:
/// `OPENAI_API_KEY` → `openai:gpt-4o-mini`, else `ANTHROPIC_API_KEY` →
/// `anthropic:claude-haiku-4-5`, else a reachable local Ollama → `ollama:llama3.1`;
/// else none. Empty variables count as unset.
pub fn pick_from_env(env: &HashMap<String, String>, ollama_reachable: bool) -> Option<Picked> {
    let set = |name: &str| env.get(name).is_some_and(|v| !v.trim().is_empty());
    DEFAULT_MODELS
        .iter()
        .find(|(_, _, var)| match var {
            Some(var) => set(var),
            None => ollama_reachable,
        })
        .map(|(provider, model, var)| Picked {
            spec: JudgeSpec::Model {
                provider: *provider,
                model: (*model).to_owned(),
            },
            because: match var {
                Some(var) => format!("{var} is set"),
                None => "a local Ollama answers".to_owned(),
            },
        })
}

/// The variables whose presence picks a judge ([`DEFAULT_MODELS`]).
pub fn key_vars() -> impl Iterator<Item = &'static str> {
    DEFAULT_MODELS.iter().filter_map(|(_, _, var)| *var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            JudgeSpec::parse("openai:gpt-4o-mini").unwrap(),
            JudgeSpec::Model {
                provider: ProviderKind::Openai,
                model: "gpt-4o-mini".to_owned()
            }
        );
        assert_eq!(
            JudgeSpec::parse("neuro-san:gist").unwrap(),
            JudgeSpec::NeuroSan {
                agent: "gist".to_owned()
            }
        );
        let e = JudgeSpec::parse("foo:bar").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown judge provider `foo`; expected one of openai, anthropic, ollama, huggingface, bedrock, neuro-san"
        );
        let e = JudgeSpec::parse("openai:").unwrap_err().to_string();
        assert_eq!(e, "the judge `openai:` names no model after the colon");
        let e = JudgeSpec::parse("neuro-san:").unwrap_err().to_string();
        assert!(e.contains("no agent"), "{e}");
    }

    #[test]
    fn picking_order() {
        let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let anthropic = env(&[("ANTHROPIC_API_KEY", "b")]);
        let picked = pick_from_env(&anthropic, true).unwrap();
        assert_eq!(picked.spec.to_string(), "anthropic:claude-haiku-4-5");
        assert_eq!(picked.because, "ANTHROPIC_API_KEY is set");
        let both = env(&[("OPENAI_API_KEY", "a"), ("ANTHROPIC_API_KEY", "b")]);
        assert_eq!(
            pick_from_env(&both, true).unwrap().spec.to_string(),
            "openai:gpt-4o-mini"
        );
        let empty = env(&[("OPENAI_API_KEY", "")]);
        assert_eq!(pick_from_env(&empty, false), None);
        let picked = pick_from_env(&empty, true).unwrap();
        assert_eq!(picked.spec.to_string(), "ollama:llama3.1");
        assert_eq!(picked.because, "a local Ollama answers");
    }
}
