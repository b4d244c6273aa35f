//! The gist judge: the one named by the `judge` override (`--judge`), else `[judge]
//! model` in `prill.toml`, else one picked from the environment; built over the same
//! [`Providers`] as the model cases, so it shares their limits.

use std::sync::Arc;
use std::time::Duration;

use prill_check::Judge;
use prill_connect::NeuroSanHttp;
use prill_judge::record::{OnRecord, RECORD_FILE, Records, Refusing, refusal};
use prill_judge::{
    Cache, HOW_TO_CONFIGURE, JudgeSampling, JudgeSpec, ModeNamer, ModelJudge, ModelNamer,
    NeuroSanJudge, Votes, key_vars, pick_from_env,
};
use prill_spec::{Plan, ProviderKind};

use crate::error::SettingsError;
use crate::parts::Providers;
use crate::settings::Settings;

/// How long the probe for a local Ollama may take.
const OLLAMA_PROBE: Duration = Duration::from_millis(500);

/// A judge (or a mode namer) and the line that announces it: which one, and why.
pub struct Chosen<T: ?Sized> {
    /// The judge.
    pub judge: Arc<T>,
    /// `openai:gpt-4o-mini (from --judge, 3 votes)`.
    pub announcement: String,
    /// What to warn about once, with the announcement: a `[judge] temperature` the
    /// model does not take, say.
    pub warnings: Vec<String>,
    /// The judge as calibrations are recorded under it (`openai:gpt-4o-mini`), and the
    /// votes it takes.
    pub name: (String, u32),
}

/// Whether any case of `plan` has a check a judge decides (`gist`, `trajectory_gist`
/// and their `not_` forms), or a simulated user whose turns the judge checks.
pub fn plan_needs_judge(plan: &Plan) -> bool {
    plan.cases.iter().any(|case| {
        case.user.as_ref().is_some_and(|u| u.check_turns)
            || case
                .interactions
                .iter()
                .any(|step| step.checks.iter().any(|check| check.kind.needs_judge()))
    })
}

impl Settings {
    /// The judge named, else the one the environment offers, with why; `Ok(None)` when
    /// there is none.
    pub async fn judge_spec(
        &self,
        providers: &Providers,
    ) -> Result<Option<(JudgeSpec, String)>, SettingsError> {
        let table = self.config.as_ref().and_then(|c| c.judge.as_ref());
        if let Some(flag) = &self.overrides.judge {
            let spec = JudgeSpec::parse(&self.as_kind(flag))
                .map_err(|e| SettingsError::Judge(format!("--judge: {e}")))?;
            return Ok(Some((spec, "from --judge".to_owned())));
        }
        if let Some(model) = table.and_then(|t| t.model.as_deref()) {
            let spec = JudgeSpec::parse(&self.as_kind(model))
                .map_err(|e| SettingsError::Judge(format!("prill.toml [judge] model: {e}")))?;
            return Ok(Some((spec, "from prill.toml".to_owned())));
        }
        let env = self.env.vars();
        let no_key = key_vars().all(|k| env.get(k).is_none_or(|v| v.trim().is_empty()));
        let ollama = match providers.get(ProviderKind::Ollama) {
            Some(ollama) if no_key => ollama.reachable(OLLAMA_PROBE).await,
            _ => false,
        };
        Ok(pick_from_env(env, ollama)
            .map(|picked| (picked.spec, format!("picked because {}", picked.because))))
    }

    /// `provider:model` with a named provider of `[providers]` (`vllm:mistral-7b`)
    /// written as its kind (`openai:mistral-7b`), which [`JudgeSpec`] reads; anything
    /// else as it is. [`Settings::named_judge`] says which named provider it was.
    fn as_kind(&self, text: &str) -> String {
        match self.named_judge_in(text) {
            Some((name, kind)) => format!("{kind}{}", &text.trim()[name.len()..]),
            None => text.to_owned(),
        }
    }

