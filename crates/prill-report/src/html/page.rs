//! The page itself: the parts written once in HTML (the summary, the settings, the
//! charts, a comparison's changes) and the script that draws the failures, the table
//! and the judges' verdicts from the embedded data. What failed and why comes first,
//! then a comparison's changes, the cases, the judges, the settings and the charts.

use std::fmt::Write;

use super::data::PageData;
use super::svg::{histogram, plural};
use super::{CompareSection, Links, escape, url_part};
use crate::format::{RunInfo, Status, Summary, Unit};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The whole page.
pub(super) fn page(
    units: &[Unit],
    summary: Option<&Summary>,
    run: Option<&RunInfo>,
    compare: Option<&CompareSection>,
    links: &Links,
) -> String {
    let data = PageData::new(units, run, compare, links);
    let title = match run {
        Some(run) => format!("Prill run {}", run.id),
        None => "Prill run".to_owned(),
    };
    let mut out = String::with_capacity(4096 + units.len() * 512);
    head(&mut out, &title, links);
    out.push_str(&summary_html(units, summary));
    out.push_str("</header>\n<main>");
    // What failed and why comes first: it is what a reader opens the page for.
    out.push_str(
        "<section id=\"failures-section\"><h2>Failures</h2><div id=\"failures\"></div>\
         <button id=\"more-failures\" type=\"button\" hidden>Show more</button></section>\n",
    );
    if let Some(compare) = compare {
        out.push_str(&compare_html(compare, links));
    }
    out.push_str(
        "<section id=\"cases-section\"><h2>Cases</h2>\
         <div class=\"controls\">\
         <input id=\"filter\" type=\"search\" placeholder=\"Search name, file, id, target…\" aria-label=\"Search the cases\">\
         <select id=\"status\" aria-label=\"Status\"><option value=\"\">any status</option></select>\
         <select id=\"dialect\" aria-label=\"Dialect\"><option value=\"\">any dialect</option></select>\
         <select id=\"connection\" aria-label=\"Connection or model\"><option value=\"\">any connection</option></select>\
         <select id=\"tag\" aria-label=\"Tag\"><option value=\"\">any tag</option></select>\
         <span id=\"count\" aria-live=\"polite\"></span></div>\
         <table id=\"cases\"><thead><tr>\
         <th data-key=\"verdict\">Status</th><th data-key=\"name\">Case</th>\
         <th data-key=\"dialect\">Dialect</th><th data-key=\"connection\">Connection / model</th>\
         <th data-key=\"ratio\">Samples</th><th data-key=\"duration\" class=\"num\">Duration</th>\
         <th data-key=\"latency\" class=\"num\">Latency</th><th data-key=\"tokens\" class=\"num\">Tokens</th>\
         <th data-key=\"cost\" class=\"num\">Cost</th></tr></thead><tbody></tbody></table>\
         <button id=\"more-cases\" type=\"button\" hidden>Show more</button></section>\n\
         <section id=\"judges-section\"><h2>Judge verdicts</h2><div id=\"judges\"></div></section>\n",
    );
    out.push_str(&gates_html(units));
    if let Some(run) = run {
        out.push_str(&settings_html(run));
    }
    out.push_str(&charts_html(&data));
    out.push_str("</main>\n<script id=\"prill-data\" type=\"application/json\">");
    out.push_str(&data.script_json());
    let _ = write!(
        out,
        "</script>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    out
}

/// The start of a page up to its header's heading: the links first, when it has any.
fn head(out: &mut String, title: &str, links: &Links) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<header>",
        escape(title),
    );
    if !links.nav.is_empty() {
        out.push_str("<nav>");
        for (text, href) in &links.nav {
            let _ = write!(out, "<a href=\"{}\">{}</a>", escape(href), escape(text));
        }
        out.push_str("</nav>");
    }
    let _ = write!(out, "<h1>{}</h1>", escape(title));
}

/// A page of a site in the report's style, with `body` as its content.
pub(super) fn document(title: &str, links: &Links, body: &str) -> String {
    let mut out = String::with_capacity(2048 + body.len());
    head(&mut out, title, links);
    out.push_str("</header>\n<main>");
    out.push_str(body);
    out.push_str("</main>\n</body></html>\n");
    out
}

