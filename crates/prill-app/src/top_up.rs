//! `prill compare --top-up`: more samples of the head run for the cases its comparison
//! could not decide ([`prill_history::compare::TopUp`] says which, and when to stop),
//! drawn from the files the head ran, on the connections and models it ran with.
//!
//! Each wave is a run of its own, kept in the history with the command `top-up` and the
//! head's id ([`prill_report::format::TopUpOf`]): reading the head from the history
//! later adds them back ([`Settings::kept_run`], `prill compare`), so no sample is lost
//! and every later comparison of the head pays for the looks it took.
//!
//! A top-up is refused when its samples would not be samples of the head: the work tree
//! is at another commit than the head ran at, or the head replayed cassettes (their
//! answers again). Samples are numbered after the head's ([`Case::first_sample`]), so
//! caches and agents that draw by the sample's index answer anew.

use std::path::PathBuf;

use prill_history::compare::{Comparison, Draw, Side, TopUp, TopUpPlan, TopUpPlanError};
use prill_report::Reporters;
use prill_report::format::{TopUpOf, Unit};
use prill_run::Selection;
use prill_run::events::UnitReport;
use prill_run::select::NoTests;
use prill_spec::model::data_driven::SuccessRatio;
use prill_spec::plan::{Case, Gate};

use crate::drive::prepare;
use crate::history::git_state;
use crate::session::Session;
use crate::settings::{Overrides, Settings};

/// The command of a top-up's runs in the history.
pub const TOP_UP_COMMAND: &str = "top-up";

/// Why a top-up could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopUpError {
    /// The plan cannot run.
    #[error(transparent)]
    Plan(#[from] TopUpPlanError),
    /// The head has no `run` line: which files it ran is not known.
    #[error(
        "--top-up draws more samples of the head's cases, but {label} does not say which files it ran (it has no `run` line): name a kept run, or a `--jsonl` stream"
    )]
    NoRunLine {
        /// How the head was named.
        label: String,
    },
    /// The work tree is at another commit than the head ran at.
    #[error(
        "the head run {id} ran at commit {head}, and the work tree is at {now}: more samples now would not be samples of the head; check out {head} to top it up"
    )]
    OtherCommit {
        /// The head's id.
        id: String,
        /// Its commit.
        head: String,
        /// The work tree's.
        now: String,
    },
    /// The head replayed cassettes.
    #[error(
        "the head run {id} replayed cassettes (--{mode} {dir}): more samples would replay the same answers, not draw new ones"
    )]
    Replayed {
        /// The head's id.
        id: String,
        /// The cassette flag it ran with.
        mode: String,
        /// Their folder.
        dir: String,
    },
}

/// What a top-up came to.
#[derive(Debug)]
pub struct ToppedUp {
    /// The comparison with every sample added, [`Comparison::top_up`] saying what was.
    pub comparison: Comparison,
    /// The head, its units' tallies and samples including the top-up's.
    pub head: Side,
    /// What went wrong on the way, each starting `warning:`: a wave that could not run
    /// or be kept ends the top-up there, with what it had.
    pub warnings: Vec<String>,
}

impl Settings {
    /// Tops up `head` against `base` under `plan`: wave after wave of the undecided
    /// cases' samples, each kept in the history as a `top-up` run, until every case has
    /// decided or reached its cap. The head's files, connections, models and judge are
    /// the ones its `run` line names; the agents are reached as these settings say.
    pub async fn top_up(
        &self,
        base: Side,
        head: Side,
        plan: TopUpPlan,
    ) -> Result<ToppedUp, TopUpError> {
        plan.check()?;
        let info = head.info.clone().ok_or_else(|| TopUpError::NoRunLine {
            label: head.label.clone(),
        })?;
        // `record` and `re-record` asked the agents; `replay` and `replay-or-record`
        // (mostly) did not.
        if let Some(c) = &info.settings.cassettes
            && c.mode.starts_with("replay")
        {
            return Err(TopUpError::Replayed {
                id: info.id.clone(),
                mode: c.mode.clone(),
                dir: c.dir.clone(),
            });
        }
        let mut warnings = Vec::new();
        let now = git_state(&self.project_dir());
        match (&info.git, &now) {
            (Some(then), Some(now)) if then.commit != now.commit => {
                return Err(TopUpError::OtherCommit {
                    id: info.id.clone(),
                    head: then.commit.clone(),
                    now: now.commit.clone(),
                });
            }
            (_, Some(now)) if now.dirty => warnings.push(
                "warning: the work tree has changes that are not committed: the samples added are of the code as it is now".to_owned(),
            ),
            _ => {}
        }
        let paths: Vec<PathBuf> = info.settings.paths.iter().map(PathBuf::from).collect();
        let overrides = Overrides {
            connections: info
                .settings
                .connections
                .iter()
                .filter_map(|c| prill_spec::model::data_driven::Connection::from_name(c))
                .collect(),
            models: info.settings.models.clone(),
            judge: self
                .overrides
                .judge
                .clone()
                .or_else(|| info.settings.judge.clone()),
            samples: None,
            reliability: None,
            rerun_failed: false,
            fail_fast: false,
            ..self.overrides.clone()
        };
        let thresholds = self.compare_thresholds();
        let mut top_up = TopUp::new(base, head, thresholds, plan);
        let of = TopUpOf {
            head: info.id.clone(),
            looks: top_up.head().looks,
        };
        loop {
            let draws = top_up.next_wave();
            if draws.is_empty() {
                break;
            }
            match self.wave(&paths, &overrides, &of, &draws).await {
                Ok((wave, warning)) => {
                    warnings.extend(warning);
                    let errored: u32 = wave.units.iter().map(|u| u.tally.errored).sum();
                    top_up.add(&draws, wave);
                    if errored > 0 {
                        // An agent that stopped answering would only add samples that
                        // do not pass: the top-up stops with what it has.
                        warnings.push(format!(
                            "warning: {errored} sample(s) of the last top-up wave errored; they count as not passing, as the head's own errored samples do, and the top-up stopped there"
                        ));
                        break;
                    }
                }
                Err(e) => {
                    warnings.push(format!("warning: a top-up wave could not run: {e}"));
                    break;
                }
            }
        }
        let (comparison, head) = top_up.finish();
        Ok(ToppedUp {
            comparison,
            head,
            warnings,
        })
    }

