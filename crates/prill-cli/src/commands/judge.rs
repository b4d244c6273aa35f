//! `prill judge check [FILE]`: measures the judge the settings call for (`--judge`, else
//! `[judge]` in prill.toml, else one picked from the environment) against a labeled set:
//! FILE, else the set built into the binary (`prill_judge::calibrate::BUILT_IN_SET`), so
//! it runs from any folder.
//!
//! Exit codes: 0 once the set is judged and every gate (`--min-agreement`,
//! `--max-false-pass`, `--max-false-fail`) is met; 1 when a gate is missed (each missed
//! gate is printed to stderr, after the result); 2 when the set cannot be read, a gate
//! is not a rate from 0 to 1, or no judge is available.

use prill_app::{Overrides, Settings};
use prill_judge::calibrate::{BUILT_IN_NAME, built_in};
use prill_judge::{HOW_TO_CONFIGURE, calibrate, load_labeled};

use super::run::settings_error;
use crate::args::{Format, JudgeCheckArgs};
use crate::exit::ExitCode;
use crate::output;

/// `prill judge check`.
pub(crate) fn check(args: &JudgeCheckArgs, color: bool) -> anyhow::Result<ExitCode> {
    let loaded = match &args.file {
        Some(file) => load_labeled(file),
        None => built_in(),
    };
    let items = match loaded {
        Ok(items) => items,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let overrides = Overrides {
        judge: args.judge.clone(),
        no_cache: args.no_cache,
        ..args.remote.overrides()
    };
    let settings = match Settings::load(args.config.as_deref(), overrides) {
        Ok(settings) => settings,
        Err(e) => return Ok(settings_error(&e, color)),
    };
    output::stderr(&output::render(&settings.reports, color));
    output::stderr(&format!("{}\n", settings.found));
    let runtime = prill_app::runtime()?;
    let result = runtime.block_on(async {
        let providers = settings.providers().map_err(|e| e.to_string())?;
        let judge = match settings.judge(&providers).await {
            Ok(Some(chosen)) => chosen,
            Ok(None) => return Err(format!("no judge is configured: {HOW_TO_CONFIGURE}")),
            Err(e) => return Err(e.to_string()),
        };
        output::stderr(&format!("{}\n", judge.announcement));
        for warning in &judge.warnings {
            output::stderr(&format!("warning: {warning}\n"));
        }
        Ok((calibrate(judge.judge.as_ref(), &items).await, judge.name))
    });
    let (calibration, name) = match result {
        Ok(c) => c,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    match args.format {
        Format::Json => output::stdout(&format!("{:#}\n", calibration.to_json(&items)))?,
        Format::Human => output::stdout(&calibration.to_text(&items))?,
    }
    if args.record {
        let set = args
            .file
            .as_ref()
            .map_or_else(|| BUILT_IN_NAME.to_owned(), |f| f.display().to_string());
        match settings.record_calibration(&name, &calibration, &set) {
            Ok(path) => output::stderr(&format!(
                "recorded as {}'s calibration in {}\n",
                name.0,
                path.display()
            )),
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                return Ok(ExitCode::ERROR);
            }
        }
    }
    let missed = args.gates.gates().missed(&calibration);
    for gate in &missed {
        output::stderr(&format!("error: {gate}\n"));
    }
    if missed.is_empty() {
        Ok(ExitCode::OK)
    } else {
        Ok(ExitCode::FAILURES)
    }
}
