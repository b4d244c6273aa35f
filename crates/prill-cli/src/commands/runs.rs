//! `prill runs [--case ID | --flaky]`: the runs kept in the history, newest first, one
//! case's units across them, or the flaky cases; data to stdout.
//!
//! Exit codes: 0 when listed (an empty history lists nothing, with a note); 2 when the
//! settings are invalid, the history cannot be read, or no kept run has the case.

use prill_app::{Overrides, Settings};
use prill_history::render;

use super::run::settings_error;
use crate::args::{Format, RunsArgs};
use crate::exit::ExitCode;
use crate::output;

/// Lists what `args` ask for.
pub(crate) fn run(args: &RunsArgs, color: bool) -> anyhow::Result<ExitCode> {
    let settings = match Settings::load(args.config.as_deref(), Overrides::default()) {
        Ok(settings) => settings,
        Err(e) => return Ok(settings_error(&e, color)),
    };
    let history = match settings.history() {
        Ok(history) => history,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    for skipped in history.skipped() {
        output::stderr(&format!("warning: {skipped}\n"));
    }
    if args.flaky {
        return Ok(match history.stability(args.recent as usize) {
            Ok(cases) => {
                let text = match args.format {
                    Format::Human => render::flaky(&cases, args.recent as usize),
                    Format::Json => json(serde_json::to_value(
                        cases
                            .iter()
                            .filter(|c| c.state == prill_stats::stability::Stability::Flaky)
                            .collect::<Vec<_>>(),
                    )),
                };
                let _ = output::stdout(&text);
                ExitCode::OK
            }
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                ExitCode::INVALID
            }
        });
    }
    let text = match &args.case {
        None => history.runs().map(|rows| {
            if rows.is_empty() {
                output::stderr(&format!(
                    "note: no run is kept in {} yet; every `prill run` adds one\n",
                    settings.runs_dir().display()
                ));
            }
            match args.format {
                Format::Human => render::runs(&rows),
                Format::Json => json(serde_json::to_value(&rows)),
            }
        }),
        Some(case) => history
            .case_history(case)
            .map(|rows| {
                if rows.is_empty() {
                    return None;
                }
                Some(match args.format {
                    Format::Human => render::case(&rows),
                    Format::Json => json(serde_json::to_value(&rows)),
                })
            })
            .map(|text| text.unwrap_or_default()),
    };
    match text {
        Ok(text) if text.is_empty() && args.case.is_some() => {
            output::stderr(&format!(
                "error: no kept run has the case `{}` (an id, the start of one, or a name)\n",
                args.case.as_deref().unwrap_or_default()
            ));
            Ok(ExitCode::INVALID)
        }
        Ok(text) => {
            let _ = output::stdout(&text);
            Ok(ExitCode::OK)
        }
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            Ok(ExitCode::INVALID)
        }
    }
}

fn json(rows: serde_json::Result<serde_json::Value>) -> String {
    let rows = rows.unwrap_or_default();
    let mut text = serde_json::to_string_pretty(&rows).unwrap_or_default();
    text.push('\n');
    text
}
