//! `prill assess`: many samples of each case, every one run (no early stop), then per
//! case the pass rate with its Wilson interval, the chance of meeting its ratio, a
//! sounder ratio when needed, and its failure modes. Every check counts.
//!
//! The table goes to stdout; `--json`, `--markdown` and `--html` write files (as `run`
//! writes its reports: through symlinks and FIFOs, regular files replaced whole, an
//! earlier file removed when the assessment starts). The exit code is 0 once the
//! assessment is made, whatever it found; 2 for invalid input (or nothing to assess,
//! unless `--no-tests` allows it); 3 when a file could not be written.
//!
//! An assessment that runs something is kept in the history as a run is
//! (`.prill/runs/<id>.jsonl`, its `run` line's `command` is `assess`): every event of
//! its run, each unit with all its samples. One that cannot be kept is a warning; the
//! history is pruned after it as after a run.

use anyhow::Context;
use prill_app::{HISTORY_LOST, Session, name_modes};
use prill_assess::CaseAssessment;
use prill_report::assess::{
    assessment_html, assessment_json, assessment_markdown, assessment_table,
};
use prill_report::{Output, Reporters};

use super::run::{prepared, prune_history, settings, settings_error};
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
    let settings = match settings(&args.target, color) {
        Ok(settings) => settings,
        Err(code) => return Ok(code),
    };
    let (prepared, empty_fails) = match prepared(&settings, &args.target, color, false) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let kept = !prepared.plan.cases.is_empty();
    let reporters = if kept {
        history(&settings, args)
    } else {
        Reporters::new()
    };
    let runtime = prill_app::runtime()?;
    let cases = runtime.block_on(assessed(&settings, &prepared.plan, reporters, args, color));
    let cases = match cases {
        Ok(cases) => cases,
        Err(code) => return Ok(code),
    };
    if kept {
        prune_history(&settings);
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

/// Runs the assessment of `plan` (its events to `reporters`) and names its failure
/// modes when `--classify llm` asks. `Err` holds the exit code of what stopped it.
async fn assessed(
    settings: &prill_app::Settings,
    plan: &prill_spec::Plan,
    reporters: Reporters,
    args: &AssessArgs,
    color: bool,
) -> Result<Vec<CaseAssessment>, ExitCode> {
    let session = Session::new(settings, plan)
        .await
        .map_err(|e| settings_error(&e, color))?;
    for note in &session.notes {
        output::stderr(&format!("{note}\n"));
    }
    let (mut cases, unwritten) = session
        .assess_reported(plan, reporters, |unit| {
            output::stderr(&format!(
                "assessed {} ({} samples)\n",
                unit.unit.label(),
                unit.tally.total()
            ));
        })
        .await;
    for failure in &unwritten {
        output::stderr(&format!("warning: {failure}; {HISTORY_LOST}\n"));
    }
    if args.classify == Classify::Llm {
        match name_modes(settings, &session.providers, &mut cases).await {
            Ok(announcement) => output::stderr(&format!("{announcement}\n")),
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                return Err(ExitCode::INVALID);
            }
        }
    }
    session.shutdown().await;
    Ok(cases)
}

/// The reporter that keeps this assessment in the history, as `run` keeps a run; none
/// (with a warning) when it cannot be.
fn history(settings: &prill_app::Settings, args: &AssessArgs) -> Reporters {
    let mut reporters = Reporters::new();
    if let Ok(selection) = args.target.selection()
        && let Some(warning) =
            settings.keep_assessment(&args.target.paths, &selection, &mut reporters)
    {
        output::stderr(&format!("{warning}\n"));
    }
    reporters
}
