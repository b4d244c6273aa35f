//! What a model accepts, by provider and model family: the one table that the
//! providers (which parameters they send), the judge (which sampling it asks for) and
//! `assay validate` (which settings it warns about) all read.
//!
//! The rules follow what each API answers today:
//!
//! | family | reasoning | `temperature` | `top_p` | `top_k` |
//! |---|---|---|---|---|
//! | OpenAI o-series (`o1`, `o3-mini`, `o4-mini`), `gpt-5*` (not `gpt-5*-chat*`), `codex-*` | yes | only 1 (not sent) | no | no |
//! | other OpenAI models | no | yes | yes | no |
//! | Claude 3.x, Claude 4.0 (`claude-sonnet-4-0`, `claude-3-7-sonnet`, ...) | no | yes | yes | yes |
//! | Claude 4.1 to 4.6 | no | yes | yes, but not with `temperature` | yes |
//! | Claude 4.7 and later (`claude-opus-4-7`, `claude-5*`) | no | no | no | no |
//! | everything else | no | yes | yes | yes |
//!
//! Claude ids are recognized wherever they are served: `claude-opus-4-7` (Anthropic),
//! `anthropic.claude-opus-4-7-v1:0` and `us.anthropic.claude-...` (Bedrock),
//! `anthropic/claude-opus-4.7` (gateways). OpenAI's rules apply to the `openai`
//! provider (any endpoint that serves OpenAI's models under their names, an optional
//! `openai/` owner prefix included).
//!
//! ```
//! use assay_spec::ProviderKind;
//! use assay_spec::model::family::{Temperature, traits};
//!
//! let gpt5 = traits(ProviderKind::Openai, "gpt-5.1");
//! assert!(gpt5.reasoning);
//! assert_eq!(gpt5.temperature, Temperature::Fixed);
//! let opus = traits(ProviderKind::Bedrock, "us.anthropic.claude-opus-4-7");
//! assert_eq!(opus.temperature, Temperature::Refused);
//! assert!(!traits(ProviderKind::Anthropic, "claude-haiku-4-5").reasoning);
//! ```

use crate::model::provider::ProviderKind;

/// Whether and how a model takes `temperature`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temperature {
    /// Any value the provider allows.
    Accepted,
    /// Only its default, 1 (OpenAI's reasoning models answer 400 to any other): it is
    /// not sent.
    Fixed,
    /// Not at all (Claude Opus 4.7 and later answer 400 to it).
    Refused,
}

/// What a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelTraits {
    /// A reasoning model: it spends hidden tokens before it answers, which count
    /// against its token limit, so a tight limit can leave its answer empty.
    pub reasoning: bool,
    /// Whether it takes `temperature`.
    pub temperature: Temperature,
    /// Whether it takes `top_p`.
    pub top_p: bool,
    /// Whether it takes `top_k` (and the provider has it at all).
    pub top_k: bool,
    /// Whether `temperature` and `top_p` may not both be set.
    pub one_sampler: bool,
}

impl ModelTraits {
    /// A model that takes every sampling parameter.
    pub const OPEN: ModelTraits = ModelTraits {
        reasoning: false,
        temperature: Temperature::Accepted,
        top_p: true,
        top_k: true,
        one_sampler: false,
    };

    /// Whether `temperature` can be sent at all.
    pub fn takes_temperature(self) -> bool {
        self.temperature == Temperature::Accepted
    }
}

/// What `model`, served by `kind`, accepts.
pub fn traits(kind: ProviderKind, model: &str) -> ModelTraits {
    let m = model.trim().to_ascii_lowercase();
    if let Some(claude) = claude_version(&m) {
        return claude_traits(claude);
    }
    if kind == ProviderKind::Openai {
        let name = m.strip_prefix("openai/").unwrap_or(&m);
        let traits = ModelTraits {
            top_k: false,
            ..ModelTraits::OPEN
        };
        if openai_reasoning(name) {
            return ModelTraits {
                reasoning: true,
                temperature: Temperature::Fixed,
                top_p: false,
                ..traits
            };
        }
        return traits;
    }
    ModelTraits::OPEN
}

