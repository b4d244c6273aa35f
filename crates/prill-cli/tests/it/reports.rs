//! Reports never lie, end to end: a report that cannot be written fails the run even
//! when every test passed; reports go through symlinks, FIFOs and devices; missing
//! directories are made; a killed run leaves no earlier report that looks current, and
//! a finished one no temporary file.

#![cfg(unix)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{command, fixtures, plain, prill, stderr};

/// Every name under `dir`, recursively, relative and sorted; a run kept in the history
/// is `.prill/runs/<id>.jsonl`.
fn tree(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .map(|name| match name.strip_prefix(".prill/runs/") {
            Some(run) if run.ends_with(".jsonl") => ".prill/runs/<id>.jsonl".to_owned(),
            _ => name,
        })
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// A case whose one sample takes `ms` milliseconds.
fn slow_case(dir: &Path, ms: u32) {
    std::fs::write(
        dir.join("slow.yaml"),
        format!(
            "agent: slow\ninteractions:\n  - text: wait\n    sly_data: {{delay_ms: {ms}}}\n    response: {{text: {{not_keywords: error}}}}\n"
        ),
    )
    .unwrap();
}

/// Waits until the run's JSON Lines show its unit started.
fn wait_for_start(jsonl: &Path, child: &mut Child) {
    for _ in 0..400 {
        if std::fs::read_to_string(jsonl)
            .unwrap_or_default()
            .contains("unit_started")
        {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the unit never started");
}

#[test]
fn a_full_disk_fails_a_run_whose_tests_all_passed() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--junit",
            "/dev/full",
            "--json",
            "run.json",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("6 passed, 0 failed"), "{err}");
    assert!(
        err.contains("cannot write /dev/full: No space left on device"),
        "{err}"
    );
    assert!(err.contains("1 report(s) could not be written"), "{err}");
    // The other reports are still written.
    assert!(dir.path().join("run.json").is_file());
    let out = prill(
        dir.path(),
        &[
            "assess",
            "--demo",
            q.to_str().unwrap(),
            "--samples",
            "1",
            "--html",
            "/dev/full",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
}

/// As root, permissions do not bind until the capability to override them is dropped:
/// the run goes through `setpriv` then, so the read-only directory binds as it would for
/// anyone else.
fn as_unprivileged(dir: &Path, args: &[&str]) -> Command {
    let uid = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return command(dir, args);
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--bounding-set=-dac_override,-dac_read_search,-fowner",
        "--inh-caps=-dac_override,-dac_read_search,-fowner",
        "--",
        env!("CARGO_BIN_EXE_prill"),
    ])
    .args(args)
    .current_dir(dir);
    plain(&mut cmd);
    cmd
}

#[test]
fn a_directory_that_turns_read_only_fails_the_run_with_the_reason() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    slow_case(dir.path(), 1500);
    std::fs::create_dir(dir.path().join("reports")).unwrap();
    let mut child = as_unprivileged(
        dir.path(),
        &[
            "run",
            "--demo",
            "slow.yaml",
            "--junit",
            "reports/junit.xml",
            "--jsonl",
            "run.jsonl",
        ],
    )
    .stderr(Stdio::piped())
    .spawn()
    .expect("setpriv runs prill");
    wait_for_start(&dir.path().join("run.jsonl"), &mut child);
    let reports = dir.path().join("reports");
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(err.contains("1 passed, 0 failed"), "{err}");
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(
        err.contains("reports/junit.xml: Permission denied"),
        "{err}"
    );
    // A directory read-only from the start fails before anything runs.
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = as_unprivileged(
        dir.path(),
        &["run", "--demo", "slow.yaml", "--json", "reports/run.json"],
    )
    .output()
    .unwrap();
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("passed"),
        "nothing ran: {}",
        stderr(&out)
    );
}

#[test]
fn reports_go_through_symlinks_fifos_and_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    std::fs::create_dir(dir.path().join("store")).unwrap();
    std::os::unix::fs::symlink("store/run.json", dir.path().join("run.json")).unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("junit.fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = mpsc::channel();
    let fifo = dir.path().join("junit.fifo");
    std::thread::spawn(move || {
        let mut text = String::new();
        std::fs::File::open(&fifo)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        tx.send(text).unwrap();
    });
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--json",
            "run.json",
            "--junit",
            "junit.fifo",
            "--markdown",
            "/dev/stdout",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let junit = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the FIFO's reader got the report");
    assert_eq!(junit.matches("<testcase ").count(), 6, "{junit}");
    assert!(
        dir.path().join("run.json").is_symlink(),
        "the symlink is kept"
    );
    let report = std::fs::read_to_string(dir.path().join("store/run.json")).unwrap();
    assert!(report.contains("\"passed\": 6"), "{report}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("**6 passed, 0 failed"), "{stdout}");
    assert_eq!(
        tree(dir.path()),
        [
            ".prill",
            ".prill/.gitignore",
            ".prill/history.sqlite",
            ".prill/last-run.json",
            ".prill/runs",
            ".prill/runs/<id>.jsonl",
            "junit.fifo",
            "run.json",
            "store",
            "store/run.json"
        ]
    );
    // `--json /dev/stdout` with stdout a pipe: the document itself.
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--json",
            "/dev/stdout",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["passed"], 6);
}

#[test]
fn missing_directories_are_made_for_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let q = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--json",
            "out/json/run.json",
            "--jsonl",
            "out/jsonl/run.jsonl",
            "--junit",
            "out/junit/junit.xml",
            "--markdown",
            "out/md/summary.md",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = prill(
        dir.path(),
        &[
            "assess",
            "--demo",
            q.to_str().unwrap(),
            "--samples",
            "1",
            "--json",
            "out/assess/a.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        tree(&dir.path().join("out")),
        [
            "assess",
            "assess/a.json",
            "json",
            "json/run.json",
            "jsonl",
            "jsonl/run.jsonl",
            "junit",
            "junit/junit.xml",
            "md",
            "md/summary.md"
        ]
    );
}

#[test]
fn a_killed_run_leaves_no_earlier_report_and_a_finished_one_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    slow_case(dir.path(), 60_000);
    for name in ["run.json", "junit.xml"] {
        std::fs::write(dir.path().join(name), "from an earlier run").unwrap();
    }
    let mut child = command(
        dir.path(),
        &[
            "run",
            "--demo",
            "slow.yaml",
            "--json",
            "run.json",
            "--junit",
            "junit.xml",
            "--jsonl",
            "run.jsonl",
        ],
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    wait_for_start(&dir.path().join("run.jsonl"), &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    for name in ["run.json", "junit.xml"] {
        assert!(
            !dir.path().join(name).exists(),
            "{name} from an earlier run looks like this run's"
        );
    }

    let q = fixtures("quickstart");
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--json",
            "run.json",
            "--junit",
            "junit.xml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let left: Vec<String> = tree(dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    // The killed run's temporary files may remain (nothing runs after SIGKILL), but
    // they are hidden and never look like a report; the finished run leaves none of its own.
    assert!(left.iter().all(|n| n.starts_with('.')), "{left:?}");
    let after_kill = left.len();
    let out = prill(
        dir.path(),
        &[
            "run",
            "--demo",
            q.to_str().unwrap(),
            "--json",
            "run.json",
            "--junit",
            "junit.xml",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let left = tree(dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .count();
    assert_eq!(left, after_kill, "a finished run left a temporary file");
}
