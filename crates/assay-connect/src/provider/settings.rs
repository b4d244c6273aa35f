//! Which provider, where it is, and the key: from `provider` or the model name, each
//! ecosystem's own environment variables, and `assay.toml`.

use std::collections::HashMap;
use std::fmt;

use reqwest::Url;

use crate::error::ConnectError;

/// The five providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    /// The provider's name, as specs and `assay.toml` spell it.
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

/// Ollama's endpoint as Ollama itself reads `OLLAMA_HOST`: without a scheme it is
/// http on port 11434 (`localhost` → `http://localhost:11434`, `:11435` →
/// `http://127.0.0.1:11435`); with `http://` or `https://` and no port, that scheme's
/// own port (80 or 443); a port that is not a number up to 65535 is the default
/// port; an empty host, `0.0.0.0` and `::` (addresses a server binds to) are reached on
/// the loopback address; `ollama.com` alone is `https://ollama.com:443`. A path is kept.
pub(crate) fn ollama_host(value: &str) -> String {
    let value = value.trim();
    let (scheme, rest, default_port) = match value.split_once("://") {
        None if value == "ollama.com" => ("https", "ollama.com:443", "443"),
        None => ("http", value, "11434"),
        Some(("https", rest)) => ("https", rest, "443"),
        Some((scheme, rest)) => (scheme, rest, if scheme == "http" { "80" } else { "11434" }),
    };
    let (hostport, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = split_host_port(hostport).unwrap_or((hostport, default_port));
    let port = match port.parse::<u32>() {
        Ok(n) if n <= 65535 => port,
        _ => default_port,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = match host {
        "" | "0.0.0.0" => "127.0.0.1".to_owned(),
        "::" => "[::1]".to_owned(),
        h if h.contains(':') => format!("[{h}]"),
        h => h.to_owned(),
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    format!("{scheme}://{host}:{port}{path}")
}

/// `host:port`, `[v6]:port` or `:port` split at the port; `None` without one.
fn split_host_port(hostport: &str) -> Option<(&str, &str)> {
    if let Some(rest) = hostport.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return after.strip_prefix(':').map(|port| (host, port));
    }
    let (host, port) = hostport.rsplit_once(':')?;
    // A bare IPv6 address has more colons and no port.
    (!host.contains(':')).then_some((host, port))
}

/// A secret: shown as `<redacted>` by `Debug`, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where one provider is and how to authenticate, resolved from the environment and
/// `assay.toml`.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// Which provider.
    pub kind: ProviderKind,
    /// The endpoint: the environment variable of [`ProviderKind::endpoint_env`], else
    /// `base_url` in `assay.toml`, else the provider's default.
    pub base_url: Url,
    /// The key, from the environment variable `assay.toml` names in `api_key_env`, else
    /// the provider's own ([`ProviderKind::key_env`]).
    pub api_key: Option<Secret>,
    /// Bedrock's region (`AWS_REGION`, else `AWS_DEFAULT_REGION`, else `region` in
    /// `assay.toml`).
    pub region: Option<String>,
    /// The standard AWS variables, for Bedrock's SigV4 signing when there is no bearer key.
    pub aws: Option<AwsCredentials>,
}

/// AWS credentials for SigV4.
#[derive(Debug, Clone)]
pub struct AwsCredentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: Secret,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: Secret,
    /// `AWS_SESSION_TOKEN`, when there is one.
    pub session_token: Option<Secret>,
}

impl ProviderSettings {
    /// Resolves the settings of `kind` from `env` (a snapshot of the environment) and the
    /// `assay.toml` entry, if any.
    pub fn resolve(
        kind: ProviderKind,
        env: &HashMap<String, String>,
        config: Option<&assay_spec::model::config::ProviderConfig>,
    ) -> Result<ProviderSettings, ConnectError> {
        let get = |name: &str| env.get(name).filter(|v| !v.is_empty()).cloned();
        let region = get("AWS_REGION")
            .or_else(|| get("AWS_DEFAULT_REGION"))
            .or_else(|| config.and_then(|c| c.region.clone()));
        let endpoint = get(kind.endpoint_env())
            .or_else(|| config.and_then(|c| c.base_url.clone()))
            .unwrap_or_else(|| kind.default_endpoint(region.as_deref()));
        let endpoint = match kind {
            ProviderKind::Ollama => ollama_host(&endpoint),
            // A URL without a scheme means http, as `OLLAMA_HOST` taught people to write.
            _ if !endpoint.contains("://") => format!("http://{endpoint}"),
            _ => endpoint,
        };
        let base_url = Url::parse(&endpoint).map_err(|e| {
            ConnectError::config(format!(
                "the {} endpoint `{endpoint}` is not a url: {e}",
                kind.name()
            ))
        })?;
        let key_var = config
            .and_then(|c| c.api_key_env.clone())
            .or_else(|| kind.key_env().map(str::to_owned));
        let api_key = key_var.and_then(|v| get(&v)).map(Secret::new);
        let aws = match (get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some(AwsCredentials {
                access_key_id: Secret::new(id),
                secret_access_key: Secret::new(secret),
                session_token: get("AWS_SESSION_TOKEN").map(Secret::new),
            }),
            _ => None,
        };
        Ok(ProviderSettings {
            kind,
            base_url,
            api_key,
            region,
            aws,
        })
    }

