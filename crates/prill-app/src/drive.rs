//! Driving a run from files to reports: [`prepare`] loads the files and selects the
//! cases, [`Session::run_reported`] runs them into reporters, [`Session::assess`] runs
//! every sample for the assessor.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;

use prill_assess::{CaseAssessment, Failure, SampleOutcome, assess, merge_named};
use prill_check::Status;
use prill_judge::ModeInput;
use prill_report::{ReportError, Reporters};
use prill_run::events::{Event, SampleReport, UnitReport};
use prill_run::select::{EmptyRun, NoTests, SuiteId};
use prill_run::{RunOptions, Selection, Summary, run_plan};
use prill_spec::Plan;
use prill_spec::inputs::{Inputs, load_paths_for_cases};
use prill_spec::plan::Gate;
use tokio::sync::mpsc;

use crate::error::SettingsError;
use crate::models::{runs_on_a_model, with_models};
use crate::parts::Providers;
use crate::rerun::{only_units, rerun_failed};
use crate::session::Session;
use crate::settings::Settings;

/// The files of a run, loaded, and the cases selected from them.
pub struct Prepared {
    /// Every file, loaded validly or not (for its diagnostics).
    pub inputs: Inputs,
    /// The selected cases; none when any file is invalid.
    pub plan: Plan,
    /// What the run being empty comes to, when it is.
    pub empty: Option<EmptyRun>,
    /// Lines worth telling the user about the selection (what `--rerun-failed` reruns).
    pub notes: Vec<String>,
    /// The suite the plan's units were selected from, before the partition (what
    /// `prill report merge` checks shards by); `None` when nothing could be selected.
    pub suite: Option<SuiteId>,
}

/// Loads every file under `paths` (within the settings' input limits; strict when the
/// settings are) and selects the cases `selection` matches. When a file is invalid the
/// plan is empty: nothing of an invalid run is run.
///
/// Before the selection, each model case becomes one case per `--model`
/// ([`crate::with_models`]), and under `--rerun-failed` only the units that failed or
/// errored in the last run are kept ([`Settings::last_run_path`]); with none, the plan is
/// empty and [`Prepared::empty`] says why. [`crate::Overrides::units`] narrows the
/// cases to the units it names the same way (`prill run --units FILE`).
pub fn prepare(
    settings: &Settings,
    paths: &[PathBuf],
    selection: &Selection,
    no_tests: Option<NoTests>,
) -> Prepared {
    let (inputs, taken) = load_paths_for_cases(
        paths,
        &settings.env,
        settings.strict(),
        &settings.input_limits(),
    );
    if inputs.invalid() > 0 {
        return Prepared {
            inputs,
            plan: Plan::default(),
            empty: None,
            notes: Vec::new(),
            suite: None,
        };
    }
    let models = settings.models();
    let loaded = settings.plan(taken).cases;
    let mut notes = Vec::new();
    if !models.is_empty() && !loaded.iter().any(runs_on_a_model) {
        notes.push(
            "--model changes nothing here: no case is a Sentinel spec (agent cases keep their agent)"
                .to_owned(),
        );
    }
    let mut cases = with_models(loaded, &models);
    if settings.overrides.rerun_failed {
        match rerun_failed(settings, cases, no_tests) {
            Ok((kept, note)) => {
                cases = kept;
                notes.push(note);
            }
            Err(empty) => {
                return Prepared {
                    inputs,
                    plan: Plan::default(),
                    empty: Some(empty),
                    notes,
                    suite: None,
                };
            }
        }
    }
    if let Some(units) = &settings.overrides.units {
        match only_units(settings, units, cases, no_tests) {
            Ok((kept, note)) => {
                cases = kept;
                notes.extend(note);
            }
            Err(empty) => {
                return Prepared {
                    inputs,
                    plan: Plan::default(),
                    empty: Some(empty),
                    notes,
                    suite: None,
                };
            }
        }
    }
    let suite = selection.suite(&cases, settings.run_options(None).connections.as_deref());
    let selected = selection.select(cases);
    let empty = selected.empty_run(no_tests);
    let secrets = inputs.redactor();
    Prepared {
        inputs,
        plan: Plan {
            cases: selected.cases,
            secrets,
        },
        empty,
        notes,
        suite: Some(suite),
    }
}

/// What a reported run came to.
pub struct Ran {
    /// The totals.
    pub summary: Summary,
    /// The reports that could not be written.
    pub unwritten: Vec<ReportError>,
}

