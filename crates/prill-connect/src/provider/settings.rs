//! Which provider, where it is, and the key: from `provider` or the model name, each
//! ecosystem's own environment variables, and `prill.toml`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use reqwest::Url;

use prill_spec::ProviderKind;
use prill_spec::model::config::{ChatApi, MaxTokensField};

use crate::error::ConnectError;

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

/// The variable of Anthropic's bearer token, for gateways.
pub const ANTHROPIC_AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";

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
/// `prill.toml`.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// Which provider.
    pub kind: ProviderKind,
    /// The endpoint: the environment variable of [`ProviderKind::endpoint_env`] (for
    /// Bedrock, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, then AWS's general
    /// `AWS_ENDPOINT_URL`), else `base_url` in `prill.toml`, else the provider's default.
    pub base_url: Url,
    /// The key, from the environment variable `prill.toml` names in `api_key_env`, else
    /// the provider's own ([`ProviderKind::key_env`]).
    pub api_key: Option<Secret>,
    /// Anthropic's bearer token for gateways (`ANTHROPIC_AUTH_TOKEN`), sent as
    /// `Authorization: Bearer`; read for Anthropic only.
    pub auth_token: Option<Secret>,
    /// Bedrock's region (`AWS_REGION`, else `AWS_DEFAULT_REGION`, else `region` in
    /// `prill.toml`; past these, the AWS profile's, read on the first call).
    pub region: Option<String>,
    /// The standard AWS variables, for Bedrock's SigV4 signing when there is no bearer key.
    pub aws: Option<AwsCredentials>,
    /// Where the key came from, for the error when it is missing (`OPENAI_API_KEY`,
    /// `AZURE_OPENAI_API_KEY`, `HF_TOKEN` or the token file, ...).
    pub key_source: Option<String>,
    /// OpenAI-compatible endpoints: what `prill.toml` and the environment say about the
    /// shape of the request beyond url and key.
    pub chat: ChatSettings,
    /// Where Bedrock looks for AWS credentials and its region past the variables above
    /// (profiles, web identity, container and instance roles); `None` for the others.
    pub aws_sources: Option<crate::provider::bedrock::AwsSources>,
}

