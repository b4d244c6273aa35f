//! `assay validate`: check test files and report every problem in them.

use assay_run::select::Emptied;

use assay_spec::Env;
use serde_json::json;

use assay_settings::{Overrides, Settings};
use assay_spec::inputs::{Entry, Inputs, load_paths};

use super::report_empty;
use crate::args::{ValidateArgs, ValidateFormat};
use crate::exit::ExitCode;
use crate::output::{self, Look};

/// Checks every file, prints its diagnostics and a summary, and exits
/// [`ExitCode::INVALID`] when any file is invalid (with `--strict`, any that has a
/// warning), or when there is no test file and `--no-tests` does not allow that.
pub(crate) fn run(args: &ValidateArgs, color: bool) -> anyhow::Result<ExitCode> {
    // `strict` and the input limits of assay.toml; an invalid assay.toml is reported
    // when it is among the files validated.
    let settings = Settings::load(args.config.as_deref(), Overrides::default()).ok();
    let strict = args.strict || settings.as_ref().is_some_and(Settings::strict);
    let limits = settings.map(|s| s.input_limits()).unwrap_or_default();
    let inputs = load_paths(&args.paths, &Env::from_process(), strict, &limits);
    let counts = Counts::of(&inputs);
    let look = match args.format {
        None => Some(Look::auto(color)),
        Some(ValidateFormat::Human) => Some(Look::Rich { color }),
        Some(ValidateFormat::Short) => Some(Look::Short),
        Some(ValidateFormat::Json) => None,
    };
    match look {
        Some(look) => {
            let reports: Vec<_> = inputs.entries.iter().flat_map(Entry::reports).collect();
            output::stderr(&output::render_as(&reports, look));
            output::stdout(&format!("{}\n", summary(&inputs, &counts)))?;
        }
        None => {
            let mut text = serde_json::to_string_pretty(&to_json(&inputs, &counts))?;
            text.push('\n');
            output::stdout(&text)?;
        }
    }
    let empty_fails = inputs.test_files() == 0
        && report_empty(&Emptied::NoFiles.judge(args.no_tests.map(Into::into)));
    Ok(if counts.invalid == 0 && !empty_fails {
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
