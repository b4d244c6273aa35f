//! The project configuration, `prill.toml`: agents, judge, providers, concurrency,
//! time limits, neuro-san's direct connection.
//!
//! Only its shape is defined here; the crates that run tests give it meaning.

use crate::model::provider::ProviderKind;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

/// The whole `prill.toml`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "PrillConfig")]
pub struct Config {
    /// The default neuro-san server for http, https and mcp connections (`--server` and
    /// `PRILL_SERVER` come before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "http://localhost:8080", "examples" = ["https://agents.example.com:8443"]))]
    pub server: Option<String>,
    /// Agents by name: a neuro-san server, or a command that speaks the direct protocol.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("examples" = [{"echo": {"command": ["python3", "agents/echo.py"]}}]))]
    pub agents: BTreeMap<String, AgentConfig>,
    /// The gist judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeConfig>,
    /// Model providers by name: a kind's own name (`[providers.openai]`) sets that
    /// provider up; any other name (`[providers.vllm]`, with `kind`) is one more
    /// provider of that kind, with its own endpoint, key variable and limits, which a
    /// spec's `provider` and the judge's `provider:model` can name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "providers_schema")]
    #[schemars(extend("examples" = [{"vllm": {"kind": "openai", "base_url": "http://localhost:8000/v1"}}]))]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Concurrency limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyConfig>,
    /// The gate of every case that states none (no `success_ratio` and no
    /// `reliability` of its own): a sequential test with stated error rates
    /// (`docs/statistics.md`). Without it, such a case must pass 1 of 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::model::gate::ReliabilitySchema>")]
    pub reliability: Option<crate::model::gate::Reliability>,
    /// The limit, in seconds, on each interaction with an agent and each call to a model
    /// whose test sets none (its own `timeout_in_seconds` or `timeout_ms`) and whose
    /// agent sets none; 300 when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 300, "examples" = [120]))]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout_in_seconds: Option<f64>,
    /// The longest silence, in seconds, while waiting for an answer or reading one,
    /// before the interaction ends as timed out; off when not given (a `MINIMAL`
    /// neuro-san stream is silent until the agent is done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [30]))]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub idle_timeout_in_seconds: Option<f64>,
    /// Make every warning an error in `prill validate` and `prill run` (as `--strict`
    /// does): a case that checks nothing, or checks under an unknown response part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false, "examples" = [true]))]
    pub strict: Option<bool>,
    /// neuro-san's `direct` connection: agent networks run in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neuro_san: Option<NeuroSanConfig>,
    /// Where HOCON `include` may read from: `any` path, as HOCON means it (the
    /// default), or only files inside the `project` folder, the one that holds this
    /// file (for teams that run tests from untrusted pull requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "any", "examples" = ["project"]))]
    pub includes: Option<IncludePolicy>,
    /// The most bytes a test file and everything it includes may hold together
    /// (default 33554432, 32 MiB; the values a file holds are bounded too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 33554432, "examples" = [67108864]))]
    #[schemars(range(min = 1))]
    pub max_input_bytes: Option<u64>,
    /// What the frameworks of Sentinel specs reach: `[frameworks.langgraph]`, the
    /// LangGraph server that `framework: langgraph` runs its assistants on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frameworks: Option<FrameworksConfig>,
    /// The run history that `prill runs` lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryConfig>,
    /// What models cost, by `provider:model` (the names a spec's `provider` and `model`
    /// and `--model` give): US dollars per million input and output tokens. A run
    /// records each call's cost where the model's usage and price are known.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Za-z0-9_-]+:.+$"}))]
    #[schemars(extend("examples" = [{"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6}}]))]
    pub prices: BTreeMap<String, PriceConfig>,
    /// What `prill compare` reports as a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<crate::model::compare::CompareConfig>,
    /// How `prill run --record`/`--replay` match requests to recordings
    /// (`docs/cassettes.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassettes: Option<CassettesConfig>,
    /// The model response cache: answers to requests at `temperature: 0` kept under
    /// `.prill/cache/models` and given again to identical requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheConfig>,
    /// Where `prill run` exports the run as OpenTelemetry spans (`docs/otel.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<OtelConfig>,
}

