//! The parts a run is made of, built from [`Settings`]: connection options, the
//! providers (the five kinds and every named provider of `[providers]`, one each, with
//! its own limits, shared by the model cases and the judge), the connectors of every
//! connection, the launcher of tool programs, and the LangGraph server of
//! `[frameworks.langgraph]`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prill_connect::langgraph::{self, LanggraphServer};
use prill_connect::neuro_san_direct::MANIFEST_ENV;
use prill_connect::neuro_san_pool::Warming;
use prill_connect::provider::{self, Limits, ProviderSettings};
use prill_connect::tools::{CommandTools, DEFAULT_MAX_LINE_BYTES};
use prill_connect::{
    ConfigSource, DirectConnector, HttpOptions, NeuroSanDirect, NeuroSanHttp, NeuroSanMcp,
    SERVER_ENV, StdioConnector, TlsOptions, Url, parse_server, resolve_server,
};
use prill_run::Connectors;
use prill_spec::model::config::ProviderConfig;
use prill_spec::model::data_driven::Connection;
use prill_spec::{ProviderKind, ProviderName};
use prill_target::model::Provider;
use prill_target::tools::ToolLauncher;
use prill_target::{BoxFuture, ConnectError, Connector, Conversation, DEFAULT_TIMEOUT};

use crate::settings::{Found, Settings};

/// Seconds from `prill.toml` (validated positive) as a duration; too many to hold is as
/// good as no limit.
pub fn seconds(seconds: Option<f64>) -> Option<Duration> {
    seconds.map(|s| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
}

/// Every provider, built once: the model cases and the judge call the same one, so a
/// provider's `max_concurrency` and `requests_per_minute` hold for the whole run. The
/// five kinds are there by their names, each named provider of `[providers]` by its own.
#[derive(Clone, Default)]
pub struct Providers {
    by_name: BTreeMap<ProviderName, Arc<dyn Provider>>,
}

impl Providers {
    /// The provider called `name` (a kind, or a name of `[providers]`), when it was built.
    pub fn get(&self, name: impl Into<ProviderName>) -> Option<&Arc<dyn Provider>> {
        self.by_name.get(&name.into())
    }

    /// The provider a judge's `provider:model` names: a kind, or a name of `[providers]`.
    pub fn by_name(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.get(ProviderName::new(name))
    }

    /// Adds (or replaces) the provider called `name`.
    pub fn insert(&mut self, name: ProviderName, provider: Arc<dyn Provider>) {
        self.by_name.insert(name, provider);
    }

    /// Every provider, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&ProviderName, &Arc<dyn Provider>)> {
        self.by_name.iter()
    }
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.by_name.keys().map(ProviderName::as_str))
            .finish()
    }
}

