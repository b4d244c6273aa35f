//! The run history, end to end against the demo agents: every `prill run` keeps one
//! JSON Lines file under `.prill/runs/`, which starts with a `run` line (its id, start
//! time, the git commit and whether the tree was dirty, the settings that chose its
//! units) and holds every event of the run; `prill runs` lists them and a case's
//! verdicts and metrics across them from an SQLite index rebuilt from the files when
//! needed. `prill assess` is kept the same way; `[history]` moves and prunes the
//! runs; `[prices]` gives each model call its cost; a run killed with SIGKILL is
//! listed as unfinished with the units it finished.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{command, fixtures, git, jsonl, prill, text};

/// A passing case against the demo `echo` agent.
const PASSING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n";

/// The runs kept under `dir`, oldest first, each as its lines.
fn runs(dir: &Path) -> Vec<(PathBuf, Vec<Value>)> {
    runs_in(&dir.join(".prill/runs"))
}

/// The runs kept in the folder `runs`, oldest first, each as its lines.
fn runs_in(runs: &Path) -> Vec<(PathBuf, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(runs)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let lines = jsonl(&path);
            (path, lines)
        })
        .collect()
}

/// A scratch project: the two-turn case that fails on its second turn, and a passing one.
pub(crate) fn project() -> tempfile::TempDir {
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

    let out = prill(dir.path(), &["run", "--demo", "."]);
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
    let out = prill(dir.path(), &["run", "--demo", ".", "--filter", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 2);
    let second = &kept[1].1[0];
    assert!(second["id"].as_str().unwrap() > id, "{second}");
    assert_eq!(second["git"]["dirty"], true);
    assert_eq!(second["settings"]["filters"], serde_json::json!(["echo"]));

    // `prill runs` lists them, newest first, from the index it builds from the files.
    let out = prill(dir.path(), &["runs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    // A header, then the runs, newest first.
    let lines: Vec<&str> = listed.lines().skip(1).collect();
    assert!(listed.starts_with("run (started, UTC)"), "{listed}");
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
    assert!(dir.path().join(".prill/history.sqlite").is_file());
    // One case across runs, by name; and as JSON.
    let out = prill(dir.path(), &["runs", "--case", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).ends_with("oldest to newest: PP\n"),
        "{}",
        text(&out.stdout)
    );
    let out = prill(dir.path(), &["runs", "--format", "json"]);
    let json: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    assert_eq!(json[1]["commit"], head.as_str());
    // What the runs say about each case: one passed twice, one failed once.
    let out = prill(dir.path(), &["runs", "--flaky"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("0 flaky, 1 stable, 1 broken (each case over its 10 newest kept runs"),
        "{}",
        text(&out.stdout)
    );
    let out = prill(dir.path(), &["runs", "--flaky", "--case", "echo"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--flaky and --case do not go together"
    );
    // An index a killed process left unreadable is rebuilt from the files.
    std::fs::write(dir.path().join(".prill/history.sqlite"), "not a database").unwrap();
    let out = prill(dir.path(), &["runs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        3,
        "a header and two runs"
    );
    // A case no run has is an error.
    let out = prill(dir.path(), &["runs", "--case", "no-such-case"]);
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
    let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].1[0]["git"], Value::Null);
    // A run of nothing keeps nothing.
    let out = prill(
        dir.path(),
        &["run", "--demo", ".", "--filter", "nothing-matches"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(runs(dir.path()).len(), 1);
}

/// The ids of the runs `prill runs --format json` lists in `dir`, newest first.
fn listed_ids(dir: &Path) -> Vec<String> {
    let out = prill(dir, &["runs", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn history_settings_move_the_runs_and_prune_them_by_count_and_age() {
    let dir = project();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[history]\ndir = \"ci/runs\"\nkeep = 5\nmax_age_days = 30\n",
    )
    .unwrap();
    let kept_in = dir.path().join("ci/runs");
    for _ in 0..2 {
        let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    assert!(!dir.path().join(".prill/runs").exists());
    let kept = runs_in(&kept_in);
    assert_eq!(kept.len(), 2, "{kept:?}");
    // The newer run, aged: it started in 2020, longer ago than `max_age_days`.
    let (aged_path, _) = &kept[1];
    let aged_id = kept[1].1[0]["id"].as_str().unwrap().to_owned();
    let mut lines: Vec<Value> = kept[1].1.clone();
    lines[0]["started_at"] = Value::from("2020-01-01T00:00:00.000Z");
    let text_of = |lines: &[Value]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    std::fs::write(aged_path, text_of(&lines)).unwrap();
    let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ids = listed_ids(dir.path());
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(!ids.contains(&aged_id), "{ids:?}");
    assert!(!aged_path.exists());
    assert_eq!(ids[1], kept[0].1[0]["id"].as_str().unwrap());

    // `keep` prunes by count: the newest one only.
    std::fs::write(
        dir.path().join("prill.toml"),
        "[history]\ndir = \"ci/runs\"\nkeep = 1\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let left = runs_in(&kept_in);
    assert_eq!(left.len(), 1);
    assert_eq!(
        listed_ids(dir.path()),
        [left[0].1[0]["id"].as_str().unwrap()]
    );

    // A bad `[history]` is an error that names the key and what it wants.
    std::fs::write(dir.path().join("prill.toml"), "[history]\nkeep = 0\n").unwrap();
    let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("history.keep: must be greater than 0"),
        "{err}"
    );
}

#[test]
fn an_assessment_is_kept_in_the_history_with_every_sample() {
    let dir = project();
    let out = prill(
        dir.path(),
        &["assess", "--demo", "echo.yaml", "--samples", "3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let lines = &kept[0].1;
    assert_eq!(lines[0]["event"], "run");
    assert_eq!(lines[0]["command"], "assess");
    assert_eq!(lines[0]["settings"]["samples"], 3);
    assert_eq!(
        lines[0]["settings"]["paths"],
        serde_json::json!(["echo.yaml"])
    );
    let events: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["event"].as_str().unwrap())
        .collect();
    assert_eq!(events.first(), Some(&"run_started"), "{events:?}");
    assert_eq!(events.last(), Some(&"run_finished"), "{events:?}");
    let unit = lines
        .iter()
        .find(|l| l["event"] == "unit_finished")
        .expect("the unit is kept");
    assert_eq!(unit["verdict"], "passed");
    assert_eq!(unit["samples"].as_array().unwrap().len(), 3, "{unit}");
    // `prill runs` lists it, and the case's history has it.
    let out = prill(dir.path(), &["runs"]);
    let listed = text(&out.stdout);
    assert!(listed.contains("  assess   1 passed, 0 failed"), "{listed}");
    let out = prill(dir.path(), &["runs", "--case", "echo"]);
    let case = text(&out.stdout);
    assert!(case.contains("3/3 samples"), "{case}");
    // An assessment of nothing keeps nothing.
    let out = prill(
        dir.path(),
        &["assess", "--demo", ".", "--filter", "nothing-matches"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(runs(dir.path()).len(), 1);
}

/// A Sentinel spec on the demo model `m`, which reports its usage.
const ON_A_MODEL: &str = "name: spend\nmodel: m\nprovider: demo\ninputs:\n  query: ping pong\nassertions:\n  - must_contain: \"You said\"\n";

#[test]
fn runs_record_what_each_model_call_cost_at_the_price_in_prill_toml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spend.yaml"), ON_A_MODEL).unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[prices.\"demo:m\"]\ninput = 2.5\noutput = 10\n",
    )
    .unwrap();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "spend.yaml",
            "--samples",
            "2",
            "--jsonl",
            "r.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let kept = runs(dir.path());
    let unit = kept[0]
        .1
        .iter()
        .find(|l| l["event"] == "unit_finished")
        .unwrap()
        .clone();
    let mut total = 0.0;
    let (mut input, mut output) = (0, 0);
    for sample in unit["samples"].as_array().unwrap() {
        let i = &sample["interactions"][0];
        let (n_in, n_out) = (
            i["usage"]["input"].as_u64().unwrap(),
            i["usage"]["output"].as_u64().unwrap(),
        );
        let cost = i["cost"].as_f64().expect("a priced call has its cost");
        let expected = (n_in as f64 * 2.5 + n_out as f64 * 10.0) / 1e6;
        assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
        total += cost;
        input += n_in;
        output += n_out;
    }
    // `--jsonl` carries the same costs.
    let jsonl = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
    assert!(jsonl.contains("\"cost\":"), "{jsonl}");
    // `prill runs --case` shows the unit's tokens and cost.
    let out = prill(dir.path(), &["runs", "--case", "spend", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let row = &rows[0];
    assert_eq!(row["input_tokens"], input);
    assert_eq!(row["output_tokens"], output);
    assert!(
        (row["cost"].as_f64().unwrap() - total).abs() < 1e-12,
        "{row}"
    );
    assert!(row["latency"].as_f64().unwrap() >= 0.0, "{row}");
    let out = prill(dir.path(), &["runs"]);
    let shown = text(&out.stdout);
    assert!(shown.ends_with(&format!("cost ${total:.6}\n")), "{shown}");
    let out = prill(dir.path(), &["runs", "--case", "spend"]);
    let shown = text(&out.stdout);
    assert!(
        shown.contains(&format!("tokens {input} in {output} out  cost ${total:.6}")),
        "{shown}"
    );

    // No price for the model: the usage is kept, the cost is unknown.
    std::fs::write(
        dir.path().join("prill.toml"),
        "[prices.\"demo:other\"]\ninput = 1\noutput = 1\n",
    )
    .unwrap();
    std::fs::remove_file(dir.path().join("r.jsonl")).unwrap();
    let out = prill(
        dir.path(),
        &["run", "--demo", "spend.yaml", "--jsonl", "r.jsonl"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let jsonl = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
    assert!(jsonl.contains("\"usage\":"), "{jsonl}");
    assert!(!jsonl.contains("\"cost\":"), "{jsonl}");
}

/// A case the demo's `slow` agent answers after ten minutes: a run of it is still
/// going when the test kills it.
const SLOW: &str = "agent: slow\nconnections: [direct]\ninteractions:\n  - text: wait\n    sly_data: {delay_ms: 600000}\n    timeout_in_seconds: 900\n    response: {text: {not_keywords: error}}\n";

#[test]
fn a_run_killed_mid_run_is_listed_unfinished_with_its_finished_units() {
    let dir = project();
    std::fs::remove_file(dir.path().join("home_town.hocon")).unwrap();
    // A finished run first, so that there is an index to break.
    let out = prill(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(dir.path().join("slow.yaml"), SLOW).unwrap();
    let mut child = command(dir.path(), &["run", "--demo", "."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (within a bound) until the second run's file holds the echo unit's verdict.
    let mut second = None;
    for _ in 0..1200 {
        let kept = runs(dir.path());
        if kept.len() == 2 && kept[1].1.iter().any(|l| l["event"] == "unit_finished") {
            second = Some(kept[1].clone());
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(25));
    }
    let (path, lines) = second.expect("the echo unit finished");
    child.kill().unwrap(); // SIGKILL: no handler runs, nothing is finished off.
    child.wait().unwrap();
    let id = lines[0]["id"].as_str().unwrap().to_owned();
    // What a kill in the middle of a write leaves: half a line, and half an index.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"schema_version\":1,\"event\":\"unit_fin").unwrap();
    let index = dir.path().join(".prill/history.sqlite");
    let bytes = std::fs::read(&index).unwrap();
    std::fs::write(&index, &bytes[..bytes.len() / 2]).unwrap();

    let out = prill(dir.path(), &["runs", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    let killed = &listed[0];
    assert_eq!(killed["id"], id.as_str());
    assert_eq!(killed["finished"], false);
    assert_eq!(
        (killed["passed"].as_u64(), killed["failed"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(listed[1]["finished"], true);
    let out = prill(dir.path(), &["runs"]);
    let shown = text(&out.stdout);
    assert!(
        shown.lines().nth(1).unwrap().ends_with("(unfinished)"),
        "{shown}"
    );
    // The echo case's history has both runs; the slow case never finished.
    let out = prill(dir.path(), &["runs", "--case", "echo"]);
    assert!(
        text(&out.stdout).ends_with("oldest to newest: PP\n"),
        "{}",
        text(&out.stdout)
    );
    let out = prill(dir.path(), &["runs", "--case", "slow"]);
    assert_eq!(out.status.code(), Some(2));
}

/// What runs keep stays out of `git status`: the `.prill` folder a run creates ignores
/// itself.
#[test]
fn what_runs_keep_is_not_in_git_status() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    git(dir.path(), &["add", "echo.yaml"]);
    git(dir.path(), &["commit", "-q", "-m", "a case"]);
    let out = prill(dir.path(), &["run", "--demo", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.path().join(".prill/runs").is_dir(), "the run is kept");
    assert_eq!(
        git(
            dir.path(),
            &["status", "--porcelain", "--untracked-files=all"]
        ),
        "",
        "nothing of .prill is untracked"
    );
    let ignore = std::fs::read_to_string(dir.path().join(".prill/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
}
