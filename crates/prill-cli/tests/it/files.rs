//! `--jobs` against the open-file limit: the soft limit is raised to the hard one at
//! start, and a `--jobs` that still cannot fit is said up front.

use std::process::{Command, Output};

use crate::support::{fixtures, plain};

/// `prill run --demo` on the quickstart under `ulimit -Hn hard -Sn soft`.
fn run_limited(soft: u32, hard: u32, jobs: u32) -> Output {
    let quickstart = fixtures("quickstart");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!("ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$0\" \"$@\""),
        env!("CARGO_BIN_EXE_prill"),
        "run",
        "--demo",
        quickstart.to_str().unwrap(),
        "--jobs",
        &jobs.to_string(),
    ])
    .current_dir(dir.path());
    plain(&mut cmd).output().unwrap()
}

#[test]
fn the_soft_limit_is_raised_so_many_jobs_fit() {
    let out = run_limited(64, 4096, 256);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("open files"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn jobs_that_cannot_fit_are_warned_about_up_front() {
    let out = run_limited(100, 100, 256);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning: --jobs 256 may need 1088 open files, and this process may open 100 (`ulimit -n`)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("use --jobs 9"), "{stderr}");
    // The warning comes before anything runs.
    let warned = stderr.find("warning: --jobs").unwrap();
    assert!(
        stderr.find("demo agents on").is_none_or(|at| at > warned),
        "{stderr}"
    );
}