/// A case's name, linked to its history when the page is part of a site.
fn case_name(name: &str, case_id: &str, links: &Links) -> String {
    match &links.case {
        Some(prefix) => format!(
            "<a href=\"{}{}\">{}</a>",
            escape(prefix),
            url_part(case_id),
            escape(name)
        ),
        None => escape(name),
    }
}

/// The totals, the pass rate and the duration; a run that did not finish says so.
fn summary_html(units: &[Unit], summary: Option<&Summary>) -> String {
    let count = |status| units.iter().filter(|u| u.verdict == status).count() as u64;
    let (passed, failed, errored, inconclusive, skipped, duration, note) = match summary {
        Some(s) => (
            s.passed,
            s.failed,
            s.errored,
            s.inconclusive,
            s.skipped,
            Some(s.duration),
            if s.cancelled {
                " (cancelled)"
            } else if s.stopped {
                " (stopped after the first failure)"
            } else {
                ""
            },
        ),
        None => (
            count(Status::Passed),
            count(Status::Failed),
            count(Status::Errored),
            count(Status::Inconclusive),
            count(Status::Skipped),
            None,
            " (did not finish: the units that finished)",
        ),
    };
    let ran = passed + failed + errored + inconclusive;
    let rate = if ran == 0 {
        "no case ran".to_owned()
    } else {
        format!("{:.1}% passed", 100.0 * passed as f64 / ran as f64)
    };
    let mut out = format!(
        "<p id=\"summary\" class=\"summary\"><span class=\"rate\">{rate}</span> \
         <span class=\"passed\">{passed} passed</span>, <span class=\"failed\">{failed} failed</span>, \
         <span class=\"errored\">{errored} errored</span>, "
    );
    if inconclusive > 0 {
        let _ = write!(
            out,
            "<span class=\"inconclusive\">{inconclusive} inconclusive</span>, "
        );
    }
    let _ = write!(out, "{skipped} skipped");
    if let Some(d) = duration {
        let _ = write!(out, " in {}", escape(&seconds(d)));
    }
    out.push_str(note);
    out.push_str("</p>");
    out
}

/// What shaped the run: when and where it ran, and its settings.
fn settings_html(run: &RunInfo) -> String {
    let mut rows: Vec<(&str, String)> = vec![
        ("run", run.id.clone()),
        ("started", run.started_at.clone()),
        ("command", format!("prill {}", run.command)),
    ];
    if let Some(git) = &run.git {
        let dirty = if git.dirty {
            " (with local changes)"
        } else {
            ""
        };
        let branch = git.branch.as_deref().unwrap_or("detached HEAD");
        rows.push(("commit", format!("{} on {branch}{dirty}", git.commit)));
    }
    let s = &run.settings;
    let list = |v: &[String]| v.join(", ");
    for (name, value) in [
        ("paths", list(&s.paths)),
        ("filters", list(&s.filters)),
        ("tags", list(&s.tags)),
        ("connections", list(&s.connections)),
        ("models", list(&s.models)),
    ] {
        if !value.is_empty() {
            rows.push((name, value));
        }
    }
    let optional = [
        ("partition", s.partition.clone()),
        ("samples", s.samples.map(|n| n.to_string())),
        ("judge", s.judge.clone()),
        ("fail fast", s.fail_fast.then(|| "yes".to_owned())),
        ("rerun failed", s.rerun_failed.then(|| "yes".to_owned())),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            rows.push((name, value));
        }
    }
    let mut out = String::from("<section id=\"settings\"><h2>Settings</h2><dl>");
    for (name, value) in rows {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(name), escape(&value));
    }
    out.push_str("</dl></section>");
    out
}

