//! A comparison as text: for a terminal ([`human`]), for a pull request's comment
//! ([`markdown`]: a headline, the regressions, the rest folded away), and as the HTML
//! report's [`CompareSection`].

use std::fmt::Write as _;

use prill_report::format::Status;
use prill_report::html::{CompareRow, CompareSection};
use prill_report::markdown::escape;

use super::model::{CaseRef, Change, Comparison, Edited, MetricChange, Only, Outcome, RunRef};

/// `1 regression, 2 fixes, ...`: every non-empty kind of change, or `no change`.
pub fn headline(c: &Comparison) -> String {
    let mut parts = Vec::new();
    let mut add = |n: usize, one: &str, many: &str| {
        if n > 0 {
            parts.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    };
    add(c.regressions.len(), "regression", "regressions");
    add(c.fixes.len(), "fix", "fixes");
    add(c.new.len(), "new case", "new cases");
    add(c.removed.len(), "removed case", "removed cases");
    add(
        c.inputs_changed.len(),
        "case with inputs changed",
        "cases with inputs changed",
    );
    add(
        c.probably_changed.len(),
        "pass rate probably changed",
        "pass rates probably changed",
    );
    add(
        c.within_chance.len(),
        "pass-rate change within chance",
        "pass-rate changes within chance",
    );
    let worse = c.metrics.iter().filter(|m| m.worse).count();
    add(worse, "metric worse", "metrics worse");
    add(c.metrics.len() - worse, "metric better", "metrics better");
    add(
        c.judge.len(),
        "changed judge reason",
        "changed judge reasons",
    );
    if parts.is_empty() {
        format!("no change ({} cases as before)", c.unchanged)
    } else {
        format!("{}; {} unchanged", parts.join(", "), c.unchanged)
    }
}

fn run_line(r: &RunRef) -> String {
    let commit = r.commit.as_deref().map_or("-".to_owned(), |c| {
        format!(
            "{}{}",
            &c[..c.len().min(10)],
            if r.dirty { "+" } else { "" }
        )
    });
    format!(
        "{}  {}  {commit}  {} passed, {} failed, {} errored{}",
        r.label,
        r.started_at.as_deref().unwrap_or("-"),
        r.passed,
        r.failed,
        r.errored,
        if r.finished { "" } else { "  (unfinished)" }
    )
}

fn verdict(s: Status) -> &'static str {
    match s {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Errored => "errored",
        Status::Unscored => "unscored",
        _ => "skipped",
    }
}

/// `passed 10/10`.
pub fn outcome(o: &Outcome) -> String {
    format!("{} {}/{}", verdict(o.verdict), o.passed, o.samples)
}

fn case(c: &CaseRef) -> String {
    format!("{} [{}]", c.name, c.connection)
}

fn p_value(p: Option<f64>) -> String {
    p.map_or(String::new(), |p| {
        if p < 0.0001 {
            "p < 0.0001".to_owned()
        } else {
            format!("p = {p:.4}")
        }
    })
}

/// What a change within chance could not have shown: `could not have seen a drop of
/// less than 46 points`.
fn unseen(ch: &Change) -> String {
    match ch.detectable_drop {
        Some(drop) => format!(
            "could not have seen a drop of less than {:.0} points",
            (100.0 * drop).ceil()
        ),
        None => "no drop could have been seen with these samples".to_owned(),
    }
}

fn metric_line(m: &MetricChange) -> String {
    format!(
        "{} {} → {} ({:+.0}%)",
        m.metric.name(),
        m.metric.show(m.base),
        m.metric.show(m.head),
        m.percent
    )
}

