//! Repository chores, run as `cargo xtask <task>`.
//!
//! - `cargo xtask schemas` writes `schemas/*.schema.json`: every dialect's from the
//!   model (`assay_spec::schema`), and the JSON report's and one JSON Lines record's
//!   from the report format (`assay_report::format`).
//! - `cargo xtask schemas --check` fails when any of them is out of date.

mod files;
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
    /// Write the JSON Schema of every dialect and of the reports to `schemas/`
    Schemas {
        /// Change nothing; fail when a file is out of date
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Schemas { check } => schemas(
            &repo_root().join("schemas"),
            if check { Mode::Check } else { Mode::Write },
        ),
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

/// Writes (or checks) every schema of [`assay_spec::schema::SCHEMAS`] and of
/// [`assay_report::format::schema_files`] under `dir`, reporting every file that is out
/// of date, not just the first.
fn schemas(dir: &Path, mode: Mode) -> Result<(), String> {
    let mut problems = Vec::new();
    let dialects = assay_spec::schema::SCHEMAS
        .into_iter()
        .map(|(dialect, file)| (file, assay_spec::schema::schema_text(dialect)));
    for (file, text) in dialects.chain(assay_report::format::schema_files()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_up_to_date() {
        if let Err(message) = schemas(&repo_root().join("schemas"), Mode::Check) {
            panic!("{message}");
        }
    }
}
