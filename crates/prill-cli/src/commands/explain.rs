//! `prill explain`: what each case's gate means ([`prill_app::explain`]).

use prill_app::explain::explain_plan;
use prill_spec::inputs::Entry;
use prill_stats::{Reliability, Sequential};

use crate::args::{ExplainArgs, Format};
use crate::exit::ExitCode;
use crate::output;

/// Prints the figures of every case of the valid files; invalid files' diagnostics go
/// to stderr and make the exit code [`ExitCode::INVALID`], as do rates that make no
/// gate.
pub(crate) fn run(args: &ExplainArgs, color: bool) -> anyhow::Result<ExitCode> {
    let reference = Reliability {
        good: args.good,
        bad: args.bad,
        false_pass: args.false_pass,
        false_fail: args.false_fail,
        ..Reliability::default()
    };
    if let Err(e) = Sequential::unchecked(reference) {
        output::stderr(&format!("error: {e}\n"));
        return Ok(ExitCode::INVALID);
    }
    let (inputs, plan) = super::list::load_plan(&args.paths, color);
    let all_valid = inputs.entries.iter().all(Entry::is_valid);
    drop(inputs);
    let explained = match explain_plan(&plan, &reference) {
        Ok(explained) => explained,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let text = match args.format {
        Format::Human => explained.render(),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&explained)?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    Ok(if all_valid {
        ExitCode::OK
    } else {
        ExitCode::INVALID
    })
}