/// How an OpenAI-compatible endpoint (OpenAI, Azure OpenAI, Hugging Face, any
/// compatible server) wants its requests, from `[providers.<name>]` and the environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatSettings {
    /// `max_tokens_field`: the token limit's name, overriding the default by host and model.
    pub max_tokens_field: Option<MaxTokensField>,
    /// `api`: OpenAI's or TGI's shape of Chat Completions (Hugging Face).
    pub api: Option<ChatApi>,
    /// Azure OpenAI's `api-version`: `api_version` in `prill.toml`, else
    /// `OPENAI_API_VERSION`.
    pub api_version: Option<String>,
    /// `OPENAI_ORG_ID`, sent as `OpenAI-Organization`.
    pub organization: Option<String>,
    /// `OPENAI_PROJECT_ID`, sent as `OpenAI-Project`.
    pub project: Option<String>,
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
    /// `prill.toml` entry, if any.
    pub fn resolve(
        kind: ProviderKind,
        env: &HashMap<String, String>,
        config: Option<&prill_spec::model::config::ProviderConfig>,
    ) -> Result<ProviderSettings, ConnectError> {
        let get = |name: &str| env.get(name).filter(|v| !v.is_empty()).cloned();
        let region = get("AWS_REGION")
            .or_else(|| get("AWS_DEFAULT_REGION"))
            .or_else(|| config.and_then(|c| c.region.clone()));
        // AWS's service-specific endpoint variable wins over its general one.
        let aws_endpoint = || {
            (kind == ProviderKind::Bedrock)
                .then(|| get("AWS_ENDPOINT_URL"))
                .flatten()
        };
        let endpoint = get(kind.endpoint_env())
            .or_else(aws_endpoint)
            .or_else(|| {
                // The Azure SDKs' own variable, when OpenAI's is not set.
                (kind == ProviderKind::Openai)
                    .then(|| get("AZURE_OPENAI_ENDPOINT"))
                    .flatten()
            })
            .or_else(|| config.and_then(|c| c.base_url.clone()));
        let aws_sources = (kind == ProviderKind::Bedrock).then(|| {
            crate::provider::bedrock::AwsSources::from_env(
                env,
                config.and_then(|c| c.profile.as_deref()),
                endpoint.is_none(),
            )
        });
        let endpoint = endpoint.unwrap_or_else(|| kind.default_endpoint(region.as_deref()));
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
        let (api_key, key_source) = key_of(kind, &get, config, &base_url);
        let auth_token = (kind == ProviderKind::Anthropic)
            .then(|| get(ANTHROPIC_AUTH_TOKEN))
            .flatten()
            .map(Secret::new);
        let aws = match (get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some(AwsCredentials {
                access_key_id: Secret::new(id),
                secret_access_key: Secret::new(secret),
                session_token: get("AWS_SESSION_TOKEN").map(Secret::new),
            }),
            _ => None,
        };
        let chat = ChatSettings {
            max_tokens_field: config.and_then(|c| c.max_tokens_field),
            api: config.and_then(|c| c.api),
            api_version: config
                .and_then(|c| c.api_version.clone())
                .or_else(|| get("OPENAI_API_VERSION")),
            organization: get("OPENAI_ORG_ID"),
            project: get("OPENAI_PROJECT_ID"),
        };
        Ok(ProviderSettings {
            kind,
            base_url,
            api_key,
            auth_token,
            region,
            aws,
            key_source,
            chat,
            aws_sources,
        })
    }

    /// The key, or an error that says which variable to set.
    pub fn require_key(&self) -> Result<&Secret, ConnectError> {
        self.api_key.as_ref().ok_or_else(|| {
            ConnectError::config(format!(
                "{} needs a key: set {}",
                self.kind.name(),
                self.key_source
                    .as_deref()
                    .or(self.kind.key_env())
                    .unwrap_or("its key variable")
            ))
        })
    }
}

/// Whether `url` is an Azure OpenAI resource (`*.openai.azure.com`,
/// `*.cognitiveservices.azure.com`, `*.services.ai.azure.com`).
pub(crate) fn azure_host(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    [
        ".openai.azure.com",
        ".cognitiveservices.azure.com",
        ".services.ai.azure.com",
    ]
    .iter()
    .any(|suffix| host.ends_with(suffix))
}

/// The key and the words that say where it is looked for: the variable `prill.toml`
/// names in `api_key_env`, else the provider's own places: `AZURE_OPENAI_API_KEY` then
/// `OPENAI_API_KEY` for an Azure host; `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, then the
/// token file of `hf auth login` ([`hf_token_file`]) for Hugging Face.
fn key_of(
    kind: ProviderKind,
    get: &dyn Fn(&str) -> Option<String>,
    config: Option<&prill_spec::model::config::ProviderConfig>,
    base_url: &Url,
) -> (Option<Secret>, Option<String>) {
    if let Some(var) = config.and_then(|c| c.api_key_env.clone()) {
        return (get(&var).map(Secret::new), Some(var));
    }
    match kind {
        ProviderKind::Openai if azure_host(base_url) => (
            get("AZURE_OPENAI_API_KEY")
                .or_else(|| get("OPENAI_API_KEY"))
                .map(Secret::new),
            Some("AZURE_OPENAI_API_KEY".to_owned()),
        ),
        ProviderKind::Huggingface => {
            let token = get("HF_TOKEN")
                .or_else(|| get("HUGGING_FACE_HUB_TOKEN"))
                .or_else(|| {
                    let text = std::fs::read_to_string(hf_token_file(get)?).ok()?;
                    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
                });
            (
                token.map(Secret::new),
                Some("HF_TOKEN (or log in with `hf auth login`)".to_owned()),
            )
        }
        _ => (
            kind.key_env().and_then(get).map(Secret::new),
            kind.key_env().map(str::to_owned),
        ),
    }
}

