//! `prill run`: the flags become [`Settings`]; the library loads, selects, runs and
//! reports; this module prints what the library says and picks the exit code.
//!
//! Exit codes: 0 all passed (or nothing to run, when `--no-tests` allows it); 1 some
//! failed; 2 invalid input or usage (nothing runs when any file is invalid, or when
//! nothing is selected and `--no-tests` does not allow it, or cassettes that cannot be
//! opened); 3 errors (unreachable agents, timeouts, a request `--replay` has no
//! cassette for) and no failures, or a report or cassette that could not be written; 130
//! cancelled with Ctrl-C or SIGTERM (the reports are still written). A second signal,
//! or a signal once the run is over (while the history is brought up to date), ends
//! the process at once: 130 for Ctrl-C, 143 for SIGTERM (`crate::signals`).
//!
//! `--fail-fast` exits as the failures call for (1, or 3 for an error); `--rerun-failed`
//! with nothing to rerun exits 0 with a note. Every run also writes
//! `.prill/last-run.json` for `--rerun-failed`; when it cannot, that is a warning.
//!
//! `--list` prints the units the run would run (JSON Lines on stdout) and runs nothing;
//! `--units FILE` runs only the units a list names. Together they let a tool (the pytest
//! plugin) collect the units, let its user choose, and run exactly the chosen ones.

use std::path::PathBuf;

use anyhow::Context;
use prill_app::{Overrides, Prepared, Session, Settings, SettingsError, fit_open_files, prepare};
use prill_report::format::RunInfo;
use prill_report::{
    Github, Human, HumanOptions, JsonLines, MatrixReport, Reporters, Stake, Verbosity,
};
use prill_run::Summary;

use super::report_empty;
use crate::args::{InconclusiveAs, RunArgs, RunFormat, TargetArgs};
use crate::exit::ExitCode;
use crate::output;

/// The settings of `target`, printed as the user needs to see them: `prill.toml`'s
/// warnings and which file was read. `Err` holds the exit code of an invalid one.
pub(crate) fn settings(target: &TargetArgs, color: bool) -> Result<Settings, ExitCode> {
    settings_quiet(target, color, false)
}

/// [`settings`]; `quiet` (`-q`) leaves out which file was read, keeping the warnings.
pub(crate) fn settings_quiet(
    target: &TargetArgs,
    color: bool,
    quiet: bool,
) -> Result<Settings, ExitCode> {
    match Settings::load(target.config.as_deref(), target.overrides()) {
        Ok(settings) => {
            output::stderr(&output::render(&settings.reports, color));
            if !quiet {
                output::stderr(&format!("{}\n", settings.found));
            }
            if let Some(warning) = fit_open_files(settings.run_options(None).jobs) {
                output::stderr(&format!("{warning}\n"));
            }
            Ok(settings)
        }
        Err(e) => Err(settings_error(&e, color)),
    }
}

/// Prints why the settings could not be resolved; the exit code is [`ExitCode::INVALID`].
pub(crate) fn settings_error(e: &SettingsError, color: bool) -> ExitCode {
    if let SettingsError::InvalidConfig { reports, .. } = e {
        output::stderr(&output::render(reports, color));
    } else {
        output::stderr(&format!("error: {e}\n"));
    }
    ExitCode::INVALID
}

