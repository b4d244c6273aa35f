//! The pages of `prill view` that the history alone makes, and the site's addresses:
//! the kept runs, newest first, with a form to compare any two; one case across runs,
//! with its pass rate over time; and a page for what is not there. A run's page and a
//! comparison are the HTML report's ([`prill_report::html::render_linked`]).
//!
//! Every address of the site is a [`Route`], parsed from a request and written as a
//! link by the same code, so every link the pages hold leads to a page.
//!
//! ```
//! use prill_history::view::Route;
//!
//! let route = Route::Compare { base: Some("a".into()), head: Some("b c".into()) };
//! assert_eq!(route.href(), "/compare?base=a&head=b%20c");
//! assert_eq!(Route::parse("/compare", Some("base=a&head=b+c")), route);
//! assert_eq!(Route::parse("/case/3f9a", None), Route::Case("3f9a".into()));
//! ```

use std::fmt::Write as _;

use prill_report::html::{Links, document, escape, seconds, url_part};

use crate::{CaseRow, RunRow};

/// An address of `prill view`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/`: the kept runs.
    Runs,
    /// `/run/<id>`: one run's report.
    Run(String),
    /// `/case/<id>`: one case across the kept runs.
    Case(String),
    /// `/compare?base=<id>&head=<id>`: two runs compared (the newest two, or the newest
    /// and the one before it of its command, when one is not given).
    Compare {
        /// The base run's id.
        base: Option<String>,
        /// The head run's id.
        head: Option<String>,
    },
    /// Any other address.
    NotFound(String),
}

impl Route {
    /// The route of a request's `path` and `query` (both percent-encoded).
    pub fn parse(path: &str, query: Option<&str>) -> Route {
        // One part of a path: what follows the prefix, up to no further `/`.
        let part = |rest: &str| {
            (!rest.is_empty() && !rest.contains('/'))
                .then(|| decode(rest))
                .flatten()
        };
        if path == "/" || path.is_empty() {
            return Route::Runs;
        }
        if let Some(id) = path.strip_prefix("/run/").and_then(part) {
            return Route::Run(id);
        }
        if let Some(id) = path.strip_prefix("/case/").and_then(part) {
            return Route::Case(id);
        }
        if path == "/compare" {
            let (mut base, mut head) = (None, None);
            for pair in query.unwrap_or_default().split('&') {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                let value = decode(&value.replace('+', " ")).filter(|v| !v.is_empty());
                match key {
                    "base" => base = value,
                    "head" => head = value,
                    _ => {}
                }
            }
            return Route::Compare { base, head };
        }
        Route::NotFound(decode(path).unwrap_or_else(|| path.to_owned()))
    }

    /// The address of the route, percent-encoded.
    pub fn href(&self) -> String {
        match self {
            Route::Runs => "/".to_owned(),
            Route::Run(id) => format!("/run/{}", url_part(id)),
            Route::Case(id) => format!("/case/{}", url_part(id)),
            Route::Compare { base, head } => {
                let mut query = Vec::new();
                if let Some(base) = base {
                    query.push(format!("base={}", url_part(base)));
                }
                if let Some(head) = head {
                    query.push(format!("head={}", url_part(head)));
                }
                if query.is_empty() {
                    "/compare".to_owned()
                } else {
                    format!("/compare?{}", query.join("&"))
                }
            }
            Route::NotFound(path) => path.clone(),
        }
    }
}

/// `%XX`-decodes `text`; `None` when the result is not UTF-8.
fn decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

/// The links at the top of every page: the runs, and the newest two compared.
pub fn site_links() -> Links {
    Links::new(
        vec![
            ("All runs".to_owned(), Route::Runs.href()),
            (
                "Compare the newest two".to_owned(),
                Route::Compare {
                    base: None,
                    head: None,
                }
                .href(),
            ),
        ],
        Some("/case/".to_owned()),
    )
}

/// The kept runs, newest first (`rows` as [`crate::History::runs`] gives them): a form to
/// compare any two, then one row each with its result and a link to compare it with
/// the run of the same command before it. `empty` is what to say when there is none.
pub fn runs_page(rows: &[RunRow], empty: &str) -> String {
    let mut body = String::new();
    if rows.is_empty() {
        let _ = write!(body, "<p id=\"empty\">{}</p>", escape(empty));
        return document("Prill runs", &site_links(), &body);
    }
    body.push_str(&compare_form(rows));
    body.push_str(
        "<table id=\"runs\"><thead><tr><th>Run (started, UTC)</th><th>Commit</th>\
         <th>Command</th><th>Result</th><th class=\"num\">Duration</th>\
         <th class=\"num\">Cost</th><th>Compare</th></tr></thead><tbody>",
    );
    for (at, r) in rows.iter().enumerate() {
        let previous = rows[at + 1..].iter().find(|p| p.command == r.command);
        let compare = match previous {
            Some(p) => format!(
                "<a href=\"{}\">with the run before</a>",
                escape(
                    &Route::Compare {
                        base: Some(p.id.clone()),
                        head: Some(r.id.clone()),
                    }
                    .href()
                )
            ),
            None => String::new(),
        };
        let duration = match r.duration {
            Some(d) if r.finished => seconds(d),
            _ => "did not finish".to_owned(),
        };
        let cost = r.cost.map(|c| format!("${c:.4}")).unwrap_or_default();
        let _ = write!(
            body,
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"id\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{compare}</td></tr>",
            escape(&Route::Run(r.id.clone()).href()),
            escape(&r.id),
            escape(&commit(r.commit.as_deref(), r.dirty, r.branch.as_deref())),
            escape(&r.command),
            result(r),
            escape(&duration),
            escape(&cost),
        );
    }
    body.push_str("</tbody></table>");
    document("Prill runs", &site_links(), &body)
}

