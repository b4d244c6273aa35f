//! The history against what only the binary shows: a run whose history folder holds a
//! FIFO ends (and a SIGTERM after its summary ends it within seconds), `prill runs`
//! lists it with a warning; a second SIGTERM ends a run stuck writing a report, and
//! ends at once the agents and what they started, even within their grace (Linux); and
//! eight `prill run`s at once in one project keep eight runs, each unit once. The rules
//! themselves are tested in `prill-history` (`tests/it/hostile.rs`, `concurrent.rs`).

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::command;

/// A passing case against the demo `echo` agent.
const PASSING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n";

/// How long a signalled `prill` may take to end.
const PROMPTLY: Duration = Duration::from_secs(5);

/// How long anything here may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// A project of one passing case, its runs folder made.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    std::fs::create_dir_all(dir.path().join(".prill/runs")).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// `prill args...` in `dir`, stderr read line by line on a thread into the receiver.
fn start(dir: &Path, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = command(dir, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let stderr = child.stderr.take().unwrap();
    let (lines, heard) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, heard)
}

/// Reads `heard` until a line holds `what`; every line read is added to `seen`.
fn wait_for(heard: &mpsc::Receiver<String>, what: &str, seen: &mut String) {
    let started = Instant::now();
    while started.elapsed() < HANG {
        match heard.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(what) {
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    panic!("no line with {what:?}: {seen}");
}

/// How `child` ended, if it does within `limit`; otherwise it is killed.
fn ended_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The rest of what `heard` has, once the process ended.
fn rest(heard: &mpsc::Receiver<String>, seen: &mut String) {
    while let Ok(line) = heard.recv_timeout(Duration::from_millis(500)) {
        seen.push_str(&line);
        seen.push('\n');
    }
}

/// `prill args...` in `dir` to its end, within [`HANG`]: (code, stdout, stderr).
fn bounded(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = command(dir, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status = ended_within(&mut child, HANG)
        .unwrap_or_else(|| panic!("prill {args:?} hung for {HANG:?}"));
    (
        status.code(),
        stdout.join().unwrap(),
        stderr.join().unwrap(),
    )
}

#[test]
fn sigterm_ends_a_run_whose_history_holds_a_fifo_and_runs_lists_it() {
    let dir = project();
    mkfifo(&dir.path().join(".prill/runs/pipe.jsonl"));
    let (mut child, heard) = start(dir.path(), &["run", "--demo", "echo.yaml"]);
    let mut seen = String::new();
    wait_for(&heard, "1 passed, 0 failed", &mut seen);
    // After its summary the run brings the history up to date: a CI step's time
    // limit (SIGTERM) ends it there, if it is not over already.
    signal(&child, "TERM");
    let status = ended_within(&mut child, PROMPTLY);
    rest(&heard, &mut seen);
    let status = status.unwrap_or_else(|| panic!("SIGTERM did not end the run: {seen}"));
    assert!(matches!(status.code(), Some(0 | 143)), "{status:?}: {seen}");
    // `prill runs` ends too, lists the run and says what it did not read.
    let (code, out, err) = bounded(dir.path(), &["runs", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert!(
        err.contains("warning: the history skipped ")
            && err.contains("pipe.jsonl")
            && err.contains("named pipe (FIFO)"),
        "{err}"
    );
    // And the next run ends on its own, saying the same.
    let (code, _, err) = bounded(dir.path(), &["run", "--demo", "echo.yaml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("pipe.jsonl"), "{err}");
}

#[test]
fn a_second_sigterm_ends_a_run_stuck_writing_a_report() {
    let dir = project();
    // A report into a FIFO nobody reads: writing it waits for a reader, for ever.
    mkfifo(&dir.path().join("report.json"));
    let (mut child, heard) = start(
        dir.path(),
        &["run", "--demo", "echo.yaml", "--json", "report.json"],
    );
    let mut seen = String::new();
    wait_for(&heard, "1 passed, 0 failed", &mut seen);
    // The first SIGTERM cancels the run, which still waits on its report...
    signal(&child, "TERM");
    wait_for(&heard, "cancelling", &mut seen);
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "{seen}");
    // ...and the second ends it at once.
    signal(&child, "TERM");
    let status = ended_within(&mut child, PROMPTLY);
    rest(&heard, &mut seen);
    let status = status.unwrap_or_else(|| panic!("a second SIGTERM did not end the run: {seen}"));
    assert_eq!(status.code(), Some(143), "{seen}");
    assert!(seen.contains("stopped by SIGTERM"), "{seen}");
}

/// Whether process `pid` started at `start` is still there and not a zombie.
#[cfg(target_os = "linux")]
fn alive(pid: u32, start: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    fields.first() != Some(&"Z") && fields.get(19).and_then(|s| s.parse().ok()) == Some(start)
}

/// The pid in `path` and when that process started, once the file is there.
#[cfg(target_os = "linux")]
fn pid_in(path: &Path) -> (u32, u64) {
    let started = Instant::now();
    while started.elapsed() < HANG {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            && let Some(start) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(19)?
                        .parse()
                        .ok()
                })
        {
            return (pid, start);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no pid in {}", path.display());
}

#[cfg(target_os = "linux")]
#[test]
fn a_second_sigterm_ends_the_agents_and_what_they_started_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // An agent that ignores SIGTERM and never answers, whose helper leaves its process
    // group (`setsid`) and ignores SIGTERM too.
    std::fs::write(
        dir.path().join("agent.sh"),
        "trap '' TERM\n\
         setsid sh -c 'echo $$ > helper.tmp; mv helper.tmp helper.pid; exec sleep 300' &\n\
         echo $$ > agent.tmp; mv agent.tmp agent.pid\n\
         while :; do sleep 1; done\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "[agents.stuck]\ncommand = [\"sh\", \"agent.sh\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("stuck.yaml"),
        "agent: stuck\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n",
    )
    .unwrap();
    let (mut child, heard) = start(dir.path(), &["run", "stuck.yaml"]);
    let agent = pid_in(&dir.path().join("agent.pid"));
    let helper = pid_in(&dir.path().join("helper.pid"));
    let mut seen = String::new();
    // The first SIGTERM cancels the run and ends the conversation: the agent, which
    // ignores SIGTERM, has its grace, and its helper is still its child...
    signal(&child, "TERM");
    wait_for(&heard, "cancelling", &mut seen);
    assert!(
        alive(agent.0, agent.1) && alive(helper.0, helper.1),
        "{seen}"
    );
    // ...the second ends the run, the agent and its helper (once the agent is gone,
    // an orphan that Prill adopts) at once.
    signal(&child, "TERM");
    let status = ended_within(&mut child, PROMPTLY);
    rest(&heard, &mut seen);
    let status = status.unwrap_or_else(|| panic!("a second SIGTERM did not end the run: {seen}"));
    assert_eq!(status.code(), Some(143), "{seen}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while (alive(agent.0, agent.1) || alive(helper.0, helper.1)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (what, (pid, start)) in [("the agent", agent), ("its helper", helper)] {
        let left = alive(pid, start);
        if left {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert!(!left, "{what} ({pid}) outlived prill: {seen}");
    }
}

#[test]
fn eight_runs_at_once_in_one_project_are_each_kept_once() {
    const RUNS: usize = 8;
    let dir = project();
    let children: Vec<Child> = (0..RUNS)
        .map(|_| {
            command(dir.path(), &["run", "-q", "--demo", "echo.yaml"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the prill binary runs")
        })
        .collect();
    for mut child in children {
        let status = ended_within(&mut child, HANG).expect("a run ended");
        assert_eq!(status.code(), Some(0));
    }
    let (code, out, err) = bounded(dir.path(), &["runs", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), RUNS, "{listed:?}");
    assert!(listed.iter().all(|r| r["passed"] == 1), "{listed:?}");
    // The case, by its id from a kept file: one unit in each run, once.
    let file = std::fs::read_dir(dir.path().join(".prill/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let case_id = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["event"] == "unit_finished")
        .map(|l| l["unit"]["case_id"].as_str().unwrap().to_owned())
        .unwrap();
    let (code, out, err) = bounded(
        dir.path(),
        &["runs", "--case", &case_id, "--format", "json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let units: Value = serde_json::from_str(&out).unwrap();
    let units = units.as_array().unwrap();
    assert_eq!(units.len(), RUNS, "{units:?}");
    let mut runs: Vec<&str> = units
        .iter()
        .map(|u| u["run_id"].as_str().unwrap())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    assert_eq!(runs.len(), RUNS, "{units:?}");
}
