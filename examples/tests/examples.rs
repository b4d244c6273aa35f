//! Every example runs and prints what it says it does (`cargo run --example NAME` from
//! the workspace's root, as the examples' docs say to run them).

use std::path::Path;
use std::process::{Command, Output};

fn run(example: &str, args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Command::new(env!("CARGO"))
        .args([
            "run",
            "--quiet",
            "--locked",
            "-p",
            "prill-examples",
            "--example",
            example,
            "--",
        ])
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .expect("cargo runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn validate_lists_the_cases_and_fails_on_an_invalid_file() {
    let out = run("validate", &["fixtures/quickstart"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).contains("3 file(s), 0 invalid, 3 case(s)"),
        "{}",
        stdout(&out)
    );
    let out = run("validate", &["fixtures/invalid/s-enums.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("s-enums.yaml:3:11"));
}

#[test]
fn in_process_runs_a_rust_agent() {
    let out = run("in_process", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("adder [direct]: passed (3 of 3 samples passed)"));
}

#[test]
fn a_custom_reporter_sees_the_events() {
    let out = run("reporter", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).contains("checks: {\"passed\": 2}"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn junit_runs_a_folder_through_the_settings_layer() {
    let out = run("junit", &["fixtures/quickstart"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = stdout(&out);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 6, "{xml}");
}

#[test]
fn the_harness_lists_one_test_per_case() {
    let out = run("harness", &["--list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout(&out).matches(": test").count(),
        3,
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_suite_runs_every_grid_combination_into_the_human_reporter() {
    let out = run("suite", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let fail = text
        .lines()
        .find(|l| l.starts_with("FAIL ["))
        .unwrap_or_else(|| panic!("no FAIL line in\n{text}"));
    assert!(
        fail.contains("] questions::primary colours (style=\"plain\", temperature=0.0) [fn]"),
        "{text}"
    );
    assert!(
        text.contains("recall: score 0.3333333333333333, needs >= 0.5"),
        "{text}"
    );
    assert!(
        text.contains("2 runs: 3 passed, 1 failed, 0 errored"),
        "{text}"
    );
}
