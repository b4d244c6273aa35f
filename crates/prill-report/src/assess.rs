//! Assessments, rendered: a table for people, Markdown, the JSON format other tools
//! read, and a self-contained HTML page with a bar chart of the failure modes.

use std::fmt::Write as _;

use prill_assess::{CaseAssessment, suite_pass_hat_k};
use prill_stats::SuitePassHatK;
use serde::Serialize;

/// The `k` the text shows of a pass@k or pass^k curve (the JSON has more).
const SHOWN_K: [u32; 12] = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 10_000];

/// A case's pass^k and pass@k at the shown `k`, and the Clopper–Pearson interval:
/// `pass^k 1: 70.0%, 2: 46.7% · pass@k 1: 70.0%, 2: 93.3% · exact 95% interval 34.8–93.3%`.
fn pass_k_line(c: &CaseAssessment) -> String {
    let shown = |f: fn(&prill_assess::PassK) -> f64| {
        c.pass_k
            .iter()
            .filter(|p| SHOWN_K.contains(&p.k))
            .map(|p| format!("{}: {}", p.k, percent(f(p))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "pass^k {} · pass@k {} · exact 95% interval {}–{}",
        shown(|p| p.pass_hat_k),
        shown(|p| p.pass_at_k),
        percent(c.exact_low),
        percent(c.exact_high)
    )
}

/// The suite's pass^k at the shown `k`, with their intervals; `None` without cases.
fn suite_line(cases: &[CaseAssessment]) -> Option<String> {
    let curve = suite_pass_hat_k(cases);
    if curve.is_empty() {
        return None;
    }
    let points: Vec<String> = curve
        .iter()
        .filter(|p| SHOWN_K.contains(&p.k))
        .map(|p| {
            format!(
                "{}: {} ({}–{})",
                p.k,
                percent(p.value),
                percent(p.low),
                percent(p.high)
            )
        })
        .collect();
    Some(format!(
        "suite pass^k (95% interval from resampling the cases) {}",
        points.join(", ")
    ))
}

/// The JSON document: `{"cases": [...], "suite": {"pass_hat_k": [...]}}` with the
/// assessment's field names; the suite's pass^k has a case-bootstrap interval.
pub fn assessment_json(cases: &[CaseAssessment]) -> String {
    #[derive(Serialize)]
    struct Suite {
        pass_hat_k: Vec<SuitePassHatK>,
    }
    #[derive(Serialize)]
    struct Doc<'a> {
        cases: &'a [CaseAssessment],
        suite: Suite,
    }
    let suite = Suite {
        pass_hat_k: suite_pass_hat_k(cases),
    };
    let mut text = serde_json::to_string_pretty(&Doc { cases, suite }).unwrap_or_default();
    text.push('\n');
    text
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// `gist: 31 of 50 verdicts passed (62.0%); corrected for the judge's errors: 60.0%
/// (95%: 48.1–71.9%)`, for a case with gist checks.
fn gist_line(c: &CaseAssessment) -> Option<String> {
    let g = c.gist.as_ref()?;
    let mut line = format!(
        "gist: {} of {} verdicts passed ({})",
        g.passed,
        g.judged,
        percent(g.passed as f64 / g.judged as f64)
    );
    if let Some(k) = &g.corrected {
        line.push_str(&format!(
            "; corrected for the judge's errors: {} (95%: {}–{})",
            percent(k.rate),
            percent(k.low),
            percent(k.high)
        ));
    }
    Some(line)
}

/// A plain-text table, one row per case, then each case's modes and advice.
pub fn assessment_table(cases: &[CaseAssessment]) -> String {
    let mut out = String::new();
    let name_width = cases
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "{:<name_width$}  {:>7}  {:>6}  {:>6}  {:>7}  {:>8}  {:<15}  {:>5}  {:>6}",
        "case",
        "samples",
        "passed",
        "failed",
        "errored",
        "pass",
        "95% interval",
        "ratio",
        "p(meet)"
    );
    for c in cases {
        let _ = writeln!(
            out,
            "{:<name_width$}  {:>7}  {:>6}  {:>6}  {:>7}  {:>8}  {:<15}  {:>5}  {:>6.2}",
            c.name,
            c.samples,
            c.passed,
            c.failed,
            c.errored,
            percent(c.pass_rate),
            format!("{}–{}", percent(c.ci_low), percent(c.ci_high)),
            c.success_ratio,
            c.p_meets_ratio
        );
    }
    for c in cases.iter().filter(|c| c.samples > 0) {
        let _ = writeln!(out, "\n{}", c.name);
        let _ = writeln!(out, "  {}", pass_k_line(c));
        if let Some(line) = gist_line(c) {
            let _ = writeln!(out, "  {line}");
        }
        if let Some(s) = &c.suggestion {
            let _ = writeln!(out, "  ratio: {s}");
        }
        for m in &c.modes {
            let _ = writeln!(
                out,
                "  {:>4}  {:>6} ({}–{})  {}",
                m.count,
                percent(m.share),
                percent(m.ci_low),
                percent(m.ci_high),
                m.label
            );
            let _ = writeln!(out, "        e.g. {}", m.example);
            if !m.criteria.is_empty() {
                let _ = writeln!(out, "        criteria: {}", m.criteria);
            }
        }
    }
    if let Some(line) = suite_line(cases) {
        let _ = writeln!(out, "\n{line}");
    }
    out
}

/// Text safe in a Markdown table cell or heading: the run report's escaping
/// (`crate::markdown`), so that HTML in a criterion, an example or a case name shows as
/// text on GitHub instead of being rendered.
fn md(text: &str) -> String {
    crate::markdown::escape(text)
}

/// Markdown: a table of cases, then a section per case with modes.
pub fn assessment_markdown(cases: &[CaseAssessment]) -> String {
    let mut out = String::from("## Prill assessment\n\n");
    out.push_str("| case | samples | passed | failed | errored | pass rate (95% CI) | ratio | p(meets ratio) |\n");
    out.push_str("|---|---:|---:|---:|---:|---|---|---:|\n");
    for c in cases {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} ({}–{}) | {} | {:.2} |",
            md(&c.name),
            c.samples,
            c.passed,
            c.failed,
            c.errored,
            percent(c.pass_rate),
            percent(c.ci_low),
            percent(c.ci_high),
            c.success_ratio,
            c.p_meets_ratio
        );
    }
    if let Some(line) = suite_line(cases) {
        let _ = writeln!(out, "\n{}", md(&line));
    }
    for c in cases.iter().filter(|c| c.samples > 0) {
        let _ = writeln!(out, "\n### {}\n", md(&c.name));
        let _ = writeln!(out, "{}\n", md(&pass_k_line(c)));
        if let Some(line) = gist_line(c) {
            let _ = writeln!(out, "{}\n", md(&line));
        }
        if let Some(s) = &c.suggestion {
            let _ = writeln!(out, "**Ratio:** {}\n", md(s));
        }
        if !c.modes.is_empty() {
            out.push_str(
                "| count | share (95% CI) | mode | criteria | example |\n|---:|---|---|---|---|\n",
            );
            for m in &c.modes {
                let _ = writeln!(
                    out,
                    "| {} | {} ({}–{}) | {} | {} | {} |",
                    m.count,
                    percent(m.share),
                    percent(m.ci_low),
                    percent(m.ci_high),
                    md(&m.label),
                    md(&m.criteria),
                    md(&m.example)
                );
            }
        }
    }
    out
}

