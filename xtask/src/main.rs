//! Repository chores, run as `cargo xtask <task>`.
//!
//! - `cargo xtask schemas` writes `schemas/*.schema.json`: every dialect's from the
//!   model (`prill_spec::schema`), and the JSON report's and one JSON Lines record's
//!   from the report format (`prill_report::format`), and a cassette line's
//!   (`prill_cassette`, `schemas/cassette.schema.json`).
//!   It also writes `docs/config.md`, the reference page of `prill.toml`, from the
//!   configuration's schema ([`config_docs`]).
//! - `cargo xtask schemas --check` fails when any of them is out of date.
//! - `cargo xtask bench` measures Prill side by side with promptfoo against a fake
//!   OpenAI-compatible server ([`mod@bench`], `docs/performance.md`).

mod bench;
mod config_docs;
mod files;
mod home;
mod layering;
mod msrv;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::files::{Mode, ensure_file_contents};

/// Repository chores.
#[derive(Debug, Parser)]
#[command(name = "xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Write the JSON Schema of every dialect and of the reports to `schemas/`, and the
    /// `prill.toml` reference page, `docs/config.md`
    Schemas {
        /// Change nothing; fail when a file is out of date
        #[arg(long)]
        check: bool,
    },
    /// Measure Prill (and with --with-promptfoo, promptfoo) on generated suites against a
    /// fake OpenAI server; print a Markdown report; fail when Prill misses a target
    Bench(bench::Options),
    /// The benchmark's direct agent: answers each request line with one final message
    /// of BYTES of text (`--long-answers`)
    #[command(hide = true)]
    LongAgent {
        #[arg(long)]
        bytes: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Schemas { check } => {
            let mode = if check { Mode::Check } else { Mode::Write };
            let schemas = schemas(&repo_root().join("schemas"), mode);
            let docs = config_reference(&repo_root().join(CONFIG_REFERENCE), mode);
            match (schemas, docs) {
                (Ok(()), Ok(())) => Ok(()),
                (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
                (Err(problem), Ok(())) | (Ok(()), Err(problem)) => Err(problem),
            }
        }
        Task::Bench(options) => bench::run(&options, &repo_root()),
        Task::LongAgent { bytes } => bench::long::agent(bytes),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: this crate's parent folder.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Writes (or checks) every schema of [`prill_spec::schema::SCHEMAS`] and of
/// [`prill_report::format::schema_files`], and the cassette format's
/// ([`prill_cassette::schema_text`]), under `dir`, reporting every file that is out of
/// date, not just the first.
fn schemas(dir: &Path, mode: Mode) -> Result<(), String> {
    let mut problems = Vec::new();
    let dialects = prill_spec::schema::SCHEMAS
        .into_iter()
        .map(|(dialect, file)| (file, prill_spec::schema::schema_text(dialect)));
    let cassette = ("cassette.schema.json", prill_cassette::schema_text());
    for (file, text) in dialects
        .chain(prill_report::format::schema_files())
        .chain([cassette])
    {
        let path = dir.join(file);
        match ensure_file_contents(&path, &text, mode) {
            Ok(true) => eprintln!("updated {}", path.display()),
            Ok(false) => {}
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The reference page of `prill.toml`, from the repository's root.
const CONFIG_REFERENCE: &str = "docs/config.md";

/// Writes (or checks) the reference page of `prill.toml` at `path`.
fn config_reference(path: &Path, mode: Mode) -> Result<(), String> {
    let schema = prill_spec::schema::schema_for(prill_spec::plan::Dialect::Config).to_value();
    let page = config_docs::config_reference(&schema);
    match ensure_file_contents(path, &page, mode) {
        Ok(true) => {
            eprintln!("updated {}", path.display());
            Ok(())
        }
        Ok(false) => Ok(()),
        Err(problem) => Err(problem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_reference_is_up_to_date() {
        if let Err(message) = config_reference(&repo_root().join(CONFIG_REFERENCE), Mode::Check) {
            panic!("{message}");
        }
    }

    #[test]
    fn schemas_are_up_to_date() {
        if let Err(message) = schemas(&repo_root().join("schemas"), Mode::Check) {
            panic!("{message}");
        }
    }
}
