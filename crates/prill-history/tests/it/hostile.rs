//! What the runs folder may hold besides runs' files, each named `*.jsonl`: a FIFO, a
//! link to a device, a link that leads nowhere, a folder, a file over the size limit,
//! and copies of a run. Opening the history never blocks and never reads past the
//! limit; what it does not read it lists as skipped, with why; a run held by several
//! files is indexed once, however often the history is opened. A FIFO in the index's
//! place is an unreadable index: rebuilt.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use prill_history::{History, MAX_RUN_FILE_BYTES};

use crate::index::{finished_line, open, run_line, scratch, unit_line, write_run};

/// How long opening the history may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(20);

/// [`open`], on a thread: a hang fails the test instead of stopping the test run.
fn open_within(dir: &Path) -> History {
    let (done, opened) = mpsc::channel();
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        let _ = done.send(History::open(
            &dir.join("runs"),
            &dir.join("history.sqlite"),
        ));
    });
    opened
        .recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("opening the history hung for {HANG:?}"))
        .unwrap()
}

/// A finished run of one passing unit of `a1b2c3d4e5f6`, in `<id>.jsonl`.
fn one_run(runs: &Path, id: &str) {
    write_run(
        runs,
        id,
        &[
            run_line(id, "2026-11-25T00:00:00Z", None),
            unit_line("a1b2c3d4e5f6", "passed"),
            finished_line(1, 0),
        ],
    );
}

/// What `history` skipped: (file name, why), sorted by name.
fn skipped(history: &History) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = history
        .skipped()
        .iter()
        .map(|s| {
            let name = s.path.file_name().unwrap().to_string_lossy().into_owned();
            (name, s.why.clone())
        })
        .collect();
    out.sort();
    out
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_named_as_a_run_is_skipped_without_blocking_and_said() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    one_run(&runs, "20261125T000000.000Z-000000");
    mkfifo(&runs.join("pipe.jsonl"));
    // Twice: the first builds the index, the second finds it up to date.
    for _ in 0..2 {
        let history = open_within(dir.path());
        assert_eq!(history.runs().unwrap().len(), 1);
        let skipped = skipped(&history);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(skipped[0].0, "pipe.jsonl");
        assert!(skipped[0].1.contains("named pipe (FIFO)"), "{skipped:?}");
        let shown = history.skipped()[0].to_string();
        assert!(
            shown.starts_with("the history skipped ") && shown.contains("pipe.jsonl"),
            "{shown}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_link_to_a_device_a_link_to_nothing_and_a_folder_are_skipped() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    one_run(&runs, "20261125T000000.000Z-000000");
    std::os::unix::fs::symlink("/dev/zero", runs.join("zero.jsonl")).unwrap();
    std::os::unix::fs::symlink("nowhere", runs.join("dangling.jsonl")).unwrap();
    std::fs::create_dir(runs.join("folder.jsonl")).unwrap();
    let history = open_within(dir.path());
    assert_eq!(history.runs().unwrap().len(), 1);
    let skipped = skipped(&history);
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["dangling.jsonl", "folder.jsonl", "zero.jsonl"],
        "{skipped:?}"
    );
    assert!(skipped[0].1.contains("leads nowhere"), "{skipped:?}");
    assert!(skipped[1].1.contains("a directory"), "{skipped:?}");
    assert!(skipped[2].1.contains("character device"), "{skipped:?}");
}

#[test]
fn a_file_over_the_limit_is_skipped_unread_and_said() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let id = "20261125T000000.000Z-000000";
    one_run(&runs, id);
    // A run's lines, then a gigabyte of nothing (a sparse file: no disk is used).
    let big = runs.join("big.jsonl");
    std::fs::copy(runs.join(format!("{id}.jsonl")), &big).unwrap();
    std::fs::remove_file(runs.join(format!("{id}.jsonl"))).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(MAX_RUN_FILE_BYTES + 1)
        .unwrap();
    let history = open_within(dir.path());
    assert!(history.runs().unwrap().is_empty(), "not read, not indexed");
    let skipped = skipped(&history);
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].0, "big.jsonl");
    assert!(
        skipped[0].1.contains("over the limit of 1 GiB"),
        "{skipped:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_link_to_a_run_file_is_followed_and_the_run_counted_once() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let id = "20261125T000000.000Z-000000";
    one_run(&runs, id);
    std::os::unix::fs::symlink(format!("{id}.jsonl"), runs.join("link.jsonl")).unwrap();
    for _ in 0..3 {
        let history = open_within(dir.path());
        assert!(history.skipped().is_empty(), "{:?}", history.skipped());
        assert_eq!(history.runs().unwrap().len(), 1);
        assert_eq!(history.case_history("a1b2c3d4e5f6").unwrap().len(), 1);
    }
    // Pruning the run removes the link with the file: nothing brings it back.
    let mut history = open(dir.path());
    assert_eq!(history.prune(0).unwrap(), [id]);
    assert!(std::fs::symlink_metadata(runs.join("link.jsonl")).is_err());
    assert!(open(dir.path()).runs().unwrap().is_empty());
}

