//! The run history, end to end against the demo agents: every `assay run` keeps one
//! JSON Lines file under `.assay/runs/`, which starts with a `run` line (its id, start
//! time, the git commit and whether the tree was dirty, the settings that chose its
//! units) and holds every event of the run; `assay runs` lists them and a case's
//! verdicts across them from an SQLite index rebuilt from the files when needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod support;
use support::{assay, fixtures, text};

/// A passing case against the demo `echo` agent.
const PASSING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n";

/// `git args...` in `dir`, which must succeed; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Assay Tests",
            "-c",
            "user.email=tests@assay.invalid",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

/// The runs kept under `dir`, oldest first, each as its lines.
fn runs(dir: &Path) -> Vec<(PathBuf, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(".assay/runs"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let lines = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).expect("every line is JSON"))
                .collect();
            (path, lines)
        })
        .collect()
}

/// A scratch project: the two-turn case that fails on its second turn, and a passing one.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures("examples/second_turn/home_town.hocon"),
        dir.path().join("home_town.hocon"),
    )
    .unwrap();
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    dir
}

#[test]
fn every_run_is_kept_with_its_commit_settings_and_events() {
    let dir = project();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "tests"]);
    let head = git(dir.path(), &["rev-parse", "HEAD"]);

    let out = assay(dir.path(), &["run", "--demo", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (path, lines) = &kept[0];
    let run = &lines[0];
    assert_eq!(run["event"], "run", "{run}");
    assert_eq!(run["schema_version"], 1);
    let id = run["id"].as_str().unwrap();
    assert_eq!(path.file_name().unwrap(), format!("{id}.jsonl").as_str());
    assert!(run["started_at"].as_str().unwrap().ends_with('Z'), "{run}");
    assert_eq!(run["command"], "run");
    assert_eq!(run["git"]["commit"], head.as_str());
    assert_eq!(run["git"]["dirty"], false);
    assert!(run["git"]["branch"].is_string(), "{run}");
    assert_eq!(run["settings"]["paths"], serde_json::json!(["."]));
    // Then every event of the run, as `--jsonl` writes them.
    let events: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["event"].as_str().unwrap())
        .collect();
    assert_eq!(events.first(), Some(&"run_started"), "{events:?}");
    assert_eq!(events.last(), Some(&"run_finished"), "{events:?}");
    let finished: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["event"] == "unit_finished")
        .map(|l| {
            (
                l["unit"]["name"].as_str().unwrap(),
                l["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(finished.contains(&("echo", "passed")), "{finished:?}");
    assert!(finished.iter().any(|(_, v)| *v == "failed"), "{finished:?}");

    // A changed tracked file makes the tree dirty; the filter is kept; ids sort by time.
    std::fs::write(dir.path().join("echo.yaml"), PASSING.replace("hi", "yo")).unwrap();
    let out = assay(dir.path(), &["run", "--demo", ".", "--filter", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 2);
    let second = &kept[1].1[0];
    assert!(second["id"].as_str().unwrap() > id, "{second}");
    assert_eq!(second["git"]["dirty"], true);
    assert_eq!(second["settings"]["filters"], serde_json::json!(["echo"]));

    // `assay runs` lists them, newest first, from the index it builds from the files.
    let out = assay(dir.path(), &["runs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with(second["id"].as_str().unwrap()),
        "{listed}"
    );
    assert!(
        lines[0].contains(&format!("{}+", &head[..10])),
        "dirty: {listed}"
    );
    assert!(
        lines[1].contains("1 passed, 1 failed, 0 errored, 0 skipped"),
        "{listed}"
    );
    assert!(dir.path().join(".assay/history.sqlite").is_file());
    // One case across runs, by name; and as JSON.
    let out = assay(dir.path(), &["runs", "--case", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).ends_with("oldest to newest: PP\n"),
        "{}",
        text(&out.stdout)
    );
    let out = assay(dir.path(), &["runs", "--format", "json"]);
    let json: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    assert_eq!(json[1]["commit"], head.as_str());
    // An index a killed process left unreadable is rebuilt from the files.
    std::fs::write(dir.path().join(".assay/history.sqlite"), "not a database").unwrap();
    let out = assay(dir.path(), &["runs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    // A case no run has is an error.
    let out = assay(dir.path(), &["runs", "--case", "no-such-case"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no-such-case"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn outside_git_a_run_is_kept_without_a_commit() {
    let dir = project();
    let out = assay(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].1[0]["git"], Value::Null);
    // A run of nothing keeps nothing.
    let out = assay(
        dir.path(),
        &["run", "--demo", ".", "--filter", "nothing-matches"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(runs(dir.path()).len(), 1);
}
