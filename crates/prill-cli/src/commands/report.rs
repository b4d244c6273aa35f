//! `prill report --from RUN` and `prill report merge SHARD...`: a stored run (or the
//! shards of one suite, merged) rebuilt into the engine's events
//! ([`prill_report::rebuild`]) and fed to the same reporters `prill run` writes with;
//! the human report goes to stderr.
//!
//! Exit codes: as `prill run`'s for the run reported: 0 all passed, 1 some failed, 3
//! errors and no failures, or a run that did not finish (a killed run's units are
//! reported, but it never passes), or a report that could not be written; 2 a file that
//! cannot be read, or shards that are not the parts of one suite (the odd file out, a
//! part given twice, the parts missing), or an invalid `prill.toml` with `--keep`.
//!
//! `merge --keep` adds the merged run to the history (`<id>.jsonl` in the runs folder,
//! its `run` line naming the command `merge` and the shards' commit), where `prill
//! runs` and `prill compare` find it; a history that cannot take it fails the command
//! (exit 3), since keeping it is what was asked.

use std::path::PathBuf;

use anyhow::Context;
use prill_app::{Overrides, Settings};
use prill_report::format::RunInfo;
use prill_report::rebuild::{Shard, merge};
use prill_report::stored::StoredRun;
use prill_report::{Human, HumanOptions, JsonLines, Reporters, Stake, Verbosity};
use prill_run::{Event, Summary};

use super::run::settings_error;
use crate::args::{MergeArgs, ReportArgs, ReportCommand, ReportOutputs};
use crate::exit::ExitCode;
use crate::output;

/// Writes the reports `args` ask for.
pub(crate) fn run(args: &ReportArgs, color: bool) -> anyhow::Result<ExitCode> {
    match (&args.command, &args.from) {
        (Some(ReportCommand::Merge(merge)), _) => merged(merge, color),
        (None, Some(from)) => from_file(from, &args.outputs, color),
        // clap requires `--from` without a subcommand.
        (None, None) => Ok(ExitCode::INVALID),
    }
}

/// `prill report --from FILE`.
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

/// `prill report merge SHARD...`, and with `--keep` the merged run added to the
/// history.
fn merged(args: &MergeArgs, color: bool) -> anyhow::Result<ExitCode> {
    let settings = if args.keep {
        match Settings::load(args.config.as_deref(), Overrides::default()) {
            Ok(settings) => Some(settings),
            Err(e) => return Ok(settings_error(&e, color)),
        }
    } else {
        None
    };
    let mut shards = Vec::with_capacity(args.shards.len());
    for path in &args.shards {
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
    let mut kept = None;
    if let Some(settings) = &settings {
        match keep(settings, &merged.info) {
            Ok((lines, path)) => kept = Some((lines, path)),
            Err(e) => {
                output::stderr(&format!("error: the merged run cannot be kept: {e:#}\n"));
                return Ok(ExitCode::ERROR);
            }
        }
    }
    let path = kept.as_ref().map(|(_, path)| path.clone());
    let code = write_with(
        &merged.events,
        Some(&merged.info),
        &args.outputs,
        color,
        kept.map(|(lines, _)| lines),
    )?;
    if let (Some(settings), Some(path)) = (&settings, path) {
        output::stderr(&format!("kept as {}\n", path.display()));
        super::run::prune_history(settings);
    }
    Ok(code)
}

/// The history's file for the merged run `info` (`<id>.jsonl` in the runs folder), its
/// `run` line written.
fn keep(settings: &Settings, info: &RunInfo) -> anyhow::Result<(JsonLines, PathBuf)> {
    let dir = settings.runs_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{}.jsonl", info.id));
    let lines = JsonLines::create(&path)
        .and_then(|lines| lines.with_run(info))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((lines, path))
}

/// Feeds `events` to the reporters `outputs` ask for and the human one, and returns the
/// exit code for the run they make.
fn write(
    events: &[Event],
    info: Option<&RunInfo>,
    outputs: &ReportOutputs,
    color: bool,
) -> anyhow::Result<ExitCode> {
    write_with(events, info, outputs, color, None)
}

/// [`write`], also to `history` (the history's file of a merged run kept).
fn write_with(
    events: &[Event],
    info: Option<&RunInfo>,
    outputs: &ReportOutputs,
    color: bool,
    history: Option<JsonLines>,
) -> anyhow::Result<ExitCode> {
    let mut reporters = match reporters(outputs, info, color) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    if let Some(history) = history {
        reporters.push("history", history);
    }
    let mut unwritten = Vec::new();
    for event in events {
        unwritten.extend(reporters.event(event));
    }
    unwritten.extend(reporters.finish());
    let mut failed = 0;
    for failure in &unwritten {
        output::stderr(&format!("error: {failure}\n"));
        failed += usize::from(failure.fails_the_run());
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

/// The exit code for the run reported: a run that did not finish never passes, and an
/// inconclusive unit counts as a failure (as `prill run`'s default).
fn exit_code(summary: &Summary) -> ExitCode {
    let gating = summary.gating();
    if gating.failed > 0 || gating.inconclusive > 0 {
        ExitCode::FAILURES
    } else if gating.errored > 0 || summary.cancelled {
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
    reporters.push_with(
        "human",
        Human::stderr(HumanOptions {
            verbosity,
            color,
            terminal: false,
            transcripts: false,
        }),
        Stake::Shown,
    );
    if let Some(path) = &outputs.files.jsonl {
        let mut lines =
            JsonLines::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(info) = info {
            lines = lines
                .with_run(info)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        reporters.push("jsonl", lines);
    }
    let page_run = super::push_file_reports(&outputs.files, &mut reporters)?;
    if let (Some(slot), Some(info)) = (page_run, info) {
        let _ = slot.set(info.clone());
    }
    Ok(reporters)
}
