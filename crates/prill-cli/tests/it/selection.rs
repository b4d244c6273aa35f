//! Partitions, empty runs and `--strict`, end to end: an empty bucket of a CI matrix
//! passes with a note and still writes every report; `count:` partitions are never
//! empty; `--no-tests` decides what an empty run, validation or listing comes to; and
//! `--strict` (or `strict = true`) turns every warning into an error. `units`: `prill
//! run --list` and `--units FILE`, which the pytest plugin selects with.

use crate::support::{fixtures, json, prill, stderr};

mod units;

/// The quickstart's 3 cases by a stable hash over 2 buckets leave `hash:1/2` empty.
#[test]
fn an_empty_shard_passes_with_a_note_and_writes_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--shard",
            "1/2",
            "--json",
            "run.json",
            "--jsonl",
            "run.jsonl",
            "--junit",
            "junit.xml",
            "--markdown",
            "summary.md",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(
        notes,
        ["note: partition hash:1/2 holds none of the 3 selected cases; nothing to run here"],
        "{err}"
    );
    assert!(!err.contains("demo agents on"), "no agent started: {err}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("<testsuites name=\"prill\" tests=\"0\""),
        "{junit}"
    );
    assert_eq!(json(&dir.path().join("run.json"))["summary"]["passed"], 0);
    let jsonl = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    assert!(jsonl.contains("run_finished"), "{jsonl}");
    let markdown = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(markdown.contains("0 passed, 0 failed"), "{markdown}");
}

#[test]
fn count_partitions_are_never_empty_and_split_with_no_gap() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    let mut ids = Vec::new();
    for partition in ["count:1/3", "count:2/3", "count:3/3"] {
        let out = prill(
            dir.path(),
            &[
                "run",
                "--demo",
                q.to_str().unwrap(),
                "--partition",
                partition,
                "--json",
                "r.json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let units = json(&dir.path().join("r.json"))["units"].clone();
        let mine: std::collections::BTreeSet<String> = units
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["unit"]["case_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(mine.len(), 1, "{partition}: one case of three each");
        ids.extend(mine);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "every case once");
    // `--shard` is `--partition hash:`; the two cannot be given together.
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--shard",
            "1/2",
            "--partition",
            "count:1/2",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = prill(dir.path(), &["run", "--partition", "slice:1/2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`hash` or `count`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn no_tests_decides_what_an_empty_run_comes_to() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    let q = q.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--demo", q, "--junit", "junit.xml"];
        args.extend_from_slice(extra);
        prill(dir.path(), &args)
    };
    // A selection that matches nothing fails by default: a typo never turns CI green.
    let out = run(&["--filter", "no-such-case"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: no test case to run: the selection left none of 3 cases"),
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::read_to_string(dir.path().join("junit.xml"))
            .unwrap()
            .contains("tests=\"0\""),
        "the empty report is written all the same"
    );
    let out = run(&["--filter", "no-such-case", "--no-tests", "warn"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("warning: no test case to run"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--filter", "no-such-case", "--no-tests=pass"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stderr(&out).contains("no test case"), "{}", stderr(&out));
    // An explicit `fail` fails an empty bucket too.
    let out = run(&["--shard", "1/2", "--no-tests=fail"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: partition hash:1/2 holds none"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn validate_and_list_follow_the_no_tests_rule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::write(dir.path().join("empty/notes.txt"), "no test here\n").unwrap();
    for command in ["validate", "list"] {
        let out = prill(dir.path(), &[command, "empty"]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("error: no test file found"),
            "{command}: {}",
            stderr(&out)
        );
        let out = prill(dir.path(), &[command, "empty", "--no-tests=warn"]);
        assert_eq!(out.status.code(), Some(0), "{command}");
        assert!(
            stderr(&out).contains("warning: no test file found"),
            "{command}"
        );
        let out = prill(dir.path(), &[command, "empty", "--no-tests=pass"]);
        assert_eq!(out.status.code(), Some(0), "{command}");
    }
    // A path with only prill.toml holds no test file either.
    std::fs::write(
        dir.path().join("empty/prill.toml"),
        "server = \"http://localhost:8080\"\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["validate", "empty"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// A typo in a response part leaves a case that checks nothing: two warnings, which
/// `--strict` (or `strict = true` in prill.toml) makes errors.
#[test]
fn strict_turns_every_warning_into_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("typo.yaml"),
        "agent: echo\ninteractions:\n  - text: hi\n    response: {texts: {keywords: hi}}\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["validate", "typo.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1 file, 1 valid, 0 invalid, 2 warnings\n"
    );
    let err = stderr(&out);
    assert!(err.contains("this case checks nothing"), "{err}");
    assert!(
        err.contains("`texts` is not a part of the response"),
        "{err}"
    );
    // `run` shows the same warnings, and runs.
    let out = prill(dir.path(), &["run", "--demo", "typo.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this case checks nothing"),
        "{}",
        stderr(&out)
    );

    let strict_validate = prill(dir.path(), &["validate", "--strict", "typo.yaml"]);
    let strict_run = prill(dir.path(), &["run", "--demo", "--strict", "typo.yaml"]);
    std::fs::write(dir.path().join("prill.toml"), "strict = true\n").unwrap();
    let config_validate = prill(dir.path(), &["validate", "typo.yaml"]);
    let config_run = prill(dir.path(), &["run", "--demo", "typo.yaml"]);
    for out in [&strict_validate, &strict_run, &config_validate, &config_run] {
        let err = stderr(out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("error[no-checks]: this case checks nothing"),
            "{err}"
        );
        assert!(!err.contains("warning["), "no warning is left: {err}");
    }
    for out in [&strict_validate, &config_validate] {
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "1 file, 0 valid, 1 invalid\n"
        );
    }
    for out in [&strict_run, &config_run] {
        assert!(
            stderr(out).contains("nothing was run (strict: every warning is an error)"),
            "{}",
            stderr(out)
        );
    }
}
