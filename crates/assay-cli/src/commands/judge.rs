//! The gist judge on the command line: which one `run` and `assess` use (`--judge`,
//! else `[judge]` in assay.toml, else one picked from the environment), and
//! `assay judge check`, which measures a judge against a labeled set.
//!
//! Exit codes of `judge check`: 0 once the set is judged, whatever the rates; 2 when the
//! set cannot be read or no judge is available.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use assay_check::Judge;
use assay_connect::provider::{self, Limits, ProviderKind, ProviderSettings};
use assay_connect::{HttpOptions, NeuroSanHttp, SERVER_ENV, parse_server, resolve_server};
use assay_judge::calibrate::word;
use assay_judge::{
    Cache, Calibration, HOW_TO_CONFIGURE, JudgeSpec, LabeledItem, ModeNamer, ModelJudge,
    ModelNamer, NeuroSanJudge, Votes, calibrate, load_labeled, ollama_reachable, pick_from_env,
};
use assay_spec::model::config::Config;
use assay_spec::model::data_driven::StockTest;
use assay_spec::{CheckKind, Plan};

use crate::args::{Format, JudgeCheckArgs, TargetArgs};
use crate::exit::ExitCode;
use crate::output;

/// How long the probe for a local Ollama may take.
const OLLAMA_PROBE: Duration = Duration::from_millis(500);

/// What decides the judge, from the command line.
pub(crate) struct Choice<'a> {
    /// `--judge`.
    pub(crate) judge: Option<&'a str>,
    /// `--no-cache`.
    pub(crate) no_cache: bool,
    /// `--server`, for a neuro-san judge.
    pub(crate) server: Option<&'a str>,
    /// `--insecure`.
    pub(crate) insecure: bool,
    /// `--ca-cert`.
    pub(crate) ca_cert: Option<&'a Path>,
}

impl<'a> Choice<'a> {
    /// The choice `run` and `assess` make.
    pub(crate) fn of_target(target: &'a TargetArgs) -> Choice<'a> {
        Choice {
            judge: target.judge.as_deref(),
            no_cache: target.no_cache,
            server: target.remote.server.as_deref(),
            insecure: target.remote.insecure,
            ca_cert: target.remote.ca_cert.as_deref(),
        }
    }
}

/// Whether any case of `plan` has a `gist` or `not_gist` check.
pub(crate) fn plan_needs_judge(plan: &Plan) -> bool {
    plan.cases.iter().any(|case| {
        case.interactions.iter().any(|step| {
            step.checks.iter().any(|check| {
                matches!(
                    check.kind,
                    CheckKind::Stock {
                        test: StockTest::Gist,
                        ..
                    }
                )
            })
        })
    })
}

/// The judge for `run` and `assess`, when the plan needs one: built and announced on
/// stderr. `Ok(None)` when none is available (gist checks then error with a hint).
pub(crate) async fn for_plan(
    plan: &Plan,
    target: &TargetArgs,
    config: Option<&Config>,
) -> Result<Option<Arc<dyn Judge>>, String> {
    if !plan_needs_judge(plan) {
        return Ok(None);
    }
    build(&Choice::of_target(target), config).await
}

/// The judge `choice` and `config` call for, announced on stderr; `Ok(None)` when none
/// is named and the environment offers none.
pub(crate) async fn build(
    choice: &Choice<'_>,
    config: Option<&Config>,
) -> Result<Option<Arc<dyn Judge>>, String> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let table = config.and_then(|c| c.judge.as_ref());
    let Some((spec, because)) = resolve_spec(choice, config, &env).await? else {
        return Ok(None);
    };
    let votes = Votes::new(table.and_then(|t| t.votes).unwrap_or(1))
        .map_err(|e| format!("assay.toml [judge] votes: {e}"))?;
    let cache =
        (!choice.no_cache && table.and_then(|t| t.cache) != Some(false)).then(Cache::default_dir);
    let options = http_options(choice, config).map_err(|e| e.to_string())?;
    let judge: Arc<dyn Judge> = match &spec {
        JudgeSpec::Model {
            provider: kind,
            model,
        } => {
            let table = provider_table(config, *kind);
            let settings =
                ProviderSettings::resolve(*kind, &env, table).map_err(|e| e.to_string())?;
            let limits = Limits::new(
                table.and_then(|t| t.max_concurrency),
                table.and_then(|t| t.requests_per_minute),
            );
            let provider =
                provider::build(*kind, settings, &options, limits).map_err(|e| e.to_string())?;
            let mut judge = ModelJudge::new(provider, model.clone()).with_votes(votes);
            if let Some(cache) = cache {
                judge = judge.with_cache(cache);
            }
            Arc::new(judge)
        }
        JudgeSpec::NeuroSan { agent } => {
            let own = config
                .and_then(|c| c.agents.get(agent))
                .and_then(|a| a.url.as_deref());
            let base = match own {
                Some(url) => parse_server(url).map_err(|e| e.to_string())?,
                None => {
                    let env_server = env.get(SERVER_ENV).map(String::as_str);
                    resolve_server(
                        choice.server,
                        env_server,
                        config.and_then(|c| c.server.as_deref()),
                    )
                    .map_err(|e| e.to_string())?
                }
            };
            let server = NeuroSanHttp::new(base, &options).map_err(|e| e.to_string())?;
            let mut judge = NeuroSanJudge::new(server, agent.clone()).with_votes(votes);
            if let Some(cache) = cache {
                judge = judge.with_cache(cache);
            }
            Arc::new(judge)
        }
    };
    let extras = match (votes.get(), choice.no_cache) {
        (1, false) => String::new(),
        (1, true) => ", no cache".to_owned(),
        (n, false) => format!(", {n} votes"),
        (n, true) => format!(", {n} votes, no cache"),
    };
    output::stderr(&format!("judge: {spec} ({because}{extras})\n"));
    Ok(Some(judge))
}

