//! One measured process: its wall time, CPU seconds (user + system) and peak RSS, as a
//! whole, with what it waited for (node's workers, `nsenter`'s exec).
//!
//! The CPU and peak RSS come from GNU time (`/usr/bin/time -f '%e %U %S %M' -o FILE`),
//! which reads them from `wait4` on the process: rustix 1 offers no `getrusage`, and
//! `unsafe_code` is forbidden here, so `libc::getrusage` is out. The wall time is
//! xtask's own clock from spawning to reaping (GNU time's `%e` has 10 ms steps); it
//! includes starting GNU time itself, about a millisecond.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// GNU time, which reports what `wait4` says of the process it runs.
const GNU_TIME: &str = "/usr/bin/time";

/// What one process took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Seconds from spawning to reaping.
    pub(crate) wall: f64,
    /// User plus system CPU seconds, with its waited-for children.
    pub(crate) cpu: f64,
    /// The peak resident set of the process or its largest waited-for child, in KiB.
    pub(crate) rss_kib: u64,
}

impl Sample {
    /// The peak RSS in MiB ("MB" in the reports, as in the other benchmarks).
    pub(crate) fn rss_mb(&self) -> f64 {
        self.rss_kib as f64 / 1024.0
    }
}

/// A command to measure.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    /// Words run before the program, such as `nsenter --net=... --`.
    pub(crate) prefix: Vec<OsString>,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    /// The whole environment: nothing else of xtask's is passed on.
    pub(crate) env: Vec<(String, OsString)>,
    pub(crate) cwd: PathBuf,
    /// Keep stdout (else it goes to /dev/null); stderr is always kept.
    pub(crate) capture_stdout: bool,
}

/// A measured process that ran to its end.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) sample: Sample,
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Finished {
    /// An error naming `what` when the process did not exit 0, with the end of its output.
    pub(crate) fn require_success(&self, what: &str) -> Result<(), String> {
        if self.status.success() {
            return Ok(());
        }
        Err(format!(
            "{what} exited with {}\n{}\n{}",
            self.status,
            tail(&self.stdout, 2000),
            tail(&self.stderr, 2000)
        ))
    }
}

/// The last `max` bytes of `text` (at a character boundary).
pub(crate) fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Runs `invocation` under GNU time, writing its report to `time_file`, and waits.
pub(crate) fn measure(invocation: &Invocation, time_file: &Path) -> Result<Finished, String> {
    let mut command = Command::new(GNU_TIME);
    command
        .arg("-f")
        .arg("%e %U %S %M")
        .arg("-o")
        .arg(time_file)
        .args(&invocation.prefix)
        .arg(&invocation.program)
        .args(&invocation.args)
        .env_clear()
        .envs(invocation.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&invocation.cwd)
        .stdin(Stdio::null())
        .stdout(if invocation.capture_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = command
        .spawn()
        .map_err(|e| format!("cannot run {GNU_TIME} (GNU time): {e}"))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot wait for {}: {e}", invocation.program.display()))?;
    let wall = started.elapsed().as_secs_f64();
    let report = std::fs::read_to_string(time_file)
        .map_err(|e| format!("cannot read {}: {e}", time_file.display()))?;
    let (cpu, rss_kib) =
        parse_time(&report).ok_or_else(|| format!("cannot read GNU time's report: {report:?}"))?;
    Ok(Finished {
        sample: Sample { wall, cpu, rss_kib },
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// The CPU seconds (user + system) and peak RSS (KiB) of GNU time's `%e %U %S %M`
/// report: its last line (a line before says when the command exited non-zero).
pub(crate) fn parse_time(report: &str) -> Option<(f64, u64)> {
    let line = report.lines().rev().find(|l| !l.trim().is_empty())?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [_, user, system, rss] = fields.as_slice() else {
        return None;
    };
    let cpu = user.parse::<f64>().ok()? + system.parse::<f64>().ok()?;
    Some((cpu, rss.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnu_time_reports_are_read() {
        assert_eq!(parse_time("1.52 1.25 0.25 38412\n"), Some((1.5, 38412)));
        let failed = "Command exited with non-zero status 1\n0.01 0.00 0.01 2048\n";
        assert_eq!(parse_time(failed), Some((0.01, 2048)));
        assert_eq!(parse_time(""), None);
        assert_eq!(parse_time("Command terminated by signal 9\n"), None);
    }

    #[test]
    fn tails_cut_at_character_boundaries() {
        assert_eq!(tail("abc", 10), "abc");
        assert_eq!(tail("abcdef", 2), "ef");
        assert_eq!(tail("aé", 1), "");
    }
}
