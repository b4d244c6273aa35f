//! `assay assess`: many samples of each case, every one run (no early stop), then per
//! case the pass rate with its Wilson interval, the chance of meeting its ratio, a
//! sounder ratio when needed, and its failure modes. Every check counts.
//!
//! The table goes to stdout; `--json`, `--markdown` and `--html` write files (as `run`
//! writes its reports: through symlinks and FIFOs, regular files replaced whole, an
//! earlier file removed when the assessment starts). The exit code is 0 once the
//! assessment is made, whatever it found; 2 for invalid input (or nothing to assess,
//! unless `--no-tests` allows it); 3 when a file could not be written.

use std::collections::HashMap;

use anyhow::Context;
use assay_assess::{CaseAssessment, Failure, SampleOutcome, assess, merge_named};
use assay_check::Status;
use assay_judge::ModeInput;
use assay_report::Output;
use assay_report::assess::{
    assessment_html, assessment_json, assessment_markdown, assessment_table,
};
use assay_run::events::{Event, SampleReport, UnitReport};
use assay_run::{RunOptions, run_plan};
use tokio::sync::mpsc;

use super::run::{Prepared, connectors, prepare};
use crate::args::{AssessArgs, Classify};
use crate::exit::ExitCode;
use crate::output;

/// Renders an assessment in one format.
type Render = fn(&[CaseAssessment]) -> String;

/// The report files asked for, made before the run (an earlier report at a path is
/// removed then), with what renders each.
type Outputs = Vec<(Output, Render)>;

fn outputs(args: &AssessArgs) -> anyhow::Result<Outputs> {
    let mut outputs: Outputs = Vec::new();
    let files: [(&Option<std::path::PathBuf>, Render); 3] = [
        (&args.json, assessment_json),
        (&args.markdown, assessment_markdown),
        (&args.html, assessment_html),
    ];
    for (path, render) in files {
        if let Some(path) = path {
            let output =
                Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
            outputs.push((output, render));
        }
    }
    Ok(outputs)
}

/// Runs the assessment.
pub(crate) fn run(args: &AssessArgs, color: bool) -> anyhow::Result<ExitCode> {
    let outputs = match outputs(args) {
        Ok(outputs) => outputs,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let Prepared {
        plan,
        config,
        empty_fails,
    } = match prepare(&args.target, color) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    // The ratio each case is held to in CI: its own, not the sample count of the assessment.
    let ratios: HashMap<String, (u32, u32)> = plan
        .cases
        .iter()
        .map(|c| (c.id.clone(), (c.success_ratio.need, c.success_ratio.of)))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let units = runtime.block_on(async {
        let (connectors, demo) = if plan.cases.is_empty() {
            (assay_run::Connectors::new(), None)
        } else if args.target.demo {
            let demo = assay_run::demo::start(0)
                .await
                .context("cannot start the demo agents")?;
            let connectors = match super::run::with_providers(
                demo.connectors.clone(),
                &args.target,
                config.as_ref(),
            ) {
                Ok(connectors) => connectors,
                Err(e) => {
                    output::stderr(&format!("error: {e}\n"));
                    return Ok(None);
                }
            };
            (connectors, Some(demo.server))
        } else {
            match connectors(&args.target, config.as_ref()) {
                Ok(c) => (c, None),
                Err(e) => {
                    output::stderr(&format!("error: {e}\n"));
                    return Ok::<Option<Vec<UnitReport>>, anyhow::Error>(None);
                }
            }
        };
        let judge = match super::judge::for_plan(&plan, &args.target, config.as_ref()).await {
            Ok(judge) => judge,
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                return Ok(None);
            }
        };
        let options = RunOptions {
            jobs: args.target.jobs as usize,
            judge,
            samples: args.target.samples,
            connections: (!args.target.connection.is_empty())
                .then(|| args.target.connection.to_vec()),
            exhaustive: true,
            ..RunOptions::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let collect = tokio::spawn(async move {
            let mut units = Vec::new();
            while let Some(event) = rx.recv().await {
                if let Event::UnitFinished(unit) = event {
                    output::stderr(&format!(
                        "assessed {} ({} samples)\n",
                        unit.unit.label(),
                        unit.tally.total()
                    ));
                    units.push(unit);
                }
            }
            units
        });
        run_plan(&plan, &connectors, &options, tx).await;
        let units = collect.await.unwrap_or_default();
        if let Some(server) = demo {
            server.shutdown().await;
        }
        Ok(Some(units))
    })?;
    let Some(mut units) = units else {
        return Ok(ExitCode::INVALID);
    };
    // A stable order, whatever order the units finished in.
    units.sort_by(|a, b| {
        (&a.unit.file, &a.unit.name, &a.unit.connection).cmp(&(
            &b.unit.file,
            &b.unit.name,
            &b.unit.connection,
        ))
    });
    let mut cases: Vec<CaseAssessment> = units
        .iter()
        .map(|u| {
            let ratio = ratios
                .get(&u.unit.case_id)
                .copied()
                .unwrap_or((u.success_ratio.need, u.success_ratio.of));
            assess_unit(u, ratio)
        })
        .collect();
    if args.classify == Classify::Llm {
        let named = runtime.block_on(async {
            let choice = super::judge::Choice::of_target(&args.target);
            let namer = super::judge::namer(&choice, config.as_ref()).await?;
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
                let names = namer.name_modes(&inputs).await.map_err(|e| e.to_string())?;
                case.modes = merge_named(std::mem::take(&mut case.modes), &names, case.samples);
            }
            Ok::<(), String>(())
        });
        if let Err(message) = named {
            output::stderr(&format!("error: {message}\n"));
            return Ok(ExitCode::INVALID);
        }
    }
    output::stdout(&assessment_table(&cases))?;
    let mut unwritten = 0;
    for (output, render) in outputs {
        if let Err(e) = output.commit(render(&cases).as_bytes()) {
            output::stderr(&format!("error: {e}\n"));
            unwritten += 1;
        }
    }
    if unwritten > 0 {
        output::stderr(&format!(
            "error: {unwritten} report(s) could not be written\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    Ok(if empty_fails {
        ExitCode::INVALID
    } else {
        ExitCode::OK
    })
}

/// One unit (case × connection) as an assessment.
pub(crate) fn assess_unit(unit: &UnitReport, ratio: (u32, u32)) -> CaseAssessment {
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
        ratio,
        &outcomes,
    )
}

fn outcome(sample: &SampleReport) -> SampleOutcome {
    let status = sample.status;
    let first_failure = match status {
        Status::Failed => sample.interactions.iter().find_map(|i| {
            i.checks
                .iter()
                .find(|c| c.status() == Status::Failed)
                .map(|c| Failure {
                    interaction: i.index,
                    path: c.path.clone(),
                    test: c.name.clone(),
                    expected: c
                        .expected
                        .as_ref()
                        .map(assay_check::text::as_text)
                        .unwrap_or_default(),
                    found: c.found.as_ref().map(assay_check::text::as_text),
                    message: c.message().to_owned(),
                })
        }),
        Status::Errored => {
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
            Some(Failure {
                interaction,
                path: "error".to_owned(),
                test: format!("error:{kind}"),
                expected: String::new(),
                found: None,
                message,
            })
        }
        // A sample passes, or it is never unscored or skipped.
        Status::Passed | Status::Unscored | Status::Skipped => None,
    };
    SampleOutcome {
        outcome: status,
        first_failure,
    }
}
