//! Bedrock's AWS credentials and region as AWS users hold them, found by the AWS SDK's
//! own providers (`aws-config`), in a fixed order, from the environment snapshot the run
//! was given.
//!
//! The SDK's whole default chain reads the process environment and cannot be pointed at
//! a snapshot, so the chain is put together here from the SDK's public providers, each
//! given what the snapshot says: the environment keys, the shared profile (static keys,
//! `credential_process`, SSO, assume-role with `source_profile`, web identity in a
//! profile), web identity from the variables, container credentials (ECS/EKS) and the
//! instance metadata service (EC2). Nothing is read or reached before the first call:
//! a run that never calls Bedrock touches no profile and no network.
//!
//! The credentials found are kept and used until five minutes before they expire, then
//! found again. (The SDK's identity cache needs a client's runtime components, which
//! only an SDK client has.)

use std::collections::HashMap;
use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_config::Region;
use aws_config::ecs::EcsCredentialsProvider;
use aws_config::imds::credentials::ImdsCredentialsProvider;
use aws_config::meta::region::ProvideRegion;
use aws_config::profile::ProfileFileCredentialsProvider;
use aws_config::profile::region::ProfileFileRegionProvider;
use aws_config::provider_config::ProviderConfig;
use aws_config::web_identity_token::{StaticConfiguration, WebIdentityTokenCredentialsProvider};
use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_runtime::env_config::file::{EnvConfigFileKind, EnvConfigFiles};
use aws_smithy_http_client::tls::{Provider as TlsProvider, rustls_provider::CryptoMode};
use tokio::sync::{Mutex, OnceCell};

use crate::error::{ConnectError, cut};
use crate::provider::settings::{AwsCredentials, Secret};

/// How long before they expire credentials are found again.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// Where the name of the AWS profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileOrigin {
    /// `AWS_PROFILE`.
    Env,
    /// `profile` in `[providers.bedrock]` of `prill.toml`.
    Config,
    /// Neither: `default`.
    Default,
}

/// Web identity from the variables (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`,
/// `AWS_ROLE_SESSION_NAME`), as EKS and other OIDC setups set them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebIdentity {
    /// The file that holds the token.
    pub token_file: PathBuf,
    /// The role to assume.
    pub role_arn: String,
    /// The session name (else `prill-<seconds since the epoch>`).
    pub session_name: Option<String>,
}

/// Where Bedrock looks for AWS credentials and its region past the environment keys, as
/// the environment snapshot and `prill.toml` say. Nothing is opened to make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsSources {
    /// The profile: `profile` in `prill.toml`, else `AWS_PROFILE`, else `default`.
    pub profile: String,
    /// Where [`AwsSources::profile`] came from.
    pub profile_origin: ProfileOrigin,
    /// The shared config file: `AWS_CONFIG_FILE`, else `$HOME/.aws/config`.
    pub config_file: Option<PathBuf>,
    /// The shared credentials file: `AWS_SHARED_CREDENTIALS_FILE`, else
    /// `$HOME/.aws/credentials`.
    pub credentials_file: Option<PathBuf>,
    /// Web identity from the variables.
    pub web_identity: Option<WebIdentity>,
    /// Whether `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `..._FULL_URI` is set.
    pub container: bool,
    /// Whether the instance metadata service may be asked (not when
    /// `AWS_EC2_METADATA_DISABLED` is `true`).
    pub instance_metadata: bool,
    /// Whether the endpoint is Bedrock's default one, whose region may then come from
    /// the profile.
    pub endpoint_is_default: bool,
}