/// The judge `choice` and `config` name, else the one the environment offers, with why;
/// `Ok(None)` when there is none.
async fn resolve_spec(
    choice: &Choice<'_>,
    config: Option<&Config>,
    env: &HashMap<String, String>,
) -> Result<Option<(JudgeSpec, String)>, String> {
    let table = config.and_then(|c| c.judge.as_ref());
    let found = if let Some(flag) = choice.judge {
        let spec = JudgeSpec::parse(flag).map_err(|e| format!("--judge: {e}"))?;
        (spec, "from --judge".to_owned())
    } else if let Some(model) = table.and_then(|t| t.model.as_deref()) {
        let spec = JudgeSpec::parse(model).map_err(|e| format!("assay.toml [judge] model: {e}"))?;
        (spec, "from assay.toml".to_owned())
    } else {
        let no_key = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
            .iter()
            .all(|k| env.get(*k).is_none_or(|v| v.trim().is_empty()));
        let ollama = if no_key {
            let settings = ProviderSettings::resolve(
                ProviderKind::Ollama,
                env,
                provider_table(config, ProviderKind::Ollama),
            )
            .map_err(|e| e.to_string())?;
            ollama_reachable(&settings.base_url, OLLAMA_PROBE).await
        } else {
            false
        };
        match pick_from_env(env, ollama) {
            Some(picked) => (picked.spec, format!("picked because {}", picked.because)),
            None => return Ok(None),
        }
    };
    Ok(Some(found))
}

/// A model that names failure modes for `assess --classify llm`: the judge's model.
pub(crate) async fn namer(
    choice: &Choice<'_>,
    config: Option<&Config>,
) -> Result<Arc<dyn ModeNamer>, String> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let Some((spec, because)) = resolve_spec(choice, config, &env).await? else {
        return Err(format!(
            "--classify llm needs a model to name the modes; {HOW_TO_CONFIGURE}"
        ));
    };
    let JudgeSpec::Model {
        provider: kind,
        model,
    } = &spec
    else {
        return Err(
            "--classify llm needs a model judge (provider:model), not a neuro-san agent".to_owned(),
        );
    };
    let options = http_options(choice, config).map_err(|e| e.to_string())?;
    let table = provider_table(config, *kind);
    let settings = ProviderSettings::resolve(*kind, &env, table).map_err(|e| e.to_string())?;
    let limits = Limits::new(
        table.and_then(|t| t.max_concurrency),
        table.and_then(|t| t.requests_per_minute),
    );
    let provider = provider::build(*kind, settings, &options, limits).map_err(|e| e.to_string())?;
    output::stderr(&format!("naming failure modes with {spec} ({because})\n"));
    Ok(Arc::new(ModelNamer::new(provider, model.clone())))
}

