//! `assay run`: the flags become [`Settings`]; the library loads, selects, runs and
//! reports; this module prints what the library says and picks the exit code.
//!
//! Exit codes: 0 all passed (or nothing to run, when `--no-tests` allows it); 1 some
//! failed; 2 invalid input or usage (nothing runs when any file is invalid, or when
//! nothing is selected and `--no-tests` does not allow it); 3 errors (unreachable
//! agents, timeouts) and no failures, or a report that could not be written; 130
//! cancelled with Ctrl-C (the reports are still written).

use anyhow::Context;
use assay_report::{
    Human, HumanOptions, JsonLines, JsonReport, Junit, Markdown, Output, Reporters, Verbosity,
};
use assay_run::Summary;
use assay_settings::{Prepared, Session, Settings, SettingsError, fit_open_files, prepare};

use super::report_empty;
use crate::args::{RunArgs, TargetArgs};
use crate::exit::ExitCode;
use crate::output;

/// The settings of `target`, printed as the user needs to see them: `assay.toml`'s
/// warnings and which file was read. `Err` holds the exit code of an invalid one.
pub(crate) fn settings(target: &TargetArgs, color: bool) -> Result<Settings, ExitCode> {
    match Settings::load(target.config.as_deref(), target.overrides()) {
        Ok(settings) => {
            output::stderr(&output::render(&settings.reports, color));
            output::stderr(&format!("{}\n", settings.found));
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

/// Loads the files (printing diagnostics) and applies the selection. `Err` holds the
/// exit code when the files cannot run (an invalid file, a bad filter). `Ok` holds the
/// plan and whether an empty run fails.
pub(crate) fn prepared(
    settings: &Settings,
    target: &TargetArgs,
    color: bool,
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
    output::stderr(&output::render(&prepared.inputs.reports(), color));
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

/// Runs the cases under `args.target.paths` and returns the exit code the results call for.
pub(crate) fn run(args: &RunArgs, color: bool) -> anyhow::Result<ExitCode> {
    // The report files first: a bad path fails before anything else, and an earlier
    // run's reports are gone from now on, whatever happens to this run.
    let reporters = match reporters(args, color) {
        Ok(reporters) => reporters,
        Err(e) => {
            output::stderr(&format!("error: {e:#}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let settings = match settings(&args.target, color) {
        Ok(settings) => settings,
        Err(code) => return Ok(code),
    };
    let (prepared, empty_fails) = match prepared(&settings, &args.target, color) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ran = runtime.block_on(async {
        let session = match Session::new(&settings, &prepared.plan).await {
            Ok(session) => session,
            Err(e) => return Err(settings_error(&e, color)),
        };
        for note in &session.notes {
            output::stderr(&format!("{note}\n"));
        }
        let ctrl_c = crate::signals::cancel_on_ctrl_c(session.cancel_token());
        let ran = session.run_reported(&prepared.plan, reporters).await;
        ctrl_c.abort();
        session.shutdown().await;
        Ok(ran)
    });
    let ran = match ran {
        Ok(ran) => ran,
        Err(code) => return Ok(code),
    };
    // A report that could not be written fails the run; the human one on stderr (a
    // closed pipe) does not.
    let mut unwritten = 0;
    for failure in &ran.unwritten {
        output::stderr(&format!("error: {failure}\n"));
        unwritten += usize::from(failure.reporter != "human");
    }
    if unwritten > 0 && !ran.summary.cancelled {
        output::stderr(&format!(
            "error: {unwritten} report(s) could not be written; the run fails whatever the tests did\n"
        ));
        return Ok(ExitCode::ERROR);
    }
    if empty_fails {
        return Ok(ExitCode::INVALID);
    }
    Ok(exit_code(&ran.summary))
}

/// The exit code for a run's summary.
fn exit_code(summary: &Summary) -> ExitCode {
    if summary.cancelled {
        ExitCode::CANCELLED
    } else if summary.failed > 0 {
        ExitCode::FAILURES
    } else if summary.errored > 0 {
        ExitCode::ERROR
    } else {
        ExitCode::OK
    }
}

fn reporters(args: &RunArgs, color: bool) -> anyhow::Result<Reporters> {
    let mut reporters = Reporters::new();
    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    reporters.push(
        "human",
        Human::stderr(HumanOptions {
            verbosity,
            color,
            terminal,
            transcripts: args.show_transcript,
        }),
    );
    if let Some(path) = &args.jsonl {
        let r =
            JsonLines::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("jsonl", r);
    }
    if let Some(path) = &args.json {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("json", JsonReport::new(out));
    }
    if let Some(path) = &args.junit {
        let out = Output::file(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("junit", Junit::new(out));
    }
    if let Some(path) = &args.markdown {
        let out =
            Output::append(path).with_context(|| format!("cannot write {}", path.display()))?;
        reporters.push("markdown", Markdown::new(out));
    }
    Ok(reporters)
}
