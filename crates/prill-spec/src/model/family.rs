//! What a model accepts, by provider and model family: the one table that the
//! providers (which parameters they send), the judge (which sampling it asks for) and
//! `prill validate` (which settings it warns about) all read.
//!
//! The rules follow what each API answers today:
//!
//! | family | reasoning | `temperature` | `top_p` | `top_k` | tools |
//! |---|---|---|---|---|---|
//! | OpenAI o-series (`o1`, `o3-mini`, `o4-mini`), `gpt-5*` (not `gpt-5*-chat*`), `codex-*` | yes | only 1 (not sent) | no | no | yes, but not `o1-mini`, `o1-preview` |
//! | other OpenAI models | no | yes | yes | no | yes, but not the legacy completion models (`gpt-3.5-turbo-instruct`, `davinci-002`, `babbage-002`), embedding models (`text-embedding-*`) or `chatgpt-4o-latest` |
//! | Claude 2.x and earlier, `claude-instant` | no | yes | yes | yes | no |
//! | Claude 3.x, Claude 4.0 (`claude-sonnet-4-0`, `claude-3-7-sonnet`, ...) | no | yes | yes | yes | yes |
//! | Claude 4.1 to 4.6 | no | yes | yes, but not with `temperature` | yes | yes |
//! | Claude 4.7 and later (`claude-opus-4-7`, `claude-5*`) | no | no | no | no | yes |
//! | Bedrock models that Converse runs without tool use: Amazon Titan, AI21 Jurassic-2 and Jamba-Instruct, Cohere Command (text) and Command Light, Meta Llama 2, Llama 3.0 and Llama 3.2 1B/3B, Mistral 7B Instruct and Mixtral 8x7B Instruct | no | yes | yes | yes | no |
//! | everything else | no | yes | yes | yes | yes |
//!
//! The Bedrock rows follow the "Tool use" column of AWS's table of the models and
//! features Converse supports
//! (<https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html>).
//! A model the table does not know is taken to call tools: the provider says so when
//! it does not.
//!
//! Claude ids are recognized wherever they are served: `claude-opus-4-7` (Anthropic),
//! `anthropic.claude-opus-4-7-v1:0` and `us.anthropic.claude-...` (Bedrock),
//! `anthropic/claude-opus-4.7` (gateways). OpenAI's rules apply to the `openai`
//! provider (any endpoint that serves OpenAI's models under their names, an optional
//! `openai/` owner prefix included).
//!
//! ```
//! use prill_spec::ProviderKind;
//! use prill_spec::model::family::{Temperature, traits};
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
    /// Whether it can call tools (take `tools` and answer with tool calls) on that
    /// provider.
    pub tools: bool,
}

impl ModelTraits {
    /// A model that takes every sampling parameter.
    pub const OPEN: ModelTraits = ModelTraits {
        reasoning: false,
        temperature: Temperature::Accepted,
        top_p: true,
        top_k: true,
        one_sampler: false,
        tools: true,
    };

    /// Whether `temperature` can be sent at all.
    pub fn takes_temperature(self) -> bool {
        self.temperature == Temperature::Accepted
    }
}

/// What `model`, served by `kind`, accepts.
pub fn traits(kind: ProviderKind, model: &str) -> ModelTraits {
    let m = model.trim().to_ascii_lowercase();
    ModelTraits {
        tools: calls_tools(kind, &m),
        ..sampling(kind, &m)
    }
}

/// A model that cannot call tools, named by a test that runs a tool loop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{model}` cannot call tools on the {kind} API, and a tool loop needs a model that does: choose one that calls tools (such as `{example}`), or run the test without `framework`"
)]
pub struct NoToolCalls {
    /// The model, as written.
    pub model: String,
    /// The provider that serves it.
    pub kind: ProviderKind,
    /// A model of that provider that does call tools.
    pub example: &'static str,
}

/// Whether `model`, served by `kind`, can run a tool loop: the check `prill validate`
/// makes for a test with a `framework`, for the engine to make again on plans that
/// were not validated (built in Rust).
pub fn tool_support(kind: ProviderKind, model: &str) -> Result<(), NoToolCalls> {
    if traits(kind, model).tools {
        return Ok(());
    }
    let example = match kind {
        ProviderKind::Openai => "gpt-4o-mini",
        ProviderKind::Anthropic => "claude-haiku-4-5",
        ProviderKind::Bedrock => "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        ProviderKind::Ollama => "llama3.1:8b",
        ProviderKind::Huggingface => "Qwen/Qwen2.5-72B-Instruct",
    };
    Err(NoToolCalls {
        model: model.to_owned(),
        kind,
        example,
    })
}

/// Whether `m` (lowercase) can call tools on `kind`: see the table above.
fn calls_tools(kind: ProviderKind, m: &str) -> bool {
    if claude_without_tools(m) {
        return false;
    }
    match kind {
        ProviderKind::Openai => {
            const NONE: [&str; 7] = [
                "gpt-3.5-turbo-instruct",
                "davinci-002",
                "babbage-002",
                "text-embedding-",
                "o1-mini",
                "o1-preview",
                "chatgpt-4o-latest",
            ];
            let name = m.strip_prefix("openai/").unwrap_or(m);
            let name = name.strip_prefix("ft:").unwrap_or(name);
            !NONE.iter().any(|p| name.starts_with(p))
        }
        ProviderKind::Bedrock => !bedrock_without_tools(m),
        _ => true,
    }
}

