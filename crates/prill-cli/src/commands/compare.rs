//! `prill compare [BASE] [HEAD]`: what changed from one run to another, from the
//! history or from report files; the comparison to stdout as text, Markdown or JSON.
//! With `--top-up`, more samples of the head are drawn for the cases the comparison
//! could not decide first (`prill_app::Settings::top_up`).
//!
//! Exit codes: 0 when compared; 1 when a case regressed and `--fail-on-regression` was
//! given; 2 when the settings are invalid, a run cannot be found or read, or a top-up
//! cannot start; 3 when the `--html` page cannot be written.

use prill_app::{Overrides, RunQuery, Settings};
use prill_history::compare::{TopUpPlan, compare, render};
use prill_report::Output;
use prill_report::html::CompareSection;

use super::run::settings_error;
use crate::args::{CompareArgs, CompareFormat};
use crate::exit::ExitCode;
use crate::output;

/// Compares the runs `args` name.
pub(crate) fn run(args: &CompareArgs, color: bool) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        demo: args.demo,
        jobs: args.jobs.map(|n| n as usize),
        ..args.remote.overrides()
    };
    let settings = match Settings::load(args.config.as_deref(), overrides) {
        Ok(settings) => settings,
        Err(e) => return Ok(settings_error(&e, color)),
    };
    // With --base-branch the one run given is the head.
    let query = match &args.base_branch {
        Some(branch) => RunQuery {
            base: None,
            head: args.base.clone(),
            base_branch: Some(branch.clone()),
        },
        None => RunQuery {
            base: args.base.clone(),
            head: args.head.clone(),
            base_branch: None,
        },
    };
    let (base, head) = match settings.compare_sides(&query) {
        Ok(sides) => sides,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    for side in [&base, &head] {
        if !side.finished {
            output::stderr(&format!(
                "warning: {} did not finish; only its finished cases are compared\n",
                side.label
            ));
        }
    }
    let (comparison, head) = match args.top_up {
        None => (compare(&base, &head, &settings.compare_thresholds()), head),
        Some(max) => {
            let plan = TopUpPlan {
                max,
                wave: args.top_up_wave,
                drop: args.top_up_drop,
            };
            let runtime = prill_app::runtime()?;
            match runtime.block_on(settings.top_up(base, head, plan)) {
                Ok(done) => {
                    for warning in &done.warnings {
                        output::stderr(&format!("{warning}\n"));
                    }
                    (done.comparison, done.head)
                }
                Err(e) => {
                    output::stderr(&format!("error: {e}\n"));
                    return Ok(ExitCode::INVALID);
                }
            }
        }
    };
    let text = match args.format {
        CompareFormat::Human => render::human(&comparison),
        CompareFormat::Markdown => render::markdown(&comparison),
        CompareFormat::Json => {
            let mut text = serde_json::to_string_pretty(&comparison)?;
            text.push('\n');
            text
        }
    };
    let _ = output::stdout(&text);
    if let Some(path) = &args.html {
        let section = CompareSection::from(&comparison);
        let page = prill_report::html::render(
            &head.units,
            head.summary.as_ref(),
            head.info.as_ref(),
            Some(&section),
        );
        let written = Output::file(path).and_then(|out| out.commit(page.as_bytes()));
        if let Err(e) = written {
            output::stderr(&format!("error: cannot write {}: {e}\n", path.display()));
            return Ok(ExitCode::ERROR);
        }
    }
    if args.fail_on_regression && comparison.has_regression() {
        return Ok(ExitCode::FAILURES);
    }
    Ok(ExitCode::OK)
}