/// Loads the files (printing diagnostics, and with `annotate` GitHub annotations of
/// them on stdout) and applies the selection. `Err` holds the exit code when the files
/// cannot run (an invalid file, a bad filter). `Ok` holds the plan and whether an empty
/// run fails.
pub(crate) fn prepared(
    settings: &Settings,
    target: &TargetArgs,
    color: bool,
    annotate: bool,
) -> Result<(Prepared, bool), ExitCode> {
    let selection = target.selection().map_err(|e| {
        output::stderr(&format!("error: {e}\n"));
        ExitCode::INVALID
    })?;
    let prepared = prepare(
        settings,
        &target.paths,
        &selection,
        target.no_tests.map(Into::into),
    );
    let reports = prepared.inputs.reports();
    output::stderr(&output::render(&reports, color));
    if annotate {
        let base = output::run_dir();
        // A closed stdout is no reason to stop: the diagnostics are on stderr too.
        let _ = output::stdout(&prill_report::github::diagnostics(
            &reports,
            base.as_deref(),
        ));
    }
    for note in &prepared.notes {
        output::stderr(&format!("note: {note}\n"));
    }
    let invalid = prepared.inputs.invalid();
    if invalid > 0 {
        let why = if settings.strict() {
            " (strict: every warning is an error)"
        } else {
            ""
        };
        output::stderr(&format!(
            "error: {invalid} invalid file(s); nothing was run{why}\n"
        ));
        return Err(ExitCode::INVALID);
    }
    let empty_fails = prepared.empty.as_ref().is_some_and(report_empty);
    Ok((prepared, empty_fails))
}

/// The settings of a run: [`settings_quiet`] with the flags only `prill run` has
/// (`--fail-fast`, `--rerun-failed`, the cassettes, `--units`). `Err` holds the exit code
/// of invalid settings or a `--units` file that cannot be read.
fn run_settings(args: &RunArgs, color: bool) -> Result<Settings, ExitCode> {
    let settings = settings_quiet(&args.target, color, args.quiet)?;
    let units = match &args.units.units {
        Some(path) => Some(read_units(path).map_err(|e| {
            output::stderr(&format!("error: {e}\n"));
            ExitCode::INVALID
        })?),
        None => None,
    };
    let overrides = args
        .cassettes
        .overrides(args.habits.overrides(settings.overrides.clone()));
    Ok(settings.with_overrides(Overrides {
        units,
        otlp: args.otlp.clone(),
        otlp_content: args.otlp_content,
        ..overrides
    }))
}

/// The units of a `--units` file: each non-blank line a JSON object with the unit's
/// `case_id` and `connection` (other fields, such as those `--list` prints, are ignored).
fn read_units(path: &std::path::Path) -> Result<Vec<(String, String)>, String> {
    let shown = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read --units {shown}: {e}"))?;
    let mut units = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{shown}:{}: not JSON: {e}", n + 1))?;
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str);
        match (field("case_id"), field("connection")) {
            (Some(id), Some(connection)) => units.push((id.to_owned(), connection.to_owned())),
            _ => {
                return Err(format!(
                    "{shown}:{}: expected an object with the `case_id` and `connection` of a unit, as `prill run --list` prints them",
                    n + 1
                ));
            }
        }
    }
    Ok(units)
}

/// `prill run --list`: the units the run would run, one JSON object per line on stdout
/// (the `unit` objects of `--jsonl`), chosen exactly as the run chooses them. Nothing
/// runs: no agent is started or reached, and no report, last run or history is written.
/// The exit code is the one the run would have before it starts: 2 for an invalid file
/// or an empty selection that `--no-tests` does not allow, else 0.
fn list(args: &RunArgs, color: bool) -> anyhow::Result<ExitCode> {
    let settings = match run_settings(args, color) {
        Ok(settings) => settings,
        Err(code) => return Ok(code),
    };
    let (prepared, empty_fails) = match prepared(&settings, &args.target, color, false) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let connections = settings.run_options(None).connections;
    let mut text = String::new();
    for unit in prill_run::plan_units(&prepared.plan, connections.as_deref()) {
        text.push_str(&serde_json::to_string(
            &prill_report::format::UnitId::from(&unit),
        )?);
        text.push('\n');
    }
    output::stdout(&text)?;
    Ok(if empty_fails {
        ExitCode::INVALID
    } else {
        ExitCode::OK
    })
}

