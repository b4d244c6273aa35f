//! Assessments, rendered: a table for people, Markdown, the JSON format other tools
//! read, and a self-contained HTML page with a bar chart of the failure modes.

use std::fmt::Write as _;

use prill_assess::CaseAssessment;
use serde::Serialize;

/// The JSON document: `{"cases": [...]}` with the assessment's field names.
pub fn assessment_json(cases: &[CaseAssessment]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        cases: &'a [CaseAssessment],
    }
    let mut text = serde_json::to_string_pretty(&Doc { cases }).unwrap_or_default();
    text.push('\n');
    text
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
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
    for c in cases
        .iter()
        .filter(|c| c.suggestion.is_some() || !c.modes.is_empty())
    {
        let _ = writeln!(out, "\n{}", c.name);
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
    for c in cases
        .iter()
        .filter(|c| c.suggestion.is_some() || !c.modes.is_empty())
    {
        let _ = writeln!(out, "\n### {}\n", md(&c.name));
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
    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(out, "<h2>{}</h2>", html(&c.name));
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
