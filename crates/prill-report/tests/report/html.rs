//! The HTML page: written whole at the end, self-contained, its data embedded as JSON
//! that no text of a run can break out of, with each failure's checks and transcript,
//! the judges' verdicts, the settings and a comparison's changes. (It is driven in a
//! real browser by `crates/prill-cli/tests/it/html.rs`.)

use prill_report::format::{Report, RunInfo, RunSettings};
use prill_report::html::{CompareRow, CompareSection, render};
use prill_report::{HtmlReport, Output, Reporter};
use serde_json::Value;

use crate::fixtures::{feed, run};

/// The JSON embedded in `page`.
fn data(page: &str) -> Value {
    let start = page
        .find("<script id=\"prill-data\" type=\"application/json\">")
        .expect("the data element");
    let rest = &page[start..];
    let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    serde_json::from_str(body).expect("the embedded data is JSON")
}

#[test]
fn the_page_appears_whole_at_the_end_with_every_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let mut reporter = HtmlReport::new(Output::file(&path).unwrap());
    let events = run(false);
    for event in &events {
        reporter.event(event).unwrap();
        assert!(!path.exists(), "the page appears only when complete");
    }
    reporter.finish().unwrap();
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("33.3% passed"), "1 of 3 that ran");
    assert!(page.contains("1 passed</span>, <span class=\"failed\">1 failed"));
    assert!(page.contains("in 1.23 s"));
    // What the gates mean: 2/3 gates two cases and passes a 70% agent 78.4% of the time.
    assert!(
        page.contains("<tr><td>2/3</td><td class=\"num\">2</td><td class=\"num\">50.0%</td><td class=\"num\">78.4%</td>"),
        "{page}"
    );
    assert!(
        page.contains("a run like this would fail 0.02 of them on average"),
        "{page}"
    );

    let data = data(&page);
    let units = data["units"].as_array().unwrap();
    let verdicts: Vec<&str> = units
        .iter()
        .map(|u| u["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["passed", "failed", "errored", "skipped"]);
    assert!(
        units[0]["failure"].is_null(),
        "a pass has nothing to expand"
    );

    // The failing sample, its failing check with expected, found and file:line:col.
    let failure = &units[1]["failure"];
    assert_eq!(failure["sample"], 0);
    let check = &failure["checks"][0];
    assert_eq!(check["name"], "keywords");
    assert_eq!(check["expected"], serde_json::json!(["hello"]));
    assert_eq!(check["at"], "cases/a.hocon:8:13");
    assert_eq!(
        failure["checks"].as_array().unwrap().len(),
        1,
        "only what failed"
    );
    // Its conversation, turn by turn.
    let turn = &failure["turns"][0];
    assert_eq!(turn["sent"], "hi");
    assert_eq!(turn["sent_sly_data"]["user"], "ringo");
    assert_eq!(turn["answer"], "bye");
    // The errored unit's judge, with why it could not judge.
    let judges = &units[2]["judges"];
    assert_eq!(judges[0]["check"], "gist");
    assert_eq!(judges[0]["status"], "errored");
    assert_eq!(judges[0]["reason"], "text: the judge failed: timed out");
    assert_eq!(
        units[2]["failure"]["turns"][0]["error"]["kind"],
        "unreachable"
    );
}

#[test]
fn the_page_is_self_contained() {
    let mut reporter = HtmlReport::new(Output::writer(std::io::sink()));
    feed(&mut reporter, &run(false));
    let page = reporter.render();
    // The run's own text (an error naming `http://127.0.0.1:9/`) is data, not a link.
    let open = page.find("<script id=\"prill-data\"").unwrap();
    let close = open + page[open..].find("</script>").unwrap();
    let outside = format!("{}{}", &page[..open], &page[close..]);
    for external in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!outside.contains(external), "{external} in the page");
    }
    assert_eq!(page.matches("<style>").count(), 1);
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "durations, latency and tokens, inline"
    );
    assert!(page.contains("Tokens per case"));
}