impl AwsSources {
    /// The sources `env` and the profile named in `prill.toml` (`config_profile`) point to.
    pub fn from_env(
        env: &HashMap<String, String>,
        config_profile: Option<&str>,
        endpoint_is_default: bool,
    ) -> AwsSources {
        let get = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        // `prill.toml` names the profile explicitly, as `--profile` does for the AWS CLI,
        // so it wins over `AWS_PROFILE`.
        let (profile, profile_origin) = match (config_profile, get("AWS_PROFILE")) {
            (Some(p), _) => (p.to_owned(), ProfileOrigin::Config),
            (None, Some(p)) => (p.to_owned(), ProfileOrigin::Env),
            (None, None) => ("default".to_owned(), ProfileOrigin::Default),
        };
        let home = get("HOME").map(PathBuf::from);
        let file = |var: &str, name: &str| match get(var) {
            Some(path) => Some(match (path.strip_prefix("~/"), &home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => PathBuf::from(path),
            }),
            None => home.as_ref().map(|h| h.join(".aws").join(name)),
        };
        let web_identity = match (get("AWS_WEB_IDENTITY_TOKEN_FILE"), get("AWS_ROLE_ARN")) {
            (Some(file), Some(role)) => Some(WebIdentity {
                token_file: PathBuf::from(file),
                role_arn: role.to_owned(),
                session_name: get("AWS_ROLE_SESSION_NAME").map(str::to_owned),
            }),
            _ => None,
        };
        AwsSources {
            profile,
            profile_origin,
            config_file: file("AWS_CONFIG_FILE", "config"),
            credentials_file: file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            web_identity,
            container: get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
                || get("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some(),
            instance_metadata: !get("AWS_EC2_METADATA_DISABLED")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            endpoint_is_default,
        }
    }

    /// The profile files that exist, for the SDK, and how to name them in errors.
    fn profile_files(&self) -> (Option<EnvConfigFiles>, String) {
        let listed = [&self.config_file, &self.credentials_file]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>();
        let named = if listed.is_empty() {
            "no file (HOME is not set)".to_owned()
        } else {
            listed.join(" and ")
        };
        let mut builder = EnvConfigFiles::builder();
        let mut any = false;
        for (path, kind) in [
            (&self.config_file, EnvConfigFileKind::Config),
            (&self.credentials_file, EnvConfigFileKind::Credentials),
        ] {
            if let Some(path) = path.as_ref().filter(|p| p.is_file()) {
                builder = builder.with_file(kind, path);
                any = true;
            }
        }
        (any.then(|| builder.build()), named)
    }

    /// The profile as errors name it: "the AWS profile `dev` (from AWS_PROFILE)".
    fn profile_label(&self) -> String {
        let from = match self.profile_origin {
            ProfileOrigin::Env => "from AWS_PROFILE",
            ProfileOrigin::Config => "from `profile` in [providers.bedrock]",
            ProfileOrigin::Default => {
                "named neither by `profile` in [providers.bedrock] nor by AWS_PROFILE"
            }
        };
        format!("the AWS profile `{}` ({from})", self.profile)
    }

    /// The `region` of the profile, read with the SDK's profile region provider.
    pub(crate) async fn profile_region(&self) -> Option<String> {
        let (files, _) = self.profile_files();
        let provider = ProfileFileRegionProvider::builder()
            .profile_files(files?)
            .profile_name(&self.profile)
            .build();
        provider.region().await.map(|r| r.as_ref().to_owned())
    }
}

/// One step of the chain: a provider to ask, or one passed over and why.
enum Step {
    /// Ask `provider`; errors name it `label`.
    Ask {
        label: String,
        provider: Box<dyn ProvideCredentials>,
    },
    /// Passed over: what the snapshot lacks for it.
    Skip(String),
}

/// Bedrock's credential chain: the environment keys, then the SDK's providers in order,
/// built on the first call and kept with the credentials they found.
pub(crate) struct Chain {
    env_keys: Option<AwsCredentials>,
    sources: AwsSources,
    steps: OnceCell<Vec<Step>>,
    cache: Mutex<Option<(Credentials, Arc<str>)>>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("env_keys", &self.env_keys)
            .field("sources", &self.sources)
            .finish_non_exhaustive()
    }
}

/// Credentials found, and where they came from (for the hint of a refusal).
pub(crate) struct Found {
    pub(crate) credentials: AwsCredentials,
    pub(crate) source: Arc<str>,
}

/// Where the environment keys are named.
pub(crate) const ENV_KEYS: &str = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";

impl Chain {
    pub(crate) fn new(env_keys: Option<AwsCredentials>, sources: AwsSources) -> Chain {
        Chain {
            env_keys,
            sources,
            steps: OnceCell::new(),
            cache: Mutex::new(None),
        }
    }

