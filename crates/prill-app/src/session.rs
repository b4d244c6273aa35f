//! [`Session`]: what [`Settings`] resolve to for one plan — connectors, providers, the
//! judge and run options — and the run itself.

use std::borrow::Cow;
use std::sync::Arc;

use prill_check::Judge;
use prill_connect::neuro_san_pool::Warming;
use prill_run::{Connectors, Event, RunOptions, Summary, run_plan};
use prill_spec::Plan;
use prill_spec::redact::{KEY_VARIABLES, Redactor};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::error::SettingsError;
use crate::parts::{Providers, with_providers};
use crate::settings::Settings;

/// Everything a run needs, resolved once from [`Settings`].
pub struct Session {
    /// How agents (by connection) and models (by provider) are reached.
    pub connectors: Connectors,
    /// The providers, the same ones `connectors` holds: call them from your own test
    /// functions to share their limits with the run.
    pub providers: Providers,
    /// The gist judge, when the plan needs one and one is available.
    pub judge: Option<Arc<dyn Judge>>,
    /// The run's options (jobs, samples, connections, the judge, cancellation).
    pub options: RunOptions,
    /// Lines worth telling the user (which judge and why, where the demo agents
    /// listen), in order; the CLI prints them to stderr.
    pub notes: Vec<String>,
    /// The keys of the environment ([`Settings::secrets`]), hidden in every event a run
    /// reports (with the plan's own [`Plan::secrets`]).
    pub secrets: Redactor,
    /// What models cost (`[prices]`): every interaction's cost is filled in from it
    /// before the reporters see the events.
    pub prices: crate::Prices,
    /// The run's cassettes, when a cassette flag was given: after the run,
    /// [`Session::cassette_failure`] says whether every recording was written.
    pub cassettes: Option<prill_connect::cassette::Cassettes>,
    /// The judge's calibration on record (`prill judge check --record`), which
    /// corrects the gist pass rates an assessment reports.
    pub judge_calibration: Option<prill_stats::agreement::Confusion>,
    /// neuro-san's warm workers starting: the first run reports when they are ready.
    warming: std::sync::Mutex<Option<Warming>>,
    /// The receiver of agents' spans, for `trajectory: otel` cases.
    receiver: Option<crate::otel::Receiver>,
    #[cfg(feature = "demo")]
    demo: Option<prill_demo::RunningServer>,
}

impl Session {
    /// Resolves `settings` for `plan`: the providers, the agent connectors (the demo's
    /// when `overrides.demo`), the launcher of tool programs
    /// ([`Settings::tool_launcher`]), the judge when a case has a gist check, and the
    /// cassettes every connection of them records into or replays from
    /// ([`Settings::open_cassettes`], with every secret of the run and of `plan`, which
    /// the model cache blanks too: [`Settings::with_plan_secrets`]). A plan with no case
    /// reaches nothing.
    pub async fn new(settings: &Settings, plan: &Plan) -> Result<Session, SettingsError> {
        let mut secrets = settings.secrets();
        secrets.extend(&plan.secrets);
        let cassettes = match &settings.cassettes {
            Some(opened) => Some(opened.clone()),
            None => settings.open_cassettes(&secrets)?,
        };
        let receiver = settings.otel_receiver(plan).await?;
        let settings = &settings
            .clone()
            .with_cassettes(cassettes.clone())
            .with_plan_secrets(plan.secrets.clone())
            .with_receiver(receiver.as_ref().map(|r| r.url().to_owned()));
        let mut notes = Vec::new();
        if let Some(c) = &cassettes {
            notes.push(format!(
                "cassettes: {} {}",
                crate::mode_name(c.mode()),
                c.dir().display()
            ));
        }
        if let Some(receiver) = &receiver {
            notes.push(format!(
                "spans: receiving agents' spans on {}",
                receiver.url()
            ));
        }
        if settings.overrides.insecure {
            notes.push("warning: --insecure: https certificates are not verified; anyone between you and the server can read and change the traffic".to_owned());
        }
        #[cfg_attr(not(feature = "demo"), allow(unused_mut))]
        let mut providers = settings.providers()?;
        #[cfg(feature = "demo")]
        let mut demo = None;
        let mut warming = None;
        let agents = if plan.cases.is_empty() {
            Connectors::new()
        } else if settings.overrides.demo {
            #[cfg(feature = "demo")]
            {
                let started = crate::demo::start_with(0, cassettes.clone())
                    .await
                    .map_err(|e| SettingsError::Demo(e.to_string()))?;
                notes.push(format!("demo agents on {}", started.server.base_url()));
                demo = Some(started.server);
                providers.insert(
                    prill_spec::ProviderName::Named(crate::DEMO_PROVIDER.to_owned()),
                    started.model,
                );
                started.connectors
            }
            #[cfg(not(feature = "demo"))]
            return Err(SettingsError::Demo(
                "this build has no demo agents (the `demo` feature of prill-app)".to_owned(),
            ));
        } else {
            let (connectors, started) =
                settings.agent_connectors(neuro_san_direct(settings, plan))?;
            warming = started;
            connectors
        };
        let mut judge_calibration = None;
        let judge = match settings.judge_for(plan, &providers).await? {
            Some(chosen) => {
                judge_calibration = settings.calibration_of(&chosen.name).map(|r| r.confusion);
                notes.push(chosen.announcement);
                notes.extend(chosen.warnings.into_iter().map(|w| format!("warning: {w}")));
                Some(chosen.judge)
            }
            None => None,
        };
        let mut options = settings.run_options(judge.clone());
        options.tracing = settings.tracing(receiver.as_ref());
        let mut connectors = with_providers(agents, &providers);
        if let Some(server) = settings.langgraph_server()? {
            connectors = connectors.with_graph_server(Arc::new(server));
        }
        Ok(Session {
            connectors: connectors.with_tool_launcher(settings.tool_launcher()?),
            providers,
            judge,
            options,
            notes,
            secrets: settings.secrets(),
            prices: settings.prices(),
            cassettes,
            judge_calibration,
            warming: std::sync::Mutex::new(warming),
            receiver,
            #[cfg(feature = "demo")]
            demo,
        })
    }

