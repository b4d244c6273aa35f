//! `prill init [DIR]`: writes the files a project starts from (`prill_app::init`)
//! and says what to run next.
//!
//! Exit codes: 0 once the files are written; 2 when any of them exists already
//! (nothing is written; `--force` overwrites them); 3 when a file cannot be written.

use prill_app::init::{InitError, init};

use crate::args::InitArgs;
use crate::exit::ExitCode;
use crate::output;

/// `prill init`.
pub(crate) fn run(args: &InitArgs) -> anyhow::Result<ExitCode> {
    match init(&args.dir, args.force) {
        Ok(written) => {
            let mut text = String::new();
            for path in &written {
                text.push_str(&format!("wrote {}\n", args.dir.join(path).display()));
            }
            let cd = if args.dir == std::path::Path::new(".") {
                String::new()
            } else {
                format!("cd {} && ", args.dir.display())
            };
            text.push_str(&format!(
                "next: {cd}prill run --demo    (the examples run against the built-in demo agents and model)\n"
            ));
            output::stderr(&text);
            Ok(ExitCode::OK)
        }
        Err(e @ InitError::Exists { .. }) => {
            output::stderr(&format!("error: {e}\n"));
            Ok(ExitCode::INVALID)
        }
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            Ok(ExitCode::ERROR)
        }
    }
}
