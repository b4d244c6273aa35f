//! The history as `assay runs` prints it: a table of runs, newest first, and one case's
//! units across runs, so that a flaky case shows as a pattern.

use std::fmt::Write as _;

use crate::{CaseRow, RunRow};

/// One line per run: id, start, commit (short, `+` when dirty), the totals and the
/// duration; `(unfinished)` for a run that did not finish.
pub fn runs(rows: &[RunRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let commit = match &r.commit {
            Some(c) => format!(
                "{}{}",
                &c[..c.len().min(10)],
                if r.dirty { "+" } else { "" }
            ),
            None => "-".to_owned(),
        };
        let duration = match r.duration {
            Some(d) if r.finished => format!("{d:.2}s"),
            _ => "(unfinished)".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}  {}  {:<11}  {} passed, {} failed, {} errored, {} skipped  {duration}",
            r.id, r.started_at, commit, r.passed, r.failed, r.errored, r.skipped
        );
    }
    out
}

/// One line per unit of the case, newest run first, then a line of its verdicts
/// oldest to newest (`P` passed, `F` failed, `E` errored, `S` skipped), which shows a
/// flaky case at a glance.
pub fn case(rows: &[CaseRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let commit = r.commit.as_deref().map_or("-", |c| &c[..c.len().min(10)]);
        let _ = writeln!(
            out,
            "{}  {:<11}  {:<7}  {}/{} samples  {:.2}s  {} [{}]",
            r.run_id, commit, r.verdict, r.passed, r.samples, r.duration, r.name, r.connection
        );
    }
    let pattern: String = rows
        .iter()
        .rev()
        .map(|r| match r.verdict.as_str() {
            "passed" => 'P',
            "failed" => 'F',
            "errored" => 'E',
            _ => 'S',
        })
        .collect();
    if !pattern.is_empty() {
        let _ = writeln!(out, "oldest to newest: {pattern}");
    }
    out
}