/// `[otel]`: the run exported as OpenTelemetry spans over OTLP/HTTP, and the receiver of
/// agents' spans (`docs/otel.md`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OtelConfig {
    /// The receiver's OTLP/HTTP endpoint: a base URL to which `v1/traces` is added, or
    /// one that ends `/v1/traces`. `--otlp` comes before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["http://127.0.0.1:6006"]))]
    pub endpoint: Option<String>,
    /// The spans' `service.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "prill", "examples" = ["checkout-agent-tests"]))]
    pub service_name: Option<String>,
    /// Headers sent with every export, such as Phoenix's `x-project-name`. Keys belong
    /// in the environment, in `OTEL_EXPORTER_OTLP_HEADERS` (`name=value,...`), whose
    /// headers are sent too.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("examples" = [{"x-project-name": "checkout"}]))]
    pub headers: BTreeMap<String, String>,
    /// Whether the spans carry content: what each interaction sent and got back, and
    /// each tool call's arguments and result, secrets blanked out as in every report.
    /// `--otlp-content` turns it on too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false, "examples" = [true]))]
    pub content: Option<bool>,
    /// Where the run's OTLP/HTTP receiver listens for the spans of `trajectory: otel`
    /// cases, as `host:port`. By default a free port on 127.0.0.1, which command agents
    /// are told of (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); give a fixed one for an
    /// agent that runs on its own and must be configured to send there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "127.0.0.1:0", "examples" = ["127.0.0.1:4318"]))]
    pub receiver: Option<String>,
    /// How long an interaction of a `trajectory: otel` case waits for its agent's
    /// spans after the answer, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 10, "exclusiveMinimum" = 0, "examples" = [30]))]
    pub wait_in_seconds: Option<f64>,
    /// Files agents write their spans to, as OTLP JSON lines (one
    /// `ExportTraceServiceRequest` a line: OpenTelemetry's OTLP file format, as the
    /// Collector's `file` exporter and the SDKs' OTLP file exporters write it), relative
    /// to this file's folder. What is appended to them during the run is read as if it
    /// had been sent to the receiver.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("examples" = [["spans/agent.jsonl"]]))]
    #[schemars(inner(length(min = 1)))]
    pub span_files: Vec<String>,
}

/// `[cassettes]`: which body fields matching leaves out. A request matches a recording
/// when its connector, endpoint and body agree once the volatile fields are out of
/// the body: by default `id`, `request_id`, `trace_id`, `timestamp`,
/// `metadata.request_id`, `metadata.trace_id`, `metadata.traceparent` and
/// `params._meta.traceparent`. The folder is given on the command line (`--record
/// DIR`, `--replay DIR`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CassettesConfig {
    /// More body fields to leave out of matching, as dotted paths from the body's top
    /// (`metadata.session`); `*` stands for any one key or list element
    /// (`messages.*.name`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("examples" = [["metadata.session", "messages.*.name"]]))]
    #[schemars(inner(length(min = 1)))]
    pub ignore: Vec<String>,
    /// Default volatile fields to match on after all, as they are written above
    /// (`trace_id`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("examples" = [["trace_id"]]))]
    #[schemars(inner(length(min = 1)))]
    pub keep: Vec<String>,
}