    /// Draws one wave: the `draws`' cases loaded from `paths`, each held to run exactly
    /// its samples from its first index, kept in the history as a `top-up` run of `of`.
    /// Returns the wave as a side of a comparison, and a warning when it is not kept.
    async fn wave(
        &self,
        paths: &[PathBuf],
        overrides: &Overrides,
        of: &TopUpOf,
        draws: &[Draw],
    ) -> Result<(Side, Option<String>), String> {
        let units = draws
            .iter()
            .map(|d| (d.case.case_id.clone(), d.case.connection.clone()))
            .collect();
        let settings = self.clone().with_overrides(Overrides {
            units: Some(units),
            ..overrides.clone()
        });
        let selection = Selection::all();
        let mut prepared = prepare(&settings, paths, &selection, Some(NoTests::Pass));
        if prepared.inputs.invalid() > 0 {
            return Err(format!(
                "{} of the head's files are invalid now (`prill validate` says why)",
                prepared.inputs.invalid()
            ));
        }
        let mut wave = Side {
            label: TOP_UP_COMMAND.to_owned(),
            info: None,
            units: Vec::new(),
            finished: true,
            summary: None,
            looks: 1,
            topped_up_by: Vec::new(),
        };
        if prepared.plan.cases.is_empty() {
            // None of the cases is among the files now: nothing to draw, nothing kept.
            return Ok((wave, None));
        }
        for case in &mut prepared.plan.cases {
            let mine = draws.iter().filter(|d| d.case.case_id == *case.id);
            let (samples, first) = mine.fold((0, 0), |(n, f), d| {
                (n.max(d.samples), f.max(d.first_sample))
            });
            exactly(case, samples.max(1), first);
        }
        let mut reporters = Reporters::new();
        let mut run = settings.run_settings(paths, &selection);
        run.top_up = Some(of.clone());
        let (info, warning) = match settings.history_report_for(TOP_UP_COMMAND, run) {
            Ok((recorder, info)) => {
                reporters.push_with(
                    "history",
                    recorder,
                    prill_report::Stake::Kept {
                        lost: crate::keep::HISTORY_LOST,
                    },
                );
                (Some(info), None)
            }
            Err(e) => (
                None,
                Some(format!(
                    "warning: this top-up's samples are not kept in the history: {e}"
                )),
            ),
        };
        let session = Session::new(&settings, &prepared.plan)
            .await
            .map_err(|e| e.to_string())?;
        let mut units: Vec<UnitReport> = Vec::new();
        let (_, unwritten) = session
            .assess_reported(&prepared.plan, reporters, |u| units.push(u.clone()))
            .await;
        session.shutdown().await;
        let mut warning = warning;
        if let Some(e) = unwritten.first() {
            warning = Some(format!(
                "warning: this top-up's samples are not all kept in the history: {e}"
            ));
        }
        if let Some(info) = &info {
            wave.label = info.id.clone();
        }
        wave.info = info;
        wave.units = units.iter().map(Unit::from).collect();
        Ok((wave, warning))
    }
}

/// Holds `case` to run exactly `samples` samples from index `first`, its gate's pass
/// rate kept where it has one (a `reliability` gate's `good`), so that the wave's own
/// verdict reads as the case's would over that many samples.
fn exactly(case: &mut Case, samples: u32, first: u32) {
    let ratio = match case.gate {
        Gate::Ratio(r) => r.scaled_to(samples),
        Gate::Reliability(r) => SuccessRatio {
            need: ((r.good * f64::from(samples)).ceil() as u32).clamp(1, samples),
            of: samples,
        },
    };
    case.gate = Gate::Ratio(ratio);
    case.first_sample = first;
}
