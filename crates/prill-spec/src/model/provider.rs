//! The model providers: one enum, [`ProviderKind`], named the same way everywhere
//! (`openai`, `anthropic`, `ollama`, `huggingface`, `bedrock`), and
//! [`infer_provider`], which tells the provider from a model id. Pure data: where a
//! provider is reached and with which key is decided in `prill-connect`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

// The one enum for providers in every crate: a spec's `provider`, a key of
// `[providers]` in `prill.toml`, the connector that reaches it.
/// A model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "Provider")]
pub enum ProviderKind {
    /// OpenAI Chat Completions, or any compatible server.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native `/api/chat`.
    Ollama,
    /// Hugging Face's OpenAI-compatible router, or a TGI endpoint.
    Huggingface,
    /// AWS Bedrock Converse.
    Bedrock,
}

impl ProviderKind {
    /// Every provider.
    pub const ALL: [ProviderKind; 5] = [
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
        ProviderKind::Huggingface,
        ProviderKind::Bedrock,
    ];

    /// The provider's name, as specs and `prill.toml` spell it.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Huggingface => "huggingface",
            ProviderKind::Bedrock => "bedrock",
        }
    }

    /// The provider named `name`.
    pub fn from_name(name: &str) -> Option<ProviderKind> {
        ProviderKind::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Every provider's name, in the order of [`ProviderKind::ALL`].
    pub const NAMES: [&'static str; 5] =
        ["openai", "anthropic", "ollama", "huggingface", "bedrock"];

    /// The environment variable that overrides the endpoint, by each ecosystem's convention.
    pub fn endpoint_env(self) -> &'static str {
        match self {
            ProviderKind::Openai => "OPENAI_BASE_URL",
            ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
            ProviderKind::Ollama => "OLLAMA_HOST",
            ProviderKind::Huggingface => "HF_BASE_URL",
            ProviderKind::Bedrock => "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        }
    }

    /// The environment variable that holds the key (Bedrock also reads the standard AWS
    /// variables for SigV4).
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::Openai => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Ollama => None,
            ProviderKind::Huggingface => Some("HF_TOKEN"),
            ProviderKind::Bedrock => Some("AWS_BEARER_TOKEN_BEDROCK"),
        }
    }

    /// The endpoint when nothing overrides it (Bedrock's depends on the region).
    pub fn default_endpoint(self, region: Option<&str>) -> String {
        match self {
            ProviderKind::Openai => "https://api.openai.com/v1".to_owned(),
            ProviderKind::Anthropic => "https://api.anthropic.com".to_owned(),
            ProviderKind::Ollama => "http://localhost:11434".to_owned(),
            ProviderKind::Huggingface => "https://router.huggingface.co/v1".to_owned(),
            ProviderKind::Bedrock => format!(
                "https://bedrock-runtime.{}.amazonaws.com",
                region.unwrap_or("us-east-1")
            ),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a spec's `provider` names: one of the five kinds, or a provider named in
/// `prill.toml`'s `[providers]` (`[providers.vllm] kind = "openai"`), which speaks one of
/// them at its own endpoint. Serialized as the name, as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProviderName {
    /// A provider kind, by its own name (`openai`, ...).
    Kind(ProviderKind),
    /// A name from `[providers]` that is not a kind's.
    Named(String),
}

impl ProviderName {
    /// `name` as a kind when it is one, else as a configured name.
    pub fn new(name: &str) -> ProviderName {
        match ProviderKind::from_name(name) {
            Some(kind) => ProviderName::Kind(kind),
            None => ProviderName::Named(name.to_owned()),
        }
    }

    /// The name, as written.
    pub fn as_str(&self) -> &str {
        match self {
            ProviderName::Kind(kind) => kind.name(),
            ProviderName::Named(name) => name,
        }
    }

    /// The kind, when the name is a kind's own.
    pub fn kind(&self) -> Option<ProviderKind> {
        match self {
            ProviderName::Kind(kind) => Some(*kind),
            ProviderName::Named(_) => None,
        }
    }
}

impl From<ProviderKind> for ProviderName {
    fn from(kind: ProviderKind) -> ProviderName {
        ProviderName::Kind(kind)
    }
}

impl fmt::Display for ProviderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProviderName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl JsonSchema for ProviderName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProviderName".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let kinds = generator.subschema_for::<ProviderKind>();
        schemars::json_schema!({
            "description": "A provider kind, or the name of a provider in `[providers]` of prill.toml (e.g. `vllm` for `[providers.vllm]`).",
            "anyOf": [
                kinds,
                {
                    "type": "string",
                    "minLength": 1,
                    "description": "A name from `[providers]` in prill.toml; `prill validate` checks it against that file."
                }
            ]
        })
    }
}

