//! `prill-quarantine.toml`: a quarantined case runs and is reported in every format
//! but does not gate the exit code; an edit of its inputs keeps it quarantined; an
//! entry past its date stops the run and names its owner.

use crate::support::{json, prill, text};

/// A project with a failing case and a passing one, and `quarantine` beside
/// `prill.toml`.
fn project(quarantine: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prill.toml"), "").unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("tests/wrong.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hello\n    response:\n      text: {value: goodbye}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tests/right.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hello\n    response:\n      text: {value: hello}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("prill-quarantine.toml"), quarantine).unwrap();
    dir
}

const ENTRY: &str = r#"
[[quarantine]]
file = "tests/wrong.yaml"
case = "tests/wrong"
reason = "echo answers in kind; #7"
owner = "ana@example.com"
expires = "2999-12-31"
"#;

#[test]
fn a_quarantined_failure_is_reported_everywhere_but_does_not_gate() {
    let dir = project(ENTRY);
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            "tests",
            "--json",
            "run.json",
            "--junit",
            "junit.xml",
            "--format",
            "github",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("FAIL [")
            && stderr.contains(
                "[quarantined until 2999-12-31 (owner ana@example.com): echo answers in kind; #7]"
            ),
        "{stderr}"
    );
    assert!(
        stderr.lines().any(
            |l| l.starts_with("1 passed, 1 failed, 0 errored, 0 skipped in ")
                && l.ends_with("; 1 quarantined (not gating)")
        ),
        "{stderr}"
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("::warning "), "{stdout}");
    assert!(!stdout.contains("::error "), "{stdout}");
    let json = json(&dir.path().join("run.json"));
    let wrong = json["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["verdict"] == "failed")
        .unwrap();
    assert_eq!(wrong["quarantine"]["owner"], "ana@example.com", "{wrong}");
    assert_eq!(json["summary"]["waived"]["failed"], 1);
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains(r#"type="quarantined""#), "{junit}");
    assert!(!junit.contains("<failure"), "{junit}");

    // An edit of its inputs keeps it quarantined: it is named by file and name.
    std::fs::write(
        dir.path().join("tests/wrong.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi there\n    response:\n      text: {value: goodbye}\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Another case that fails still fails the run.
    std::fs::write(
        dir.path().join("tests/right.yaml"),
        "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hello\n    response:\n      text: {value: nope}\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn an_expired_entry_stops_the_run_and_names_its_owner() {
    let dir = project(&ENTRY.replace("2999-12-31", "2001-01-31"));
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the quarantine of `tests/wrong` in tests/wrong.yaml ended on 2001-01-31; its owner, ana@example.com,"),
        "{stderr}"
    );
    // A malformed file says where.
    let dir = project("[[quarantine]]\nfile = \"tests/wrong.yaml\"\ncase = \"tests/wrong\"\n");
    let out = prill(dir.path(), &["run", "--demo", "tests"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("prill-quarantine.toml:1:1"), "{stderr}");
    assert!(
        stderr.contains("missing required field `reason`"),
        "{stderr}"
    );
}