impl Session {
    /// Runs `plan` into `reporters` (on a thread of their own, so a slow disk never holds
    /// the engine up), and returns the summary and the reports that could not be written.
    /// Every event is redacted first ([`Session::secrets`] and the plan's own): no
    /// reporter sees a value read from the environment or a key. A plan given rather
    /// than borrowed is freed case by case as the run goes.
    pub async fn run_reported<'p>(
        &self,
        plan: impl Into<Cow<'p, Plan>>,
        mut reporters: Reporters,
    ) -> Ran {
        let plan = plan.into();
        let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
        let secrets = self.secrets_of(&plan);
        let prices = self.prices.clone();
        let report = tokio::task::spawn_blocking(move || {
            let mut failures = drain(&mut rx, &mut reporters, |event| {
                event.for_reports(&secrets);
                prices.fill(event);
            });
            failures.extend(reporters.finish());
            failures
        });
        let summary = self.run(plan, tx).await;
        Ran {
            summary,
            unwritten: report.await.unwrap_or_default(),
        }
    }

    /// Runs every sample of every case of `plan` (no early stop), calling `finished`
    /// as each unit ends, and assesses each unit against its own success ratio.
    /// Units come back in a stable order (file, case, connection), redacted as
    /// [`Session::run_reported`]'s events are.
    pub async fn assess(
        &self,
        plan: &Plan,
        finished: impl FnMut(&UnitReport) + Send,
    ) -> Vec<CaseAssessment> {
        self.assess_reported(plan, Reporters::new(), finished)
            .await
            .0
    }

    /// [`Session::assess`], with every event of the run also sent to `reporters` (as
    /// [`Session::run_reported`] sends them: redacted, costs filled in, on a thread of
    /// their own), which is how an assessment is kept in the history. Returns the
    /// assessments and the reports that could not be written.
    pub async fn assess_reported(
        &self,
        plan: &Plan,
        mut reporters: Reporters,
        mut finished: impl FnMut(&UnitReport) + Send,
    ) -> (Vec<CaseAssessment>, Vec<ReportError>) {
        // The gate each case is held to in CI: its own, not the assessment's sample count.
        let gates: HashMap<String, Gate> = plan
            .cases
            .iter()
            .map(|c| (c.id.to_string(), c.gate))
            .collect();
        let options = RunOptions {
            exhaustive: true,
            ..self.options.clone()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (to_reporters, mut reported) = mpsc::unbounded_channel::<Event>();
        let report = tokio::task::spawn_blocking(move || {
            let mut failures = drain(&mut reported, &mut reporters, |_| {});
            failures.extend(reporters.finish());
            failures
        });
        let secrets = self.secrets_of(plan);
        let run = run_plan(plan, &self.connectors, &options, tx);
        let collect = async {
            let mut units = Vec::new();
            while let Some(mut event) = rx.recv().await {
                event.for_reports(&secrets);
                self.prices.fill(&mut event);
                if let Event::UnitFinished(unit) = &event {
                    finished(unit);
                    units.push(unit.clone());
                }
                // The reporters' thread ends only with the run: it is always there.
                let _ = to_reporters.send(event);
            }
            drop(to_reporters);
            units
        };
        let (_, mut units) = tokio::join!(run, collect);
        units.sort_by(|a, b| {
            (&a.unit.file, &a.unit.name, &a.unit.connection).cmp(&(
                &b.unit.file,
                &b.unit.name,
                &b.unit.connection,
            ))
        });
        let cases = units
            .iter()
            .map(|u| {
                let gate = gates.get(&u.unit.case_id).copied().unwrap_or(u.gate);
                let mut case = assess_unit(u, &gate);
                if let Some(calibration) = &self.judge_calibration {
                    case.correct_gist(calibration);
                }
                case
            })
            .collect();
        (cases, report.await.unwrap_or_default())
    }
}

/// How long the reporters' thread lets events gather after it has handled all there
/// were: on a busy run the engine then hands over many events per wake-up of the
/// thread instead of one, and a report on disk is at most this much behind.
const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// Hands every event of `rx` to `reporters` until the run ends, in order, each first
/// given to `prepare`, and flushes the reporters each time no event is waiting.
/// Events are taken in batches: after each batch the thread sleeps [`GATHER`] rather
/// than wake for every event. Returns the reports that failed.
fn drain(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    reporters: &mut Reporters,
    mut prepare: impl FnMut(&mut Event),
) -> Vec<ReportError> {
    let mut failures = Vec::new();
    while let Some(mut event) = rx.blocking_recv() {
        prepare(&mut event);
        failures.extend(reporters.event(&event));
        while let Ok(mut next) = rx.try_recv() {
            prepare(&mut next);
            failures.extend(reporters.event(&next));
        }
        failures.extend(reporters.flush());
        std::thread::sleep(GATHER);
    }
    failures
}