/// The provider a model name implies, by the shape each provider's catalogue gives
/// its ids, checked in this order:
/// - a Bedrock ARN (`arn:aws:bedrock:...`) → bedrock;
/// - an OpenAI fine-tune (`ft:gpt-4o-mini:org::id`) → openai;
/// - `hf.co/...` or `huggingface.co/...` (Ollama pulling a Hugging Face GGUF) → ollama;
/// - `owner/name`, with or without the router's `:provider` suffix → huggingface;
/// - `vendor.model`, with or without a cross-region prefix (`us.`, `eu.`, `apac.`,
///   `jp.`, `au.`, `ca.`, `us-gov.`, `global.`), for a vendor Bedrock serves
///   (`anthropic.`, `amazon.`, `meta.`, `openai.`, `qwen.`, ...) → bedrock;
/// - `name:tag` (`llama3.1:8b`, `gpt-oss:20b`) → ollama;
/// - `claude-*` → anthropic;
/// - `gpt-*`, `chatgpt-*`, `o1`/`o3`/`o4`-style, `text-embedding-*`, `codex-*` → openai.
///
/// Anything else (an untagged `llama3.1`) implies none: the spec names its `provider`.
pub fn infer_provider(model: &str) -> Option<ProviderKind> {
    let m = model.trim().to_ascii_lowercase();
    if m.starts_with("arn:") && m.contains(":bedrock:") {
        return Some(ProviderKind::Bedrock);
    }
    if m.starts_with("ft:") {
        return Some(ProviderKind::Openai);
    }
    if m.starts_with("hf.co/") || m.starts_with("huggingface.co/") {
        return Some(ProviderKind::Ollama);
    }
    if m.contains('/') {
        return Some(ProviderKind::Huggingface);
    }
    if is_bedrock_id(&m) {
        return Some(ProviderKind::Bedrock);
    }
    if m.contains(':') {
        return Some(ProviderKind::Ollama);
    }
    if m.starts_with("claude") {
        return Some(ProviderKind::Anthropic);
    }
    let o_series = m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit());
    let openai_prefixes = ["gpt-", "chatgpt-", "text-embedding-", "codex-"];
    if o_series || openai_prefixes.iter().any(|p| m.starts_with(p)) {
        return Some(ProviderKind::Openai);
    }
    None
}

/// How sure [`infer_provider`]'s guess is, for a test that names no `provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guess {
    /// Only one provider's catalogue has ids of this shape (`gpt-4o`, `claude-...`,
    /// Bedrock ids and ARNs, OpenAI fine-tunes, `hf.co/...` for Ollama).
    Sure(ProviderKind),
    /// The shape is one provider's, and other servers use it too.
    Ambiguous {
        /// The provider the case goes to.
        chosen: ProviderKind,
        /// The shape, as a message says it: "`name:tag`, as Ollama names its models".
        shape: &'static str,
        /// Who else uses that shape.
        also: &'static str,
    },
    /// No provider can be told from the name (`llama3.1`, `my-model`).
    Unknown,
}

