//! `assay assess`: planted failure modes are recovered with their shares, the same seed
//! gives the same report, errors are modes of their own, and the HTML page renders.

use std::path::Path;
use std::process::{Command, Output};

fn assay(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the assay binary runs")
}

const FLAKY: &str = "agent: flaky\nconnections: direct\nsuccess_ratio: \"3/5\"\ninteractions:\n  - text: roll\n    sly_data: {seed: 11, modes: {A: 0.2, B: 0.1}}\n    response:\n      text: {value: ok}\n";

fn assess_json(dir: &Path, file: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["assess", "--demo", file, "--json", "assessment.json"];
    args.extend_from_slice(extra);
    let out = assay(dir, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("assessment.json")).unwrap()).unwrap()
}

#[test]
fn planted_modes_are_recovered_inside_their_intervals_and_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let report = assess_json(dir.path(), "flaky.yaml", &["--samples", "400"]);
    let case = &report["cases"][0];
    assert_eq!(case["samples"], 400);
    assert_eq!(
        case["success_ratio"], "3/5",
        "the case's own ratio, not the sample count"
    );
    let (low, high) = (
        case["ci_low"].as_f64().unwrap(),
        case["ci_high"].as_f64().unwrap(),
    );
    assert!(
        low <= 0.7 && 0.7 <= high,
        "pass rate interval {low}..{high} misses 0.7"
    );
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2, "{modes:#?}");
    for (mode, planted, found) in [
        (&modes[0], 0.2, "found failure a"),
        (&modes[1], 0.1, "found failure b"),
    ] {
        assert!(
            mode["signature"].as_str().unwrap().ends_with(found),
            "{mode}"
        );
        let (low, high) = (
            mode["ci_low"].as_f64().unwrap(),
            mode["ci_high"].as_f64().unwrap(),
        );
        assert!(
            low <= planted && planted <= high,
            "{found}: {low}..{high} misses {planted}"
        );
        for field in ["signature", "label", "count", "share", "example"] {
            assert!(mode.get(field).is_some(), "mode field {field}");
        }
    }
    for field in [
        "id",
        "file",
        "samples",
        "passed",
        "failed",
        "errored",
        "pass_rate",
        "ci_low",
        "ci_high",
        "success_ratio",
        "p_meets_ratio",
        "modes",
    ] {
        assert!(case.get(field).is_some(), "case field {field}");
    }
    // The same seed gives the same report.
    let again = assess_json(dir.path(), "flaky.yaml", &["--samples", "400"]);
    assert_eq!(report, again);
}

#[test]
fn an_unsound_ratio_gets_a_suggestion_and_errors_are_their_own_mode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("flaky.yaml"),
        FLAKY.replace("\"3/5\"", "\"5/5\""),
    )
    .unwrap();
    let report = assess_json(dir.path(), "flaky.yaml", &["--samples", "200"]);
    let suggestion = report["cases"][0]["suggestion"]
        .as_str()
        .expect("5/5 at ~70% is unsound");
    assert!(
        suggestion.starts_with("meets 5/5 with p = "),
        "{suggestion}"
    );

    std::fs::write(
        dir.path().join("slow.yaml"),
        "agent: slow\nconnections: direct\nsuccess_ratio: \"1/3\"\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 5000}\n    timeout_in_seconds: 0.2\n",
    )
    .unwrap();
    let report = assess_json(dir.path(), "slow.yaml", &[]);
    let case = &report["cases"][0];
    assert_eq!(
        (case["samples"].as_u64(), case["errored"].as_u64()),
        (Some(3), Some(3))
    );
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 1);
    assert!(
        modes[0]["signature"]
            .as_str()
            .unwrap()
            .contains("error:timeout"),
        "{modes:#?}"
    );
}

/// Renders the HTML page in headless Chromium (Debian's `chromium`) and checks the DOM
/// it built. `.ci/run` installs Chromium and sets `ASSAY_BROWSER_TESTS=1`; without that
/// variable the test says it did not run.
#[test]
fn the_html_page_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let out = assay(
        dir.path(),
        &[
            "assess",
            "--demo",
            "flaky.yaml",
            "--samples",
            "100",
            "--html",
            "assessment.html",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path().join("assessment.html")).unwrap();
    assert!(page.contains("<svg class=\"modes\""), "a bar chart");
    assert!(
        !page.contains("<script") && !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );
    if std::env::var("ASSAY_BROWSER_TESTS").as_deref() != Ok("1") {
        eprintln!(
            "browser check not run: set ASSAY_BROWSER_TESTS=1 with Debian's chromium installed"
        );
        return;
    }
    let profile = tempfile::tempdir().unwrap();
    let dom = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            &format!("file://{}", dir.path().join("assessment.html").display()),
        ])
        .output()
        .expect("chromium runs (apt-get install chromium)");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<h1>Assay assessment</h1>"), "{dom}");
    assert_eq!(
        dom.matches("class=\"bar\"").count(),
        2,
        "one bar per mode: {dom}"
    );
    assert!(
        dom.contains("found failure a") && dom.contains("found failure b"),
        "{dom}"
    );
}

#[test]
fn classify_llm_names_and_merges_modes_with_the_judge_s_model() {
    use assay_testkit::providers::Reply;
    use assay_testkit::providers::openai::FakeOpenAi;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.expect_key("sk-fake");
    fake.script(Reply::structured(
        serde_json::json!({"names": ["says failure", "says failure"]}),
    ));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.yaml"), FLAKY).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_assay"));
    cmd.args([
        "assess",
        "--demo",
        "flaky.yaml",
        "--samples",
        "100",
        "--classify",
        "llm",
        "--judge",
        "openai:gpt-4o-mini",
        "--json",
        "assessment.json",
    ])
    .current_dir(dir.path())
    .env("NO_COLOR", "1")
    .env("OPENAI_BASE_URL", fake.base_url())
    .env("OPENAI_API_KEY", "sk-fake");
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("assessment.json")).unwrap())
            .unwrap();
    let case = &report["cases"][0];
    let modes = case["modes"].as_array().unwrap();
    assert_eq!(
        modes.len(),
        1,
        "the two planted modes, named alike, are merged: {modes:#?}"
    );
    assert_eq!(modes[0]["label"], "says failure");
    let signature = modes[0]["signature"].as_str().unwrap();
    assert!(
        signature.contains("found failure a") && signature.contains("found failure b"),
        "{signature}"
    );
    assert_eq!(modes[0]["count"], case["failed"]);
    // The model saw both modes, with their signatures.
    let request: serde_json::Value = serde_json::from_slice(&fake.requests()[0].body).unwrap();
    let asked = request["messages"][1]["content"].as_str().unwrap();
    assert!(
        asked.contains("found failure a") && asked.contains("found failure b"),
        "{asked}"
    );
}