/// Where `huggingface_hub` keeps the token `hf auth login` writes: `HF_TOKEN_PATH`,
/// else `$HF_HOME/token`, else `$XDG_CACHE_HOME/huggingface/token`, else
/// `~/.cache/huggingface/token`; `None` without any of these variables.
pub(crate) fn hf_token_file(get: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = get("HF_TOKEN_PATH") {
        return Some(PathBuf::from(path));
    }
    let home = get("HF_HOME").map(PathBuf::from).or_else(|| {
        let cache = get("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| get("HOME").map(|home| Path::new(&home).join(".cache")))?;
        Some(cache.join("huggingface"))
    })?;
    Some(home.join("token"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn openai_reads_azure_s_and_the_sdk_s_variables() {
        let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let azure = env(&[
            ("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com"),
            ("OPENAI_API_KEY", "sk-fallback"),
            ("OPENAI_API_VERSION", "2024-10-21"),
            ("OPENAI_ORG_ID", "org-1"),
            ("OPENAI_PROJECT_ID", "proj-1"),
        ]);
        let s = ProviderSettings::resolve(ProviderKind::Openai, &azure, None).unwrap();
        assert_eq!(s.base_url.as_str(), "https://r.openai.azure.com/");
        assert_eq!(s.api_key.unwrap().expose(), "sk-fallback");
        assert_eq!(s.chat.api_version.as_deref(), Some("2024-10-21"));
        assert_eq!(s.chat.organization.as_deref(), Some("org-1"));
        assert_eq!(s.chat.project.as_deref(), Some("proj-1"));
        let config = prill_spec::model::config::ProviderConfig {
            api_version: Some("2025-01-01-preview".into()),
            ..Default::default()
        };
        let s = ProviderSettings::resolve(ProviderKind::Openai, &azure, Some(&config)).unwrap();
        assert_eq!(s.chat.api_version.as_deref(), Some("2025-01-01-preview"));
        let mut both = azure.clone();
        both.insert("OPENAI_BASE_URL".into(), "http://127.0.0.1:1/v1".into());
        let s = ProviderSettings::resolve(ProviderKind::Openai, &both, None).unwrap();
        assert_eq!(s.base_url.as_str(), "http://127.0.0.1:1/v1");
        assert!(azure_host(
            &Url::parse("https://x.services.ai.azure.com").unwrap()
        ));
        assert!(!azure_host(
            &Url::parse("https://azure.com.example").unwrap()
        ));
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
        let mut aws = env.clone();
        aws.insert("AWS_ENDPOINT_URL".into(), "http://127.0.0.1:4566".into());
        let bedrock = ProviderSettings::resolve(ProviderKind::Bedrock, &aws, None).unwrap();
        assert_eq!(bedrock.base_url.as_str(), "http://127.0.0.1:4566/");
        aws.insert(
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME".into(),
            "http://127.0.0.1:4567".into(),
        );
        let bedrock = ProviderSettings::resolve(ProviderKind::Bedrock, &aws, None).unwrap();
        assert_eq!(bedrock.base_url.as_str(), "http://127.0.0.1:4567/");
        let openai = ProviderSettings::resolve(ProviderKind::Openai, &aws, None).unwrap();
        assert_eq!(openai.base_url.as_str(), "http://127.0.0.1:9999/v1");
        let anthropic = ProviderSettings::resolve(ProviderKind::Anthropic, &env, None).unwrap();
        let e = anthropic.require_key().unwrap_err();
        assert_eq!(
            e.to_string(),
            "anthropic needs a key: set ANTHROPIC_API_KEY"
        );
        assert!(anthropic.auth_token.is_none());
        let gateway: HashMap<String, String> =
            [("ANTHROPIC_AUTH_TOKEN".to_owned(), "gw-token".to_owned())].into();
        let anthropic = ProviderSettings::resolve(ProviderKind::Anthropic, &gateway, None).unwrap();
        assert_eq!(anthropic.auth_token.as_ref().unwrap().expose(), "gw-token");
        assert!(anthropic.api_key.is_none());
        let openai = ProviderSettings::resolve(ProviderKind::Openai, &gateway, None).unwrap();
        assert!(openai.auth_token.is_none(), "read for anthropic only");
    }
}
