//! Which provider, where it is, and the key: from `provider` or the model name, each
//! ecosystem's own environment variables, and `assay.toml`.

use std::collections::HashMap;
use std::fmt;

use reqwest::Url;

use assay_spec::ProviderKind;

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
    /// The endpoint: the environment variable of [`ProviderKind::endpoint_env`] (for
    /// Bedrock, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, then AWS's general
    /// `AWS_ENDPOINT_URL`), else `base_url` in `assay.toml`, else the provider's default.
    pub base_url: Url,
    /// The key, from the environment variable `assay.toml` names in `api_key_env`, else
    /// the provider's own ([`ProviderKind::key_env`]).
    pub api_key: Option<Secret>,
    /// Bedrock's region (`AWS_REGION`, else `AWS_DEFAULT_REGION`, else `region` in
    /// `assay.toml`; past these, the AWS profile's, read on the first call).
    pub region: Option<String>,
    /// The standard AWS variables, for Bedrock's SigV4 signing when there is no bearer key.
    pub aws: Option<AwsCredentials>,
    /// Where Bedrock looks for AWS credentials and its region past the variables above
    /// (profiles, web identity, container and instance roles); `None` for the others.
    pub aws_sources: Option<crate::provider::bedrock::AwsSources>,
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
        // AWS's service-specific endpoint variable wins over its general one.
        let aws_endpoint = || {
            (kind == ProviderKind::Bedrock)
                .then(|| get("AWS_ENDPOINT_URL"))
                .flatten()
        };
        let endpoint = get(kind.endpoint_env())
            .or_else(aws_endpoint)
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
            aws_sources,
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
    }
}
