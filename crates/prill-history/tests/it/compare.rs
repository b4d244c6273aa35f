//! `prill compare`'s library on hand-built units (read through the report format, as
//! a stored run is): regressions and fixes, new and removed cases, sampled pass rates
//! judged by Fisher's exact test, metrics against thresholds, judge reasons, and the
//! three renderings.

use prill_history::compare::{Metric, Side, Thresholds, compare, render};
use prill_report::html::CompareSection;
use prill_report::stored::StoredRun;
use serde_json::{Value, json};

/// One sample: `status`, one interaction of `seconds` with `tokens`, `cost` and a gist
/// check's `reason` when given.
fn sample(status: &str, seconds: f64, tokens: Option<u64>, reason: Option<&str>) -> Value {
    let mut interaction = json!({
        "index": 0, "sent": "hi", "answer": "hi", "structure": null, "sly_data": null,
        "duration": seconds, "checks": [], "error": null,
    });
    if let Some(tokens) = tokens {
        interaction["usage"] = json!({"input": tokens / 2, "output": tokens - tokens / 2});
        interaction["cost"] = json!(tokens as f64 * 1e-6);
        interaction["time_to_first_token"] = json!(seconds / 2.0);
    }
    if let Some(reason) = reason {
        interaction["checks"] = json!([{
            "path": "interactions[0].response.text.gist", "name": "gist", "target": "text",
            "expected": "a greeting", "status": status, "outcome": "evaluated",
            "evaluation": {"score": if status == "passed" { 1.0 } else { 0.0 },
                           "metadata": {"reason": reason}},
            "message": "text: ...",
        }]);
    }
    json!({"index": 0, "status": status, "duration": seconds, "interactions": [interaction], "error": null})
}

/// A finished unit of the case `name` over `connection`.
fn unit(name: &str, connection: &str, verdict: &str, samples: Vec<Value>) -> Value {
    let count = |s: &str| samples.iter().filter(|x| x["status"] == s).count();
    json!({
        "schema_version": 1, "event": "unit_finished",
        "unit": {"case_id": format!("id-{name}"), "name": name, "file": "cases.yaml",
                 "dialect": "sentinel-spec", "connection": connection, "target": "agent"},
        "verdict": verdict, "success_ratio": "1/1",
        "tally": {"passed": count("passed"), "failed": count("failed"), "errored": count("errored")},
        "samples": samples, "duration": 0.5,
    })
}

/// `n` samples of which `passed` passed.
fn sampled(name: &str, verdict: &str, passed: usize, n: usize) -> Value {
    let samples = (0..n)
        .map(|i| {
            sample(
                if i < passed { "passed" } else { "failed" },
                0.1,
                None,
                None,
            )
        })
        .collect();
    unit(name, "direct", verdict, samples)
}

fn side(label: &str, units: &[Value]) -> Side {
    let text: String = units.iter().map(|u| format!("{u}\n")).collect();
    Side::new(label, StoredRun::parse(&text).unwrap())
}

fn one(verdict: &str) -> Vec<Value> {
    vec![sample(verdict, 0.1, None, None)]
}