/// What the run's gates mean (`docs/statistics.md`): each distinct `success_ratio`'s
/// chance of passing at the usual rates and its error rates, and the good cases a run
/// like this fails on average; nothing without units.
fn gates_html(units: &[Unit]) -> String {
    let ratios = units
        .iter()
        .filter(|u| u.verdict != Status::Skipped)
        .filter_map(|u| {
            let (need, of) = u.success_ratio.as_deref()?.split_once('/')?;
            Some((need.parse().ok()?, of.parse().ok()?))
        });
    let Some(gates) = crate::format::gates_of(ratios) else {
        return String::new();
    };
    let percent = |x: f64| format!("{:.1}%", 100.0 * x);
    let mut out = String::from(
        "<section id=\"gates\"><h2>What the gates mean</h2><table class=\"gates\"><thead><tr><th>Gate</th><th class=\"num\">Cases</th>",
    );
    if let Some(first) = gates.ratios.first() {
        for r in &first.rates {
            let _ = write!(out, "<th class=\"num\">passes at p = {}</th>", r.p);
        }
    }
    let _ = write!(
        out,
        "<th class=\"num\">fails a {} agent</th><th class=\"num\">passes a {} agent</th></tr></thead><tbody>",
        percent(gates.good),
        percent(gates.bad)
    );
    for gate in &gates.ratios {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td>",
            escape(&gate.success_ratio),
            gate.units
        );
        for r in &gate.rates {
            let _ = write!(out, "<td class=\"num\">{}</td>", percent(r.pass));
        }
        let _ = write!(
            out,
            "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            percent(gate.false_fail),
            percent(gate.false_pass)
        );
    }
    let _ = writeln!(
        out,
        "</tbody></table><p class=\"gates-note\">If every case passed {} of the time, a run like this would fail {:.2} of them on average (<code>prill explain</code> says more).</p></section>",
        percent(gates.good),
        gates.expected_false_failures
    );
    out
}

/// Histograms of the units' durations, their interactions' latency and their tokens.
fn charts_html(data: &PageData<'_>) -> String {
    let durations: Vec<f64> = data.units.iter().map(|u| u.duration).collect();
    let latencies: Vec<f64> = data.units.iter().filter_map(|u| u.latency).collect();
    let tokens: Vec<f64> = data
        .units
        .iter()
        .filter_map(|u| u.tokens)
        .map(|t| t as f64)
        .collect();
    format!(
        "<section id=\"charts\"><h2>Distributions</h2><div class=\"charts\">{}{}{}</div></section>",
        histogram("duration", "Duration per case", &durations, seconds),
        histogram(
            "latency",
            "Latency per interaction (a case's mean)",
            &latencies,
            seconds
        ),
        histogram(
            "tokens",
            "Tokens per case (input and output)",
            &tokens,
            |t| { format!("{t:.0} tok") }
        ),
    )
}

/// A comparison's changes, regressions first, one row each.
fn compare_html(compare: &CompareSection, links: &Links) -> String {
    let mut rows: Vec<_> = compare.rows.iter().collect();
    rows.sort_by_key(|r| r.kind != "regression");
    let regressions = rows.iter().filter(|r| r.kind == "regression").count();
    let mut out = format!(
        "<section id=\"compare\"><h2>Compared with {}</h2><p class=\"compare-head\">{} to {}: \
         <strong>{}</strong>, {} in all</p>",
        escape(&compare.base),
        escape(&compare.base),
        escape(&compare.head),
        plural(regressions, "regression"),
        plural(rows.len(), "change"),
    );
    if rows.is_empty() {
        out.push_str("<p>No case changed.</p></section>");
        return out;
    }
    out.push_str(
        "<table class=\"compare\"><thead><tr><th>Change</th><th>Case</th><th>Connection</th>\
         <th>Base</th><th>Head</th><th>Detail</th></tr></thead><tbody>",
    );
    for r in rows {
        let _ = write!(
            out,
            "<tr class=\"{kind}\"><td><span class=\"tag {kind}\">{kind}</span></td>\
             <td>{}<div class=\"id\">{}</div></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            case_name(&r.case, &r.case_id, links),
            escape(&r.case_id),
            escape(&r.connection),
            escape(&r.base),
            escape(&r.head),
            escape(&r.detail),
            kind = escape(&r.kind),
        );
    }
    out.push_str("</tbody></table></section>");
    out
}

/// `1.23 s`, `45 ms`, `<1 ms`.
pub(super) fn seconds(s: f64) -> String {
    if s < 0.001 {
        "<1 ms".to_owned()
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{s:.2} s")
    }
}
