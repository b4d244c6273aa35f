//! `prill list`: one line per case of every valid file.

use prill_app::{Overrides, Settings};
use prill_run::select::Emptied;
use std::path::PathBuf;

use prill_spec::inputs::{Entry, Inputs, listing, listing_json, load_paths_for_cases};
use prill_spec::{Env, Plan};

use super::report_empty;
use crate::args::{Format, ListArgs};
use crate::exit::ExitCode;
use crate::output;

/// Lists the cases of the valid files; the invalid ones' diagnostics go to stderr
/// and make the exit code [`ExitCode::INVALID`], as does finding no case when
/// `--no-tests` does not allow that.
pub(crate) fn run(args: &ListArgs, color: bool) -> anyhow::Result<ExitCode> {
    let (inputs, plan) = load_plan(&args.paths, color);
    let cases = plan.cases.len();
    let all_valid = inputs.entries.iter().all(Entry::is_valid);
    let test_files = inputs.test_files();
    let redactor = inputs.redactor();
    // The files' texts are not needed once their diagnostics are shown.
    drop(inputs);
    let text = match args.format {
        Format::Human => listing(&plan, &redactor),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&listing_json(&plan, &redactor))?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    // No case to list, and no invalid file to explain it: the `--no-tests` rule of `run`.
    let emptied = match (all_valid, test_files, cases) {
        (true, 0, _) => Some(Emptied::NoFiles),
        (true, _, 0) => Some(Emptied::NoCases),
        _ => None,
    };
    let empty_fails =
        emptied.is_some_and(|why| report_empty(&why.judge(args.no_tests.map(Into::into))));
    Ok(if all_valid && !empty_fails {
        ExitCode::OK
    } else {
        ExitCode::INVALID
    })
}

/// Loads the test files of `paths` as a run would (the limits and ids of the nearest
/// `prill.toml`, when it loads), printing their diagnostics: the inputs and the plan of
/// their valid cases. A case's repeats keep the ids the history gave them.
pub(crate) fn load_plan(paths: &[PathBuf], color: bool) -> (Inputs, Plan) {
    let settings = Settings::load(None, Overrides::default()).ok();
    let (inputs, cases) = load_paths_for_cases(
        paths,
        &Env::from_process(),
        false,
        &settings
            .as_ref()
            .map(Settings::input_limits)
            .unwrap_or_default(),
    );
    output::stderr(&output::render(&inputs.reports(), color));
    let plan = match &settings {
        Some(settings) => settings.plan(cases),
        None => Plan::new(cases),
    };
    (inputs, plan)
}