/// Runs the cases under `args.target.paths` and returns the exit code the results call for.
pub(crate) fn run(args: &RunArgs, color: bool) -> anyhow::Result<ExitCode> {
    if args.units.list {
        return list(args, color);
    }
    // The report files first: a bad path fails before anything else, and an earlier
    // run's reports are gone from now on, whatever happens to this run.
    // `--format`, else `github` in GitHub Actions: the environment is read here, once.
    let stdout_format = RunFormat::resolve(args.format, output::in_github_actions());
    let (mut reporters, jsonl, page_run) = match reporters(args, color, stdout_format) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let settings = match run_settings(args, color) {
        Ok(settings) => settings,
        Err(code) => return Ok(code),
    };
    match settings.otel_export() {
        Ok(Some(export)) => {
            if !args.quiet {
                output::stderr(&format!(
                    "spans: trace {} to {}\n",
                    export.trace_id, export.endpoint
                ));
            }
            reporters.push("otlp", export.reporter);
        }
        Ok(None) => {}
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    }
    let annotate = stdout_format == RunFormat::Github;
    let (mut prepared, empty_fails) = match prepared(&settings, &args.target, color, annotate) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let runs_something = !prepared.plan.cases.is_empty();
    // The files' texts (and whatever else their diagnostics needed) are not needed once
    // the diagnostics are shown: not held through the run.
    drop(std::mem::take(&mut prepared.inputs));
    // The last run, the history and `--jsonl`, each as the library says it is kept.
    let selection = args.target.selection().ok();
    match settings.keep_run(
        &args.target.paths,
        selection.as_ref(),
        &prepared,
        &mut reporters,
        jsonl,
    ) {
        Ok(kept) => {
            for warning in &kept.warnings {
                output::stderr(&format!("{warning}\n"));
            }
            if let (Some(slot), Some(info)) = (&page_run, kept.info) {
                let _ = slot.set(info);
            }
        }
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::ERROR);
        }
    }
    let models = settings.models();
    if models.len() > 1 {
        let columns = models.into_iter().map(|m| m.shown).collect();
        reporters.push_with(
            "matrix",
            MatrixReport::new(columns, std::io::stderr()),
            Stake::Shown,
        );
    }
    let ran = prill_app::runtime()?.block_on(async {
        let session = match Session::new(&settings, &prepared.plan).await {
            Ok(session) => session,
            Err(e) => return Err(settings_error(&e, color)),
        };
        for note in session.notes.iter().filter(|n| shown(n, args.quiet)) {
            output::stderr(&format!("{note}\n"));
        }
        let going = crate::signals::cancel_on_ctrl_c(session.cancel_token());
        // The plan is given to the run, which frees each case once it has run.
        let plan = std::mem::take(&mut prepared.plan);
        let ran = session.run_reported(plan, reporters).await;
        // From here on a stop signal ends the process at once.
        drop(going);
        let cassette_failure = session.cassette_failure();
        warn_stale(&session.stale_cassettes());
        let unsent = session.shutdown().await;
        Ok((ran, cassette_failure, unsent))
    });
    let (ran, cassette_failure, unsent) = match ran {
        Ok(ran) => ran,
        Err(code) => return Ok(code),
    };
    // A report that could not be written fails the run; what each reporter's failure
    // means was set when it was added (`Stake`).
    for failure in &ran.unwritten {
        match failure.stake {
            Stake::Kept { lost } => output::stderr(&format!("warning: {failure}; {lost}\n")),
            Stake::Required | Stake::Shown => output::stderr(&format!("error: {failure}\n")),
        }
    }
    let unwritten = ran.unwritten.iter().filter(|f| f.fails_the_run()).count();
    if unwritten > 0 && !ran.summary.cancelled {
        output::stderr(&format!(
            "error: {unwritten} report(s) could not be written; the run fails whatever the tests did\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    // A cassette that could not be written leaves the recording incomplete: the run
    // fails as for a report that cannot be written.
    if let Some(failure) = cassette_failure
        && !ran.summary.cancelled
    {
        output::stderr(&format!(
            "error: {failure}; the cassettes are incomplete and the run fails whatever the tests did\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    // Agents' spans that did not reach `--otlp`: the trace there is incomplete.
    if let Some(unsent) = unsent
        && !ran.summary.cancelled
    {
        output::stderr(&format!(
            "error: {unsent}; the run fails whatever the tests did\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    // The history keeps the newest runs; pruning it is housekeeping, never a failure.
    if runs_something {
        prune_history(&settings);
    }
    if empty_fails {
        return Ok(ExitCode::INVALID);
    }
    Ok(exit_code(&ran.summary, args.inconclusive))
}

/// Prunes the history as `[history]` says (`keep`, `max_age_days`); a history that
/// cannot be pruned, and what its folder holds that is not read, are warnings, never
/// failures.
pub(crate) fn prune_history(settings: &Settings) {
    match settings.prune_history() {
        Ok(pruned) => {
            for skipped in &pruned.skipped {
                output::stderr(&format!("warning: {skipped}\n"));
            }
        }
        Err(e) => output::stderr(&format!("warning: the history was not pruned: {e}\n")),
    }
}

/// Whether a note of the session is printed: with `-q` only warnings are (not where
/// the demo agents listen, nor which judge was picked).
fn shown(note: &str, quiet: bool) -> bool {
    !quiet || note.starts_with("warning:")
}

/// The exit code for a run's summary: an inconclusive unit counts as a failure unless
/// `--inconclusive pass`.
fn exit_code(summary: &Summary, inconclusive: InconclusiveAs) -> ExitCode {
    // Quarantined units are reported, but do not gate.
    let gating = summary.gating();
    let inconclusive_fails = inconclusive == InconclusiveAs::Fail && gating.inconclusive > 0;
    if summary.cancelled {
        ExitCode::CANCELLED
    } else if gating.failed > 0 || inconclusive_fails {
        ExitCode::FAILURES
    } else if gating.errored > 0 {
        ExitCode::ERROR
    } else {
        ExitCode::OK
    }
}

/// What [`reporters`] makes: the reporters, the `--jsonl` stream apart (it gets its
/// `run` line once the run's settings are known), and the HTML page's slot for the run.
type Made = (Reporters, Option<(PathBuf, JsonLines)>, Option<PageRun>);

/// The HTML page's slot for what the history knows of the run.
type PageRun = std::sync::Arc<std::sync::OnceLock<RunInfo>>;

/// The reporters `args` ask for (the report files made now, so that a bad path fails
/// before anything else).
fn reporters(args: &RunArgs, color: bool, stdout_format: RunFormat) -> anyhow::Result<Made> {
    let mut reporters = Reporters::new();
    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    reporters.push_with(
        "human",
        Human::stderr(HumanOptions {
            verbosity,
            color,
            terminal,
            transcripts: args.show_transcript,
        }),
        Stake::Shown,
    );
    let jsonl = match &args.files.jsonl {
        Some(path) => Some((
            path.clone(),
            JsonLines::create(path).with_context(|| format!("cannot write {}", path.display()))?,
        )),
        None => None,
    };
    let page_run = super::push_file_reports(&args.files, &mut reporters)?;
    let base = output::run_dir();
    if stdout_format == RunFormat::Github {
        let github = Github::stdout();
        reporters.push(
            "github",
            match &base {
                Some(base) => github.relative_to(base),
                None => github,
            },
        );
    }
    Ok((reporters, jsonl, page_run))
}

/// Warns, by case name, of the replayed recordings made under other inputs, tools,
/// simulated user or tool program than the cases have now.
fn warn_stale(stale: &[(String, Vec<prill_spec::plan::under::Change>)]) {
    if stale.is_empty() {
        return;
    }
    let mut text = format!(
        "warning: {} case(s) replayed cassettes recorded before they changed; their answers may not be what the agent would say now:\n",
        stale.len()
    );
    for (name, changes) in stale {
        text.push_str(&format!(
            "  {name}: {}\n",
            prill_spec::plan::under::describe(changes)
        ));
    }
    text.push_str("record them again with --re-record, or list every stale recording with `prill cassettes check`\n");
    output::stderr(&text);
}