    /// What a run of `plan` hides: the session's keys and the plan's `${VAR}` values.
    pub fn secrets_of(&self, plan: &Plan) -> Redactor {
        let mut secrets = self.secrets.clone();
        secrets.extend(&plan.secrets);
        secrets
    }

    /// Runs `plan`, sending every event to `events`, and returns the summary. The events
    /// are the engine's own: not redacted and without costs ([`Session::run_reported`]
    /// does both; [`crate::Prices::fill`] fills costs in). A plan given rather than
    /// borrowed is freed case by case as the run goes ([`run_plan`]).
    pub async fn run<'p>(
        &self,
        plan: impl Into<Cow<'p, Plan>>,
        events: UnboundedSender<Event>,
    ) -> Summary {
        let warming = self
            .warming
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(warming) = warming else {
            return run_plan(plan, &self.connectors, &self.options, events).await;
        };
        // The engine's events pass through, and the workers' readiness joins them after
        // `RunStarted`, while the run lasts.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let forward = tokio::spawn(with_workers_ready(rx, warming, events));
        let summary = run_plan(plan, &self.connectors, &self.options, tx).await;
        let _ = forward.await;
        summary
    }

    /// Why the cassettes of this run are incomplete, when a recording could not be
    /// written: the run must then not count as recorded.
    pub fn cassette_failure(&self) -> Option<String> {
        self.cassettes.as_ref()?.failure()
    }

    /// The cases that replayed exchanges recorded under other inputs, tools, simulated
    /// user or tool program than they have now, by name, with what changed
    /// (`Cassettes::stale`): the run warns of them at its end.
    pub fn stale_cassettes(&self) -> Vec<(String, Vec<prill_spec::plan::under::Change>)> {
        self.cassettes
            .as_ref()
            .map(prill_connect::cassette::Cassettes::stale)
            .unwrap_or_default()
    }

    /// Cancels the run (Ctrl-C): nothing new starts, what runs is cancelled, and the
    /// run still ends with every unit's report.
    pub fn cancel_token(&self) -> CancellationToken {
        self.options.cancel.clone()
    }

    /// Stops what the session started (the demo server, the spans' receiver). Returns
    /// why agents' spans did not all reach the run's own OTLP receiver (`--otlp`), when
    /// they did not: what the user asked for is then missing, as with an unwritten
    /// report.
    pub async fn shutdown(self) -> Option<String> {
        let unsent = match self.receiver {
            Some(receiver) => receiver.shutdown().await,
            None => None,
        };
        #[cfg(feature = "demo")]
        if let Some(server) = self.demo {
            server.shutdown().await;
        }
        unsent
    }
}