/// Claude 2.x and earlier (`claude-2.1`, `anthropic.claude-v2:1`) and Claude Instant,
/// wherever served: Claude's tool use began with Claude 3.
fn claude_without_tools(m: &str) -> bool {
    let Some(at) = m.find("claude-") else {
        return false;
    };
    let rest = &m[at + "claude-".len()..];
    let old_name = rest.starts_with("instant")
        || (rest.starts_with('v') && rest[1..].starts_with(|c: char| c.is_ascii_digit()));
    old_name || claude_version(m).is_some_and(|(major, _)| major < 3)
}

/// The Bedrock models whose row of AWS's Converse table (see the module's doc) has no
/// tool use, by model id (after an ARN's last `/` and a cross-region prefix).
fn bedrock_without_tools(m: &str) -> bool {
    const NONE: [&str; 15] = [
        "amazon.titan-text-",
        "amazon.titan-tg1",
        "amazon.titan-embed",
        "ai21.j2-",
        "ai21.jamba-instruct",
        "cohere.command-text",
        "cohere.command-light-text",
        "cohere.embed",
        "meta.llama2-",
        "meta.llama3-8b-instruct",
        "meta.llama3-70b-instruct",
        "meta.llama3-2-1b-instruct",
        "meta.llama3-2-3b-instruct",
        "mistral.mistral-7b-instruct",
        "mistral.mixtral-8x7b-instruct",
    ];
    const REGIONS: [&str; 8] = [
        "us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.",
    ];
    let id = m.rsplit('/').next().unwrap_or(m);
    let id = REGIONS
        .iter()
        .find_map(|r| id.strip_prefix(r))
        .unwrap_or(id);
    NONE.iter().any(|p| id.starts_with(p))
}

/// What `m` (lowercase) takes of the sampling parameters.
fn sampling(kind: ProviderKind, m: &str) -> ModelTraits {
    if let Some(claude) = claude_version(m) {
        return claude_traits(claude);
    }
    if kind == ProviderKind::Openai {
        let name = m.strip_prefix("openai/").unwrap_or(m);
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

    #[test]
    fn models_that_cannot_call_tools_are_known_by_provider() {
        use ProviderKind::{Anthropic, Bedrock, Huggingface, Ollama, Openai};
        let without = [
            (Openai, "gpt-3.5-turbo-instruct"),
            (Openai, "davinci-002"),
            (Openai, "ft:babbage-002:org::id"),
            (Openai, "text-embedding-3-small"),
            (Openai, "o1-mini"),
            (Openai, "o1-preview-2024-09-12"),
            (Openai, "openai/chatgpt-4o-latest"),
            (Anthropic, "claude-2.1"),
            (Anthropic, "claude-instant-1.2"),
            (Bedrock, "anthropic.claude-v2:1"),
            (Bedrock, "anthropic.claude-instant-v1"),
            (Bedrock, "amazon.titan-text-express-v1"),
            (Bedrock, "amazon.titan-text-premier-v1:0"),
            (Bedrock, "ai21.j2-ultra-v1"),
            (Bedrock, "ai21.jamba-instruct-v1:0"),
            (Bedrock, "cohere.command-text-v14"),
            (Bedrock, "cohere.command-light-text-v14"),
            (Bedrock, "meta.llama2-13b-chat-v1"),
            (Bedrock, "meta.llama3-8b-instruct-v1:0"),
            (Bedrock, "us.meta.llama3-2-1b-instruct-v1:0"),
            (Bedrock, "mistral.mistral-7b-instruct-v0:2"),
            (Bedrock, "mistral.mixtral-8x7b-instruct-v0:1"),
            (
                Bedrock,
                "arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-70b-instruct-v1:0",
            ),
        ];
        for (kind, model) in without {
            assert!(!traits(kind, model).tools, "{kind} {model}");
            let e = tool_support(kind, model).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(model) && text.contains(kind.name()), "{text}");
        }
        let with = [
            (Openai, "gpt-4o-mini"),
            (Openai, "o1"),
            (Openai, "gpt-3.5-turbo"),
            (Openai, "chatgpt-4o-mini"),
            (Anthropic, "claude-3-haiku-20240307"),
            (Anthropic, "claude-opus-4-7"),
            (Bedrock, "anthropic.claude-3-5-sonnet-20240620-v1:0"),
            (Bedrock, "meta.llama3-1-70b-instruct-v1:0"),
            (Bedrock, "us.meta.llama3-2-90b-instruct-v1:0"),
            (Bedrock, "cohere.command-r-plus-v1:0"),
            (Bedrock, "mistral.mistral-large-2407-v1:0"),
            (Bedrock, "amazon.nova-lite-v1:0"),
            (Bedrock, "my-custom-model"),
            (Ollama, "llama3.1:8b"),
            (Huggingface, "Qwen/Qwen2.5-72B-Instruct"),
            // A name of OpenAI's on another provider follows that provider.
            (Ollama, "gpt-3.5-turbo-instruct"),
        ];
        for (kind, model) in with {
            assert!(tool_support(kind, model).is_ok(), "{kind} {model}");
        }
    }
}