    /// Credentials for a call: the ones kept while they are good for five more minutes,
    /// else the first the chain finds. `region` is the one STS is asked in (web identity,
    /// assume-role).
    pub(crate) async fn credentials(&self, region: &str) -> Result<Found, ConnectError> {
        if let Some(keys) = &self.env_keys {
            return Ok(Found {
                credentials: keys.clone(),
                source: Arc::from(ENV_KEYS),
            });
        }
        let mut cache = self.cache.lock().await;
        if let Some((credentials, source)) = cache.as_ref()
            && fresh(credentials, SystemTime::now())
        {
            return Ok(found(credentials, source));
        }
        let steps = self
            .steps
            .get_or_init(|| async { self.steps(region) })
            .await;
        let mut tried = Vec::new();
        for step in steps {
            let (label, provider) = match step {
                Step::Ask { label, provider } => (label, provider),
                Step::Skip(why) => {
                    tried.push(why.clone());
                    continue;
                }
            };
            match provider.provide_credentials().await {
                Ok(credentials) => {
                    let source: Arc<str> = Arc::from(label.as_str());
                    let result = found(&credentials, &source);
                    *cache = Some((credentials, source));
                    return Ok(result);
                }
                Err(e @ CredentialsError::CredentialsNotLoaded(_)) => {
                    let why = e
                        .source()
                        .map_or_else(|| "nothing found".to_owned(), reasons);
                    tried.push(format!("{label} ({why})"));
                }
                Err(e) => {
                    // The SDK's outer message says only that loading failed.
                    let why = e.source().map_or_else(|| e.to_string(), reasons);
                    let what_to_do = if label.starts_with("the AWS profile") {
                        format!(
                            "fix that profile (an expired SSO session needs `aws sso login --profile {}`) or name another",
                            self.sources.profile
                        )
                    } else {
                        "fix it, or set other credentials".to_owned()
                    };
                    return Err(ConnectError::config(format!(
                        "bedrock could not get AWS credentials from {label}: {why}; {what_to_do}"
                    )));
                }
            }
        }
        Err(ConnectError::config(format!(
            "bedrock found no AWS credentials. Tried, in order: AWS_BEARER_TOKEN_BEDROCK (not set); {ENV_KEYS} (not set); {}. Set one of these, or name a profile with AWS_PROFILE or `profile` in [providers.bedrock]",
            tried.join("; ")
        )))
    }

    /// The SDK providers the snapshot points to, in order, and those passed over.
    fn steps(&self, region: &str) -> Vec<Step> {
        let sources = &self.sources;
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(TlsProvider::Rustls(CryptoMode::Ring))
            .build_https();
        let conf = ProviderConfig::without_region()
            .with_http_client(http)
            .with_region(Some(Region::new(region.to_owned())));
        let mut steps = Vec::new();
        let (files, named) = sources.profile_files();
        let profile = format!("{} in {named}", sources.profile_label());
        match files {
            Some(files) => steps.push(Step::Ask {
                label: profile,
                provider: Box::new(
                    ProfileFileCredentialsProvider::builder()
                        .configure(&conf)
                        .profile_files(files)
                        .profile_name(&sources.profile)
                        .build(),
                ),
            }),
            None => steps.push(Step::Skip(format!("{profile} (neither file exists)"))),
        }
        match &sources.web_identity {
            Some(w) => steps.push(Step::Ask {
                label: format!(
                    "web identity (AWS_WEB_IDENTITY_TOKEN_FILE {}, AWS_ROLE_ARN {})",
                    w.token_file.display(),
                    w.role_arn
                ),
                provider: Box::new(
                    WebIdentityTokenCredentialsProvider::builder()
                        .configure(&conf)
                        .static_configuration(StaticConfiguration {
                            web_identity_token_file: w.token_file.clone(),
                            role_arn: w.role_arn.clone(),
                            session_name: w.session_name.clone().unwrap_or_else(session_name),
                        })
                        .build(),
                ),
            }),
            None => steps.push(Step::Skip(
                "web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN not set)".to_owned(),
            )),
        }
        if sources.container {
            steps.push(Step::Ask {
                label: "container credentials (AWS_CONTAINER_CREDENTIALS_*)".to_owned(),
                provider: Box::new(EcsCredentialsProvider::builder().configure(&conf).build()),
            });
        } else {
            steps.push(Step::Skip(
                "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI not set)"
                    .to_owned(),
            ));
        }
        if sources.instance_metadata {
            steps.push(Step::Ask {
                label: "the EC2 instance metadata service".to_owned(),
                provider: Box::new(ImdsCredentialsProvider::builder().configure(&conf).build()),
            });
        } else {
            steps.push(Step::Skip(
                "the EC2 instance metadata service (turned off by AWS_EC2_METADATA_DISABLED)"
                    .to_owned(),
            ));
        }
        steps
    }
}

