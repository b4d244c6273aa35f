//! One module per subcommand: each turns its arguments into library calls and prints
//! what they give.

pub(crate) mod agents;
pub(crate) mod assess;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod convert;
pub(crate) mod init;
pub(crate) mod judge;
pub(crate) mod list;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod runs;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod validate;
pub(crate) mod watch;

use assay_run::select::{EmptyRun, Level};

use crate::output;

/// Prints the line of an empty run (`--no-tests`) and says whether it fails.
pub(crate) fn report_empty(empty: &EmptyRun) -> bool {
    match empty.level {
        Level::Silent => {}
        Level::Note => output::stderr(&format!("note: {}\n", empty.message)),
        Level::Warning => output::stderr(&format!("warning: {}\n", empty.message)),
        Level::Error => output::stderr(&format!(
            "error: {} (--no-tests=pass or warn allows an empty run)\n",
            empty.message
        )),
    }
    empty.fails()
}