    /// The key, or an error that says which variable to set.
    pub fn require_key(&self) -> Result<&Secret, ConnectError> {
        self.api_key.as_ref().ok_or_else(|| {
            ConnectError::config(format!(
                "{} needs a key: set {}",
                self.kind.name(),
                self.kind.key_env().unwrap_or("its key variable")
            ))
        })
    }
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

    /// `OLLAMA_HOST` as Ollama reads it (its `envconfig.Host`).
    #[test]
    fn ollama_host_is_read_as_ollama_reads_it() {
        let cases = [
            ("", "http://127.0.0.1:11434"),
            ("localhost", "http://localhost:11434"),
            ("gpu-box:11500", "http://gpu-box:11500"),
            (":11434", "http://127.0.0.1:11434"),
            ("0.0.0.0", "http://127.0.0.1:11434"),
            ("0.0.0.0:8080", "http://127.0.0.1:8080"),
            ("::", "http://[::1]:11434"),
            ("[::1]:9000", "http://[::1]:9000"),
            ("fe80::1", "http://[fe80::1]:11434"),
            ("http://gpu-box", "http://gpu-box:80"),
            ("https://gpu-box", "https://gpu-box:443"),
            ("https://gpu-box:8443/ollama", "https://gpu-box:8443/ollama"),
            ("gpu-box:99999", "http://gpu-box:11434"),
            ("gpu-box:port", "http://gpu-box:11434"),
            ("ollama.com", "https://ollama.com:443"),
            ("  localhost:11434  ", "http://localhost:11434"),
        ];
        for (value, want) in cases {
            assert_eq!(ollama_host(value), want, "{value:?}");
        }
    }

    #[test]
    fn settings_follow_each_ecosystem_s_variables() {
        let env: HashMap<String, String> = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1"),
            ("OPENAI_API_KEY", "sk-test"),
            ("OLLAMA_HOST", "127.0.0.1:11435"),
            ("AWS_REGION", "eu-west-1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let openai = ProviderSettings::resolve(ProviderKind::Openai, &env, None).unwrap();
        assert_eq!(openai.base_url.as_str(), "http://127.0.0.1:9999/v1");
        assert_eq!(openai.api_key.as_ref().unwrap().expose(), "sk-test");
        assert_eq!(format!("{:?}", openai.api_key), "Some(<redacted>)");
        let ollama = ProviderSettings::resolve(ProviderKind::Ollama, &env, None).unwrap();
        assert_eq!(ollama.base_url.as_str(), "http://127.0.0.1:11435/");
        let bare: HashMap<String, String> =
            [("OLLAMA_HOST".to_owned(), "gpu-box".to_owned())].into();
        let ollama = ProviderSettings::resolve(ProviderKind::Ollama, &bare, None).unwrap();
        assert_eq!(
            ollama.base_url.as_str(),
            "http://gpu-box:11434/",
            "not port 80"
        );
        let bedrock = ProviderSettings::resolve(ProviderKind::Bedrock, &env, None).unwrap();
        assert_eq!(
            bedrock.base_url.as_str(),
            "https://bedrock-runtime.eu-west-1.amazonaws.com/"
        );
        let anthropic = ProviderSettings::resolve(ProviderKind::Anthropic, &env, None).unwrap();
        let e = anthropic.require_key().unwrap_err();
        assert_eq!(
            e.to_string(),
            "anthropic needs a key: set ANTHROPIC_API_KEY"
        );
    }
}
