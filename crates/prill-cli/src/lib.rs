//! The `prill` command line: a thin layer over the Prill crates (spec, run, report,
//! assess, judge, connect): clap structs in [`args`], one module per command, exit codes
//! in one place.
//!
//! Data goes to stdout and diagnostics to stderr, so that `prill list | …` and
//! `prill validate --format json | jq` work. Diagnostics are coloured only when stderr
//! is a terminal and `NO_COLOR` is not set (or with `--color always`). Exit codes are
//! defined in [`ExitCode`].
//!
//! # Example
//!
//! The arguments are plain clap structs, and each turns into the settings the library
//! resolves:
//!
//! ```
//! use prill_cli::args::{Cli, Command};
//! use clap::Parser;
//!
//! let cli = Cli::try_parse_from(["prill", "run", "tests", "--samples", "20", "--judge", "openai:gpt-4o-mini"]).unwrap();
//! let Command::Run(run) = cli.command else { unreachable!() };
//! let overrides = run.target.overrides();
//! assert_eq!(overrides.samples, Some(20));
//! assert_eq!(overrides.judge.as_deref(), Some("openai:gpt-4o-mini"));
//! ```

pub mod args;
mod commands;
mod exit;
mod logging;
mod output;
mod signals;

use clap::Parser;

pub use exit::ExitCode;

use crate::args::{Cli, Command};

/// Runs `prill` with the process's arguments and returns the code to exit with.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout, usage errors to stderr.
            let _ = error.print();
            return ExitCode::from_clap(&error);
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::ERROR
        }
    };
    // An agent that ignored SIGTERM is not left running once Prill has exited.
    prill_connect::end_pending_groups();
    code
}

/// Runs a parsed command line.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let color = output::use_color(cli.color);
    logging::init(cli.log_level, color);
    match cli.command {
        Command::Validate(args) => commands::validate::run(&args, color),
        Command::List(args) => commands::list::run(&args, color),
        Command::Explain(args) => commands::explain::run(&args, color),
        Command::Schema(args) => commands::schema::run(&args),
        Command::Convert(args) => commands::convert::run(&args, color),
        Command::Agents(args) => commands::agents::run(&args, color),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Run(args) => commands::run::run(&args, color),
        Command::Assess(args) => commands::assess::run(&args, color),
        Command::Show(args) => commands::show::run(&args),
        Command::Runs(args) => commands::runs::run(&args, color),
        Command::Report(args) => commands::report::run(&args, color),
        Command::Compare(args) => commands::compare::run(&args, color),
        Command::View(args) => commands::view::run(&args, color),
        Command::Cassettes(args) => match &args.command {
            args::CassettesCommand::Check(check) => commands::cassettes::check(check, color),
        },
        Command::Judge(args) => match &args.command {
            args::JudgeCommand::Check(check) => commands::judge::check(check, color),
        },
        Command::Init(args) => commands::init::run(&args),
        Command::Watch(args) => commands::watch::run(*args, color),
        Command::Completions(args) => commands::completions::completions(&args),
        Command::Man(_) => commands::completions::man(),
    }
}