#[test]
fn no_text_of_a_run_can_end_the_data_or_become_markup() {
    let mut reporter = HtmlReport::new(Output::writer(std::io::sink()));
    let evil = "</script><script>alert(1)</script><!--";
    let mut events = run(false);
    for event in &mut events {
        if let prill_run::Event::UnitFinished(unit) = event {
            unit.unit.name = evil.to_owned();
            unit.samples[0].interactions[0].answer = Some(evil.to_owned());
            break;
        }
    }
    feed(&mut reporter, &events);
    let page = reporter.render();
    assert_eq!(page.matches("</script>").count(), 2, "only the page's own");
    assert!(!page.contains("<!--"));
    let data = data(&page);
    assert!(
        data["units"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["name"] == evil),
        "the text itself is kept"
    );

    let mut compare = CompareSection::new(evil, "head");
    compare
        .rows
        .push(CompareRow::new("fix", evil, "id", "http"));
    let page = render(&[], None, None, Some(&compare));
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)"));
}

#[test]
fn a_comparison_shows_its_regressions_first() {
    let mut compare = CompareSection::new("run-a", "run-b");
    let mut fix = CompareRow::new("fix", "greets", "greets-id", "http");
    fix.base = "failed".into();
    fix.head = "passed".into();
    let mut regression = CompareRow::new("regression", "looks up", "l-id", "direct");
    regression.detail = "p = 0.01".into();
    compare.rows = vec![fix, regression];
    let report = Report::new(
        &crate::fixtures::summary(false),
        &[
            crate::fixtures::passed_unit(),
            crate::fixtures::failed_unit(),
        ],
    );
    let page = render(&report.units, Some(&report.summary), None, Some(&compare));
    // The table marks each case with its changes, matched by case id and connection.
    let units = data(&page)["units"].clone();
    assert_eq!(
        units[0]["changes"],
        serde_json::json!([]),
        "greets [direct]"
    );
    assert_eq!(
        units[1]["changes"],
        serde_json::json!(["fix"]),
        "greets [http]"
    );
    assert!(page.contains("run-a to run-b: <strong>1 regression</strong>, 2 changes in all"));
    let regression = page.find("<tr class=\"regression\">").unwrap();
    let fix = page.find("<tr class=\"fix\">").unwrap();
    assert!(regression < fix, "regressions first");
    assert!(page.contains("p = 0.01"));
    assert_eq!(data(&page)["compare"]["rows"][1]["case_id"], "l-id");
}

#[test]
fn the_settings_are_shown_and_an_unfinished_run_says_so() {
    let settings = RunSettings {
        paths: vec!["cases".into()],
        filters: vec!["greets".into()],
        samples: Some(3),
        judge: Some("openai:gpt-4o-mini".into()),
        ..RunSettings::default()
    };
    let info = RunInfo::starting("run", None, settings);
    let report = Report::new(&crate::fixtures::summary(false), &[]);
    let page = render(&report.units, None, Some(&info), None);
    assert!(page.contains(&format!("<title>Prill run {}</title>", info.id)));
    assert!(page.contains("<dt>filters</dt><dd>greets</dd>"));
    assert!(page.contains("<dt>samples</dt><dd>3</dd>"));
    assert!(page.contains("<dt>judge</dt><dd>openai:gpt-4o-mini</dd>"));
    assert!(page.contains("did not finish"));
    assert!(page.contains("no case ran"));
}

#[test]
fn a_cancelled_run_still_gets_a_page_that_says_so() {
    let mut reporter = HtmlReport::new(Output::writer(std::io::sink()));
    feed(&mut reporter, &run(true));
    assert!(reporter.render().contains(" (cancelled)</p>"));

    // A stream cut short, with no run_finished: the units that finished, cancelled.
    let mut reporter = HtmlReport::new(Output::writer(std::io::sink()));
    let events = run(false);
    feed(&mut reporter, &events[..events.len() - 1]);
    let page = reporter.render();
    assert!(page.contains(" (cancelled)</p>"));
    assert_eq!(data(&page)["units"].as_array().unwrap().len(), 4);
}