    /// The named provider (not a kind) of `[providers]` that `text` (`provider:model`)
    /// names, with its kind.
    fn named_judge_in(&self, text: &str) -> Option<(&str, ProviderKind)> {
        let (prefix, _) = text.trim().split_once(':')?;
        let (name, table) = self.config.as_ref()?.providers.get_key_value(prefix)?;
        let kind = table.kind?;
        (ProviderKind::from_name(name).is_none()).then_some((name.as_str(), kind))
    }

    /// The named provider of `[providers]` the named judge (`--judge`, else `[judge]
    /// model`) is on, e.g. `vllm` for `--judge vllm:mistral-7b`.
    pub fn named_judge(&self) -> Option<&str> {
        let text = match &self.overrides.judge {
            Some(flag) => flag.as_str(),
            None => self.config.as_ref()?.judge.as_ref()?.model.as_deref()?,
        };
        self.named_judge_in(text).map(|(name, _)| name)
    }

    /// The provider that serves a model judge of `kind`: the named one when the judge
    /// names one, else the kind's own; with how the judge is shown (`vllm:mistral-7b`).
    fn judge_provider(
        &self,
        providers: &Providers,
        kind: ProviderKind,
        model: &str,
    ) -> Result<(Arc<dyn prill_target::model::Provider>, String), SettingsError> {
        let (found, shown) = match self.named_judge() {
            Some(name) => (providers.by_name(name), format!("{name}:{model}")),
            None => (providers.get(kind), format!("{kind}:{model}")),
        };
        let provider = found.cloned().ok_or_else(|| {
            let (name, _) = shown.split_once(':').unwrap_or((&shown, ""));
            SettingsError::Judge(format!("no provider named `{name}` is configured"))
        })?;
        Ok((provider, shown))
    }

    /// The judge for `plan`, when it has a gist check and a judge is available.
    pub async fn judge_for(
        &self,
        plan: &Plan,
        providers: &Providers,
    ) -> Result<Option<Chosen<dyn Judge>>, SettingsError> {
        if !plan_needs_judge(plan) {
            return Ok(None);
        }
        let Some(mut chosen) = self.judge(providers).await? else {
            return Ok(None);
        };
        if let Some(why) = self.uncalibrated(&chosen.name)? {
            chosen
                .warnings
                .push(format!("every gist check will error: {why}"));
            chosen.judge = Arc::new(Refusing { reason: why });
        }
        Ok(Some(chosen))
    }

    /// The calibration on record of the judge `name` with its votes, when there is one
    /// (a record that cannot be read is none: `min_kappa` says so where it matters).
    pub fn calibration_of(&self, (name, votes): &(String, u32)) -> Option<OnRecord> {
        Records::read(&self.project_dir().join(RECORD_FILE))
            .ok()?
            .judges
            .remove(name)
            .filter(|r| r.votes == *votes)
    }

    /// Why the judge `name` (with its votes) may not judge this run's gist checks under
    /// `[judge] min_kappa`: no calibration on record for it, or one below the minimum.
    fn uncalibrated(&self, (name, votes): &(String, u32)) -> Result<Option<String>, SettingsError> {
        let Some(min) = self
            .config
            .as_ref()
            .and_then(|c| c.judge.as_ref())
            .and_then(|t| t.min_kappa)
        else {
            return Ok(None);
        };
        let records = Records::read(&self.project_dir().join(RECORD_FILE))
            .map_err(|e| SettingsError::Judge(e.to_string()))?;
        Ok(refusal(&records, name, *votes, min))
    }

