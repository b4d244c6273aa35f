//! `prill run --list` and `--units FILE`, through the real binary: the units a run would
//! run, listed with nothing run, and a run of exactly the units a list names. The
//! pytest plugin (`python/prill/pytest_plugin.py`) collects with the first and runs the
//! items pytest kept with the second, reading the run's `--jsonl /dev/stdout` stream,
//! which is tested here too.

use std::path::Path;

use crate::support::{fixtures, json, json_lines, prill, stdout, text};
use serde_json::Value;

fn quickstart() -> String {
    fixtures("quickstart").display().to_string()
}

/// `name [connection]` of each unit object, sorted.
fn labels(units: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = units
        .iter()
        .map(|u| {
            format!(
                "{} [{}]",
                u["name"].as_str().unwrap(),
                u["connection"].as_str().unwrap()
            )
        })
        .collect();
    v.sort();
    v
}

fn report_units(dir: &Path) -> Vec<Value> {
    json(&dir.join("report.json"))["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            assert_eq!(u["verdict"], "passed", "{u}");
            u["unit"].clone()
        })
        .collect()
}

#[test]
fn list_prints_every_unit_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let qs = quickstart();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--list",
            "--demo",
            &qs,
            "--json",
            "report.json",
            "--jsonl",
            "run.jsonl",
        ],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let units = json_lines(&stdout(&out));
    assert_eq!(
        labels(&units),
        [
            "quickstart/echo [direct]",
            "quickstart/echo [http]",
            "quickstart/math [direct]",
            "quickstart/math [http]",
            "quickstart/music_trivia [direct]",
            "quickstart/music_trivia [http]",
        ]
    );
    // The `unit` objects of the report formats, whole.
    let echo = units
        .iter()
        .find(|u| u["name"] == "quickstart/echo")
        .unwrap();
    assert_eq!(echo["dialect"], "data-driven");
    assert_eq!(echo["target"], "echo");
    assert_eq!(echo["case_id"].as_str().unwrap().len(), 12);
    assert!(
        echo["file"]
            .as_str()
            .unwrap()
            .ends_with("quickstart/echo.yaml")
    );
    // Nothing ran: no agent started, no report, no last run, no history.
    assert!(!err.contains("demo agents on"), "{err}");
    assert!(!dir.path().join("report.json").exists());
    assert!(!dir.path().join("run.jsonl").exists());
    assert!(!dir.path().join(".prill").exists());
}