/// Names and merges each case's failure modes with the judge's model (`--classify llm`).
pub async fn name_modes(
    settings: &Settings,
    providers: &Providers,
    cases: &mut [CaseAssessment],
) -> Result<String, SettingsError> {
    let namer = settings.namer(providers).await?;
    for case in cases.iter_mut().filter(|c| !c.modes.is_empty()) {
        let inputs: Vec<ModeInput> = case
            .modes
            .iter()
            .map(|m| ModeInput {
                signature: m.signature.clone(),
                example: m.example.clone(),
                count: m.count,
            })
            .collect();
        let names = namer
            .judge
            .name_modes(&inputs)
            .await
            .map_err(|e| SettingsError::Judge(e.to_string()))?;
        case.modes = merge_named(std::mem::take(&mut case.modes), &names, case.samples);
    }
    let mut announcement = namer.announcement;
    for warning in &namer.warnings {
        announcement.push_str(&format!("\nwarning: {warning}"));
    }
    Ok(announcement)
}

/// One unit (case × connection) as an assessment, held to `ratio`.
pub fn assess_unit(unit: &UnitReport, gate: &Gate) -> CaseAssessment {
    let mut samples: Vec<&SampleReport> = unit.samples.iter().collect();
    samples.sort_by_key(|s| s.index);
    let outcomes: Vec<SampleOutcome> = samples.iter().map(|s| outcome(s)).collect();
    let name = if unit.unit.connection.is_empty() {
        unit.unit.name.clone()
    } else {
        unit.unit.label()
    };
    assess(
        &unit.unit.case_id,
        &unit.unit.file.display().to_string(),
        &name,
        gate,
        &outcomes,
    )
}

/// A sample as the assessor sees it: its status and its first failure or error.
fn outcome(sample: &SampleReport) -> SampleOutcome {
    let first_failure = match sample.status {
        Status::Failed => first_failed_check(sample),
        Status::Errored => Some(first_error(sample)),
        Status::Passed | Status::Unscored | Status::Inconclusive | Status::Skipped => None,
    };
    let gist = || {
        sample
            .interactions
            .iter()
            .flat_map(|i| &i.checks)
            .filter(|c| c.name == "gist" || c.name == "trajectory_gist")
    };
    let count = |status| gist().filter(|c| c.status() == status).count() as u32;
    let passed = count(Status::Passed);
    SampleOutcome {
        outcome: sample.status,
        first_failure,
        gist_passed: passed,
        gist_judged: passed + count(Status::Failed),
    }
}

fn first_failed_check(sample: &SampleReport) -> Option<Failure> {
    sample.interactions.iter().find_map(|i| {
        i.checks
            .iter()
            .find(|c| c.status() == Status::Failed)
            .map(|c| Failure {
                interaction: i.index,
                path: c.path.to_string(),
                test: c.name.clone(),
                expected: c
                    .expected
                    .as_ref()
                    .map(prill_check::text::as_text)
                    .unwrap_or_default(),
                found: c.found.as_ref().map(prill_check::text::as_text),
                message: c.message().to_owned(),
            })
    })
}

fn first_error(sample: &SampleReport) -> Failure {
    let from_interaction = sample.interactions.iter().find_map(|i| {
        i.error
            .as_ref()
            .map(|e| (i.index, e.kind.name().to_owned(), e.message.clone()))
            .or_else(|| {
                i.checks
                    .iter()
                    .find(|c| c.status() == Status::Errored)
                    .map(|c| (i.index, format!("check {}", c.name), c.message().to_owned()))
            })
    });
    let (interaction, kind, message) = from_interaction
        .or_else(|| {
            sample
                .error
                .as_ref()
                .map(|e| (0, e.kind.name().to_owned(), e.message.clone()))
        })
        .unwrap_or((0, "unknown".to_owned(), "the sample errored".to_owned()));
    Failure {
        interaction,
        path: "error".to_owned(),
        test: format!("error:{kind}"),
        expected: String::new(),
        found: None,
        message,
    }
}