/// `[cache]`: the model response cache. A model provider's answer to a request at
/// `temperature: 0` is kept under `.prill/cache/models`, and an identical request later
/// is answered from it (no tokens, no rate slot; the report marks the answer `cached`
/// and counts its cost as 0). Agents are never cached. `--no-cache` turns it off for
/// one run, and so does any cassette flag (`--record`, `--replay`, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Whether model providers' answers are cached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true, "examples" = [false]))]
    pub models: Option<bool>,
    /// The most megabytes (10^6 bytes) the cached answers take together; past it, the
    /// least recently used go first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 500, "examples" = [100]))]
    #[schemars(range(min = 1))]
    pub max_mb: Option<u32>,
    /// Answers kept more than this many days ago are asked for again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 14, "examples" = [1]))]
    #[schemars(range(min = 1))]
    pub max_age_days: Option<u32>,
}

/// `[history]`: where `prill run` and `prill assess` keep their runs, and which they
/// keep. After each run the oldest runs past `keep`, and runs older than
/// `max_age_days`, are removed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    /// The folder of the runs' files, relative to this file's folder [default:
    /// `.prill/runs`]; the index stays `.prill/history.sqlite` (a cache of the files,
    /// rebuilt from them), and only the runs' own files there are ever removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ".prill/runs", "examples" = ["ci/prill-runs"]))]
    #[schemars(length(min = 1))]
    pub dir: Option<String>,
    /// How many runs are kept, the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 200, "examples" = [50]))]
    #[schemars(range(min = 1))]
    pub keep: Option<u32>,
    /// Runs that started more than this many days ago are removed [default: none is
    /// removed for its age].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [30]))]
    #[schemars(range(min = 1))]
    pub max_age_days: Option<u32>,
}

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    /// US dollars per million input (prompt) tokens.
    #[schemars(extend("examples" = [0.15]))]
    #[schemars(range(min = 0.0))]
    pub input: f64,
    /// US dollars per million output tokens (hidden reasoning included, where the
    /// provider counts it there).
    #[schemars(extend("examples" = [0.6]))]
    #[schemars(range(min = 0.0))]
    pub output: f64,
}

/// `[frameworks]`: the servers frameworks run on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameworksConfig {
    /// The LangGraph server (LangGraph Platform's Agent Server, or `langgraph dev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [{"url": "http://localhost:2024"}]))]
    pub langgraph: Option<LanggraphServerConfig>,
}

/// `[frameworks.langgraph]`: where `framework: langgraph` runs its assistants.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LanggraphServerConfig {
    /// The server's base url, e.g. `http://localhost:2024` (`langgraph dev`) or a
    /// deployment's url.
    #[schemars(extend("examples" = ["http://localhost:2024"]))]
    pub url: String,
    /// The environment variable that holds the key sent as `x-api-key` [default: the
    /// first of `LANGGRAPH_API_KEY`, `LANGSMITH_API_KEY`, `LANGCHAIN_API_KEY` that is
    /// set, as LangGraph's SDK reads them; no key when none is].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["LANGSMITH_API_KEY"]))]
    pub api_key_env: Option<String>,
    /// A limit, in seconds, on each run of a test whose own limit is not given
    /// [default: the top-level `timeout_in_seconds`, else 300].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [600]))]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout_in_seconds: Option<f64>,
}

/// `[providers]`: a kind's own table by the kind's name; any other name (letters,
/// digits, `_`, `-`; not `neuro-san`) must say its `kind`.
fn providers_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let table = generator.subschema_for::<ProviderConfig>();
    let kinds: serde_json::Map<String, serde_json::Value> = ProviderKind::NAMES
        .iter()
        .map(|name| ((*name).to_owned(), table.clone().to_value()))
        .collect();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": {
            "pattern": "^[A-Za-z0-9_-]+$",
            "not": { "const": "neuro-san" }
        },
        "properties": kinds,
        "additionalProperties": {
            "allOf": [table],
            "required": ["kind"]
        }
    })
}

