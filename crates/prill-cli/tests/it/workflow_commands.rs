//! Names from outside cannot become GitHub Actions workflow commands (issue 41). Git
//! keeps a file name with a newline in it; printed raw, the name's second line
//! (`::error::`, `::add-mask::`, `::stop-commands::`) was a command to the runner, which
//! reads stderr too. No line `prill` writes may start with `::` unless it is one of its
//! own annotations, and a control character from a name never reaches the terminal.
//! The rules are tested where they live (`prill_spec::escape`, `prill_spec::diag`,
//! `prill_report::github`); this is the binary, end to end.

#![cfg(unix)]

use std::path::Path;

use crate::support::{code, prill_bounded, stderr, stdout};

/// The file's name, and the name as diagnostics show it: on one line.
const NAME: &str = "a\n::error::pwned.yaml";
const SHOWN: &str = "a\\n::error::pwned.yaml";

/// An invalid Sentinel spec: a key that holds a newline, a command and ESC.
const INVALID: &str = "name: t\nmodel: gpt-4o\nprovider: openai\ninputs:\n  query: hi\n\
                       assertions:\n  - must_contain: x\n\"k\\n::add-mask::x\\e[2J\": 1\n";

/// Every line of `text` that GitHub Actions would take for a workflow command: it
/// splits lines at `\n` and `\r`, and looks past leading whitespace.
fn commands_in(text: &str) -> Vec<&str> {
    text.split(['\n', '\r'])
        .filter(|line| {
            let line = line.trim_start();
            line.starts_with("::") || line.starts_with("##[")
        })
        .collect()
}

/// A folder holding the invalid spec under [`NAME`].
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(NAME), INVALID).unwrap();
    dir
}

fn path(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

#[test]
fn a_file_name_with_a_newline_starts_no_line_of_validate_or_run() {
    let dir = folder();
    let d = path(dir.path());
    for args in [
        vec!["validate", d],
        vec!["validate", "--format", "human", d],
        vec!["run", d, "--demo"],
    ] {
        let out = prill_bounded(dir.path(), &args, &[]);
        let (out_text, err_text) = (stdout(&out), stderr(&out));
        assert_eq!(code(&out), 2, "{args:?}: {err_text}");
        for (stream, text) in [("stdout", &out_text), ("stderr", &err_text)] {
            assert!(commands_in(text).is_empty(), "{args:?} {stream}:\n{text}");
            assert!(!text.contains('\u{1b}'), "{args:?} {stream}:\n{text}");
        }
        // The file and the key are named, each on one line, their newlines escaped.
        assert!(err_text.contains(SHOWN), "{args:?}:\n{err_text}");
        assert!(
            err_text.contains("k\\n::add-mask::x\\u{1b}[2J"),
            "{args:?}:\n{err_text}"
        );
    }
}

#[test]
fn in_github_actions_only_prills_own_annotations_start_a_line() {
    let dir = folder();
    let d = path(dir.path());
    for args in [vec!["validate", d], vec!["run", d, "--demo"]] {
        let out = prill_bounded(dir.path(), &args, &[("GITHUB_ACTIONS", "true")]);
        let (out_text, err_text) = (stdout(&out), stderr(&out));
        assert_eq!(code(&out), 2, "{args:?}: {err_text}");
        assert!(
            commands_in(&err_text).is_empty(),
            "{args:?} stderr:\n{err_text}"
        );
        // One annotation, of the unknown key, on one line, at the real file (escaped
        // as GitHub reads it back).
        let annotations = commands_in(&out_text);
        assert_eq!(annotations.len(), 1, "{args:?} stdout:\n{out_text}");
        assert!(
            annotations[0].starts_with(
                "::error file=a%0A%3A%3Aerror%3A%3Apwned.yaml,line=8,col=1,title=error[unknown-key]::"
            ),
            "{args:?} stdout:\n{out_text}"
        );
        assert!(!out_text.contains('\u{1b}'), "{args:?} stdout:\n{out_text}");
    }
}

#[test]
fn a_file_and_a_case_named_with_newlines_run_and_start_no_line() {
    // The run's own report already escaped a line-leading `::`; its annotation now
    // shows the case's name on one line too.
    let dir = tempfile::tempdir().unwrap();
    let spec = "name: \"greets\\n::stop-commands::t\"\nmodel: demo\nprovider: demo\n\
                inputs:\n  query: hi\nassertions:\n  - must_contain: bye\n";
    std::fs::write(dir.path().join(NAME), spec).unwrap();
    let d = path(dir.path());
    for github in [false, true] {
        let env: &[(&str, &str)] = if github {
            &[("GITHUB_ACTIONS", "true")]
        } else {
            &[]
        };
        let out = prill_bounded(dir.path(), &["run", d, "--demo"], env);
        let (out_text, err_text) = (stdout(&out), stderr(&out));
        assert_eq!(code(&out), 1, "a failing check: {err_text}");
        assert!(commands_in(&err_text).is_empty(), "stderr:\n{err_text}");
        let annotations = commands_in(&out_text);
        if !github {
            assert!(annotations.is_empty(), "stdout:\n{out_text}");
            continue;
        }
        assert_eq!(annotations.len(), 1, "stdout:\n{out_text}");
        assert!(
            annotations[0].starts_with(
                "::error file=a%0A%3A%3Aerror%3A%3Apwned.yaml,line=7,col=5,\
                 title=greets\\n%3A%3Astop-commands%3A%3At [demo] failed::"
            ),
            "stdout:\n{out_text}"
        );
        assert!(
            annotations[0].contains(&format!("at {SHOWN}:7:5")),
            "{out_text}"
        );
    }
}