#[test]
fn a_run_in_two_files_is_indexed_once_however_often_the_history_is_opened() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let id = "20261125T000000.000Z-000000";
    let other = "20261125T000001.000Z-000001";
    one_run(&runs, id);
    one_run(&runs, other);
    // A copy beside the original, and a backup (whose name sorts first) of the run
    // before it finished.
    let original = runs.join(format!("{id}.jsonl"));
    std::fs::copy(&original, runs.join(format!("{id}.copy.jsonl"))).unwrap();
    write_run(
        &runs,
        "0-backup",
        &[
            run_line(id, "2026-11-25T00:00:00Z", None),
            unit_line("a1b2c3d4e5f6", "passed"),
        ],
    );
    // Each opening: two runs, the case once, and always the same file for the run:
    // `<id>.jsonl`, which finished.
    let seen = |history: &History| {
        let listed = history.runs().unwrap();
        let finished = listed.iter().find(|r| r.id == id).map(|r| r.finished);
        (
            listed.len(),
            history.case_history("a1b2c3d4e5f6").unwrap().len(),
            finished,
        )
    };
    for _ in 0..4 {
        assert_eq!(seen(&open(dir.path())), (2, 2, Some(true)));
    }
    // The original goes: the first name of those left holds the run now (the
    // unfinished backup), still once, and stays so.
    std::fs::remove_file(&original).unwrap();
    for _ in 0..3 {
        assert_eq!(seen(&open(dir.path())), (2, 2, Some(false)));
    }
    // Pruning the run removes every file that holds it, so no copy brings it back.
    let mut history = open(dir.path());
    assert_eq!(history.prune(1).unwrap(), [id]);
    assert!(!runs.join(format!("{id}.copy.jsonl")).exists());
    assert!(!runs.join("0-backup.jsonl").exists());
    assert_eq!(seen(&open(dir.path())), (1, 1, None));
}

#[test]
fn a_file_that_changes_to_hold_another_run_moves_its_units() {
    let dir = scratch();
    let runs = dir.path().join("runs");
    let first = "20261125T000000.000Z-000000";
    let second = "20261125T000001.000Z-000001";
    write_run(
        &runs,
        "shared",
        &[
            run_line(first, "2026-11-25T00:00:00Z", None),
            unit_line("a1b2c3d4e5f6", "passed"),
            finished_line(1, 0),
        ],
    );
    assert_eq!(open(dir.path()).runs().unwrap()[0].id, first);
    write_run(
        &runs,
        "shared",
        &[
            run_line(second, "2026-11-25T00:00:01Z", None),
            unit_line("a1b2c3d4e5f6", "failed"),
            unit_line("ffff00001111", "passed"),
            finished_line(1, 1),
        ],
    );
    let later = std::time::SystemTime::now() + Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(runs.join("shared.jsonl"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let history = open(dir.path());
    let listed = history.runs().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].id, second);
    let units = history.case_history("a1b2c3d4e5f6").unwrap();
    assert_eq!(units.len(), 1, "{units:?}");
    assert_eq!(units[0].verdict, "failed");
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_in_place_of_the_index_or_its_journal_is_rebuilt_over() {
    for (name, fifo) in [("history.sqlite", true), ("history.sqlite-journal", false)] {
        let dir = scratch();
        one_run(&dir.path().join("runs"), "20261125T000000.000Z-000000");
        let path = dir.path().join(name);
        if fifo {
            mkfifo(&path);
        } else {
            std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        }
        let history = open_within(dir.path());
        assert_eq!(history.runs().unwrap().len(), 1, "{name}");
        assert!(
            std::fs::symlink_metadata(&path).is_err() || path.is_file(),
            "{name}"
        );
    }
}