/// neuro-san's `direct` connection. With this table (or with `AGENT_MANIFEST_FILE` set
/// in the environment), every agent of a `direct` case that is not a command of
/// `[agents]` runs in-process through neuro-san's Python library, by Prill's bridge
/// program (`docs/direct-agents.md`). Relative paths are relative to this file's folder.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeuroSanConfig {
    /// The Python that has neuro-san installed, e.g. `venv/bin/python` [default: `python3`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "python3", "examples" = ["venv/bin/python"]))]
    #[schemars(length(min = 1))]
    pub python: Option<String>,
    /// The agent network manifest, e.g. `registries/manifest.hocon` (neuro-san's
    /// `AGENT_MANIFEST_FILE`) [default: that variable, else neuro-san's own].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["registries/manifest.hocon"]))]
    #[schemars(length(min = 1))]
    pub manifest: Option<String>,
    /// Where coded tools are, e.g. `coded_tools` (neuro-san's `AGENT_TOOL_PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["coded_tools"]))]
    #[schemars(length(min = 1))]
    pub tool_path: Option<String>,
    /// More environment variables for neuro-san (`PYTHONPATH`, `AGENT_LLM_INFO_FILE`,
    /// ...); never keys, which come from the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("examples" = [{"PYTHONPATH": "."}]))]
    pub env: BTreeMap<String, String>,
    /// How many warm workers (bridge processes that load neuro-san once and serve one
    /// conversation after another) run at once [default: the machine's cores, at most
    /// `--jobs`]. Each is a Python process of a few hundred MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [2]))]
    #[schemars(range(min = 1))]
    pub workers: Option<u32>,
    /// Start a bridge process for every conversation instead of warm workers, for
    /// networks whose coded tools keep state in the process (module globals)
    /// [default: false].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false, "examples" = [true]))]
    pub fresh_process: Option<bool>,
}

/// Where HOCON `include` may read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IncludePolicy {
    /// Any path, as HOCON means it.
    #[default]
    Any,
    /// Only files inside the folder that holds `prill.toml`.
    Project,
}

impl Config {
    /// The kind of every provider of `[providers]`, by name (validation gives each
    /// its kind: its own `kind`, else its name's).
    pub fn provider_kinds(&self) -> BTreeMap<String, ProviderKind> {
        self.providers
            .iter()
            .filter_map(|(name, p)| {
                let kind = p.kind.or_else(|| ProviderKind::from_name(name))?;
                Some((name.clone(), kind))
            })
            .collect()
    }

    /// The limits on reading test files that this configuration sets (and the provider
    /// names a test may give), for a project
    /// whose folder (the one holding `prill.toml`) is `project`.
    pub fn limits(&self, project: &std::path::Path) -> crate::limits::Limits {
        let mut limits = crate::limits::Limits::default();
        if let Some(max) = self.max_input_bytes {
            limits.max_input_bytes = max;
        }
        if self.includes == Some(IncludePolicy::Project) {
            limits.includes = crate::limits::IncludeScope::Within(project.to_path_buf());
        }
        limits.providers = self.provider_kinds();
        limits
    }
}

/// How one agent is reached. Give exactly one of `url` and `command`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["url"]}, {"required": ["command"]}]))]
pub struct AgentConfig {
    /// The neuro-san server that hosts the agent, e.g. `http://localhost:8080`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["http://localhost:8080"]))]
    pub url: Option<String>,
    /// A program and its arguments, spawned once per conversation, that speaks JSON lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [["python3", "agents/echo.py"]]))]
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    /// Environment variables for the command.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("examples" = [{"LOG_LEVEL": "debug"}]))]
    pub env: BTreeMap<String, String>,
    /// A limit on each interaction, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [60]))]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout_in_seconds: Option<f64>,
}