/// What a named provider reads of the environment: everything but its kind's own
/// endpoint and credential variables (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, ...), which
/// belong to the provider of that kind, so that a vLLM server never receives OpenAI's
/// key. The variable its `api_key_env` names is kept; a Bedrock provider that sets
/// its own `region` or `profile` does not read `AWS_REGION` or `AWS_PROFILE`.
pub(crate) fn named_env(
    kind: ProviderKind,
    table: &ProviderConfig,
    env: &HashMap<String, String>,
) -> HashMap<String, String> {
    let prefixes: &[&str] = match kind {
        ProviderKind::Openai => &["OPENAI_", "AZURE_OPENAI_"],
        ProviderKind::Anthropic => &["ANTHROPIC_"],
        ProviderKind::Ollama => &["OLLAMA_"],
        ProviderKind::Huggingface => &["HF_", "HUGGING_FACE_"],
        ProviderKind::Bedrock => &["AWS_ENDPOINT_URL", "AWS_BEARER_TOKEN_BEDROCK"],
    };
    let own_region = table.region.is_some();
    let own_profile = table.profile.is_some();
    env.iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            if table.api_key_env.as_deref() == Some(name) {
                return true;
            }
            let region = matches!(name, "AWS_REGION" | "AWS_DEFAULT_REGION");
            !(prefixes.iter().any(|p| name.starts_with(p))
                || kind == ProviderKind::Bedrock
                    && (own_region && region || own_profile && name == "AWS_PROFILE"))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

impl Settings {
    /// The connection options, resolved in this one place: TLS trust (`ca_cert`,
    /// `insecure`), the limit on an exchange whose test sets none (`timeout_in_seconds`,
    /// else [`DEFAULT_TIMEOUT`]), the idle limit (`idle_timeout_in_seconds`, else
    /// none) and the run's cassettes ([`Settings::cassettes`]).
    pub fn http_options(&self) -> Result<HttpOptions, ConnectError> {
        let mut tls = TlsOptions::default().insecure(self.overrides.insecure);
        if let Some(path) = &self.overrides.ca_cert {
            tls = tls.with_ca_file(path)?;
        }
        let config = self.config.as_ref();
        Ok(HttpOptions {
            tls,
            timeout: seconds(config.and_then(|c| c.timeout_in_seconds)).or(Some(DEFAULT_TIMEOUT)),
            idle_timeout: seconds(config.and_then(|c| c.idle_timeout_in_seconds)),
            cassettes: self.cassettes.clone(),
            ..HttpOptions::default()
        })
    }

    /// The five providers, each from its ecosystem's environment variables and its
    /// `[providers.<kind>]` table (endpoint, key variable, limits), and every named
    /// provider of `[providers]` (`[providers.vllm] kind = "openai"`), each from its own
    /// table and with its own limiter, reading none of its kind's own variables of the
    /// environment (`OPENAI_API_KEY`, ...). A missing key is reported by the first
    /// call, not here. Every one answers requests at `temperature: 0` from the model
    /// response cache ([`Settings::model_cache`]) unless it is off.
    pub fn providers(&self) -> Result<Providers, ConnectError> {
        let options = self.http_options()?;
        let cache = self.model_cache();
        let mut by_name = BTreeMap::new();
        let build =
            |kind: ProviderKind, env: &HashMap<String, String>, table: Option<&ProviderConfig>| {
                let settings = ProviderSettings::resolve(kind, env, table)?;
                let limits = Limits::new(
                    table.and_then(|t| t.max_concurrency),
                    table.and_then(|t| t.requests_per_minute),
                );
                provider::build_with_cache(kind, settings, &options, limits, cache.clone())
            };
        for kind in ProviderKind::ALL {
            let provider = build(kind, self.env.vars(), self.provider_table(kind))?;
            by_name.insert(ProviderName::Kind(kind), provider);
        }
        for (name, table) in self.config.iter().flat_map(|c| &c.providers) {
            let Some(kind) = table
                .kind
                .filter(|_| ProviderKind::from_name(name).is_none())
            else {
                continue;
            };
            let env = named_env(kind, table, self.env.vars());
            let provider = build(kind, &env, Some(table))
                .map_err(|e| ConnectError::config(format!("prill.toml [providers.{name}]: {e}")))?;
            by_name.insert(ProviderName::Named(name.clone()), provider);
        }
        Ok(Providers { by_name })
    }

    /// The LangGraph server of `[frameworks.langgraph]`, when there is one: its `url`,
    /// the key from its `api_key_env` (else the first of
    /// [`prill_connect::langgraph::KEY_VARIABLES`] that is set), and its
    /// `timeout_in_seconds` (else the connection options' limit).
    pub fn langgraph_server(&self) -> Result<Option<LanggraphServer>, ConnectError> {
        let Some(table) = self
            .config
            .as_ref()
            .and_then(|c| c.frameworks.as_ref())
            .and_then(|f| f.langgraph.as_ref())
        else {
            return Ok(None);
        };
        let url = parse_server(&table.url).map_err(|e| {
            ConnectError::config(format!("prill.toml [frameworks.langgraph] url: {e}"))
        })?;
        let mut options = self.http_options()?;
        if let Some(limit) = seconds(table.timeout_in_seconds) {
            options.timeout = Some(limit);
        }
        let (key, read) = langgraph::key_from_env(table.api_key_env.as_deref(), |name| {
            self.env.get(name).map(str::to_owned)
        });
        LanggraphServer::new(url, key, read, &options).map(Some)
    }

    /// The neuro-san server: `server` override, else `PRILL_SERVER`, else `prill.toml`'s
    /// `server`, else the default.
    pub fn server(&self) -> Result<Url, ConnectError> {
        resolve_server(
            self.overrides.server.as_deref(),
            self.env.get(SERVER_ENV),
            self.config.as_ref().and_then(|c| c.server.as_deref()),
        )
    }

    /// The server of `agent`: its own `url` in `prill.toml`, else [`Settings::server`].
    pub fn server_of(&self, agent: &str) -> Result<Url, ConnectError> {
        let own = self
            .config
            .as_ref()
            .and_then(|c| c.agents.get(agent))
            .and_then(|a| a.url.as_deref());
        match own {
            Some(url) => parse_server(url),
            None => self.server(),
        }
    }

    /// The neuro-san server's own client (to list its agents, say): [`Settings::server`]
    /// with the connection options.
    pub fn server_client(&self) -> Result<NeuroSanHttp, ConnectError> {
        NeuroSanHttp::new(self.server()?, &self.http_options()?)
    }

    /// The agent connectors: http, https and mcp to the server (an agent with its own
    /// `url` in `prill.toml` goes to its own, with its own time limit), `direct` to
    /// `prill.toml`'s commands, then neuro-san networks through the bridge, of which
    /// `warm` warm workers start now (as many as the plan's neuro-san conversations on
    /// `direct` could use at once), said ready by the [`Warming`] returned.
    pub fn agent_connectors(
        &self,
        warm: usize,
    ) -> Result<(Connectors, Option<Warming>), ConnectError> {
        let options = self.http_options()?;
        let base = self.server()?;
        let mut own: HashMap<String, (Url, HttpOptions)> = HashMap::new();
        for (name, agent) in self.config.iter().flat_map(|c| &c.agents) {
            if let Some(url) = &agent.url {
                let url = parse_server(url)?;
                let timeout = seconds(agent.timeout_in_seconds).or(options.timeout);
                let options = HttpOptions {
                    timeout,
                    ..options.clone()
                };
                own.insert(name.clone(), (url, options));
            }
        }
        let routed = |make: MakeConnector<'_>| {
            let default = make(&base, &options)?;
            let mut by_agent = HashMap::new();
            for (name, (url, options)) in &own {
                by_agent.insert(name.clone(), make(url, options)?);
            }
            Ok::<_, ConnectError>(Arc::new(Routed { default, by_agent }) as Arc<dyn Connector>)
        };
        let http = routed(&|u, o| Ok(Arc::new(NeuroSanHttp::new(u.clone(), o)?)))?;
        let https = routed(&|u, o| Ok(Arc::new(NeuroSanHttp::https(u, o)?)))?;
        let mcp = routed(&|u, o| Ok(Arc::new(NeuroSanMcp::new(u.clone(), o)?)))?;
        let direct_connector = self.direct_connector(&options);
        // neuro-san loads in the workers while the run gets ready; a worker that
        // cannot start says so at the first conversation that needs it.
        let warming = direct_connector
            .neuro_san()
            .filter(|_| warm > 0)
            .and_then(|n| n.warm(warm));
        let mut direct: Arc<dyn Connector> = Arc::new(direct_connector);
        #[cfg(feature = "demo")]
        if let Some(demo) = self.replayed_demo(&options) {
            direct = Arc::new(Routed {
                default: direct,
                by_agent: demo,
            });
        }
        let connectors = Connectors::new()
            .with(Connection::Direct, direct)
            .with(Connection::Http, http)
            .with(Connection::Https, https)
            .with(Connection::Mcp, mcp);
        Ok((connectors, warming))
    }

    /// How many warm neuro-san workers run at once: `[neuro_san] workers`, else the
    /// machine's cores; never more than the run's `--jobs`; 0 (a process per
    /// conversation) with `fresh_process = true`.
    pub fn neuro_san_workers(&self) -> usize {
        let table = self.config.as_ref().and_then(|c| c.neuro_san.as_ref());
        if table.and_then(|t| t.fresh_process).unwrap_or(false) {
            return 0;
        }
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let wanted = table.and_then(|t| t.workers).map_or(cores, |n| n as usize);
        wanted.min(self.run_options(None).jobs).max(1)
    }

    /// When replaying cassettes recorded with `--demo` (they hold
    /// [`DEMO_CONNECTOR`](crate::demo::DEMO_CONNECTOR) exchanges) without it: the demo
    /// agents on `direct`, answered from the cassettes only, for every demo agent's name
    /// `prill.toml` does not give a command of its own.
    #[cfg(feature = "demo")]
    fn replayed_demo(&self, options: &HttpOptions) -> Option<HashMap<String, Arc<dyn Connector>>> {
        let cassettes = options.cassettes.as_ref()?;
        if cassettes.mode() != prill_connect::cassette::Mode::Replay
            || !cassettes.holds(crate::demo::DEMO_CONNECTOR)
        {
            return None;
        }
        let registry: Arc<dyn Connector> =
            Arc::new(crate::demo::taped_registry(Some(cassettes.clone())));
        let own = self.config.as_ref().map(|c| &c.agents);
        Some(
            prill_demo::DemoAgent::ALL
                .iter()
                .map(|agent| agent.name())
                .filter(|name| !own.is_some_and(|own| own.contains_key(*name)))
                .map(|name| (name.to_owned(), Arc::clone(&registry)))
                .collect(),
        )
    }

    /// How `framework_config.tool_command` programs are started: with Prill's
    /// environment, every provider's `api_key_env` blanked out of their stderr as the
    /// [`KEY_VARIABLES`](prill_spec::redact::KEY_VARIABLES) are, answers capped at
    /// [`DEFAULT_MAX_LINE_BYTES`], and a call the loop gives no limit limited by
    /// `timeout_in_seconds` of `prill.toml`, else [`DEFAULT_TIMEOUT`]; their calls on
    /// the run's cassettes, so that a replay starts no program.
    pub fn tool_launcher(&self) -> Result<Arc<dyn ToolLauncher>, ConnectError> {
        let options = self.http_options()?;
        let secret_variables = self
            .config
            .iter()
            .flat_map(|c| c.providers.values())
            .filter_map(|p| p.api_key_env.clone())
            .collect();
        Ok(Arc::new(
            CommandTools::new(secret_variables, DEFAULT_MAX_LINE_BYTES, options.timeout)
                .with_cassettes(options.cassettes.clone()),
        ))
    }

    /// `direct`: `prill.toml`'s agent commands, then neuro-san agent networks in-process
    /// through the bridge when `[neuro_san]` (paths relative to `prill.toml`'s folder) or
    /// neuro-san's own `AGENT_MANIFEST_FILE` says where they are.
    fn direct_connector(&self, options: &HttpOptions) -> DirectConnector {
        let cwd = std::env::current_dir().ok();
        let commands = match &self.config {
            Some(c) => StdioConnector::from_config(c, cwd.as_deref()),
            None => StdioConnector::new(),
        }
        .with_timeouts(options.timeout, options.idle_timeout)
        .with_spans_to(self.receiver_url.as_deref());
        let dir = self.project_dir();
        let table = self.config.as_ref().and_then(|c| c.neuro_san.as_ref());
        let neuro_san =
            NeuroSanDirect::from_config(table, Path::new(&dir), self.env.get(MANIFEST_ENV))
                .map(|n| n.with_workers(self.neuro_san_workers()));
        let config = match &self.found {
            Found::File(path) => {
                ConfigSource::File(std::path::absolute(path).unwrap_or(path.clone()))
            }
            Found::None { from } => ConfigSource::NotFound(from.clone()),
        };
        DirectConnector::new(commands, neuro_san)
            .with_config(config)
            .with_cassettes(options.cassettes.clone())
    }
}