/// `text` as HTML: the HTML report's one escaper.
fn html(text: &str) -> String {
    crate::html::escape(text)
}

/// A self-contained HTML page (no script, no external resource): a table of cases and,
/// per case, an SVG bar chart of its failure modes with their intervals.
pub fn assessment_html(cases: &[CaseAssessment]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Prill assessment</title>\n<style>\
body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td.l,th.l{text-align:left}\
.bar{fill:#d9534f}.ci{stroke:#222;stroke-width:1.5}.label{font-size:12px}.name{font-size:12px;font-weight:600}\
</style></head><body>\n<h1>Prill assessment</h1>\n<table id=\"cases\"><tr><th class=\"l\">case</th><th>samples</th><th>passed</th><th>failed</th><th>errored</th><th>pass rate</th><th>95% interval</th><th>ratio</th><th>p(meets ratio)</th></tr>\n",
    );
    for c in cases {
        let _ = writeln!(
            out,
            "<tr class=\"case\"><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}–{}</td><td>{}</td><td>{:.2}</td></tr>",
            html(&c.name),
            c.samples,
            c.passed,
            c.failed,
            c.errored,
            percent(c.pass_rate),
            percent(c.ci_low),
            percent(c.ci_high),
            html(&c.success_ratio),
            c.p_meets_ratio
        );
    }
    out.push_str("</table>\n");
    if let Some(line) = suite_line(cases) {
        let _ = writeln!(out, "<p class=\"suite\">{}</p>", html(&line));
    }
    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(out, "<h2>{}</h2>", html(&c.name));
        if c.samples > 0 {
            let _ = writeln!(out, "<p class=\"pass-k\">{}</p>", html(&pass_k_line(c)));
            out.push_str(&curves_svg(i, c));
        }
        if let Some(line) = gist_line(c) {
            let _ = writeln!(out, "<p class=\"gist\">{}</p>", html(&line));
        }
        if let Some(s) = &c.suggestion {
            let _ = writeln!(out, "<p class=\"advice\">{}</p>", html(s));
        }
        if c.modes.is_empty() {
            out.push_str("<p>No failures.</p>\n");
            continue;
        }
        // Each mode: its name on a line, then its bar (the count at the left, the share
        // at the right, the 95% interval across it).
        let (name_h, bar_h, gap, left, width) = (16.0, 22.0, 10.0, 40.0, 420.0);
        let height = c.modes.len() as f64 * (name_h + bar_h + gap) + gap;
        let _ = writeln!(
            out,
            "<svg class=\"modes\" id=\"modes-{i}\" width=\"{}\" height=\"{height}\" role=\"img\" aria-label=\"failure modes of {}\">",
            left + width + 60.0,
            html(&c.name)
        );
        for (j, m) in c.modes.iter().enumerate() {
            let top = gap + j as f64 * (name_h + bar_h + gap);
            let y = top + name_h;
            let w = (m.share * width).max(1.0);
            let (lo, hi) = (left + m.ci_low * width, left + m.ci_high * width);
            let mid = y + bar_h / 2.0;
            let _ = writeln!(
                out,
                "<text class=\"name\" x=\"{left}\" y=\"{}\">{}</text><text class=\"label\" x=\"0\" y=\"{}\">{}</text><rect class=\"bar\" x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{bar_h}\"><title>{}</title></rect><line class=\"ci\" x1=\"{lo:.1}\" x2=\"{hi:.1}\" y1=\"{mid}\" y2=\"{mid}\"/><text class=\"label\" x=\"{:.1}\" y=\"{}\">{}</text>",
                top + name_h - 4.0,
                html(&m.label),
                mid + 4.0,
                m.count,
                html(&m.signature),
                left + width + 5.0,
                mid + 4.0,
                percent(m.share)
            );
        }
        out.push_str("</svg>\n<table class=\"modes\"><tr><th>count</th><th>share</th><th class=\"l\">mode</th><th class=\"l\">criteria</th><th class=\"l\">example</th></tr>\n");
        for m in &c.modes {
            let _ = writeln!(
                out,
                "<tr class=\"mode\"><td>{}</td><td>{} ({}–{})</td><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                m.count,
                percent(m.share),
                percent(m.ci_low),
                percent(m.ci_high),
                html(&m.signature),
                html(&m.label),
                html(&m.criteria),
                html(&m.example)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// pass@k (above) and pass^k (below) against `k`, as two lines over the curve's points
/// (evenly spaced, labelled with their `k`).
fn curves_svg(i: usize, c: &CaseAssessment) -> String {
    let (left, top, width, height) = (40.0, 10.0, 360.0, 120.0);
    let count = c.pass_k.len().max(2) as f64 - 1.0;
    let x = |j: usize| left + width * j as f64 / count;
    let y = |v: f64| top + height * (1.0 - v);
    let line = |f: fn(&prill_assess::PassK) -> f64| {
        c.pass_k
            .iter()
            .enumerate()
            .map(|(j, p)| format!("{:.1},{:.1}", x(j), y(f(p))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut svg = format!(
        "<svg class=\"pass-k\" id=\"pass-k-{i}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"pass@k and pass^k of {}\">",
        left + width + 70.0,
        top + height + 30.0,
        html(&c.name)
    );
    let _ = write!(
        svg,
        "<polyline fill=\"none\" stroke=\"#2b7bb9\" stroke-width=\"2\" points=\"{}\"><title>pass@k</title></polyline><polyline fill=\"none\" stroke=\"#7b4fa3\" stroke-width=\"2\" points=\"{}\"><title>pass^k</title></polyline>",
        line(|p| p.pass_at_k),
        line(|p| p.pass_hat_k)
    );
    for (j, p) in c
        .pass_k
        .iter()
        .enumerate()
        .filter(|(_, p)| SHOWN_K.contains(&p.k))
    {
        let _ = write!(
            svg,
            "<text class=\"label\" x=\"{:.1}\" y=\"{}\">{}</text>",
            x(j) - 3.0,
            top + height + 16.0,
            p.k
        );
    }
    let _ = writeln!(
        svg,
        "<text class=\"label\" x=\"0\" y=\"{}\">100%</text><text class=\"label\" x=\"0\" y=\"{}\">0%</text><text class=\"label\" x=\"{}\" y=\"{}\">pass@k</text><text class=\"label\" x=\"{}\" y=\"{}\">pass^k</text></svg>",
        top + 4.0,
        top + height,
        left + width + 5.0,
        y(c.pass_k.last().map_or(0.0, |p| p.pass_at_k)) + 4.0,
        left + width + 5.0,
        y(c.pass_k.last().map_or(0.0, |p| p.pass_hat_k)) + 4.0
    );
    svg
}

#[cfg(test)]
mod tests {
    use prill_assess::{SampleOutcome, Status, assess};

    use super::*;
    use prill_spec::plan::Gate;

    /// A case with 7 passes of 10 and one with 10 of 10.
    fn cases() -> Vec<CaseAssessment> {
        let outcomes = |passes: usize| -> Vec<SampleOutcome> {
            (0..10)
                .map(|i| SampleOutcome {
                    outcome: if i < passes {
                        Status::Passed
                    } else {
                        Status::Failed
                    },
                    first_failure: None,
                    gist_passed: 0,
                    gist_judged: 0,
                })
                .collect()
        };
        vec![
            assess("a", "a.hocon", "seven", &Gate::default(), &outcomes(7)),
            assess("b", "b.hocon", "ten", &Gate::default(), &outcomes(10)),
        ]
    }

    #[test]
    fn every_format_states_pass_hat_k_pass_at_k_and_the_exact_interval() {
        let cases = cases();
        let table = assessment_table(&cases);
        // pass^2 = C(7,2)/C(10,2) = 21/45; pass@2 = 1 - C(3,2)/C(10,2) = 42/45.
        assert!(
            table.contains(
                "pass^k 1: 70.0%, 2: 46.7%, 3: 29.2%, 5: 8.3%, 10: 0.0% · pass@k 1: 70.0%, 2: 93.3%"
            ),
            "{table}"
        );
        assert!(table.contains("exact 95% interval 34.8%–93.3%"), "{table}");
        // The suite's pass^1 is the mean of 0.7 and 1.0.
        assert!(
            table.contains("suite pass^k (95% interval from resampling the cases) 1: 85.0% ("),
            "{table}"
        );
        let markdown = assessment_markdown(&cases);
        assert!(markdown.contains("pass^k 1: 70.0%"), "{markdown}");
        let page = assessment_html(&cases);
        assert!(
            page.contains("<svg class=\"pass-k\" id=\"pass-k-0\""),
            "{page}"
        );
        let json: serde_json::Value = serde_json::from_str(&assessment_json(&cases)).unwrap();
        assert_eq!(json["cases"][0]["pass_k"].as_array().unwrap().len(), 10);
        assert!(
            (json["cases"][0]["pass_k"][1]["pass_hat_k"]
                .as_f64()
                .unwrap()
                - 21.0 / 45.0)
                .abs()
                < 1e-12
        );
        let suite = &json["suite"]["pass_hat_k"][0];
        assert_eq!(suite["k"], 1);
        assert!(suite["low"].as_f64().unwrap() <= 0.85 && suite["high"].as_f64().unwrap() >= 0.85);
    }
}