/// The gist judge.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// `provider:model` (e.g. `openai:gpt-4o-mini`, or `vllm:mistral-7b` for a name
    /// of `[providers]`) or `neuro-san:<agent>` [default: `--judge`, else one picked
    /// from the keys set in the environment, `docs/judge.md`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["openai:gpt-4o-mini"]))]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]+:.+$"))]
    pub model: Option<String>,
    /// How many votes to take; odd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1, "examples" = [3]))]
    #[schemars(range(min = 1))]
    pub votes: Option<u32>,
    /// Whether verdicts are cached under `.prill/cache`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true, "examples" = [false]))]
    pub cache: Option<bool>,
    /// The judge's temperature [default: 0 where the model takes a temperature; none
    /// for reasoning models and models that refuse one].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [0.2]))]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// The most tokens one verdict may take [default: 400; 25000 for a reasoning model,
    /// whose hidden reasoning counts against it].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [1000]))]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// The least Cohen's κ the judge must have on record (`prill judge check --record`,
    /// in `prill-judge-calibration.json` beside prill.toml) for its gist checks to
    /// count: below it, or with no record for this judge, every gist check errors
    /// rather than pass or fail on a judge nobody has measured [default: no minimum].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [0.6]))]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_kappa: Option<f64>,
}

/// Settings for one provider.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Which API this provider speaks; required for a provider named other than its
    /// kind (`[providers.vllm] kind = "openai"`) [default: the table's name, when it is
    /// a kind's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["openai"]))]
    pub kind: Option<ProviderKind>,
    /// The name an OpenAI-compatible server takes the token limit under
    /// [default: `max_completion_tokens` for OpenAI's and Azure's own hosts and for
    /// reasoning models, `max_tokens` elsewhere].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["max_tokens"]))]
    pub max_tokens_field: Option<MaxTokensField>,
    /// The shape of Chat Completions a Hugging Face endpoint speaks: `openai` (the
    /// router) or `tgi` (TGI and Inference Endpoints, whose `response_format` differs)
    /// [default: `openai` for `router.huggingface.co`, `tgi` elsewhere].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["tgi"]))]
    pub api: Option<ChatApi>,
    /// Azure OpenAI's `api-version` query parameter [default: `OPENAI_API_VERSION`,
    /// else none, for Azure's `/openai/v1` API].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["2024-10-21"]))]
    pub api_version: Option<String>,
    /// The AWS profile (Bedrock) [default: `AWS_PROFILE`, else `default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["dev"]))]
    pub profile: Option<String>,
    /// The endpoint, overriding the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["http://localhost:8000/v1"]))]
    pub base_url: Option<String>,
    /// The environment variable that holds the key (the key itself never goes in a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["VLLM_API_KEY"]))]
    pub api_key_env: Option<String>,
    /// The most requests in flight at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [4]))]
    #[schemars(range(min = 1))]
    pub max_concurrency: Option<u32>,
    /// The most requests started per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [60]))]
    #[schemars(range(min = 1))]
    pub requests_per_minute: Option<u32>,
    /// The region (Bedrock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = ["us-east-1"]))]
    pub region: Option<String>,
}

/// The name an OpenAI-compatible server takes the token limit under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_tokens`, deprecated by OpenAI, still what many compatible servers read.
    MaxTokens,
    /// `max_completion_tokens`, what OpenAI's current models require.
    MaxCompletionTokens,
}

/// The shape of Chat Completions a Hugging Face endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChatApi {
    /// OpenAI's (Hugging Face's router).
    Openai,
    /// TGI's (TGI servers and Inference Endpoints).
    Tgi,
}

/// Concurrency limits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyConfig {
    /// The most samples in flight across the run (`--jobs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 32, "examples" = [8]))]
    #[schemars(range(min = 1))]
    pub jobs: Option<u32>,
    /// The most cases of one suite in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("examples" = [4]))]
    #[schemars(range(min = 1))]
    pub max_test_case_concurrency: Option<u32>,
}

impl PriceConfig {
    /// What `input` and `output` tokens cost at this price, in US dollars.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input + output as f64 * self.output) / 1_000_000.0
    }
}

impl Config {
    /// The price of `model` of the provider named `provider` (`[prices."provider:model"]`).
    pub fn price(&self, provider: &str, model: &str) -> Option<PriceConfig> {
        self.prices.get(&format!("{provider}:{model}")).copied()
    }
}
