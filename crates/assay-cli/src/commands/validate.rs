//! `assay validate`: check test files and report every problem in them.

use assay_spec::Env;
use serde_json::json;

use super::{Entry, Inputs, input_limits, load_paths};
use crate::args::{Format, ValidateArgs};
use crate::exit::ExitCode;
use crate::output;

/// Checks every file, prints its diagnostics and a summary, and exits
/// [`ExitCode::INVALID`] when any file is invalid.
pub(crate) fn run(args: &ValidateArgs, color: bool) -> anyhow::Result<ExitCode> {
    let inputs = load_paths(&args.paths, &Env::from_process(), &input_limits(None));
    let counts = Counts::of(&inputs);
    match args.format {
        Format::Human => {
            let reports: Vec<_> = inputs.entries.iter().flat_map(Entry::reports).collect();
            output::stderr(&output::render(&reports, color));
            if inputs.entries.is_empty() {
                output::stderr("warning: no test files found\n");
            }
            output::stdout(&format!("{}\n", summary(&inputs, &counts)))?;
        }
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&to_json(&inputs, &counts))?;
            text.push('\n');
            output::stdout(&text)?;
        }
    }
    Ok(if counts.invalid == 0 {
        ExitCode::OK
    } else {
        ExitCode::INVALID
    })
}

/// How many files were valid and invalid, and how many warnings they had.
struct Counts {
    valid: usize,
    invalid: usize,
    warnings: usize,
}

impl Counts {
    fn of(inputs: &Inputs) -> Counts {
        let valid = inputs.entries.iter().filter(|e| e.is_valid()).count();
        Counts {
            valid,
            invalid: inputs.entries.len() - valid,
            warnings: inputs.entries.iter().map(Entry::warnings).sum(),
        }
    }
}

/// `N files, N valid, N invalid`, then `, N warnings` and `, N skipped` when nonzero.
fn summary(inputs: &Inputs, counts: &Counts) -> String {
    let mut line = format!(
        "{} files, {} valid, {} invalid",
        inputs.entries.len(),
        counts.valid,
        counts.invalid
    );
    if counts.warnings > 0 {
        line.push_str(&format!(", {} warnings", counts.warnings));
    }
    if inputs.skipped > 0 {
        line.push_str(&format!(", {} skipped", inputs.skipped));
    }
    line
}

/// The whole result as one JSON document: every file with its diagnostics, and the counts.
fn to_json(inputs: &Inputs, counts: &Counts) -> serde_json::Value {
    let files: Vec<serde_json::Value> = inputs
        .entries
        .iter()
        .map(|entry| {
            let source = entry.source();
            let (syntax, dialect) = match entry {
                Entry::Loaded(loaded) => {
                    (Some(loaded.syntax.name()), loaded.dialect.map(|d| d.name()))
                }
                Entry::Unreadable { .. } => (None, None),
            };
            let diagnostics: Vec<serde_json::Value> = entry
                .reports()
                .iter()
                .map(|r| r.diagnostic.to_json(source))
                .collect();
            json!({
                "file": source.name(),
                "syntax": syntax,
                "dialect": dialect,
                "valid": entry.is_valid(),
                "cases": entry.cases().len(),
                "diagnostics": diagnostics,
            })
        })
        .collect();
    json!({
        "files": files,
        "summary": {
            "files": inputs.entries.len(),
            "valid": counts.valid,
            "invalid": counts.invalid,
            "warnings": counts.warnings,
            "skipped": inputs.skipped,
        },
    })
}
