//! The CI reports end to end: `prill run --demo --junit` on a failing two-turn case
//! writes the attributes CI tools read, and `--format github` (or `GITHUB_ACTIONS=true`)
//! prints an annotation per failing check and per invalid file on stdout, while the
//! human report stays on stderr.

use crate::support::{prill, prill_env, text};

/// A two-turn case against the demo `echo` agent whose second turn fails.
const FAILING_MULTITURN: &str = r#"# The second answer is "second", not "third".
{
  agent = echo
  connections = [direct]
  interactions = [
    {
      text = "first"
      response { text { value = "first" } }
    }
    {
      text = "second"
      response {
        text { value = "third" }
      }
    }
  ]
}
"#;

/// A file with an unknown key in its one interaction.
const INVALID: &str =
    "agent: echo\ninteractions:\n  - txt: hi\n    response: {text: {value: hi}}\n";

/// The 1-based line of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// `dir` with `tests/agents/failing_multiturn.hocon` in it.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("tests/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("failing_multiturn.hocon"), FAILING_MULTITURN).unwrap();
    dir
}

#[test]
fn a_failing_case_in_junit_names_its_module_file_line_and_transcript() {
    let dir = project();
    let out = prill(
        dir.path(),
        &["run", "--demo", "tests", "--junit", "junit.xml"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "",
        "no annotations outside GitHub Actions"
    );
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let line = line_of(FAILING_MULTITURN, r#"value = "third""#);
    let testcase = r#"<testcase name="agents/failing_multiturn [direct]" classname="tests.agents.failing_multiturn" time="#;
    assert!(xml.contains(testcase), "{xml}");
    assert!(
        xml.contains(&format!(
            r#"file="tests/agents/failing_multiturn.hocon" line="{line}">"#
        )),
        "{xml}"
    );
    let failure = &xml[xml.find("<failure").expect("a failure")..];
    let failure = &failure[..failure.find("</failure>").unwrap()];
    for part in [
        &format!("at tests/agents/failing_multiturn.hocon:{line}:"),
        ", interaction 1, sample 0",
        "check: interactions[1].response.text.value",
        "expected: &quot;third&quot;",
        "found: &quot;second&quot;",
    ] {
        assert!(failure.contains(part), "{part} not in {failure}");
    }
    let transcript = &xml[xml.find("<system-out>").expect("a transcript")..];
    for part in [
        "interaction 0 (",
        "sent: first",
        "interaction 1 (",
        "answer: second",
    ] {
        assert!(transcript.contains(part), "{part} not in {transcript}");
    }
}

#[test]
fn in_github_actions_a_failing_check_is_annotated_on_stdout() {
    let dir = project();
    let out = prill_env(
        dir.path(),
        &["run", "--demo", "tests"],
        &[("GITHUB_ACTIONS", "true")],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = line_of(FAILING_MULTITURN, r#"value = "third""#);
    let prefix = format!("::error file=tests/agents/failing_multiturn.hocon,line={line},col=");
    let annotations: Vec<&str> = stdout.lines().collect();
    assert_eq!(annotations.len(), 1, "{stdout}");
    assert!(annotations[0].starts_with(&prefix), "{stdout}");
    assert!(
        annotations[0].contains(",title=agents/failing_multiturn [direct] failed::"),
        "{stdout}"
    );
    assert!(
        annotations[0].contains("%0A  found: \"second\""),
        "{stdout}"
    );
    // The human report is still there, on stderr.
    assert!(stderr.contains("1 failed"), "{stderr}");
    assert!(!stderr.contains("::error"), "{stderr}");

    // `--format human` turns it off; `--format github` turns it on anywhere.
    let out = prill_env(
        dir.path(),
        &["run", "--demo", "tests", "--format", "human"],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(text(&out.stdout), "");
    let out = prill(
        dir.path(),
        &["run", "--demo", "tests", "--format", "github"],
    );
    assert!(
        text(&out.stdout).starts_with(&prefix),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn in_github_actions_an_invalid_file_is_annotated_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), INVALID).unwrap();
    let line = line_of(INVALID, "txt");
    let col = INVALID.lines().nth(line - 1).unwrap().find("txt").unwrap() + 1;
    let prefix = format!("::error file=bad.yaml,line={line},col={col},title=error[");

    for command in ["validate", "run"] {
        let out = prill_env(
            dir.path(),
            &[command, "bad.yaml"],
            &[("GITHUB_ACTIONS", "true")],
        );
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        let first = stdout.lines().next().unwrap_or_default();
        assert!(first.starts_with(&prefix), "{command}: {stdout}");
        assert!(first.contains("txt"), "{command}: {stdout}");
        // The diagnostics are still on stderr, where people read them.
        assert!(stderr.contains("bad.yaml:"), "{command}: {stderr}");
    }

    // JSON on stdout stays JSON.
    let out = prill_env(
        dir.path(),
        &["validate", "bad.yaml", "--format", "json"],
        &[("GITHUB_ACTIONS", "true")],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json.is_object(), "{json}");
    // Outside GitHub Actions, only when asked for.
    let out = prill(dir.path(), &["validate", "bad.yaml"]);
    assert!(!text(&out.stdout).contains("::error"));
    let out = prill(dir.path(), &["validate", "bad.yaml", "--format", "github"]);
    assert!(
        text(&out.stdout).starts_with(&prefix),
        "{}",
        text(&out.stdout)
    );
}

/// An echo case whose answer holds lines a GitHub runner would obey (`::error`,
/// `::add-mask::`, `##[...]`), sent with `--show-transcript` so the answer is printed.
const HOSTILE: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: \"hi\\n  ::error file=x.rs,line=1::pwned\\n::add-mask::hunter2\\n##[warning]pwned\"\n    response: {text: {value: hi}}\n";

#[test]
fn an_answer_cannot_add_workflow_commands_to_the_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hostile.yaml"), HOSTILE).unwrap();
    let out = prill_env(
        dir.path(),
        &["run", "--demo", "hostile.yaml", "--show-transcript", "-v"],
        &[("GITHUB_ACTIONS", "true")],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pwned"), "the answer is shown: {stderr}");
    for (name, output) in [("stdout", &stdout), ("stderr", &stderr)] {
        let obeyed: Vec<&str> = output
            .lines()
            .map(str::trim_start)
            .filter(|l| {
                l.starts_with("##[")
                    || (l.starts_with("::") && !l.starts_with("::error file=hostile.yaml"))
            })
            .collect();
        assert!(
            obeyed.is_empty(),
            "{name} has commands: {obeyed:?}\n{output}"
        );
    }
    // The one annotation is Prill's own.
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}
