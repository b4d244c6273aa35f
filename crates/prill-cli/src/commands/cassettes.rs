//! `prill cassettes check DIR [PATHS]`: which recordings still answer the cases as they
//! are now (`prill_app::cassette_check`).

use prill_app::cassette_check::{CassetteCheck, Status, check_cassettes};

use super::list::load_plan;
use crate::args::{CassettesCheckArgs, Format};
use crate::exit::ExitCode;
use crate::output;

/// Checks the cassettes of `args.dir` against the valid cases of `args.paths`: exit 0
/// when each has recordings that still answer it, 1 when any is stale or missing, 2 when
/// the folder cannot be read or a test file is invalid.
pub(crate) fn check(args: &CassettesCheckArgs, color: bool) -> anyhow::Result<ExitCode> {
    if !args.dir.is_dir() {
        output::stderr(&format!(
            "error: {}: there is no such folder; record the cassettes first with `prill run --record {}`\n",
            args.dir.display(),
            args.dir.display()
        ));
        return Ok(ExitCode::INVALID);
    }
    let (inputs, plan) = load_plan(&args.paths, color);
    let all_valid = inputs
        .entries
        .iter()
        .all(prill_spec::inputs::Entry::is_valid);
    drop(inputs);
    let check = match check_cassettes(&args.dir, &plan) {
        Ok(check) => check,
        Err(e) => {
            output::stderr(&format!("error: {e}\n"));
            return Ok(ExitCode::INVALID);
        }
    };
    let text = match args.format {
        Format::Human => human(&check),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&check)?;
            text.push('\n');
            text
        }
    };
    output::stdout(&text)?;
    Ok(if !all_valid {
        ExitCode::INVALID
    } else if check.passes() {
        ExitCode::OK
    } else {
        ExitCode::FAILURES
    })
}

/// A line per case that is not fresh, a line per orphaned file, and the counts.
fn human(check: &CassetteCheck) -> String {
    let mut out = String::new();
    for case in check.cases.iter().filter(|c| c.status != Status::Fresh) {
        out.push_str(&format!("{:<9} {}", case.status.name(), case.name));
        match case.status {
            Status::Missing => out.push_str(": no recording; a replay of it errors"),
            Status::Unknown => out.push_str(
                ": recorded by a Prill that did not keep what it was recorded under; record it again to be able to tell",
            ),
            _ => {
                let mut said = prill_spec::plan::under::describe(&case.changes);
                if let Some(id) = &case.recorded_as {
                    let was = format!("recorded for id {id}, now {}", case.case_id);
                    said = if said.is_empty() {
                        was
                    } else {
                        format!("{said} ({was})")
                    };
                }
                out.push_str(&format!(": {said}"));
                if case.status == Status::Rechecked {
                    out.push_str("; the recorded answers are judged by the new checks");
                }
            }
        }
        if let Some(file) = case.files.first() {
            out.push_str(&format!("\n          {}", file.display()));
        }
        out.push('\n');
    }
    for orphan in &check.orphans {
        out.push_str(&format!(
            "{:<9} {}: no case has its id or name now\n",
            "orphan",
            orphan.file.display()
        ));
    }
    let counts: Vec<String> = check
        .counts()
        .into_iter()
        .map(|(status, n)| format!("{n} {}", status.name()))
        .collect();
    let counts = if counts.is_empty() {
        "no case".to_owned()
    } else {
        counts.join(", ")
    };
    out.push_str(&format!(
        "{} against {} case(s): {counts}{}\n",
        check.dir.display(),
        check.cases.len(),
        if check.passes() {
            ""
        } else {
            "; record the stale and missing ones with `prill run --re-record` (or `--replay-or-record`)"
        }
    ));
    out
}