fn provider_table(
    config: Option<&Config>,
    kind: ProviderKind,
) -> Option<&assay_spec::model::config::ProviderConfig> {
    config.and_then(|c| c.providers.get(&kind))
}

fn http_options(
    choice: &Choice<'_>,
    config: Option<&Config>,
) -> Result<HttpOptions, assay_connect::ConnectError> {
    super::http_options(choice.ca_cert, choice.insecure, config)
}

/// `assay judge check`.
pub(crate) fn check(args: &JudgeCheckArgs, color: bool) -> anyhow::Result<ExitCode> {
    let items = match load_labeled(&args.file) {
        Ok(items) => items,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let config = match super::run::load_config(args.config.as_deref(), false, color) {
        Ok(config) => config,
        Err(code) => return Ok(code),
    };
    let choice = Choice {
        judge: args.judge.as_deref(),
        no_cache: args.no_cache,
        server: args.remote.server.as_deref(),
        insecure: args.remote.insecure,
        ca_cert: args.remote.ca_cert.as_deref(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        let judge = match build(&choice, config.as_ref()).await {
            Ok(Some(judge)) => judge,
            Ok(None) => {
                return Err(format!("no judge is configured: {HOW_TO_CONFIGURE}"));
            }
            Err(e) => return Err(e),
        };
        Ok(calibrate(judge.as_ref(), &items).await)
    });
    let calibration = match result {
        Ok(c) => c,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    match args.format {
        Format::Json => output::stdout(&format!("{:#}\n", calibration.to_json(&items)))?,
        Format::Human => output::stdout(&human(&calibration, &items))?,
    }
    Ok(ExitCode::OK)
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// The calibration as text.
fn human(c: &Calibration, items: &[LabeledItem]) -> String {
    let mut out = format!(
        "{} items: agreement {} ({} of {})\nfalse-pass rate {} ({} of {} labeled fail)\nfalse-fail rate {} ({} of {} labeled pass)\nerrors {}\n",
        c.total,
        percent(c.agreement_rate()),
        c.agreed,
        c.total,
        percent(c.false_pass_rate()),
        c.false_pass,
        c.expected_fail,
        percent(c.false_fail_rate()),
        c.false_fail,
        c.expected_pass,
        c.errors,
    );
    if !c.per_kind.is_empty() {
        out.push_str("\nby kind:\n");
        for (kind, t) in &c.per_kind {
            out.push_str(&format!(
                "  {kind}: {}/{} agreed, {} false pass, {} false fail, {} errors\n",
                t.agreed, t.total, t.false_pass, t.false_fail, t.errors
            ));
        }
    }
    let wrong: Vec<_> = c.disagreements().collect();
    if !wrong.is_empty() {
        out.push_str("\ndisagreements:\n");
        for r in wrong {
            let Some(item) = items.get(r.index) else {
                continue;
            };
            let kind = item
                .kind
                .as_deref()
                .map(|k| format!(" [{k}]"))
                .unwrap_or_default();
            let got = match &r.verdict {
                Ok(v) => format!("judged {}: {}", word(*v), r.reason),
                Err(e) => format!("error: {e}"),
            };
            out.push_str(&format!(
                "  #{}{kind} expected {}, {got}\n    sample: {}\n    criteria: {}\n",
                r.index + 1,
                word(r.expected),
                serde_json::Value::String(item.sample.clone()),
                serde_json::Value::String(item.criteria.clone()),
            ));
        }
    }
    out
}