    /// The judge the settings call for; `Ok(None)` when none is named and the
    /// environment offers none.
    pub async fn judge(
        &self,
        providers: &Providers,
    ) -> Result<Option<Chosen<dyn Judge>>, SettingsError> {
        let Some((spec, because)) = self.judge_spec(providers).await? else {
            return Ok(None);
        };
        let table = self.config.as_ref().and_then(|c| c.judge.as_ref());
        let votes = Votes::new(table.and_then(|t| t.votes).unwrap_or(1))
            .map_err(|e| SettingsError::Judge(format!("prill.toml [judge] votes: {e}")))?;
        let no_cache = self.overrides.no_cache || table.and_then(|t| t.cache) == Some(false);
        let cache = (!no_cache).then(|| {
            // A folder that cannot be made now is the cache's error when it writes.
            let _ = self.prill_dir();
            Cache::new(self.project_dir().join(prill_judge::cache::DEFAULT_DIR))
        });
        let mut warnings = Vec::new();
        let mut shown = spec.to_string();
        let judge: Arc<dyn Judge> = match &spec {
            JudgeSpec::Model {
                provider: kind,
                model,
            } => {
                let provider;
                (provider, shown) = self.judge_provider(providers, *kind, model)?;
                let mut judge = ModelJudge::new(provider, model.clone())
                    .with_votes(votes)
                    .with_sampling(self.judge_sampling());
                if let Some(cache) = cache {
                    judge = judge.with_cache(cache);
                }
                warnings.extend(judge.warning());
                Arc::new(judge)
            }
            JudgeSpec::NeuroSan { agent } => {
                let server = NeuroSanHttp::new(self.server_of(agent)?, &self.http_options()?)?;
                let mut judge = NeuroSanJudge::new(server, agent.clone()).with_votes(votes);
                if let Some(cache) = cache {
                    judge = judge.with_cache(cache);
                }
                Arc::new(judge)
            }
        };
        let extras = match (votes.get(), no_cache) {
            (1, false) => String::new(),
            (1, true) => ", no cache".to_owned(),
            (n, false) => format!(", {n} votes"),
            (n, true) => format!(", {n} votes, no cache"),
        };
        Ok(Some(Chosen {
            judge,
            announcement: format!("judge: {shown} ({because}{extras})"),
            warnings,
            name: (shown, votes.get()),
        }))
    }

    /// A model that names failure modes for `assess --classify llm`: the judge's model.
    pub async fn namer(
        &self,
        providers: &Providers,
    ) -> Result<Chosen<dyn ModeNamer>, SettingsError> {
        let Some((spec, because)) = self.judge_spec(providers).await? else {
            return Err(SettingsError::Judge(format!(
                "--classify llm needs a model to name the modes; {HOW_TO_CONFIGURE}"
            )));
        };
        let JudgeSpec::Model { provider, model } = &spec else {
            return Err(SettingsError::Judge(
                "--classify llm needs a model judge (provider:model), not a neuro-san agent"
                    .to_owned(),
            ));
        };
        let (provider, shown) = self.judge_provider(providers, *provider, model)?;
        let sampling = self.judge_sampling();
        let warnings = sampling
            .temperature_warning(provider.kind(), model)
            .into_iter()
            .collect();
        Ok(Chosen {
            judge: Arc::new(ModelNamer::new(provider, model.clone()).with_sampling(sampling)),
            announcement: format!("naming failure modes with {shown} ({because})"),
            warnings,
            name: (shown, 1),
        })
    }

    /// Keeps `calibration` of the judge `name` (with its votes) on `set` as its record in
    /// `prill-judge-calibration.json` beside `prill.toml`, in place of any before it.
    /// Returns the file.
    pub fn record_calibration(
        &self,
        (name, votes): &(String, u32),
        calibration: &prill_judge::calibrate::Calibration,
        set: &str,
    ) -> Result<std::path::PathBuf, prill_judge::record::RecordError> {
        let path = self.project_dir().join(RECORD_FILE);
        let mut records = Records::read(&path)?;
        let confusion = calibration.confusion();
        records.judges.insert(
            name.clone(),
            OnRecord {
                votes: *votes,
                kappa: confusion.kappa(),
                sensitivity: confusion.sensitivity(),
                specificity: confusion.specificity(),
                confusion,
                judged: (calibration.total - calibration.errors) as u64,
                agreed: calibration.agreed as u64,
                set: set.to_owned(),
                checked_on: crate::settings::today().to_string(),
            },
        );
        records.write(&path)?;
        Ok(path)
    }

    /// `[judge] temperature` and `max_tokens` from `prill.toml`.
    pub fn judge_sampling(&self) -> JudgeSampling {
        let table = self.config.as_ref().and_then(|c| c.judge.as_ref());
        JudgeSampling {
            temperature: table.and_then(|t| t.temperature),
            max_tokens: table.and_then(|t| t.max_tokens),
        }
    }
}