/// A form that compares any two kept runs: the second newest and the newest are chosen.
fn compare_form(rows: &[RunRow]) -> String {
    let options = |chosen: usize| {
        let mut out = String::new();
        for (at, r) in rows.iter().enumerate() {
            let _ = write!(
                out,
                "<option value=\"{}\"{}>{} · {}</option>",
                escape(&r.id),
                if at == chosen { " selected" } else { "" },
                escape(&r.id),
                escape(&r.command),
            );
        }
        out
    };
    format!(
        "<form id=\"compare-form\" class=\"controls\" method=\"get\" action=\"/compare\">\
         <label>Compare <select name=\"base\" aria-label=\"Base run\">{}</select></label>\
         <label>with <select name=\"head\" aria-label=\"Head run\">{}</select></label>\
         <button type=\"submit\">Compare</button></form>",
        options(1.min(rows.len() - 1)),
        options(0),
    )
}

/// A run's totals, each with its colour.
fn result(r: &RunRow) -> String {
    format!(
        "<span class=\"passed\">{} passed</span>, <span class=\"failed\">{} failed</span>, \
         <span class=\"errored\">{} errored</span>, {} skipped",
        r.passed, r.failed, r.errored, r.skipped
    )
}

/// A commit, short, with `+` when it had local changes, and its branch.
fn commit(commit: Option<&str>, dirty: bool, branch: Option<&str>) -> String {
    match commit {
        Some(c) => format!(
            "{}{}{}",
            &c[..c.len().min(10)],
            if dirty { "+" } else { "" },
            branch.map(|b| format!(" ({b})")).unwrap_or_default()
        ),
        None => "-".to_owned(),
    }
}

/// One case across the kept runs (`rows` newest first, as
/// [`crate::History::case_history`] gives them): how often it passed, its pass rate run
/// by run as a chart (oldest on the left), and a row per run with a link to it.
pub fn case_page(rows: &[CaseRow]) -> String {
    let Some(newest) = rows.first() else {
        return not_found_page("No kept run has this case.");
    };
    let title = format!("Case {}", newest.name);
    let runs_passed = rows.iter().filter(|r| r.verdict == "passed").count();
    let one_unit_a_run = rows.windows(2).all(|w| w[0].run_id != w[1].run_id);
    let samples: u32 = rows.iter().map(|r| r.samples).sum();
    let passed: u32 = rows.iter().map(|r| r.passed).sum();
    let mut body = format!(
        "<p id=\"summary\" class=\"summary\"><span class=\"rate\">passed in {runs_passed} of {} {}</span> \
         {passed} of {samples} samples passed{}</p><p class=\"id\">{} · {}</p>",
        rows.len(),
        if one_unit_a_run {
            "runs"
        } else {
            "units (runs × connections)"
        },
        if samples > 0 {
            format!(" ({:.0}%)", 100.0 * f64::from(passed) / f64::from(samples))
        } else {
            String::new()
        },
        escape(&newest.file),
        escape(&newest.case_id),
    );
    body.push_str("<h2>Pass rate over time</h2>");
    body.push_str(&rate_chart(rows));
    body.push_str(
        "<h2>Runs</h2><table id=\"case-runs\"><thead><tr><th>Run (started, UTC)</th>\
         <th>Commit</th><th>Id</th><th>Connection</th><th>Status</th><th>Samples</th>\
         <th class=\"num\">Duration</th><th class=\"num\">Latency</th>\
         <th class=\"num\">Tokens</th><th class=\"num\">Cost</th></tr></thead><tbody>",
    );
    for (r, before) in rows.iter().zip(crate::render::inputs_changed(rows)) {
        let edited = before
            .map(|id| {
                format!(
                    " <span class=\"tag inputs_changed\" title=\"its inputs were edited: id {} before\">inputs changed</span>",
                    escape(id)
                )
            })
            .unwrap_or_default();
        let tokens = match (r.input_tokens, r.output_tokens) {
            (None, None) => String::new(),
            (input, output) => (input.unwrap_or(0) + output.unwrap_or(0)).to_string(),
        };
        let _ = write!(
            body,
            "<tr><td><a href=\"{}\">{}</a></td><td class=\"id\">{}</td><td class=\"id\">{}{edited}</td><td>{}</td>\
             <td><span class=\"tag {verdict}\">{verdict}</span></td><td>{} of {} passed</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            escape(&Route::Run(r.run_id.clone()).href()),
            escape(&r.run_id),
            escape(&commit(r.commit.as_deref(), false, None)),
            escape(&r.case_id),
            escape(&r.connection),
            r.passed,
            r.samples,
            escape(&seconds(r.duration)),
            escape(&r.latency.map(seconds).unwrap_or_default()),
            escape(&tokens),
            escape(&r.cost.map(|c| format!("${c:.4}")).unwrap_or_default()),
            verdict = escape(&r.verdict),
        );
    }
    body.push_str("</tbody></table>");
    document(&title, &site_links(), &body)
}

