//! The project commands through the real binary: `prill init` writes files that pass
//! under `prill run --demo` and refuses to overwrite; `prill watch` reruns a file that
//! changes; `prill completions` and `prill man` come from the clap definitions; `prill
//! judge check` judges its built-in set from any folder and exits 1 when a gate is missed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use prill_testkit::providers::openai::FakeOpenAi;

use crate::support::{self, isolated, judge_verdict, prill_isolated, text};

/// The longest any wait on a child process lasts.
const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn init_writes_examples_that_pass_against_the_demo_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill_isolated(dir.path(), &["init", "project"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for file in [
        "prill.toml",
        "tests/music_trivia.hocon",
        "tests/greeting.yaml",
        "tests/suite.yaml",
        "tests/flaky.hocon",
        ".github/workflows/prill.yml",
    ] {
        assert!(dir.path().join("project").join(file).is_file(), "{file}");
        assert!(stderr.contains(file), "{stderr}");
    }
    assert!(
        stderr.contains("next: cd project && prill run --demo"),
        "{stderr}"
    );

    let project = dir.path().join("project");
    let (out, report) = support::run_args(&project, ".", &["--demo"], &[]);
    let all = support::output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let verdicts = support::verdicts(&report);
    // The HOCON case over direct and http, the spec, the suite's two tests, the flaky
    // case.
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    assert!(verdicts.iter().all(|(_, v)| v == "passed"), "{verdicts:?}");
    for name in [
        "music_trivia",
        "Greeting",
        "Order status",
        "Refund",
        "flaky",
    ] {
        assert!(
            verdicts.iter().any(|(n, _)| n.contains(name)),
            "{name}: {verdicts:?}"
        );
    }
    // The flaky case is there to be assessed: its two failure modes, in words.
    let out = prill_isolated(
        &project,
        &["assess", "--demo", "tests/flaky.hocon", "--samples", "200"],
        &[],
    );
    let said = support::output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for mode in ["found \"failure refused\"", "found \"failure off by one\""] {
        assert!(
            said.contains(&format!(
                "interaction 0: text value expected \"ok\", {mode}"
            )),
            "{said}"
        );
    }
    // The files are valid as they are, without --demo: prill.toml names the demo model.
    let out = prill_isolated(&project, &["validate", "--format", "short"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mine = "# my own\n";
    std::fs::write(project.join("tests/suite.yaml"), mine).unwrap();
    std::fs::remove_file(project.join("prill.toml")).unwrap();
    let out = prill_isolated(dir.path(), &["init", "project"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`tests/suite.yaml`"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert!(!project.join("prill.toml").exists(), "nothing is written");
    assert_eq!(
        std::fs::read_to_string(project.join("tests/suite.yaml")).unwrap(),
        mine
    );
    let out = prill_isolated(dir.path(), &["init", "project", "--force"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_ne!(
        std::fs::read_to_string(project.join("tests/suite.yaml")).unwrap(),
        mine
    );
}

#[test]
fn under_demo_a_spec_may_call_the_demo_model_without_prill_toml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: echo\nmodel: m\nprovider: demo\ninputs:\n  query: ping\nassertions:\n  - must_contain: \"You said: ping\"\n",
    )
    .unwrap();
    let (out, report) = support::run_args(dir.path(), "spec.yaml", &["--demo"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", support::output_text(&out));
    assert_eq!(
        support::verdicts(&report),
        support::expected(&[("echo", "passed")])
    );
    // Without --demo (and no [providers.demo]) there is no such provider.
    let out = prill_isolated(
        dir.path(),
        &["validate", "spec.yaml", "--format", "short"],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("provider"), "{stderr}");
}

#[test]
fn the_readme_shows_the_workflow_init_writes() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    assert!(
        readme.contains(prill_app::init::WORKFLOW),
        "README.md's CI snippet differs from crates/prill-app/templates/.github/workflows/prill.yml: copy the template into README.md"
    );
    assert!(readme.contains("cargo install --locked --path crates/prill-cli"));
}

/// Lines of a child's stderr, read on a thread.
fn lines(child: &mut Child) -> Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (send, receive) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Reads lines until one contains `needle`; every line read is kept in `seen`. Panics
/// after [`DEADLINE`] or when the child's stderr ends.
fn wait_for(lines: &Receiver<String>, needle: &str, seen: &mut Vec<String>) {
    let end = Instant::now() + DEADLINE;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(needle);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                panic!("no `{needle}` within {DEADLINE:?}:\n{}", seen.join("\n"))
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("prill watch ended before `{needle}`:\n{}", seen.join("\n"))
            }
        }
    }
}

/// Kills the child when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn watch_reruns_the_file_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    let echo = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hello\n    response:\n      text: {value: hello}\n";
    std::fs::write(tests.join("echo.yaml"), echo).unwrap();
    std::fs::write(tests.join("other.yaml"), echo.replace("hello", "other")).unwrap();
    let mut cmd = isolated(dir.path(), &["watch", "--demo", "tests"]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = Killed(cmd.spawn().unwrap());
    let lines = lines(&mut child.0);
    let mut seen = Vec::new();
    wait_for(&lines, "watch: waiting for changes to tests", &mut seen);
    let first = seen.join("\n");
    assert!(first.contains("2 passed"), "{first}");

    // A failing answer now: the rerun runs this file alone, and fails.
    std::fs::write(
        tests.join("echo.yaml"),
        echo.replace("{value: hello}", "{value: goodbye}"),
    )
    .unwrap();
    seen.clear();
    wait_for(&lines, "watch: rerunning tests/echo.yaml", &mut seen);
    wait_for(&lines, "watch: waiting for changes", &mut seen);
    let second = seen.join("\n");
    assert!(second.contains("1 failed"), "{second}");
    assert!(
        !second.contains("other"),
        "only the changed file reruns: {second}"
    );

    // prill.toml reruns everything.
    std::fs::write(dir.path().join("prill.toml"), "strict = true\n").unwrap();
    seen.clear();
    wait_for(
        &lines,
        "watch: prill.toml changed; rerunning everything",
        &mut seen,
    );
    wait_for(&lines, "watch: waiting for changes", &mut seen);
    let third = seen.join("\n");
    assert!(third.contains("1 passed, 1 failed"), "{third}");
}

#[test]
fn completions_and_the_man_page_name_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = prill_isolated(dir.path(), &["completions", "bash"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let bash = text(&out.stdout);
    for command in ["run", "validate", "init", "watch", "completions", "judge"] {
        assert!(bash.contains(command), "{command}");
    }
    assert!(bash.contains("complete -F"), "{bash}");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = prill_isolated(dir.path(), &["completions", shell], &[]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(text(&out.stdout).contains("prill"), "{shell}");
    }
    let out = prill_isolated(dir.path(), &["completions", "tcsh"], &[]);
    assert_eq!(out.status.code(), Some(2));

    let out = prill_isolated(dir.path(), &["man"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let page = text(&out.stdout);
    // Only the definition of the string `Aq` comes before the title.
    let first = page
        .lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap();
    assert!(first.starts_with(".TH prill 1"), "{page}");
    assert_eq!(page.matches(".TH ").count(), 1, "{page}");
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH \"PRILL RUN\"",
        ".SH \"PRILL JUDGE CHECK\"",
        ".SH \"PRILL INIT\"",
    ] {
        assert!(page.contains(section), "{section}");
    }
    assert!(page.contains("\\-\\-min\\-agreement"), "{page}");
    // No reference to per-command pages that do not exist.
    assert!(!page.contains("prill\\-run(1)"), "{page}");
}

#[test]
fn judge_check_judges_the_built_in_set_anywhere_and_gates_on_rates() {
    let rt = support::runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    // A judge that passes everything: it agrees on the 23 items labeled pass and
    // passes the 22 labeled fail.
    fake.default_reply(judge_verdict(true, "r"));
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-commands-test".to_owned()),
    ];
    let check = |gates: &[&str]| {
        let mut args = vec![
            "judge",
            "check",
            "--judge",
            "openai:gpt-4o-mini",
            "--no-cache",
        ];
        args.extend_from_slice(gates);
        prill_isolated(dir.path(), &args, &env)
    };

    let out = check(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("45 items: agreement 51.1% (23 of 45)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("false-pass rate 100.0% (22 of 22 labeled fail)"),
        "{stdout}"
    );

    let out = check(&["--max-false-fail", "0", "--min-agreement", "0.5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = check(&[
        "--max-false-pass",
        "0.1",
        "--min-agreement",
        "0.9",
        "--max-false-fail",
        "0",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: agreement 51.1% is below --min-agreement 90.0%"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: the false-pass rate 100.0% is above --max-false-pass 10.0%"),
        "{stderr}"
    );
    assert!(!stderr.contains("--max-false-fail 0"), "{stderr}");
    assert!(
        text(&out.stdout).contains("45 items"),
        "the result is still printed"
    );

    for bad in ["1.5", "-0.1", "90%"] {
        let out = check(&[&format!("--min-agreement={bad}")]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("give a number from 0 to 1"), "{stderr}");
    }
}