/// The comparison for a terminal: the two runs, the headline, then each kind of change,
/// regressions first.
pub fn human(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "base  {}", run_line(&c.base));
    let _ = writeln!(out, "head  {}", run_line(&c.head));
    if let Some(note) = looks_note(c) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(out, "{}", headline(c));
    let changes = |out: &mut String, title: &str, list: &[Change], unseen_too: bool| {
        if list.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title}");
        for ch in list {
            let p = p_value(ch.p_value);
            let more = if unseen_too {
                format!("; {}", unseen(ch))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {}  {} → {}{}{p}{more}",
                case(&ch.case),
                outcome(&ch.base),
                outcome(&ch.head),
                if p.is_empty() { "" } else { "  " }
            );
        }
    };
    changes(&mut out, "Regressions", &c.regressions, false);
    changes(&mut out, "Fixes", &c.fixes, false);
    changes(
        &mut out,
        &format!(
            "Probably changed (Benjamini–Hochberg at {}; not enough for a regression once every sampled case is counted)",
            c.thresholds.alpha
        ),
        &c.probably_changed,
        false,
    );
    let only = |out: &mut String, title: &str, list: &[Only]| {
        if list.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title}");
        for o in list {
            let _ = writeln!(out, "  {}  {}", case(&o.case), outcome(&o.outcome));
        }
    };
    only(&mut out, "New", &c.new);
    only(&mut out, "Removed", &c.removed);
    if !c.inputs_changed.is_empty() {
        let _ = writeln!(
            out,
            "\nInputs changed (the same file, name and connection under a new id: compared as one case, neither a regression nor a fix)"
        );
        for e in &c.inputs_changed {
            let _ = writeln!(
                out,
                "  {}  {} → {}  ({})",
                case(&e.case),
                outcome(&e.base),
                outcome(&e.head),
                edited_ids(e)
            );
        }
    }
    changes(
        &mut out,
        "Within chance (not detectable with these samples)",
        &c.within_chance,
        true,
    );
    if !c.metrics.is_empty() {
        let t = &c.thresholds;
        let _ = writeln!(
            out,
            "\nMetrics (beyond ±{}% latency, ±{}% tokens, ±{}% cost)",
            t.latency_percent, t.tokens_percent, t.cost_percent
        );
        for m in &c.metrics {
            let _ = writeln!(out, "  {}  {}", case(&m.case), metric_line(m));
        }
    }
    if let Some(top_up) = &c.top_up {
        let _ = writeln!(out, "\n{}", top_up_title(top_up));
        for t in &top_up.cases {
            let _ = writeln!(out, "  {}  {}", case(&t.case), topped_line(t));
        }
    }
    if !c.judge.is_empty() {
        let _ = writeln!(out, "\nJudge reasons");
        for j in &c.judge {
            let _ = writeln!(
                out,
                "  {}  {}: {} → {}\n    was: {}\n    now: {}",
                case(&j.case),
                j.check,
                verdict(j.base_status),
                verdict(j.head_status),
                one_line(&j.base_reason),
                one_line(&j.head_reason)
            );
        }
    }
    out
}

/// What the looks cost, when the head was topped up: each p-value is multiplied by them.
fn looks_note(c: &Comparison) -> Option<String> {
    (c.looks > 1).then(|| {
        format!(
            "topped up: each sampled case's test is spread over {} looks (the head's own samples, then each wave), so every p-value is multiplied by {} (Bonferroni)",
            c.looks, c.looks
        )
    })
}

/// `Top-up: 2 waves, at most 40 more samples a case (10 a wave), until a drop of 20
/// points would be seen; kept as runs a, b`.
fn top_up_title(t: &super::TopUpReport) -> String {
    let runs = if t.runs.is_empty() {
        "nothing kept".to_owned()
    } else {
        format!("kept as {}", t.runs.join(", "))
    };
    format!(
        "Top-up ({} wave{}, at most {} more samples a case, {} a wave, until a drop of {:.0} points would be seen; {runs})",
        t.waves,
        if t.waves == 1 { "" } else { "s" },
        t.plan.max,
        t.plan.wave,
        100.0 * t.plan.drop
    )
}

/// `+20 samples (12 passed) in 2 waves: decided`.
fn topped_line(t: &super::ToppedUp) -> String {
    format!(
        "+{} samples ({} passed) in {} wave{}: {}",
        t.samples,
        t.passed,
        t.waves,
        if t.waves == 1 { "" } else { "s" },
        t.ended.describe()
    )
}

