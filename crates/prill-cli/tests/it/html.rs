//! `prill run --html FILE`, end to end against the demo agents: the page of a real run
//! (a case that fails on its second turn and one that passes), and that page driven in
//! headless Chromium over the DevTools protocol (the `headless_chrome` crate): it
//! renders without a console error, typing in the filter narrows the table, and
//! clicking a failure shows its conversation turn by turn. A generated page of 10,000
//! cases measures the time to interactive.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{fixtures, prill, text};

/// A passing case against the demo `echo` agent.
pub(crate) const PASSING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n";

/// A scratch project: the two-turn case that fails on its second turn, and a passing
/// one; and its page, written by `prill run --demo . --html report.html`.
fn project_page() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures("examples/second_turn/home_town.hocon"),
        dir.path().join("home_town.hocon"),
    )
    .unwrap();
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    let out = prill(dir.path(), &["run", "--demo", ".", "--html", "report.html"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let page = dir.path().join("report.html");
    (dir, page)
}

/// The JSON embedded in a page.
fn data(page: &str) -> Value {
    let open = "<script id=\"prill-data\" type=\"application/json\">";
    let start = page.find(open).expect("the data element") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).expect("the embedded data is JSON")
}

#[test]
fn a_run_writes_its_page_with_the_failure_and_its_conversation() {
    let (dir, path) = project_page();
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.contains("50.0% passed"), "one of two");
    let data = data(&page);
    let units = data["units"].as_array().unwrap();
    assert_eq!(units.len(), 2);
    let failed = units.iter().find(|u| u["verdict"] == "failed").unwrap();
    assert_eq!(failed["name"], "home_town");
    let failure = &failed["failure"];
    assert_eq!(failure["checks"][0]["name"], "keywords");
    assert_eq!(failure["checks"][0]["interaction"], 1, "the second turn");
    assert_eq!(failure["checks"][0]["at"], "home_town.hocon:16:25");
    assert_eq!(failure["checks"][0]["expected"], "Manchester");
    let turns = failure["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "turn by turn");
    assert_eq!(turns[1]["sent"], "Where are they from?");
    // The run as the history keeps it: the page names the same run.
    let runs: Vec<_> = std::fs::read_dir(dir.path().join(".prill/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    let id = runs[0].file_stem().unwrap().to_string_lossy().into_owned();
    assert_eq!(data["run"]["id"], id.as_str());
    assert!(page.contains(&format!("<title>Prill run {id}</title>")));
    assert!(page.contains("<dt>paths</dt><dd>.</dd>"));
}

/// The page of the run kept in the history (`prill_report::html::render` over a
/// `StoredRun`, as `prill report --html` makes it) shows what the live page shows; and
/// the same file cut after its first finished unit, as a killed run leaves it, makes a
/// page that says the run did not finish.
#[test]
fn a_stored_run_makes_the_same_page_and_a_killed_one_says_so() {
    use prill_report::stored::StoredRun;
    let (dir, path) = project_page();
    let live = data(&std::fs::read_to_string(&path).unwrap());
    let kept: Vec<PathBuf> = std::fs::read_dir(dir.path().join(".prill/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let stored = StoredRun::read(&kept[0]).unwrap();
    let page = prill_report::html::render(
        &stored.units,
        stored.summary.as_ref(),
        stored.info.as_ref(),
        None,
    );
    assert!(page.contains("50.0% passed"));
    let from_file = data(&page);
    assert_eq!(from_file["run"], live["run"]);
    let shown = |data: &Value| -> Vec<(Value, Value, Value)> {
        data["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                (
                    u["name"].clone(),
                    u["verdict"].clone(),
                    u["failure"]["checks"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(shown(&from_file), shown(&live));

    // Killed after its first unit: the lines up to that unit_finished, and half a line.
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    let first = text.find("\"event\":\"unit_finished\"").unwrap();
    let end = first + text[first..].find('\n').unwrap() + 1;
    let torn = format!("{}{{\"schema_version\":1,\"ev", &text[..end]);
    let stored = StoredRun::parse(&torn).unwrap();
    assert!(stored.summary.is_none() && stored.units.len() == 1);
    let page = prill_report::html::render(&stored.units, None, stored.info.as_ref(), None);
    assert!(page.contains("did not finish"));
    assert_eq!(data(&page)["units"].as_array().unwrap().len(), 1);
}

#[test]
fn an_html_path_that_cannot_be_written_fails_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    let out = prill(
        dir.path(),
        &["run", "--demo", ".", "--html", "file/report.html"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("file/report.html"));
    assert!(!dir.path().join(".prill/runs").exists(), "nothing ran");
}

/// Headless Chromium (Debian's `chromium`), driven over the DevTools protocol, with
/// every console error and uncaught exception of its tab collected.
pub(crate) struct Browser {
    // Kept alive for the tab; dropped (and the process ended) with the test.
    _browser: headless_chrome::Browser,
    pub(crate) tab: Arc<headless_chrome::Tab>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Browser {
    fn launch() -> Browser {
        Browser::launch_sized(1200, 900)
    }

    /// A browser whose window is `width` × `height`.
    pub(crate) fn launch_sized(width: u32, height: u32) -> Browser {
        use headless_chrome::protocol::cdp::types::Event;
        let options = headless_chrome::LaunchOptions::default_builder()
            .path(Some(PathBuf::from("/usr/bin/chromium")))
            .sandbox(false)
            .window_size(Some((width, height)))
            .idle_browser_timeout(Duration::from_secs(120))
            .build()
            .unwrap();
        let browser = headless_chrome::Browser::new(options)
            .expect("chromium starts (apt-get install chromium)");
        let tab = browser.new_tab().unwrap();
        tab.set_default_timeout(Duration::from_secs(60));
        tab.enable_log().unwrap();
        tab.enable_runtime().unwrap();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&errors);
        tab.add_event_listener(Arc::new(move |event: &Event| {
            let error = match event {
                Event::LogEntryAdded(e) => {
                    let entry = &e.params.entry;
                    (format!("{:?}", entry.level) == "Error").then(|| entry.text.clone())
                }
                Event::RuntimeExceptionThrown(e) => {
                    Some(format!("{:?}", e.params.exception_details))
                }
                Event::RuntimeConsoleAPICalled(e) => (format!("{:?}", e.params.Type) == "Error")
                    .then(|| format!("{:?}", e.params.args)),
                _ => None,
            };
            if let Some(error) = error {
                seen.lock().unwrap().push(error);
            }
        }))
        .unwrap();
        Browser {
            _browser: browser,
            tab,
            errors,
        }
    }

    /// Opens `page` and waits until its script has drawn it.
    fn open(&self, page: &Path) {
        self.tab
            .navigate_to(&format!("file://{}", page.display()))
            .unwrap();
        self.tab.wait_until_navigated().unwrap();
        self.tab.wait_for_element("body[data-interactive]").unwrap();
    }

    /// The value of a JavaScript expression.
    pub(crate) fn eval(&self, expression: &str) -> Value {
        self.tab
            .evaluate(expression, false)
            .unwrap()
            .value
            .unwrap_or(Value::Null)
    }

    fn rows(&self) -> u64 {
        self.eval("document.querySelectorAll('#cases tbody tr.unit').length")
            .as_u64()
            .unwrap()
    }

    /// Saves a screenshot of the whole page under the target directory (the test's
    /// artifact).
    pub(crate) fn screenshot(&self, name: &str) -> PathBuf {
        use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
        let png = self
            .tab
            .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
            .unwrap();
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&path, png).unwrap();
        path
    }

    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.lock().unwrap().clone()
    }
}

/// The page of a real run in headless Chromium: it renders, the filter narrows the
/// table, a click on a failure shows its conversation, and nothing is logged as an
/// error. The screenshot is kept as `html-report.png` in the target's tmp folder.
///
/// Needs Chromium, so it is built ignored unless `PRILL_BROWSER_TESTS=1` (see
/// `build.rs`), as the assess page's test is.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn the_page_filters_and_expands_in_headless_chromium() {
    let (_dir, page) = project_page();
    let browser = Browser::launch();
    browser.open(&page);
    assert_eq!(browser.rows(), 2, "every case in the table");
    assert_eq!(
        browser.eval("document.getElementById('count').textContent"),
        "2 cases"
    );

    // Typing in the filter narrows the table.
    browser
        .tab
        .wait_for_element("#filter")
        .unwrap()
        .click()
        .unwrap();
    browser.tab.type_str("home").unwrap();
    assert_eq!(browser.rows(), 1);
    assert_eq!(
        browser.eval("document.querySelector('#cases tbody tr.unit').dataset.case"),
        browser.eval("document.querySelector('details.failure').dataset.case"),
        "the failing case is the one left"
    );
    assert_eq!(
        browser.eval("document.getElementById('count').textContent"),
        "1 of 2 cases"
    );

    expands_the_failure(&browser);

    browser.eval("document.querySelector('details.failure').scrollIntoView()");
    let shot = browser.screenshot("html-report.png");
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a real picture"
    );
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");

    // And the check hears one when there is one (events arrive on their own thread).
    browser.eval("console.error('prill probe')");
    for _ in 0..200 {
        if !browser.errors().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        browser.errors().iter().any(|e| e.contains("prill probe")),
        "{:?}",
        browser.errors()
    );
}

/// The strings of a JSON array that a page gave as its text (`JSON.stringify`).
pub(crate) fn strings(json: &Value) -> Vec<String> {
    let text = json.as_str().expect("a JSON text");
    serde_json::from_str(text).expect("an array of strings")
}

/// An interaction the demo's `slow` agent cannot answer in time: an error of its turn.
const TOO_SLOW: &str = "agent: slow\nconnections: [direct]\ninteractions:\n  - text: take your time\n    sly_data: {delay_ms: 5000}\n    timeout_in_seconds: 0.5\n    response:\n      text: {keywords: waited}\n";

/// The first screen (1400 × 900) of a run with a failure and an error is what failed
/// and why: the first failure's reason is in it, the errored case shows its error (an
/// error of its turn), the Samples column reads as a sentence, and a conversation's
/// interactions are numbered as the terminal numbers them, the failing check named.
/// The screenshot is kept as `html-first-screen.png` in the target's tmp folder.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn the_first_screen_is_what_failed_and_why_in_headless_chromium() {
    let (dir, _) = project_page();
    std::fs::write(dir.path().join("too_slow.yaml"), TOO_SLOW).unwrap();
    let out = prill(dir.path(), &["run", "--demo", ".", "--html", "first.html"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let browser = Browser::launch_sized(1400, 900);
    browser.open(&dir.path().join("first.html"));
    let in_view = browser.eval(
        "(() => { const m = document.querySelector('details.failure .reason .message');          const r = m.getBoundingClientRect();          return m.textContent.length > 0 && r.top >= 0 && r.bottom <= window.innerHeight; })()",
    );
    assert_eq!(
        in_view, true,
        "the first failure's reason is on the first screen"
    );
    let reasons = strings(&browser.eval(
        "JSON.stringify([...document.querySelectorAll('details.failure')].map((d) => \
         d.querySelector('.reason').textContent))",
    ));
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("error (timeout): ") && reasons[0].contains("`slow` within"),
        "the errored case shows its turn's error: {reasons:?}"
    );
    assert!(
        reasons[1].contains("at home_town.hocon:16:25")
            && reasons[1].contains("expected Manchester"),
        "a failure says where, and what it expected: {reasons:?}"
    );
    assert_eq!(
        browser.eval(
            "document.querySelector('#cases tbody tr.unit.failed td:nth-child(5)').textContent"
        ),
        "0 of 1 passed (needs 1 of 1)"
    );
    browser.eval(
        "document.querySelector('details.failure[data-case]:nth-of-type(2) > summary').click()",
    );
    let headings = strings(&browser.eval(
        "JSON.stringify([...document.querySelectorAll('details.failure[open] .turn h4')].map((h) => h.textContent))",
    ));
    assert_eq!(headings.len(), 2, "{headings:?}");
    assert!(headings[0].starts_with("Interaction 0 · "), "{headings:?}");
    assert!(
        headings[1].starts_with("Interaction 1 · ")
            && headings[1].ends_with("not passed: keywords"),
        "{headings:?}"
    );
    browser.eval("window.scrollTo(0, 0)");
    browser.screenshot("html-first-screen.png");
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}

/// A click on the (only) failure shows its checks and its conversation, turn by turn;
/// a click on its row in the table shows the same under the row, and another closes it.
fn expands_the_failure(browser: &Browser) {
    assert_eq!(browser.eval("document.querySelectorAll('.turn').length"), 0);
    browser
        .tab
        .wait_for_element("details.failure > summary")
        .unwrap()
        .click()
        .unwrap();
    browser
        .tab
        .wait_for_element("details.failure[open] .turn")
        .unwrap();
    assert_eq!(
        browser.eval("document.querySelectorAll('details.failure .turn').length"),
        2
    );
    let shown = browser
        .tab
        .find_element("details.failure .detail")
        .unwrap()
        .get_inner_text()
        .unwrap();
    for expected in [
        "Where are they from?",
        "Who did Yellow Submarine?",
        "home_town.hocon:16:25",
        "Manchester",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in {shown}");
    }
    let row = browser
        .tab
        .find_element("#cases tbody tr.unit.openable")
        .unwrap();
    row.click().unwrap();
    assert_eq!(
        browser.eval("document.querySelectorAll('#cases tr.inline-detail .turn').length"),
        2
    );
    row.click().unwrap();
    assert_eq!(
        browser.eval("document.querySelectorAll('#cases tr.inline-detail').length"),
        0
    );
}

/// A generated page of 10,000 cases (one in ten failing, with a two-turn conversation):
/// its time to interactive in headless Chromium, from navigation to the table drawn,
/// and the time the filter takes (the filter and the sort are checked on the way),
/// written to `html-10k.txt` in the target's tmp folder and printed (`--nocapture`).
/// `docs/running.md` states the number.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn ten_thousand_cases_stay_usable_in_headless_chromium() {
    let report = generated_report(10_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.html");
    let page = prill_report::html::render(&report.units, Some(&report.summary), None, None);
    std::fs::write(&path, &page).unwrap();

    let browser = Browser::launch();
    let start = Instant::now();
    browser.open(&path);
    let wall = start.elapsed();
    let interactive = browser.eval("Number(document.body.dataset.interactive)");
    assert_eq!(
        browser.eval("document.getElementById('count').textContent"),
        "10000 cases, 200 shown"
    );
    assert_eq!(browser.rows(), 200, "drawn a page at a time");

    let typed = browser.eval(
        "(() => { const f = document.getElementById('filter'); const t = performance.now(); \
         f.value = 'group7.hocon'; f.dispatchEvent(new Event('input')); \
         return performance.now() - t; })()",
    );
    assert_eq!(
        browser.eval("document.getElementById('count').textContent"),
        "500 of 10000 cases, 200 shown"
    );
    assert_eq!(browser.rows(), 200);

    // A click on a header sorts by it; another reverses (ties stay in run order).
    let group: Vec<usize> = (0..10_000).filter(|i| i % 20 == 7).collect();
    let fastest = group.iter().min_by_key(|&&i| (i % 97, i)).unwrap();
    let slowest = group
        .iter()
        .min_by_key(|&&i| (std::cmp::Reverse(i % 97), i))
        .unwrap();
    let first =
        "document.querySelector('#cases tbody tr.unit td:nth-child(2)').firstChild.textContent";
    let header = browser.tab.find_element("th[data-key=duration]").unwrap();
    header.click().unwrap();
    assert_eq!(browser.eval(first), format!("case-{fastest:04}").as_str());
    header.click().unwrap();
    assert_eq!(browser.eval(first), format!("case-{slowest:04}").as_str());
    let line = format!(
        "10,000 cases, {} KiB: interactive {interactive} ms after navigation \
         ({} ms by the test's clock), a filter keystroke {:.0} ms\n",
        page.len() / 1024,
        wall.as_millis(),
        typed.as_f64().unwrap_or(f64::NAN)
    );
    print!("{line}");
    std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-10k.txt"),
        line,
    )
    .unwrap();
    browser.screenshot("html-10k.png");
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}

/// A comparison's page: its changes listed first, regressions first, and each case in
/// the table marked with its changes, which the search box finds.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn a_comparison_page_marks_its_regressions_in_headless_chromium() {
    use prill_report::html::{CompareRow, CompareSection};
    let report = generated_report(20);
    let mut compare = CompareSection::new("base-run", "head-run");
    let mut latency = CompareRow::new("latency", "case-0005", &format!("{:016x}", 5), "openai");
    latency.base = "0.30 s".into();
    latency.head = "0.45 s".into();
    latency.detail = "+50%".into();
    let mut regression =
        CompareRow::new("regression", "case-0003", &format!("{:016x}", 3), "direct");
    regression.base = "passed".into();
    regression.head = "failed".into();
    compare.rows = vec![latency, regression];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compare.html");
    let page =
        prill_report::html::render(&report.units, Some(&report.summary), None, Some(&compare));
    std::fs::write(&path, page).unwrap();

    let browser = Browser::launch();
    browser.open(&path);
    assert_eq!(
        browser.eval(
            "[...document.querySelectorAll('#compare tbody tr')].map(r => r.className).join(' ')"
        ),
        "regression latency"
    );
    browser
        .tab
        .find_element("#filter")
        .unwrap()
        .click()
        .unwrap();
    browser.tab.type_str("regression").unwrap();
    assert_eq!(browser.rows(), 1);
    assert_eq!(
        browser.eval(
            "document.querySelector('#cases tbody tr.unit td:nth-child(2)').firstChild.textContent"
        ),
        "case-0003"
    );
    assert_eq!(
        browser.eval("document.querySelector('#cases tbody tr.unit td').textContent"),
        "failed regression",
        "the case's status, then its change"
    );
    browser.screenshot("html-compare.png");
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}

/// The connections of the generated cases, in turn.
const CONNECTIONS: [&str; 3] = ["direct", "http", "openai"];

/// A report of `n` units, `case-0000`, ...: one in ten failed on its second turn.
fn generated_report(n: usize) -> prill_report::format::Report {
    let units: Vec<Value> = (0..n)
        .map(|i| {
            let failed = i % 10 == 3;
            let turn = |index: u64, check: &str, status: &str| {
                json!({
                    "index": index, "sent": format!("question {index} of case {i}"),
                    "answer": format!("answer {index}"), "structure": null, "sly_data": null,
                    "duration": 0.2 + (i % 37) as f64 / 100.0, "error": null,
                    "usage": {"input": 100 + i % 50, "output": 20 + i % 30},
                    "checks": [{
                        "path": format!("interactions[{index}].response.text.keywords"),
                        "name": "keywords", "target": "text", "expected": [check],
                        "found": format!("answer {index}"), "status": status,
                        "outcome": "evaluated", "message": format!("text: expected {check}"),
                        "evaluation": {"score": if status == "passed" { 1.0 } else { 0.0 }},
                        "location": {"line": 10 + index * 4, "column": 7}
                    }]
                })
            };
            let second = if failed { "failed" } else { "passed" };
            let verdict = second;
            json!({
                "unit": {"case_id": format!("{i:016x}"), "name": format!("case-{i:04}"),
                         "file": format!("cases/group{}.hocon", i % 20),
                         "dialect": if i % 2 == 0 { "data-driven" } else { "sentinel-spec" },
                         "connection": CONNECTIONS[i % 3], "target": "music_nerd_pro"},
                "verdict": verdict, "success_ratio": "1/1",
                "tally": {"passed": u32::from(!failed), "failed": u32::from(failed), "errored": 0},
                "samples": [{"index": 0, "status": second, "duration": 0.5, "error": null,
                             "interactions": [turn(0, "Beatles", "passed"), turn(1, "Liverpool", second)]}],
                "duration": 0.5 + (i % 97) as f64 / 50.0
            })
        })
        .collect();
    let failed = n.div_ceil(10) as u64;
    serde_json::from_value(json!({
        "schema_version": 1,
        "summary": {"passed": n as u64 - failed, "failed": failed, "errored": 0, "skipped": 0,
                    "cancelled": false, "duration": 123.0},
        "units": units
    }))
    .unwrap()
}

/// The page of a run of the `prill init` suite on the demo model: its `defaults` tag a
/// test `example`, and the test with tags of its own (`refunds`) has those instead.
fn tagged_page() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let suite =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../prill-app/templates/tests/suite.yaml");
    std::fs::copy(suite, dir.path().join("suite.yaml")).unwrap();
    let out = prill(dir.path(), &["run", "--demo", ".", "--html", "report.html"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = dir.path().join("report.html");
    (dir, page)
}

#[test]
fn a_case_s_tags_are_in_the_page() {
    let (_dir, path) = tagged_page();
    let data = data(&std::fs::read_to_string(&path).unwrap());
    let mut tags: Vec<String> = data["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["tags"].to_string())
        .collect();
    tags.sort();
    assert_eq!(tags, [r#"["example"]"#, r#"["refunds"]"#]);
}

/// The tag menu narrows the table to the cases with that tag.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn the_tag_menu_narrows_the_table_in_headless_chromium() {
    let (_dir, page) = tagged_page();
    let browser = Browser::launch();
    browser.open(&page);
    assert_eq!(browser.rows(), 2);
    let pick = |tag: &str| {
        browser.eval(&format!(
            "(() => {{ const s = document.getElementById('tag'); s.value = '{tag}'; \
             s.dispatchEvent(new Event('change')); return s.value; }})()"
        ))
    };
    assert_eq!(pick("refunds"), "refunds", "the menu offers the tag");
    assert_eq!(browser.rows(), 1);
    assert_eq!(pick("example"), "example");
    assert_eq!(browser.rows(), 1);
    assert_eq!(pick(""), "", "any tag");
    assert_eq!(browser.rows(), 2);
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}

/// A case of up to ten samples of the demo's `flaky` agent, failing about a third of
/// them.
const SAMPLED: &str = r#"{ agent = flaky, connections = [direct], success_ratio = "6/10",
  interactions = [{ text = "Roll", sly_data { seed = 5, modes { x = 0.35 } }, response.text.value = ok }] }"#;

/// A sampled unit's pass rate, its intervals and its pass@k and pass^k curves are in
/// the JSON report and the page's data (a unit of one sample has none), and the page
/// shows them under its samples.
#[test]
#[cfg_attr(
    not(prill_browser_tests),
    ignore = "needs headless Chromium: set PRILL_BROWSER_TESTS=1 with Debian's chromium installed (.ci/run does)"
)]
fn a_sampled_unit_shows_its_rates_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sampled.hocon"), SAMPLED).unwrap();
    let out = prill(
        dir.path(),
        &["run", "--demo", ".", "--json", "r.json", "--html", "r.html"],
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap())
            .unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
    let rates = &report["units"][0]["rates"];
    let n = report["units"][0]["samples"].as_array().unwrap().len();
    assert_eq!(rates["pass_k"].as_array().unwrap().len(), n, "{report}");
    assert_eq!(rates["pass_k"][0]["pass_at_k"], rates["rate"]);
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert_eq!(&data(&page)["units"][0]["rates"], rates);
    let browser = Browser::launch_sized(1200, 900);
    browser.open(&dir.path().join("r.html"));
    let shown = browser.eval("document.querySelector('#cases tbody tr.unit .rates').textContent");
    let shown = shown.as_str().unwrap();
    let rate = rates["rate"].as_f64().unwrap();
    assert!(
        shown.starts_with(&format!("{:.1}% (95%: ", 100.0 * rate)) && shown.contains(" · pass^3 "),
        "{shown}"
    );
    assert_eq!(browser.errors(), Vec::<String>::new(), "no console error");
}
