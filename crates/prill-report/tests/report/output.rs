//! Where reports go: regular files replaced atomically through their symlinks, FIFOs and
//! devices written through, earlier reports removed when a run starts, parent
//! directories made, every write error returned, and no temporary file left behind.

#![cfg(unix)]

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use prill_report::{JsonLines, Output, Reporter};
use prill_run::Event;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_symlink_stays_a_symlink_and_its_target_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("store")).unwrap();
    std::fs::write(dir.path().join("store/report.json"), "old").unwrap();
    let link = dir.path().join("report.json");
    std::os::unix::fs::symlink("store/report.json", &link).unwrap();
    let output = Output::file(&link).unwrap();
    output.commit(b"new").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("store/report.json")).unwrap(),
        "new"
    );
    assert_eq!(
        names(&dir.path().join("store")),
        ["report.json"],
        "no temp file left"
    );
}

#[test]
fn a_dangling_symlink_gets_its_target_created() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("report.xml");
    std::os::unix::fs::symlink("out/nested/junit.xml", &link).unwrap();
    Output::file(&link).unwrap().commit(b"<x/>").unwrap();
    assert!(link.is_symlink());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/nested/junit.xml")).unwrap(),
        "<x/>"
    );
}

#[test]
fn a_fifo_is_written_through_to_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let output = Output::file(&fifo).unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || {
        let mut text = String::new();
        std::fs::File::open(&reader)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        tx.send(text).unwrap();
    });
    output.commit(b"{\"summary\":{}}\n").unwrap();
    let read = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the reader got the report");
    assert_eq!(read, "{\"summary\":{}}\n");
    assert!(
        std::fs::metadata(&fifo).unwrap().file_type().is_fifo(),
        "the FIFO is still a FIFO"
    );
    assert_eq!(names(dir.path()), ["report.fifo"]);
}

#[test]
fn a_full_disk_is_an_error_and_the_device_stays() {
    let output = Output::file("/dev/full").unwrap();
    let err = output.commit(b"a report").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::StorageFull, "{err}");
    assert!(err.to_string().contains("/dev/full"), "{err}");
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let mut lines = JsonLines::create("/dev/full").unwrap();
    assert!(lines.event(&Event::RunStarted { units: 0 }).is_err());
}

#[test]
fn an_earlier_report_is_removed_when_the_output_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, "an earlier run").unwrap();
    let output = Output::file(&path).unwrap();
    assert!(
        !path.exists(),
        "a run killed now would leave the stale report"
    );
    drop(output);
    assert_eq!(
        names(dir.path()),
        Vec::<String>::new(),
        "a dropped output leaves no temp file"
    );
}

#[test]
fn missing_parent_directories_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reports/ci/run.json");
    Output::file(&path).unwrap().commit(b"{}").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    let summary = dir.path().join("summaries/summary.md");
    Output::append(&summary).unwrap().commit(b"# a\n").unwrap();
    Output::append(&summary).unwrap().commit(b"# b\n").unwrap();
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), "# a\n# b\n");
    let lines = dir.path().join("events/run.jsonl");
    JsonLines::create(&lines)
        .unwrap()
        .event(&Event::RunStarted { units: 0 })
        .unwrap();
    assert!(
        std::fs::read_to_string(&lines)
            .unwrap()
            .contains("run_started")
    );
}

#[test]
fn a_replaced_report_keeps_the_earlier_file_s_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    Output::file(&path).unwrap().commit(b"new").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}