#[test]
fn list_chooses_as_the_run_chooses() {
    let dir = tempfile::tempdir().unwrap();
    let qs = quickstart();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--list",
            "--connection",
            "mcp",
            "--filter",
            "music",
            &qs,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        labels(&json_lines(&stdout(&out))),
        ["quickstart/music_trivia [mcp]"]
    );

    // A Sentinel spec's unit is named after its provider, one per `--model`.
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: hello\nmodel: gpt-4o-mini\ninputs: {query: hi}\nassertions:\n  - must_contain: hi\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--list", "spec.yaml"]);
    assert_eq!(labels(&json_lines(&stdout(&out))), ["hello [openai]"]);
    let out = prill(
        dir.path(),
        &[
            "run",
            "--list",
            "spec.yaml",
            "--model",
            "gpt-4o,anthropic:claude-3-5-haiku-latest",
        ],
    );
    assert_eq!(
        labels(&json_lines(&stdout(&out))),
        [
            "hello @anthropic:claude-3-5-haiku-latest [anthropic]",
            "hello @gpt-4o [openai]"
        ]
    );

    // An invalid file: its diagnostics, exit 2, no unit.
    std::fs::write(
        dir.path().join("typo.yaml"),
        "agent: echo\ninteractions:\n  - text: hi\n    response:\n      text: {keyword: hi}\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--list", "typo.yaml", &qs]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("typo.yaml:5:"),
        "{}",
        text(&out.stderr)
    );

    // Nothing to list: as an empty run, unless --no-tests allows it.
    let out = prill(
        dir.path(),
        &["run", "--list", "--filter", "nothing-matches", &qs],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = prill(
        dir.path(),
        &[
            "run",
            "--list",
            "--no-tests=pass",
            "--filter",
            "nothing-matches",
            &qs,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
}

#[test]
fn units_runs_exactly_the_units_of_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let qs = quickstart();
    let listed = json_lines(&stdout(&prill(dir.path(), &["run", "--list", &qs])));
    let chosen: Vec<&Value> = listed
        .iter()
        .filter(|u| {
            (u["name"] == "quickstart/echo" && u["connection"] == "direct")
                || (u["name"] == "quickstart/math" && u["connection"] == "http")
        })
        .collect();
    // Whole `--list` lines, and a bare object with the two fields that count.
    let file = format!(
        "{}\n\n{{\"case_id\": {}, \"connection\": \"http\"}}\n",
        serde_json::to_string(chosen[0]).unwrap(),
        chosen[1]["case_id"]
    );
    std::fs::write(dir.path().join("units.jsonl"), file).unwrap();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "--units",
            "units.jsonl",
            "--json",
            "report.json",
            &qs,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ran = report_units(dir.path());
    let mut expected = labels(&[chosen[0].clone(), chosen[1].clone()]);
    expected.sort();
    assert_eq!(labels(&ran), expected);

    // `--list --units` lists the same two; `--connection` cannot add a unit back.
    let out = prill(
        dir.path(),
        &[
            "run",
            "--list",
            "--units",
            "units.jsonl",
            "--connection",
            "direct,http",
            &qs,
        ],
    );
    assert_eq!(labels(&json_lines(&stdout(&out))), expected);
}

#[test]
fn units_that_cannot_be_read_or_found_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let qs = quickstart();
    let out = prill(
        dir.path(),
        &["run", "--demo", "--units", "absent.jsonl", &qs],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("error: cannot read --units absent.jsonl"),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(
        dir.path().join("bad.jsonl"),
        "{\"case_id\": \"x\", \"connection\": \"http\"}\n[1]\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "--units", "bad.jsonl", &qs]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "bad.jsonl:2: expected an object with the `case_id` and `connection` of a unit"
        ),
        "{}",
        text(&out.stderr)
    );

    // None of them is loaded: nothing runs and the run fails, as an empty one does.
    std::fs::write(
        dir.path().join("gone.jsonl"),
        "{\"case_id\": \"000000000000\", \"connection\": \"http\"}\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "--units", "gone.jsonl", &qs]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("--units: none of the 1 unit(s) asked for is among the cases loaded"),
        "{}",
        text(&out.stderr)
    );

    // Some of them: the others run, with a note.
    let listed = json_lines(&stdout(&prill(dir.path(), &["run", "--list", &qs])));
    let some = format!(
        "{}\n{{\"case_id\": \"000000000000\", \"connection\": \"http\"}}\n",
        serde_json::to_string(&listed[0]).unwrap()
    );
    std::fs::write(dir.path().join("some.jsonl"), some).unwrap();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "--units",
            "some.jsonl",
            "--json",
            "report.json",
            &qs,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("note: --units: 1 of the 2 unit(s) asked for are not among the cases loaded"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(report_units(dir.path()).len(), 1);
}

#[test]
fn jsonl_streams_to_a_pipe_through_dev_stdout() {
    // What the pytest plugin reads: every line on stdout as the run goes, stdout being a
    // pipe (written through, never replaced).
    let dir = tempfile::tempdir().unwrap();
    let qs = quickstart();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "--format",
            "human",
            "--jsonl",
            "/dev/stdout",
            &qs,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let records = json_lines(&stdout(&out));
    assert_eq!(records[0]["event"], "run");
    let finished = records
        .iter()
        .filter(|r| r["event"] == "unit_finished")
        .count();
    assert_eq!(finished, 6);
    assert_eq!(records.last().unwrap()["event"], "run_finished");
}
