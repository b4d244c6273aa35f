//! `prill show REPORT.json [CASE]`: the transcripts of a saved JSON report, to stdout.
//!
//! Exit codes: 0 when something was shown (or nothing failed); 2 when the report cannot
//! be read or no case matches.

use prill_report::show;

use crate::args::ShowArgs;
use crate::exit::ExitCode;
use crate::output;

/// Prints the transcripts `args` ask for.
pub(crate) fn run(args: &ShowArgs) -> anyhow::Result<ExitCode> {
    let report = match show::read(&args.report) {
        Ok(report) => report,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let units = match show::select(&report, args.case.as_deref()) {
        Ok(units) => units,
        Err(e) => {
            output::stderr(&format!("error: {e} (in {})\n", args.report.display()));
            return Ok(ExitCode::INVALID);
        }
    };
    if units.is_empty() {
        output::stderr(&format!(
            "no case in {} failed or errored; name one to see its transcript: `prill show {} CASE`\n",
            args.report.display(),
            args.report.display()
        ));
        return Ok(ExitCode::OK);
    }
    output::stdout(&show::render(&units))?;
    Ok(ExitCode::OK)
}
