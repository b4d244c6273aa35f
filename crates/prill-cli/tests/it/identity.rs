//! What "the same case" is, end to end: a case whose inputs are edited (a new id, the
//! same file and name) is one case whose inputs changed in `prill compare`, `prill
//! runs --case` and `--rerun-failed`; and a copy of a case added in another file takes
//! a new id, never the id of the file that had it.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, prill, text, write};

const FAILING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hello\n    response: {text: {keywords: nope}}\n";

/// `(file, case id)` of every unit of the last run.
fn last_ids(dir: &Path) -> Vec<(String, String)> {
    let last = json(&dir.join(".prill/last-run.json"));
    let mut ids: Vec<(String, String)> = last["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u: &Value| {
            (
                u["file"].as_str().unwrap().to_owned(),
                u["case_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn an_edited_case_keeps_its_history_in_compare_runs_and_rerun_failed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tests/greet.yaml", FAILING);
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let before = last_ids(dir.path())[0].1.clone();

    // The prompt is edited: a new id.
    write(
        dir.path(),
        "tests/greet.yaml",
        &FAILING.replace("hello", "hello there"),
    );
    let out = prill(dir.path(), &["run", "--demo", "tests", "--rerun-failed"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the edited case ran: {said}");
    assert!(
        said.contains(
            "inputs changed since, rerun as the same case: tests/greet (tests/greet.yaml)"
        ),
        "{said}"
    );
    let after = last_ids(dir.path())[0].1.clone();
    assert_ne!(before, after);

    let out = prill(dir.path(), &["compare"]);
    let compared = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        compared.contains("1 case with inputs changed"),
        "{compared}"
    );
    assert!(
        compared.contains(&format!(
            "tests/greet [direct]  failed 0/1 → failed 0/1  (id {before} → {after}, tests/greet.yaml)"
        )),
        "{compared}"
    );
    assert!(
        !compared.contains("\nNew") && !compared.contains("\nRemoved"),
        "{compared}"
    );

    let out = prill(dir.path(), &["runs", "--case", &after]);
    let history = text(&out.stdout);
    assert_eq!(
        history.lines().count(),
        3,
        "both runs, then the pattern: {history}"
    );
    assert!(
        history
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!("inputs changed: id {before} → {after}")),
        "{history}"
    );
}

/// A copy of a case in a file found first would have taken its id; the file that had
/// the id keeps it, so its history does not move to the copy.
#[test]
fn a_copy_of_a_case_added_elsewhere_takes_a_new_id_not_the_original_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tests/x.yaml", FAILING);
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let original = last_ids(dir.path())[0].1.clone();

    write(dir.path(), "tests/a_copy.yaml", FAILING);
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        last_ids(dir.path()),
        [
            ("tests/a_copy.yaml".to_owned(), format!("{original}-2")),
            ("tests/x.yaml".to_owned(), original.clone()),
        ]
    );
    let listed = text(&prill(dir.path(), &["list", "tests"]).stdout);
    let line = listed.lines().find(|l| l.contains("tests/x.yaml")).unwrap();
    assert!(
        line.contains(&original) && !line.contains(&format!("{original}-2")),
        "{listed}"
    );

    let out = prill(dir.path(), &["compare"]);
    let compared = text(&out.stdout);
    assert!(compared.contains("1 new case; 1 unchanged"), "{compared}");
}