/// `id 3f9a… → 7c21…, tests/x.yaml`.
fn edited_ids(e: &Edited) -> String {
    format!(
        "id {} → {}, {}",
        e.base_case_id, e.case.case_id, e.case.file
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The comparison as Markdown for a pull request's comment: a short headline, the
/// regressions in a table, and everything else in a collapsed `<details>`. Every name
/// and reason is escaped, so nothing in them can break the table or inject HTML.
pub fn markdown(c: &Comparison) -> String {
    let mut md = String::new();
    let title = match c.regressions.len() {
        0 => "no regression".to_owned(),
        1 => "1 regression".to_owned(),
        n => format!("{n} regressions"),
    };
    let _ = writeln!(md, "### Prill compare: {title}\n");
    let _ = writeln!(
        md,
        "{} → {}: {}\n",
        run_md(&c.base),
        run_md(&c.head),
        escape(&headline(c))
    );
    if let Some(note) = looks_note(c) {
        let _ = writeln!(md, "{}\n", escape(&note));
    }
    if !c.regressions.is_empty() {
        changes_md(&mut md, "Regression", &c.regressions, false);
    }
    let mut rest = String::new();
    if !c.fixes.is_empty() {
        changes_md(&mut rest, "Fix", &c.fixes, false);
    }
    for (title, list) in [("New", &c.new), ("Removed", &c.removed)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(rest, "| {title} | Connection | Outcome |\n|---|---|---|");
        for o in list {
            let _ = writeln!(
                rest,
                "| {} | {} | {} |",
                escape(&o.case.name),
                escape(&o.case.connection),
                outcome(&o.outcome)
            );
        }
        rest.push('\n');
    }
    if !c.inputs_changed.is_empty() {
        let _ = writeln!(
            rest,
            "| Inputs changed | Connection | Base | Head | Ids |\n|---|---|---|---|---|"
        );
        for e in &c.inputs_changed {
            let _ = writeln!(
                rest,
                "| {} | {} | {} | {} | {} |",
                escape(&e.case.name),
                escape(&e.case.connection),
                outcome(&e.base),
                outcome(&e.head),
                escape(&edited_ids(e))
            );
        }
        rest.push('\n');
    }
    if !c.probably_changed.is_empty() {
        changes_md(&mut rest, "Probably changed", &c.probably_changed, false);
    }
    if !c.within_chance.is_empty() {
        changes_md(&mut rest, "Within chance", &c.within_chance, true);
    }
    if !c.metrics.is_empty() {
        let _ = writeln!(rest, "| Metric | Connection | Change |\n|---|---|---|");
        for m in &c.metrics {
            let _ = writeln!(
                rest,
                "| {} | {} | {} |",
                escape(&m.case.name),
                escape(&m.case.connection),
                escape(&metric_line(m))
            );
        }
        rest.push('\n');
    }
    if let Some(top_up) = &c.top_up {
        let _ = writeln!(
            rest,
            "{}\n\n| Topped up | Connection | Added |\n|---|---|---|",
            escape(&top_up_title(top_up))
        );
        for t in &top_up.cases {
            let _ = writeln!(
                rest,
                "| {} | {} | {} |",
                escape(&t.case.name),
                escape(&t.case.connection),
                escape(&topped_line(t))
            );
        }
        rest.push('\n');
    }
    if !c.judge.is_empty() {
        let _ = writeln!(
            rest,
            "| Judge reason | Check | Base | Head |\n|---|---|---|---|"
        );
        for j in &c.judge {
            let _ = writeln!(
                rest,
                "| {} | {} | {}: {} | {}: {} |",
                escape(&case(&j.case)),
                escape(&j.check),
                verdict(j.base_status),
                escape(&j.base_reason),
                verdict(j.head_status),
                escape(&j.head_reason)
            );
        }
        rest.push('\n');
    }
    if !rest.is_empty() {
        let _ = write!(
            md,
            "<details><summary>Everything else</summary>\n\n{rest}</details>\n"
        );
    }
    md
}

fn run_md(r: &RunRef) -> String {
    let commit = r
        .commit
        .as_deref()
        .map(|c| {
            format!(
                " ({}{})",
                &c[..c.len().min(10)],
                if r.dirty { "+" } else { "" }
            )
        })
        .unwrap_or_default();
    format!("`{}`{}", r.label.replace('`', "'"), escape(&commit))
}

fn changes_md(md: &mut String, title: &str, list: &[Change], unseen_too: bool) {
    let (head, rule) = if unseen_too {
        (" | Could have seen |", "---|")
    } else {
        (" |", "")
    };
    let _ = writeln!(
        md,
        "| {title} | Connection | Base | Head | p{head}\n|---|---|---|---|---|{rule}"
    );
    for ch in list {
        let more = if unseen_too {
            format!(
                " {} |",
                ch.detectable_drop.map_or("no drop".to_owned(), |d| format!(
                    "a drop of {:.0} points or more",
                    (100.0 * d).ceil()
                ))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |{more}",
            escape(&ch.case.name),
            escape(&ch.case.connection),
            outcome(&ch.base),
            outcome(&ch.head),
            escape(p_value(ch.p_value).trim_start_matches("p = "))
        );
    }
    md.push('\n');
}

impl From<&Comparison> for CompareSection {
    /// The rows the HTML report shows: regressions first, then fixes, new and removed
    /// cases, pass-rate changes within chance, metrics and judge reasons.
    fn from(c: &Comparison) -> CompareSection {
        let mut section = CompareSection::new(c.base.label.clone(), c.head.label.clone());
        let row = |kind: &str, case: &CaseRef, base: String, head: String, detail: String| {
            let mut row = CompareRow::new(kind, &case.name, &case.case_id, &case.connection);
            row.base = base;
            row.head = head;
            row.detail = detail;
            row
        };
        let rows = &mut section.rows;
        for (kind, list) in [("regression", &c.regressions), ("fix", &c.fixes)] {
            for ch in list {
                rows.push(row(
                    kind,
                    &ch.case,
                    outcome(&ch.base),
                    outcome(&ch.head),
                    p_value(ch.p_value),
                ));
            }
        }
        for o in &c.new {
            rows.push(row(
                "new",
                &o.case,
                String::new(),
                outcome(&o.outcome),
                String::new(),
            ));
        }
        for o in &c.removed {
            rows.push(row(
                "removed",
                &o.case,
                outcome(&o.outcome),
                String::new(),
                String::new(),
            ));
        }
        for e in &c.inputs_changed {
            rows.push(row(
                "inputs_changed",
                &e.case,
                outcome(&e.base),
                outcome(&e.head),
                edited_ids(e),
            ));
        }
        let probable = c.probably_changed.iter().map(|ch| {
            let why = "probably changed (not a regression once every sampled case is counted)";
            (ch, why.to_owned())
        });
        let chance = c
            .within_chance
            .iter()
            .map(|ch| (ch, format!("within chance; {}", unseen(ch))));
        for (ch, why) in probable.chain(chance) {
            let detail = format!("{}, {why}", p_value(ch.p_value));
            rows.push(row(
                "pass_rate",
                &ch.case,
                outcome(&ch.base),
                outcome(&ch.head),
                detail,
            ));
        }
        for m in &c.metrics {
            let kind = match m.metric {
                super::Metric::Tokens => "tokens",
                super::Metric::Cost => "cost",
                _ => "latency",
            };
            let detail = format!("{} {:+.0}%", m.metric.name(), m.percent);
            rows.push(row(
                kind,
                &m.case,
                m.metric.show(m.base),
                m.metric.show(m.head),
                detail,
            ));
        }
        for t in c.top_up.iter().flat_map(|t| &t.cases) {
            let detail = format!("topped up: {}", t.ended.describe());
            let added = format!("+{} samples ({} passed)", t.samples, t.passed);
            rows.push(row("top_up", &t.case, String::new(), added, detail));
        }
        for j in &c.judge {
            let base = format!("{}: {}", verdict(j.base_status), j.base_reason);
            let head = format!("{}: {}", verdict(j.head_status), j.head_reason);
            rows.push(row("judge", &j.case, base, head, j.check.clone()));
        }
        section
    }
}