impl Settings {
    /// The keys of the environment: the values of [`KEY_VARIABLES`], of every
    /// provider's `api_key_env` and of `[frameworks.langgraph]`'s, each shown as
    /// `${NAME}`.
    pub fn secrets(&self) -> Redactor {
        let named: Vec<String> = self
            .config
            .iter()
            .flat_map(|c| c.providers.values())
            .filter_map(|p| p.api_key_env.clone())
            .chain(self.config.iter().filter_map(|c| {
                c.frameworks
                    .as_ref()?
                    .langgraph
                    .as_ref()?
                    .api_key_env
                    .clone()
            }))
            .collect();
        let mut secrets = Redactor::default();
        secrets.secret_variables(
            KEY_VARIABLES
                .iter()
                .copied()
                .chain(named.iter().map(String::as_str)),
            |name| self.env.get(name).map(str::to_owned),
        );
        secrets
    }

    /// The run options: `jobs` (the override, else `[concurrency] jobs`, else 32),
    /// `[concurrency] max_test_case_concurrency`, `samples`, `connections` (left to the
    /// plan under `rerun_failed` and `units`: [`crate::prepare`] narrowed each case's own),
    /// `fail_fast`, `judge`, and whether the cases' parts are worked out for cassettes.
    pub fn run_options(&self, judge: Option<Arc<dyn Judge>>) -> RunOptions {
        let defaults = RunOptions::default();
        let configured = self
            .config
            .as_ref()
            .and_then(|c| c.concurrency.as_ref())
            .and_then(|c| c.jobs)
            .map(|n| n as usize);
        RunOptions {
            jobs: self.overrides.jobs.or(configured).unwrap_or(defaults.jobs),
            max_cases: self.max_cases(),
            samples: self.overrides.samples,
            connections: (!self.overrides.connections.is_empty()
                && !self.overrides.rerun_failed
                && self.overrides.units.is_none())
            .then(|| self.overrides.connections.clone()),
            fail_fast: self.overrides.fail_fast,
            judge,
            recorded_under: self.overrides.cassettes.is_some(),
            ..defaults
        }
    }
}

/// How many conversations of `plan` may go to neuro-san networks on `direct` (cases on
/// `direct` whose agent is no command of `prill.toml`, each with its samples at most):
/// the most warm workers the run could use at once.
fn neuro_san_direct(settings: &Settings, plan: &Plan) -> usize {
    let commands = settings.config.as_ref().map(|c| &c.agents);
    let on_direct = |case: &&prill_spec::Case| match &case.target {
        prill_spec::plan::Target::Agent {
            agent, connections, ..
        } => {
            let overridden = &settings.overrides.connections;
            let connections = if overridden.is_empty() {
                connections
            } else {
                overridden
            };
            connections.contains(&prill_spec::model::data_driven::Connection::Direct)
                && commands
                    .and_then(|c| c.get(&**agent))
                    .is_none_or(|a| a.command.is_none())
        }
        _ => false,
    };
    plan.cases
        .iter()
        .filter(on_direct)
        .map(|case| case.gate.max_samples() as usize)
        .sum()
}

/// Passes `engine`'s events to `events`, with [`Event::WorkersReady`] once `warming`
/// is done, after `RunStarted` (never after the run is over).
async fn with_workers_ready(
    mut engine: tokio::sync::mpsc::UnboundedReceiver<Event>,
    warming: Warming,
    events: UnboundedSender<Event>,
) {
    let ready = warming.wait();
    tokio::pin!(ready);
    let mut started = false;
    let mut told = false;
    loop {
        tokio::select! {
            // Readiness first: queued events of a run that is over must not hide it.
            biased;
            warmed = &mut ready, if started && !told => {
                told = true;
                let _ = events.send(Event::WorkersReady(prill_run::WorkersReady {
                    what: "neuro-san".to_owned(),
                    ready: warmed.ready,
                    failed: warmed.failed,
                    took: warmed.took,
                }));
            }
            event = engine.recv() => {
                let Some(event) = event else { return };
                started |= matches!(event, Event::RunStarted { .. });
                told |= matches!(event, Event::RunFinished(_));
                let _ = events.send(event);
            }
        }
    }
}
