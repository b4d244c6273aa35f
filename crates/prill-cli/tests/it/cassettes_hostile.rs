//! A cassette folder from a repository that holds what is not a cassette file: a named
//! pipe, a link to `/dev/zero` (git keeps symbolic links) or a file far over the
//! limit. `prill run --replay` refuses it before anything runs, with exit code 2 and a
//! message naming the file, at once: it never blocks on the pipe nor reads the device.
//! The rule itself is tested in `prill-cassette` (`Cassette::read_dir`).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A passing case against the demo `echo` agent.
const PASSING: &str = "agent: echo\nconnections: [direct]\ninteractions:\n  - text: hi\n    response: {text: {value: hi}}\n";

/// How long `prill` may take to refuse the folder (it starts, loads one file, and
/// looks at the folder).
const AT_ONCE: Duration = Duration::from_secs(5);

/// How long it may run before it counts as a hang and is killed.
const HANG: Duration = Duration::from_secs(30);

/// `prill args...` in `dir`, killed if it has not ended within [`HANG`].
fn bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_prill"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("PRILL_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the prill binary runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("prill {args:?} hung for {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A project of one passing case, with its cassette folder `tapes` holding `entry`
/// (made by `make`) and nothing else.
fn refused(entry: &str, make: impl FnOnce(&Path)) -> (Output, Duration) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.yaml"), PASSING).unwrap();
    let tapes = dir.path().join("tapes");
    std::fs::create_dir(&tapes).unwrap();
    make(&tapes.join(entry));
    let started = Instant::now();
    let out = bounded(
        dir.path(),
        &["run", "--demo", "--replay", "tapes", "echo.yaml"],
    );
    (out, started.elapsed())
}

fn assert_refused(entry: &str, why: &str, out: &Output, took: Duration) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{entry}: {stderr}");
    assert!(
        stderr.contains(entry),
        "the message names {entry}: {stderr}"
    );
    assert!(stderr.contains(why), "{why}: {stderr}");
    assert!(took < AT_ONCE, "{entry} was refused only after {took:?}");
}

#[test]
fn a_named_pipe_in_the_cassette_folder_exits_2_at_once() {
    let (out, took) = refused("pipe.jsonl", |path| {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success());
    });
    assert_refused("pipe.jsonl", "named pipe", &out, took);
}

#[test]
fn a_link_to_dev_zero_in_the_cassette_folder_exits_2_at_once() {
    let (out, took) = refused("zero.jsonl", |path| {
        std::os::unix::fs::symlink("/dev/zero", path).unwrap();
    });
    assert_refused("zero.jsonl", "not a regular file", &out, took);
}

#[test]
fn a_cassette_file_over_the_limit_exits_2_at_once_naming_the_limit() {
    let (out, took) = refused("huge.jsonl", |path| {
        let file = std::fs::File::create(path).unwrap();
        file.set_len(1 << 40).unwrap();
    });
    assert_refused("huge.jsonl", "limit of 256 MiB", &out, took);
}