/// Whether `credentials` are good for more than [`REFRESH_BEFORE_EXPIRY`] at `now`.
fn fresh(credentials: &Credentials, now: SystemTime) -> bool {
    credentials
        .expiry()
        .is_none_or(|at| at > now + REFRESH_BEFORE_EXPIRY)
}

fn found(credentials: &Credentials, source: &Arc<str>) -> Found {
    Found {
        credentials: AwsCredentials {
            access_key_id: Secret::new(credentials.access_key_id()),
            secret_access_key: Secret::new(credentials.secret_access_key()),
            session_token: credentials.session_token().map(Secret::new),
        },
        source: source.clone(),
    }
}

/// `prill-<seconds since the epoch>`, as the SDK names a session when nothing does.
fn session_name() -> String {
    let seconds = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("prill-{seconds}")
}

/// An error and its causes, as one line: the SDK's outer errors say little ("an error
/// occurred while loading credentials"), their sources say what happened.
fn reasons(error: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    cut(&parts.join(": "), 600)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> HashMap<String, String> {
        vars.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn prill_toml_names_the_profile_before_the_environment() {
        let s = AwsSources::from_env(&env(&[("HOME", "/home/u")]), None, true);
        assert_eq!(
            (s.profile.as_str(), s.profile_origin),
            ("default", ProfileOrigin::Default)
        );
        assert_eq!(s.config_file, Some(PathBuf::from("/home/u/.aws/config")));
        assert_eq!(
            s.credentials_file,
            Some(PathBuf::from("/home/u/.aws/credentials"))
        );
        assert!(s.instance_metadata && !s.container && s.web_identity.is_none());
        let s = AwsSources::from_env(&env(&[]), Some("team"), true);
        assert_eq!(
            (s.profile.as_str(), s.profile_origin),
            ("team", ProfileOrigin::Config)
        );
        assert_eq!((s.config_file, s.credentials_file), (None, None));
        let s = AwsSources::from_env(
            &env(&[
                ("AWS_PROFILE", "mine"),
                ("HOME", "/home/u"),
                ("AWS_CONFIG_FILE", "~/cfg"),
                ("AWS_SHARED_CREDENTIALS_FILE", "/etc/creds"),
                ("AWS_EC2_METADATA_DISABLED", "TRUE"),
                ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds"),
                ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/token"),
                ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ]),
            None,
            false,
        );
        assert_eq!(
            (s.profile.as_str(), s.profile_origin),
            ("mine", ProfileOrigin::Env)
        );
        let t = AwsSources::from_env(&env(&[("AWS_PROFILE", "mine")]), Some("team"), false);
        assert_eq!(
            (t.profile.as_str(), t.profile_origin),
            ("team", ProfileOrigin::Config)
        );
        assert_eq!(s.config_file, Some(PathBuf::from("/home/u/cfg")));
        assert_eq!(s.credentials_file, Some(PathBuf::from("/etc/creds")));
        assert!(!s.instance_metadata && s.container);
        assert_eq!(
            s.web_identity.map(|w| w.role_arn),
            Some("arn:aws:iam::1:role/r".to_owned())
        );
    }

    #[test]
    fn credentials_are_found_again_five_minutes_before_they_expire() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let expiring = |secs| {
            Credentials::new(
                "id",
                "secret",
                None,
                Some(now + Duration::from_secs(secs)),
                "t",
            )
        };
        assert!(fresh(&expiring(3600), now));
        assert!(!fresh(&expiring(299), now));
        assert!(fresh(&Credentials::new("id", "s", None, None, "t"), now));
    }
}