/// [`infer_provider`]'s guess for `model`, with how sure it is: an `owner/name` id is
/// Hugging Face's, and also OpenRouter's, vLLM's and other OpenAI-compatible servers';
/// a `name:tag` id is Ollama's, and also what an OpenAI-compatible server may serve.
pub fn guess_provider(model: &str) -> Guess {
    let Some(chosen) = infer_provider(model) else {
        return Guess::Unknown;
    };
    let m = model.trim().to_ascii_lowercase();
    let special = m.starts_with("arn:")
        || m.starts_with("ft:")
        || m.starts_with("hf.co/")
        || m.starts_with("huggingface.co/");
    match chosen {
        ProviderKind::Huggingface if !special => Guess::Ambiguous {
            chosen,
            shape: "`owner/name`, as Hugging Face names its models",
            also: "OpenRouter, vLLM and other OpenAI-compatible servers name models the same way",
        },
        ProviderKind::Ollama if !special => Guess::Ambiguous {
            chosen,
            shape: "`name:tag`, as Ollama names its models",
            also: "an OpenAI-compatible server (vLLM, LM Studio, llama.cpp) may serve a model of that name",
        },
        _ => Guess::Sure(chosen),
    }
}

/// `vendor.model...` for a vendor whose models Bedrock serves, after an optional
/// cross-region inference profile prefix.
fn is_bedrock_id(m: &str) -> bool {
    const REGIONS: [&str; 8] = ["us", "eu", "apac", "jp", "au", "ca", "us-gov", "global"];
    const VENDORS: [&str; 17] = [
        "ai21",
        "amazon",
        "anthropic",
        "cohere",
        "deepseek",
        "google",
        "luma",
        "meta",
        "minimax",
        "mistral",
        "moonshot",
        "moonshotai",
        "nvidia",
        "openai",
        "qwen",
        "stability",
        "writer",
    ];
    let Some((first, rest)) = m.split_once('.') else {
        return false;
    };
    let (vendor, _) = if REGIONS.contains(&first) {
        match rest.split_once('.') {
            Some(split) => split,
            None => return false,
        }
    } else {
        (first, rest)
    };
    VENDORS.contains(&vendor)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real ids from each provider's catalogue (and the ones that were misrouted).
    #[test]
    fn providers_inferred_from_model_names() {
        use ProviderKind::{Anthropic, Bedrock, Huggingface, Ollama, Openai};
        let cases = [
            ("gpt-4o-mini", Some(Openai)),
            ("gpt-4.1", Some(Openai)),
            ("gpt-5.1", Some(Openai)),
            ("o1", Some(Openai)),
            ("o3-mini", Some(Openai)),
            ("o4-mini", Some(Openai)),
            ("chatgpt-4o-latest", Some(Openai)),
            ("text-embedding-3-small", Some(Openai)),
            ("codex-mini-latest", Some(Openai)),
            ("ft:gpt-4o-mini-2024-07-18:my-org::abc123", Some(Openai)),
            ("claude-3-5-sonnet-20241022", Some(Anthropic)),
            ("claude-sonnet-4-5", Some(Anthropic)),
            ("anthropic.claude-3-haiku-20240307-v1:0", Some(Bedrock)),
            ("us.meta.llama3-1-8b-instruct-v1:0", Some(Bedrock)),
            (
                "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some(Bedrock),
            ),
            (
                "jp.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some(Bedrock),
            ),
            ("apac.amazon.nova-pro-v1:0", Some(Bedrock)),
            (
                "us-gov.anthropic.claude-3-haiku-20240307-v1:0",
                Some(Bedrock),
            ),
            ("amazon.titan-text-express-v1", Some(Bedrock)),
            ("openai.gpt-oss-120b-1:0", Some(Bedrock)),
            ("qwen.qwen3-32b-v1:0", Some(Bedrock)),
            ("deepseek.r1-v1:0", Some(Bedrock)),
            (
                "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0",
                Some(Bedrock),
            ),
            (
                "arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-v2",
                Some(Bedrock),
            ),
            ("meta-llama/Llama-3.1-8B-Instruct", Some(Huggingface)),
            ("openai/gpt-oss-120b", Some(Huggingface)),
            ("meta-llama/Llama-3.1-8B-Instruct:novita", Some(Huggingface)),
            ("llama3.1:8b", Some(Ollama)),
            ("gpt-oss:20b", Some(Ollama)),
            ("qwen2.5:14b", Some(Ollama)),
            ("mistral:latest", Some(Ollama)),
            (
                "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
                Some(Ollama),
            ),
            ("llama3.1", None),
            ("my-model", None),
            ("omega", None),
            ("us.", None),
        ];
        for (model, want) in cases {
            assert_eq!(infer_provider(model), want, "{model}");
        }
    }

    /// Ids whose shape more than one kind of server uses are guessed, and say so.
    #[test]
    fn ambiguous_guesses_are_told_apart() {
        use ProviderKind::{Anthropic, Bedrock, Huggingface, Ollama, Openai};
        let sure = [
            ("gpt-4o-mini", Openai),
            ("o3-mini", Openai),
            ("ft:gpt-4o-mini-2024-07-18:my-org::abc123", Openai),
            ("claude-sonnet-4-5", Anthropic),
            ("us.anthropic.claude-3-5-haiku-20241022-v1:0", Bedrock),
            ("openai.gpt-oss-20b-1:0", Bedrock),
            (
                "arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-v2",
                Bedrock,
            ),
            ("hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", Ollama),
        ];
        for (model, kind) in sure {
            assert_eq!(guess_provider(model), Guess::Sure(kind), "{model}");
        }
        let ambiguous = [
            ("llama3.1:8b", Ollama),
            ("gpt-oss:20b", Ollama),
            ("qwen2.5-coder:7b-instruct-q4_K_M", Ollama),
            ("deepseek-r1:latest", Ollama),
            ("meta-llama/Llama-3.1-8B-Instruct", Huggingface),
            ("Qwen/Qwen2.5-72B-Instruct:together", Huggingface),
            ("mistralai/Mistral-7B-Instruct-v0.3", Huggingface),
            ("anthropic/claude-3.5-sonnet", Huggingface),
        ];
        for (model, kind) in ambiguous {
            match guess_provider(model) {
                Guess::Ambiguous { chosen, .. } => assert_eq!(chosen, kind, "{model}"),
                other => panic!("{model}: {other:?}"),
            }
        }
        for model in ["llama3.1", "mistral-7b-instruct", "my-model", "phi3"] {
            assert_eq!(guess_provider(model), Guess::Unknown, "{model}");
        }
    }

    #[test]
    fn provider_names_are_kinds_or_configured_names() {
        assert_eq!(
            ProviderName::new("openai"),
            ProviderName::Kind(ProviderKind::Openai)
        );
        assert_eq!(
            ProviderName::new("vllm"),
            ProviderName::Named("vllm".to_owned())
        );
        assert_eq!(ProviderName::new("vllm").kind(), None);
        assert_eq!(
            ProviderName::new("bedrock").kind(),
            Some(ProviderKind::Bedrock)
        );
        for name in ["ollama", "vllm"] {
            let p = ProviderName::new(name);
            assert_eq!(p.to_string(), name);
            assert_eq!(serde_json::to_value(&p).unwrap(), serde_json::json!(name));
        }
    }

    #[test]
    fn names_round_trip() {
        for (p, name) in ProviderKind::ALL.into_iter().zip(ProviderKind::NAMES) {
            assert_eq!(p.name(), name);
            assert_eq!(ProviderKind::from_name(name), Some(p));
            assert_eq!(p.to_string(), name);
            assert_eq!(serde_json::to_value(p).unwrap(), serde_json::json!(name));
        }
        assert_eq!(ProviderKind::from_name("OpenAI"), None);
    }
}
