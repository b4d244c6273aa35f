//! `prill report --from` and `prill report merge` against real stored runs of the demo
//! agents: a run's reports written again from its history file are the ones it wrote;
//! a `kill -9`ed run's finished units are recovered as a cancelled run; the shards of a
//! suite (`--shard i/n --jsonl`) merge into the run they split, and shards that do not
//! make one suite are refused with the file or the part named.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{command, fixtures, json, jsonl, prill, text, verdicts};

/// A project with the quickstart's cases (6 passing units) and one that fails.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["echo.yaml", "math.hocon", "music_trivia.hocon"] {
        std::fs::copy(fixtures("quickstart").join(file), dir.path().join(file)).unwrap();
    }
    std::fs::copy(
        fixtures("examples/failing/math_off_by_one.yaml"),
        dir.path().join("math_off_by_one.yaml"),
    )
    .unwrap();
    dir
}

/// The one run kept in `dir`'s history.
fn kept_run(dir: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(dir.join(".prill/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

#[test]
fn a_runs_reports_come_back_the_same_from_its_history_file() {
    let dir = project();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            ".",
            "--json",
            "run.json",
            "--jsonl",
            "run.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // The `--jsonl` stream starts with the history file's own `run` line.
    let kept = kept_run(dir.path());
    let streamed = jsonl(&dir.path().join("run.jsonl"));
    assert_eq!(streamed[0], jsonl(&kept)[0]);
    assert_eq!(streamed[0]["event"], "run");
    assert_eq!(streamed[0]["settings"]["suite"]["units"], 7);

    for from in [kept.clone(), dir.path().join("run.jsonl")] {
        let out = prill(
            dir.path(),
            &[
                "report",
                "--from",
                from.to_str().unwrap(),
                "--json",
                "again.json",
            ],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("6 passed, 1 failed, 0 errored, 0 skipped"),
            "{stderr}"
        );
        assert!(
            stderr.contains("FAIL"),
            "the failure is shown as the run showed it: {stderr}"
        );
        assert_eq!(
            json(&dir.path().join("again.json")),
            json(&dir.path().join("run.json")),
            "the JSON report, rebuilt from {}",
            from.display()
        );
    }
    // A JSON report is a stored run too.
    let out = prill(
        dir.path(),
        &["report", "--from", "run.json", "--junit", "junit.xml"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 7, "{junit}");
    assert_eq!(junit.matches("<failure").count(), 1, "{junit}");
}

#[test]
fn a_killed_runs_finished_units_are_recovered_as_a_cancelled_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("echo.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("slow.yaml"),
        "agent: slow\nconnections: [direct]\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 60000}\n    response: {text: {not_keywords: error}}\n",
    )
    .unwrap();
    let mut child = command(dir.path(), &["run", "--demo", ".", "--jsonl", "run.jsonl"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let jsonl = dir.path().join("run.jsonl");
    let mut finished = false;
    for _ in 0..800 {
        let text = std::fs::read_to_string(&jsonl).unwrap_or_default();
        if text.contains("\"unit_finished\"") {
            finished = true;
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(25));
    }
    // SIGKILL: no handler runs, nothing more is written.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(finished, "the echo unit never finished");

    for from in [kept_run(dir.path()), jsonl] {
        let out = prill(
            dir.path(),
            &[
                "report",
                "--from",
                from.to_str().unwrap(),
                "--json",
                "recovered.json",
                "--junit",
                "junit.xml",
            ],
        );
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(3),
            "a run that did not finish never passes: {stderr}"
        );
        assert!(
            stderr.contains("did not finish: 1 of 2 units finished"),
            "{stderr}"
        );
        assert!(
            stderr.contains("1 passed, 0 failed, 0 errored, 1 skipped"),
            "{stderr}"
        );
        assert!(stderr.contains("(cancelled)"), "{stderr}");
        let report = json(&dir.path().join("recovered.json"));
        assert_eq!(report["summary"]["cancelled"], true);
        assert_eq!(report["units"][0]["unit"]["target"], "echo");
        assert_eq!(report["units"][0]["verdict"], "passed");
        let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
        assert!(junit.contains("<testcase "), "{junit}");
    }
}

/// `prill run --demo . --shard part --jsonl file` in `dir`, with `extra` arguments.
fn shard(dir: &Path, part: &str, file: &str, extra: &[&str]) {
    let mut args = vec!["run", "--demo", ".", "--shard", part, "--jsonl", file];
    args.extend(extra);
    let out = prill(dir, &args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_shards_of_a_suite_merge_into_the_run_they_split() {
    let dir = project();
    let out = prill(dir.path(), &["run", "--demo", ".", "--json", "whole.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    shard(dir.path(), "1/3", "s1.jsonl", &[]);
    shard(dir.path(), "2/3", "s2.jsonl", &[]);
    shard(dir.path(), "3/3", "s3.jsonl", &[]);
    let suite = jsonl(&dir.path().join("s1.jsonl"))[0]["settings"]["suite"].clone();
    assert_eq!(suite["units"], 7, "{suite}");
    for s in ["s2.jsonl", "s3.jsonl"] {
        assert_eq!(jsonl(&dir.path().join(s))[0]["settings"]["suite"], suite);
    }

    let out = prill(
        dir.path(),
        &[
            "report",
            "merge",
            "s3.jsonl",
            "s1.jsonl",
            "s2.jsonl",
            "--json",
            "merged.json",
            "--junit",
            "junit.xml",
            "--jsonl",
            "merged.jsonl",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "as the whole run: {stderr}");
    assert!(
        stderr.contains("6 passed, 1 failed, 0 errored, 0 skipped"),
        "{stderr}"
    );
    let merged = json(&dir.path().join("merged.json"));
    assert_eq!(
        verdicts(&merged),
        verdicts(&json(&dir.path().join("whole.json")))
    );
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 7, "{junit}");
    let merged_lines = jsonl(&dir.path().join("merged.jsonl"));
    assert_eq!(merged_lines[0]["command"], "merge");
    assert_eq!(merged_lines[0]["settings"]["suite"], suite);
    assert_eq!(merged_lines[1]["units"], 7, "run_started: the whole suite");
    // The merged run is a stored run like any other.
    let out = prill(dir.path(), &["report", "--from", "merged.jsonl"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // A part missing: named, with what to do.
    let out = prill(dir.path(), &["report", "merge", "s1.jsonl", "s3.jsonl"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the shards cover 2 of the 3 parts of the suite: 2/3 missing"),
        "{stderr}"
    );
    // One shard twice.
    let out = prill(
        dir.path(),
        &[
            "report", "merge", "s1.jsonl", "s2.jsonl", "s1.jsonl", "s3.jsonl",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("s1.jsonl is the same run as s1.jsonl"),
        "{stderr}"
    );
    // A shard of another suite (another filter): the odd file out is named.
    shard(dir.path(), "2/3", "other.jsonl", &["--filter", "math"]);
    let out = prill(
        dir.path(),
        &["report", "merge", "s1.jsonl", "other.jsonl", "s3.jsonl"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("other.jsonl is a run of another suite"),
        "{stderr}"
    );
}

/// Runs the three shards of `dir`'s suite and merges them with `--keep`, writing
/// `html`; returns the merge's stderr.
fn sharded_run_kept(dir: &Path, html: &str) -> String {
    for part in ["1/3", "2/3", "3/3"] {
        let file = format!("s{}.jsonl", &part[..1]);
        shard(dir, part, &file, &[]);
    }
    let out = prill(
        dir,
        &[
            "report", "merge", "s1.jsonl", "s2.jsonl", "s3.jsonl", "--keep", "--html", html,
        ],
    );
    let stderr = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    // In CI the shards run on other machines: only the merged run is in this history.
    for entry in std::fs::read_dir(dir.join(".prill/runs")).unwrap() {
        let path = entry.unwrap().path();
        if jsonl(&path)[0]["command"] == "run" {
            std::fs::remove_file(path).unwrap();
        }
    }
    stderr
}

#[test]
fn merged_runs_are_kept_and_compared_as_the_ci_recipe_does() {
    let dir = project();
    let stderr = sharded_run_kept(dir.path(), "first.html");
    assert!(stderr.contains("kept as "), "{stderr}");
    let page = std::fs::read_to_string(dir.path().join("first.html")).unwrap();
    assert!(page.contains("math_off_by_one"), "the page has the units");
    // An edited expectation keeps its case id: the second merged run regresses on it.
    let echo = dir.path().join("echo.yaml");
    let edited = std::fs::read_to_string(&echo).unwrap().replacen(
        "value: \"Hello from the quickstart\"",
        "value: \"Hello from somewhere else\"",
        1,
    );
    std::fs::write(&echo, edited).unwrap();
    sharded_run_kept(dir.path(), "second.html");

    let out = prill(dir.path(), &["runs", "--format", "json"]);
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let merges = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["command"] == "merge")
        .count();
    assert_eq!(merges, 2, "{runs}");

    // The two newest merged runs (the shards' own runs are of another command).
    let out = prill(
        dir.path(),
        &[
            "compare",
            "--fail-on-regression",
            "--format",
            "json",
            "--html",
            "compare.html",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a regression: {stderr}");
    let comparison: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text_of = comparison.to_string();
    assert!(text_of.contains("echo"), "{text_of}");
    let page = std::fs::read_to_string(dir.path().join("compare.html")).unwrap();
    assert!(page.contains("regression"), "the page lists the regression");

    // A stored run's page, as `prill report --from` writes it.
    let kept = std::fs::read_dir(dir.path().join(".prill/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    let out = prill(
        dir.path(),
        &[
            "report",
            "--from",
            kept.to_str().unwrap(),
            "--html",
            "from.html",
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("from.html")).unwrap();
    assert!(page.contains("<!DOCTYPE html>") || page.contains("<!doctype html>"));
}
