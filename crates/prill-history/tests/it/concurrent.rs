//! Processes that bring one history up to date at once, as runs that end together in
//! one project do: each writes its runs' files and opens the history after each, while
//! the others do the same. This test binary is started again as each of the processes
//! (with [`CHILD`] set); afterwards the index holds every run, and its units, once.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::index::{finished_line, open, run_line, unit_line, write_run};

/// Set in a child: `<folder>|<number>`.
const CHILD: &str = "PRILL_HISTORY_TEST_CHILD";

/// How many processes, and how many runs each keeps.
const PROCESSES: usize = 8;
const RUNS_EACH: usize = 4;

/// How long a child may take, and waits for the others to be started.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn runs_indexed_by_processes_at_once_are_each_counted_once() {
    if let Ok(spec) = std::env::var(CHILD) {
        let (dir, n) = spec.rsplit_once('|').expect("folder|number");
        child(Path::new(dir), n.parse().expect("a number"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    let me = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|n| {
            Command::new(&me)
                .args([
                    "--exact",
                    "concurrent::runs_indexed_by_processes_at_once_are_each_counted_once",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD, format!("{}|{n}", dir.path().display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Released together, once all are started.
    std::fs::write(dir.path().join("go"), "").unwrap();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a child failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let history = open(dir.path());
    let runs = history.runs().unwrap();
    assert_eq!(runs.len(), PROCESSES * RUNS_EACH);
    // Each run has each of its two units once.
    assert!(
        runs.iter().all(|r| r.passed == 1 && r.failed == 1),
        "{runs:?}"
    );
    for case in ["a1b2c3d4e5f6", "ffff00001111"] {
        let mut per_run = std::collections::BTreeMap::<String, usize>::new();
        for unit in history.case_history(case).unwrap() {
            *per_run.entry(unit.run_id).or_default() += 1;
        }
        assert_eq!(per_run.len(), PROCESSES * RUNS_EACH, "{case}: {per_run:?}");
        let twice: Vec<_> = per_run.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "{case}: units indexed more than once: {twice:?}"
        );
    }
}

/// One process: waits for the others, then keeps its runs one by one, opening the
/// history after each (as a run's end and its pruning do).
fn child(dir: &Path, n: usize) {
    let started = Instant::now();
    while !dir.join("go").exists() {
        assert!(started.elapsed() < LIMIT, "never released");
        std::thread::sleep(Duration::from_millis(5));
    }
    for k in 0..RUNS_EACH {
        let id = format!("20261125T0000{n:02}.{k:03}Z-{n:02}{k:04}");
        write_run(
            &dir.join("runs"),
            &id,
            &[
                run_line(&id, &format!("2026-11-25T00:00:{n:02}.{k:03}Z"), None),
                unit_line("a1b2c3d4e5f6", "passed"),
                unit_line("ffff00001111", "failed"),
                finished_line(1, 1),
            ],
        );
        let history = open(dir);
        assert!(history.runs().unwrap().len() > k);
    }
}