/// Adds `providers` to `connectors`.
pub fn with_providers(mut connectors: Connectors, providers: &Providers) -> Connectors {
    for (name, provider) in providers.iter() {
        connectors = connectors.with_provider(name.clone(), Arc::clone(provider));
    }
    connectors
}

/// Builds the connector of one server.
type MakeConnector<'a> = &'a dyn Fn(&Url, &HttpOptions) -> Result<Arc<dyn Connector>, ConnectError>;

/// Sends each agent to its own server when `prill.toml` names one, else to the default.
struct Routed {
    default: Arc<dyn Connector>,
    by_agent: HashMap<String, Arc<dyn Connector>>,
}

impl Connector for Routed {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        self.by_agent
            .get(agent)
            .unwrap_or(&self.default)
            .open(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn kept(env: &HashMap<String, String>) -> Vec<&str> {
        let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// A named provider never reads its kind's own endpoint and key variables, only
    /// the one its `api_key_env` names.
    #[test]
    fn a_named_provider_reads_none_of_its_kinds_variables() {
        let all = env(&[
            ("OPENAI_API_KEY", "sk-openai"),
            ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            ("OPENAI_ORG_ID", "org"),
            ("VLLM_KEY", "vk"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("HOME", "/home/me"),
        ]);
        let table = ProviderConfig {
            kind: Some(ProviderKind::Openai),
            api_key_env: Some("VLLM_KEY".to_owned()),
            ..ProviderConfig::default()
        };
        assert_eq!(
            kept(&named_env(ProviderKind::Openai, &table, &all)),
            ["ANTHROPIC_API_KEY", "HOME", "VLLM_KEY"]
        );
        // Naming the kind's own variable on purpose keeps it.
        let table = ProviderConfig {
            api_key_env: Some("OPENAI_API_KEY".to_owned()),
            ..table
        };
        assert!(named_env(ProviderKind::Openai, &table, &all).contains_key("OPENAI_API_KEY"));
        let gateway = named_env(ProviderKind::Anthropic, &ProviderConfig::default(), &all);
        assert!(!gateway.contains_key("ANTHROPIC_API_KEY"));
        assert!(gateway.contains_key("OPENAI_API_KEY"));
    }

    #[test]
    fn a_named_bedrock_provider_keeps_its_own_region_and_profile() {
        let all = env(&[
            ("AWS_REGION", "us-east-1"),
            ("AWS_PROFILE", "dev"),
            ("AWS_ACCESS_KEY_ID", "AKIA"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("AWS_BEARER_TOKEN_BEDROCK", "token"),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:1"),
        ]);
        let own = ProviderConfig {
            region: Some("eu-west-1".to_owned()),
            profile: Some("eu".to_owned()),
            ..ProviderConfig::default()
        };
        assert_eq!(
            kept(&named_env(ProviderKind::Bedrock, &own, &all)),
            ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        );
        assert_eq!(
            kept(&named_env(
                ProviderKind::Bedrock,
                &ProviderConfig::default(),
                &all
            )),
            [
                "AWS_ACCESS_KEY_ID",
                "AWS_PROFILE",
                "AWS_REGION",
                "AWS_SECRET_ACCESS_KEY"
            ]
        );
    }
}

#[cfg(test)]
mod workers {
    use crate::{Overrides, Settings};

    fn settings(toml: &str, jobs: Option<usize>) -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prill.toml"), toml).unwrap();
        let overrides = Overrides {
            jobs,
            ..Overrides::default()
        };
        let settings =
            Settings::load_from(dir.path(), None, prill_spec::Env::default(), overrides).unwrap();
        (dir, settings)
    }

    /// `[neuro_san] workers`, else the cores; never more than `--jobs`; none with
    /// `fresh_process`.
    #[test]
    fn warm_workers_are_as_many_as_asked_at_most_the_jobs() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let table = "[neuro_san]\nmanifest = \"m.hocon\"\n";
        assert_eq!(settings(table, Some(64)).1.neuro_san_workers(), cores);
        let three = format!("{table}workers = 3\n");
        assert_eq!(settings(&three, Some(64)).1.neuro_san_workers(), 3);
        assert_eq!(settings(&three, Some(2)).1.neuro_san_workers(), 2);
        let fresh = format!("{three}fresh_process = true\n");
        assert_eq!(settings(&fresh, Some(64)).1.neuro_san_workers(), 0);
    }
}
