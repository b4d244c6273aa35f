//! One module per subcommand: each turns its arguments into library calls and prints
//! what they give.

pub(crate) mod agents;
pub(crate) mod assess;
pub(crate) mod cassettes;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod convert;
pub(crate) mod explain;
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
pub(crate) mod view;
pub(crate) mod watch;

use std::sync::{Arc, OnceLock};

use anyhow::Context;
use prill_report::format::RunInfo;
use prill_report::{HtmlReport, JsonReport, Junit, Markdown, Output, Reporters};
use prill_run::select::{EmptyRun, Level};

use crate::args::ReportFiles;
use crate::output;

/// Pushes the file reports of `files` but `--jsonl` (whose `run` line each command
/// writes as it can) onto `reporters`: JSON, JUnit (files named relative to the run's
/// folder), Markdown (appended), HTML. Each file is made now, so a bad path fails
/// before anything runs. Returns the HTML page's slot for what the history knows of
/// the run (id, commit, settings), to be set once that is known.
pub(crate) fn push_file_reports(
    files: &ReportFiles,
    reporters: &mut Reporters,
) -> anyhow::Result<Option<Arc<OnceLock<RunInfo>>>> {
    let file = |path: &std::path::Path| {
        Output::file(path).with_context(|| format!("cannot write {}", path.display()))
    };
    if let Some(path) = &files.json {
        reporters.push("json", JsonReport::new(file(path)?));
    }
    if let Some(path) = &files.junit {
        let junit = Junit::new(file(path)?);
        reporters.push(
            "junit",
            match output::run_dir() {
                Some(base) => junit.relative_to(base),
                None => junit,
            },
        );
    }
    if let Some(path) = &files.markdown {
        let out =
            Output::append(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("markdown", Markdown::new(out));
    }
    let mut page_run = None;
    if let Some(path) = &files.html {
        let html = HtmlReport::new(file(path)?);
        page_run = Some(html.run_info());
        reporters.push("html", html);
    }
    Ok(page_run)
}

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