/// Whether `name` (lowercase, no owner prefix) is one of OpenAI's reasoning models.
fn openai_reasoning(name: &str) -> bool {
    let name = name.strip_prefix("ft:").unwrap_or(name);
    let mut chars = name.chars();
    let o_series = chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit());
    let gpt5 = name.starts_with("gpt-5") && !name.contains("-chat");
    o_series || gpt5 || name.starts_with("codex-")
}

/// A Claude model's version (`(4, 7)` for `claude-opus-4-7`, `(3, 5)` for
/// `claude-3-5-haiku-latest`), found in any of the ways its id is spelled; `None`
/// when `m` is not a Claude id or has no version.
fn claude_version(m: &str) -> Option<(u32, u32)> {
    let at = m.find("claude-")?;
    let rest = &m[at + "claude-".len()..];
    let mut numbers = rest
        .split(['-', '.', '@', ':', '_'])
        .skip_while(|part| !part.chars().all(|c| c.is_ascii_digit()) || part.is_empty());
    let major: u32 = numbers.next()?.parse().ok()?;
    // A minor version is one or two digits; a date (`20250514`) is not one.
    let minor = numbers
        .next()
        .filter(|p| (1..=2).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

fn claude_traits(version: (u32, u32)) -> ModelTraits {
    if version >= (4, 7) {
        return ModelTraits {
            temperature: Temperature::Refused,
            top_p: false,
            top_k: false,
            ..ModelTraits::OPEN
        };
    }
    ModelTraits {
        one_sampler: version >= (4, 1),
        ..ModelTraits::OPEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_reasoning_models_take_no_temperature() {
        for model in [
            "o1",
            "o3-mini",
            "o4-mini-2025-04-16",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5.1",
            "gpt-5.2",
            "gpt-5.1-codex",
            "openai/gpt-5",
            "codex-mini-latest",
            "ft:o4-mini-2025-04-16:org::abc",
        ] {
            let t = traits(ProviderKind::Openai, model);
            assert!(t.reasoning, "{model}");
            assert_eq!(t.temperature, Temperature::Fixed, "{model}");
        }
        for model in [
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-5-chat-latest",
            "gpt-3.5-turbo",
        ] {
            let t = traits(ProviderKind::Openai, model);
            assert!(!t.reasoning, "{model}");
            assert!(t.takes_temperature(), "{model}");
        }
        // A model named like an OpenAI one on another provider follows that provider.
        assert!(!traits(ProviderKind::Ollama, "gpt-oss:20b").reasoning);
    }

    #[test]
    fn claude_versions_are_read_from_every_spelling() {
        let cases = [
            ("claude-3-5-haiku-latest", (3, 5)),
            ("claude-3-haiku-20240307", (3, 0)),
            ("claude-sonnet-4-20250514", (4, 0)),
            ("claude-opus-4-1-20250805", (4, 1)),
            ("claude-haiku-4-5", (4, 5)),
            ("claude-opus-4-7", (4, 7)),
            ("anthropic.claude-opus-4-7-v1:0", (4, 7)),
            ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", (4, 5)),
            ("anthropic/claude-opus-4.7", (4, 7)),
            ("claude-opus-4-7@20260416", (4, 7)),
            ("claude-5-sonnet", (5, 0)),
        ];
        for (model, want) in cases {
            assert_eq!(claude_version(model), Some(want), "{model}");
        }
    }

    #[test]
    fn newer_claude_models_refuse_sampling_parameters() {
        let t = traits(ProviderKind::Anthropic, "claude-opus-4-7");
        assert_eq!(t.temperature, Temperature::Refused);
        assert!(!t.top_p && !t.top_k);
        let t = traits(
            ProviderKind::Bedrock,
            "global.anthropic.claude-sonnet-4-5-v1:0",
        );
        assert!(t.takes_temperature() && t.one_sampler);
        let t = traits(ProviderKind::Anthropic, "claude-3-5-haiku-latest");
        assert_eq!(t, ModelTraits::OPEN);
    }
}
