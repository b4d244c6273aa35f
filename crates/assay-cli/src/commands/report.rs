//! `assay report --from RUN` and `assay report merge SHARD...`: a stored run (or the
//! shards of one suite, merged) rebuilt into the engine's events
//! ([`assay_report::rebuild`]) and fed to the same reporters `assay run` writes with;
//! the human report goes to stderr.
//!
//! Exit codes: as `assay run`'s for the run reported: 0 all passed, 1 some failed, 3
//! errors and no failures, or a run that did not finish (a killed run's units are
//! reported, but it never passes), or a report that could not be written; 2 a file that
//! cannot be read, or shards that are not the parts of one suite (the odd file out, a
//! part given twice, the parts missing).

use anyhow::Context;
use assay_report::format::RunInfo;
use assay_report::rebuild::{Shard, merge};
use assay_report::stored::StoredRun;
use assay_report::{
    Human, HumanOptions, JsonLines, JsonReport, Junit, Markdown, Output, Reporters, Verbosity,
};
use assay_run::{Event, Summary};

use crate::args::{ReportArgs, ReportCommand, ReportOutputs};
use crate::exit::ExitCode;
use crate::output;

/// Writes the reports `args` ask for.
pub(crate) fn run(args: &ReportArgs, color: bool) -> anyhow::Result<ExitCode> {
    match (&args.command, &args.from) {
        (Some(ReportCommand::Merge(merge)), _) => merged(&merge.shards, &merge.outputs, color),
        (None, Some(from)) => from_file(from, &args.outputs, color),
        // clap requires `--from` without a subcommand.
        (None, None) => Ok(ExitCode::INVALID),
    }
}

/// `assay report --from FILE`.
fn from_file(
    path: &std::path::Path,
    outputs: &ReportOutputs,
    color: bool,
) -> anyhow::Result<ExitCode> {
    let stored = match StoredRun::read(path) {
        Ok(stored) => stored,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    if stored.torn {
        output::stderr(&format!(
            "note: {} ends in the middle of a line (the run was killed while writing it); that line is left out\n",
            path.display()
        ));
    }
    if let Some((finished, planned)) = stored.unfinished() {
        output::stderr(&format!(
            "warning: the run in {} did not finish: {finished} of {planned} units finished; the reports say it was cancelled\n",
            path.display()
        ));
    }
    let events = match stored.events() {
        Ok(events) => events,
        Err(e) => {
            output::stderr(&format!("error: {}: {e}\n", path.display()));
            return Ok(ExitCode::INVALID);
        }
    };
    write(&events, stored.info.as_ref(), outputs, color)
}

/// `assay report merge SHARD...`.
fn merged(
    paths: &[std::path::PathBuf],
    outputs: &ReportOutputs,
    color: bool,
) -> anyhow::Result<ExitCode> {
    let mut shards = Vec::with_capacity(paths.len());
    for path in paths {
        match StoredRun::read(path) {
            Ok(run) => shards.push(Shard {
                path: path.clone(),
                run,
            }),
            Err(e) => {
                output::stderr(&format!("error: {e}\n"));
                return Ok(ExitCode::INVALID);
            }
        }
    }
    let merged = match merge(&shards) {
        Ok(merged) => merged,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    for warning in &merged.warnings {
        output::stderr(&format!("warning: {warning}\n"));
    }
    write(&merged.events, Some(&merged.info), outputs, color)
}

/// Feeds `events` to the reporters `outputs` ask for and the human one, and returns the
/// exit code for the run they make.
fn write(
    events: &[Event],
    info: Option<&RunInfo>,
    outputs: &ReportOutputs,
    color: bool,
) -> anyhow::Result<ExitCode> {
    let mut reporters = match reporters(outputs, info, color) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let mut unwritten = Vec::new();
    for event in events {
        unwritten.extend(reporters.event(event));
    }
    unwritten.extend(reporters.finish());
    let mut failed = 0;
    for failure in &unwritten {
        output::stderr(&format!("error: {failure}\n"));
        failed += usize::from(failure.reporter != "human");
    }
    if failed > 0 {
        output::stderr(&format!("error: {failed} report(s) could not be written\n"));
        return Ok(ExitCode::ERROR);
    }
    let summary = match events.last() {
        Some(Event::RunFinished(summary)) => *summary,
        _ => Summary::default(),
    };
    Ok(exit_code(&summary))
}

/// The exit code for the run reported: a run that did not finish never passes.
fn exit_code(summary: &Summary) -> ExitCode {
    if summary.failed > 0 {
        ExitCode::FAILURES
    } else if summary.errored > 0 || summary.cancelled {
        ExitCode::ERROR
    } else {
        ExitCode::OK
    }
}

fn reporters(
    outputs: &ReportOutputs,
    info: Option<&RunInfo>,
    color: bool,
) -> anyhow::Result<Reporters> {
    let mut reporters = Reporters::new();
    let verbosity = if outputs.quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    reporters.push(
        "human",
        Human::stderr(HumanOptions {
            verbosity,
            color,
            terminal: false,
            transcripts: false,
        }),
    );
    if let Some(path) = &outputs.jsonl {
        let mut lines =
            JsonLines::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(info) = info {
            lines = lines
                .with_run(info)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        reporters.push("jsonl", lines);
    }
    if let Some(path) = &outputs.json {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("json", JsonReport::new(out));
    }
    if let Some(path) = &outputs.junit {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        let junit = Junit::new(out);
        reporters.push(
            "junit",
            match output::run_dir() {
                Some(base) => junit.relative_to(base),
                None => junit,
            },
        );
    }
    if let Some(path) = &outputs.markdown {
        let out =
            Output::append(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("markdown", Markdown::new(out));
    }
    Ok(reporters)
}
