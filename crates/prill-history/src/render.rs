//! The history as `prill runs` prints it: a table of runs, newest first, and one case's
//! units across runs, so that a flaky case shows as a pattern.

use std::fmt::Write as _;

use crate::{CaseRow, RunRow};

/// A header, then one line per run: its id (which starts with its start time, UTC),
/// commit (short, `+` when dirty), the command (`run`, `assess`), the totals and the
/// duration (`(unfinished)` for a run that did not finish), then its cost where known,
/// and the cassettes it recorded or replayed (`cassettes: replay tests/cassettes`).
pub fn runs(rows: &[RunRow]) -> String {
    let mut out = String::new();
    let width = rows.iter().map(|r| r.id.len()).max().unwrap_or(0);
    if !rows.is_empty() {
        let _ = writeln!(
            out,
            "{:<width$}  {:<11}  {:<7}  result, duration",
            "run (started, UTC)", "commit", "command"
        );
    }
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
        let cost = r
            .cost
            .map(|c| format!("  cost ${c:.6}"))
            .unwrap_or_default();
        let cassettes = r
            .cassettes
            .as_deref()
            .map(|c| format!("  cassettes: {c}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<width$}  {:<11}  {:<7}  {} passed, {} failed, {} errored, {} skipped  {duration}{cost}{cassettes}",
            r.id, commit, r.command, r.passed, r.failed, r.errored, r.skipped
        );
    }
    out
}

/// For each row of a case's history (newest first), the id the case had in the run
/// before, over the same connection, when its inputs were edited in between (its id
/// changed; its file and name did not).
pub fn inputs_changed(rows: &[CaseRow]) -> Vec<Option<&str>> {
    rows.iter()
        .enumerate()
        .map(|(at, r)| {
            let older = rows[at + 1..]
                .iter()
                .find(|o| o.connection == r.connection && o.file == r.file && o.name == r.name)?;
            (older.case_id != r.case_id).then_some(older.case_id.as_str())
        })
        .collect()
}

/// One line per unit of the case, newest run first, with its metrics where known
/// (the mean latency and time to first token of its interactions, its tokens in and
/// out, its cost), and where its inputs were edited since the run before (`inputs
/// changed: id 3f9a… → 7c21…`), then a line of its verdicts
/// oldest to newest (`P` passed, `F` failed, `E` errored, `S` skipped), which shows a
/// flaky case at a glance.
pub fn case(rows: &[CaseRow]) -> String {
    let mut out = String::new();
    for (r, before) in rows.iter().zip(inputs_changed(rows)) {
        let commit = r.commit.as_deref().map_or("-", |c| &c[..c.len().min(10)]);
        let edited = before
            .map(|id| format!("  inputs changed: id {id} → {}", r.case_id))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}  {:<11}  {:<7}  {}/{} samples  {:.2}s{}  {} [{}]{edited}",
            r.run_id,
            commit,
            r.verdict,
            r.passed,
            r.samples,
            r.duration,
            metrics(r),
            r.name,
            r.connection
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

/// A unit's metrics, each where known: `  latency 0.120s  ttft 0.050s  tokens 40 in 12
/// out  cost $0.000123`.
fn metrics(r: &CaseRow) -> String {
    let mut out = String::new();
    if let Some(latency) = r.latency {
        let _ = write!(out, "  latency {latency:.3}s");
    }
    if let Some(ttft) = r.time_to_first_token {
        let _ = write!(out, "  ttft {ttft:.3}s");
    }
    match (r.input_tokens, r.output_tokens) {
        (None, None) => {}
        (input, output) => {
            let n = |v: Option<u64>| v.map_or("?".to_owned(), |v| v.to_string());
            let _ = write!(out, "  tokens {} in {} out", n(input), n(output));
        }
    }
    if let Some(cost) = r.cost {
        let _ = write!(out, "  cost ${cost:.6}");
    }
    out
}

/// The flaky cases of `cases` ([`crate::History::stability`]), one a line with the
/// evidence, then how many were stable and broken:
/// `flaky  greets [direct]  tests/greet.yaml  17 of 20 samples passed over 4 runs: 85.0% (64.0%–94.8%)`.
pub fn flaky(cases: &[crate::CaseStability], recent: usize) -> String {
    use prill_stats::stability::Stability;
    let percent = |x: f64| format!("{:.1}%", 100.0 * x);
    let mut out = String::new();
    for c in cases.iter().filter(|c| c.state == Stability::Flaky) {
        out.push_str(&format!(
            "flaky  {} [{}]  {}  {} of {} samples passed over {} run{}: {} ({}–{})\n",
            c.name,
            c.connection,
            c.file,
            c.passed,
            c.samples,
            c.runs,
            if c.runs == 1 { "" } else { "s" },
            percent(c.passed as f64 / c.samples.max(1) as f64),
            percent(c.low),
            percent(c.high)
        ));
    }
    let count = |state: Stability| cases.iter().filter(|c| c.state == state).count();
    out.push_str(&format!(
        "{} flaky, {} stable, {} broken (each case over its {recent} newest kept runs; flaky: the 95% interval of its pass rate excludes both 0 and 1)\n",
        count(Stability::Flaky),
        count(Stability::Stable),
        count(Stability::Broken)
    ));
    out
}
