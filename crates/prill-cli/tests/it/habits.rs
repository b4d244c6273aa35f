//! Habits from other test runners, through the real binary: `--fail-fast` stops after
//! the first failure and reports the rest skipped; every run writes
//! `.prill/last-run.json` and `--rerun-failed` runs only what failed in it; `--model`
//! runs Sentinel specs on other models, side by side.

use std::path::Path;
use std::process::Output;

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::Value;

use crate::support::{self, expected, isolated, stderr, verdicts};

/// A case for the demo's `echo` agent over `direct`: it answers with the text sent, so
/// the case passes when `keyword` is in `text`.
fn echo_case(dir: &Path, file: &str, text: &str, keyword: &str) {
    let case = format!(
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: \"{text}\"\n    response:\n      text: {{keywords: \"{keyword}\"}}\n"
    );
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests").join(file), case).unwrap();
}

fn run_demo(dir: &Path, extra: &[&str]) -> (Output, Value) {
    let mut args = vec!["--demo"];
    args.extend_from_slice(extra);
    support::run_args(dir, "tests", &args, &[])
}

fn count(report: &Value, verdict: &str) -> usize {
    report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["verdict"] == verdict)
        .count()
}

#[test]
fn fail_fast_runs_one_failing_case_and_reports_the_rest_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=4 {
        echo_case(
            dir.path(),
            &format!("fails_{i}.yaml"),
            &format!("case {i}"),
            "absent",
        );
    }
    // Without it, all four run and fail.
    let (out, report) = run_demo(dir.path(), &["-j", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(count(&report, "failed"), 4, "{}", stderr(&out));
    assert_eq!(
        report["summary"].get("stopped"),
        None,
        "written only when true"
    );

    let (out, report) = run_demo(dir.path(), &["-j", "1", "-x", "--junit", "junit.xml"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "failures exit 1: {err}");
    assert_eq!(count(&report, "failed"), 1, "exactly one ran: {err}");
    assert_eq!(count(&report, "skipped"), 3, "the rest are skipped: {err}");
    assert!(
        err.contains("0 passed, 1 failed, 0 errored, 3 skipped in ")
            && err.contains("(stopped after the first failure)"),
        "the summary says it stopped: {err}"
    );
    assert_eq!(
        report["summary"]["stopped"], true,
        "the JSON report says so too"
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains(r#"tests="4""#),
        "every report is written: {junit}"
    );
    let last = std::fs::read_to_string(dir.path().join(".prill/last-run.json")).unwrap();
    assert_eq!(last.matches(r#""verdict": "skipped""#).count(), 3, "{last}");
}

#[test]
fn rerun_failed_runs_only_what_failed_last_time() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing recorded yet: nothing runs, and that passes with a note.
    echo_case(dir.path(), "passes.yaml", "all good", "good");
    let (out, report) = run_demo(dir.path(), &["--rerun-failed"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no earlier run is recorded"), "{err}");
    assert_eq!(report["units"], serde_json::json!([]), "{err}");

    echo_case(dir.path(), "fails_a.yaml", "first", "absent");
    echo_case(dir.path(), "fails_b.yaml", "second", "absent");
    let (out, report) = run_demo(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("tests/fails_a", "failed"),
            ("tests/fails_b", "failed"),
            ("tests/passes", "passed"),
        ])
    );
    let last: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".prill/last-run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(last["schema_version"], 1);
    assert_eq!(last["units"].as_array().map(Vec::len), Some(3), "{last}");
    assert_eq!(last["units"][0]["connection"], "direct", "{last}");

    let (out, report) = run_demo(dir.path(), &["--rerun-failed"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        verdicts(&report),
        expected(&[("tests/fails_a", "failed"), ("tests/fails_b", "failed")]),
        "{err}"
    );
    assert!(err.contains("rerunning 2 of the 2 unit(s)"), "{err}");

    // Combined with a filter, only the failures it matches.
    let (out, report) = run_demo(dir.path(), &["--rerun-failed", "--filter", "fails_b"]);
    assert_eq!(
        verdicts(&report),
        expected(&[("tests/fails_b", "failed")]),
        "{}",
        stderr(&out)
    );

    // Cases not among those loaded: nothing to rerun, said so.
    let (out, report) = support::run_args(
        dir.path(),
        "tests/passes.yaml",
        &["--demo", "--rerun-failed"],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("is among the cases loaded"), "{err}");
    assert_eq!(report["units"], serde_json::json!([]), "{err}");

    // Fixed: the next rerun runs it and passes; after that, nothing failed.
    echo_case(dir.path(), "fails_a.yaml", "first", "first");
    echo_case(dir.path(), "fails_b.yaml", "second", "second");
    let (out, _) = run_demo(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (out, report) = run_demo(dir.path(), &["--rerun-failed"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no unit failed or errored in the last run"),
        "{err}"
    );
    assert_eq!(report["units"], serde_json::json!([]), "{err}");
}

const SPEC: &str = r#"name: greetings
tests:
  - name: says hello
    model: gpt-4o-mini
    provider: openai
    inputs: {query: "Say hello"}
    assertions:
      - must_contain: "hello"
"#;

#[test]
fn a_model_matrix_runs_each_spec_on_each_model_side_by_side() {
    let rt = support::runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-test-matrix-0123");
    // One model greets, the other does not.
    fake.respond_with(|body| {
        let text = if body["model"] == "gpt-good" {
            "hello there"
        } else {
            "goodbye"
        };
        Some(Reply::text(text))
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SPEC).unwrap();
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-test-matrix-0123".to_owned()),
    ];
    let (out, report) = support::run_args(
        dir.path(),
        "suite.yaml",
        &["--model", "gpt-good,openai:gpt-bad"],
        &env,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("says hello @gpt-good", "passed"),
            ("says hello @openai:gpt-bad", "failed"),
        ]),
        "{err}"
    );
    let units = report["units"].as_array().unwrap();
    let targets: Vec<&str> = units
        .iter()
        .map(|u| u["unit"]["target"].as_str().unwrap())
        .collect();
    assert!(targets.contains(&"gpt-good") && targets.contains(&"gpt-bad"));
    assert_ne!(units[0]["unit"]["case_id"], units[1]["unit"]["case_id"]);
    let mut sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.json()["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    sent.sort();
    assert_eq!(sent, ["gpt-bad", "gpt-good"]);
    assert!(
        err.contains("case        gpt-good  openai:gpt-bad\nsays hello  passed    failed\n"),
        "the table sets the models side by side: {err}"
    );

    // One model: the spec runs on it alone, and no table.
    let (out, report) = support::run_args(dir.path(), "suite.yaml", &["--model", "gpt-good"], &env);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        verdicts(&report),
        expected(&[("says hello @gpt-good", "passed")])
    );
    assert!(!err.contains("case  "), "{err}");
}

#[test]
fn assess_takes_a_model_matrix_too() {
    let rt = support::runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.respond_with(|body| {
        Some(Reply::text(if body["model"] == "gpt-good" {
            "hello"
        } else {
            "goodbye"
        }))
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.yaml"), SPEC).unwrap();
    let mut cmd = isolated(
        dir.path(),
        &["assess", "suite.yaml", "--model", "gpt-good,gpt-bad"],
    );
    cmd.args(["--json", "assessment.json"])
        .env("OPENAI_BASE_URL", fake.base_url())
        .env("OPENAI_API_KEY", "sk-test-matrix-0123");
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    let text = std::fs::read_to_string(dir.path().join("assessment.json")).unwrap_or_default();
    assert!(
        text.contains("says hello @gpt-good") && text.contains("says hello @gpt-bad"),
        "one assessment per spec and model: {err}\n{text}"
    );
}

#[test]
fn a_last_run_that_cannot_be_written_is_a_warning_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    echo_case(dir.path(), "passes.yaml", "all good", "good");
    // A file where the folder would be.
    std::fs::write(dir.path().join(".prill"), "not a folder").unwrap();
    let (out, report) = run_demo(dir.path(), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: ") && err.contains("--rerun-failed will not know this run"),
        "{err}"
    );
    assert_eq!(count(&report, "passed"), 1, "{err}");
}