/// The pass rate of each run (its samples passed over its samples), oldest on the
/// left, as an SVG line with a dot per run; each dot's title names the run.
fn rate_chart(rows: &[CaseRow]) -> String {
    const W: f64 = 640.0;
    const H: f64 = 160.0;
    const LEFT: f64 = 36.0;
    const TOP: f64 = 8.0;
    const BOTTOM: f64 = 20.0;
    let points: Vec<(f64, f64, &CaseRow)> = rows
        .iter()
        .rev()
        .enumerate()
        .map(|(at, r)| {
            let rate = if r.samples == 0 {
                0.0
            } else {
                f64::from(r.passed) / f64::from(r.samples)
            };
            let x = if rows.len() == 1 {
                LEFT + (W - LEFT) / 2.0
            } else {
                LEFT + 8.0 + (W - LEFT - 16.0) * at as f64 / (rows.len() - 1) as f64
            };
            (x, TOP + (H - TOP - BOTTOM) * (1.0 - rate), r)
        })
        .collect();
    let mut out = format!(
        "<figure class=\"rate-chart\"><svg id=\"rate-chart\" width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"Pass rate per run, oldest first\">\
         <line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" y1=\"{}\" x2=\"{W}\" y2=\"{}\"/>\
         <text x=\"2\" y=\"{}\">100%</text><text x=\"12\" y=\"{}\">0%</text>",
        H - BOTTOM,
        H - BOTTOM,
        H - BOTTOM,
        TOP + 4.0,
        H - BOTTOM,
    );
    if points.len() > 1 {
        let path: Vec<String> = points
            .iter()
            .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"line\" points=\"{}\"/>",
            path.join(" ")
        );
    }
    for (x, y, r) in &points {
        let _ = write!(
            out,
            "<circle class=\"dot {}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\"><title>{}: {} of {} passed ({})</title></circle>",
            escape(&r.verdict),
            escape(&r.run_id),
            r.passed,
            r.samples,
            escape(&r.verdict),
        );
    }
    let _ = write!(
        out,
        "<text x=\"{LEFT}\" y=\"{}\">oldest</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">newest</text></svg></figure>",
        H - 4.0,
        W,
        H - 4.0
    );
    out
}

/// A page that says what is not there, with the site's links.
pub fn not_found_page(message: &str) -> String {
    document(
        "Not found",
        &site_links(),
        &format!("<p id=\"not-found\">{}</p>", escape(message)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_read_back_from_its_own_link() {
        for route in [
            Route::Runs,
            Route::Run("20261125T001530.042Z-3f9a2c".to_owned()),
            Route::Case("3f9a2c1d-2".to_owned()),
            Route::Case("a name with / and ?&#".to_owned()),
            Route::Compare {
                base: Some("a&b=c".to_owned()),
                head: None,
            },
            Route::Compare {
                base: None,
                head: None,
            },
        ] {
            let href = route.href();
            let (path, query) = match href.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (href.as_str(), None),
            };
            let back = Route::parse(path, query);
            assert_eq!(back, route, "{href}");
        }
    }

    #[test]
    fn other_addresses_are_not_found() {
        for path in ["/run/", "/run", "/case/a/b", "/favicon.ico", "/runs"] {
            assert!(
                matches!(Route::parse(path, None), Route::NotFound(_)),
                "{path}"
            );
        }
    }

    fn row(id: &str, command: &str) -> RunRow {
        RunRow {
            id: id.to_owned(),
            started_at: String::new(),
            command: command.to_owned(),
            commit: Some("0123456789abcdef".to_owned()),
            dirty: true,
            branch: Some("main".to_owned()),
            passed: 1,
            failed: 2,
            errored: 0,
            skipped: 0,
            duration: Some(0.5),
            finished: true,
            cost: None,
            cassettes: None,
        }
    }

    #[test]
    fn a_run_is_compared_with_the_run_of_its_command_before_it() {
        let rows = [row("c", "run"), row("b", "assess"), row("a", "run")];
        let page = runs_page(&rows, "none");
        assert!(
            page.contains("href=\"/compare?base=a&amp;head=c\""),
            "{page}"
        );
        assert!(!page.contains("base=b&amp;head=c"));
        assert!(page.contains("0123456789+ (main)"));
        assert!(
            page.contains("<option value=\"b\" selected>"),
            "second newest"
        );
    }

    #[test]
    fn text_from_the_history_is_put_in_as_text() {
        let rows = [row("<script>alert(1)</script>", "run")];
        let page = runs_page(&rows, "none");
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("&lt;script&gt;"));
    }
}