#[test]
fn verdicts_become_regressions_fixes_new_and_removed() {
    let base = side(
        "base",
        &[
            unit("greets", "direct", "passed", one("passed")),
            unit("greets", "http", "passed", one("passed")),
            unit("counts", "direct", "failed", one("failed")),
            unit("steady", "direct", "passed", one("passed")),
            unit("gone", "direct", "passed", one("passed")),
        ],
    );
    let head = side(
        "head",
        &[
            unit("greets", "direct", "failed", one("failed")),
            unit("greets", "http", "errored", one("errored")),
            unit("counts", "direct", "passed", one("passed")),
            unit("steady", "direct", "passed", one("passed")),
            unit("arrives", "direct", "passed", one("passed")),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    let names = |list: &[prill_history::compare::Change]| -> Vec<String> {
        list.iter()
            .map(|c| format!("{} [{}]", c.case.name, c.case.connection))
            .collect()
    };
    assert_eq!(names(&c.regressions), ["greets [direct]", "greets [http]"]);
    assert_eq!(names(&c.fixes), ["counts [direct]"]);
    assert_eq!(c.new.len(), 1);
    assert_eq!(c.new[0].case.name, "arrives");
    assert_eq!(c.removed[0].case.name, "gone");
    assert_eq!(c.unchanged, 1);
    assert!(c.has_regression());
    assert_eq!(
        render::headline(&c),
        "2 regressions, 1 fix, 1 new case, 1 removed case; 1 unchanged"
    );

    // The same run against itself: nothing changed.
    let same = compare(&base, &base, &Thresholds::default());
    assert!(!same.has_regression());
    assert_eq!(render::headline(&same), "no change (5 cases as before)");
}

/// An edited case (another id, the same file, name and connection) is one case whose
/// inputs changed, not a removed and a new one, and never a regression; a case of
/// another file with the same name is not it.
#[test]
fn an_edited_case_is_paired_as_inputs_changed() {
    let with = |mut u: Value, id: &str, file: &str| {
        u["unit"]["case_id"] = json!(id);
        u["unit"]["file"] = json!(file);
        u
    };
    let base = side(
        "base",
        &[
            with(
                unit("greets", "direct", "passed", one("passed")),
                "aaa",
                "./t/x.yaml",
            ),
            with(
                unit("greets", "http", "passed", one("passed")),
                "aaa",
                "./t/x.yaml",
            ),
            with(
                unit("other", "direct", "passed", one("passed")),
                "ccc",
                "t/y.yaml",
            ),
        ],
    );
    let head = side(
        "head",
        &[
            with(
                unit("greets", "direct", "failed", one("failed")),
                "bbb",
                "t/x.yaml",
            ),
            with(
                unit("greets", "http", "passed", one("passed")),
                "bbb",
                "t/x.yaml",
            ),
            with(
                unit("other", "direct", "passed", one("passed")),
                "ddd",
                "t/z.yaml",
            ),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    assert!(c.regressions.is_empty(), "{:?}", c.regressions);
    let edited: Vec<(&str, &str, &str)> = c
        .inputs_changed
        .iter()
        .map(|e| {
            (
                e.case.connection.as_str(),
                e.base_case_id.as_str(),
                e.case.case_id.as_str(),
            )
        })
        .collect();
    assert_eq!(edited, [("direct", "aaa", "bbb"), ("http", "aaa", "bbb")]);
    assert_eq!(c.removed.len(), 1, "another file's case is not paired");
    assert_eq!(c.new.len(), 1);
    let text = render::human(&c);
    assert!(text.contains("2 cases with inputs changed"), "{text}");
    assert!(
        text.contains("greets [direct]  passed 1/1 → failed 0/1  (id aaa → bbb, t/x.yaml)"),
        "{text}"
    );
    assert!(render::markdown(&c).contains("| Inputs changed |"));
    let section = CompareSection::from(&c);
    assert_eq!(
        section
            .rows
            .iter()
            .filter(|r| r.kind == "inputs_changed")
            .count(),
        2
    );
}

#[test]
fn a_sampled_case_regresses_only_beyond_chance() {
    let base = side(
        "base",
        &[
            sampled("flaky", "passed", 8, 10),
            sampled("broken", "passed", 10, 10),
            sampled("mended", "failed", 2, 10),
        ],
    );
    let head = side(
        "head",
        &[
            // 8/10 to 7/10 fails its 8/10 ratio, but is well within chance.
            sampled("flaky", "failed", 7, 10),
            // 10/10 to 2/10 is not chance.
            sampled("broken", "failed", 2, 10),
            sampled("mended", "passed", 10, 10),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    assert_eq!(c.regressions.len(), 1, "{c:#?}");
    assert_eq!(c.regressions[0].case.name, "broken");
    let p = c.regressions[0].p_value.unwrap();
    assert!(p < 0.001, "{p}");
    assert_eq!(c.fixes.len(), 1);
    assert_eq!(c.fixes[0].case.name, "mended");
    assert_eq!(c.within_chance.len(), 1);
    assert_eq!(c.within_chance[0].case.name, "flaky");
    // Fisher's mid-p: the tables as likely as the one seen count half.
    assert!((c.within_chance[0].p_value.unwrap() - 0.6517).abs() < 1e-4);
    let text = render::human(&c);
    assert!(
        text.contains("broken [direct]  passed 10/10 → failed 2/10  p = 0.0004"),
        "{text}"
    );
    assert!(
        text.contains(
            "Within chance (not detectable with these samples)\n  flaky [direct]  passed 8/10 → failed 7/10  p = 0.6517; could not have seen a drop of less than 60 points"
        ),
        "{text}"
    );

    // A stricter alpha calls the 10/10 → 2/10 drop chance too.
    let strict = Thresholds {
        alpha: 0.0001,
        ..Thresholds::default()
    };
    let c = compare(&base, &head, &strict);
    assert!(!c.has_regression(), "{c:#?}");
    assert_eq!(c.within_chance.len(), 3);
}

#[test]
fn many_sampled_cases_are_corrected_for_holm_makes_regressions_and_benjamini_hochberg_probable_changes()
 {
    // Mid-p values: 19/20 → 10/20 0.0017; 18/20 → 12/20 0.0366 (twice); 20/20 → 19/20 0.5.
    let base = side(
        "base",
        &[
            sampled("a", "passed", 19, 20),
            sampled("b", "passed", 18, 20),
            sampled("c", "passed", 18, 20),
            sampled("d", "passed", 20, 20),
        ],
    );
    let head = side(
        "head",
        &[
            sampled("a", "failed", 10, 20),
            sampled("b", "failed", 12, 20),
            sampled("c", "failed", 12, 20),
            sampled("d", "passed", 19, 20),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    let names = |list: &[prill_history::compare::Change]| {
        list.iter()
            .map(|ch| ch.case.name.clone())
            .collect::<Vec<_>>()
    };
    // Holm at 0.05 over 4: 0.0017 <= 0.0125, then 0.0366 > 0.0167 stops it.
    assert_eq!(names(&c.regressions), ["a"]);
    // Benjamini-Hochberg: 0.0366 <= 0.05 * 3/4 makes b and c discoveries.
    assert_eq!(names(&c.probably_changed), ["b", "c"]);
    assert_eq!(names(&c.within_chance), ["d"]);
    // Each sampled change says what its samples could have seen.
    let drop = c.within_chance[0].detectable_drop.unwrap();
    assert!(drop > 0.2 && drop < 0.6, "{drop}");
    let text = render::human(&c);
    assert!(text.contains("2 pass rates probably changed"), "{text}");
    assert!(
        text.contains("Probably changed (Benjamini–Hochberg at 0.05"),
        "{text}"
    );
    assert!(render::markdown(&c).contains("| Could have seen |"));
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["probably_changed"].as_array().unwrap().len(), 2);
    assert!(
        json["within_chance"][0]["detectable_drop"]
            .as_f64()
            .is_some()
    );
}

#[test]
fn metrics_beyond_their_thresholds_are_reported() {
    let base = side(
        "base",
        &[
            unit(
                "slow",
                "openai",
                "passed",
                vec![sample("passed", 1.0, Some(100), None)],
            ),
            unit(
                "steady",
                "openai",
                "passed",
                vec![sample("passed", 1.0, Some(100), None)],
            ),
            unit(
                "tiny",
                "direct",
                "passed",
                vec![sample("passed", 0.001, None, None)],
            ),
        ],
    );
    let head = side(
        "head",
        &[
            // Latency +50%, tokens +20%, cost +20%.
            unit(
                "slow",
                "openai",
                "passed",
                vec![sample("passed", 1.5, Some(120), None)],
            ),
            // +10% latency, +10% tokens: within the thresholds.
            unit(
                "steady",
                "openai",
                "passed",
                vec![sample("passed", 1.1, Some(110), None)],
            ),
            // Five times slower, but by 4 ms: noise.
            unit(
                "tiny",
                "direct",
                "passed",
                vec![sample("passed", 0.005, None, None)],
            ),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    let found: Vec<(&str, Metric, i64)> = c
        .metrics
        .iter()
        .map(|m| (m.case.name.as_str(), m.metric, m.percent.round() as i64))
        .collect();
    assert_eq!(
        found,
        [
            ("slow", Metric::Latency, 50),
            ("slow", Metric::TimeToFirstToken, 50),
            ("slow", Metric::Tokens, 20),
            ("slow", Metric::Cost, 20),
        ]
    );
    assert!(c.metrics.iter().all(|m| m.worse));
    assert!(!c.has_regression(), "slower is not a regression");
    let text = render::human(&c);
    assert!(
        text.contains("slow [openai]  latency 1.00 s → 1.50 s (+50%)"),
        "{text}"
    );

    // Looser thresholds report nothing.
    let loose = Thresholds {
        latency_percent: 60.0,
        tokens_percent: 25.0,
        cost_percent: 25.0,
        alpha: 0.05,
    };
    assert!(compare(&base, &head, &loose).metrics.is_empty());
}

#[test]
fn changed_judge_reasons_of_gist_checks_are_listed() {
    let with = |status: &str, reason: &str| {
        unit(
            "judged",
            "direct",
            status,
            vec![sample(status, 0.1, None, Some(reason))],
        )
    };
    let base = side("base", &[with("passed", "it greets the user")]);
    let head = side(
        "head",
        &[with("failed", "it <b>ignores</b> the user | rudely")],
    );
    let c = compare(&base, &head, &Thresholds::default());
    assert_eq!(c.judge.len(), 1);
    let j = &c.judge[0];
    assert_eq!(j.check, "interactions[0].response.text.gist");
    assert_eq!(j.base_reason, "it greets the user");
    assert_eq!(j.head_reason, "it <b>ignores</b> the user | rudely");
    // The same reason is no change.
    assert!(
        compare(&base, &base, &Thresholds::default())
            .judge
            .is_empty()
    );

    // Markdown: a headline, regressions first, the rest folded; HTML escaped.
    let md = render::markdown(&c);
    assert!(md.starts_with("### Prill compare: 1 regression\n"), "{md}");
    let regressions = md.find("| Regression |").unwrap();
    let details = md.find("<details><summary>").unwrap();
    assert!(regressions < details, "{md}");
    assert!(
        md.contains(r"it \<b\>ignores\</b\> the user \| rudely"),
        "{md}"
    );
    assert!(!md.contains("<b>"), "{md}");
    assert!(md.trim_end().ends_with("</details>"), "{md}");
}

#[test]
fn the_comparison_is_json_and_an_html_section() {
    let base = side("base", &[unit("greets", "direct", "passed", one("passed"))]);
    let head = side(
        "head",
        &[
            unit("greets", "direct", "failed", one("failed")),
            unit("arrives", "direct", "passed", one("passed")),
        ],
    );
    let c = compare(&base, &head, &Thresholds::default());
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["regressions"][0]["case"]["case_id"], "id-greets");
    assert_eq!(json["regressions"][0]["base"]["verdict"], "passed");
    assert_eq!(json["regressions"][0]["head"]["verdict"], "failed");
    assert_eq!(json["new"][0]["case"]["name"], "arrives");
    assert_eq!(json["thresholds"]["latency_percent"], 20.0);
    assert_eq!(json["base"]["label"], "base");

    let section = CompareSection::from(&c);
    assert_eq!(
        (section.base.as_str(), section.head.as_str()),
        ("base", "head")
    );
    let kinds: Vec<&str> = section.rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["regression", "new"]);
    assert_eq!(section.rows[0].base, "passed 1/1");
    assert_eq!(section.rows[0].head, "failed 0/1");
    assert_eq!(section.rows[0].case_id, "id-greets");
}

fn row(id: &str, commit: Option<&str>) -> prill_history::RunRow {
    prill_history::RunRow {
        id: id.to_owned(),
        started_at: String::new(),
        commit: commit.map(str::to_owned),
        dirty: false,
        branch: None,
        passed: 0,
        failed: 0,
        errored: 0,
        skipped: 0,
        duration: None,
        finished: true,
        command: "run".to_owned(),
        cost: None,
        cassettes: None,
    }
}

#[test]
fn runs_are_picked_by_id_or_a_unique_start_of_one() {
    use prill_history::compare::{CompareError, newest_on, pick};
    // Newest first, as the index lists them.
    let rows = [
        row("20261125T0300-c", Some("bbb")),
        row("20261125T0200-b", Some("aaa")),
        row("20261125T0100-a", Some("aaa")),
    ];
    assert_eq!(
        pick(&rows, "20261125T0200-b").unwrap().id,
        "20261125T0200-b"
    );
    assert_eq!(pick(&rows, "20261125T01").unwrap().id, "20261125T0100-a");
    let e = pick(&rows, "20261125").unwrap_err();
    assert!(matches!(e, CompareError::Ambiguous { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("20261125T0300-c, 20261125T0200-b, 20261125T0100-a")
    );
    let e = pick(&rows, "2027").unwrap_err();
    assert!(
        e.to_string().contains("`prill runs` lists the kept runs"),
        "{e}"
    );

    // The newest run of the first commit any run is of, never the head itself.
    assert_eq!(
        newest_on(&rows, &["aaa"], None).unwrap().id,
        "20261125T0200-b"
    );
    assert_eq!(
        newest_on(&rows, &["aaa"], Some("20261125T0200-b"))
            .unwrap()
            .id,
        "20261125T0100-a"
    );
    assert_eq!(
        newest_on(&rows, &["zzz", "bbb"], None).unwrap().id,
        "20261125T0300-c"
    );
    assert!(newest_on(&rows, &["zzz"], None).is_none());
}
